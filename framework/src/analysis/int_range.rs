//! Integer ranges: for every scalar integer SSA value of a function, an
//! interval `[lo, hi]` (in its type's signedness) that holds for every value
//! it takes, wherever it is defined. Optimizers read it to drop bounds
//! clamps (`min(i, n - 1)` with `i <= n - 1` already) and to decide
//! comparisons; `cvp` narrows it further with the branch conditions that
//! dominate a use (this analysis reads branch facts only about operands,
//! at the definition: its intervals hold at every use).
//!
//! **How.** A forward fixpoint in reverse post order over the executed CFG
//! (`Cfg`, structured or raw alike). Each instruction's interval comes from
//! its operands' by [`transfer`], exact integer reasoning that never
//! assumes away a wrap: an add, multiply or shift whose exact result could
//! leave the type is the whole type. A Phi is the hull of its incomings;
//! a loop-header Phi that keeps growing is widened to its type's bound on
//! the side that grows. A header Phi that scalar evolution (`scev`) finds
//! to be `{s, +, d}` in a loop with a constant trip count `T` also lies in
//! `[s, s + T * d]` when no value of that sequence wraps (the header runs at
//! most `T + 1` times per entry). Thread indices (`thread_id` lanes) of a
//! kernel lie below its block size. Operands are read under the branch
//! edges that dominate the reading block (`x <= 64` true into a block
//! makes `x >> 1` there at most 32; a Phi's incoming value is read under
//! the facts at the end of its predecessor); those facts are about the
//! operand, so the interval of the result still holds wherever the result
//! is used.
//!
//! Fail closed: what is not modelled is the whole type, and a fixpoint that
//! does not settle within its round budget gives no intervals at all.

use rustc_hash::FxHashMap;

use super::{scev, Cfg, DomTree, LoopForest};
use crate::ir::{Block, Function, FunctionKind, Inst, Module, Opcode, SpecialRegister, Type, TypeId, Value};

/// An inclusive interval `[lo, hi]` of an integer type's values, in its
/// signedness (an unsigned 32-bit value is in `[0, 2^32 - 1]`).
pub type Interval = (i128, i128);

/// Rounds of the fixpoint before it gives up (each visits every block).
const MAX_ROUNDS: usize = 64;

/// Changes of a Phi's interval before it is widened to the type's bounds
/// (enough for a counter doubled up to a bound a few times, or an inner
/// loop's Phi growing with its outer loop's; from round `MAX_ROUNDS / 2`
/// on, a Phi is widened at its next change).
const WIDEN_AFTER: u8 = 8;

/// The interval of a scalar integer type: all its values.
pub fn type_bounds(m: &Module, ty: TypeId) -> Option<Interval> {
    match m.types.get(ty) {
        Type::Int { bits, signed: true } => Some((-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)),
        Type::Int { bits, signed: false } => Some((0, (1i128 << bits) - 1)),
        _ => None,
    }
}

/// Integer intervals of one function's SSA values.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IntRanges {
    /// Instructions whose interval is narrower than their type.
    ranges: FxHashMap<Inst, Interval>,
}

impl IntRanges {
    /// Analyze `f` over its CFG and dominators (loops and their evolution
    /// are found here; an irreducible CFG just has no trip-count bounds).
    pub fn compute(m: &Module, f: &Function, cfg: &Cfg, dom: &DomTree) -> IntRanges {
        let bounds = match LoopForest::compute(cfg, dom) {
            Ok(forest) => induction_bounds(m, f, &forest, &scev::analyze(m, f, cfg, dom, &forest)),
            Err(_) => FxHashMap::default(),
        };
        let facts = EdgeFacts::compute(m, f, cfg, dom);
        fixpoint(m, f, cfg, &bounds, &facts).unwrap_or_default()
    }

