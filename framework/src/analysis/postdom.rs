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
        let n = cfg.succs.len();
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
        // Reverse post order of the reversed graph from the virtual exit.
        let mut visited = vec![false; n + 1];
        let mut order = Vec::new();
        let mut stack = vec![(exit, 0usize)];
        visited[exit.index()] = true;
        while let Some((b, i)) = stack.last_mut() {
            let b = *b;
            if let Some(&s) = succs[b.index()].get(*i) {
                *i += 1;
                if !visited[s.index()] {
                    visited[s.index()] = true;
                    stack.push((s, 0));
                }
            } else {
                order.push(b);
                stack.pop();
            }
        }
        order.reverse();
        let mut rpo_index = vec![usize::MAX; n + 1];
        for (i, b) in order.iter().enumerate() {
            rpo_index[b.index()] = i;
        }
        let reversed = Cfg { entry: Some(exit), succs, preds, rpo: order, rpo_index };
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
