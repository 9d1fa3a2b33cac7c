//! Memory, SSA and interprocedural passes: the reg2mem / mem2reg boundary
//! of the legalization spine, its audits, SSA cleanups, DCE, reference
//! argument promotion, inlining and unused-callable removal.

use xir::pass::PassRegistry;

pub mod audit_reg2mem_spills;
pub mod dce;
pub mod fix_self_referential;
pub mod inline;
pub mod mem2reg;
pub mod outline;
pub mod phi_cleanup;
pub mod promote_ref_arg;
pub mod reg2mem;
pub mod unused_callable_removal;
pub mod util;

/// Register the memory / SSA passes.
pub fn register(reg: &mut PassRegistry) {
    reg.register(reg2mem::decl());
    reg.register(mem2reg::decl());
    reg.register(audit_reg2mem_spills::decl());
    reg.register(fix_self_referential::decl());
    reg.register(phi_cleanup::decl());
    reg.register(dce::decl());
    reg.register(promote_ref_arg::decl());
    reg.register(inline::decl());
    reg.register(outline::decl());
    reg.register(unused_callable_removal::decl());
}