    /// The interval of `v`: a constant's value, an analyzed instruction's
    /// interval, else its whole type. `None` for values that are not
    /// scalar integers.
    pub fn get(&self, m: &Module, f: &Function, v: Value) -> Option<Interval> {
        if let Some(c) = m.const_int_value(v) {
            return type_bounds(m, f.value_type(m, v)).map(|_| (c, c));
        }
        let whole = type_bounds(m, f.value_type(m, v))?;
        Some(v.as_inst().and_then(|i| self.ranges.get(&i).copied()).unwrap_or(whole))
    }

    /// How many instructions have an interval narrower than their type.
    pub fn len(&self) -> usize {
        self.ranges.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }
}

/// `[s, s + T * d]` for header Phis that are add recurrences with constant
/// start and step in loops with a constant trip count, where no value of
/// the sequence wraps.
fn induction_bounds(
    m: &Module,
    f: &Function,
    forest: &LoopForest,
    se: &scev::ScalarEvolution,
) -> FxHashMap<Inst, Interval> {
    let mut out = FxHashMap::default();
    for (l, ev) in se.loops.iter().enumerate() {
        debug_assert!(l < forest.loops.len());
        let Some(trips) = ev.trip.as_ref().and_then(|t| t.constant()) else { continue };
        for iv in &ev.ivs {
            let ty = f.inst(iv.phi).ty;
            let (Some((tlo, thi)), Some(s), Some(d)) =
                (type_bounds(m, ty), iv.start.as_const(), iv.step.signed_const())
            else {
                continue;
            };
            let s = crate::ir::sign_extend(s, iv.start.bits, iv.start.signed);
            let Some(end) = (trips as i128).checked_mul(d).and_then(|x| x.checked_add(s)) else { continue };
            // The sequence is monotone: its ends in the type mean no wrap.
            if s >= tlo && s <= thi && end >= tlo && end <= thi {
                out.insert(iv.phi, (s.min(end), s.max(end)));
            }
        }
    }
    out
}

/// Intervals that branch edges establish: a block whose one predecessor
/// ends in a two-way branch on `x <op> c` (a constant) knows an interval of
/// `x`, and so does every block it dominates. An operand read there is
/// narrowed by it: in the block it is the instance the branch tested (a new
/// instance of `x` reaches the block only through the branch again).
struct EdgeFacts<'a> {
    dom: &'a DomTree,
    /// The fact of each block that has one.
    own: FxHashMap<Block, (Value, Interval)>,
    /// Per block id, the nearest block on its dominator chain (itself
    /// included) that has a fact.
    nearest: Vec<Option<Block>>,
}

/// Dominator-chain blocks with facts read per query (more are ignored:
/// less precise, never wrong).
const MAX_FACTS: usize = 32;

