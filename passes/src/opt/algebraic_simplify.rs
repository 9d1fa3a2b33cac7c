//! `algebraic_simplify`: equality saturation (egg) over the pure arithmetic
//! of each basic block, with rewrite rules read from data
//! (`passes/rules/algebraic.ron`, see `egraph::rules`).
//!
//! Per block and per scalar type (integers of any width, f32, f64), the
//! candidate instructions — `pure` + `arithmetic` opcodes whose operands and
//! result all have that type — form one e-graph; every other operand
//! (arguments, loads, values of other blocks or types, comparisons) is an
//! opaque input. No memory, control or convergent operation is ever a node,
//! so the rewrite is sound whatever the dialect. Constants fold with the
//! interpreter's arithmetic; rules that hold only under fast math run only
//! when `fast_math` (the option or the pipeline's setting) is on.
//!
//! After saturation (or a budget), each root — a candidate used outside the
//! graph — is extracted by a cost model (opcode-weighted tree size) and
//! rebuilt just before the root, reusing identical instructions available
//! there; a root is rewritten only when the extracted form is strictly
//! cheaper, so the pass reaches a fixed point. Dead candidates are deleted.
//!
//! **Budgets** (options): `iterations` (egg iterations per e-graph, default
//! 8), `nodes` (e-nodes per e-graph, default 10000), `time_ms` (wall time per
//! function, shared by its e-graphs, default 200). A stopped graph is still
//! extracted: every class holds only proven equalities. The stop reasons of
//! the e-graphs and the rules that fired are the pass statistics
//! (`stop_reasons`, `rules_fired`), shown by `--time-passes` and
//! `--print-changed`. A time budget makes results depend on machine speed;
//! the defaults are chosen so that iteration or node limits bind first.
//!
//! - Consumes: `xir` (any dialect).
//! - Produces: the same dialect.
//! - Preserves: `cfg`, `dominators`, `post_dominators`, `loops` (no block or
//!   terminator changes).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use egg::{EGraph, Extractor, Id, Runner, StopReason};
use rustc_hash::{FxHashMap, FxHashSet};
use serde::Deserialize;
use xir::pass::{
    AnalysisKind, FileError, OptionDoc, OptionsError, Pass, PassContext, PassDecl, PassError, PassInfo, PassOutcome,
    Produces,
};
use xir::{Block, FuncId, Inst, InstData, Module, Opcode, TypeId, Value};

use super::egraph::lang::{is_node_opcode, node_cost, ConstFold, OpCost, XNode};
use super::egraph::rules::{RuleSet, Scalar, BUILTIN};

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Options {
    /// egg iterations per e-graph.
    pub iterations: usize,
    /// e-nodes per e-graph.
    pub nodes: usize,
    /// Wall-clock milliseconds per function (all its e-graphs).
    pub time_ms: u64,
    /// Also apply the fast-math-only rules (or'ed with the pipeline's setting).
    pub fast_math: bool,
    /// A rules file to use instead of the built-in `passes/rules/algebraic.ron`.
    #[serde(deserialize_with = "xir::pass::optional")]
    pub rules_file: Option<String>,
}

impl Default for Options {
    fn default() -> Self {
        Options { iterations: 8, nodes: 10_000, time_ms: 200, fast_math: false, rules_file: None }
    }
}

const INFO: PassInfo = PassInfo {
    name: "algebraic_simplify",
    doc: "E-graph simplification of pure arithmetic per block, rules from passes/rules/algebraic.ron",
    consumes: &["xir"],
    produces: Produces::Same,
    eliminates: &["@arithmetic"],
    preserves: &[AnalysisKind::Cfg, AnalysisKind::Dominators, AnalysisKind::PostDominators, AnalysisKind::Loops],
};

