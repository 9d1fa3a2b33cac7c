//! Loop optimizations built on scalar evolution (`xir::analysis::scev`):
//! loop-invariant code motion, loop rotation and induction-variable
//! simplification. Optional: no legalization step needs them.
//!
//! `licm` and `indvar_simplify` keep the CFG and run in any dialect
//! (structured or raw, with Phis for the latter to find anything);
//! `loop_rotation` adds blocks and consumes raw CFG only, so the pipeline
//! loader rejects it inside a structured stretch. `expand` materializes
//! scalar-evolution expressions for them.
//!
//! Placement: `licm` and `indvar_simplify` fit O2's fixed point (they keep
//! the dialect, and after `spirv-legalize` the IR is SSA, where both find
//! their loops); `loop_rotation` fits the raw stretch of the legalization
//! (after `destructure_cfg`, before `reg2mem`), followed by `licm`. Rotation
//! duplicates loop headers, so it grows the static size of the emitted
//! SPIR-V: it is an enabler for hoisting, not a size optimization, and no
//! shipped pipeline runs it (-O3 may not be larger than -O2 without a GPU
//! measurement showing it faster; BENCHMARKS.md, "Code size").

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
