//! `local_store_forward`: store-to-load forwarding within one block. A read
//! (`load`, typed `buffer.read`) of a location written earlier in the block
//! by a `store` / `buffer.write`, with no instruction in between that may
//! write it, takes the written value. Unlike `local_load_elimination` it
//! does not reuse earlier *reads*, but it also forwards into sub-objects: a
//! load of `gep %a, 1, 0` after `store %a, %v` becomes `extract %v, 1, 0`.
//! "May write" is the mod/ref of `xir::analysis::alias`, conservative for
//! memory other threads see (shared slots, buffers, reference arguments).
//!
//! - Consumes: `xir` (any dialect).
//! - Produces: the same dialect.
//! - Preserves: `cfg`, `dominators`, `post_dominators`,
//!   `dominance_frontiers`, `loops`, `call_graph`,
//!   `lexical_scopes`.

use xir::pass::{Pass, PassContext, PassDecl, PassError, PassInfo, PassOutcome, Produces};
use xir::Module;

use super::scan::{forward_function, Mode};

const INFO: PassInfo = PassInfo {
    name: "local_store_forward",
    doc: "Forward a stored value (or an extract of it) to a later read in the block with no clobber in between",
    consumes: &["xir"],
    produces: Produces::Same,
    eliminates: &["load", "buffer.read"],
    preserves: super::CFG_ANALYSES,
};

#[derive(Default)]
pub struct LocalStoreForward;

pub fn decl() -> PassDecl {
    PassDecl::without_options::<LocalStoreForward>(INFO)
}

impl Pass for LocalStoreForward {
    fn info(&self) -> &PassInfo {
        &INFO
    }
    fn run(&self, module: &mut Module, _cx: &mut PassContext) -> Result<PassOutcome, PassError> {
        let (mut forwarded, mut extracts) = (0, 0);
        for f in crate::memory::util::defined_functions(module) {
            let (n, e) = forward_function(module, f, Mode::Stores);
            forwarded += n;
            extracts += e;
        }
        let mut out = PassOutcome::changed(forwarded > 0);
        out.stats.push(("forwarded_loads".into(), forwarded.to_string()));
        out.stats.push(("extracts".into(), extracts.to_string()));
        Ok(out)
    }
}
