//! A batched rewriter: many insertions (before or after an instruction, at
//! the top or the bottom of a block) collected and placed in one rebuild
//! per affected block, for passes that change many instructions at once
//! (reg2mem's spill loads and stores, mem2reg's Phis). A cursor edit is a
//! shift of the block's list; a thousand of them on one long block is
//! quadratic, the batch is linear.
//!
//! An instruction given to the rewriter is placed at once as far as the
//! rest of the function can tell: its parent is its block and its operands
//! are in their use lists, so `replace_all_uses` and `replace_uses` made
//! during the batch reach it. Only its block's list lacks it until the
//! rewriter is committed (or dropped, which commits): while it lives, a
//! pass must not read the lists of the blocks it inserts into. The batch
//! borrows the function mutably, so no one else can.

use super::{pack_parent, Block, Function, Inst, InstData, InstList};
use crate::ir::FlatLists;

/// Insertions into a function, applied in one rebuild per block
/// (`Function::rewriter`).
pub struct Rewriter<'f> {
    func: &'f mut Function,
    /// (anchor instruction id, instruction placed before / after it)
    before: Vec<(usize, Inst)>,
    after: Vec<(usize, Inst)>,
    /// (block id, instruction placed at its top / its bottom)
    top: Vec<(usize, Inst)>,
    bottom: Vec<(usize, Inst)>,
    /// Blocks whose lists the commit rebuilds (with repeats).
    blocks: Vec<Block>,
}

impl Function {
    /// A batch of insertions, placed when it is committed or dropped.
    pub fn rewriter(&mut self) -> Rewriter<'_> {
        Rewriter {
            func: self,
            before: Vec::new(),
            after: Vec::new(),
            top: Vec::new(),
            bottom: Vec::new(),
            blocks: Vec::new(),
        }
    }
}

impl std::ops::Deref for Rewriter<'_> {
    type Target = Function;
    fn deref(&self) -> &Function {
        self.func
    }
}

impl Rewriter<'_> {
    /// The function, for edits that are not insertions (`replace_uses`,
    /// `set_operand`, `create_inst`, ...). They keep the function's
    /// invariants; the pending insertions are placed around them.
    pub fn func(&mut self) -> &mut Function {
        self.func
    }

    /// Record the unplaced `i` as placed in `b` (parent, operand uses);
    /// its list position comes at the commit.
    fn claim(&mut self, b: Block, i: Inst) {
        debug_assert!(!self.func.is_live(i), "instruction placed twice");
        self.func.hot[i.index()].parent = pack_parent(Some(b));
        self.func.attach_operands(i);
        self.blocks.push(b);
    }

    /// Place unplaced `i` right before `anchor` (placed, or pending in
    /// this batch). Several before one anchor keep their order.
    pub fn place_before(&mut self, anchor: Inst, i: Inst) {
        let b = self.func.parent(anchor).expect("anchor is placed");
        self.claim(b, i);
        self.before.push((anchor.index(), i));
    }
    /// Place unplaced `i` right after `anchor` (after earlier ones there).
    pub fn place_after(&mut self, anchor: Inst, i: Inst) {
        let b = self.func.parent(anchor).expect("anchor is placed");
        self.claim(b, i);
        self.after.push((anchor.index(), i));
    }
    /// Place unplaced `i` at the top of `b` (after earlier ones there).
    pub fn place_at_top(&mut self, b: Block, i: Inst) {
        self.claim(b, i);
        self.top.push((b.index(), i));
    }
    /// Place unplaced `i` at the bottom of `b` (after earlier ones there).
    pub fn place_at_bottom(&mut self, b: Block, i: Inst) {
        self.claim(b, i);
        self.bottom.push((b.index(), i));
    }

    /// Create an instruction and place it before `anchor`.
    pub fn insert_before(&mut self, anchor: Inst, data: InstData) -> Inst {
        let i = self.func.create_inst(data);
        self.place_before(anchor, i);
        i
    }
    /// Create an instruction and place it after `anchor`.
    pub fn insert_after(&mut self, anchor: Inst, data: InstData) -> Inst {
        let i = self.func.create_inst(data);
        self.place_after(anchor, i);
        i
    }
    /// Create an instruction and place it at the top of `b`.
    pub fn insert_at_top(&mut self, b: Block, data: InstData) -> Inst {
        let i = self.func.create_inst(data);
        self.place_at_top(b, i);
        i
    }
    /// Create an instruction and place it at the bottom of `b`.
    pub fn insert_at_bottom(&mut self, b: Block, data: InstData) -> Inst {
        let i = self.func.create_inst(data);
        self.place_at_bottom(b, i);
        i
    }

    /// Place every pending instruction (also done on drop).
    pub fn commit(self) {}

    fn apply(&mut self) {
        if self.blocks.is_empty() {
            return;
        }
        let f = &mut *self.func;
        let n = f.inst_capacity();
        let nb = f.block_capacity();
        // Grouped only where there is something to group: a table per
        // instruction id is a sweep of the whole function.
        let group = |n: usize, pairs: &[(usize, Inst)]| {
            (!pairs.is_empty()).then(|| FlatLists::from_pairs(n, pairs.iter().copied()))
        };
        let at = Anchored { before: group(n, &self.before), after: group(n, &self.after) };
        let top = group(nb, &self.top);
        let bottom = group(nb, &self.bottom);
        let mut blocks = std::mem::take(&mut self.blocks);
        blocks.sort_unstable();
        blocks.dedup();
        let mut walk = f.walk(&blocks, super::reads::BlockList);
        while let Some(b) = walk.next(f) {
            let old = std::mem::take(&mut f.blocks[b.index()].insts);
            let mut list = InstList::with_capacity(old.len());
            for &i in listed(&top, b.index()) {
                at.emit(&mut list, i);
            }
            for &i in &old {
                at.emit(&mut list, i);
            }
            for &i in listed(&bottom, b.index()) {
                at.emit(&mut list, i);
            }
            f.blocks[b.index()].insts = list;
        }
    }
}

impl Drop for Rewriter<'_> {
    fn drop(&mut self) {
        self.apply();
    }
}

/// Key `k`'s list of a grouping that may not exist (nothing to group).
fn listed(lists: &Option<FlatLists<Inst>>, k: usize) -> &[Inst] {
    lists.as_ref().map_or(&[], |l| l.get(k))
}

/// The insertions anchored at instructions, grouped by anchor.
struct Anchored {
    before: Option<FlatLists<Inst>>,
    after: Option<FlatLists<Inst>>,
}

impl Anchored {
    /// Push `i` with whatever goes before and after it (recursively: an
    /// instruction inserted in this batch may anchor others).
    fn emit(&self, list: &mut InstList, i: Inst) {
        for &x in listed(&self.before, i.index()) {
            self.emit(list, x);
        }
        list.push(i);
        for &x in listed(&self.after, i.index()) {
            self.emit(list, x);
        }
    }
}
