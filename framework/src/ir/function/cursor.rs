//! A cursor: a position in a function's layout (at an instruction, at the
//! top or the bottom of a block) and the edits made there, as Cranelift's
//! `FuncCursor`. Every edit goes through the function's own mutation API,
//! so block lists, parents and use lists stay exact.
//!
//! The insertion point is *before* the current instruction: inserting
//! several instructions in a row keeps them in program order, and the
//! cursor stays on the instruction it was at. At the bottom of a block
//! insertions append. The cursor keeps its index into the block's list, so
//! walking and editing a block costs no search per step.

use super::{Block, Function, Inst, InstData};

/// Where a cursor stands.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum CursorPosition {
    /// Not in any block (a fresh cursor).
    Nowhere,
    /// At an instruction: insertions go before it.
    At(Inst),
    /// Before the first instruction of the block.
    Top(Block),
    /// After the last instruction of the block: insertions append.
    Bottom(Block),
}

/// A position in a function and the edits made at it (`Function::cursor`).
pub struct Cursor<'f> {
    func: &'f mut Function,
    /// The block and the index of the current instruction in its list
    /// (`len` at the bottom); `None` nowhere.
    at: Option<(Block, usize)>,
    /// At the top of the block (index 0, but before the first instruction
    /// rather than at it).
    top: bool,
}

impl Function {
    /// A cursor over this function, nowhere yet.
    pub fn cursor(&mut self) -> Cursor<'_> {
        Cursor { func: self, at: None, top: false }
    }
}

impl std::ops::Deref for Cursor<'_> {
    type Target = Function;
    fn deref(&self) -> &Function {
        self.func
    }
}

impl<'f> Cursor<'f> {
    /// The function, for edits the cursor does not make itself (they keep
    /// the function's invariants; the cursor's position stays valid as long
    /// as they do not reorder its block).
    pub fn func(&mut self) -> &mut Function {
        self.func
    }

    pub fn position(&self) -> CursorPosition {
        match self.at {
            None => CursorPosition::Nowhere,
            Some((b, _)) if self.top => CursorPosition::Top(b),
            Some((b, k)) => match self.func.block(b).insts().get(k) {
                Some(&i) => CursorPosition::At(i),
                None => CursorPosition::Bottom(b),
            },
        }
    }

    /// The block the cursor is in.
    pub fn current_block(&self) -> Option<Block> {
        self.at.map(|(b, _)| b)
    }

    /// The instruction the cursor is at.
    pub fn current_inst(&self) -> Option<Inst> {
        match self.position() {
            CursorPosition::At(i) => Some(i),
            _ => None,
        }
    }

    // ---- moving -------------------------------------------------------

    /// Stand at placed instruction `i`.
    pub fn at_inst(mut self, i: Inst) -> Self {
        self.goto_inst(i);
        self
    }
    /// Stand before the first instruction of `b`.
    pub fn at_top(mut self, b: Block) -> Self {
        self.goto_top(b);
        self
    }
    /// Stand after the last instruction of `b`.
    pub fn at_bottom(mut self, b: Block) -> Self {
        self.goto_bottom(b);
        self
    }
    /// Stand at the terminator of `b` (at the bottom if it has none), so
    /// that insertions go before it.
    pub fn at_terminator(mut self, b: Block) -> Self {
        match self.func.terminator(b) {
            Some(t) => self.goto_inst(t),
            None => self.goto_bottom(b),
        }
        self
    }

    pub fn goto_inst(&mut self, i: Inst) {
        let b = self.func.parent(i).expect("cursor target instruction is placed");
        let k = self.func.position(i).expect("a placed instruction is in its block's list");
        self.at = Some((b, k));
        self.top = false;
    }
    pub fn goto_top(&mut self, b: Block) {
        self.at = Some((b, 0));
        self.top = true;
    }
    pub fn goto_bottom(&mut self, b: Block) {
        self.at = Some((b, self.func.block(b).insts().len()));
        self.top = false;
    }

