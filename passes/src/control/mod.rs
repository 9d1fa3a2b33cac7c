//! Control-flow passes: the structured <-> raw CFG boundary of the
//! legalization spine (`lower_break_continue`, `destructure_cfg`,
//! `restructure_cfg`), structured rewrites (`early_return_elimination`,
//! `lower_switch`, `canonicalize_one_shot_loops`,
//! `clear_inactive_block_payloads`) and raw CFG cleanup (`simplify_cfg`).

pub mod canonicalize_one_shot_loops;
pub mod clear_inactive_block_payloads;
pub mod destructure_cfg;
pub mod early_return_elimination;
pub mod lower_break_continue;
pub mod lower_ray_query;
pub mod lower_switch;
pub mod restructure;
pub mod simplify_cfg;
mod ssa_repair;
mod util;

use xir::pass::PassRegistry;

/// Register the control-flow passes.
pub fn register(reg: &mut PassRegistry) {
    reg.register(lower_break_continue::decl());
    reg.register(lower_ray_query::decl());
    reg.register(destructure_cfg::decl());
    reg.register(restructure::decl());
    reg.register(early_return_elimination::decl());
    reg.register(lower_switch::decl());
    reg.register(canonicalize_one_shot_loops::decl());
    reg.register(clear_inactive_block_payloads::decl());
    reg.register(simplify_cfg::decl());
}
