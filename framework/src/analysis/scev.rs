//! Scalar evolution: closed forms of integer values inside natural loops.
//!
//! **IR form.** The analysis reads SSA Phis at natural-loop headers over the
//! *executed* CFG (`Function::successors`), so it works unchanged on raw CFG
//! (`xir.raw` after `mem2reg`) and on structured SSA (`xir.restructured.ssa`
//! and later): a structured `loop` is a natural loop whose header is its
//! `prepare` block and whose latch is its `update` block. It needs SSA: in a
//! Phi-free dialect induction values live in memory and nothing is found.
//! The loop passes built on it keep this split: `licm` and `indvar_simplify`
//! never change the CFG and run in any dialect; `loop_rotation` adds blocks
//! and therefore declares that it needs raw CFG.
//!
//! **What it recognises**, per loop `L` and for scalar integer values
//! (all arithmetic modulo 2^width, exactly like XIR's wrapping integers):
//! - *invariants*: constants, arguments, registers and values defined outside
//!   `L` are atoms; `Lin` is a linear combination of atoms with constant
//!   coefficients (`add`, `sub`, `neg`, `mul` or `shl` by a constant);
//! - *add recurrences* `{start,+,step}<L>`: a header Phi with one incoming
//!   value from outside `L` (`start`) and one from the single latch that
//!   equals the Phi plus a loop-invariant `step`; any affine combination of
//!   such Phis is an add recurrence too (its value in iteration `k`, counting
//!   from 0, is `start + k * step`);
//! - *trip counts*: when `L` has exactly one exiting edge, leaving from a
//!   block that runs once per iteration, on `cmp(rec, invariant)`, the number
//!   of back edges taken before the exit (`TripCount`), exact under
//!   wrap-around. The count is only claimed where it is exact: a unit step
//!   for `lt`/`le`/`gt`/`ge`, any odd constant step for `ne` (by the modular
//!   inverse), and any constant step when every term is a constant and the
//!   recurrence provably does not wrap.
//!
//! Everything else is `Scev::Unknown`. `analyze` is a plain function of the
//! function and its loop forest; `db::scalar_evolution` memoizes it.

use rustc_hash::FxHashMap;

use super::{Cfg, DomTree, LoopForest, LoopId};
use crate::ir::{reads, Block, Function, Inst, Module, Opcode, Type, TypeId, Value};

/// A linear combination of loop-invariant atoms, modulo `2^bits`:
/// `konst + sum(coef * atom)`. Terms are sorted by atom, coefficients
/// non-zero and reduced to `bits`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Lin {
    pub ty: TypeId,
    pub bits: u32,
    pub signed: bool,
    pub konst: u64,
    pub terms: Vec<(Value, u64)>,
}

impl Lin {
    pub fn constant(ty: TypeId, bits: u32, signed: bool, k: u64) -> Lin {
        Lin { ty, bits, signed, konst: k & mask(bits), terms: Vec::new() }
    }
    pub fn atom(ty: TypeId, bits: u32, signed: bool, v: Value) -> Lin {
        Lin { ty, bits, signed, konst: 0, terms: vec![(v, 1)] }
    }
    pub fn is_const(&self) -> bool {
        self.terms.is_empty()
    }
    pub fn as_const(&self) -> Option<u64> {
        self.is_const().then_some(self.konst)
    }
    /// The constant as a signed integer of the width.
    pub fn signed_const(&self) -> Option<i128> {
        self.as_const().map(|k| sext(k, self.bits))
    }
    pub fn is_zero(&self) -> bool {
        self.is_const() && self.konst == 0
    }
    pub fn add(&self, o: &Lin) -> Lin {
        let m = mask(self.bits);
        let mut terms = self.terms.clone();
        for &(v, c) in &o.terms {
            match terms.binary_search_by(|t| t.0.cmp(&v)) {
                Ok(p) => terms[p].1 = terms[p].1.wrapping_add(c) & m,
                Err(p) => terms.insert(p, (v, c)),
            }
        }
        terms.retain(|t| t.1 != 0);
        Lin { konst: self.konst.wrapping_add(o.konst) & m, terms, ..self.clone() }
    }
    pub fn scale(&self, c: u64) -> Lin {
        let m = mask(self.bits);
        let mut terms: Vec<(Value, u64)> = self.terms.iter().map(|&(v, k)| (v, k.wrapping_mul(c) & m)).collect();
        terms.retain(|t| t.1 != 0);
        Lin { konst: self.konst.wrapping_mul(c) & m, terms, ..self.clone() }
    }
    pub fn neg(&self) -> Lin {
        self.scale(mask(self.bits))
    }
    pub fn sub(&self, o: &Lin) -> Lin {
        self.add(&o.neg())
    }
    /// Coefficient of atom `v`.
    pub fn coef(&self, v: Value) -> u64 {
        self.terms.iter().find(|t| t.0 == v).map_or(0, |t| t.1)
    }
    /// `self` with the term of `v` removed.
    pub fn without(&self, v: Value) -> Lin {
        Lin { terms: self.terms.iter().copied().filter(|t| t.0 != v).collect(), ..self.clone() }
    }
}

