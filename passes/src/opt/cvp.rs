//! `cvp`: correlated value propagation. A branch tells its successors
//! something: inside `if %c, true ^t, ...` the value `%c` is true, inside a
//! `switch` case the selector equals the case literal. Where a successor has
//! the branching block as its only predecessor, the fact holds in every
//! block it dominates (the edge dominates them). The pass collects such
//! facts down the dominator tree and simplifies uses there:
//!
//! - a use of a known condition becomes `true` / `false` (a nested
//!   `if %c`, a `select %c`, a Phi incoming from a block where `%c` is known);
//! - facts decompose: `!a` known true gives `a` false, `a & b` true gives
//!   both true, `a | b` false gives both false;
//! - a comparison is decided when a known comparison of the same operands
//!   implies it (`a < b` true implies `b > a`, `a <= b`, `a != b`; float
//!   comparisons included, with the unordered case kept apart), or when the
//!   integer ranges of its operands do;
//! - integer ranges come from facts (`x < 10` true gives x in [MIN, 9],
//!   `x == 7` gives exactly 7, which then replaces `x`; `x != 0`, or a
//!   switch's default block, excludes values, which decides `x == 0` and
//!   trims the range's ends) intersected with the interval analysis'
//!   (`analysis::int_range`: counted-loop induction variables, thread
//!   indices, loop Phis, which hold without facts) and with what the
//!   definition says of its operands under the facts (the analysis'
//!   transfer function: masks, remainders, shifts, divisions, casts,
//!   `min` / `max` / `clamp`, `select`, `add` / `sub` / `mul` that cannot
//!   wrap), a few definitions deep. Blocks with no facts are simplified
//!   too: the intervals alone drop a clamp of `x & 7` to 7;
//! - with ranges: `abs x` of a non-negative `x` is `x`; `min` / `max` whose
//!   operands' ranges are ordered pick one; `x / d` and `x % d` with
//!   `0 <= x < d` (d known positive) are `0` and `x`;
//! - `assume %c` makes `%c` true after it: in the rest of its block and in
//!   the blocks it dominates, with the same decomposition
//!   (`drop_assumptions` removes the assume afterwards);
//! - `min(x, n - 1)` with `x < n` known is `x` (an index clamped to a
//!   length it was already checked against: the WGSL front end's `Restrict`
//!   bounds policy after an `if i < arrayLength(...)`). `x < n` makes
//!   `n - 1` exact (no wrap) and `x <= n - 1`.
//!
//! Every rewrite is exact: facts are proven by dominance, integer ranges
//! are exact integer reasoning, and the float implications use IEEE's four
//! orderings (less, equal, greater, unordered).
//!
//! - Consumes: `xir` (any dialect: structured `if` / `switch` / loop
//!   `cond_br`, raw `cond_br` / `br_indexed`).
//! - Produces: the same dialect.
//! - Preserves: `cfg`, `dominators`, `post_dominators`, `loops` (branch conditions
//!   may become constants; no edge is removed).

use rustc_hash::FxHashMap;
use xir::analysis::{int_range, Cfg, DomTree, FlatLists, IntRanges};
use xir::pass::{AnalysisKind, Pass, PassContext, PassDecl, PassError, PassInfo, PassOutcome, Produces};
use xir::{sign_extend, Block, FuncId, Function, Inst, Module, Opcode, Type, TypeId, Value};

const INFO: PassInfo = PassInfo {
    name: "cvp",
    doc: "Correlated value propagation: branch conditions and integer ranges simplify dominated uses",
    consumes: &["xir"],
    produces: Produces::Same,
    eliminates: &[],
    preserves: &[AnalysisKind::Cfg, AnalysisKind::Dominators, AnalysisKind::PostDominators, AnalysisKind::Loops],
};

#[derive(Default)]
pub struct Cvp;

pub fn decl() -> PassDecl {
    PassDecl::without_options::<Cvp>(INFO)
}

#[derive(Default)]
struct Stats {
    conditions: usize,
    compares: usize,
    constants: usize,
    ranges: usize,
    /// `assume`s whose facts were read (no change by itself).
    assumptions: usize,
}

