//! Printing: `print` lowered to the debug-printf extension
//! (`SPV_KHR_non_semantic_info`, ext-inst set `NonSemantic.DebugPrintf`,
//! instruction 1 = `DebugPrintf` with an `OpString` format), plus the
//! printer records the artifact persists (one per print site).
//!
//! The message follows the interpreter's reading of the XIR brace dialect
//! (`framework/src/interp/print.rs`): each `{}` takes the next argument, a
//! `{}` without an argument stays literal, and arguments left over are
//! appended, each after one space. [`translate`] turns that into
//! - the record's canonical format (`{}` exactly once per argument, literal
//!   braces doubled), which the artifact's bounded parser accepts; and
//! - the printf format: literal `%` doubled, one conversion per scalar
//!   leaf, and a final newline (one message per line).
//!
//! Conversions: signed integers up to 32 bits are widened to `i32` and
//! printed with `%d`, unsigned ones to `u32` with `%u`; `u64` uses `%lu`;
//! `i64` prints as its two's-complement hex `0x%lx`; `f16` is widened
//! (exactly) to `f32`; `f32` prints as `%.9g` (enough digits to round-trip);
//! `f64` is narrowed to `f32` and printed the same way; `bool` prints as `%u`
//! of 1 / 0 (debug printf has no string conversion). Vectors print as
//! `(a, b, c)` and matrices as columns `((..), (..))`, one conversion per
//! lane, as the interpreter does. So the digits of a float (`0.1` versus
//! `0.100000001`), the spelling of a bool, an `i64` in hex and an `f64` at
//! `f32` precision differ from the interpreter's text; the record keeps the
//! exact types for a host-side formatter. Aggregates other than vectors and
//! matrices are not printable: the planner rejects them with a located
//! diagnostic before emission.
//!
//! Why these conversions: they are the ones the Khronos validation layer's
//! debug printf (1.3.239, Debian) formats correctly, checked on lavapipe
//! with `VK_LAYER_SETTINGS_PATH` naming a settings file with
//! `khronos_validation.enables = VK_VALIDATION_FEATURE_ENABLE_DEBUG_PRINTF_EXT`
//! and `khronos_validation.printf_to_stdout = true`, plus
//! `XIR_VULKAN_VALIDATION=1`. There `%lu` and `%lx` read 64-bit arguments,
//! but `%ld`, `%li`, `%lld` and every 64-bit float conversion (`%lf`,
//! `%.17lg`, `%.17g`) read 32 bits and shift every later argument.
//!
//! The printf output goes to whatever consumes `NonSemantic.DebugPrintf`
//! (the validation layer's debug-printf, RenderDoc); without a consumer the
//! instruction has no effect, which is what the extension specifies.

use rspirv::dr::Operand;
use rspirv::spirv::{Op, Word};
use xir::verify::{inst_diag, type_name};
use xir::{Diagnostic, Function, Inst, Module, Opcode, Type, TypeId, TypeTable};

use super::{err, EResult, Emitter, ScalarKind};
use crate::artifact::{check_print_type, PrinterRecord};
use crate::plan::Plans;

/// The ext-inst set name and the `DebugPrintf` instruction number.
pub const DEBUG_PRINTF_SET: &str = "NonSemantic.DebugPrintf";
pub const DEBUG_PRINTF_INST: u32 = 1;
/// The SPIR-V extension that allows non-semantic ext-inst sets before SPIR-V 1.6.
pub const NON_SEMANTIC_EXT: &str = "SPV_KHR_non_semantic_info";

/// How one scalar leaf is converted and printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Conv {
    /// `select(b, 1u, 0u)`, `%u`.
    Bool,
    /// Widened to `i32` (`SConvert` below 32 bits), `%d`.
    Signed32 {
        bits: u32,
    },
    /// Widened to `u32` (`UConvert` below 32 bits), `%u`.
    Unsigned32 {
        bits: u32,
    },
    Signed64,
    Unsigned64,
    /// Widened to `f32` (`FConvert` from `f16`), `%.9g`.
    Float32 {
        bits: u32,
    },
    Float64,
}

