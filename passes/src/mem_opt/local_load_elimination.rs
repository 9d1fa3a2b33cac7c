//! `local_load_elimination`: within one block, a read (`load`, typed
//! `buffer.read`) of a location whose contents are already known — read
//! earlier, or written by a `store` / `buffer.write` — with no instruction in
//! between that may write it, is replaced by the known value. "Same
//! location" is `MustAlias` of `xir::analysis::alias` (same root, equal
//! constant or SSA index path); "may write" is its mod/ref, which treats
//! shared slots, buffers and reference arguments conservatively (barriers,
//! atomics, calls and other side effects clobber them).
//!
//! - Consumes: `xir` (any dialect).
//! - Produces: the same dialect.
//! - Preserves: `cfg`, `dominators`, `post_dominators`,
//!   `dominance_frontiers`, `loops`, `call_graph`,
//!   `lexical_scopes`
//!   (only straight-line reads go).

use xir::pass::{Pass, PassContext, PassDecl, PassError, PassInfo, PassOutcome, Produces};
use xir::Module;

use super::scan::{forward_function, Mode};

const INFO: PassInfo = PassInfo {
    name: "local_load_elimination",
    doc: "Reuse a value read or written earlier in the block for a must-alias read with no clobber in between",
    consumes: &["xir"],
    produces: Produces::Same,
    eliminates: &["load", "buffer.read"],
    preserves: super::CFG_ANALYSES,
};

#[derive(Default)]
pub struct LocalLoadElimination;

pub fn decl() -> PassDecl {
    PassDecl::without_options::<LocalLoadElimination>(INFO)
}

impl Pass for LocalLoadElimination {
    fn info(&self) -> &PassInfo {
        &INFO
    }
    fn run(&self, module: &mut Module, _cx: &mut PassContext) -> Result<PassOutcome, PassError> {
        let mut removed = 0;
        for f in crate::memory::util::defined_functions(module) {
            removed += forward_function(module, f, Mode::Loads).0;
        }
        let mut out = PassOutcome::changed(removed > 0);
        out.stats.push(("removed_loads".into(), removed.to_string()));
        Ok(out)
    }
}
