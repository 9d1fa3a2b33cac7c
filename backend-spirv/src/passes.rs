//! The backend's pipeline passes.
//!
//! `spirv_handoff`: the fail-closed SPIR-V handoff as a pipeline step.
//! - Consumes: `xir.restructured.audited`.
//! - Produces: `xir.spirv` (it changes nothing: it proves every kernel of the
//!   module passes [`crate::handoff::check`] or fails with its diagnostics).
//! - Preserves: `cfg`, `dominators`, `post_dominators`,
//!   `dominance_frontiers`, `loops`, `call_graph` (it changes
//!   nothing; the rest are not claimed).
//!
//! `callable_specialization` lives in `specialize.rs`.

use xir::pass::{AnalysisKind, Pass, PassContext, PassDecl, PassError, PassInfo, PassOutcome, PassRegistry, Produces};
use xir::Module;

use crate::specialize;

static HANDOFF: PassInfo = PassInfo {
    name: "spirv_handoff",
    doc: "Fail-closed SPIR-V handoff check of every kernel (changes nothing).",
    consumes: &["xir.restructured.audited"],
    produces: Produces::Dialect("xir.spirv"),
    preserves: &[
        AnalysisKind::Cfg,
        AnalysisKind::Dominators,
        AnalysisKind::PostDominators,
        AnalysisKind::DominanceFrontiers,
        AnalysisKind::Loops,
        AnalysisKind::CallGraph,
    ],
    eliminates: &[],
};

struct SpirvHandoff;

impl Pass for SpirvHandoff {
    fn info(&self) -> &PassInfo {
        &HANDOFF
    }
    fn run(&self, module: &mut Module, _cx: &mut PassContext) -> Result<PassOutcome, PassError> {
        let mut diags = Vec::new();
        for fid in module.func_ids() {
            if module.func(fid).is_kernel() {
                diags.extend(crate::handoff::check(module, fid));
            }
        }
        if diags.is_empty() {
            return Ok(PassOutcome::changed(false));
        }
        let mut e =
            PassError::new("spirv_handoff", format!("{} construct(s) cannot be lowered to SPIR-V", diags.len()));
        e.diagnostics = diags;
        Err(e)
    }
}

/// Register `spirv_handoff` and `callable_specialization`.
pub fn register_passes(reg: &mut PassRegistry) {
    reg.register(PassDecl {
        info: HANDOFF.clone(),
        options: &[],
        create: |v| {
            let _o: crate::specialize::Options = xir::pass::options_from_ron(v)?;
            Ok(Box::new(SpirvHandoff))
        },
    });
    reg.register(specialize::decl());
}
