//! Control-flow graph facts of one function: predecessors, reverse post
//! order and reachability, over the executed edges (`Function::successors`).

use smallvec::SmallVec;

use crate::ir::{Block, Function};

/// A block's successors or predecessors (inline up to two).
pub type Edges = SmallVec<[Block; 2]>;

/// Dense CFG snapshot of one function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cfg {
    pub entry: Option<Block>,
    /// Successors per block id (empty for unowned ids). Inline up to two
    /// (almost every block): building a CFG allocates per block only for
    /// switches and merges of more than two edges, which keeps `compute`
    /// linear in practice on functions of 10^6 instructions.
    pub succs: Vec<Edges>,
    /// Predecessors per block id, each predecessor once per edge.
    pub preds: Vec<Edges>,
    /// Reachable blocks in reverse post order from the entry.
    pub rpo: Vec<Block>,
    /// Position of each block in `rpo` (`usize::MAX` if unreachable).
    pub rpo_index: Vec<usize>,
}

impl Cfg {
    pub fn compute(f: &Function) -> Cfg {
        let n = f.block_capacity();
        // `resize_with`, not `vec![Edges::new(); n]`: the latter clones the
        // empty list per block through `SmallVec`'s generic `extend`.
        let mut succs: Vec<Edges> = Vec::with_capacity(n);
        succs.resize_with(n, Edges::new);
        let mut preds: Vec<Edges> = Vec::with_capacity(n);
        preds.resize_with(n, Edges::new);
        for &b in f.blocks() {
            let out = f.successor_slice(b);
            succs[b.index()] = Edges::from_slice(out);
            for &s in out {
                if s.index() < n {
                    preds[s.index()].push(b);
                }
            }
        }
        let entry = f.body();
        let mut rpo = Vec::new();
        if let Some(e) = entry {
            // Iterative DFS producing post order.
            let mut visited = vec![false; n];
            let mut stack: Vec<(Block, usize)> = vec![(e, 0)];
            visited[e.index()] = true;
            while let Some((b, i)) = stack.last_mut() {
                let b = *b;
                if let Some(&s) = succs[b.index()].get(*i) {
                    *i += 1;
                    if s.index() < n && !visited[s.index()] {
                        visited[s.index()] = true;
                        stack.push((s, 0));
                    }
                } else {
                    rpo.push(b);
                    stack.pop();
                }
            }
            rpo.reverse();
        }
        let mut rpo_index = vec![usize::MAX; n];
        for (i, b) in rpo.iter().enumerate() {
            rpo_index[b.index()] = i;
        }
        Cfg { entry, succs, preds, rpo, rpo_index }
    }

    pub fn is_reachable(&self, b: Block) -> bool {
        self.rpo_index.get(b.index()).is_some_and(|&i| i != usize::MAX)
    }
    pub fn preds(&self, b: Block) -> &[Block] {
        &self.preds[b.index()]
    }
    pub fn succs(&self, b: Block) -> &[Block] {
        &self.succs[b.index()]
    }
}