impl<'a> EdgeFacts<'a> {
    fn compute(m: &Module, f: &Function, cfg: &Cfg, dom: &'a DomTree) -> EdgeFacts<'a> {
        let mut own = FxHashMap::default();
        let mut nearest = vec![None; f.block_capacity()];
        for &b in &cfg.rpo {
            if let Some(x) = edge_fact(m, f, cfg, b) {
                own.insert(b, x);
            }
            nearest[b.index()] =
                if own.contains_key(&b) { Some(b) } else { dom.idom(b).and_then(|p| nearest[p.index()]) };
        }
        EdgeFacts { dom, own, nearest }
    }

    /// `r` (an interval of `v`) narrowed by the facts in block `b`.
    fn narrow(&self, b: Block, v: Value, mut r: Interval) -> Interval {
        let mut at = self.nearest.get(b.index()).copied().flatten();
        for _ in 0..MAX_FACTS {
            let Some(a) = at else { break };
            if let Some(&(w, (lo, hi))) = self.own.get(&a) {
                if w == v {
                    r = (r.0.max(lo), r.1.min(hi));
                }
            }
            at = self.dom.idom(a).and_then(|p| self.nearest.get(p.index()).copied().flatten());
        }
        r
    }
}

/// The interval the edge into `b` (its only predecessor's two-way branch
/// on an integer compared with a constant) gives the compared value.
fn edge_fact(m: &Module, f: &Function, cfg: &Cfg, b: Block) -> Option<(Value, Interval)> {
    let &[p] = cfg.preds(b) else { return None };
    let d = f.inst(f.terminator(p)?);
    if !matches!(d.opcode, Opcode::CondBr | Opcode::If) || d.blocks.len() < 2 || d.blocks[0] == d.blocks[1] {
        return None;
    }
    let taken = if b == d.blocks[0] {
        true
    } else if b == d.blocks[1] {
        false
    } else {
        return None;
    };
    let c = f.inst(d.operands.first()?.as_inst()?);
    let (x, y) = (*c.operands.first()?, *c.operands.get(1)?);
    // x <op> k, the constant on the right.
    let (x, op, k) = match (m.const_int_value(x), m.const_int_value(y)) {
        (None, Some(k)) => (x, c.opcode, k),
        (Some(k), None) => (y, super::scev::mirror(c.opcode), k),
        _ => return None,
    };
    let (tlo, thi) = type_bounds(m, f.value_type(m, x))?;
    // An instruction's or argument's value (an `undef` may differ between
    // its uses).
    if f.is_lvalue(x) || !matches!(x, Value::Inst(_) | Value::Arg(_)) {
        return None;
    }
    // Integers are totally ordered: a false comparison is its negation.
    let op = if taken { op } else { super::scev::negate(op) };
    let r = match op {
        Opcode::Lt => (tlo, k - 1),
        Opcode::Le => (tlo, k),
        Opcode::Gt => (k + 1, thi),
        Opcode::Ge => (k, thi),
        Opcode::Eq => (k, k),
        _ => return None,
    };
    (r.0 <= r.1).then_some((x, r))
}

/// The fixpoint; `None` when it does not settle.
fn fixpoint(
    m: &Module,
    f: &Function,
    cfg: &Cfg,
    bounds: &FxHashMap<Inst, Interval>,
    facts: &EdgeFacts,
) -> Option<IntRanges> {
    // Every reachable scalar integer instruction gets an entry once visited
    // (its whole type when nothing is known); absent means not yet visited.
    let mut state: FxHashMap<Inst, Interval> = FxHashMap::default();
    let mut changes: FxHashMap<Inst, u8> = FxHashMap::default();
    let whole = |v: Value| type_bounds(m, f.value_type(m, v));
    for round in 0..MAX_ROUNDS {
        let widen_after = if round < MAX_ROUNDS / 2 { WIDEN_AFTER } else { 0 };
        let mut changed = false;
        for &b in &cfg.rpo {
            for &i in f.block(b).insts() {
                let d = f.inst(i);
                let Some((tlo, thi)) = type_bounds(m, d.ty) else { continue };
                let new = if d.opcode == Opcode::Phi {
                    // The hull of the incomings seen so far.
                    let mut hull: Option<Interval> = None;
                    for (k, &v) in d.operands.iter().enumerate() {
                        if d.blocks.get(k).is_none_or(|&p| !cfg.is_reachable(p)) {
                            continue;
                        }
                        let r = match v.as_inst() {
                            // What flows in along the edge: the facts at
                            // the predecessor's end hold of it.
                            Some(j) => match state.get(&j) {
                                Some(&r) => facts.narrow(d.blocks[k], v, r),
                                None => continue, // not visited yet (a back edge)
                            },
                            None => m.const_int_value(v).map(|c| (c, c)).or_else(|| whole(v)).unwrap_or((tlo, thi)),
                        };
                        hull = Some(hull.map_or(r, |(a, b)| (a.min(r.0), b.max(r.1))));
                    }
                    let Some(mut r) = hull else { continue };
                    if let Some(old) = state.get(&i).copied() {
                        // Never shrink between rounds; widen what keeps growing.
                        r = (r.0.min(old.0), r.1.max(old.1));
                        if r != old {
                            let n = changes.entry(i).or_default();
                            *n += 1;
                            if *n > widen_after {
                                r = (if r.0 < old.0 { tlo } else { r.0 }, if r.1 > old.1 { thi } else { r.1 });
                            }
                        }
                    }
                    match bounds.get(&i) {
                        Some(&(a, b)) => (r.0.max(a), r.1.min(b)),
                        None => r,
                    }
                } else {
                    let mut get = |v: Value| match v.as_inst() {
                        Some(j) => state.get(&j).map(|&r| facts.narrow(b, v, r)),
                        None => whole(v).map(|r| facts.narrow(b, v, r)),
                    };
                    transfer(m, f, i, &mut get).unwrap_or((tlo, thi))
                };
                if state.insert(i, new) != Some(new) {
                    changed = true;
                }
            }
        }
        if !changed {
            let ranges =
                state.into_iter().filter(|&(i, r)| type_bounds(m, f.inst(i).ty).is_some_and(|w| w != r)).collect();
            return Some(IntRanges { ranges });
        }
    }
    None
}

/// The interval of instruction `i`'s result from its operands' intervals
/// (`range`: `None` for an operand means its whole type; constants are read
/// here). `None` when the opcode is not modelled or the result could wrap:
/// the caller takes the whole type. Phis are not handled here (the caller
/// owns the cycle).
pub fn transfer(
    m: &Module,
    f: &Function,
    i: Inst,
    range: &mut dyn FnMut(Value) -> Option<Interval>,
) -> Option<Interval> {
    let d = f.inst(i);
    let ty = d.ty;
    let (tlo, thi) = type_bounds(m, ty)?;
    let bits = m.types.scalar_bits(ty);
    let fits = |lo: i128, hi: i128| (lo <= hi && lo >= tlo && hi <= thi).then_some((lo, hi));
    // An operand's interval: a constant, what `range` says, else its type.
    let mut r = |k: usize| -> Option<Interval> {
        let v = *d.operands.get(k)?;
        let vt = f.value_type(m, v);
        let whole = type_bounds(m, vt)?;
        let x = match m.const_int_value(v) {
            Some(c) => (c, c),
            None => range(v).unwrap_or(whole),
        };
        // An empty interval (code that cannot run) teaches nothing.
        (x.0 <= x.1).then_some(x)
    };
    let konst = |k: usize| d.operands.get(k).and_then(|&v| m.const_int_value(v));
    match d.opcode {
        Opcode::Add => {
            let ((a, b), (c, e)) = (r(0)?, r(1)?);
            fits(a + c, b + e)
        }
        Opcode::Sub => {
            let ((a, b), (c, e)) = (r(0)?, r(1)?);
            fits(a - e, b - c)
        }
        Opcode::Mul => {
            let ((a, b), (c, e)) = (r(0)?, r(1)?);
            let p = [a.checked_mul(c)?, a.checked_mul(e)?, b.checked_mul(c)?, b.checked_mul(e)?];
            fits(*p.iter().min()?, *p.iter().max()?)
        }
        Opcode::Neg => {
            let (a, b) = r(0)?;
            fits(-b, -a)
        }
        Opcode::Abs if tlo < 0 => {
            let (a, b) = r(0)?;
            if a >= 0 {
                Some((a, b))
            } else if b <= 0 {
                fits(-b, -a)
            } else {
                fits(0, (-a).max(b))
            }
        }
        Opcode::Min | Opcode::Max => {
            let ((a, b), (c, e)) = (r(0)?, r(1)?);
            Some(if d.opcode == Opcode::Min { (a.min(c), b.min(e)) } else { (a.max(c), b.max(e)) })
        }
        Opcode::Clamp => {
            // clamp(x, lo, hi) = min(max(x, lo), hi).
            let ((a, b), (c, e), (g, h)) = (r(0)?, r(1)?, r(2)?);
            let (a, b) = (a.max(c), b.max(e));
            Some((a.min(g), b.min(h)))
        }
        Opcode::Select if m.types.is_scalar(ty) => {
            let ((a, b), (c, e)) = (r(1)?, r(2)?);
            Some((a.min(c), b.max(e)))
        }
        Opcode::BitAnd => {
            // With a non-negative operand x the result's bits are a subset
            // of x's (and its sign bit clear): 0 <= result <= x.
            let ((a, b), (c, e)) = (r(0)?, r(1)?);
            match (a >= 0, c >= 0) {
                (true, true) => Some((0, b.min(e))),
                (true, false) => Some((0, b)),
                (false, true) => Some((0, e)),
                (false, false) => None,
            }
        }
        Opcode::BitOr | Opcode::BitXor => {
            // Non-negative operands below 2^k give a result below 2^k.
            let ((a, b), (c, e)) = (r(0)?, r(1)?);
            if a < 0 || c < 0 {
                return None;
            }
            let top = ones_above(b.max(e));
            if d.opcode == Opcode::BitOr {
                fits(a.max(c), top)
            } else {
                fits(0, top)
            }
        }
        Opcode::Shl => {
            // The amount is taken modulo the width.
            let s = konst(1)?.rem_euclid(bits as i128) as u32;
            let (a, b) = r(0)?;
            let k = 1i128.checked_shl(s)?;
            fits(a.checked_mul(k)?, b.checked_mul(k)?)
        }
        Opcode::Shr => {
            // Logical for unsigned, arithmetic for signed: both are floor
            // division by 2^s, monotone.
            let (a, b) = r(0)?;
            match konst(1) {
                Some(s) => {
                    let s = s.rem_euclid(bits as i128) as u32;
                    Some((a >> s, b >> s))
                }
                None => (a >= 0).then_some((0, b)),
            }
        }
        Opcode::Div => {
            // Truncating division by a positive divisor is monotone in the
            // dividend; a divisor that may be zero or negative is not read.
            let ((a, b), (c, e)) = (r(0)?, r(1)?);
            if c < 1 {
                return None;
            }
            let lo = if a >= 0 { a / e } else { a / c };
            let hi = if b >= 0 { b / c } else { b / e };
            fits(lo, hi)
        }
        Opcode::Mod => {
            // Remainder with the dividend's sign, below the divisor.
            let ((a, b), (c, e)) = (r(0)?, r(1)?);
            if c < 1 {
                return None;
            }
            if a >= 0 {
                Some((0, b.min(e - 1)))
            } else if b <= 0 {
                Some((a.max(-(e - 1)), 0))
            } else {
                fits(-(e - 1), e - 1)
            }
        }
        Opcode::Clz | Opcode::Ctz | Opcode::Popcount => {
            let src = f.value_type(m, *d.operands.first()?);
            fits(0, m.types.scalar_bits(src) as i128)
        }
        Opcode::CastStatic | Opcode::CastBitwise => {
            // An integer source whose values all fit the target keeps them;
            // a bool becomes 0 or 1. Floats are not read.
            let src = f.value_type(m, *d.operands.first()?);
            if m.types.is_bool(src) && d.opcode == Opcode::CastStatic {
                return Some((0, 1));
            }
            if d.opcode == Opcode::CastBitwise && m.types.scalar_bits(src) != bits {
                return None;
            }
            type_bounds(m, src)?;
            let (a, b) = r(0)?;
            fits(a, b)
        }
        Opcode::Extract => {
            // A lane of the thread index lies below the kernel's block size.
            let (Some(&Value::Reg(SpecialRegister::ThreadId)), Some(lane), FunctionKind::Kernel { block_size, .. }) =
                (d.operands.first(), konst(1), f.kind)
            else {
                return None;
            };
            let n = *block_size.get(usize::try_from(lane).ok()?)?;
            (d.operands.len() == 2 && n >= 1).then(|| fits(0, n as i128 - 1)).flatten()
        }
        _ => None,
    }
}

/// The smallest `2^k - 1` that is at least `x` (`x >= 0`).
fn ones_above(x: i128) -> i128 {
    let mut top = 0i128;
    while top < x {
        top = top * 2 + 1;
    }
    top
}