    /// Step to the next instruction of the block and return it; past the
    /// last one the cursor stands at the bottom and this returns `None`.
    pub fn next_inst(&mut self) -> Option<Inst> {
        let (b, k) = self.at?;
        let len = self.func.block(b).insts().len();
        let next = if self.top { 0 } else { (k + 1).min(len) };
        self.top = false;
        self.at = Some((b, next));
        self.func.block(b).insts().get(next).copied()
    }

    /// Step to the previous instruction of the block and return it; before
    /// the first one the cursor stands at the top and this returns `None`.
    pub fn prev_inst(&mut self) -> Option<Inst> {
        let (b, k) = self.at?;
        if self.top || k == 0 {
            self.top = true;
            self.at = Some((b, 0));
            return None;
        }
        self.at = Some((b, k - 1));
        self.func.block(b).insts().get(k - 1).copied()
    }

    // ---- editing ------------------------------------------------------

    /// The block and list index where an insertion goes.
    fn insertion_point(&self) -> (Block, usize) {
        self.at.expect("cursor is in a block")
    }

    /// Insert a new instruction at the insertion point (before the current
    /// instruction; appended at the bottom). The cursor stays where it
    /// was, so a run of insertions keeps program order.
    pub fn insert(&mut self, data: InstData) -> Inst {
        let i = self.func.create_inst(data);
        self.place(i);
        i
    }

    /// Place the unplaced instruction `i` at the insertion point (see
    /// `insert`).
    pub fn place(&mut self, i: Inst) {
        let (b, k) = self.insertion_point();
        self.func.insert_inst(b, k, i);
        // Just past it: at the instruction that was at the point (or at
        // the bottom), also after an insertion at the top.
        self.at = Some((b, k + 1));
        self.top = false;
    }

    /// Insert a new instruction right after the current one and stand at
    /// it (so that a run of `insert_after` keeps program order).
    pub fn insert_after(&mut self, data: InstData) -> Inst {
        let (b, k) = self.insertion_point();
        let at = if self.top { 0 } else { (k + 1).min(self.func.block(b).insts().len()) };
        let i = self.func.create_inst(data);
        self.func.insert_inst(b, at, i);
        self.top = false;
        self.at = Some((b, at));
        i
    }

    /// Replace the current instruction's data in place (same id: its uses
    /// stay; `Function::replace_inst`).
    pub fn replace(&mut self, data: InstData) {
        let i = self.current_inst().expect("cursor is at an instruction");
        self.func.replace_inst(i, data);
    }

    /// Remove the current instruction (its result must have no uses left)
    /// and stand at the one that followed it.
    pub fn remove(&mut self) -> Inst {
        let i = self.current_inst().expect("cursor is at an instruction");
        self.func.remove_inst(i);
        i
    }

    /// Move placed instruction `i` (from anywhere) to the insertion point,
    /// keeping its uses.
    pub fn move_here(&mut self, i: Inst) {
        let (b, mut k) = self.insertion_point();
        if self.func.parent(i) == Some(b) {
            let from = self.func.position(i).expect("placed");
            if from < k {
                k -= 1;
            }
        }
        self.func.move_inst(i, b, k);
        self.at = Some((b, k + 1));
        self.top = false;
    }

    /// Split the block at the cursor: the current instruction and every
    /// one after it move, in order, to `into` (an empty block of the
    /// layout, created by the caller where it wants it), and the Phis of
    /// the moved terminator's successors now name `into` as the
    /// predecessor. The cursor stands at the bottom of the old block, ready
    /// for the branch that joins the two.
    pub fn split_block(&mut self, into: Block) {
        let (b, k) = self.insertion_point();
        assert!(self.func.block(into).insts().is_empty(), "split target block is empty");
        let k = if self.top { 0 } else { k };
        self.func.split_block_at(b, k, into);
        self.top = false;
        self.at = Some((b, k));
    }
}
