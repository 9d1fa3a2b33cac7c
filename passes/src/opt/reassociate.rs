//! `reassociate`: rewrite trees of one associative, commutative operation
//! into a canonical left-leaning chain, so constants meet and fold, equal
//! leaves cancel, and equal sums written in different orders become equal
//! instructions for `early_cse` / `gvn`.
//!
//! A tree is a root instruction plus the operands that are *interior*: an
//! instruction of the same family and result type, in the same block, whose
//! only use is its parent. Everything else is a leaf. Families:
//!
//! - integer sums: `add`, `sub`, `neg` and `mul` by a constant. Each leaf gets
//!   a coefficient modulo 2^width (`x - x` cancels, `x * 3 + x` is `x * 4`,
//!   constants fold into one). Exact: integer arithmetic wraps, so it is a
//!   commutative ring and every identity of the ring holds bit for bit.
//! - integer `mul`, `bit_and`, `bit_or`, `bit_xor`: leaves sorted, constants
//!   folded, identities dropped (`* 1`, `& -1`, `| 0`, `^ 0`), absorbing
//!   constants win (`* 0`, `& 0`, `| -1`), `x & x = x`, `x | x = x`,
//!   `x ^ x = 0`. Exact for the same reason (and bitwise ops are lattices).
//! - float `add` and `mul`: **only under fast math** (the `fast_math` option
//!   or the pipeline's setting). Float addition and multiplication are not
//!   associative (rounding, overflow, NaN payloads), so without fast math
//!   float trees are never touched.
//!
//! Leaves are ordered by rank (arguments first, then instructions in reverse
//! post order of their blocks and block position), with the constant last
//! (added, or subtracted when its top bit is set: `x - 1`).
//! A tree is rebuilt just before its root when the new chain is cheaper
//! (weights: `mul` 2, anything else 1) or as cheap but different (the
//! canonical order); a second run therefore changes nothing.
//!
//! - Consumes: `xir` (any dialect).
//! - Produces: the same dialect.
//! - Preserves: `cfg`, `dominators`, `post_dominators`, `loops` (only pure
//!   instructions of one block change).

use rustc_hash::{FxHashMap, FxHashSet};
use serde::Deserialize;
use xir::pass::{AnalysisKind, OptionDoc, Pass, PassContext, PassDecl, PassError, PassInfo, PassOutcome, Produces};
use xir::{Block, FuncId, Function, Inst, InstData, Module, Opcode, Type, TypeId, Value};

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Options {
    /// Also reassociate float `add` / `mul` trees (or'ed with the pipeline's
    /// fast-math setting). Changes results: only for fast-math pipelines.
    pub fast_math: bool,
}

const INFO: PassInfo = PassInfo {
    name: "reassociate",
    doc: "Canonicalize trees of integer add/sub/mul/and/or/xor (float add/mul under fast math); fold their constants",
    consumes: &["xir"],
    produces: Produces::Same,
    eliminates: &["add", "sub", "neg", "mul", "bit_and", "bit_or", "bit_xor"],
    preserves: &[AnalysisKind::Cfg, AnalysisKind::Dominators, AnalysisKind::PostDominators, AnalysisKind::Loops],
};

const OPTIONS: &[OptionDoc] = &[OptionDoc {
    name: "fast_math",
    ty: "bool",
    default: "false",
    doc: "also reassociate float add/mul trees (also on with --fast-math); not exact",
}];

pub struct Reassociate {
    opts: Options,
}

pub fn decl() -> PassDecl {
    PassDecl {
        info: INFO,
        options: OPTIONS,
        create: |v| Ok(Box::new(Reassociate { opts: xir::pass::options_from_ron(v)? })),
    }
}

impl Pass for Reassociate {
    fn info(&self) -> &PassInfo {
        &INFO
    }
    fn run(&self, module: &mut Module, cx: &mut PassContext) -> Result<PassOutcome, PassError> {
        let fast = self.opts.fast_math || cx.fast_math;
        let mut st = Stats::default();
        let funcs = crate::memory::util::defined_functions(module);
        for fid in funcs {
            let cfg = cx.analyses.cfg(module, fid);
            let rank = ranks(module.func(fid), &cfg.rpo);
            for &b in &cfg.rpo {
                reassociate_block(module, fid, b, fast, &rank, &mut st);
            }
        }
        let mut out = PassOutcome::changed(st.trees > 0);
        out.stats.push(("trees".into(), st.trees.to_string()));
        out.stats.push(("removed".into(), st.removed.to_string()));
        Ok(out)
    }
}

