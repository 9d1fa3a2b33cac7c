//! `lower_break_continue`: every `break target ^m` / `continue target ^u`
//! becomes `br target ^m` / `br target ^u`. The jump's target is explicit in
//! XIR, so the rewrite is local and keeps every executed edge.
//!
//! - Consumes: `xir.structured`.
//! - Produces: `xir.structured.lowered` (no Break / Continue).
//! - Preserves: `cfg`, `dominators`, `post_dominators`,
//!   `dominance_frontiers`, `loops`, `call_graph`
//!   (the executed edges are unchanged).

use serde::{Deserialize, Serialize};
use xir::pass::{
    options_from_ron, AnalysisKind, Pass, PassContext, PassDecl, PassError, PassInfo, PassOutcome, Produces,
};
use xir::{Module, Opcode};

use super::util::{br, defined_functions, set_terminator};

/// No options.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Options {}

static INFO: PassInfo = PassInfo {
    name: "lower_break_continue",
    doc: "Lower Break / Continue to explicit branches to their targets.",
    consumes: &["xir.structured"],
    produces: Produces::Dialect("xir.structured.lowered"),
    preserves: &[
        AnalysisKind::Cfg,
        AnalysisKind::Dominators,
        AnalysisKind::PostDominators,
        AnalysisKind::DominanceFrontiers,
        AnalysisKind::Loops,
        AnalysisKind::CallGraph,
    ],
    eliminates: &["@structured_jump"],
};

pub struct LowerBreakContinue {
    _options: Options,
}

pub fn decl() -> PassDecl {
    PassDecl {
        info: INFO.clone(),
        options: &[],
        create: |v| Ok(Box::new(LowerBreakContinue { _options: options_from_ron(v)? })),
    }
}

/// Rewrite every Break / Continue of the module; returns how many.
pub fn lower_module(m: &mut Module) -> usize {
    let mut n = 0;
    for fid in defined_functions(m) {
        let f = m.func_mut(fid);
        for b in f.blocks().to_vec() {
            let Some(t) = f.terminator(b) else { continue };
            let d = f.inst(t);
            if matches!(d.opcode, Opcode::Break | Opcode::Continue) {
                if let Some(&target) = d.blocks.first() {
                    set_terminator(f, b, br(target));
                    n += 1;
                }
            }
        }
    }
    n
}

impl Pass for LowerBreakContinue {
    fn info(&self) -> &PassInfo {
        &INFO
    }
    fn run(&self, module: &mut Module, _cx: &mut PassContext) -> Result<PassOutcome, PassError> {
        let n = lower_module(module);
        let mut out = PassOutcome::changed(n > 0);
        out.stats.push(("lowered".into(), n.to_string()));
        Ok(out)
    }
}
