//! Control-flow passes: structured <-> raw CFG and CFG cleanups.

use xir::pass::PassRegistry;

/// Register the control-flow passes.
pub fn register(_reg: &mut PassRegistry) {}