#[derive(Default)]
struct Stats {
    trees: usize,
    /// Net instructions removed.
    removed: isize,
}

/// The kind of tree an opcode roots.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
enum Family {
    /// Integer `add` / `sub` / `neg` / `mul` by a constant, with coefficients.
    Sum,
    /// One associative, commutative opcode (integer mul / bitwise, or float
    /// add / mul under fast math).
    Same(Opcode),
}

/// One step of a rebuilt chain; operands are leaves, the constant, or the
/// result of an earlier step.
#[derive(Clone, Debug, PartialEq)]
enum Arg {
    Leaf(Value),
    Const(u64),
    Step(usize),
}

type Plan = Vec<(Opcode, Vec<Arg>)>;

/// What a plan evaluates to.
#[derive(Clone, Debug, PartialEq)]
enum Outcome {
    /// The last step's value.
    Chain(Plan),
    /// An existing value (one leaf with coefficient 1 and nothing else).
    Leaf(Value),
    /// A constant.
    Const(u64),
}

/// Rank of every argument and instruction: arguments first, then
/// instructions in reverse post order.
fn ranks(f: &Function, rpo: &[Block]) -> FxHashMap<Value, u64> {
    let mut r = FxHashMap::default();
    for a in 0..f.args.len() {
        r.insert(Value::Arg(a as u32), 1 + a as u64);
    }
    let mut n = 1 + f.args.len() as u64;
    for &b in rpo {
        for &i in f.block(b).insts() {
            r.insert(Value::Inst(i), n);
            n += 1;
        }
    }
    r
}

fn int_width(m: &Module, ty: TypeId) -> Option<u32> {
    match m.types.get(ty) {
        Type::Int { bits, .. } => Some(*bits as u32),
        _ => None,
    }
}

fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// The family `i` roots, if any.
fn family(m: &Module, f: &Function, i: Inst, fast: bool) -> Option<Family> {
    let d = f.inst(i);
    if d.operands.is_empty() || d.operands.iter().any(|&v| f.value_type(m, v) != d.ty) {
        return None;
    }
    if int_width(m, d.ty).is_some() {
        return match d.opcode {
            Opcode::Add | Opcode::Sub | Opcode::Neg => Some(Family::Sum),
            Opcode::Mul if d.operands.iter().any(|&v| m.const_bits(v).is_some()) => Some(Family::Sum),
            Opcode::Mul | Opcode::BitAnd | Opcode::BitOr | Opcode::BitXor => Some(Family::Same(d.opcode)),
            _ => None,
        };
    }
    let is_f =
        matches!(m.types.get(d.ty), Type::Float(xir::FloatFormat::F32 | xir::FloatFormat::F64 | xir::FloatFormat::F16));
    if fast && is_f && matches!(d.opcode, Opcode::Add | Opcode::Mul) {
        return Some(Family::Same(d.opcode));
    }
    None
}

/// Whether operand `v` of a tree node of family `fam` in block `b` is an
/// interior node of the tree.
fn interior(m: &Module, f: &Function, v: Value, b: Block, ty: TypeId, fam: Family, fast: bool) -> Option<Inst> {
    let i = v.as_inst()?;
    let d = f.inst(i);
    (f.parent(i) == Some(b) && d.ty == ty && f.uses(v).len() == 1 && family(m, f, i, fast) == Some(fam)).then_some(i)
}

/// Collect the leaves of a sum tree with their coefficients; returns the
/// interior nodes (root included) and the constant term.
fn sum_leaves(
    m: &Module,
    f: &Function,
    root: Inst,
    bits: u32,
    coef: &mut Vec<(Value, u64)>,
    nodes: &mut Vec<Inst>,
) -> u64 {
    let mk = mask(bits);
    let b = f.parent(root).expect("live");
    let ty = f.inst(root).ty;
    let mut konst = 0u64;
    let mut slot: FxHashMap<Value, usize> = FxHashMap::default();
    let mut work: Vec<(Value, u64)> = vec![(Value::Inst(root), 1)];
    let mut is_root = true;
    while let Some((v, c)) = work.pop() {
        let node = if is_root {
            is_root = false;
            v.as_inst()
        } else {
            interior(m, f, v, b, ty, Family::Sum, false)
        };
        let Some(i) = node else {
            match m.const_bits(v) {
                Some(k) => konst = konst.wrapping_add(k.wrapping_mul(c)) & mk,
                None => match slot.get(&v) {
                    Some(&k) => coef[k].1 = coef[k].1.wrapping_add(c) & mk,
                    None => {
                        slot.insert(v, coef.len());
                        coef.push((v, c & mk));
                    }
                },
            }
            continue;
        };
        nodes.push(i);
        let d = f.inst(i);
        let (x, y) = (d.operands[0], d.operands.get(1).copied());
        match d.opcode {
            Opcode::Add => work.extend([(x, c), (y.expect("binary"), c)]),
            Opcode::Sub => work.extend([(x, c), (y.expect("binary"), c.wrapping_neg() & mk)]),
            Opcode::Neg => work.push((x, c.wrapping_neg() & mk)),
            _ => {
                // mul by a constant: scale the other operand.
                let y = y.expect("binary");
                let (k, other) = match m.const_bits(y) {
                    Some(k) => (k, x),
                    None => (m.const_bits(x).expect("family checked a constant"), y),
                };
                work.push((other, c.wrapping_mul(k) & mk));
            }
        }
    }
    konst
}

