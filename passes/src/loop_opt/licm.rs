//! `licm`: loop-invariant code motion. In every natural loop that has a
//! dedicated preheader (its only predecessor from outside, with the header
//! as its only successor: the block ending in `loop` / `simple_loop` in
//! structured form, the `br` into the header in raw form), instructions
//! whose operands are all defined outside the loop are moved to the end of
//! the preheader, innermost loops first so that code climbs a whole nest.
//!
//! Only pure, non-convergent instructions that cannot trap are hoisted
//! anywhere in the loop (hoisting speculates them on paths that did not run
//! them). Loads, allocas, calls and every instruction with effects stay.
//! Instructions that may trap (integer `div`/`mod` without a constant
//! non-zero divisor, `-1` excluded for signed types; `extract` / `insert`
//! / `shuffle` without constant in-range indices; `gep` with an index
//! that may be negative; bindless and address queries; arithmetic on FP8;
//! any operation reading an operand that may be undefined, which the
//! reference interpreter rejects) are hoisted only from the header, when nothing
//! but pure instructions runs before them there: the header runs whenever
//! the preheader does, so they trap exactly when they did before.
//!
//! The pass never changes the CFG and never needs a preheader it does not
//! find (it does not create one), so it runs in every dialect.
//!
//! - Consumes: `xir` (any dialect).
//! - Produces: the same dialect.
//! - Preserves: `cfg`, `dominators`, `post_dominators`,
//!   `dominance_frontiers`, `loops`.

use xir::analysis::{Cfg, LoopForest, LoopId};
use xir::pass::{AnalysisKind, Pass, PassContext, PassDecl, PassError, PassInfo, PassOutcome, Produces};
use xir::{
    sign_extend, Block, ConstTable, ConstValue, FloatFormat, Function, Inst, InstCore, Module, Opcode, Trait, Type,
    TypeId, TypeTable, Value,
};

const INFO: PassInfo = PassInfo {
    name: "licm",
    doc: "Hoist loop-invariant, side-effect-free, non-trapping instructions to the loop preheader",
    consumes: &["xir"],
    produces: Produces::Same,
    preserves: &[
        AnalysisKind::Cfg,
        AnalysisKind::Dominators,
        AnalysisKind::PostDominators,
        AnalysisKind::DominanceFrontiers,
        AnalysisKind::Loops,
    ],
    eliminates: &[],
};

#[derive(Default)]
pub struct Licm;

pub fn decl() -> PassDecl {
    PassDecl::without_options::<Licm>(INFO)
}

impl Pass for Licm {
    fn info(&self) -> &PassInfo {
        &INFO
    }
    fn run(&self, module: &mut Module, cx: &mut PassContext) -> Result<PassOutcome, PassError> {
        let mut hoisted = 0;
        let mut no_preheader = 0;
        let funcs: Vec<_> = crate::memory::util::defined_functions(module);
        for fid in funcs {
            let cfg = cx.analyses.cfg(module, fid);
            let dom = cx.analyses.dominators(module, fid);
            let Ok(forest) = LoopForest::compute(&cfg, &dom) else { continue };
            let (types, consts, f) = split(module, fid);
            let (h, n) = licm_function(types, consts, f, &cfg, &forest);
            hoisted += h;
            no_preheader += n;
        }
        let mut out = PassOutcome::changed(hoisted > 0);
        out.stats.push(("hoisted".into(), hoisted.to_string()));
        out.stats.push(("loops_without_preheader".into(), no_preheader.to_string()));
        Ok(out)
    }
}

fn split(m: &mut Module, fid: xir::FuncId) -> (&TypeTable, &ConstTable, &mut Function) {
    let Module { types, consts, functions } = m;
    (types, consts, &mut functions[fid.index()])
}