impl Pass for Cvp {
    fn info(&self) -> &PassInfo {
        &INFO
    }
    fn run(&self, module: &mut Module, cx: &mut PassContext) -> Result<PassOutcome, PassError> {
        let mut st = Stats::default();
        let funcs = crate::memory::util::defined_functions(module);
        for fid in funcs {
            let cfg = cx.analyses.cfg(module, fid);
            let dom = cx.analyses.dominators(module, fid);
            let ranges = cx.analyses.int_ranges(module, fid);
            cvp_function(module, fid, &cfg, &dom, &ranges, &mut st);
        }
        let n = st.conditions + st.compares + st.constants + st.ranges;
        let mut out = PassOutcome::changed(n > 0);
        out.stats.push(("conditions".into(), st.conditions.to_string()));
        out.stats.push(("compares".into(), st.compares.to_string()));
        out.stats.push(("constants".into(), st.constants.to_string()));
        out.stats.push(("ranges".into(), st.ranges.to_string()));
        out.stats.push(("assumptions".into(), st.assumptions.to_string()));
        Ok(out)
    }
}

/// What holds in a block.
#[derive(Clone, Copy, Debug)]
enum Fact {
    /// A bool value is known.
    Bool(Value, bool),
    /// An integer value lies in `[lo, hi]` (its type's signedness).
    Range(Value, i128, i128),
    /// An integer value differs from a constant.
    Ne(Value, i128),
}

/// IEEE orderings as bits: less, equal, greater, unordered.
const LT: u8 = 1;
const EQ: u8 = 2;
const GT: u8 = 4;
const UN: u8 = 8;

fn relation(op: Opcode) -> Option<u8> {
    Some(match op {
        Opcode::Lt => LT,
        Opcode::Le => LT | EQ,
        Opcode::Gt => GT,
        Opcode::Ge => GT | EQ,
        Opcode::Eq => EQ,
        Opcode::Ne => LT | GT | UN,
        _ => return None,
    })
}

/// The relation with its operands swapped (`a < b` is `b > a`).
fn swap(r: u8) -> u8 {
    (r & (EQ | UN)) | if r & LT != 0 { GT } else { 0 } | if r & GT != 0 { LT } else { 0 }
}

/// How many definitions deep a range under facts is read (each level
/// narrows its operands by their facts; below it the analysis' interval).
const RANGE_DEPTH: u32 = 5;

/// The facts that hold in the block being visited: a stack, pushed when
/// the dominator-tree walk enters a block and cut back when it leaves, with
/// per-value indexes so that a query costs the facts about its value, not
/// every fact in scope (a long function's dominator chain holds thousands).
#[derive(Default)]
struct Facts {
    all: Vec<Fact>,
    /// The comparison operand pair each fact is indexed under (`pairs`).
    pair_of: Vec<Option<(Value, Value)>>,
    /// Positions in `all`, ascending, per value: `Bool`, `Range`, `Ne` facts.
    bools: FxHashMap<Value, Vec<usize>>,
    ranges: FxHashMap<Value, Vec<usize>>,
    nes: FxHashMap<Value, Vec<usize>>,
    /// `Bool` facts on a comparison, by its operands (smaller first).
    pairs: FxHashMap<(Value, Value), Vec<usize>>,
}

fn pair_key(a: Value, b: Value) -> (Value, Value) {
    if a <= b {
        (a, b)
    } else {
        (b, a)
    }
}

impl Facts {
    fn len(&self) -> usize {
        self.all.len()
    }

    /// Push `x`, indexed under its comparison operands `pair` (`comparison_pair`).
    fn push(&mut self, x: Fact, pair: Option<(Value, Value)>) {
        let at = self.all.len();
        match &x {
            Fact::Bool(v, _) => {
                self.bools.entry(*v).or_default().push(at);
                if let Some(k) = pair {
                    self.pairs.entry(k).or_default().push(at);
                }
            }
            Fact::Range(v, ..) => self.ranges.entry(*v).or_default().push(at),
            Fact::Ne(v, _) => self.nes.entry(*v).or_default().push(at),
        }
        self.all.push(x);
        self.pair_of.push(pair);
    }

    /// Drop the facts pushed after the first `len`.
    fn truncate(&mut self, len: usize) {
        while self.all.len() > len {
            let x = self.all.pop().expect("non-empty");
            let pair = self.pair_of.pop().expect("parallel to all");
            let (map, v) = match x {
                Fact::Bool(v, _) => (&mut self.bools, v),
                Fact::Range(v, ..) => (&mut self.ranges, v),
                Fact::Ne(v, _) => (&mut self.nes, v),
            };
            pop_index(map, v);
            if let Some(k) = pair {
                pop_index(&mut self.pairs, k);
            }
        }
    }