impl Conv {
    fn spec(self) -> &'static str {
        match self {
            Conv::Bool | Conv::Unsigned32 { .. } => "%u",
            Conv::Signed32 { .. } => "%d",
            Conv::Signed64 => "0x%lx",
            Conv::Unsigned64 => "%lu",
            Conv::Float32 { .. } | Conv::Float64 => "%.9g",
        }
    }
}

/// A printable argument: its shape and the conversion of its scalars.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ArgShape {
    Scalar,
    Vector(u32),
    /// `mat<F, N>`: N columns of N lanes.
    Matrix(u32),
}

fn scalar_conv(t: &TypeTable, ty: TypeId) -> Option<Conv> {
    Some(match t.get(ty) {
        Type::Bool => Conv::Bool,
        Type::Int { bits, signed: true } if *bits <= 32 => Conv::Signed32 { bits: *bits as u32 },
        Type::Int { bits, signed: false } if *bits <= 32 => Conv::Unsigned32 { bits: *bits as u32 },
        Type::Int { bits: 64, signed: true } => Conv::Signed64,
        Type::Int { bits: 64, signed: false } => Conv::Unsigned64,
        Type::Float(f) if f.bits() == 16 || f.bits() == 32 => Conv::Float32 { bits: f.bits() },
        Type::Float(f) if f.bits() == 64 => Conv::Float64,
        _ => return None,
    })
}

fn arg_shape(t: &TypeTable, ty: TypeId) -> Result<(ArgShape, Conv), String> {
    let bad = || format!("`{}` is not printable (scalars, vectors and float matrices are)", type_name(t, ty));
    let (shape, elem) = match t.get(ty) {
        Type::Vector { elem, lanes } => (ArgShape::Vector(*lanes as u32), *elem),
        Type::Matrix { elem, dim } => (ArgShape::Matrix(*dim as u32), *elem),
        _ => (ArgShape::Scalar, ty),
    };
    let conv = scalar_conv(t, elem).ok_or_else(bad)?;
    if matches!(shape, ArgShape::Matrix(_)) && !matches!(conv, Conv::Float32 { .. } | Conv::Float64) {
        return Err(bad());
    }
    check_print_type(&type_name(t, ty)).map_err(|e| format!("{}: {e}", bad()))?;
    Ok((shape, conv))
}

/// The two formats of one print site.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Translation {
    /// The canonical brace-dialect format (one `{}` per argument).
    pub record_format: String,
    /// The debug-printf format (the `OpString`).
    pub printf: String,
    /// Argument types in XIR spelling.
    pub arg_types: Vec<String>,
}

fn printf_of(shape: ArgShape, conv: Conv) -> String {
    let lanes = |n: u32| vec![conv.spec(); n as usize].join(", ");
    match shape {
        ArgShape::Scalar => conv.spec().to_string(),
        ArgShape::Vector(n) => format!("({})", lanes(n)),
        ArgShape::Matrix(n) => {
            let col = format!("({})", lanes(n));
            format!("({})", vec![col; n as usize].join(", "))
        }
    }
}

/// Translate a message and its argument types (module doc).
pub fn translate(t: &TypeTable, message: &str, arg_tys: &[TypeId]) -> Result<Translation, String> {
    let shapes: Vec<(ArgShape, Conv)> = arg_tys.iter().map(|&ty| arg_shape(t, ty)).collect::<Result<_, _>>()?;
    let (mut record, mut printf) = (String::new(), String::new());
    let literal = |s: &str, record: &mut String, printf: &mut String| {
        record.push_str(&s.replace('{', "{{").replace('}', "}}"));
        printf.push_str(&s.replace('%', "%%"));
    };
    let mut next = shapes.iter();
    let mut rest = message;
    while let Some(p) = rest.find("{}") {
        literal(&rest[..p], &mut record, &mut printf);
        match next.next() {
            Some(&(shape, conv)) => {
                record.push_str("{}");
                printf.push_str(&printf_of(shape, conv));
            }
            None => literal("{}", &mut record, &mut printf),
        }
        rest = &rest[p + 2..];
    }
    literal(rest, &mut record, &mut printf);
    for &(shape, conv) in next {
        record.push_str(" {}");
        printf.push(' ');
        printf.push_str(&printf_of(shape, conv));
    }
    // One message per line, as the interpreter's `printed` lines (the
    // consumer writes the text as is).
    printf.push('\n');
    let arg_types = arg_tys.iter().map(|&ty| type_name(t, ty)).collect();
    Ok(Translation { record_format: record, printf, arg_types })
}

