//! Printing: `print` lowered to the debug-printf extension
//! (`SPV_KHR_non_semantic_info`, ext-inst set `NonSemantic.DebugPrintf`,
//! instruction 1 = `DebugPrintf` with an `OpString` format), plus the
//! printer records the artifact persists (one per print site).
//!
//! The device prints exact bits; the host writes the text. The message
//! follows the interpreter's reading of the XIR brace dialect
//! (`framework/src/interp/print.rs`): each `{}` takes the next argument, a
//! `{}` without an argument stays literal, and arguments left over are
//! appended, each after one space. [`translate`] turns that into the
//! record's canonical format (`{}` exactly once per argument, literal braces
//! doubled), which the artifact's bounded parser accepts. The shader's printf
//! format carries no user text at all, only the record id, the invocation
//! and the argument bits ([`printf_format`]):
//!
//! ```text
//! xir-print#<record id> %u %u %u: %x %x ...\n
//! ```
//!
//! The three `%u` are `GlobalInvocationId`; then one `%x` per 32-bit word of
//! the arguments' scalar leaves, in member order (vector lanes; matrices
//! column by column). Every leaf is passed as a 32-bit integer, so the
//! consumer's own float and 64-bit conversions never run:
//! - `bool`: `select(b, 1u, 0u)`, one word;
//! - integers up to 32 bits: zero-extended (`UConvert`) to one word, the
//!   host keeps the low `bits` and sign-extends them itself (so a wide
//!   register holding an unwrapped narrow value, as on the H200, cannot
//!   leak into the text);
//! - `f16`: `vec2<f16>(x, 0)` bit-cast to one `u32` (exact: no conversion
//!   that could flush a subnormal or quiet a NaN);
//! - `f32`: bit-cast to `u32`;
//! - 64-bit integers and `f64`: bit-cast to `vec2<u32>`, two words, low first.
//!
//! The runner (`vulkan/printf.rs`) reads the words back and formats each
//! argument from the record's type with the interpreter's own formatter
//! (`xir::interp::format_value_bits`), so a device line equals the
//! interpreter's line exactly: float digits, `-0`, `NaN`, `inf`, `true`.
//! Aggregates other than vectors and matrices, and FP8 (refused by the
//! handoff: FP8 is transport only), are not printable; the planner rejects
//! them with a located diagnostic before emission.
//!
//! Why not the consumer's conversions: the Khronos validation layer's debug
//! printf (1.3.239) reads `%ld`, `%lld` and every 64-bit float conversion as
//! 32 bits, and formats floats through C `printf`, whose digits differ from
//! the interpreter's shortest round-trip form.
//!
//! Without a consumer the instruction has no effect, which is what the
//! extension specifies; the runner refuses to run a printing kernel without
//! one (`vulkan/printf.rs`).

use rspirv::dr::Operand;
use rspirv::spirv::{Op, Word};
use xir::verify::{inst_diag, type_name};
use xir::{Diagnostic, FuncId, Function, Inst, Module, Opcode, SpecialRegister, Type, TypeId, TypeTable};

use super::{err, EResult, Emitter, ScalarKind};
use crate::artifact::{check_print_type, PrinterRecord};
use crate::plan::Plans;

/// The ext-inst set name and the `DebugPrintf` instruction number.
pub const DEBUG_PRINTF_SET: &str = "NonSemantic.DebugPrintf";
pub const DEBUG_PRINTF_INST: u32 = 1;
/// The SPIR-V extension that allows non-semantic ext-inst sets before SPIR-V 1.6.
pub const NON_SEMANTIC_EXT: &str = "SPV_KHR_non_semantic_info";
/// The text every printf format of this backend starts with.
pub const PRINTF_MARK: &str = "xir-print#";

/// The printf format of record `id` with `words` argument words (module doc).
pub fn printf_format(id: u32, words: u32) -> String {
    format!("{PRINTF_MARK}{id} %u %u %u:{}\n", " %x".repeat(words as usize))
}

/// 32-bit words one scalar leaf of `bits` bits takes in a printf message.
pub fn words_per_leaf(bits: u32) -> u32 {
    if bits == 64 {
        2
    } else {
        1
    }
}

/// How one scalar leaf becomes its printf words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Conv {
    /// `select(b, 1u, 0u)`.
    Bool,
    /// Zero-extended to 32 bits (`UConvert` below 32 bits).
    Int32 { bits: u32 },
    /// `vec2<f16>(x, 0)` bit-cast to `u32`.
    F16,
    /// Bit-cast to `u32`.
    F32,
    /// Bit-cast to `vec2<u32>`.
    Wide,
}

impl Conv {
    fn words(self) -> u32 {
        if self == Conv::Wide {
            2
        } else {
            1
        }
    }
}

/// A printable argument's shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ArgShape {
    Scalar,
    Vector(u32),
    /// `mat<F, N>`: N columns of N lanes.
    Matrix(u32),
}