    /// Whether some fact in scope is about `v` (a bool or a range):
    /// most operands have none, and this decides it without reading their
    /// definitions.
    fn knows(&self, v: &Value) -> bool {
        self.bools.contains_key(v) || self.ranges.contains_key(v)
    }

    /// The facts of one kind about `v`, oldest first.
    fn of<'a, K: std::hash::Hash + Eq>(
        &'a self,
        map: &'a FxHashMap<K, Vec<usize>>,
        k: &K,
    ) -> impl DoubleEndedIterator<Item = &'a Fact> + 'a {
        map.get(k).into_iter().flatten().map(|&at| &self.all[at])
    }
}

/// Remove the newest index of `k` (the fact on top of the stack).
fn pop_index<K: std::hash::Hash + Eq>(map: &mut FxHashMap<K, Vec<usize>>, k: K) {
    if let Some(list) = map.get_mut(&k) {
        list.pop();
        if list.is_empty() {
            map.remove(&k);
        }
    }
}

struct Ctx<'a> {
    m: &'a Module,
    f: &'a Function,
    facts: &'a Facts,
    /// Intervals that hold without facts (`analysis::int_range`).
    ranges: &'a IntRanges,
}

impl Ctx<'_> {
    fn known_bool(&self, v: Value) -> Option<bool> {
        self.facts.of(&self.facts.bools, &v).next_back().and_then(|x| match x {
            Fact::Bool(_, b) => Some(*b),
            _ => None,
        })
    }

    /// The range of integer value `v`: the interval analysis' (which holds
    /// everywhere), its definition's under the facts, and the facts about
    /// `v` itself, intersected.
    fn range(&self, v: Value, depth: u32) -> Option<(i128, i128)> {
        let (mut lo, mut hi) = self.ranges.get(self.m, self.f, v)?;
        if self.facts.len() == 0 {
            return Some((lo, hi)); // no facts: the analysis already read the definition
        }
        if let Some((a, b)) = self.def_range(v, depth) {
            lo = lo.max(a);
            hi = hi.min(b);
        }
        for x in self.facts.of(&self.facts.ranges, &v) {
            if let Fact::Range(_, a, b) = x {
                lo = lo.max(*a);
                hi = hi.min(*b);
            }
        }
        // Excluded values at the ends shrink the range (each at most once).
        for _ in 0..self.facts.len() {
            match (self.excluded(v, lo), self.excluded(v, hi)) {
                (true, _) if lo <= hi => lo += 1,
                (_, true) if lo <= hi => hi -= 1,
                _ => break,
            }
        }
        Some((lo, hi))
    }

    /// Whether a fact says integer `v` is not `c`.
    fn excluded(&self, v: Value, c: i128) -> bool {
        self.facts.of(&self.facts.nes, &v).any(|x| matches!(x, Fact::Ne(_, k) if *k == c))
    }

    /// The range `v`'s definition gives from its operands' ranges (each
    /// narrowed by the facts, `depth` definitions deep): the interval
    /// analysis' transfer function, read under this block's facts.
    fn def_range(&self, v: Value, depth: u32) -> Option<(i128, i128)> {
        if let Some(c) = self.m.const_int_value(v) {
            return Some((c, c));
        }
        if depth == 0 {
            return None;
        }
        let i = v.as_inst()?;
        if self.f.opcode(i) == Opcode::Phi {
            return None; // the analysis' interval (a cycle)
        }
        let t = int_range::transfer(self.m, self.f, i, &mut |w| self.range(w, depth - 1));
        match (t, self.ordered(i, depth)) {
            (Some((a, b)), Some((c, e))) => Some((a.max(c), b.min(e))),
            (t, o) => t.or(o),
        }
    }

    /// The orderings of `(x, y)` the facts allow (`LT | EQ | GT` when
    /// none is known).
    fn order(&self, x: Value, y: Value) -> u8 {
        let mut possible = LT | EQ | GT;
        for (r, val) in self.known_relations(x, y) {
            possible &= if val { r } else { !r };
        }
        possible & (LT | EQ | GT)
    }

    /// The comparisons of `x` with `y` known in scope, oldest first: each
    /// its relation of `x` to `y` (a comparison of `y` with `x` swapped)
    /// and whether it is known true.
    fn known_relations(&self, x: Value, y: Value) -> impl DoubleEndedIterator<Item = (u8, bool)> + '_ {
        self.facts.of(&self.facts.pairs, &pair_key(x, y)).filter_map(move |fact| {
            let Fact::Bool(w, val) = fact else { return None };
            let e = self.f.inst(w.as_inst()?);
            let r = relation(e.opcode)?;
            match (e.operands.first(), e.operands.get(1)) {
                (Some(&a), Some(&b)) if (a, b) == (x, y) => Some((r, *val)),
                (Some(&a), Some(&b)) if (a, b) == (y, x) => Some((swap(r), *val)),
                _ => None,
            }
        })
    }

    /// The range of `add` / `sub` instruction `i` from a known ordering of
    /// its operands: `x - y` with `x >= y` is in `[0, hi(x) - lo(y)]`
    /// (the index `tid - offset` under `tid >= offset`), `x + y` with
    /// `x < y` is at most `2 * hi(y) - 1` (the index `tid + stride` under
    /// `tid < stride`). Exact: the result is claimed only where those
    /// bounds lie in the type, so the operation cannot have wrapped.
    fn ordered(&self, i: Inst, depth: u32) -> Option<(i128, i128)> {
        let d = self.f.inst(i);
        if !matches!(d.opcode, Opcode::Add | Opcode::Sub) || d.operands.len() != 2 {
            return None;
        }
        let (x, y) = (d.operands[0], d.operands[1]);
        let (tlo, thi) = int_range::type_bounds(self.m, d.ty)?;
        let o = self.order(x, y);
        if o == LT | EQ | GT {
            return None;
        }
        let ((a, b), (c, e)) = (self.range(x, depth - 1)?, self.range(y, depth - 1)?);
        let (lo, hi) = match d.opcode {
            Opcode::Sub if o & LT == 0 => ((a - e).max(0), b - c),
            Opcode::Add if o == LT => (a + c, (b + e).min(2 * e - 1)),
            Opcode::Add if o == GT => (a + c, (b + e).min(2 * b - 1)),
            _ => return None,
        };
        (lo <= hi && lo >= tlo && hi <= thi).then_some((lo, hi))
    }

    /// Decide comparison `i`, if the facts do.
    fn decide_compare(&self, i: Inst) -> Option<bool> {
        let d = self.f.inst(i);
        let q = relation(d.opcode)?;
        let (x, y) = (d.operands[0], d.operands[1]);
        let ty = self.f.value_type(self.m, x);
        if !self.m.types.is_scalar(ty) {
            return None;
        }
        let int = int_range::type_bounds(self.m, ty).is_some();
        let q = if int { q & !UN } else { q };
        // Another comparison of the same operands that is known.
        for (r, val) in self.known_relations(x, y).rev() {
            let all = if int { LT | EQ | GT } else { LT | EQ | GT | UN };
            let possible = if val { r & all } else { !r & all };
            if possible & !q == 0 {
                return Some(true);
            }
            if possible & q == 0 {
                return Some(false);
            }
        }
        if !int {
            return None;
        }
        // `x == c` / `x != c` against an excluded constant.
        let pair = match (self.m.const_int_value(x), self.m.const_int_value(y)) {
            (None, Some(c)) => Some((x, c)),
            (Some(c), None) => Some((y, c)),
            _ => None,
        };
        if pair.is_some_and(|(v, c)| (q == EQ || q == (LT | GT)) && self.excluded(v, c)) {
            return Some(q != EQ);
        }
        let ((a, b), (c, e)) = (self.range(x, RANGE_DEPTH)?, self.range(y, RANGE_DEPTH)?);
        if a > b || c > e {
            return None; // an empty range: the block cannot run; leave it alone
        }
        // Orderings the ranges allow.
        let mut possible = 0;
        if a < e {
            possible |= LT;
        }
        if a.max(c) <= b.min(e) {
            possible |= EQ;
        }
        if b > c {
            possible |= GT;
        }
        if possible & !q == 0 {
            Some(true)
        } else if possible & q == 0 {
            Some(false)
        } else {
            None
        }
    }

    /// A simpler existing value for `i` proven by ranges.
    fn by_range(&self, i: Inst) -> Option<Value> {
        let d = self.f.inst(i);
        if !self.m.types.is_scalar(d.ty) || int_range::type_bounds(self.m, d.ty).is_none() {
            return None;
        }
        let r = |k: usize| self.range(d.operands[k], RANGE_DEPTH).filter(|(lo, hi)| lo <= hi);
        match d.opcode {
            Opcode::Abs => (r(0)?.0 >= 0).then_some(d.operands[0]),
            Opcode::Min if self.below_pred(d.operands[0], d.operands[1]) => Some(d.operands[0]),
            Opcode::Min if self.below_pred(d.operands[1], d.operands[0]) => Some(d.operands[1]),
            Opcode::Min | Opcode::Max => {
                let ((a, b), (c, e)) = (r(0)?, r(1)?);
                let first = if d.opcode == Opcode::Min { b <= c } else { a >= e };
                let second = if d.opcode == Opcode::Min { e <= a } else { c >= b };
                if first {
                    Some(d.operands[0])
                } else if second {
                    Some(d.operands[1])
                } else {
                    None
                }
            }
            Opcode::Div | Opcode::Mod => {
                let ((a, b), (c, _)) = (r(0)?, r(1)?);
                if c > 0 && a >= 0 && b < c {
                    if d.opcode == Opcode::Mod {
                        Some(d.operands[0])
                    } else {
                        None // the constant 0: `div_is_zero`
                    }
                } else {
                    None
                }
            }
            _ => None,
        }
    }

    /// Whether `m1` is `n - 1` for an `n` with `x < n` known (so `x <= m1`).
    fn below_pred(&self, x: Value, m1: Value) -> bool {
        let Some(j) = m1.as_inst() else { return false };
        let e = self.f.inst(j);
        if e.opcode != Opcode::Sub || self.m.const_int_value(e.operands[1]) != Some(1) {
            return false;
        }
        let n = e.operands[0];
        self.facts.of(&self.facts.pairs, &pair_key(x, n)).any(|fact| {
            let Fact::Bool(w, val) = fact else { return false };
            let Some(c) = w.as_inst() else { return false };
            let c = self.f.inst(c);
            let Some(r) = relation(c.opcode) else { return false };
            let r = match (c.operands.first(), c.operands.get(1)) {
                (Some(&a), Some(&b)) if (a, b) == (x, n) => r,
                (Some(&a), Some(&b)) if (a, b) == (n, x) => swap(r),
                _ => return false,
            };
            // The orderings of (x, n) the fact allows are all `<`.
            let possible = if *val { r & (LT | EQ | GT) } else { !r & (LT | EQ | GT) };
            possible == LT
        })
    }

    /// Whether `div` instruction `i` is 0 by ranges.
    fn div_is_zero(&self, i: Inst) -> bool {
        let d = self.f.inst(i);
        if d.opcode != Opcode::Div || int_range::type_bounds(self.m, d.ty).is_none() || !self.m.types.is_scalar(d.ty) {
            return false;
        }
        match (self.range(d.operands[0], RANGE_DEPTH), self.range(d.operands[1], RANGE_DEPTH)) {
            (Some((a, b)), Some((c, _))) => c > 0 && a >= 0 && b < c && a <= b,
            _ => false,
        }
    }
}

