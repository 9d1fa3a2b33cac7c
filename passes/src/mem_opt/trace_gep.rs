//! `trace_gep`: fold chains of `gep`s into one `gep` from the root address.
//!
//! ```text
//! %x = gep %base, %i0, %i1 : T1
//! %y = gep %x, %j0 : T2          =>   %y = gep %base, %i0, %i1, %j0 : T2
//! %z = gep %y, %k0, %k1 : T3     =>   %z = gep %base, %i0, %i1, %j0, %k0, %k1 : T3
//! ```
//!
//! Every `gep` whose base is another `gep` takes that gep's base and indices
//! in front of its own; bases are traced first (layout order, repeated until
//! nothing changes, so unusual layouts converge too). Inner geps left without
//! uses are deleted. The result type and address are unchanged (the index
//! path is the concatenation), so later passes see one root and one path per
//! address. The new operands dominate the gep: they dominated the inner gep,
//! which dominated it.
//!
//! - Consumes: `xir` (any dialect).
//! - Produces: the same dialect.
//! - Preserves: `cfg`, `dominators`, `post_dominators`,
//!   `dominance_frontiers`, `loops`, `call_graph`,
//!   `lexical_scopes`.

use smallvec::SmallVec;
use xir::pass::{Pass, PassContext, PassDecl, PassError, PassInfo, PassOutcome, Produces};
use xir::{Function, Inst, Module, Opcode, Value};

const INFO: PassInfo = PassInfo {
    name: "trace_gep",
    doc: "Fold gep-of-gep chains into one gep from the root address",
    consumes: &["xir"],
    produces: Produces::Same,
    eliminates: &["gep"],
    preserves: super::CFG_ANALYSES,
};

#[derive(Default)]
pub struct TraceGep;

pub fn decl() -> PassDecl {
    PassDecl::without_options::<TraceGep>(INFO)
}

impl Pass for TraceGep {
    fn info(&self) -> &PassInfo {
        &INFO
    }
    fn run(&self, module: &mut Module, _cx: &mut PassContext) -> Result<PassOutcome, PassError> {
        let (mut traced, mut removed) = (0, 0);
        for f in crate::memory::util::defined_functions(module) {
            let (t, r) = trace_function(module.func_mut(f));
            traced += t;
            removed += r;
        }
        let mut out = PassOutcome::changed(traced > 0);
        out.stats.push(("traced_geps".into(), traced.to_string()));
        out.stats.push(("removed_geps".into(), removed.to_string()));
        Ok(out)
    }
}

fn gep_of(f: &Function, v: Value) -> Option<Inst> {
    v.as_inst().filter(|&i| f.is_live(i) && f.opcode(i) == Opcode::Gep)
}

/// Trace every gep chain of `f`; returns (geps rewritten, inner geps deleted).
pub fn trace_function(f: &mut Function) -> (usize, usize) {
    let mut traced = 0;
    let mut inner: Vec<Inst> = Vec::new();
    loop {
        let mut changed = false;
        let geps: Vec<Inst> = f.select_in_layout_order(|op| op == Opcode::Gep);
        for g in geps {
            let Some(&base) = f.inst(g).operands.first() else { continue };
            let Some(h) = gep_of(f, base) else { continue };
            if h == g {
                continue;
            }
            let mut ops: SmallVec<[Value; 3]> = f.inst(h).operands.clone();
            ops.extend(f.inst(g).operands[1..].iter().copied());
            f.set_operands(g, ops);
            inner.push(h);
            traced += 1;
            changed = true;
        }
        if !changed {
            break;
        }
    }
    // Delete inner geps nobody uses any more (innermost last: an outer one
    // may have been the only user of its own base).
    inner.sort();
    inner.dedup();
    let mut removed = 0;
    loop {
        let dead: Vec<Inst> = inner.iter().copied().filter(|&h| f.is_live(h) && !f.has_uses(Value::Inst(h))).collect();
        if dead.is_empty() {
            break;
        }
        removed += dead.len();
        f.remove_insts(&dead);
    }
    (traced, removed)
}