/// The canonical chain of a sum. `have` lists the constants of the
/// existing tree: a coefficient or constant term is written with whichever
/// sign (`+ x * c` or `- x * -c`, `+ k` or `- -k`) reuses one of them, else
/// with the smaller constant (`x - 1`, not `x + 0xffffffff`).
fn plan_sum(mut terms: Vec<(Value, u64)>, konst: u64, bits: u32, have: &[u64]) -> Outcome {
    let mk = mask(bits);
    let negative = |c: u64| {
        let n = c.wrapping_neg() & mk;
        if have.contains(&c) {
            false
        } else {
            have.contains(&n) || n < c
        }
    };
    terms.retain(|t| t.1 != 0);
    if terms.is_empty() {
        return Outcome::Const(konst);
    }
    if terms.len() == 1 && terms[0].1 == 1 && konst == 0 {
        return Outcome::Leaf(terms[0].0);
    }
    // Start from a term that is added when there is one.
    if let Some(p) = terms.iter().position(|t| t.1 == 1 || (t.1 != mk && !negative(t.1))) {
        let t = terms.remove(p);
        terms.insert(0, t);
    }
    let mut plan: Plan = Vec::new();
    let mut acc: Option<Arg> = None;
    for (v, c) in terms {
        let (op, term) = if c == 1 {
            (Opcode::Add, Arg::Leaf(v))
        } else if c == mk {
            (Opcode::Sub, Arg::Leaf(v))
        } else {
            let (op, k) = if negative(c) { (Opcode::Sub, c.wrapping_neg() & mk) } else { (Opcode::Add, c) };
            plan.push((Opcode::Mul, vec![Arg::Leaf(v), Arg::Const(k)]));
            (op, Arg::Step(plan.len() - 1))
        };
        acc = Some(match acc {
            None if op == Opcode::Sub => {
                plan.push((Opcode::Neg, vec![term]));
                Arg::Step(plan.len() - 1)
            }
            None => term,
            Some(a) => {
                plan.push((op, vec![a, term]));
                Arg::Step(plan.len() - 1)
            }
        });
    }
    let acc = acc.expect("at least one term");
    if konst != 0 && negative(konst) {
        plan.push((Opcode::Sub, vec![acc, Arg::Const(konst.wrapping_neg() & mk)]));
    } else if konst != 0 {
        plan.push((Opcode::Add, vec![acc, Arg::Const(konst)]));
    } else if let Arg::Leaf(v) = acc {
        return Outcome::Leaf(v);
    }
    Outcome::Chain(plan)
}

/// Leaves of a same-opcode tree (with repeats), the interior nodes and the
/// folded constant (`None`: no constant leaf).
fn same_leaves(m: &Module, f: &Function, root: Inst, op: Opcode, fast: bool) -> (Vec<Value>, Vec<Inst>, Vec<u64>) {
    let b = f.parent(root).expect("live");
    let ty = f.inst(root).ty;
    let (mut leaves, mut nodes, mut consts) = (Vec::new(), Vec::new(), Vec::new());
    let mut work = vec![Value::Inst(root)];
    let mut is_root = true;
    while let Some(v) = work.pop() {
        let node = if is_root {
            is_root = false;
            v.as_inst()
        } else {
            interior(m, f, v, b, ty, Family::Same(op), fast)
        };
        match node {
            Some(i) => {
                nodes.push(i);
                work.extend(f.inst(i).operands.iter().rev().copied());
            }
            None => match m.const_bits(v) {
                Some(k) => consts.push(k),
                None => leaves.push(v),
            },
        }
    }
    (leaves, nodes, consts)
}