impl ArgShape {
    fn leaves(self) -> u32 {
        match self {
            ArgShape::Scalar => 1,
            ArgShape::Vector(n) => n,
            ArgShape::Matrix(n) => n * n,
        }
    }
}

fn scalar_conv(t: &TypeTable, ty: TypeId) -> Option<Conv> {
    Some(match t.get(ty) {
        Type::Bool => Conv::Bool,
        Type::Int { bits, .. } if *bits <= 32 => Conv::Int32 { bits: *bits as u32 },
        Type::Int { bits: 64, .. } => Conv::Wide,
        Type::Float(f) if f.bits() == 16 => Conv::F16,
        Type::Float(f) if f.bits() == 32 => Conv::F32,
        Type::Float(f) if f.bits() == 64 => Conv::Wide,
        _ => return None,
    })
}

/// Why a `print` argument cannot be printed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NotPrintable {
    #[error("`{0}` is not printable (scalars, vectors and float matrices are)")]
    Shape(String),
    #[error("`{ty}` is not printable (scalars, vectors and float matrices are): {why}")]
    Record { ty: String, why: crate::artifact::PrintTypeError },
}

fn arg_shape(t: &TypeTable, ty: TypeId) -> Result<(ArgShape, Conv), NotPrintable> {
    let bad = || NotPrintable::Shape(type_name(t, ty));
    let (shape, elem) = match t.get(ty) {
        Type::Vector { elem, lanes } => (ArgShape::Vector(*lanes as u32), *elem),
        Type::Matrix { elem, dim } => (ArgShape::Matrix(*dim as u32), *elem),
        _ => (ArgShape::Scalar, ty),
    };
    let conv = scalar_conv(t, elem).ok_or_else(bad)?;
    if matches!(shape, ArgShape::Matrix(_)) && !matches!(t.get(elem), Type::Float(_)) {
        return Err(bad());
    }
    check_print_type(&type_name(t, ty)).map_err(|why| NotPrintable::Record { ty: type_name(t, ty), why })?;
    Ok((shape, conv))
}

/// One print site, translated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Translation {
    /// The canonical brace-dialect format (one `{}` per argument).
    pub record_format: String,
    /// Argument types in XIR spelling.
    pub arg_types: Vec<String>,
    /// 32-bit argument words of the printf message (after the invocation id).
    pub words: u32,
}

/// Translate a message and its argument types (module doc).
pub fn translate(t: &TypeTable, message: &str, arg_tys: &[TypeId]) -> Result<Translation, NotPrintable> {
    let shapes: Vec<(ArgShape, Conv)> = arg_tys.iter().map(|&ty| arg_shape(t, ty)).collect::<Result<_, _>>()?;
    let mut record = String::new();
    let literal = |s: &str, record: &mut String| record.push_str(&s.replace('{', "{{").replace('}', "}}"));
    let mut next = shapes.iter();
    let mut rest = message;
    while let Some(p) = rest.find("{}") {
        literal(&rest[..p], &mut record);
        match next.next() {
            Some(_) => record.push_str("{}"),
            None => literal("{}", &mut record),
        }
        rest = &rest[p + 2..];
    }
    literal(rest, &mut record);
    for _ in next {
        record.push_str(" {}");
    }
    let words = shapes.iter().map(|(s, c)| s.leaves() * c.words()).sum();
    let arg_types = arg_tys.iter().map(|&ty| type_name(t, ty)).collect();
    Ok(Translation { record_format: record, arg_types, words })
}

fn site(m: &Module, f: &Function, i: Inst) -> Result<Translation, NotPrintable> {
    let d = f.inst(i);
    let tys: Vec<TypeId> = d.operands.iter().map(|&v| f.value_type(m, v)).collect();
    translate(&m.types, f.text(i).unwrap_or(""), &tys)
}

/// Every reachable `print` of the planned kernel, in record order: call-graph
/// order, then block and instruction order.
fn sites<'a>(m: &'a Module, plans: &'a Plans) -> impl Iterator<Item = (FuncId, Inst)> + 'a {
    plans.callgraph.order.iter().flat_map(move |fid| {
        let f = m.func(*fid);
        let blocks = plans.closures.get(fid).map(|c| c.blocks.as_slice()).unwrap_or(&[]);
        blocks.iter().flat_map(move |&b| {
            f.block(b).insts().iter().filter(move |&&i| f.opcode(i) == Opcode::Print).map(move |&i| (*fid, i))
        })
    })
}

