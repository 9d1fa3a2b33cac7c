//! Dominator tree (Cooper, Harvey and Kennedy's iterative algorithm over
//! reverse post order), with dominance frontiers. Unreachable blocks have no
//! immediate dominator and dominate nothing.

use super::cfg::Cfg;
use crate::ir::FlatLists;
use crate::ir::{Block, Function};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DomTree {
    /// Immediate dominator per block id; the entry maps to itself.
    idom: Vec<Option<Block>>,
    rpo_index: Vec<usize>,
    /// Children of each block, in RPO order (one flat table, not a list per
    /// block: the tree is built for every pass that asks, on functions of
    /// 10^5 blocks).
    children: FlatLists<Block>,
    /// Pre/post numbers of a DFS of the tree, for O(1) dominance queries.
    pre: Vec<u32>,
    post: Vec<u32>,
}

impl DomTree {
    pub fn compute(f: &Function) -> DomTree {
        Self::from_cfg(&Cfg::compute(f))
    }

    pub fn from_cfg(cfg: &Cfg) -> DomTree {
        let n = cfg.rpo_index.len();
        let mut idom: Vec<Option<Block>> = vec![None; n];
        if let Some(entry) = cfg.entry {
            idom[entry.index()] = Some(entry);
            let mut changed = true;
            while changed {
                changed = false;
                for &b in cfg.rpo.iter().skip(1) {
                    let mut new: Option<Block> = None;
                    for &p in cfg.preds(b) {
                        if idom[p.index()].is_none() {
                            continue;
                        }
                        new = Some(match new {
                            None => p,
                            Some(cur) => intersect(&idom, &cfg.rpo_index, p, cur),
                        });
                    }
                    if new.is_some() && idom[b.index()] != new {
                        idom[b.index()] = new;
                        changed = true;
                    }
                }
            }
        }
        // Counting sort of the RPO by parent keeps each parent's children in
        // RPO order.
        let parent_of = |b: Block| idom[b.index()].filter(|&p| p != b);
        let children = FlatLists::from_pairs(n, cfg.rpo.iter().filter_map(|&b| Some((parent_of(b)?.index(), b))));
        let kids = |b: Block| children.get(b.index());
        let mut pre = vec![u32::MAX; n];
        let mut post = vec![u32::MAX; n];
        if let Some(entry) = cfg.entry {
            let mut counter = 0u32;
            let mut stack = vec![(entry, 0usize)];
            pre[entry.index()] = counter;
            counter += 1;
            while let Some((b, i)) = stack.last_mut() {
                let b = *b;
                if let Some(&c) = kids(b).get(*i) {
                    *i += 1;
                    pre[c.index()] = counter;
                    counter += 1;
                    stack.push((c, 0));
                } else {
                    post[b.index()] = counter;
                    counter += 1;
                    stack.pop();
                }
            }
        }
        DomTree { idom, rpo_index: cfg.rpo_index.clone(), children, pre, post }
    }

    /// Immediate dominator (`None` for the entry and unreachable blocks).
    pub fn idom(&self, b: Block) -> Option<Block> {
        self.idom.get(b.index()).copied().flatten().filter(|&d| d != b)
    }

    pub fn is_reachable(&self, b: Block) -> bool {
        self.idom.get(b.index()).is_some_and(|d| d.is_some())
    }

    /// Whether `a` dominates `b` (reflexive). False if either is unreachable.
    pub fn dominates(&self, a: Block, b: Block) -> bool {
        if !self.is_reachable(a) || !self.is_reachable(b) {
            return false;
        }
        self.pre[a.index()] <= self.pre[b.index()] && self.post[b.index()] <= self.post[a.index()]
    }

    pub fn children(&self, b: Block) -> &[Block] {
        self.children.get(b.index())
    }

    /// Dominance frontier of every block (Cytron et al. via the CHK walk).
    pub fn frontiers(&self, cfg: &Cfg) -> Vec<Vec<Block>> {
        let t = self.frontier_table(cfg);
        (0..self.idom.len()).map(|k| t.get(k).to_vec()).collect()
    }

    /// The dominance frontiers in one flat table (`frontiers` without a
    /// list per block): the same sets in the same order.
    pub fn frontier_table(&self, cfg: &Cfg) -> Frontiers {
        let n = self.idom.len();
        // (runner, join) pairs in the order the classic loop adds them; a
        // join is added to a runner once (`last` stamps the join per
        // runner: the joins are visited one at a time).
        let mut pairs: Vec<(Block, Block)> = Vec::new();
        let mut last: Vec<u32> = vec![u32::MAX; n];
        for &b in &cfg.rpo {
            let preds = cfg.preds(b);
            if preds.len() < 2 {
                continue;
            }
            let Some(idom_b) = self.idom.get(b.index()).copied().flatten() else { continue };
            for &p in preds {
                let mut runner = p;
                while self.is_reachable(runner) && runner != idom_b {
                    if std::mem::replace(&mut last[runner.index()], b.0) != b.0 {
                        pairs.push((runner, b));
                    }
                    match self.idom(runner) {
                        Some(next) => runner = next,
                        None => break,
                    }
                }
            }
        }
        FlatLists::from_pairs(n, pairs.iter().map(|&(r, b)| (r.index(), b)))
    }
}

fn intersect(idom: &[Option<Block>], rpo_index: &[usize], mut a: Block, mut b: Block) -> Block {
    while a != b {
        while rpo_index[a.index()] > rpo_index[b.index()] {
            a = idom[a.index()].expect("processed block has idom");
        }
        while rpo_index[b.index()] > rpo_index[a.index()] {
            b = idom[b.index()].expect("processed block has idom");
        }
    }
    a
}

/// Dominance frontiers of every block id, flat (`get(b.index())`), each in
/// reverse post order of the joins.
pub type Frontiers = FlatLists<Block>;
