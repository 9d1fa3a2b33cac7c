//! Control-flow passes: the structured <-> raw CFG boundary of the
//! legalization spine (`lower_break_continue`, `destructure_cfg`,
//! `restructure_cfg`), structured rewrites (`early_return_elimination`,
//! `lower_switch`, `canonicalize_one_shot_loops`,
//! `clear_inactive_block_payloads`) and raw CFG cleanup (`simplify_cfg`).

pub mod destructure_cfg;
pub mod lower_break_continue;
pub mod restructure;
mod ssa_repair;
mod util;

use xir::pass::PassRegistry;

/// Register the control-flow passes.
pub fn register(reg: &mut PassRegistry) {
    reg.register(lower_break_continue::decl());
    reg.register(destructure_cfg::decl());
    reg.register(restructure::decl());
}
