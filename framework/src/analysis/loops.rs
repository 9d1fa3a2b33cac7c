//! Loop nesting forest of a reducible CFG: natural loops found from the
//! dominator tree and back edges (an edge whose target dominates its
//! source), nested by containment. Loops sharing a header are one loop.
//!
//! A retreating edge of the reachable CFG (target at or before its source
//! in reverse post order) that is not a back edge makes the CFG
//! irreducible; `LoopForest::compute` then returns the offending cycle and
//! the blocks where it is entered instead of a forest.

use super::{Cfg, DomTree};
use crate::ir::Block;

/// Index of a loop in `LoopForest::loops`.
pub type LoopId = usize;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoopData {
    pub header: Block,
    /// The innermost enclosing loop.
    pub parent: Option<LoopId>,
    /// Sources of back edges to the header, each once, in RPO order.
    pub latches: Vec<Block>,
    /// Nesting depth: 1 for outermost loops.
    pub depth: u32,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoopForest {
    pub loops: Vec<LoopData>,
    /// Innermost loop of each block id (`None`: in no loop, or unreachable).
    pub loop_of: Vec<Option<LoopId>>,
}

/// An irreducible cycle: the retreating edge found, every block on a cycle
/// through it (RPO order), and the blocks of that set entered from outside
/// it (or the function entry).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Irreducible {
    pub edge: (Block, Block),
    pub cycle: Vec<Block>,
    pub entries: Vec<Block>,
}

impl LoopForest {
    pub fn compute(cfg: &Cfg, dom: &DomTree) -> Result<LoopForest, Irreducible> {
        let n = cfg.rpo_index.len();
        let rpo = |b: Block| cfg.rpo_index[b.index()];
        let mut latches: Vec<Vec<Block>> = vec![Vec::new(); n];
        let mut headers = Vec::new();
        for &b in &cfg.rpo {
            for &s in cfg.succs(b) {
                if !cfg.is_reachable(s) || rpo(s) > rpo(b) {
                    continue;
                }
                if !dom.dominates(s, b) {
                    return Err(irreducible(cfg, b, s));
                }
                if latches[s.index()].is_empty() {
                    headers.push(s);
                }
                if !latches[s.index()].contains(&b) {
                    latches[s.index()].push(b);
                }
            }
        }
        // Innermost headers (latest in RPO) first, so that an outer loop's
        // backward walk finds inner loops already built and adopts them.
        headers.sort_by_key(|&h| std::cmp::Reverse(rpo(h)));
        let mut loops: Vec<LoopData> = Vec::new();
        let mut loop_of: Vec<Option<LoopId>> = vec![None; n];
        for &h in &headers {
            let id = loops.len();
            let mut ls = latches[h.index()].clone();
            ls.sort_by_key(|&b| rpo(b));
            loops.push(LoopData { header: h, parent: None, latches: ls.clone(), depth: 0 });
            loop_of[h.index()] = Some(id);
            let mut work: Vec<Block> = ls.into_iter().filter(|&b| b != h).collect();
            while let Some(b) = work.pop() {
                match loop_of[b.index()] {
                    None => {
                        loop_of[b.index()] = Some(id);
                        work.extend(cfg.preds(b).iter().copied().filter(|&p| cfg.is_reachable(p) && p != h));
                    }
                    Some(mut inner) => {
                        while let Some(p) = loops[inner].parent {
                            inner = p;
                        }
                        if inner == id {
                            continue;
                        }
                        loops[inner].parent = Some(id);
                        let ih = loops[inner].header;
                        // Enter the inner loop's header from outside it.
                        work.extend(
                            cfg.preds(ih)
                                .iter()
                                .copied()
                                .filter(|&p| cfg.is_reachable(p) && p != h && !dom.dominates(ih, p)),
                        );
                    }
                }
            }
        }
        // Depths: parents were created after their children.
        for id in (0..loops.len()).rev() {
            loops[id].depth = loops[id].parent.map_or(1, |p| loops[p].depth + 1);
        }
        Ok(LoopForest { loops, loop_of })
    }

    /// Whether `b` belongs to loop `l` (directly or through a nested loop).
    pub fn contains(&self, l: LoopId, b: Block) -> bool {
        let mut cur = self.loop_of.get(b.index()).copied().flatten();
        while let Some(c) = cur {
            if c == l {
                return true;
            }
            if self.loops[c].depth <= self.loops[l].depth {
                return false;
            }
            cur = self.loops[c].parent;
        }
        false
    }

    /// The blocks of every loop (nested loops' blocks included), each list
    /// in reverse post order: the same as filtering `cfg.rpo` by
    /// `contains(l, _)` per loop, in one walk (O(blocks x depth)).
    pub fn blocks_in_rpo(&self, cfg: &Cfg) -> Vec<Vec<Block>> {
        let mut out: Vec<Vec<Block>> = vec![Vec::new(); self.loops.len()];
        for &b in &cfg.rpo {
            let mut cur = self.innermost(b);
            while let Some(l) = cur {
                out[l].push(b);
                cur = self.loops[l].parent;
            }
        }
        out
    }

    /// The innermost loop of `b`.
    pub fn innermost(&self, b: Block) -> Option<LoopId> {
        self.loop_of.get(b.index()).copied().flatten()
    }
}

fn irreducible(cfg: &Cfg, from: Block, to: Block) -> Irreducible {
    let n = cfg.rpo_index.len();
    // Blocks reachable from `to` that reach `from`: every cycle through the edge.
    let mut fwd = vec![false; n];
    let mut work = vec![to];
    fwd[to.index()] = true;
    while let Some(b) = work.pop() {
        for &s in cfg.succs(b) {
            if cfg.is_reachable(s) && !fwd[s.index()] {
                fwd[s.index()] = true;
                work.push(s);
            }
        }
    }
    let mut back = vec![false; n];
    let mut work = vec![from];
    back[from.index()] = true;
    while let Some(b) = work.pop() {
        for &p in cfg.preds(b) {
            if cfg.is_reachable(p) && !back[p.index()] {
                back[p.index()] = true;
                work.push(p);
            }
        }
    }
    let cycle: Vec<Block> = cfg.rpo.iter().copied().filter(|b| fwd[b.index()] && back[b.index()]).collect();
    let inside = |b: Block| fwd[b.index()] && back[b.index()];
    let entries = cycle
        .iter()
        .copied()
        .filter(|&b| Some(b) == cfg.entry || cfg.preds(b).iter().any(|&p| cfg.is_reachable(p) && !inside(p)))
        .collect();
    Irreducible { edge: (from, to), cycle, entries }
}
