//! `gvn`: global value numbering by dominance. `early_cse`'s walk of the
//! dominator tree (pure, non-convergent instructions; commutative operands
//! canonicalized; equal addresses merged), extended to Phis — two Phis of one
//! block with the same incoming values from the same blocks are one value —
//! and repeated until nothing merges, since a merge makes the users of the
//! merged values equal in turn (`x = phi [a, ^p]` and `y = phi [a, ^p]`
//! merge, then `x + 1` and `y + 1`, then the Phis using those).
//!
//! - Consumes: `xir` (any dialect).
//! - Produces: the same dialect.
//! - Preserves: `cfg`, `dominators`, `post_dominators`, `loops`.

use xir::pass::{AnalysisKind, Pass, PassContext, PassDecl, PassError, PassInfo, PassOutcome, Produces};
use xir::Module;

use super::early_cse::{cse_function, Options};

const INFO: PassInfo = PassInfo {
    name: "gvn",
    doc: "Value numbering by dominance: early_cse plus congruent Phis, to a fixed point",
    consumes: &["xir"],
    produces: Produces::Same,
    eliminates: &["@pure", "phi"],
    preserves: &[AnalysisKind::Cfg, AnalysisKind::Dominators, AnalysisKind::PostDominators, AnalysisKind::Loops],
};

const OPTIONS: &[xir::pass::OptionDoc] = &[xir::pass::OptionDoc {
    name: "cse_addresses",
    ty: "bool",
    default: "true",
    doc: "Also merge equal addresses (gep and other lvalue results)",
}];

pub struct Gvn {
    opts: Options,
}

pub fn decl() -> PassDecl {
    PassDecl { info: INFO, options: OPTIONS, create: |v| Ok(Box::new(Gvn { opts: xir::pass::options_from_ron(v)? })) }
}

impl Pass for Gvn {
    fn info(&self) -> &PassInfo {
        &INFO
    }
    fn run(&self, module: &mut Module, cx: &mut PassContext) -> Result<PassOutcome, PassError> {
        let mut removed = 0;
        let mut rounds = 0;
        let funcs = crate::memory::util::defined_functions(module);
        for fid in funcs {
            // The CFG does not change, so the dominator tree stays valid.
            let dom = cx.analyses.dominators(module, fid);
            let entry = module.func(fid).body().expect("has a body");
            loop {
                rounds += 1;
                let n = cse_function(module, fid, entry, &dom, &self.opts, true);
                removed += n;
                if n == 0 {
                    break;
                }
            }
        }
        let mut out = PassOutcome::changed(removed > 0);
        out.stats.push(("removed".into(), removed.to_string()));
        out.stats.push(("rounds".into(), rounds.to_string()));
        Ok(out)
    }
}