/// Hoist in every loop of `f`; returns (instructions hoisted, loops skipped
/// for want of a dedicated preheader).
pub fn licm_function(
    types: &TypeTable,
    consts: &ConstTable,
    f: &mut Function,
    cfg: &Cfg,
    forest: &LoopForest,
) -> (usize, usize) {
    let mut order: Vec<LoopId> = (0..forest.loops.len()).collect();
    order.sort_by_key(|&l| std::cmp::Reverse(forest.loops[l].depth));
    let (mut hoisted, mut skipped) = (0, 0);
    let undef = MaybeUndef::compute(f);
    // Hoisting moves instructions, never blocks: the block lists stay.
    let loop_blocks = forest.blocks_in_rpo(cfg);
    for l in order {
        let Some(pre) = preheader(cfg, forest, l) else {
            skipped += 1;
            continue;
        };
        let header = forest.loops[l].header;
        let blocks = &loop_blocks[l];
        // Every record of the block is read.
        let mut walk = f.walk(blocks, xir::reads::BlockInsts);
        while let Some(b) = walk.next(f) {
            let mut effects_before = false;
            for i in f.block(b).insts().to_vec() {
                let d = f.inst(i);
                let invariant = d.operands.iter().all(|&v| match v {
                    Value::Inst(def) => f.parent(def).is_some_and(|p| !forest.contains(l, p)),
                    Value::Func(_) => false,
                    _ => true,
                });
                let ok = invariant
                    && speculatable(d)
                    && (!may_trap(types, consts, f, &undef, d) || (b == header && !effects_before));
                if ok {
                    let pos = f.block(pre).insts().len().saturating_sub(1);
                    f.move_inst(i, pre, pos);
                    hoisted += 1;
                } else if d.opcode != Opcode::Phi && !d.has(Trait::Pure) {
                    effects_before = true;
                }
            }
        }
    }
    (hoisted, skipped)
}

/// The dedicated preheader of loop `l`, if it has one.
pub fn preheader(cfg: &Cfg, forest: &LoopForest, l: LoopId) -> Option<Block> {
    let h = forest.loops[l].header;
    let outside: Vec<Block> = cfg.preds(h).iter().copied().filter(|&p| !forest.contains(l, p)).collect();
    match outside.as_slice() {
        [p] if cfg.is_reachable(*p) && cfg.succs(*p).len() == 1 => Some(*p),
        _ => None,
    }
}

/// Pure, with a result, no memory access, no convergence constraint.
fn speculatable(d: &InstCore) -> bool {
    d.opcode != Opcode::Phi
        && d.has(Trait::Pure)
        && !d.is_terminator()
        && !d.has(Trait::Convergent)
        && !d.has(Trait::MemoryRead)
        && !d.has(Trait::SideEffect)
        && !d.has(Trait::Alloca)
        && !d.has(Trait::Call)
        && d.ty != xir::TypeTable::VOID
}