/// Facts implied by `v` having value `val`, appended to `out`.
fn assume(m: &Module, f: &Function, v: Value, val: bool, out: &mut Vec<Fact>, depth: u32) {
    if f.is_lvalue(v) {
        return;
    }
    out.push(Fact::Bool(v, val));
    let Some(i) = v.as_inst() else { return };
    if depth == 0 {
        return;
    }
    let d = f.inst(i);
    match d.opcode {
        Opcode::BitNot if m.types.is_bool(d.ty) => assume(m, f, d.operands[0], !val, out, depth - 1),
        Opcode::BitAnd if val && m.types.is_bool(d.ty) => {
            assume(m, f, d.operands[0], true, out, depth - 1);
            assume(m, f, d.operands[1], true, out, depth - 1);
        }
        Opcode::BitOr if !val && m.types.is_bool(d.ty) => {
            assume(m, f, d.operands[0], false, out, depth - 1);
            assume(m, f, d.operands[1], false, out, depth - 1);
        }
        op => {
            let Some(r) = relation(op) else { return };
            let (x, y) = (d.operands[0], d.operands[1]);
            let ty = f.value_type(m, x);
            let Some((tlo, thi)) = int_range::type_bounds(m, ty) else { return };
            if !m.types.is_scalar(ty) {
                return;
            }
            // x R c, with the relation negated when false (integers: total order).
            let (v, r, c) = match (m.const_int_value(x), m.const_int_value(y)) {
                (None, Some(c)) => (x, r, c),
                (Some(c), None) => (y, swap(r), c),
                _ => return,
            };
            if f.is_lvalue(v) {
                return;
            }
            let r = if val { r & !UN } else { !r & (LT | EQ | GT) };
            let lo = if r & LT != 0 {
                tlo
            } else if r & EQ != 0 {
                c
            } else {
                c + 1
            };
            let hi = if r & GT != 0 {
                thi
            } else if r & EQ != 0 {
                c
            } else {
                c - 1
            };
            if r == (LT | GT) {
                out.push(Fact::Ne(v, c));
            } else if lo <= hi {
                out.push(Fact::Range(v, lo, hi));
            }
        }
    }
}