/// The canonical chain of a same-opcode tree; `None` when constants do not fold.
fn plan_same(m: &Module, ty: TypeId, op: Opcode, mut leaves: Vec<Value>, consts: Vec<u64>) -> Option<Outcome> {
    let int = int_width(m, ty);
    let fold = |a: u64, b: u64| xir::interp::fold_scalar(&m.types, op, ty, ty, &[a, b]);
    let mut konst: Option<u64> = None;
    for k in consts {
        konst = Some(match konst {
            None => k,
            Some(a) => fold(a, k)?,
        });
    }
    if let Some(bits) = int {
        let ones = mask(bits);
        // Leaves are sorted already: equal leaves are adjacent.
        match op {
            Opcode::BitAnd | Opcode::BitOr => leaves.dedup(),
            Opcode::BitXor => {
                let mut kept: Vec<Value> = Vec::new();
                for v in leaves {
                    if kept.last() == Some(&v) {
                        kept.pop();
                    } else {
                        kept.push(v);
                    }
                }
                leaves = kept;
            }
            _ => {}
        }
        let (identity, absorbing) = match op {
            Opcode::Mul => (Some(1), Some(0)),
            Opcode::BitAnd => (Some(ones), Some(0)),
            Opcode::BitOr => (Some(0), Some(ones)),
            Opcode::BitXor => (Some(0), None),
            _ => (None, None),
        };
        if let Some(k) = konst.filter(|&k| Some(k) == absorbing) {
            return Some(Outcome::Const(k));
        }
        if konst.is_some() && konst == identity {
            konst = None;
        }
        if leaves.is_empty() {
            return Some(Outcome::Const(konst.or(identity).expect("integer families have identities")));
        }
    }
    if leaves.is_empty() {
        return konst.map(Outcome::Const);
    }
    if leaves.len() == 1 && konst.is_none() {
        return Some(Outcome::Leaf(leaves[0]));
    }
    let mut plan: Plan = Vec::new();
    let mut acc = Arg::Leaf(leaves[0]);
    for &v in &leaves[1..] {
        plan.push((op, vec![acc, Arg::Leaf(v)]));
        acc = Arg::Step(plan.len() - 1);
    }
    if let Some(k) = konst {
        plan.push((op, vec![acc, Arg::Const(k)]));
    }
    Some(Outcome::Chain(plan))
}

fn cost(plan: &Plan) -> usize {
    plan.iter().map(|(op, _)| if *op == Opcode::Mul { 2 } else { 1 }).sum()
}

/// The existing tree as a plan (nodes in post order), to detect a tree
/// already in canonical form.
fn describe(m: &Module, f: &Function, root: Inst, nodes: &[Inst]) -> Plan {
    let mut plan = Plan::new();
    let mut step_of: FxHashMap<Inst, usize> = FxHashMap::default();
    let nodes: FxHashSet<Inst> = nodes.iter().copied().collect();
    let mut stack = vec![(root, false)];
    while let Some((i, done)) = stack.pop() {
        let d = f.inst(i);
        if !done {
            stack.push((i, true));
            for &v in d.operands.iter().rev() {
                if let Some(c) = v.as_inst().filter(|c| nodes.contains(c) && *c != root) {
                    stack.push((c, false));
                }
            }
            continue;
        }
        let args = d
            .operands
            .iter()
            .map(|&v| match v.as_inst().and_then(|c| step_of.get(&c)) {
                Some(&s) => Arg::Step(s),
                None => match m.const_bits(v) {
                    Some(k) => Arg::Const(k),
                    None => Arg::Leaf(v),
                },
            })
            .collect();
        plan.push((d.opcode, args));
        step_of.insert(i, plan.len() - 1);
    }
    plan
}

/// The constants a plan uses.
fn consts_of(p: &Plan) -> Vec<u64> {
    p.iter()
        .flat_map(|(_, args)| args.iter().filter_map(|a| if let Arg::Const(k) = a { Some(*k) } else { None }))
        .collect()
}

/// Whether `new` should replace `old`. Instructions count 2 and a constant
/// the tree did not use counts 1 (it costs a declaration, not work at run
/// time): `(x + 1) + 2` becomes `x + 3`, but `x - q * -7` does not become
/// `x + q * 7`. On a tie without new constants, the cheaper form (`mul`
/// weighs 2) or, as cheap, the canonical one wins.
fn better(new: &Plan, old: &Plan) -> bool {
    let have = consts_of(old);
    let mut fresh = consts_of(new);
    fresh.retain(|k| !have.contains(k));
    fresh.sort();
    fresh.dedup();
    let (n, o) = (2 * new.len() + fresh.len(), 2 * old.len());
    n < o || (n == o && fresh.is_empty() && (cost(new) < cost(old) || (cost(new) == cost(old) && new != old)))
}

