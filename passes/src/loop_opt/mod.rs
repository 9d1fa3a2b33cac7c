//! Loop optimizations built on scalar evolution (`xir::analysis::scev`):
//! loop-invariant code motion, loop rotation and induction-variable
//! simplification. Optional: no legalization step needs them.
//!
//! `licm` and `indvar_simplify` keep the CFG and run in any dialect
//! (structured or raw, with Phis for the latter to find anything);
//! `loop_rotation` adds blocks and consumes raw CFG only, so the pipeline
//! loader rejects it inside a structured stretch. `expand` materializes
//! scalar-evolution expressions for them.

use xir::pass::PassRegistry;

pub mod expand;
pub mod indvar_simplify;
pub mod licm;
pub mod loop_rotation;

/// Register the loop optimization passes.
pub fn register(reg: &mut PassRegistry) {
    reg.register(licm::decl());
    reg.register(loop_rotation::decl());
    reg.register(indvar_simplify::decl());
}