/// Facts the edge from `p` into `t` (its only predecessor) establishes.
fn edge_facts(m: &Module, f: &Function, p: Block, t: Block) -> Vec<Fact> {
    let mut out = Vec::new();
    let Some(term) = f.terminator(p) else { return out };
    let d = f.inst(term);
    match d.opcode {
        Opcode::If | Opcode::CondBr => {
            let (tt, ff) = (d.blocks[0], d.blocks[1]);
            if tt != ff && (t == tt || t == ff) {
                assume(m, f, d.operands[0], t == tt, &mut out, 4);
            }
        }
        Opcode::Switch | Opcode::BrIndexed => {
            let skip = if d.opcode == Opcode::Switch { 2 } else { 1 };
            let default = d.blocks[skip - 1];
            let sel = d.operands[0];
            let ty = f.value_type(m, sel);
            let Some(w) = m.types.is_int(ty).then(|| m.types.scalar_bits(ty)) else { return out };
            let signed = matches!(m.types.get(ty), Type::Int { signed: true, .. });
            let lits: Vec<i128> = d.blocks[skip..]
                .iter()
                .zip(f.cases(term))
                .filter(|(&b, _)| b == t)
                .map(|(_, &c)| sign_extend(c, w, signed))
                .collect();
            if f.is_lvalue(sel) {
                return out;
            }
            if t != default && !lits.is_empty() {
                let (lo, hi) = (*lits.iter().min().expect("non-empty"), *lits.iter().max().expect("non-empty"));
                out.push(Fact::Range(sel, lo, hi));
            } else if t == default && lits.is_empty() {
                // The default block only: the selector is none of the cases
                // (at most 16 remembered).
                for &c in f.cases(term).iter().take(16) {
                    out.push(Fact::Ne(sel, sign_extend(c, w, signed)));
                }
            }
        }
        _ => {}
    }
    out
}