const OPTIONS: &[OptionDoc] = &[
    OptionDoc {
        name: "iterations",
        ty: "usize",
        default: "8",
        doc: "egg iterations per e-graph (one per block and type)",
    },
    OptionDoc { name: "nodes", ty: "usize", default: "10000", doc: "e-node limit per e-graph" },
    OptionDoc { name: "time_ms", ty: "u64", default: "200", doc: "wall-clock budget per function, in milliseconds" },
    OptionDoc {
        name: "fast_math",
        ty: "bool",
        default: "false",
        doc: "apply fast-math-only rules (also on with --fast-math)",
    },
    OptionDoc { name: "rules_file", ty: "string", default: "none", doc: "rules file replacing the built-in rule set" },
];

pub struct AlgebraicSimplify {
    opts: Options,
    rules: RuleSet,
}

impl AlgebraicSimplify {
    /// Build the pass; the rules are parsed and checked here.
    pub fn new(opts: Options) -> Result<Self, OptionsError> {
        let rules = match &opts.rules_file {
            None => RuleSet::parse(BUILTIN, "passes/rules/algebraic.ron")?,
            Some(path) => {
                let src = std::fs::read_to_string(path).map_err(|e| FileError {
                    file: path.clone(),
                    span: None,
                    message: format!("cannot read rules file: {e}"),
                })?;
                RuleSet::parse(&src, path)?
            }
        };
        Ok(AlgebraicSimplify { opts, rules })
    }
}

pub fn decl() -> PassDecl {
    PassDecl {
        info: INFO,
        options: OPTIONS,
        create: |v| Ok(Box::new(AlgebraicSimplify::new(xir::pass::options_from_ron(v)?)?)),
    }
}

/// What one run did, summed over e-graphs.
#[derive(Default)]
struct Stats {
    graphs: usize,
    stop: BTreeMap<&'static str, usize>,
    fired: BTreeMap<String, usize>,
    rewritten: usize,
    removed: usize,
}

impl Pass for AlgebraicSimplify {
    fn info(&self) -> &PassInfo {
        &INFO
    }
    fn run(&self, module: &mut Module, cx: &mut PassContext) -> Result<PassOutcome, PassError> {
        let fast = self.opts.fast_math || cx.fast_math;
        let mut st = Stats::default();
        let funcs = crate::memory::util::defined_functions(module);
        for fid in funcs {
            let deadline = Instant::now() + Duration::from_millis(self.opts.time_ms);
            let blocks = module.func(fid).blocks().to_vec();
            for b in blocks {
                simplify_block(module, fid, b, self, fast, deadline, &mut st);
            }
        }
        let mut out = PassOutcome::changed(st.rewritten > 0);
        out.stats.push(("egraphs".into(), st.graphs.to_string()));
        let stops: Vec<String> = st.stop.iter().map(|(k, n)| format!("{k}: {n}")).collect();
        out.stats.push(("stop_reasons".into(), if stops.is_empty() { "none".into() } else { stops.join(", ") }));
        let fired: Vec<String> = st.fired.iter().map(|(k, n)| format!("{k} x{n}")).collect();
        out.stats.push(("rules_fired".into(), if fired.is_empty() { "none".into() } else { fired.join(", ") }));
        out.stats.push(("rewritten_roots".into(), st.rewritten.to_string()));
        out.stats.push(("removed_insts".into(), st.removed.to_string()));
        Ok(out)
    }
}

fn stop_name(r: &Option<StopReason>) -> &'static str {
    match r {
        Some(StopReason::Saturated) | None => "saturated",
        Some(StopReason::IterationLimit(_)) => "iteration limit",
        Some(StopReason::NodeLimit(_)) => "node limit",
        Some(StopReason::TimeLimit(_)) => "time limit",
        Some(StopReason::Other(_)) => "other",
    }
}

/// The candidate instructions of `b`, grouped by type in block order.
fn candidates(m: &Module, fid: FuncId, b: Block) -> Vec<(TypeId, Scalar, Vec<Inst>)> {
    let f = m.func(fid);
    let mut groups: Vec<(TypeId, Scalar, Vec<Inst>)> = Vec::new();
    for &i in f.block(b).insts() {
        let d = f.inst(i);
        if !is_node_opcode(d.opcode) || d.operands.is_empty() {
            continue;
        }
        let Some(s) = Scalar::of(&m.types, d.ty) else { continue };
        if !d.operands.iter().all(|&v| f.value_type(m, v) == d.ty) {
            continue;
        }
        match groups.iter_mut().find(|g| g.0 == d.ty) {
            Some(g) => g.2.push(i),
            None => groups.push((d.ty, s, vec![i])),
        }
    }
    groups
}

