//! `scalarizer`: split lane-wise vector arithmetic into one scalar
//! instruction per lane, rebuilt into a vector with `aggregate`.
//!
//! `%r = add %a, %b : vec<u32, 2>` becomes
//! `%a0 = extract %a, u32 0`, `%b0 = extract %b, u32 0`, `%r0 = add %a0, %b0`,
//! the same for lane 1, and `%r = aggregate %r0, %r1`. A lane operand is
//! read without an `extract` when the vector is a constant (its lane
//! constant) or an `aggregate` of scalars (its member) — so a chain of split
//! operations passes scalars along and the intermediate `aggregate`s die
//! (they are deleted). An `extract` with a constant lane index of a split
//! result reads the lane directly too.
//!
//! Exact: the interpreter evaluates every splittable opcode lane by lane with
//! the scalar operation (`interp/ops.rs`: `map1` / `map2` / `map3`, `select`
//! per lane or with one scalar condition), so the split computes the same
//! bits and fails on the same lanes. Operands that are `undef` vectors are
//! left alone (a lane of an undefined vector cannot be extracted).
//!
//! Option `ops`: the opcodes to split (spec spellings); empty (the default)
//! splits every supported opcode: unary and binary arithmetic, math
//! functions, comparisons, `select`, `clamp` / `lerp` / `smoothstep` / `fma`,
//! `isnan` / `isinf` and `cast.static`. Reductions, geometry (`dot`,
//! `cross`, ...) and matrices are not split.
//!
//! - Consumes: `xir` (any dialect).
//! - Produces: the same dialect.
//! - Preserves: `cfg`, `dominators`, `post_dominators`, `loops`.

use rustc_hash::{FxHashMap, FxHashSet};
use serde::Deserialize;
use xir::pass::{
    AnalysisKind, OptionDoc, OptionsError, Pass, PassContext, PassDecl, PassError, PassInfo, PassOutcome, Produces,
};
use xir::{ConstValue, FuncId, Inst, InstData, Module, Opcode, Type, Value};

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Options {
    /// Opcodes to split; empty = every supported opcode.
    pub ops: Vec<String>,
}

const INFO: PassInfo = PassInfo {
    name: "scalarizer",
    doc: "Split lane-wise vector arithmetic into per-lane scalar instructions plus an aggregate",
    consumes: &["xir"],
    produces: Produces::Same,
    eliminates: &[],
    preserves: &[AnalysisKind::Cfg, AnalysisKind::Dominators, AnalysisKind::PostDominators, AnalysisKind::Loops],
};

const OPTIONS: &[OptionDoc] = &[OptionDoc {
    name: "ops",
    ty: "[string]",
    default: "[] (all supported)",
    doc: "opcodes to split, e.g. [\"add\", \"mul\"]; lane-wise opcodes only",
}];

/// Every opcode the pass can split (lane-wise in the interpreter).
pub const SPLITTABLE: &[Opcode] = {
    use Opcode::*;
    &[
        Neg, BitNot, Abs, Sin, Cos, Tan, Asin, Acos, Atan, Sinh, Cosh, Tanh, Asinh, Acosh, Atanh, Exp, Exp2, Exp10,
        Log, Log2, Log10, Sqrt, Rsqrt, Ceil, Floor, Fract, Trunc, Round, Rint, Clz, Ctz, Popcount, Reverse, Saturate,
        Isinf, Isnan, Add, Sub, Mul, Div, Mod, BitAnd, BitOr, BitXor, Shl, Shr, Rotl, Rotr, Min, Max, Atan2, Pow,
        Copysign, Step, Lt, Gt, Le, Ge, Eq, Ne, Clamp, Lerp, Smoothstep, Fma, Select, CastStatic,
    ]
};

pub struct Scalarizer {
    ops: Vec<Opcode>,
}

impl Scalarizer {
    pub fn new(opts: Options) -> Result<Self, OptionsError> {
        if opts.ops.is_empty() {
            return Ok(Scalarizer { ops: SPLITTABLE.to_vec() });
        }
        let bad = |message: String| OptionsError::Value { option: "ops", message };
        let mut ops = Vec::new();
        for name in &opts.ops {
            let op = Opcode::from_name(name).ok_or_else(|| bad(format!("scalarizer: unknown opcode `{name}`")))?;
            if !SPLITTABLE.contains(&op) {
                return Err(bad(format!("scalarizer: `{name}` is not a lane-wise opcode it can split")));
            }
            ops.push(op);
        }
        Ok(Scalarizer { ops })
    }
}

pub fn decl() -> PassDecl {
    PassDecl {
        info: INFO,
        options: OPTIONS,
        create: |v| Ok(Box::new(Scalarizer::new(xir::pass::options_from_ron(v)?)?)),
    }
}

impl Pass for Scalarizer {
    fn info(&self) -> &PassInfo {
        &INFO
    }
    fn run(&self, module: &mut Module, _cx: &mut PassContext) -> Result<PassOutcome, PassError> {
        let (mut split, mut lanes) = (0, 0);
        let funcs = crate::memory::util::defined_functions(module);
        for fid in funcs {
            let (s, l) = scalarize_function(module, fid, &self.ops);
            split += s;
            lanes += l;
        }
        let mut out = PassOutcome::changed(split > 0);
        out.stats.push(("split".into(), split.to_string()));
        out.stats.push(("scalar_insts".into(), lanes.to_string()));
        Ok(out)
    }
}

