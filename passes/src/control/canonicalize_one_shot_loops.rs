//! `canonicalize_one_shot_loops`: a loop whose body never continues runs at
//! most once, so it is a plain region. `loop prepare ^p, body ^b, update ^u,
//! merge ^m` with nothing branching to `^u` becomes `br ^p`, and a `prepare`
//! ending in `cond_br %c, ^b, ^m` becomes `if %c, true ^b, false ^m, merge
//! ^m`; `simple_loop body ^b, merge ^m` with nothing branching back to `^b`
//! becomes `br ^b`. Breaks to `^m` become plain `br`.
//!
//! The rewrite only applies when every transfer to `^m` comes from the top
//! level of the loop body (no enclosing selection inside the loop), so the
//! result stays structured. The update block, now outside every construct
//! and never reached, keeps its identity with an `unreachable` payload.
//!
//! - Consumes: structured IR (`xir.structured`, `xir.structured.lowered`,
//!   `xir.restructured` and refinements).
//! - Produces: the same dialect.
//! - Preserves: the call graph.

use serde::{Deserialize, Serialize};
use xir::pass::{
    options_from_ron, AnalysisKind, Pass, PassContext, PassDecl, PassError, PassInfo, PassOutcome, Produces,
};
use xir::{Block, Function, Module, Opcode};

use super::structured::{Kind, Regions};
use super::util::{br, defined_functions, set_terminator, term, unreachable};

/// No options.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Options {}

static INFO: PassInfo = PassInfo {
    name: "canonicalize_one_shot_loops",
    doc: "Turn loops whose body never continues into plain regions.",
    consumes: &["xir.structured", "xir.structured.lowered", "xir.restructured"],
    produces: Produces::Same,
    preserves: &[AnalysisKind::CallGraph],
    eliminates: &["@loop"],
};

pub struct CanonicalizeOneShotLoops {
    _options: Options,
}

pub fn decl() -> PassDecl {
    PassDecl {
        info: INFO.clone(),
        options: &[],
        create: |v| Ok(Box::new(CanonicalizeOneShotLoops { _options: options_from_ron(v)? })),
    }
}

/// Rewrite the one-shot loops of `f` (one at a time, recomputing nesting);
/// returns how many.
pub fn canonicalize_function(f: &mut Function) -> usize {
    let mut n = 0;
    while let Some(done) = canonicalize_one(f) {
        if !done {
            break;
        }
        n += 1;
    }
    n
}

/// Find and rewrite one one-shot loop: `Some(true)` if one was rewritten.
fn canonicalize_one(f: &mut Function) -> Option<bool> {
    let r = Regions::compute(f);
    for (ci, c) in r.constructs.iter().enumerate() {
        let Kind::Loop { cont, prepare } = c.kind else { continue };
        let inside: Vec<Block> = f.blocks().iter().copied().filter(|&b| r.inside(b, ci)).collect();
        // Nothing may branch to the continue target (other than the loop
        // opening the body of a simple loop).
        let continues = f
            .blocks()
            .iter()
            .any(|&b| b != c.header && f.terminator(b).is_some_and(|t| f.inst(t).blocks.contains(&cont)));
        let repeats = match prepare {
            Some(p) => {
                continues || f.blocks().iter().any(|&b| b != c.header && b != cont && f.successors(b).contains(&p))
            }
            None => continues,
        };
        if repeats {
            continue;
        }
        // Every transfer to the merge comes from the top level of the body.
        let top_level_breaks = inside.iter().all(|&b| {
            let leaves_to_merge = f.terminator(b).is_some_and(|t| f.inst(t).blocks.contains(&c.merge));
            !leaves_to_merge || r.innermost(b) == Some(ci)
        });
        if !top_level_breaks {
            continue;
        }
        let prepare_term = prepare.and_then(|p| f.terminator(p).map(|t| (p, t)));
        if let Some((p, t)) = prepare_term {
            let d = f.inst(t);
            match d.opcode {
                Opcode::CondBr => {
                    let (cond, body) = (d.operands[0], d.blocks[0]);
                    set_terminator(f, p, term(Opcode::If, &[cond], &[body, c.merge, c.merge]));
                }
                Opcode::Br => {}
                _ => continue,
            }
        }
        let (header, merge, entry) = (c.header, c.merge, prepare.unwrap_or(cont));
        for &b in &inside {
            if let Some(t) = f.terminator(b) {
                if f.inst(t).opcode == Opcode::Break && f.inst(t).blocks[0] == merge {
                    set_terminator(f, b, br(merge));
                }
            }
        }
        set_terminator(f, header, br(entry));
        if prepare.is_some() {
            // The update block is now outside every construct and unreached.
            let u = cont;
            for s in f.successors(u) {
                drop_phi_incomings(f, s, u);
            }
            for i in f.block(u).insts.clone().into_iter().rev() {
                let ty = f.inst(i).ty;
                f.replace_all_uses(xir::Value::Inst(i), xir::Value::Undef(ty));
                f.remove_inst(i);
            }
            set_terminator(f, u, unreachable("update of a loop that never continued"));
        }
        return Some(true);
    }
    None
}

fn drop_phi_incomings(f: &mut Function, b: Block, pred: Block) {
    let phis: Vec<_> = f.block(b).insts.iter().copied().filter(|&i| f.inst(i).opcode == Opcode::Phi).collect();
    for phi in phis {
        let d = f.inst(phi);
        let keep: Vec<usize> = (0..d.blocks.len()).filter(|&k| d.blocks[k] != pred).collect();
        let ops = keep.iter().map(|&k| d.operands[k]).collect();
        let blocks = keep.iter().map(|&k| d.blocks[k]).collect();
        f.set_operands(phi, ops);
        f.inst_mut(phi).blocks = blocks;
    }
}

impl Pass for CanonicalizeOneShotLoops {
    fn info(&self) -> &PassInfo {
        &INFO
    }
    fn run(&self, module: &mut Module, _cx: &mut PassContext) -> Result<PassOutcome, PassError> {
        let mut n = 0;
        for fid in defined_functions(module) {
            n += canonicalize_function(module.func_mut(fid));
        }
        let mut out = PassOutcome::changed(n > 0);
        out.stats.push(("loops_removed".into(), n.to_string()));
        Ok(out)
    }
}
