//! `const_fold`: replace pure instructions whose operands are all
//! constants by their value, computed with the interpreter's own arithmetic
//! (`xir::interp::fold_scalar` for scalars, `xir::interp::fold_constant` for
//! vectors, matrices and aggregates: an `aggregate` of constants becomes a
//! constant composite, a vector `add` of two constants the lane-wise sums),
//! so folding never changes a result the interpreter gives. What the interpreter reports as an error (integer
//! division by zero, an op undefined on a type) is left alone, and so are
//! transcendental functions (devices compute them within an error bound,
//! folding would pin the host's value) unless `fold_transcendental` is on.
//! `select` on a constant condition becomes the chosen operand.
//!
//! An `extract` looks through what built its base along constant indices:
//! a constant composite (its member), an `aggregate` (the member operand),
//! an `insert` at the same path (the inserted value), at a path that parts
//! from it at some constant index (the insert's own base), or at a prefix
//! of it (the rest of the path into the inserted value). What is left of
//! the path stays an `extract` of the value found; with nothing left the
//! extract is that value. This is what cleans up after `sroa` rebuilds a
//! whole load of a split slot with `aggregate`.
//!
//! Iterates over each function's blocks until nothing folds, so chains of
//! constants fold completely.
//!
//! - Consumes: `xir` (any dialect).
//! - Produces: the same dialect.
//! - Preserves: `cfg`, `dominators`, `post_dominators`, `loops` (terminators are
//!   never touched).

use serde::Deserialize;
use smallvec::SmallVec;
use xir::pass::{AnalysisKind, OptionDoc, Pass, PassContext, PassDecl, PassError, PassInfo, PassOutcome, Produces};
use xir::{ConstValue, FuncId, Inst, Module, Opcode, Value};
use xir_spec::Trait;

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Options {
    /// Also fold transcendental functions (sin, exp, pow, ...) with the
    /// host's libm.
    pub fold_transcendental: bool,
}

const INFO: PassInfo = PassInfo {
    name: "const_fold",
    doc: "Fold pure instructions on constants (scalars, vectors, aggregates) with the interpreter's exact arithmetic",
    consumes: &["xir"],
    produces: Produces::Same,
    eliminates: &["@pure"],
    preserves: &[AnalysisKind::Cfg, AnalysisKind::Dominators, AnalysisKind::PostDominators, AnalysisKind::Loops],
};

const OPTIONS: &[OptionDoc] = &[OptionDoc {
    name: "fold_transcendental",
    ty: "bool",
    default: "false",
    doc: "Also fold transcendental functions with the host's libm",
}];

pub struct ConstFold {
    opts: Options,
}

pub fn decl() -> PassDecl {
    PassDecl {
        info: INFO,
        options: OPTIONS,
        create: |v| Ok(Box::new(ConstFold { opts: xir::pass::options_from_ron(v)? })),
    }
}

impl Pass for ConstFold {
    fn info(&self) -> &PassInfo {
        &INFO
    }
    fn run(&self, module: &mut Module, _cx: &mut PassContext) -> Result<PassOutcome, PassError> {
        let mut folded = 0;
        let funcs = crate::memory::util::defined_functions(module);
        for fid in funcs {
            folded += fold_function(module, fid, &self.opts);
        }
        let mut out = PassOutcome::changed(folded > 0);
        out.stats.push(("folded".into(), folded.to_string()));
        Ok(out)
    }
}

/// The value `i` folds to, if any.
fn fold_inst(m: &mut Module, fid: FuncId, i: Inst, opts: &Options) -> Option<Value> {
    let f = m.func(fid);
    let d = f.inst(i);
    let spec = xir_spec::spec().op(d.opcode);
    if !spec.has(Trait::Pure) || spec.has(Trait::Convergent) || d.operands.is_empty() || !d.blocks.is_empty() {
        return None;
    }
    if d.opcode == Opcode::Select {
        // A scalar condition picks a whole operand.
        let c = d.operands[0];
        if m.types.is_bool(f.value_type(m, c)) {
            let bits = m.const_bits(c)?;
            return Some(if bits & 1 == 1 { d.operands[1] } else { d.operands[2] });
        }
        return xir::interp::fold_constant(m, fid, i);
    }
    if spec.has(Trait::Transcendental) && !opts.fold_transcendental {
        return None;
    }
    let bits: Option<Vec<u64>> = d.operands.iter().map(|&v| m.const_bits(v)).collect();
    let op_ty = f.value_type(m, d.operands[0]);
    match bits.and_then(|bits| xir::interp::fold_scalar(&m.types, d.opcode, op_ty, d.ty, &bits)) {
        Some(r) => {
            let ty = d.ty;
            Some(m.const_scalar(ty, r))
        }
        // Vectors, matrices and aggregates (an operand or the result): the
        // interpreter's own evaluation, lane by lane.
        None => xir::interp::fold_constant(m, fid, i),
    }
}

