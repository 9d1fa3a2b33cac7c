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
//!   trims the range's ends) intersected with what
//!   the definition says (`x & 15`, `x % 8`, `clz`, unsigned shifts and
//!   divisions by constants, casts from bool, `min` / `max`, `select`, `add`
//!   and `sub` that cannot wrap);
//! - with ranges: `abs x` of a non-negative `x` is `x`; `min` / `max` whose
//!   operands' ranges are ordered pick one; `x / d` and `x % d` with
//!   `0 <= x < d` (d known positive) are `0` and `x`.
//!
//! Every rewrite is exact: facts are proven by dominance, integer ranges
//! are exact integer reasoning, and the float implications use IEEE's four
//! orderings (less, equal, greater, unordered).
//!
//! Consumes: `xir` (any dialect: structured `if` / `switch` / loop
//! `cond_br`, raw `cond_br` / `br_indexed`). Produces: the same dialect.
//! Preserves: the CFG and everything derived from it (branch conditions may
//! become constants; no edge is removed).

use xir::analysis::{Cfg, DomTree};
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
            cvp_function(module, fid, &cfg, &dom, &mut st);
        }
        let n = st.conditions + st.compares + st.constants + st.ranges;
        let mut out = PassOutcome::changed(n > 0);
        out.stats.push(("conditions".into(), st.conditions.to_string()));
        out.stats.push(("compares".into(), st.compares.to_string()));
        out.stats.push(("constants".into(), st.constants.to_string()));
        out.stats.push(("ranges".into(), st.ranges.to_string()));
        Ok(out)
    }
}

/// What holds in a block.
#[derive(Clone, Debug)]
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

/// Bounds of an integer type.
fn bounds(m: &Module, ty: TypeId) -> Option<(i128, i128)> {
    match m.types.get(ty) {
        Type::Int { bits, signed: true } => Some((-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)),
        Type::Int { bits, signed: false } => Some((0, (1i128 << bits) - 1)),
        _ => None,
    }
}

struct Ctx<'a> {
    m: &'a Module,
    f: &'a Function,
    facts: &'a [Fact],
}