/// The dominator tree in the preorder of a stack that pushes each block's
/// children in order (so the last child is visited first).
fn preorder(dom: &DomTree, entry: Block) -> Vec<Block> {
    let mut order = Vec::new();
    let mut stack = vec![entry];
    while let Some(b) = stack.pop() {
        order.push(b);
        stack.extend_from_slice(dom.children(b));
    }
    order
}

/// A fact with the comparison operand pair it is indexed under
/// (`Facts::pairs`), found once when the fact is derived.
type OwnFact = (Fact, Option<(Value, Value)>);

/// The operand pair a `Bool` fact on a comparison is indexed under.
fn comparison_pair(f: &Function, x: &Fact) -> Option<(Value, Value)> {
    let Fact::Bool(v, _) = x else { return None };
    let e = f.inst(v.as_inst()?);
    relation(e.opcode)?;
    Some(pair_key(*e.operands.first()?, *e.operands.get(1)?))
}

/// The facts in scope along a walk of the dominator tree in preorder: a
/// block's own facts and its dominators'. Entering a block first drops the
/// facts of the blocks the walk has left (those that are not its
/// dominators).
struct Scope<'a> {
    facts: Facts,
    own: &'a FlatLists<OwnFact>,
    /// The dominators being walked, innermost last, each with the number of
    /// facts in scope before its own.
    open: Vec<(Block, usize)>,
}

impl<'a> Scope<'a> {
    fn new(own: &'a FlatLists<OwnFact>) -> Self {
        Scope { facts: Facts::default(), own, open: Vec::new() }
    }

    /// The facts in scope in `b`; the caller may add `b`'s own as it
    /// walks it (an `assume`'s), which leave the scope with `b`.
    fn enter(&mut self, dom: &DomTree, b: Block) -> &mut Facts {
        let parent = dom.idom(b);
        while let Some(&(top, len)) = self.open.last() {
            if Some(top) == parent {
                break;
            }
            self.facts.truncate(len);
            self.open.pop();
        }
        self.open.push((b, self.facts.len()));
        for &(x, pair) in self.own.get(b.index()) {
            self.facts.push(x, pair);
        }
        &mut self.facts
    }
}