fn site(m: &Module, f: &Function, i: Inst) -> Result<Translation, String> {
    let d = f.inst(i);
    let tys: Vec<TypeId> = d.operands.iter().map(|&v| f.value_type(m, v)).collect();
    translate(&m.types, d.text().unwrap_or(""), &tys)
}

/// The printer records of the planned kernel, one per reachable `print`, in
/// call-graph order then block and instruction order; ids count from 0.
/// A site that cannot be printed is a located diagnostic.
pub fn plan_prints(m: &Module, plans: &Plans) -> Result<Vec<PrinterRecord>, Vec<Diagnostic>> {
    let (mut records, mut diags) = (Vec::new(), Vec::new());
    for fid in &plans.callgraph.order {
        let f = m.func(*fid);
        let Some(closure) = plans.closures.get(fid) else { continue };
        for &b in &closure.blocks {
            for &i in &f.block(b).insts {
                if f.inst(i).opcode != Opcode::Print {
                    continue;
                }
                match site(m, f, i) {
                    Ok(t) => records.push(PrinterRecord {
                        id: records.len() as u32,
                        format: t.record_format,
                        arg_types: t.arg_types,
                    }),
                    Err(e) => diags.push(inst_diag(f, i, "spirv-plan:print", e)),
                }
            }
        }
    }
    if diags.is_empty() {
        Ok(records)
    } else {
        Err(diags)
    }
}

