//! Memory, SSA and interprocedural passes.

use xir::pass::PassRegistry;

/// Register the memory / SSA passes.
pub fn register(_reg: &mut PassRegistry) {}
