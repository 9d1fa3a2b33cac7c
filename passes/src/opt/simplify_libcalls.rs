//! `simplify_libcalls`: rewrite math intrinsics (XIR's "library calls":
//! `pow`, `copysign`, `clamp`, the rounding functions, `isnan` / `isinf`,
//! `sqrt`, integer `abs` / `min` / `max` / `clamp`) whose arguments are
//! constants or have a known form, when the result is bit-exact under the
//! interpreter's rules (`framework/src/interp/arith.rs`) — NaN payloads and
//! signed zeros included. Each rule below says why it is exact:
//!
//! | rule | rewrite | why exact |
//! |---|---|---|
//! | `pow-zero` | `pow(x, ±0.0)` → `1.0` | C99 F.9.4.4: pow(x, ±0) is 1 for every x, NaN included |
//! | `pow-base-one` | `pow(1.0, y)` → `1.0` | C99 F.9.4.4: pow(+1, y) is 1 for every y, NaN included |
//! | `copysign-positive` | `copysign(x, c)`, `c` a constant with clear sign bit → `abs(x)` | both clear the sign bit and keep every other bit |
//! | `copysign-self` | `copysign(x, x)` → `x` | puts x's own sign bit back |
//! | `copysign-magnitude` | `copysign(neg y / abs y, s)` → `copysign(y, s)` | only the magnitude bits of the first operand are read |
//! | `clamp-unit` | `clamp(x, +0.0, 1.0)` → `saturate(x)` | the interpreter defines both as minNum(maxNum(x, +0.0), 1.0) |
//! | `round-integral` | `floor/ceil/trunc/round/rint(y)`, `y` already rounded or a `cast.static` from an integer → `y` | integral values, infinities and zeros are fixed points of every rounding function; a quiet NaN (what a rounding returns) rounds to itself; int-to-float casts give no NaN |
//! | `class-of-sign-op` | `isnan/isinf(neg y / abs y)` → `isnan/isinf(y)` | neg / abs change only the sign bit |
//! | `isnan-of-int` | `isnan(cast.static int)` → `false` | an integer converts to a number |
//! | `isinf-of-int` | `isinf(cast.static int)` → `false` into f32 / f64 (f16: from 8-bit ints and bool) | every such integer is below the format's largest finite value |
//! | `sqrt-const` | `sqrt(c)` → its value | IEEE 754 sqrt is correctly rounded: one right answer on every conforming host and device |
//! | `same-operands` | `min(x, x)`, `max(x, x)` → `x` | minNum / maxNum / integer min / max return an operand, and both are x |
//! | `abs-unsigned` | `abs(x)` of an unsigned integer → `x` | the interpreter's unsigned abs is the identity |
//! | `min-max-bound` | integer `min/max(x, MIN or MAX)` → `x` or the bound | order bounds of the type |
//! | `clamp-bound` | integer `clamp(x, MIN, hi)` → `min(x, hi)`, `clamp(x, lo, MAX)` → `max(x, lo)` | clamp is min(max(x, lo), hi), and max(x, MIN) = x, min(y, MAX) = y |
//!
//! Deliberately **not** done, because they are not exact: `pow(x, 2.0)` →
//! `x * x` (the host's `powf` is not correctly rounded, `x * x` is), `pow(x,
//! 1.0)` → `x` (pow quiets a signaling NaN), `pow(x, 0.5)` → `sqrt(x)`
//! (differs at -0.0 and -inf), float `min(x, +inf)` → `x` (NaN gives inf),
//! `fma(a, 1.0, c)` → `a + c` (NaN payload choice of the host's fma).
//!
//! - Consumes: `xir` (any dialect).
//! - Produces: the same dialect.
//! - Preserves: `cfg`, `dominators`, `post_dominators`, `loops`.

use std::collections::BTreeMap;

use xir::pass::{AnalysisKind, Pass, PassContext, PassDecl, PassError, PassInfo, PassOutcome, Produces};
use xir::{FloatFormat, FuncId, Inst, InstData, Module, Opcode, Type, TypeId, Value};

const INFO: PassInfo = PassInfo {
    name: "simplify_libcalls",
    doc:
        "Bit-exact rewrites of math intrinsics with constant or special arguments (pow, copysign, clamp, rounding, ...)",
    consumes: &["xir"],
    produces: Produces::Same,
    eliminates: &[
        "pow", "copysign", "clamp", "floor", "ceil", "trunc", "round", "rint", "isnan", "isinf", "sqrt", "abs", "min",
        "max",
    ],
    preserves: &[AnalysisKind::Cfg, AnalysisKind::Dominators, AnalysisKind::PostDominators, AnalysisKind::Loops],
};

#[derive(Default)]
pub struct SimplifyLibcalls;

pub fn decl() -> PassDecl {
    PassDecl::without_options::<SimplifyLibcalls>(INFO)
}