fn simplify_block(
    m: &mut Module,
    fid: FuncId,
    b: Block,
    pass: &AlgebraicSimplify,
    fast: bool,
    deadline: Instant,
    st: &mut Stats,
) {
    for (ty, scalar, cands) in candidates(m, fid, b) {
        let now = Instant::now();
        if now >= deadline {
            *st.stop.entry("time limit").or_default() += 1;
            return;
        }
        simplify_group(m, fid, b, ty, scalar, &cands, pass, fast, deadline - now, st);
    }
}

/// One e-graph: build, saturate, extract, rebuild.
#[allow(clippy::too_many_arguments)]
fn simplify_group(
    m: &mut Module,
    fid: FuncId,
    b: Block,
    ty: TypeId,
    scalar: Scalar,
    cands: &[Inst],
    pass: &AlgebraicSimplify,
    fast: bool,
    time: Duration,
    st: &mut Stats,
) {
    let f = m.func(fid);
    let cand_set: FxHashSet<Inst> = cands.iter().copied().collect();
    let ordinal: FxHashMap<Inst, usize> = f.block(b).insts().iter().enumerate().map(|(k, &i)| (i, k)).collect();
    let roots: Vec<Inst> =
        cands.iter().copied().filter(|&i| f.uses(Value::Inst(i)).iter().any(|u| !cand_set.contains(&u.user))).collect();
    if roots.is_empty() {
        return;
    }

    // Build the e-graph.
    let mut eg: EGraph<XNode, ConstFold> = EGraph::new(ConstFold { types: Arc::new(m.types.clone()), ty });
    let mut class_of: FxHashMap<Inst, Id> = FxHashMap::default();
    let mut inputs: Vec<Value> = Vec::new();
    let mut input_idx: FxHashMap<Value, u32> = FxHashMap::default();
    // Original tree cost of each candidate (the cost model of extraction).
    let mut orig_cost: FxHashMap<Inst, usize> = FxHashMap::default();
    for &i in cands {
        let d = f.inst(i);
        let mut ch = Vec::with_capacity(d.operands.len());
        let mut cost = 0usize;
        for &v in &d.operands {
            let id = match v.as_inst().and_then(|vi| class_of.get(&vi).map(|&id| (vi, id))) {
                Some((vi, id)) => {
                    cost = cost.saturating_add(orig_cost[&vi]);
                    id
                }
                None => match m.const_bits(v) {
                    Some(bits) => eg.add(XNode::Const(bits)),
                    None => {
                        let n = *input_idx.entry(v).or_insert_with(|| {
                            inputs.push(v);
                            (inputs.len() - 1) as u32
                        });
                        eg.add(XNode::Input(n))
                    }
                },
            };
            ch.push(id);
        }
        let node = XNode::Op(d.opcode, ch);
        orig_cost.insert(i, cost.saturating_add(node_cost(&node)));
        class_of.insert(i, eg.add(node));
    }

    let rewrites = pass.rules.rewrites(scalar, fast);
    let analysis = eg.analysis.clone();
    let runner: Runner<XNode, ConstFold, ()> = Runner::new(analysis)
        .with_egraph(eg)
        .with_iter_limit(pass.opts.iterations)
        .with_node_limit(pass.opts.nodes)
        .with_time_limit(time)
        .run(&rewrites);
    st.graphs += 1;
    *st.stop.entry(stop_name(&runner.stop_reason)).or_default() += 1;
    for it in &runner.iterations {
        for (name, n) in &it.applied {
            *st.fired.entry(name.to_string()).or_default() += n;
        }
    }
    let eg = &runner.egraph;
    let ex = Extractor::new(eg, OpCost);

    // Existing instructions by (opcode, operands): reusable from their ordinal on.
    let mut avail: FxHashMap<(Opcode, Vec<Value>), (Value, usize)> = FxHashMap::default();
    for &i in cands {
        let d = f.inst(i);
        avail.entry((d.opcode, d.operands.to_vec())).or_insert((Value::Inst(i), ordinal[&i]));
    }

    let mut rewritten = 0;
    let mut created: Vec<Inst> = Vec::new();
    for &r in &roots {
        let k = ordinal[&r];
        let root_class = eg.find(class_of[&r]);
        if ex.find_best_cost(root_class) >= orig_cost[&r] {
            continue;
        }
        if let Some(v) =
            materialize(m, fid, b, r, k, ty, root_class, eg, &ex, &inputs, &ordinal, &mut avail, &mut created)
        {
            if v != Value::Inst(r) && super::util::replace_uses_keeping_phis_acyclic(m.func_mut(fid), Value::Inst(r), v)
            {
                rewritten += 1;
            }
        }
    }
    let f = m.func_mut(fid);
    // Instructions built for a root that was then kept (its replacement
    // would have made a Phi refer to itself) are unused: delete them.
    for &i in created.iter().rev() {
        if f.is_live(i) && !f.has_uses(Value::Inst(i)) {
            f.remove_inst(i);
        }
    }
    if rewritten == 0 {
        return;
    }
    st.rewritten += rewritten;
    // Delete candidates left without uses (users come after definitions).
    for &i in cands.iter().rev() {
        if f.is_live(i) && !f.has_uses(Value::Inst(i)) {
            f.remove_inst(i);
            st.removed += 1;
        }
    }
}

