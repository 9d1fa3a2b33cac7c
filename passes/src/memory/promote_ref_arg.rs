//! `promote_ref_arg`: turn read-only reference arguments of callables into
//! value arguments; each call site loads the lvalue it passed, once, right
//! before the call. This is step 2 of the reference's legalization: fewer
//! Function-storage pointers cross callable boundaries.
//!
//! A reference parameter `k` of callable `f` is promoted when
//! - its type is plain data;
//! - the fixed-point `ArgumentUsage` says `f` (and all it calls with it)
//!   never writes it;
//! - every use is the address of a `load`, or the same argument passed on to
//!   a parameter that is itself promoted (decided as a greatest fixed point,
//!   so recursion is fine). A GEP into it keeps it a reference;
//! - `f` writes no memory except its own local allocas, directly or through
//!   callees (no buffer writes, atomics, barriers or externals). Otherwise a
//!   write through another alias could change what `f` reads, and a value
//!   snapshot taken at the call would differ.
//!
//! Kernels and externals keep their signatures.
//!
//! Consumes: `xir` (any dialect). Produces: the same dialect.
//! Preserves: CFG, dominators, frontiers, loops, call graph (only loads are
//! added and removed).

use rustc_hash::{FxHashMap, FxHashSet};
use serde::Deserialize;
use xir::analysis::{ArgumentUsage, CallGraph};
use xir::pass::{AnalysisKind, Pass, PassContext, PassDecl, PassError, PassInfo, PassOutcome, Produces};
use xir::{ArgKind, FuncId, Function, FunctionKind, Inst, Metadata, Module, Opcode, Trait, Use, Value};

use super::util;

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Options {}

const INFO: PassInfo = PassInfo {
    name: "promote_ref_arg",
    doc: "Pass read-only reference arguments of callables by value",
    consumes: &["xir"],
    produces: Produces::Same,
    eliminates: &[],
    preserves: &[
        AnalysisKind::Cfg,
        AnalysisKind::Dominators,
        AnalysisKind::PostDominators,
        AnalysisKind::DominanceFrontiers,
        AnalysisKind::Loops,
        AnalysisKind::CallGraph,
    ],
};

pub struct PromoteRefArg {
    _opts: Options,
}

pub fn decl() -> PassDecl {
    PassDecl {
        info: INFO,
        options: &[],
        create: |v| Ok(Box::new(PromoteRefArg { _opts: xir::pass::options_from_ron(v)? })),
    }
}

impl Pass for PromoteRefArg {
    fn info(&self) -> &PassInfo {
        &INFO
    }
    fn run(&self, module: &mut Module, _cx: &mut PassContext) -> Result<PassOutcome, PassError> {
        let promoted = promotable_params(module);
        let n = promoted.len();
        if n > 0 {
            rewrite(module, &promoted);
        }
        let mut out = PassOutcome::changed(n > 0);
        out.stats.push(("promoted".into(), n.to_string()));
        Ok(out)
    }
}

/// Whether the address `v` of `f` derives (through GEPs) from a local alloca.
fn local_address(f: &Function, mut v: Value) -> bool {
    loop {
        let Some(i) = v.as_inst() else { return false };
        let d = f.inst(i);
        match d.opcode {
            Opcode::Alloca => return true,
            Opcode::Gep => v = d.operands[0],
            _ => return false,
        }
    }
}

