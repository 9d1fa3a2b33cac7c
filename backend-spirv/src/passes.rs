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

use crate::handoff::Verdict;
use crate::specialize;

pub(crate) static HANDOFF: PassInfo = PassInfo {
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

/// With a verdict, the pass also records the kernels it passed there
/// ([`crate::handoff::run_pipeline`] installs such an instance).
struct SpirvHandoff {
    verdict: Option<Verdict>,
}

/// The handoff pass, recording the kernels it passes in `verdict`.
pub(crate) fn recording_handoff(verdict: Verdict) -> Box<dyn Pass> {
    Box::new(SpirvHandoff { verdict: Some(verdict) })
}

impl Pass for SpirvHandoff {
    fn info(&self) -> &PassInfo {
        &HANDOFF
    }
    fn run(&self, module: &mut Module, _cx: &mut PassContext) -> Result<PassOutcome, PassError> {
        let mut diags = crate::handoff::module_diagnostics(module);
        let mut passed = Vec::new();
        if diags.is_empty() {
            for fid in module.func_ids() {
                if module.func(fid).is_kernel() {
                    let found = crate::handoff::kernel_diagnostics(module, fid);
                    if found.is_empty() {
                        passed.push(fid);
                    }
                    diags.extend(found);
                }
            }
        }
        if diags.is_empty() {
            if let Some(v) = &self.verdict {
                if let Ok(mut v) = v.lock() {
                    *v = Some(passed);
                }
            }
            return Ok(PassOutcome::changed(false));
        }
        let mut e = PassError::new(HANDOFF.name, format!("{} construct(s) cannot be lowered to SPIR-V", diags.len()));
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
            Ok(Box::new(SpirvHandoff { verdict: None }))
        },
    });
    reg.register(specialize::decl());
}
