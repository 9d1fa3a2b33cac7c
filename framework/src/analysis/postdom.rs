//! Post-dominator tree: the dominator tree of the reversed CFG with one
//! virtual exit that every exiting block (no successors) flows into. Blocks
//! that cannot reach an exit (infinite loops) are not post-dominated by it.

use super::{cfg::Cfg, dom::DomTree};
use crate::ir::{Block, Function};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PostDomTree {
    tree: DomTree,
    /// The virtual exit's id (one past the function's block ids).
    exit: Block,
}

impl PostDomTree {
    pub fn compute(f: &Function) -> PostDomTree {
        Self::from_cfg(&Cfg::compute(f))
    }

    pub fn from_cfg(cfg: &Cfg) -> PostDomTree {
        let n = cfg.block_count();
        let exit = Block::new(n);
        let mut succs = vec![super::cfg::Edges::new(); n + 1];
        let mut preds = vec![super::cfg::Edges::new(); n + 1];
        for &b in &cfg.rpo {
            let out = cfg.succs(b);
            if out.is_empty() {
                succs[exit.index()].push(b);
                preds[b.index()].push(exit);
            }
            for &s in out {
                // Reversed edge s -> b.
                succs[s.index()].push(b);
                preds[b.index()].push(s);
            }
        }
        let reversed = Cfg::from_lists(Some(exit), &succs, &preds);
        PostDomTree { tree: DomTree::from_cfg(&reversed), exit }
    }

    /// Immediate post-dominator; `None` for exits (post-dominated only by the
    /// virtual exit) and blocks that cannot reach an exit.
    pub fn ipdom(&self, b: Block) -> Option<Block> {
        self.tree.idom(b).filter(|&p| p != self.exit)
    }

    /// Whether `a` post-dominates `b` (reflexive).
    pub fn post_dominates(&self, a: Block, b: Block) -> bool {
        self.tree.dominates(a, b)
    }
}