/// The lane count of a vector type.
fn vector_lanes(m: &Module, ty: xir::TypeId) -> Option<u32> {
    match m.types.get(ty) {
        Type::Vector { lanes, .. } => Some(*lanes as u32),
        _ => None,
    }
}

/// Lane `k` of vector operand `v` without an instruction, if possible.
fn lane_direct(m: &mut Module, fid: FuncId, v: Value, k: usize) -> Option<Value> {
    if let Some(c) = v.as_const() {
        let ConstValue::Composite(members) = &m.consts.get(c).value else { return None };
        return members.get(k).map(|&c| Value::Const(c));
    }
    let i = v.as_inst()?;
    let d = m.func(fid).inst(i);
    (d.opcode == Opcode::Aggregate && d.operands.len() == vector_lanes(m, d.ty)? as usize).then(|| d.operands[k])
}

fn scalarize_function(m: &mut Module, fid: FuncId, ops: &[Opcode]) -> (usize, usize) {
    let (mut split, mut lanes_made) = (0, 0);
    let mut made_aggs: FxHashSet<Inst> = FxHashSet::default();
    // Extracts made so far, per block (an earlier one dominates later uses).
    let mut extracts: FxHashMap<(xir::Block, Value, usize), Value> = FxHashMap::default();
    let insts: Vec<Inst> = m.func(fid).all_insts().map(|(_, i)| i).collect();
    for i in insts {
        let f = m.func(fid);
        let d = f.inst(i);
        if !ops.contains(&d.opcode) {
            continue;
        }
        let Some(n) = vector_lanes(m, d.ty) else { continue };
        let operands: Vec<Value> = d.operands.to_vec();
        if operands.iter().any(|v| matches!(v, Value::Undef(_))) {
            continue;
        }
        // Which operands are vectors (a select's condition may be a scalar).
        let is_vec: Vec<bool> = operands.iter().map(|&v| vector_lanes(m, f.value_type(m, v)).is_some()).collect();
        if d.opcode != Opcode::Select && is_vec.iter().any(|x| !x) {
            continue;
        }
        let (opcode, ty, span, md) = (d.opcode, d.ty, f.inst_span(i), f.inst_md(i).to_metadata());
        let elem = m.types.scalar_of(ty);
        let b = f.parent(i).expect("live");
        let mut lane_vals = Vec::with_capacity(n as usize);
        for k in 0..n as usize {
            let mut lane_ops = Vec::with_capacity(operands.len());
            for (&v, &vec) in operands.iter().zip(&is_vec) {
                if !vec {
                    lane_ops.push(v);
                    continue;
                }
                let lv = match lane_direct(m, fid, v, k).or_else(|| extracts.get(&(b, v, k)).copied()) {
                    Some(lv) => lv,
                    None => {
                        let f = m.func(fid);
                        let lane_ty = m.types.scalar_of(f.value_type(m, v));
                        let idx = m.const_u32(k as u32);
                        let mut e = InstData::new(Opcode::Extract, lane_ty);
                        e.operands.extend([v, idx]);
                        e.span = span;
                        let f = m.func_mut(fid);
                        let pos = f.position(i).expect("placed");
                        let x = f.create_inst(e);
                        f.insert_inst(b, pos, x);
                        extracts.insert((b, v, k), Value::Inst(x));
                        Value::Inst(x)
                    }
                };
                lane_ops.push(lv);
            }
            let mut s = InstData::new(opcode, elem);
            s.operands = lane_ops.into_iter().collect();
            s.span = span;
            let f = m.func_mut(fid);
            let pos = f.position(i).expect("placed");
            let x = f.create_inst(s);
            f.insert_inst(b, pos, x);
            lane_vals.push(Value::Inst(x));
            lanes_made += 1;
        }
        let mut a = InstData::new(Opcode::Aggregate, ty);
        a.operands = lane_vals.iter().copied().collect();
        a.span = span;
        a.md = md;
        let f = m.func_mut(fid);
        let pos = f.position(i).expect("placed");
        let agg = f.create_inst(a);
        f.insert_inst(b, pos, agg);
        f.replace_all_uses(Value::Inst(i), Value::Inst(agg));
        f.remove_inst(i);
        made_aggs.insert(agg);
        split += 1;
    }
    forward_lane_extracts(m, fid, &made_aggs);
    // Aggregates whose every user now reads lanes directly are dead.
    let f = m.func_mut(fid);
    let dead: Vec<Inst> = made_aggs.iter().copied().filter(|&a| !f.has_uses(Value::Inst(a))).collect();
    f.remove_insts(&dead);
    (split, lanes_made)
}

/// `extract %agg, k` of an aggregate this pass made becomes lane `k`.
fn forward_lane_extracts(m: &mut Module, fid: FuncId, aggs: &FxHashSet<Inst>) {
    let mut dead = Vec::new();
    for &a in aggs {
        let f = m.func(fid);
        let users: Vec<Inst> = f.uses(Value::Inst(a)).iter().filter(|u| u.index == 0).map(|u| u.user).collect();
        for u in users {
            let f = m.func(fid);
            let d = f.inst(u);
            if d.opcode != Opcode::Extract || d.operands.len() != 2 {
                continue;
            }
            let Some(k) = m.const_int_value(d.operands[1]) else { continue };
            let Some(&lane) = f.inst(a).operands.get(k as usize) else { continue };
            if k < 0 || f.value_type(m, lane) != d.ty {
                continue;
            }
            m.func_mut(fid).replace_all_uses(Value::Inst(u), lane);
            dead.push(u);
        }
    }
    m.func_mut(fid).remove_insts(&dead);
}