impl Pass for SimplifyLibcalls {
    fn info(&self) -> &PassInfo {
        &INFO
    }
    fn run(&self, module: &mut Module, _cx: &mut PassContext) -> Result<PassOutcome, PassError> {
        let mut fired: BTreeMap<&'static str, usize> = BTreeMap::new();
        let funcs = crate::memory::util::defined_functions(module);
        for fid in funcs {
            simplify_function(module, fid, &mut fired);
        }
        let total: usize = fired.values().sum();
        let mut out = PassOutcome::changed(total > 0);
        out.stats.push(("rewritten".into(), total.to_string()));
        let rules: Vec<String> = fired.iter().map(|(k, n)| format!("{k} x{n}")).collect();
        out.stats.push(("rules_fired".into(), if rules.is_empty() { "none".into() } else { rules.join(", ") }));
        Ok(out)
    }
}

/// What an instruction becomes.
enum Rewrite {
    /// An existing or constant value.
    Value(Value),
    /// A new instruction of the same result type.
    Inst(Opcode, Vec<Value>),
}

fn simplify_function(m: &mut Module, fid: FuncId, fired: &mut BTreeMap<&'static str, usize>) {
    // Rewrites can expose more (a rounding of a rounding of a rounding):
    // repeat until nothing fires.
    loop {
        let mut changed = false;
        let insts: Vec<Inst> = m.func(fid).all_insts().map(|(_, i)| i).collect();
        for i in insts {
            if !m.func(fid).is_live(i) {
                continue;
            }
            let Some((rule, rw)) = rewrite(m, fid, i) else { continue };
            let f = m.func_mut(fid);
            let created = matches!(rw, Rewrite::Inst(..));
            let new = match rw {
                Rewrite::Value(v) => v,
                Rewrite::Inst(op, ops) => {
                    let old = f.inst(i);
                    let mut d = InstData::new(op, old.ty);
                    d.operands = ops.into_iter().collect();
                    d.span = f.inst_span(i);
                    d.md = f.inst_md(i).to_metadata();
                    let b = f.parent(i).expect("live");
                    let n = f.create_inst(d);
                    let pos = f.position(i).expect("placed");
                    f.insert_inst(b, pos, n);
                    Value::Inst(n)
                }
            };
            if super::util::replace_uses_keeping_phis_acyclic(f, Value::Inst(i), new) {
                f.remove_inst(i);
                *fired.entry(rule).or_default() += 1;
                changed = true;
            } else if let (true, Value::Inst(n)) = (created, new) {
                f.remove_inst(n);
            }
        }
        if !changed {
            return;
        }
    }
}

fn float_format(m: &Module, ty: TypeId) -> Option<FloatFormat> {
    match m.types.get(m.types.scalar_of(ty)) {
        Type::Float(f @ (FloatFormat::F16 | FloatFormat::F32 | FloatFormat::F64)) => Some(*f),
        _ => None,
    }
}

fn one_bits(f: FloatFormat) -> u64 {
    match f {
        FloatFormat::F16 => 0x3c00,
        FloatFormat::F32 => 1.0f32.to_bits() as u64,
        _ => 1.0f64.to_bits(),
    }
}

fn sign_bit(f: FloatFormat) -> u64 {
    1u64 << (f.bits() - 1)
}

/// The defining instruction of `v` when it has opcode `op`.
fn def_with(m: &Module, fid: FuncId, v: Value, ops: &[Opcode]) -> Option<Inst> {
    let i = v.as_inst()?;
    ops.contains(&m.func(fid).opcode(i)).then_some(i)
}

const ROUNDINGS: &[Opcode] = &[Opcode::Floor, Opcode::Ceil, Opcode::Trunc, Opcode::Round, Opcode::Rint];

/// Whether `v` is a `cast.static` from an integer or bool (scalar or vector).
fn int_cast_source(m: &Module, fid: FuncId, v: Value) -> Option<TypeId> {
    let c = def_with(m, fid, v, &[Opcode::CastStatic])?;
    let f = m.func(fid);
    let src = f.value_type(m, f.inst(c).operands[0]);
    let s = m.types.scalar_of(src);
    (m.types.is_int(s) || m.types.is_bool(s)).then_some(s)
}

/// Integer bounds (min, max) of a scalar integer type, as bits.
fn int_bounds(m: &Module, ty: TypeId) -> Option<(u64, u64)> {
    let Type::Int { bits, signed } = m.types.get(ty) else { return None };
    let bits = *bits as u32;
    let mask = if bits >= 64 { u64::MAX } else { (1u64 << bits) - 1 };
    Some(if *signed { (1u64 << (bits - 1), mask >> 1) } else { (0, mask) })
}