/// Rebuild the best term of `class` just before root `r` (ordinal `k`);
/// `None` when it needs a value not yet defined there.
#[allow(clippy::too_many_arguments)]
fn materialize(
    m: &mut Module,
    fid: FuncId,
    b: Block,
    r: Inst,
    k: usize,
    ty: TypeId,
    class: Id,
    eg: &EGraph<XNode, ConstFold>,
    ex: &Extractor<OpCost, XNode, ConstFold>,
    inputs: &[Value],
    ordinal: &FxHashMap<Inst, usize>,
    avail: &mut FxHashMap<(Opcode, Vec<Value>), (Value, usize)>,
    created: &mut Vec<Inst>,
) -> Option<Value> {
    // Iterative post-order over the extracted term (the extractor's choice
    // is acyclic), so deep expression chains cannot overflow the stack.
    let mut done: FxHashMap<Id, Value> = FxHashMap::default();
    let root = eg.find(class);
    let mut stack: Vec<(Id, bool)> = vec![(root, false)];
    while let Some((c, expanded)) = stack.pop() {
        if done.contains_key(&c) {
            continue;
        }
        match ex.find_best_node(c) {
            XNode::Const(bits) => {
                let v = m.const_scalar(ty, *bits);
                done.insert(c, v);
            }
            XNode::Input(n) => {
                let v = inputs[*n as usize];
                if let Some(&o) = v.as_inst().and_then(|i| ordinal.get(&i)) {
                    if o >= k {
                        return None;
                    }
                }
                done.insert(c, v);
            }
            XNode::Op(op, ch) if !expanded => {
                let _ = op;
                stack.push((c, true));
                stack.extend(ch.iter().map(|&x| (eg.find(x), false)));
            }
            XNode::Op(op, ch) => {
                let ops: Vec<Value> = ch.iter().map(|&x| done[&eg.find(x)]).collect();
                let key = (*op, ops);
                let v = match avail.get(&key) {
                    Some(&(v, o)) if o <= k => v,
                    _ => {
                        let f = m.func_mut(fid);
                        let mut d = InstData::new(*op, ty);
                        d.operands = key.1.iter().copied().collect();
                        d.span = f.inst_span(r);
                        let i = f.create_inst(d);
                        let pos = f.position(r)?;
                        f.insert_inst(b, pos, i);
                        created.push(i);
                        avail.insert(key, (Value::Inst(i), k));
                        Value::Inst(i)
                    }
                };
                done.insert(c, v);
            }
        }
    }
    done.get(&root).copied()
}