/// The evolution of one value with respect to one loop.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Scev {
    /// The same in every iteration.
    Invariant(Lin),
    /// `start + k * step` in iteration `k` (counting from 0).
    AddRec {
        start: Lin,
        step: Lin,
    },
    Unknown,
}

/// A header Phi that is an add recurrence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InductionVar {
    pub phi: Inst,
    pub start: Lin,
    pub step: Lin,
    /// The value the Phi receives from the latch (`phi + step`).
    pub next: Value,
}

/// `if lhs <op> rhs { count } else { 0 }` (signedness from the type).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Guard {
    pub op: Opcode,
    pub lhs: Lin,
    pub rhs: Lin,
}

/// Back edges taken before the loop leaves through `exiting -> exit`: the
/// loop body (from the header) runs `count + 1` times up to the exiting
/// block in the last iteration. Exact whenever the loop exits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TripCount {
    pub exiting: Block,
    pub exit: Block,
    pub count: Lin,
    /// When present the count is `count` if the guard holds, else 0.
    pub guard: Option<Guard>,
}

impl TripCount {
    /// The count when it is a compile-time constant.
    pub fn constant(&self) -> Option<u64> {
        match &self.guard {
            None => self.count.as_const(),
            Some(g) => {
                let (a, b) = (g.lhs.as_const()?, g.rhs.as_const()?);
                if compare(g.op, a, b, g.lhs.bits, g.lhs.signed)? {
                    self.count.as_const()
                } else {
                    Some(0)
                }
            }
        }
    }
}

/// Scalar-evolution facts of one loop.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoopEvolution {
    pub header: Block,
    /// The unique predecessor outside the loop, when it has the header as
    /// its only successor (where hoisted code and start values can go).
    pub preheader: Option<Block>,
    /// The single latch, if there is exactly one.
    pub latch: Option<Block>,
    /// Exit edges `(inside, outside)`, in RPO order of the inside block.
    pub exits: Vec<(Block, Block)>,
    pub ivs: Vec<InductionVar>,
    pub trip: Option<TripCount>,
    values: FxHashMap<Value, Scev>,
}

impl LoopEvolution {
    /// The evolution of `v` in this loop: values defined outside it are
    /// invariant atoms, values inside it as classified.
    pub fn get(&self, m: &Module, f: &Function, forest: &LoopForest, l: LoopId, v: Value) -> Scev {
        if let Some(s) = self.values.get(&v) {
            return s.clone();
        }
        if let Value::Inst(i) = v {
            if f.parent(i).is_some_and(|b| forest.contains(l, b)) {
                return Scev::Unknown;
            }
        }
        match outside(m, f, v) {
            Some(lin) => Scev::Invariant(lin),
            None => Scev::Unknown,
        }
    }
}