impl Emitter<'_> {
    /// The `NonSemantic.DebugPrintf` import, created on first use.
    fn printf_set(&mut self) -> Word {
        let existing = self.b.module_ref().ext_inst_imports.iter().find_map(|i| match i.operands.first() {
            Some(Operand::LiteralString(s)) if s == DEBUG_PRINTF_SET => i.result_id,
            _ => None,
        });
        existing.unwrap_or_else(|| self.b.ext_inst_import(DEBUG_PRINTF_SET))
    }

    /// One scalar leaf as the printf argument its conversion needs.
    fn print_leaf(&mut self, v: Word, conv: Conv) -> EResult<Word> {
        let widen = |e: &mut Self, op: Op, k: ScalarKind| -> EResult<Word> {
            let ty = e.scalar_ty(k);
            e.op(op, Some(ty), None, vec![Operand::IdRef(v)])
        };
        match conv {
            Conv::Bool => {
                let u = self.scalar_ty(ScalarKind::Int { bits: 32, signed: false });
                let (one, zero) = (self.u32_const(1), self.u32_const(0));
                self.op(Op::Select, Some(u), None, vec![Operand::IdRef(v), Operand::IdRef(one), Operand::IdRef(zero)])
            }
            Conv::Signed32 { bits } if bits < 32 => {
                widen(self, Op::SConvert, ScalarKind::Int { bits: 32, signed: true })
            }
            Conv::Unsigned32 { bits } if bits < 32 => {
                widen(self, Op::UConvert, ScalarKind::Int { bits: 32, signed: false })
            }
            Conv::Float32 { bits: 16 } | Conv::Float64 => widen(self, Op::FConvert, ScalarKind::Float { bits: 32 }),
            _ => Ok(v),
        }
    }

    /// Lower one `print` to `DebugPrintf`.
    pub(crate) fn emit_print(&mut self, i: Inst) -> EResult<()> {
        let Some(fid) = self.fs.func else { return err("print outside a function") };
        let m = self.m;
        let f = m.func(fid);
        let d = f.inst(i);
        let tr = match site(m, f, i) {
            Ok(t) => t,
            Err(e) => return err(format!("print reached emission unplanned: {e}")),
        };
        let mut args = Vec::new();
        for &v in &d.operands {
            let ty = f.value_type(m, v);
            let (shape, conv) = match arg_shape(&m.types, ty) {
                Ok(s) => s,
                Err(e) => return err(e),
            };
            let id = self.val(v)?;
            let paths: Vec<Vec<u32>> = match shape {
                ArgShape::Scalar => vec![vec![]],
                ArgShape::Vector(n) => (0..n).map(|k| vec![k]).collect(),
                ArgShape::Matrix(n) => (0..n).flat_map(|c| (0..n).map(move |r| vec![c, r])).collect(),
            };
            let elem = match m.types.get(ty) {
                Type::Vector { elem, .. } | Type::Matrix { elem, .. } => *elem,
                _ => ty,
            };
            let elem_ty = self.ty(elem)?;
            for path in paths {
                let leaf = if path.is_empty() {
                    id
                } else {
                    let mut ops = vec![Operand::IdRef(id)];
                    ops.extend(path.iter().map(|&k| Operand::LiteralBit32(k)));
                    self.op(Op::CompositeExtract, Some(elem_ty), None, ops)?
                };
                args.push(self.print_leaf(leaf, conv)?);
            }
        }
        self.exts.insert(NON_SEMANTIC_EXT);
        let set = self.printf_set();
        let fmt = self.b.string(tr.printf);
        let void = self.b.type_void();
        let mut ops = vec![Operand::IdRef(set), Operand::LiteralExtInstInteger(DEBUG_PRINTF_INST), Operand::IdRef(fmt)];
        ops.extend(args.into_iter().map(Operand::IdRef));
        self.op(Op::ExtInst, Some(void), None, ops)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use xir::FloatFormat;

    #[test]
    fn brace_dialect_to_record_and_printf() {
        let mut t = TypeTable::default();
        let f32 = t.intern(Type::Float(FloatFormat::F32));
        let u8t = t.intern(Type::Int { bits: 8, signed: false });
        let v3 = t.intern(Type::Vector { elem: f32, lanes: 3 });
        let tr = translate(&t, "a={} 100% {{x}} v={}", &[u8t, v3]).unwrap();
        // The interpreter reads `{{x}}` as `{` + `{x}` + `}`: only `{}` is a placeholder.
        assert_eq!(tr.record_format, "a={} 100% {{{{x}}}} v={}");
        assert_eq!(tr.printf, "a=%u 100%% {{x}} v=(%.9g, %.9g, %.9g)\n");
        assert_eq!(tr.arg_types, vec!["u8".to_string(), "vec<f32, 3>".to_string()]);
        // Leftover arguments are appended; a placeholder without an argument stays literal.
        let tr = translate(&t, "x", &[u8t]).unwrap();
        assert_eq!((tr.record_format.as_str(), tr.printf.as_str()), ("x {}", "x %u\n"));
        let tr = translate(&t, "{} {}", &[u8t]).unwrap();
        assert_eq!((tr.record_format.as_str(), tr.printf.as_str()), ("{} {{}}", "%u {}\n"));
        assert_eq!(crate::artifact::count_placeholders(&tr.record_format), Ok(1));
    }

    #[test]
    fn aggregates_are_not_printable() {
        let mut t = TypeTable::default();
        let f32 = t.intern(Type::Float(FloatFormat::F32));
        let arr = t.intern(Type::Array { elem: f32, len: 2 });
        let e = translate(&t, "{}", &[arr]).unwrap_err();
        assert!(e.contains("array<f32, 2>") && e.contains("not printable"), "{e}");
    }
}
