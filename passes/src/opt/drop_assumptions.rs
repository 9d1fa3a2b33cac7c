//! `drop_assumptions`: removes every `assume`. An assumption is a promise
//! to the optimizer (`cvp` turns its condition into facts about the
//! instructions it dominates); once the optimization passes have run, it has
//! told them all it can, and keeping it would keep its condition's
//! computation alive for nothing. No target executes an assumption: the
//! SPIR-V legalization runs this pass after its optimization group, so the
//! handoff never sees one. Dropping is exact for every execution that keeps
//! the promise (one that breaks it has undefined behaviour; the interpreter
//! reports it).
//!
//! - Consumes: `xir` (any dialect).
//! - Produces: the same dialect, without `assume`.
//! - Preserves: `cfg`, `dominators`, `post_dominators`, `loops` (no
//!   terminator changes).

use xir::pass::{AnalysisKind, Pass, PassContext, PassDecl, PassError, PassInfo, PassOutcome, Produces};
use xir::{Module, Opcode};

const INFO: PassInfo = PassInfo {
    name: "drop_assumptions",
    doc: "Remove `assume` (after the optimizers have used its facts)",
    consumes: &["xir"],
    produces: Produces::Same,
    eliminates: &["assume"],
    preserves: &[AnalysisKind::Cfg, AnalysisKind::Dominators, AnalysisKind::PostDominators, AnalysisKind::Loops],
};

#[derive(Default)]
pub struct DropAssumptions;

pub fn decl() -> PassDecl {
    PassDecl::without_options::<DropAssumptions>(INFO)
}

impl Pass for DropAssumptions {
    fn info(&self) -> &PassInfo {
        &INFO
    }
    fn run(&self, module: &mut Module, _cx: &mut PassContext) -> Result<PassOutcome, PassError> {
        let mut removed = 0;
        for f in &mut module.functions {
            // Found from the dense opcode table: no instruction record read.
            let assumes: Vec<_> =
                f.live_placements_by_id().filter(|&(_, _, op)| op == Opcode::Assume).map(|(i, _, _)| i).collect();
            removed += assumes.len();
            f.remove_insts(&assumes);
        }
        let mut out = PassOutcome::changed(removed > 0);
        out.stats.push(("removed".into(), removed.to_string()));
        Ok(out)
    }
}
