//! Memory optimizations built on alias analysis (`xir::analysis::alias`):
//! scalar replacement of aggregates (`sroa`), local load elimination and
//! store forwarding, dead store elimination and GEP tracing / transposition.
//! Optional: no legalization step needs them. Each keeps its input's dialect
//! and the CFG. `scan` is the block-local walk the two forwarding passes
//! share.

use xir::pass::{AnalysisKind, PassRegistry};

pub mod dead_store_elimination;
pub mod local_load_elimination;
pub mod local_store_forward;
pub mod scan;
pub mod sroa;
pub mod trace_gep;
pub mod transpose_gep;

/// What a pass that only edits straight-line memory code keeps: the CFG and
/// every analysis derived from it (the lexical scopes read terminators
/// only), and the call graph.
pub(crate) const CFG_ANALYSES: &[AnalysisKind] = &[
    AnalysisKind::Cfg,
    AnalysisKind::Dominators,
    AnalysisKind::PostDominators,
    AnalysisKind::DominanceFrontiers,
    AnalysisKind::Loops,
    AnalysisKind::CallGraph,
    AnalysisKind::LexicalScopes,
];

/// Register the memory optimization passes.
pub fn register(reg: &mut PassRegistry) {
    reg.register(sroa::decl());
    reg.register(local_load_elimination::decl());
    reg.register(local_store_forward::decl());
    reg.register(dead_store_elimination::decl());
    reg.register(trace_gep::decl());
    reg.register(transpose_gep::decl());
}