/// The printer records of the planned kernel, one per reachable `print`, in
/// [`sites`] order; ids count from 0. A site that cannot be printed is a
/// located diagnostic.
pub fn plan_prints(m: &Module, plans: &Plans) -> Result<Vec<PrinterRecord>, Vec<Diagnostic>> {
    let (mut records, mut diags) = (Vec::new(), Vec::new());
    for (fid, i) in sites(m, plans) {
        let f = m.func(fid);
        match site(m, f, i) {
            Ok(t) => records.push(PrinterRecord {
                id: records.len() as u32,
                format: t.record_format,
                arg_types: t.arg_types,
            }),
            Err(e) => diags.push(inst_diag(f, i, xir::diag::Rule::SpirvPlanPrint, e.to_string())),
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

    /// One scalar leaf as its printf words (module doc).
    fn print_words(&mut self, v: Word, conv: Conv, out: &mut Vec<Word>) -> EResult<()> {
        let u32t = self.scalar_ty(ScalarKind::Int { bits: 32, signed: false });
        let word = match conv {
            Conv::Bool => {
                let (one, zero) = (self.u32_const(1), self.u32_const(0));
                self.op(
                    Op::Select,
                    Some(u32t),
                    None,
                    vec![Operand::IdRef(v), Operand::IdRef(one), Operand::IdRef(zero)],
                )?
            }
            Conv::Int32 { bits } if bits < 32 => self.op(Op::UConvert, Some(u32t), None, vec![Operand::IdRef(v)])?,
            Conv::Int32 { .. } => v,
            Conv::F16 => {
                let h = self.scalar_ty(ScalarKind::Float { bits: 16 });
                let h2 = self.b.type_vector(h, 2);
                let zero = self.scalar_const(ScalarKind::Float { bits: 16 }, 0);
                let pair =
                    self.op(Op::CompositeConstruct, Some(h2), None, vec![Operand::IdRef(v), Operand::IdRef(zero)])?;
                self.op(Op::Bitcast, Some(u32t), None, vec![Operand::IdRef(pair)])?
            }
            Conv::F32 => self.op(Op::Bitcast, Some(u32t), None, vec![Operand::IdRef(v)])?,
            Conv::Wide => {
                out.extend(self.u64_words(v)?);
                return Ok(());
            }
        };
        out.push(word);
        Ok(())
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
        let Some(id) = sites(m, self.plans).position(|s| s == (fid, i)) else {
            return err("print reached emission outside the planned closure");
        };
        let gid = self.register(SpecialRegister::DispatchId)?;
        let u32t = self.u32_ty();
        let mut args = Vec::new();
        for k in 0..3 {
            args.push(self.op(
                Op::CompositeExtract,
                Some(u32t),
                None,
                vec![Operand::IdRef(gid), Operand::LiteralBit32(k)],
            )?);
        }
        for &v in &d.operands {
            let ty = f.value_type(m, v);
            let (shape, conv) = match arg_shape(&m.types, ty) {
                Ok(s) => s,
                Err(e) => return err(e.to_string()),
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
                self.print_words(leaf, conv, &mut args)?;
            }
        }
        if args.len() != 3 + tr.words as usize {
            return err(format!("print lowered to {} words, its record says {}", args.len() - 3, tr.words));
        }
        self.exts.insert(NON_SEMANTIC_EXT);
        let set = self.printf_set();
        let fmt = self.b.string(printf_format(id as u32, tr.words));
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
    fn brace_dialect_to_record_and_words() {
        let mut t = TypeTable::default();
        let f32 = t.intern(Type::Float(FloatFormat::F32));
        let f64 = t.intern(Type::Float(FloatFormat::F64));
        let u8t = t.intern(Type::Int { bits: 8, signed: false });
        let v3 = t.intern(Type::Vector { elem: f32, lanes: 3 });
        let tr = translate(&t, "a={} 100% {{x}} v={}", &[u8t, v3]).unwrap();
        // The interpreter reads `{{x}}` as `{` + `{x}` + `}`: only `{}` is a placeholder.
        assert_eq!(tr.record_format, "a={} 100% {{{{x}}}} v={}");
        assert_eq!(tr.words, 4);
        assert_eq!(tr.arg_types, vec!["u8".to_string(), "vec<f32, 3>".to_string()]);
        // Leftover arguments are appended; a placeholder without an argument stays literal.
        let tr = translate(&t, "x", &[u8t, f64]).unwrap();
        assert_eq!((tr.record_format.as_str(), tr.words), ("x {} {}", 3));
        let tr = translate(&t, "{} {}", &[u8t]).unwrap();
        assert_eq!(tr.record_format, "{} {{}}");
        assert_eq!(crate::artifact::count_placeholders(&tr.record_format), Ok(1));
        assert_eq!(printf_format(7, 3), "xir-print#7 %u %u %u: %x %x %x\n");
        assert_eq!(printf_format(0, 0), "xir-print#0 %u %u %u:\n");
    }

    #[test]
    fn aggregates_are_not_printable() {
        let mut t = TypeTable::default();
        let f32 = t.intern(Type::Float(FloatFormat::F32));
        let arr = t.intern(Type::Array { elem: f32, len: 2 });
        let e = translate(&t, "{}", &[arr]).unwrap_err();
        assert_eq!(e, NotPrintable::Shape("array<f32, 2>".into()));
        assert_eq!(e.to_string(), "`array<f32, 2>` is not printable (scalars, vectors and float matrices are)");
    }
}
