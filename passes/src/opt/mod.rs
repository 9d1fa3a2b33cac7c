//! Optional optimization passes (the reference's optimization catalogue):
//! the e-graph simplifier (`algebraic_simplify`, rules as data in
//! `passes/rules/`), scalar optimizations (`const_fold`, `sccp`,
//! `early_cse`, `gvn`, `div_rem_pairs`, `reassociate`, `simplify_libcalls`,
//! `scalarizer`), the branch-aware `cvp` (correlated value propagation) and
//! `if_conversion` (small diamonds and triangles into `select`), and
//! `dead_arg_elim`, and `drop_assumptions`, which ends the life of the
//! `assume`s the others read (the SPIR-V legalization runs it after its
//! optimization group). None of the others is needed for legalization;
//! `pipelines/O1.ron` and `pipelines/O2.ron` group them. `util` holds what
//! they share.
//!
//! All of them consume any dialect (`xir`) and keep it: `cvp` reads branch
//! conditions of structured (`if`, `switch`, loop `cond_br`) and raw
//! (`cond_br`, `br_indexed`) terminators alike, and `if_conversion` rewrites
//! structured `if` diamonds everywhere but raw `cond_br` diamonds only in
//! functions without structured control flow, so none needs a raw CFG.

use xir::pass::PassRegistry;

pub mod algebraic_simplify;
pub mod const_fold;
pub mod cvp;
pub mod dead_arg_elim;
pub mod div_rem_pairs;
pub mod drop_assumptions;
pub mod early_cse;
pub mod egraph;
pub mod gvn;
pub mod if_conversion;
pub mod reassociate;
pub mod scalarizer;
pub mod sccp;
pub mod simplify_libcalls;
pub mod util;

/// Register the optimization passes.
pub fn register(reg: &mut PassRegistry) {
    reg.register(algebraic_simplify::decl());
    reg.register(const_fold::decl());
    reg.register(early_cse::decl());
    reg.register(gvn::decl());
    reg.register(sccp::decl());
    reg.register(dead_arg_elim::decl());
    reg.register(div_rem_pairs::decl());
    reg.register(reassociate::decl());
    reg.register(simplify_libcalls::decl());
    reg.register(scalarizer::decl());
    reg.register(cvp::decl());
    reg.register(if_conversion::decl());
    reg.register(drop_assumptions::decl());
}
