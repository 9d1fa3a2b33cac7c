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
//! - Consumes: `xir.structured`, `xir.structured.lowered`,
//!   `xir.restructured` (and their refinements).
//! - Produces: the same dialect.
//! - Preserves: `call_graph`.

use serde::{Deserialize, Serialize};
use xir::analysis::{FlatLists, LexicalScopes, ScopeKind};
use xir::pass::{
    options_from_ron, AnalysisKind, Pass, PassContext, PassDecl, PassError, PassInfo, PassOutcome, Produces,
};
use xir::{Block, Function, Module, Opcode};

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

/// Rewrite the one-shot loops of `f`; returns how many. Each sweep rewrites
/// every candidate not nested in (or around) another one rewritten in the
/// same sweep, then the nesting is recomputed.
pub fn canonicalize_function(f: &mut Function) -> usize {
    let mut n = 0;
    loop {
        let done = sweep(f);
        if done == 0 {
            return n;
        }
        n += done;
    }
}

fn sweep(f: &mut Function) -> usize {
    // Recomputed each sweep: the previous one changed the nesting.
    let r = LexicalScopes::compute(f);
    let nc = r.constructs.len();
    // One walk of the terminators finds all the tests below ask about:
    // - per block, the first block whose terminator names it (roles
    //   included) and whether any other block does ("is it named by a
    //   block other than the header?");
    // - the predecessors (in layout order) of the loops' prepares and
    //   merges only; a whole CFG was half of this pass.
    const NOBODY: Block = Block(u32::MAX);
    let cap = f.block_capacity();
    let mut first_namer = vec![NOBODY; cap];
    let mut other_namer = vec![false; cap];
    let mut wanted = vec![false; cap];
    for c in &r.constructs {
        if let ScopeKind::Loop { prepare, .. } = c.kind {
            wanted[c.merge.index()] = true;
            if let Some(p) = prepare {
                wanted[p.index()] = true;
            }
        }
    }
    let mut edges: Vec<(usize, Block)> = Vec::new();
    for (b, t) in f.terminators_in_layout() {
        let Some(t) = t else { continue };
        let d = f.inst(t);
        for &x in &d.blocks {
            let first = &mut first_namer[x.index()];
            if *first == NOBODY {
                *first = b;
            } else if *first != b {
                other_namer[x.index()] = true;
            }
        }
        for &s in d.successor_slice() {
            if wanted.get(s.index()).copied().unwrap_or(false) {
                edges.push((s.index(), b));
            }
        }
    }
    let preds = FlatLists::from_pairs(cap, edges.iter().copied());
    let mut touched = vec![false; nc];
    let mut done: Vec<usize> = Vec::new();
    let mut count = 0;
    for ci in 0..nc {
        let c = r.constructs[ci].clone();
        let ScopeKind::Loop { cont, prepare } = c.kind else { continue };
        // Nothing may branch to the continue target (other than the header
        // naming its roles), nor back to `prepare`.
        let first = first_namer[cont.index()];
        let continues = (first != NOBODY && first != c.header) || other_namer[cont.index()];
        let repeats =
            continues || prepare.is_some_and(|p| preds.get(p.index()).iter().any(|&b| b != c.header && b != cont));
        if repeats {
            continue;
        }
        // Every transfer to the merge comes from the top level of the body.
        if !preds.get(c.merge.index()).iter().all(|&b| r.innermost(b) == Some(ci)) {
            continue;
        }
        // One rewrite per nest per sweep: the nesting facts of the others
        // would be stale.
        let mut anc = Some(ci);
        let mut clash = false;
        while let Some(a) = anc {
            clash |= touched[a];
            anc = r.constructs[a].parent;
        }
        let below = |x: usize| {
            let mut cur = r.constructs[x].parent;
            while let Some(a) = cur {
                if a == ci {
                    return true;
                }
                cur = r.constructs[a].parent;
            }
            false
        };
        if clash || done.iter().any(|&x| below(x)) {
            continue;
        }
        if let Some(p) = prepare {
            let Some(t) = f.terminator(p) else { continue };
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
        touched[ci] = true;
        done.push(ci);
        count += 1;
        let (header, merge, entry) = (c.header, c.merge, prepare.unwrap_or(cont));
        for &b in r.region(ci) {
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
            for i in f.block(u).insts().to_vec().into_iter().rev() {
                let ty = f.inst(i).ty;
                f.replace_all_uses(xir::Value::Inst(i), xir::Value::Undef(ty));
                f.remove_inst(i);
            }
            set_terminator(f, u, unreachable("update of a loop that never continued"));
        }
    }
    count
}

fn drop_phi_incomings(f: &mut Function, b: Block, pred: Block) {
    let phis: Vec<_> = f.block(b).insts().iter().copied().filter(|&i| f.opcode(i) == Opcode::Phi).collect();
    for phi in phis {
        let d = f.inst(phi);
        let keep: Vec<(xir::Value, Block)> =
            d.operands.iter().copied().zip(d.blocks.iter().copied()).filter(|&(_, b)| b != pred).collect();
        f.set_phi_incomings(phi, &keep);
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
