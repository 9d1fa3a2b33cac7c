//! `phi_cleanup`: remove redundant and duplicate Phis.
//!
//! - **Redundant Phis** (Braun et al., "Simple and Efficient Construction of
//!   SSA Form", §3.2, SCC variant): the Phis are grouped into strongly
//!   connected components of the "incoming is a Phi" graph. When the values
//!   entering a component from outside are a single value `v`, every Phi of
//!   the component equals `v` and is replaced by it (this covers the plain
//!   trivial Phi, `%x = phi [%a, ^p], [%x, ^l]`, and Phi cycles that only
//!   shuffle one value around a loop). With no outside value at all the
//!   component is `undef`. An `undef` outside value is ignored when the other
//!   value is a constant, argument or register (it dominates everything).
//! - **Duplicate Phis**: two Phis of one block with the same type and the
//!   same incoming (value, block) multiset; the later is replaced.
//!
//! - Consumes: `xir` (any dialect).
//! - Produces: the same dialect.
//! - Preserves: `cfg`, `dominators`, `post_dominators`,
//!   `dominance_frontiers`, `loops`, `call_graph`.

use petgraph::graph::{DiGraph, NodeIndex};
use rustc_hash::FxHashMap;
use serde::Deserialize;
use xir::pass::{AnalysisKind, Pass, PassContext, PassDecl, PassError, PassInfo, PassOutcome, Produces};
use xir::{Block, Function, Inst, Module, Opcode, Value};

use super::util;

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Options {}

const INFO: PassInfo = PassInfo {
    name: "phi_cleanup",
    doc: "Remove redundant (trivial or cyclic) and duplicate Phis",
    consumes: &["xir"],
    produces: Produces::Same,
    eliminates: &["phi"],
    preserves: &[
        AnalysisKind::Cfg,
        AnalysisKind::Dominators,
        AnalysisKind::PostDominators,
        AnalysisKind::DominanceFrontiers,
        AnalysisKind::Loops,
        AnalysisKind::CallGraph,
    ],
};

pub struct PhiCleanup {
    _opts: Options,
}

pub fn decl() -> PassDecl {
    PassDecl {
        info: INFO,
        options: &[],
        create: |v| Ok(Box::new(PhiCleanup { _opts: xir::pass::options_from_ron(v)? })),
    }
}

impl Pass for PhiCleanup {
    fn info(&self) -> &PassInfo {
        &INFO
    }
    fn run(&self, module: &mut Module, _cx: &mut PassContext) -> Result<PassOutcome, PassError> {
        let (mut redundant, mut dups) = (0, 0);
        for fid in util::defined_functions(module) {
            let f = module.func_mut(fid);
            // One sweep of the instruction table finds the Phis; the rounds
            // only remove some (this pass creates none).
            let mut phis = live_phis(f);
            loop {
                let r = remove_redundant_phis_among(f, &phis);
                phis.retain(|&p| f.is_live(p));
                let d = remove_duplicate_phis_among(f, &phis);
                phis.retain(|&p| f.is_live(p));
                redundant += r;
                dups += d;
                if r + d == 0 {
                    break;
                }
            }
        }
        let mut out = PassOutcome::changed(redundant + dups > 0);
        out.stats.push(("redundant".into(), redundant.to_string()));
        out.stats.push(("duplicates".into(), dups.to_string()));
        Ok(out)
    }
}

fn is_phi(f: &Function, v: Value) -> Option<Inst> {
    v.as_inst().filter(|&i| f.is_live(i) && f.opcode(i) == Opcode::Phi)
}

/// Every live Phi of `f`, in id order (a sweep of the dense table).
fn live_phis(f: &Function) -> Vec<Inst> {
    f.live_opcodes_by_id().filter(|&(_, op)| op == Opcode::Phi).map(|p| p.0).collect()
}

/// Replace every Phi component fed by at most one outside value, given
/// every live Phi of `f` in any order (the result does not depend on it:
/// Tarjan yields the components operands-first whatever the node order).
/// Returns the number of Phis removed.
pub fn remove_redundant_phis_among(f: &mut Function, phis: &[Inst]) -> usize {
    if phis.is_empty() {
        return 0;
    }
    // Sized up front: growing the graph and the map by doubling copied
    // them several times on large functions.
    let mut g: DiGraph<Inst, ()> = DiGraph::with_capacity(phis.len(), 2 * phis.len());
    let mut node: FxHashMap<Inst, NodeIndex> = FxHashMap::default();
    node.reserve(phis.len());
    node.extend(phis.iter().map(|&p| (p, g.add_node(p))));
    let mut walk = f.walk(phis, xir::reads::OperandOpcodes);
    while let Some(p) = walk.next(f) {
        for &v in &f.inst(p).operands {
            if let Some(q) = is_phi(f, v) {
                g.add_edge(node[&p], node[&q], ());
            }
        }
    }
    let mut removed = 0;
    let mut dead: Vec<Inst> = Vec::new();
    // Tarjan yields components operands-first, so replacements flow upward.
    for comp in petgraph::algo::tarjan_scc(&g) {
        let members: Vec<Inst> = comp.iter().map(|&n| g[n]).collect();
        let mut outside: Vec<Value> = Vec::new();
        for &p in &members {
            for &v in &f.inst(p).operands {
                let inside = v.as_inst().is_some_and(|i| members.contains(&i));
                if !inside && !outside.contains(&v) {
                    outside.push(v);
                }
            }
        }
        if outside.len() == 2 {
            let dominates_all = |v: Value| matches!(v, Value::Const(_) | Value::Arg(_) | Value::Reg(_));
            match (outside[0], outside[1]) {
                (Value::Undef(_), v) | (v, Value::Undef(_)) if dominates_all(v) => outside = vec![v],
                _ => {}
            }
        }
        let with = match outside.as_slice() {
            [] => Value::Undef(f.inst(members[0]).ty),
            [v] => *v,
            _ => continue,
        };
        for &p in &members {
            f.replace_all_uses(Value::Inst(p), with);
        }
        removed += members.len();
        dead.extend(members);
    }
    // One batch removal: a `remove_inst` per Phi rescans its block.
    f.remove_insts(&dead);
    removed
}

/// Replace Phis that repeat an earlier Phi of their block, given every live
/// Phi of `f`. Returns how many.
fn remove_duplicate_phis_among(f: &mut Function, phis: &[Inst]) -> usize {
    let mut removed = 0;
    // Only the blocks holding a Phi (a walk of every block reads every
    // block's list). Blocks are independent here, so their order does not
    // matter.
    let mut blocks: Vec<Block> = phis.iter().filter_map(|&p| f.parent(p)).collect();
    blocks.sort_unstable();
    blocks.dedup();
    for b in blocks {
        let mut seen: FxHashMap<(xir::TypeId, Vec<(Block, Value)>), Inst> = FxHashMap::default();
        for p in util::phis_of(f, b) {
            let mut key: Vec<(Block, Value)> = util::phi_incomings(f, p).into_iter().map(|(v, b)| (b, v)).collect();
            key.sort();
            match seen.get(&(f.inst(p).ty, key.clone())) {
                Some(&first) => {
                    f.replace_all_uses(Value::Inst(p), Value::Inst(first));
                    f.remove_inst(p);
                    removed += 1;
                }
                None => {
                    seen.insert((f.inst(p).ty, key), p);
                }
            }
        }
    }
    removed
}
