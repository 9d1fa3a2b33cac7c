//! Control-flow graph facts of one function: predecessors, reverse post
//! order and reachability, over the executed edges (`Function::successors`).

use smallvec::SmallVec;

use crate::ir::FlatLists;
use crate::ir::{Block, Function};

/// A block's successors or predecessors as a list of its own, for code
/// that edits a copy of the graph (`Cfg::succ_lists` / `pred_lists`).
pub type Edges = SmallVec<[Block; 2]>;

/// Dense CFG snapshot of one function. The edges sit in flat tables (per
/// block a range of one list), so building a CFG allocates a handful of
/// vectors whatever the function's size, and dropping one frees them
/// without visiting a record per block (a list per block cost a quarter of
/// a block-level pass on functions of 10^6 instructions: BENCHMARKS.md).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cfg {
    pub entry: Option<Block>,
    /// Per block id, `(start, len)` of its successors in `succ_list`
    /// (empty for unowned ids).
    succ_span: Vec<(u32, u32)>,
    succ_list: Vec<Block>,
    /// Per block id, its predecessors, one per edge.
    preds: FlatLists<Block>,
    /// Reachable blocks in reverse post order from the entry.
    pub rpo: Vec<Block>,
    /// Position of each block in `rpo` (`usize::MAX` if unreachable).
    pub rpo_index: Vec<usize>,
}

impl Cfg {
    pub fn compute(f: &Function) -> Cfg {
        let n = f.block_capacity();
        let mut succ_span = vec![(0u32, 0u32); n];
        let mut succ_list: Vec<Block> = Vec::with_capacity(f.blocks().len() * 2);
        for (b, t) in f.terminators_in_layout() {
            let out = t.map(|t| f.inst(t).successor_slice()).unwrap_or(&[]);
            let start = succ_list.len() as u32;
            succ_list.extend_from_slice(out);
            succ_span[b.index()] = (start, succ_list.len() as u32 - start);
        }
        // Predecessors in layout order; successor ids past the table
        // (dangling, reported by the verifier) have none.
        let edges = f.blocks().iter().flat_map(|&b| {
            let out = &succ_list[span(succ_span[b.index()])];
            out.iter().filter(|s| s.index() < n).map(move |&s| (s.index(), b))
        });
        let preds = FlatLists::from_pairs(n, edges);
        let (rpo, rpo_index) = reverse_post_order(f.body(), n, |b| &succ_list[span(succ_span[b])]);
        Cfg { entry: f.body(), succ_span, succ_list, preds, rpo, rpo_index }
    }

    /// A CFG over `succs.len()` block ids from explicit successor and
    /// predecessor lists (virtual exits and roots of derived graphs:
    /// post-dominators, the unreachable forest). `preds` must hold each
    /// edge of `succs` reversed; its order is kept.
    pub fn from_lists(entry: Option<Block>, succs: &[Edges], preds: &[Edges]) -> Cfg {
        let n = succs.len();
        let mut succ_span = Vec::with_capacity(n);
        let mut succ_list = Vec::new();
        for out in succs {
            succ_span.push((succ_list.len() as u32, out.len() as u32));
            succ_list.extend_from_slice(out);
        }
        let preds =
            FlatLists::from_pairs(n, preds.iter().enumerate().flat_map(|(k, p)| p.iter().map(move |&x| (k, x))));
        let (rpo, rpo_index) = reverse_post_order(entry, n, |b| &succ_list[span(succ_span[b])]);
        Cfg { entry, succ_span, succ_list, preds, rpo, rpo_index }
    }

    /// Number of block ids the tables cover.
    pub fn block_count(&self) -> usize {
        self.succ_span.len()
    }

    pub fn is_reachable(&self, b: Block) -> bool {
        self.rpo_index.get(b.index()).is_some_and(|&i| i != usize::MAX)
    }
    pub fn preds(&self, b: Block) -> &[Block] {
        self.preds.get(b.index())
    }
    pub fn succs(&self, b: Block) -> &[Block] {
        self.succ_span.get(b.index()).map_or(&[], |&s| &self.succ_list[span(s)])
    }

    /// Every block's successors as a list of its own (for passes that edit
    /// the graph as they go).
    pub fn succ_lists(&self) -> Vec<Edges> {
        (0..self.block_count()).map(|k| Edges::from_slice(self.succs(Block::new(k)))).collect()
    }
    /// Every block's predecessors as a list of its own.
    pub fn pred_lists(&self) -> Vec<Edges> {
        (0..self.block_count()).map(|k| Edges::from_slice(self.preds(Block::new(k)))).collect()
    }
}

fn span((start, len): (u32, u32)) -> std::ops::Range<usize> {
    start as usize..(start + len) as usize
}

/// Reverse post order from `entry` over `n` block ids (iterative DFS,
/// successors in order), and each block's position in it.
fn reverse_post_order<'a>(
    entry: Option<Block>,
    n: usize,
    succs: impl Fn(usize) -> &'a [Block],
) -> (Vec<Block>, Vec<usize>) {
    let mut rpo = Vec::new();
    if let Some(e) = entry.filter(|e| e.index() < n) {
        let mut visited = vec![false; n];
        let mut stack: Vec<(Block, usize)> = vec![(e, 0)];
        visited[e.index()] = true;
        while let Some((b, i)) = stack.last_mut() {
            let b = *b;
            if let Some(&s) = succs(b.index()).get(*i) {
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
    (rpo, rpo_index)
}