/// Whether evaluating `d` may fail: the interpreter's errors for pure
/// operations (division by zero, an index out of range or negative) and
/// the use of an undefined value by an operation that reads its operands.
pub fn may_trap(types: &TypeTable, consts: &ConstTable, f: &Function, undef: &MaybeUndef, d: &InstCore) -> bool {
    let ty_of = |v: Value| -> Option<TypeId> {
        match v {
            Value::Inst(i) => Some(f.inst(i).ty),
            Value::Arg(a) => f.args.get(a as usize).map(|x| x.ty),
            Value::Const(c) => Some(consts.get(c).ty),
            Value::Undef(t) => Some(t),
            _ => None,
        }
    };
    let int_const = |v: Value| -> Option<i128> {
        let cd = consts.get(v.as_const()?);
        let ConstValue::Scalar(bits) = cd.value else { return None };
        match types.get(cd.ty) {
            Type::Int { bits: w, signed } => Some(sign_extend(bits, *w as u32, *signed)),
            _ => None,
        }
    };
    // Resource queries beyond the plain sizes check their slot or stride.
    if d.has(Trait::Resource) && !matches!(d.opcode, Opcode::BufferSize | Opcode::ByteBufferSize | Opcode::TextureSize)
    {
        return true;
    }
    // FP8 values only move and convert; arithmetic on them fails.
    let fp8 = |t: TypeId| matches!(types.get(types.scalar_of(t)), Type::Float(FloatFormat::E4M3 | FloatFormat::E5M2));
    if d.has(Trait::Arithmetic) && (fp8(d.ty) || d.operands.iter().filter_map(|&v| ty_of(v)).any(fp8)) {
        return true;
    }
    let moves_values = matches!(d.opcode, Opcode::Select | Opcode::Extract | Opcode::Insert | Opcode::Shuffle);
    if !moves_values && d.operands.iter().any(|&v| undef.contains(v)) {
        return true;
    }
    if moves_values && d.operands.first().is_some_and(|&c| d.opcode == Opcode::Select && undef.contains(c)) {
        return true;
    }
    let in_range = |v: Value, len: u64| int_const(v).is_some_and(|k| k >= 0 && (k as u64) < len);
    match d.opcode {
        Opcode::Div | Opcode::Mod => match types.get(d.ty) {
            Type::Int { signed, .. } => match d.operands.get(1).and_then(|&v| int_const(v)) {
                None | Some(0) => true,
                Some(-1) => *signed,
                Some(_) => false,
            },
            Type::Vector { elem, .. } => types.is_int(*elem),
            _ => false,
        },
        Opcode::Extract | Opcode::Insert => {
            let first = if d.opcode == Opcode::Extract { 1 } else { 2 };
            let mut ty = match d.operands.first().and_then(|&v| ty_of(v)) {
                Some(t) => t,
                None => return true,
            };
            for &ix in d.operands.get(first..).unwrap_or(&[]) {
                let next = match types.get(ty) {
                    Type::Vector { elem, lanes } => in_range(ix, *lanes as u64).then_some(*elem),
                    Type::Matrix { elem, dim } => {
                        let col = types.lookup(&Type::Vector { elem: *elem, lanes: *dim });
                        col.filter(|_| in_range(ix, *dim as u64))
                    }
                    Type::Array { elem, len } => in_range(ix, *len).then_some(*elem),
                    Type::Struct { fields, .. } => {
                        int_const(ix).and_then(|k| usize::try_from(k).ok()).and_then(|k| fields.get(k).copied())
                    }
                    _ => None,
                };
                match next {
                    Some(t) => ty = t,
                    None => return true,
                }
            }
            false
        }
        Opcode::Shuffle => {
            let lanes = d.operands.first().and_then(|&v| ty_of(v)).map_or(0, |t| types.lanes(t) as u64);
            !d.operands.iter().skip(1).all(|&v| in_range(v, lanes))
        }
        Opcode::Gep => d.operands.iter().skip(1).any(|&v| match int_const(v) {
            Some(k) => k < 0,
            None => ty_of(v).is_none_or(|t| !matches!(types.get(t), Type::Int { signed: false, .. })),
        }),
        _ => false,
    }
}

/// Values of one function that may be undefined at run time. Results of
/// operations that fail on undefined operands are defined whenever they
/// exist; Phis and selections are undefined only through an operand (a
/// fixed point over the function); aggregate moves, loads and calls may
/// carry undefined parts.
pub struct MaybeUndef(Vec<bool>);

impl MaybeUndef {
    /// The least fixed point, by a worklist over the use lists (each
    /// instruction enters the set once; only Phis and selections depend on
    /// their operands). Opcodes come from the dense table and the set is a
    /// flag per instruction id: most instructions are in it, and the
    /// records of the others are read only for Phis and selections.
    pub fn compute(f: &Function) -> MaybeUndef {
        let mut set = vec![false; f.inst_capacity()];
        let mut work: Vec<Inst> = Vec::new();
        let in_layout = f.owned_flags();
        let spec = xir_spec::spec();
        for (_, i) in f.all_insts() {
            let op = f.opcode(i);
            let undef = match op {
                Opcode::Phi => f.inst(i).operands.iter().any(|v| matches!(v, Value::Undef(_))),
                Opcode::Select => f.inst(i).operands.iter().skip(1).any(|v| matches!(v, Value::Undef(_))),
                Opcode::Extract | Opcode::Insert | Opcode::Shuffle => true,
                _ => !(spec.op(op).has(Trait::Arithmetic) || op == Opcode::CastStatic),
            };
            if undef && !std::mem::replace(&mut set[i.index()], true) {
                work.push(i);
            }
        }
        while let Some(i) = work.pop() {
            for u in f.uses(Value::Inst(i)) {
                let through = match f.opcode(u.user) {
                    Opcode::Phi => true,
                    Opcode::Select => u.index >= 1,
                    _ => false,
                };
                if through
                    && f.parent(u.user).is_some_and(|b| in_layout[b.index()])
                    && !std::mem::replace(&mut set[u.user.index()], true)
                {
                    work.push(u.user);
                }
            }
        }
        MaybeUndef(set)
    }

    pub fn contains(&self, v: Value) -> bool {
        match v {
            Value::Undef(_) => true,
            Value::Inst(i) => self.0.get(i.index()).copied().unwrap_or(false),
            _ => false,
        }
    }
}