impl Ctx<'_> {
    fn known_bool(&self, v: Value) -> Option<bool> {
        self.facts.iter().rev().find_map(|x| match x {
            Fact::Bool(w, b) if *w == v => Some(*b),
            _ => None,
        })
    }

    /// The range of integer value `v`: its definition's, narrowed by facts.
    fn range(&self, v: Value, depth: u32) -> Option<(i128, i128)> {
        let ty = self.f.value_type(self.m, v);
        let (tlo, thi) = bounds(self.m, ty)?;
        let (mut lo, mut hi) = self.def_range(v, ty, depth).unwrap_or((tlo, thi));
        for x in self.facts {
            if let Fact::Range(w, a, b) = x {
                if *w == v {
                    lo = lo.max(*a);
                    hi = hi.min(*b);
                }
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
        self.facts.iter().any(|x| matches!(x, Fact::Ne(w, k) if *w == v && *k == c))
    }

    fn def_range(&self, v: Value, ty: TypeId, depth: u32) -> Option<(i128, i128)> {
        if let Some(c) = self.m.const_int_value(v) {
            return Some((c, c));
        }
        if depth == 0 {
            return None;
        }
        let i = v.as_inst()?;
        let d = self.f.inst(i);
        let (tlo, thi) = bounds(self.m, ty)?;
        let r = |k: usize| self.range(d.operands[k], depth - 1);
        let k = |n: usize| self.m.const_int_value(d.operands[n]);
        let fits = |lo: i128, hi: i128| (lo >= tlo && hi <= thi).then_some((lo, hi));
        match d.opcode {
            Opcode::BitAnd => {
                let m = k(1).or(k(0))?;
                (m >= 0).then_some((0, m))
            }
            Opcode::Mod => {
                let c = k(1)?;
                if c <= 0 {
                    return None;
                }
                Some(if r(0)?.0 >= 0 { (0, c - 1) } else { (-(c - 1), c - 1) })
            }
            Opcode::Div if tlo == 0 => {
                let (c, (lo, hi)) = (k(1)?, r(0)?);
                (c > 0).then(|| (lo / c, hi / c))
            }
            Opcode::Shr if tlo == 0 => {
                let bits = self.m.types.scalar_bits(ty) as i128;
                let s = (k(1)?.rem_euclid(bits)) as u32;
                let (lo, hi) = r(0)?;
                Some((lo >> s, hi >> s))
            }
            Opcode::Clz | Opcode::Ctz | Opcode::Popcount => Some((0, 32)),
            Opcode::CastStatic => {
                let src = self.f.value_type(self.m, d.operands[0]);
                if self.m.types.is_bool(src) {
                    return Some((0, 1));
                }
                let (lo, hi) = r(0)?;
                fits(lo, hi)
            }
            Opcode::Min | Opcode::Max => {
                let ((a, b), (c, e)) = (r(0)?, r(1)?);
                Some(if d.opcode == Opcode::Min { (a.min(c), b.min(e)) } else { (a.max(c), b.max(e)) })
            }
            Opcode::Clamp => {
                let (lo, hi) = (k(1)?, k(2)?);
                (lo <= hi).then_some((lo, hi))
            }
            Opcode::Select if self.m.types.is_scalar(ty) => {
                let ((a, b), (c, e)) = (r(1)?, r(2)?);
                Some((a.min(c), b.max(e)))
            }
            Opcode::Add => {
                let ((a, b), (c, e)) = (r(0)?, r(1)?);
                fits(a + c, b + e)
            }
            Opcode::Sub => {
                let ((a, b), (c, e)) = (r(0)?, r(1)?);
                fits(a - e, b - c)
            }
            _ => None,
        }
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
        let int = bounds(self.m, ty).is_some();
        let q = if int { q & !UN } else { q };
        // Another comparison of the same operands that is known.
        for fact in self.facts.iter().rev() {
            let Fact::Bool(w, val) = fact else { continue };
            let Some(j) = w.as_inst() else { continue };
            let e = self.f.inst(j);
            let Some(r) = relation(e.opcode) else { continue };
            let r = match (e.operands.first(), e.operands.get(1)) {
                (Some(&a), Some(&b)) if (a, b) == (x, y) => r,
                (Some(&a), Some(&b)) if (a, b) == (y, x) => swap(r),
                _ => continue,
            };
            let all = if int { LT | EQ | GT } else { LT | EQ | GT | UN };
            let possible = if *val { r & all } else { !r & all };
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
        let ((a, b), (c, e)) = (self.range(x, 3)?, self.range(y, 3)?);
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
        if !self.m.types.is_scalar(d.ty) || bounds(self.m, d.ty).is_none() {
            return None;
        }
        let r = |k: usize| self.range(d.operands[k], 3).filter(|(lo, hi)| lo <= hi);
        match d.opcode {
            Opcode::Abs => (r(0)?.0 >= 0).then_some(d.operands[0]),
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

    /// Whether `div` instruction `i` is 0 by ranges.
    fn div_is_zero(&self, i: Inst) -> bool {
        let d = self.f.inst(i);
        if d.opcode != Opcode::Div || bounds(self.m, d.ty).is_none() || !self.m.types.is_scalar(d.ty) {
            return false;
        }
        match (self.range(d.operands[0], 3), self.range(d.operands[1], 3)) {
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
            let Some((tlo, thi)) = bounds(m, ty) else { return };
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
                .zip(d.cases())
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
                for &c in d.cases().iter().take(16) {
                    out.push(Fact::Ne(sel, sign_extend(c, w, signed)));
                }
            }
        }
        _ => {}
    }
    out
}

fn cvp_function(m: &mut Module, fid: FuncId, cfg: &Cfg, dom: &DomTree, st: &mut Stats) {
    let Some(entry) = cfg.entry else { return };
    // Facts per block, down the dominator tree.
    let mut facts: Vec<Vec<Fact>> = vec![Vec::new(); m.func(fid).block_capacity()];
    let mut order = Vec::new();
    let mut stack = vec![entry];
    while let Some(b) = stack.pop() {
        order.push(b);
        for &c in dom.children(b) {
            let mut fc = facts[b.index()].clone();
            if let [p] = cfg.preds(c) {
                fc.extend(edge_facts(m, m.func(fid), *p, c));
            }
            facts[c.index()] = fc;
            stack.push(c);
        }
    }
    for &b in &order {
        if facts[b.index()].is_empty() {
            continue;
        }
        simplify_block(m, fid, b, &facts[b.index()], st);
    }
    // Phi incomings: a use at the end of the incoming block.
    for &b in &order {
        let insts = m.func(fid).block(b).insts.clone();
        for i in insts {
            if m.func(fid).inst(i).opcode != Opcode::Phi {
                continue;
            }
            let n = m.func(fid).inst(i).operands.len();
            for k in 0..n {
                let f = m.func(fid);
                let (v, from) = (f.inst(i).operands[k], f.inst(i).blocks[k]);
                if !cfg.is_reachable(from) || facts[from.index()].is_empty() {
                    continue;
                }
                if let Some((c, is_bool)) = constant_for(m, fid, v, &facts[from.index()]) {
                    m.func_mut(fid).set_operand(i, k, c);
                    if is_bool {
                        st.conditions += 1;
                    } else {
                        st.constants += 1;
                    }
                }
            }
        }
    }
}

/// A constant that `v` is known to equal under `facts` (and whether it is a
/// bool condition).
fn constant_for(m: &mut Module, fid: FuncId, v: Value, facts: &[Fact]) -> Option<(Value, bool)> {
    if !v.is_local() {
        return None;
    }
    let f = m.func(fid);
    let cx = Ctx { m, f, facts };
    if let Some(b) = cx.known_bool(v) {
        return Some((m.const_bool(b), true));
    }
    let ty = f.value_type(m, v);
    if !m.types.is_int(ty) || f.is_lvalue(v) {
        return None;
    }
    let (lo, hi) = facts.iter().rev().find_map(|x| match x {
        Fact::Range(w, lo, hi) if *w == v && lo == hi => Some((*lo, *hi)),
        _ => None,
    })?;
    let _ = hi;
    Some((m.const_int(ty, lo), false))
}

fn simplify_block(m: &mut Module, fid: FuncId, b: Block, facts: &[Fact], st: &mut Stats) {
    let insts = m.func(fid).block(b).insts.clone();
    for i in insts {
        if !m.func(fid).is_live(i) || m.func(fid).inst(i).opcode == Opcode::Phi {
            continue;
        }
        // Known operands become constants.
        let n = m.func(fid).inst(i).operands.len();
        for k in 0..n {
            let v = m.func(fid).inst(i).operands[k];
            if let Some((c, is_bool)) = constant_for(m, fid, v, facts) {
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
        let cx = Ctx { m, f, facts };
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