/// Scalar evolution of every loop of one function (indexed like
/// `LoopForest::loops`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScalarEvolution {
    pub loops: Vec<LoopEvolution>,
}

/// Analyze every loop of `f`.
pub fn analyze(m: &Module, f: &Function, cfg: &Cfg, dom: &DomTree, forest: &LoopForest) -> ScalarEvolution {
    let blocks = forest.blocks_in_rpo(cfg);
    let loops = (0..forest.loops.len()).map(|l| analyze_loop(m, f, cfg, dom, forest, l, &blocks[l])).collect();
    ScalarEvolution { loops }
}

/// The evolution of loop `l` alone, as `analyze(..).loops[l]` computes it;
/// `body` is the loop's blocks in reverse post order
/// (`LoopForest::blocks_in_rpo(cfg)[l]`). For passes that rewrite one loop
/// at a time and re-analyze only it.
pub fn analyze_one(
    m: &Module,
    f: &Function,
    cfg: &Cfg,
    dom: &DomTree,
    forest: &LoopForest,
    l: LoopId,
    body: &[Block],
) -> LoopEvolution {
    analyze_loop(m, f, cfg, dom, forest, l, body)
}

/// `analyze` computing the CFG, dominators and loops itself; `None` when
/// the CFG is irreducible.
pub fn analyze_function(m: &Module, f: &Function) -> Option<(LoopForest, ScalarEvolution)> {
    let cfg = Cfg::compute(f);
    let dom = DomTree::from_cfg(&cfg);
    let forest = LoopForest::compute(&cfg, &dom).ok()?;
    let se = analyze(m, f, &cfg, &dom, &forest);
    Some((forest, se))
}

fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

fn sext(v: u64, bits: u32) -> i128 {
    crate::ir::sign_extend(v, bits, true)
}

/// `(bits, signed)` of a scalar integer type.
pub fn int_type(m: &Module, ty: TypeId) -> Option<(u32, bool)> {
    match m.types.get(ty) {
        Type::Int { bits, signed } => Some((*bits as u32, *signed)),
        _ => None,
    }
}

/// A value usable as an atom from outside a loop.
fn outside(m: &Module, f: &Function, v: Value) -> Option<Lin> {
    let ty = f.value_type(m, v);
    let (bits, signed) = int_type(m, ty)?;
    match v {
        Value::Const(_) => Some(Lin::constant(ty, bits, signed, m.const_bits(v)?)),
        Value::Inst(_) | Value::Arg(_) | Value::Reg(_) => Some(Lin::atom(ty, bits, signed, v)),
        Value::Undef(_) | Value::Func(_) => None,
    }
}

/// Compare two values of a width, as the comparison opcode does.
pub fn compare(op: Opcode, a: u64, b: u64, bits: u32, signed: bool) -> Option<bool> {
    let (x, y) =
        if signed { (sext(a, bits), sext(b, bits)) } else { ((a & mask(bits)) as i128, (b & mask(bits)) as i128) };
    Some(match op {
        Opcode::Lt => x < y,
        Opcode::Le => x <= y,
        Opcode::Gt => x > y,
        Opcode::Ge => x >= y,
        Opcode::Eq => x == y,
        Opcode::Ne => x != y,
        _ => return None,
    })
}