fn reassociate_block(m: &mut Module, fid: FuncId, b: Block, fast: bool, rank: &FxHashMap<Value, u64>, st: &mut Stats) {
    let insts = m.func(fid).block(b).insts().to_vec();
    for root in insts {
        let f = m.func(fid);
        if !f.is_live(root) {
            continue;
        }
        let Some(fam) = family(m, f, root, fast) else { continue };
        let ty = f.inst(root).ty;
        // Not a root when it is an interior node of its user's tree.
        if let [u] = f.uses(Value::Inst(root)) {
            let ud = f.inst(u.user);
            if f.parent(u.user) == Some(b) && ud.ty == ty && family(m, f, u.user, fast) == Some(fam) {
                continue;
            }
        }
        let by_rank = |v: &Value| (rank.get(v).copied().unwrap_or(u64::MAX), *v);
        let (result, nodes) = match fam {
            Family::Sum => {
                let bits = int_width(m, ty).expect("sum trees are integer");
                let (mut terms, mut nodes) = (Vec::new(), Vec::new());
                let konst = sum_leaves(m, f, root, bits, &mut terms, &mut nodes);
                terms.sort_by_key(|t| by_rank(&t.0));
                let have = consts_of(&describe(m, f, root, &nodes));
                (plan_sum(terms, konst, bits, &have), nodes)
            }
            Family::Same(op) => {
                let (mut leaves, nodes, consts) = same_leaves(m, f, root, op, fast);
                leaves.sort_by_key(by_rank);
                let Some(r) = plan_same(m, ty, op, leaves, consts) else { continue };
                (r, nodes)
            }
        };
        let old = describe(m, f, root, &nodes);
        let better = match &result {
            Outcome::Chain(p) => better(p, &old),
            _ => true,
        };
        if !better {
            continue;
        }
        let new_count = match &result {
            Outcome::Chain(p) => p.len(),
            _ => 0,
        };
        if apply(m, fid, b, root, ty, &result, &nodes) {
            st.trees += 1;
            st.removed += nodes.len() as isize - new_count as isize;
        }
    }
}

/// Materialize `result` before `root`, redirect the root's uses and delete
/// the old tree. False (nothing changed) when a Phi would refer to itself.
fn apply(m: &mut Module, fid: FuncId, b: Block, root: Inst, ty: TypeId, result: &Outcome, nodes: &[Inst]) -> bool {
    let span = m.func(fid).inst_span(root);
    let md = m.func(fid).inst_md(root).to_metadata();
    let new = match result {
        Outcome::Leaf(v) => *v,
        Outcome::Const(k) => m.const_scalar(ty, *k),
        Outcome::Chain(plan) => {
            let consts: Vec<Vec<Value>> = plan
                .iter()
                .map(|(_, args)| {
                    args.iter()
                        .map(|a| if let Arg::Const(k) = a { m.const_scalar(ty, *k) } else { Value::Undef(ty) })
                        .collect()
                })
                .collect();
            let f = m.func_mut(fid);
            let mut made: Vec<Value> = Vec::new();
            for (k, (op, args)) in plan.iter().enumerate() {
                let mut d = InstData::new(*op, ty);
                d.span = span;
                if k + 1 == plan.len() {
                    d.md = md.clone();
                }
                d.operands = args
                    .iter()
                    .zip(&consts[k])
                    .map(|(a, &c)| match a {
                        Arg::Leaf(v) => *v,
                        Arg::Const(_) => c,
                        Arg::Step(s) => made[*s],
                    })
                    .collect();
                let i = f.create_inst(d);
                let pos = f.position(root).expect("root is placed");
                f.insert_inst(b, pos, i);
                made.push(Value::Inst(i));
            }
            *made.last().expect("non-empty plan")
        }
    };
    let f = m.func_mut(fid);
    if !super::util::replace_uses_keeping_phis_acyclic(f, Value::Inst(root), new) {
        if let Outcome::Chain(plan) = result {
            let pos = f.position(root).expect("root is placed");
            let made: Vec<Inst> = f.block(b).insts()[pos - plan.len()..pos].to_vec();
            for &i in made.iter().rev() {
                f.remove_inst(i);
            }
        }
        return false;
    }
    // Interior nodes are used only inside the tree: all dead now.
    f.remove_insts(nodes);
    true
}
