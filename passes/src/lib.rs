//! `xir-passes`: every XIR transformation, one file each. Control-flow passes
//! live in `control/`, memory / SSA / interprocedural passes in `memory/`,
//! optional optimizations in `opt/` (scalar), `loop_opt/` and `mem_opt/`.
//! `register_all` makes every pass usable from RON pipelines.

pub mod control;
pub mod loop_opt;
pub mod mem_opt;
pub mod memory;
pub mod opt;

use xir::pass::PassRegistry;

/// Register every pass of this crate.
pub fn register_all(reg: &mut PassRegistry) {
    control::register(reg);
    memory::register(reg);
    opt::register(reg);
    loop_opt::register(reg);
    mem_opt::register(reg);
}