/// Where the `extract` `i` reads from once the values its base was built
/// from are looked through: that value and the rest of the path. `None`
/// when nothing is looked through.
fn fold_extract(m: &Module, fid: FuncId, i: Inst) -> Option<(Value, SmallVec<[Value; 3]>)> {
    let f = m.func(fid);
    let ops = &f.inst(i).operands;
    let (mut base, mut path) = (ops[0], &ops[1..]);
    let index = |v: Value| m.const_int_value(v).and_then(|k| usize::try_from(k).ok());
    let mut moved = false;
    while let Some(&first) = path.first() {
        let next = match base {
            Value::Const(c) => match &m.consts.get(c).value {
                ConstValue::Composite(members) => {
                    index(first).and_then(|k| members.get(k)).map(|&c| (Value::Const(c), 1))
                }
                ConstValue::Scalar(_) => None,
            },
            Value::Inst(b) => {
                let d = f.inst(b);
                match d.opcode {
                    Opcode::Aggregate => index(first).and_then(|k| d.operands.get(k)).map(|&v| (v, 1)),
                    Opcode::Insert => through_insert(&d.operands, path, index),
                    _ => None,
                }
            }
            _ => None,
        };
        let Some((v, used)) = next else { break };
        base = v;
        path = &path[used..];
        moved = true;
    }
    moved.then(|| (base, path.iter().copied().collect()))
}

/// An extract along `path` of `insert base, value, ipath...` (`ops`): where
/// it reads and how many indices of `path` that consumes. `None` when an
/// index pair cannot be compared (different dynamic indices) or `path` ends
/// inside the inserted path (the result mixes both).
fn through_insert(ops: &[Value], path: &[Value], index: impl Fn(Value) -> Option<usize>) -> Option<(Value, usize)> {
    let ipath = &ops[2..];
    for (&a, &b) in ipath.iter().zip(path) {
        if a == b {
            continue;
        }
        return match (index(a), index(b)) {
            (Some(x), Some(y)) if x != y => Some((ops[0], 0)),
            _ => None,
        };
    }
    (ipath.len() <= path.len()).then_some((ops[1], ipath.len()))
}

/// Fold every foldable instruction of `fid` until none is left; returns the
/// number folded.
pub fn fold_function(m: &mut Module, fid: FuncId, opts: &Options) -> usize {
    let mut total = 0;
    loop {
        let mut n = 0;
        let insts: Vec<Inst> = m.func(fid).all_insts().map(|(_, i)| i).collect();
        let mut dead = Vec::new();
        for i in insts {
            if m.func(fid).opcode(i) == Opcode::Extract {
                if let Some((base, rest)) = fold_extract(m, fid, i) {
                    if !rest.is_empty() {
                        let mut ops: SmallVec<[Value; 3]> = SmallVec::new();
                        ops.push(base);
                        ops.extend(rest);
                        m.func_mut(fid).set_operands(i, ops);
                        n += 1;
                    } else if super::util::replace_uses_keeping_phis_acyclic(m.func_mut(fid), Value::Inst(i), base) {
                        dead.push(i);
                        n += 1;
                    }
                    continue;
                }
            }
            if let Some(v) = fold_inst(m, fid, i, opts) {
                if super::util::replace_uses_keeping_phis_acyclic(m.func_mut(fid), Value::Inst(i), v) {
                    dead.push(i);
                    n += 1;
                }
            }
        }
        m.func_mut(fid).remove_insts(&dead);
        total += n;
        if n == 0 {
            return total;
        }
    }
}
