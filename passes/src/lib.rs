//! `xir-passes`: every XIR transformation, one file each (`autodiff/` is one
//! pass in a few files: plan, reverse sweep, rules). Control-flow passes
//! live in `control/`, memory / SSA / interprocedural passes in `memory/`,
//! optional optimizations in `opt/` (scalar), `loop_opt/` and `mem_opt/`.
//! `register_all` makes every pass usable from RON pipelines.

pub mod autodiff;
pub mod control;
pub mod loop_opt;
pub mod mem_opt;
pub mod memory;
pub mod opt;

use xir::pass::PassRegistry;

/// Register every pass of this crate.
pub fn register_all(reg: &mut PassRegistry) {
    reg.register(autodiff::decl());
    control::register(reg);
    memory::register(reg);
    opt::register(reg);
    loop_opt::register(reg);
    mem_opt::register(reg);
}