fn rewrite(m: &mut Module, fid: FuncId, i: Inst) -> Option<(&'static str, Rewrite)> {
    let f = m.func(fid);
    let d = f.inst(i);
    let ty = d.ty;
    let ops: Vec<Value> = d.operands.to_vec();
    let k = |n: usize| ops.get(n).and_then(|&v| m.const_bits(v));
    let fmt = float_format(m, ty);
    match d.opcode {
        Opcode::Pow => {
            let fmt = fmt?;
            if !m.types.is_scalar(ty) {
                return None;
            }
            let one = one_bits(fmt);
            if k(1).is_some_and(|y| y & !sign_bit(fmt) == 0) {
                return Some(("pow-zero", Rewrite::Value(m.const_scalar(ty, one))));
            }
            if k(0) == Some(one) {
                return Some(("pow-base-one", Rewrite::Value(m.const_scalar(ty, one))));
            }
            None
        }
        Opcode::Copysign => {
            let fmt = fmt?;
            if ops[0] == ops[1] {
                return Some(("copysign-self", Rewrite::Value(ops[0])));
            }
            if m.types.is_scalar(ty) && k(1).is_some_and(|s| s & sign_bit(fmt) == 0) {
                return Some(("copysign-positive", Rewrite::Inst(Opcode::Abs, vec![ops[0]])));
            }
            let inner = def_with(m, fid, ops[0], &[Opcode::Neg, Opcode::Abs])?;
            let y = f.inst(inner).operands[0];
            Some(("copysign-magnitude", Rewrite::Inst(Opcode::Copysign, vec![y, ops[1]])))
        }
        Opcode::Clamp if fmt.is_some() => {
            let fmt = fmt?;
            (m.types.is_scalar(ty) && k(1) == Some(0) && k(2) == Some(one_bits(fmt)))
                .then(|| ("clamp-unit", Rewrite::Inst(Opcode::Saturate, vec![ops[0]])))
        }
        Opcode::Clamp => {
            let (lo, hi) = int_bounds(m, ty)?;
            match (k(1) == Some(lo), k(2) == Some(hi)) {
                (true, true) => Some(("clamp-bound", Rewrite::Value(ops[0]))),
                (true, false) => Some(("clamp-bound", Rewrite::Inst(Opcode::Min, vec![ops[0], ops[2]]))),
                (false, true) => Some(("clamp-bound", Rewrite::Inst(Opcode::Max, vec![ops[0], ops[1]]))),
                _ => None,
            }
        }
        op if ROUNDINGS.contains(&op) => {
            fmt?;
            let integral = def_with(m, fid, ops[0], ROUNDINGS).is_some() || int_cast_source(m, fid, ops[0]).is_some();
            integral.then_some(("round-integral", Rewrite::Value(ops[0])))
        }
        Opcode::Isnan | Opcode::Isinf => {
            let arg_fmt = float_format(m, f.value_type(m, ops[0]))?;
            if let Some(inner) = def_with(m, fid, ops[0], &[Opcode::Neg, Opcode::Abs]) {
                let y = f.inst(inner).operands[0];
                return Some(("class-of-sign-op", Rewrite::Inst(d.opcode, vec![y])));
            }
            let src = int_cast_source(m, fid, ops[0])?;
            if !m.types.is_scalar(ty) {
                return None;
            }
            if d.opcode == Opcode::Isnan {
                return Some(("isnan-of-int", Rewrite::Value(m.const_scalar(ty, 0))));
            }
            let small = m.types.is_bool(src) || m.types.scalar_bits(src) <= 8;
            (arg_fmt != FloatFormat::F16 || small).then(|| ("isinf-of-int", Rewrite::Value(m.const_scalar(ty, 0))))
        }
        Opcode::Sqrt => {
            fmt?;
            let x = k(0)?;
            if !m.types.is_scalar(ty) {
                return None;
            }
            let r = xir::interp::fold_scalar(&m.types, Opcode::Sqrt, ty, ty, &[x])?;
            Some(("sqrt-const", Rewrite::Value(m.const_scalar(ty, r))))
        }
        Opcode::Min | Opcode::Max if ops.len() == 2 && ops[0] == ops[1] => {
            Some(("same-operands", Rewrite::Value(ops[0])))
        }
        Opcode::Min | Opcode::Max => {
            let (lo, hi) = int_bounds(m, ty)?;
            let is_min = d.opcode == Opcode::Min;
            for (c, x) in [(1, 0), (0, 1)] {
                match k(c) {
                    // min(x, MIN) = MIN, max(x, MAX) = MAX.
                    Some(b) if (is_min && b == lo) || (!is_min && b == hi) => {
                        return Some(("min-max-bound", Rewrite::Value(ops[c])))
                    }
                    // min(x, MAX) = x, max(x, MIN) = x.
                    Some(b) if (is_min && b == hi) || (!is_min && b == lo) => {
                        return Some(("min-max-bound", Rewrite::Value(ops[x])))
                    }
                    _ => {}
                }
            }
            None
        }
        Opcode::Abs => {
            let s = m.types.scalar_of(ty);
            matches!(m.types.get(s), Type::Int { signed: false, .. })
                .then_some(("abs-unsigned", Rewrite::Value(ops[0])))
        }
        _ => None,
    }
}