/// The one predecessor of `b`, if it has exactly one.
fn single_pred(cfg: &Cfg, b: Block) -> Option<Block> {
    match cfg.preds(b) {
        &[p] => Some(p),
        _ => None,
    }
}

fn cvp_function(m: &mut Module, fid: FuncId, cfg: &Cfg, dom: &DomTree, ranges: &IntRanges, st: &mut Stats) {
    let Some(entry) = cfg.entry else { return };
    // One preorder for all three walks below; walking a list (instead of
    // the tree) lets each ask for the records of blocks a few steps ahead.
    let order = preorder(dom, entry);
    // Each block's own facts: those of its edge when it has one predecessor
    // (its immediate dominator), read before any rewrite. The facts of a
    // block are its own and its dominators'.
    let f = m.func(fid);
    let mut pairs: Vec<(usize, OwnFact)> = Vec::new();
    // Each block's one predecessor's terminator is read (through its record).
    let mut walk = f.walk(&order, xir::reads::Via(|b| single_pred(cfg, b), xir::reads::Terminator));
    while let Some(b) = walk.next(f) {
        if let Some(p) = single_pred(cfg, b) {
            pairs.extend(edge_facts(m, f, p, b).into_iter().map(|x| (b.index(), (x, comparison_pair(f, &x)))));
        }
    }
    // Blocks holding an `assume`, from the dense table: their own
    // instructions add facts as the walk passes them (`simplify_block`).
    let mut has_assume = vec![false; f.block_capacity()];
    for (_, b, op) in f.live_placements_by_id() {
        if op == Opcode::Assume {
            has_assume[b.index()] = true;
        }
    }
    let own = FlatLists::from_pairs(f.block_capacity(), pairs.iter().copied());
    // Simplify each block with its facts, in the walk's order (a rewrite
    // can change what later blocks see of earlier definitions).
    let mut scope = Scope::new(&own);
    let mut walk = m.func(fid).walk(&order, xir::reads::BlockInsts);
    while let Some(b) = walk.next(m.func(fid)) {
        // Every block: the intervals alone decide some rewrites (a clamp
        // of `x & 7` to 7), facts or none.
        let facts = scope.enter(dom, b);
        simplify_block(m, fid, b, facts, ranges, st);
    }
    // Phi incomings: a use at the end of the incoming block. Decided with
    // the incoming block's facts, applied in block order. The blocks that
    // hold Phis come from the dense table: only their records are read.
    let f = m.func(fid);
    let mut holds_phi = vec![false; f.block_capacity()];
    for (_, b, op) in f.live_placements_by_id() {
        if op == Opcode::Phi {
            holds_phi[b.index()] = true;
        }
    }
    let mut incoming: Vec<(Inst, usize)> = Vec::new();
    let mut from_pairs: Vec<(usize, usize)> = Vec::new();
    for &b in order.iter().filter(|b| holds_phi[b.index()]) {
        for &i in f.block(b).insts() {
            if f.opcode(i) != Opcode::Phi {
                continue;
            }
            let d = f.inst(i);
            for (k, &from) in d.blocks.iter().enumerate().take(d.operands.len()) {
                if cfg.is_reachable(from) {
                    from_pairs.push((from.index(), incoming.len()));
                    incoming.push((i, k));
                }
            }
        }
    }
    if incoming.is_empty() {
        return;
    }
    let by_from = FlatLists::from_pairs(f.block_capacity(), from_pairs.iter().copied());
    let mut known: Vec<Option<Known>> = vec![None; incoming.len()];
    let mut scope = Scope::new(&own);
    for &from in &order {
        let facts = scope.enter(dom, from);
        if facts.len() == 0 {
            continue;
        }
        for &at in by_from.get(from.index()) {
            let (i, k) = incoming[at];
            known[at] = known_constant(m, f, f.inst(i).operands[k], facts, ranges);
        }
    }
    for (&(i, k), kn) in incoming.iter().zip(known) {
        let Some(kn) = kn else { continue };
        let (c, is_bool) = kn.materialize(m);
        m.func_mut(fid).set_operand(i, k, c);
        if is_bool {
            st.conditions += 1;
        } else {
            st.constants += 1;
        }
    }
}