fn analyze_loop(
    m: &Module,
    f: &Function,
    cfg: &Cfg,
    dom: &DomTree,
    forest: &LoopForest,
    l: LoopId,
    body: &[Block],
) -> LoopEvolution {
    let data = &forest.loops[l];
    let header = data.header;
    let outside_preds: Vec<Block> =
        cfg.preds(header).iter().copied().filter(|&p| cfg.is_reachable(p) && !forest.contains(l, p)).collect();
    let preheader = match outside_preds.as_slice() {
        [p] if cfg.succs(*p).len() == 1 => Some(*p),
        _ => None,
    };
    let latch = match data.latches.as_slice() {
        [x] => Some(*x),
        _ => None,
    };
    let mut exits = Vec::new();
    for &b in body {
        for &s in cfg.succs(b) {
            if !forest.contains(l, s) {
                exits.push((b, s));
            }
        }
    }
    // Phase 1: every loop value as a Lin over atoms, header Phis included.
    let header_phis: Vec<Inst> =
        f.block(header).insts().iter().copied().filter(|&i| f.opcode(i) == Opcode::Phi).collect();
    let mut sym: FxHashMap<Value, Lin> = FxHashMap::default();
    let in_loop = |v: Value| match v {
        Value::Inst(i) => f.parent(i).is_some_and(|b| forest.contains(l, b)),
        _ => false,
    };
    for &p in &header_phis {
        let ty = f.inst(p).ty;
        if let Some((bits, signed)) = int_type(m, ty) {
            sym.insert(Value::Inst(p), Lin::atom(ty, bits, signed, Value::Inst(p)));
        }
    }
    // Every instruction record of the body is read (its type first).
    let mut walk = f.walk(body, reads::BlockInsts);
    while let Some(b) = walk.next(f) {
        for &i in f.block(b).insts() {
            if let Some(lin) = eval(m, f, i, &sym, &in_loop) {
                sym.insert(Value::Inst(i), lin);
            }
        }
    }
    // Recurrences among the header Phis.
    let mut ivs = Vec::new();
    if let (Some(latch), true) = (latch, outside_preds.len() == 1) {
        for &p in &header_phis {
            let d = f.inst(p);
            if d.operands.len() != 2 || !sym.contains_key(&Value::Inst(p)) {
                continue;
            }
            let (Some(ki), Some(kl)) =
                (d.blocks.iter().position(|&b| b == outside_preds[0]), d.blocks.iter().position(|&b| b == latch))
            else {
                continue;
            };
            let (init, next) = (d.operands[ki], d.operands[kl]);
            if in_loop(init) {
                continue;
            }
            let Some(start) = outside(m, f, init) else { continue };
            let next_lin = if in_loop(next) { sym.get(&next).cloned() } else { outside(m, f, next) };
            let Some(next_lin) = next_lin else { continue };
            let me = Value::Inst(p);
            let step = next_lin.without(me);
            let depends_on_phi = step.terms.iter().any(|t| header_phis.iter().any(|&h| Value::Inst(h) == t.0));
            if next_lin.coef(me) == 1 && !depends_on_phi && !step.is_zero() && start.ty == step.ty {
                ivs.push(InductionVar { phi: p, start, step, next });
            }
        }
    }
    // Phase 2: substitute the recurrences for the Phi atoms.
    let mut values: FxHashMap<Value, Scev> = FxHashMap::default();
    for (v, lin) in &sym {
        values.insert(*v, resolve(lin, &ivs, &header_phis));
    }
    let mut ev = LoopEvolution { header, preheader, latch, exits, ivs, trip: None, values };
    ev.trip = trip_count(m, f, dom, forest, l, &ev);
    ev
}

/// Phase-1 evaluation of one instruction of the loop.
fn eval(
    m: &Module,
    f: &Function,
    i: Inst,
    sym: &FxHashMap<Value, Lin>,
    in_loop: &dyn Fn(Value) -> bool,
) -> Option<Lin> {
    let d = f.inst(i);
    let (bits, _) = int_type(m, d.ty)?;
    let op = |k: usize| -> Option<Lin> {
        let v = *d.operands.get(k)?;
        if in_loop(v) {
            sym.get(&v).cloned()
        } else {
            let lin = outside(m, f, v)?;
            (lin.ty == d.ty).then_some(lin)
        }
    };
    match d.opcode {
        // A Phi (not a header's: those are atoms) whose incomings are all
        // one value is that value: single-incoming copies, as left by
        // loop rotation or LCSSA-style exits.
        Opcode::Phi => {
            let first = *d.operands.first()?;
            if d.operands.iter().all(|&v| v == first) {
                op(0)
            } else {
                None
            }
        }
        Opcode::Add => Some(op(0)?.add(&op(1)?)),
        Opcode::Sub => Some(op(0)?.sub(&op(1)?)),
        Opcode::Neg => Some(op(0)?.neg()),
        Opcode::Mul => {
            let (a, b) = (op(0)?, op(1)?);
            match (a.as_const(), b.as_const()) {
                (_, Some(k)) => Some(a.scale(k)),
                (Some(k), _) => Some(b.scale(k)),
                _ => None,
            }
        }
        Opcode::Shl => {
            // The shift amount is taken modulo the width, as in the interpreter.
            let a = op(0)?;
            let amt = m.const_bits(*d.operands.get(1)?)? % bits as u64;
            Some(a.scale(1u64 << amt))
        }
        _ => None,
    }
}

