//! Dominator tree (Cooper, Harvey and Kennedy's iterative algorithm over
//! reverse post order), with dominance frontiers. Unreachable blocks have no
//! immediate dominator and dominate nothing.

use super::cfg::Cfg;
use crate::ir::{Block, Function};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DomTree {
    /// Immediate dominator per block id; the entry maps to itself.
    idom: Vec<Option<Block>>,
    rpo_index: Vec<usize>,
    /// Children of block `b`, in RPO order: `children[child_start[b] ..
    /// child_start[b + 1]]` (one flat table, not a list per block: the tree
    /// is built for every pass that asks, on functions of 10^5 blocks).
    child_start: Vec<u32>,
    children: Vec<Block>,
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
        let mut child_start = vec![0u32; n + 1];
        for &b in &cfg.rpo {
            if let Some(p) = parent_of(b) {
                child_start[p.index() + 1] += 1;
            }
        }
        for k in 0..n {
            child_start[k + 1] += child_start[k];
        }
        let mut fill = child_start.clone();
        let mut children = vec![Block(0); child_start[n] as usize];
        for &b in &cfg.rpo {
            if let Some(p) = parent_of(b) {
                children[fill[p.index()] as usize] = b;
                fill[p.index()] += 1;
            }
        }
        let kids = |b: Block| &children[child_start[b.index()] as usize..child_start[b.index() + 1] as usize];
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
        DomTree { idom, rpo_index: cfg.rpo_index.clone(), child_start, children, pre, post }
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
        match self.child_start.get(b.index()..b.index() + 2) {
            Some(&[lo, hi]) => &self.children[lo as usize..hi as usize],
            _ => &[],
        }
    }

    /// Dominance frontier of every block (Cytron et al. via the CHK walk).
    pub fn frontiers(&self, cfg: &Cfg) -> Vec<Vec<Block>> {
        let t = self.frontier_table(cfg);
        (0..self.idom.len()).map(|k| t.of(Block::new(k)).to_vec()).collect()
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
        let mut start = vec![0u32; n + 1];
        for &(r, _) in &pairs {
            start[r.index() + 1] += 1;
        }
        for k in 0..n {
            start[k + 1] += start[k];
        }
        let mut fill: Vec<u32> = start[..n].to_vec();
        let mut list = vec![Block::new(0); pairs.len()];
        for &(r, b) in &pairs {
            list[fill[r.index()] as usize] = b;
            fill[r.index()] += 1;
        }
        Frontiers { start, list }
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

/// Dominance frontiers of every block id, flat: block `k`'s are
/// `list[start[k]..start[k + 1]]`, in reverse post order of the joins.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frontiers {
    start: Vec<u32>,
    list: Vec<Block>,
}

impl Frontiers {
    /// The frontier of `b` (empty for ids past the table).
    pub fn of(&self, b: Block) -> &[Block] {
        match (self.start.get(b.index()), self.start.get(b.index() + 1)) {
            (Some(&lo), Some(&hi)) => &self.list[lo as usize..hi as usize],
            _ => &[],
        }
    }
}