/// A constant a value is known to equal.
#[derive(Clone, Copy, Debug)]
enum Known {
    Bool(bool),
    Int(TypeId, i128),
}

impl Known {
    /// The constant (and whether it is a bool condition).
    fn materialize(self, m: &mut Module) -> (Value, bool) {
        match self {
            Known::Bool(b) => (m.const_bool(b), true),
            Known::Int(ty, v) => (m.const_int(ty, v), false),
        }
    }
}

/// The constant `v` is known to equal under `facts`.
fn known_constant(m: &Module, f: &Function, v: Value, facts: &Facts, ranges: &IntRanges) -> Option<Known> {
    if !v.is_local() || !facts.knows(&v) {
        return None;
    }
    let cx = Ctx { m, f, facts, ranges };
    if let Some(b) = cx.known_bool(v) {
        return Some(Known::Bool(b));
    }
    let ty = f.value_type(m, v);
    if !m.types.is_int(ty) || f.is_lvalue(v) {
        return None;
    }
    let lo = facts.of(&facts.ranges, &v).rev().find_map(|x| match x {
        Fact::Range(_, lo, hi) if lo == hi => Some(*lo),
        _ => None,
    })?;
    Some(Known::Int(ty, lo))
}

/// A constant that `v` is known to equal under `facts` (and whether it is a
/// bool condition).
fn constant_for(m: &mut Module, fid: FuncId, v: Value, facts: &Facts, ranges: &IntRanges) -> Option<(Value, bool)> {
    known_constant(m, m.func(fid), v, facts, ranges).map(|k| k.materialize(m))
}

fn simplify_block(m: &mut Module, fid: FuncId, b: Block, facts: &mut Facts, ranges: &IntRanges, st: &mut Stats) {
    let insts = m.func(fid).block(b).insts().to_vec();
    for i in insts {
        if !m.func(fid).is_live(i) || m.func(fid).opcode(i) == Opcode::Phi {
            continue;
        }
        // From an `assume` on, its condition is a fact (for the rest of
        // the block and, through the scope, the blocks it dominates).
        if m.func(fid).opcode(i) == Opcode::Assume {
            let f = m.func(fid);
            let mut own = Vec::new();
            assume(m, f, f.inst(i).operands[0], true, &mut own, 4);
            for x in own {
                facts.push(x, comparison_pair(f, &x));
            }
            st.assumptions += 1;
            continue;
        }
        // Known operands become constants.
        let n = m.func(fid).inst(i).operands.len();
        for k in 0..n {
            let v = m.func(fid).inst(i).operands[k];
            if let Some((c, is_bool)) = constant_for(m, fid, v, facts, ranges) {
                m.func_mut(fid).set_operand(i, k, c);
                if is_bool {
                    st.conditions += 1;
                } else {
                    st.constants += 1;
                }
            }
        }
        let f = m.func(fid);
        let d = f.inst(i);
        let cx = Ctx { m, f, facts: &*facts, ranges };
        let found = if d.opcode == Opcode::Select && m.types.is_bool(f.value_type(m, d.operands[0])) {
            m.const_bits(d.operands[0]).map(|c| Found::Select(if c & 1 == 1 { d.operands[1] } else { d.operands[2] }))
        } else if relation(d.opcode).is_some() && d.operands.len() == 2 {
            cx.decide_compare(i).map(Found::Compare)
        } else if cx.div_is_zero(i) {
            Some(Found::Zero)
        } else {
            cx.by_range(i).map(Found::Range)
        };
        let Some(found) = found else { continue };
        let ty = d.ty;
        let v = match found {
            Found::Select(v) | Found::Range(v) => v,
            Found::Compare(c) => m.const_bool(c),
            Found::Zero => m.const_int(ty, 0),
        };
        let f = m.func_mut(fid);
        if super::util::replace_uses_keeping_phis_acyclic(f, Value::Inst(i), v) {
            f.remove_inst(i);
            match found {
                Found::Select(_) => st.conditions += 1,
                Found::Compare(_) => st.compares += 1,
                Found::Zero | Found::Range(_) => st.ranges += 1,
            }
        }
    }
}

/// What an instruction was found to equal.
enum Found {
    /// A select on a known condition: the chosen operand.
    Select(Value),
    /// A decided comparison.
    Compare(bool),
    /// A division of a smaller non-negative value: 0.
    Zero,
    /// An operand, by ranges.
    Range(Value),
}