fn resolve(lin: &Lin, ivs: &[InductionVar], header_phis: &[Inst]) -> Scev {
    let mut start = Lin { terms: Vec::new(), ..lin.clone() };
    let mut step = Lin::constant(lin.ty, lin.bits, lin.signed, 0);
    let mut rec = false;
    for &(v, c) in &lin.terms {
        if let Some(iv) = ivs.iter().find(|iv| Value::Inst(iv.phi) == v) {
            start = start.add(&iv.start.scale(c));
            step = step.add(&iv.step.scale(c));
            rec = true;
        } else if header_phis.iter().any(|&h| Value::Inst(h) == v) {
            return Scev::Unknown;
        } else {
            start = start.add(&Lin { konst: 0, terms: vec![(v, c)], ..lin.clone() });
        }
    }
    if rec && !step.is_zero() {
        Scev::AddRec { start, step }
    } else {
        Scev::Invariant(start)
    }
}

/// The comparison with its operands swapped (`a < b` is `b > a`).
pub(crate) fn mirror(op: Opcode) -> Opcode {
    match op {
        Opcode::Lt => Opcode::Gt,
        Opcode::Gt => Opcode::Lt,
        Opcode::Le => Opcode::Ge,
        Opcode::Ge => Opcode::Le,
        o => o,
    }
}

/// The comparison that holds when `op` does not (integers are totally
/// ordered).
pub(crate) fn negate(op: Opcode) -> Opcode {
    match op {
        Opcode::Lt => Opcode::Ge,
        Opcode::Ge => Opcode::Lt,
        Opcode::Gt => Opcode::Le,
        Opcode::Le => Opcode::Gt,
        Opcode::Eq => Opcode::Ne,
        Opcode::Ne => Opcode::Eq,
        o => o,
    }
}

fn trip_count(
    m: &Module,
    f: &Function,
    dom: &DomTree,
    forest: &LoopForest,
    l: LoopId,
    ev: &LoopEvolution,
) -> Option<TripCount> {
    let [(exiting, exit)] = ev.exits.as_slice() else { return None };
    let (exiting, exit) = (*exiting, *exit);
    let latch = ev.latch?;
    if forest.innermost(exiting) != Some(l) || !dom.dominates(exiting, latch) {
        return None;
    }
    let t = f.terminator(exiting)?;
    let td = f.inst(t);
    if td.opcode != Opcode::CondBr || td.blocks.len() != 2 || td.blocks[0] == td.blocks[1] {
        return None;
    }
    let continue_if_true = forest.contains(l, td.blocks[0]);
    let cmp = td.operands.first()?.as_inst()?;
    let cd = f.inst(cmp);
    if !matches!(cd.opcode, Opcode::Lt | Opcode::Le | Opcode::Gt | Opcode::Ge | Opcode::Eq | Opcode::Ne) {
        return None;
    }
    let (a, b) = (*cd.operands.first()?, *cd.operands.get(1)?);
    let (sa, sb) = (ev.get(m, f, forest, l, a), ev.get(m, f, forest, l, b));
    let mut op = cd.opcode;
    let (start, step, bound) = match (sa, sb) {
        (Scev::AddRec { start, step }, Scev::Invariant(n)) => (start, step, n),
        (Scev::Invariant(n), Scev::AddRec { start, step }) => {
            op = mirror(op);
            (start, step, n)
        }
        _ => return None,
    };
    if !continue_if_true {
        op = negate(op);
    }
    let count = solve(op, &start, &step, &bound)?;
    Some(TripCount { exiting, exit, count: count.0, guard: count.1 })
}