/// Functions that may write memory another function can see (least fixed
/// point over the call graph, callees first).
fn foreign_writers(m: &Module, cg: &CallGraph) -> Vec<bool> {
    let mut w = vec![false; m.functions.len()];
    for scc in &cg.sccs {
        loop {
            let mut changed = false;
            for &fid in scc {
                if w[fid.index()] {
                    continue;
                }
                let f = m.func(fid);
                let writes = f.is_external()
                    || f.all_insts().any(|(_, i)| {
                        let d = f.inst(i);
                        match d.opcode {
                            Opcode::Store => !local_address(f, d.operands[0]),
                            Opcode::Call => match d.operands.first() {
                                Some(Value::Func(g)) => w.get(g.index()).copied().unwrap_or(true),
                                _ => true,
                            },
                            _ => d.has(Trait::MemoryWrite) || d.has(Trait::Atomic) || d.has(Trait::Barrier),
                        }
                    });
                if writes {
                    w[fid.index()] = true;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
    }
    w
}

/// The `(callable, parameter)` pairs to promote.
pub fn promotable_params(m: &Module) -> FxHashSet<(FuncId, usize)> {
    let cg = CallGraph::compute(m);
    let usage = ArgumentUsage::compute_with(m, &cg);
    let writers = foreign_writers(m, &cg);
    let mut cand: FxHashSet<(FuncId, usize)> = FxHashSet::default();
    for fid in m.func_ids() {
        let f = m.func(fid);
        if f.kind != FunctionKind::Callable || f.body().is_none() || writers[fid.index()] {
            continue;
        }
        for (k, a) in f.args.iter().enumerate() {
            if a.kind == ArgKind::Reference && m.types.is_data(a.ty) && !usage.get(fid, k).write {
                cand.insert((fid, k));
            }
        }
    }
    // Greatest fixed point: drop parameters with a use other than a load
    // address or a pass-through to a parameter still promoted.
    loop {
        let drop: Vec<(FuncId, usize)> = cand
            .iter()
            .copied()
            .filter(|&(fid, k)| {
                let f = m.func(fid);
                !f.uses(Value::Arg(k as u32)).iter().all(|u| {
                    let d = f.inst(u.user);
                    match d.opcode {
                        Opcode::Load => u.index == 0,
                        Opcode::Call if u.index >= 1 => match d.operands[0] {
                            Value::Func(g) => cand.contains(&(g, u.index as usize - 1)),
                            _ => false,
                        },
                        _ => false,
                    }
                })
            })
            .collect();
        if drop.is_empty() {
            return cand;
        }
        for p in drop {
            cand.remove(&p);
        }
    }
}

/// Rewrite call sites and callee bodies for the chosen parameters.
pub fn rewrite(m: &mut Module, promoted: &FxHashSet<(FuncId, usize)>) {
    for fid in util::defined_functions(m) {
        let f = m.func_mut(fid);
        let calls: Vec<Inst> = f.all_insts().filter(|&(_, i)| f.inst(i).opcode == Opcode::Call).map(|p| p.1).collect();
        // Retargets are batched per passed value: one pass over each use
        // list instead of a scan per call site (which was quadratic when a
        // kernel passes one local to many calls). The loads are placed in
        // one rebuild per block, not a position scan per call.
        let mut retarget: FxHashMap<Value, Vec<(Use, Value)>> = FxHashMap::default();
        let mut loads: Vec<(Inst, Inst)> = Vec::new();
        for c in calls {
            let Value::Func(g) = f.inst(c).operands[0] else { continue };
            for slot in 1..f.inst(c).operands.len() {
                if !promoted.contains(&(g, slot - 1)) {
                    continue;
                }
                let o = f.inst(c).operands[slot];
                if let Value::Arg(a) = o {
                    if promoted.contains(&(fid, a as usize)) {
                        continue; // passed on as the (now value) argument
                    }
                }
                let Some(ty) = util::local_type(f, o) else { continue };
                let load = util::make(f, Opcode::Load, ty, &[o], Metadata::default());
                loads.push((c, load));
                retarget.entry(o).or_default().push((Use { user: c, index: slot as u32 }, Value::Inst(load)));
            }
        }
        f.insert_before_each(&loads);
        for (old, repl) in retarget {
            f.replace_uses(old, &repl);
        }
    }
    for &(fid, k) in promoted {
        let f = m.func_mut(fid);
        let loads: Vec<Inst> = f
            .uses(Value::Arg(k as u32))
            .iter()
            .filter(|u| f.inst(u.user).opcode == Opcode::Load)
            .map(|u| u.user)
            .collect();
        for &l in &loads {
            f.replace_all_uses(Value::Inst(l), Value::Arg(k as u32));
        }
        f.remove_insts(&loads);
        f.args[k].kind = ArgKind::Value;
    }
}
