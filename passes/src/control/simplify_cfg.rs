//! `simplify_cfg`: raw CFG cleanup, to a fixed point.
//!
//! - `cond_br %c, ^x, ^x` and a `br_indexed` whose targets are all one block
//!   become `br ^x` (the target's Phis drop the duplicate incomings);
//! - a block whose single predecessor ends in `br` to it is merged into that
//!   predecessor (its Phis, which have one incoming, fold to that value);
//! - an empty forwarding block (`br ^t` alone, not the entry) is bypassed:
//!   its predecessors branch to `^t` directly and `^t`'s Phis take the
//!   forwarded value once per new edge. It is skipped when a predecessor
//!   already reaches `^t` with a different value for some Phi.
//!
//! Removed blocks leave the layout; surviving blocks keep their identity.
//!
//! - Consumes: `xir.raw` (and its refinements, e.g. `xir.raw.phi_free`).
//! - Produces: the same dialect.
//! - Preserves: `call_graph`.

use serde::{Deserialize, Serialize};
use xir::analysis::Cfg;
use xir::pass::{
    options_from_ron, AnalysisKind, Pass, PassContext, PassDecl, PassError, PassInfo, PassOutcome, Produces,
};
use xir::{reads, Block, Function, Inst, Module, Opcode, Value};

use super::util::{br, defined_functions, set_terminator};

/// No options.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Options {}

static INFO: PassInfo = PassInfo {
    name: "simplify_cfg",
    doc: "Fold identical-target branches, merge single-predecessor blocks, bypass empty forwarding blocks.",
    consumes: &["xir.raw"],
    produces: Produces::Same,
    preserves: &[AnalysisKind::CallGraph],
    eliminates: &[],
};

pub struct SimplifyCfg {
    _options: Options,
}

pub fn decl() -> PassDecl {
    PassDecl {
        info: INFO.clone(),
        options: &[],
        create: |v| Ok(Box::new(SimplifyCfg { _options: options_from_ron(v)? })),
    }
}

/// What one run did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SimplifyStats {
    pub folded: usize,
    pub merged: usize,
    pub bypassed: usize,
}

fn phis(f: &Function, b: Block) -> Vec<Inst> {
    f.block(b).insts().iter().copied().filter(|&i| f.opcode(i) == Opcode::Phi).collect()
}

/// The incoming value of `phi` from `pred` (the first, if several).
fn incoming(f: &Function, phi: Inst, pred: Block) -> Option<Value> {
    let d = f.inst(phi);
    d.blocks.iter().position(|&b| b == pred).map(|k| d.operands[k])
}

/// Drop one incoming of `phi` from `pred`.
fn drop_one_incoming(f: &mut Function, phi: Inst, pred: Block) {
    if let Some(k) = f.inst(phi).blocks.iter().position(|&b| b == pred) {
        f.remove_incoming(phi, k);
    }
}

fn add_incoming(f: &mut Function, phi: Inst, v: Value, pred: Block) {
    f.push_incoming(phi, v, pred);
}

/// Simplify one function to a fixed point.
pub fn simplify_function(f: &mut Function) -> SimplifyStats {
    let mut st = SimplifyStats::default();
    loop {
        let before = st.clone();
        let cfg = Cfg::compute(f);
        let mut preds = cfg.pred_lists();
        let entry = f.body();
        // Blocks dropped in this sweep; the layout is rebuilt once at its end.
        let mut dead = vec![false; f.block_capacity()];
        let layout = f.blocks().to_vec();
        let mut walk = f.walk(&layout, reads::Terminator);
        while let Some(b) = walk.next(f) {
            if dead[b.index()] {
                continue;
            }
            let Some(t) = f.terminator(b) else { continue };
            let d = f.inst(t);
            // Identical targets.
            if matches!(d.opcode, Opcode::CondBr | Opcode::BrIndexed) && d.blocks.iter().all(|&x| x == d.blocks[0]) {
                let target = d.blocks[0];
                let extra = d.blocks.len() - 1;
                for phi in phis(f, target) {
                    for _ in 0..extra {
                        drop_one_incoming(f, phi, b);
                    }
                }
                for _ in 0..extra {
                    if let Some(k) = preds[target.index()].iter().position(|&p| p == b) {
                        preds[target.index()].remove(k);
                    }
                }
                set_terminator(f, b, br(target));
                st.folded += 1;
                continue;
            }
            if d.opcode != Opcode::Br {
                continue;
            }
            let s = d.blocks[0];
            // Merge `s` into `b`.
            if s != b && Some(s) != entry && preds[s.index()][..] == [b] {
                for phi in phis(f, s) {
                    let v = incoming(f, phi, b).expect("single-predecessor Phi has its incoming");
                    f.replace_all_uses(Value::Inst(phi), v);
                    f.remove_inst(phi);
                }
                f.remove_inst(t);
                let moved = f.block(s).insts().to_vec();
                for i in moved {
                    let pos = f.block(b).insts().len();
                    f.move_inst(i, b, pos);
                }
                for succ in f.successors(b) {
                    for phi in phis(f, succ) {
                        f.retarget(phi, s, b);
                    }
                    for p in preds[succ.index()].iter_mut() {
                        if *p == s {
                            *p = b;
                        }
                    }
                }
                preds[s.index()].clear();
                dead[s.index()] = true;
                st.merged += 1;
                continue;
            }
            // Bypass `b` when it only forwards to `s`.
            if f.block(b).insts().len() == 1 && s != b && Some(b) != entry && !preds[b.index()].is_empty() {
                let target_phis = phis(f, s);
                let ps = preds[b.index()].clone();
                let ok = target_phis.iter().all(|&phi| {
                    let vb = incoming(f, phi, b);
                    ps.iter().all(|&p| !preds[s.index()].contains(&p) || incoming(f, phi, p) == vb)
                });
                if !ok || ps.contains(&b) {
                    continue;
                }
                for &phi in &target_phis {
                    let vb = incoming(f, phi, b).expect("Phi has an incoming per predecessor");
                    drop_one_incoming(f, phi, b);
                    for &p in &ps {
                        add_incoming(f, phi, vb, p);
                    }
                }
                let mut distinct = ps.clone();
                distinct.dedup();
                for p in distinct {
                    if let Some(pt) = f.terminator(p) {
                        f.retarget(pt, b, s);
                    }
                }
                preds[s.index()].retain(|p| *p != b);
                preds[s.index()].extend(ps);
                preds[b.index()].clear();
                f.remove_inst(t);
                dead[b.index()] = true;
                st.bypassed += 1;
            }
        }
        if dead.iter().any(|&d| d) {
            let layout = f.blocks().iter().copied().filter(|b| !dead[b.index()]).collect();
            f.set_layout(layout);
        }
        if st == before {
            return st;
        }
    }
}

impl Pass for SimplifyCfg {
    fn info(&self) -> &PassInfo {
        &INFO
    }
    fn run(&self, module: &mut Module, _cx: &mut PassContext) -> Result<PassOutcome, PassError> {
        let mut total = SimplifyStats::default();
        for fid in defined_functions(module) {
            let s = simplify_function(module.func_mut(fid));
            total.folded += s.folded;
            total.merged += s.merged;
            total.bypassed += s.bypassed;
        }
        let mut out = PassOutcome::changed(total != SimplifyStats::default());
        out.stats.push(("folded".into(), total.folded.to_string()));
        out.stats.push(("merged".into(), total.merged.to_string()));
        out.stats.push(("bypassed".into(), total.bypassed.to_string()));
        Ok(out)
    }
}