/// Smallest `k >= 0` with `!(start + k*step <op> bound)`, as a count and an
/// optional guard, when it is exact.
fn solve(op: Opcode, start: &Lin, step: &Lin, bound: &Lin) -> Option<(Lin, Option<Guard>)> {
    let (bits, signed) = (start.bits, start.signed);
    let d = step.signed_const()?;
    let one = Lin::constant(start.ty, bits, signed, 1);
    if op == Opcode::Ne && d & 1 == 1 {
        // Exact under wrap-around: every value of the width is visited.
        let inv = mod_inverse(d as u64, bits);
        return Some((bound.sub(start).scale(inv), None));
    }
    if let (Some(s), Some(n)) = (start.as_const(), bound.as_const()) {
        return solve_const(op, s, d, n, bits, signed).map(|k| (Lin::constant(start.ty, bits, signed, k), None));
    }
    let guard = |op| Some(Guard { op, lhs: start.clone(), rhs: bound.clone() });
    match (op, d) {
        (Opcode::Lt, 1) => Some((bound.sub(start), guard(Opcode::Lt))),
        (Opcode::Le, 1) => Some((bound.sub(start).add(&one), guard(Opcode::Le))),
        (Opcode::Gt, -1) => Some((start.sub(bound), guard(Opcode::Gt))),
        (Opcode::Ge, -1) => Some((start.sub(bound).add(&one), guard(Opcode::Ge))),
        (Opcode::Eq, _) => Some((one, guard(Opcode::Eq))),
        _ => None,
    }
}

/// Inverse of odd `d` modulo `2^bits` (Newton iteration).
fn mod_inverse(d: u64, bits: u32) -> u64 {
    let mut x = d;
    for _ in 0..6 {
        x = x.wrapping_mul(2u64.wrapping_sub(d.wrapping_mul(x)));
    }
    x & mask(bits)
}

fn solve_const(op: Opcode, s: u64, d: i128, n: u64, bits: u32, signed: bool) -> Option<u64> {
    let val = |x: u64| if signed { sext(x, bits) } else { (x & mask(bits)) as i128 };
    let (lo, hi) = if signed { (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1) } else { (0, mask(bits) as i128) };
    let (s, n) = (val(s), val(n));
    let holds = |x: i128| match op {
        Opcode::Lt => x < n,
        Opcode::Le => x <= n,
        Opcode::Gt => x > n,
        Opcode::Ge => x >= n,
        Opcode::Eq => x == n,
        Opcode::Ne => x != n,
        _ => false,
    };
    if !holds(s) {
        return Some(0);
    }
    // First k where the unwrapped value leaves the predicate; exact only if
    // no earlier value wrapped.
    let k: i128 = match (op, d.signum()) {
        (Opcode::Lt, 1) => (n - s + d - 1) / d,
        (Opcode::Le, 1) => (n - s) / d + 1,
        (Opcode::Gt, -1) => (s - n + (-d) - 1) / (-d),
        (Opcode::Ge, -1) => (s - n) / (-d) + 1,
        (Opcode::Eq, _) => 1,
        (Opcode::Ne, _) if (n - s) % d == 0 && (n - s) / d > 0 => (n - s) / d,
        _ => return None,
    };
    let last = s + (k - 1) * d;
    let end = s + k * d;
    if op == Opcode::Ne {
        // Every value up to `end` (== n) is in range because s and n are.
        return u64::try_from(k).ok().filter(|_| last >= lo && last <= hi);
    }
    if op == Opcode::Eq {
        return Some(1);
    }
    if end < lo || end > hi {
        return None;
    }
    u64::try_from(k).ok().filter(|&k| k <= mask(bits))
}
