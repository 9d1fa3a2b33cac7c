//! Optional optimization passes (the reference's optimization catalogue):
//! the e-graph simplifier (`algebraic_simplify`, rules as data in
//! `passes/rules/`), scalar optimizations (`const_fold`, `sccp`,
//! `early_cse`, `gvn`, `div_rem_pairs`) and `dead_arg_elim`. None of them is
//! needed for legalization; `pipelines/O1.ron` and `pipelines/O2.ron` group
//! them. `util` holds what they share.

use xir::pass::PassRegistry;

pub mod algebraic_simplify;
pub mod const_fold;
pub mod dead_arg_elim;
pub mod div_rem_pairs;
pub mod early_cse;
pub mod egraph;
pub mod gvn;
pub mod sccp;
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
}
