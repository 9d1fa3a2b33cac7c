//! Cache prefetch hints for walks over large functions: *what* to ask
//! for (a block record, a terminator, use lists, ...). *When* to ask is the
//! business of the walks (`walk.rs`), which are the only callers outside
//! the core's own sweeps. A walk in list
//! order (layout, dominator preorder, a plan's node order) reads records
//! scattered over the tables: blocks and instructions that passes created
//! or moved sit far from their neighbours. These helpers ask for the
//! records a fixed distance ahead, so the misses of the next entries
//! overlap with the work on this one. They are hints only: nothing
//! observable changes, whatever is asked for.

use super::{Block, Function, Inst, InstHot, Value};

/// How many entries ahead a walk over a list of blocks or instructions asks
/// the cache for the records it will read: one distance for every walk
/// (walks that first need a block record to find the instruction records
/// ask for the block at this distance and its instructions at half).
pub(super) const PREFETCH_DISTANCE: usize = 8;

/// Functions with fewer instructions than this get no prefetch hints: their
/// tables (64-byte cores: 2 MiB at this size) stay in a core's caches, and
/// asking for what is already there is pure overhead (reading block
/// records and lists a second time).
pub const PREFETCH_MIN_INSTS: usize = 1 << 15;

/// The entry of `list` a walk at position `k` asks the cache for.
#[inline]
pub(super) fn prefetch_ahead<T: Copy>(list: &[T], k: usize) -> Option<T> {
    list.get(k + PREFETCH_DISTANCE).copied()
}

/// Ask the cache for the line holding `x`. Only a hint: nothing
/// observable changes.
#[inline]
pub(crate) fn prefetch_line<T>(x: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: SSE is part of x86_64; a prefetch of a valid address (a
        // live reference) reads and writes nothing.
        unsafe { _mm_prefetch::<_MM_HINT_T0>((x as *const T).cast()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}

impl Function {
    /// Whether hints pay on this function (`PREFETCH_MIN_INSTS`).
    #[inline]
    pub(super) fn prefetch_pays(&self) -> bool {
        self.insts.len() >= PREFETCH_MIN_INSTS
    }

    /// The one place a hint is given: the line of `x`, if there is one and
    /// hints pay on this function.
    #[inline]
    fn hint<T>(&self, x: Option<&T>) {
        if let Some(x) = x.filter(|_| self.prefetch_pays()) {
            prefetch_line(x);
        }
    }

    /// Ask the cache for the record of `i`, ahead of a walk that reads it.
    /// Only a hint: nothing observable changes.
    #[inline]
    pub fn prefetch_inst(&self, i: Inst) {
        self.hint(self.insts.get(i.index()));
    }

    /// Ask the cache for the block record of `b` (its instruction list),
    /// ahead of a walk that reads it. Only a hint.
    #[inline]
    pub fn prefetch_block(&self, b: Block) {
        self.hint(self.blocks.get(b.index()));
    }

    /// Ask the cache for the records of every instruction of `b` (reads
    /// `b`'s block record: ask for that earlier with `prefetch_block`).
    #[inline]
    pub fn prefetch_block_insts(&self, b: Block) {
        if !self.prefetch_pays() {
            return;
        }
        if let Some(d) = self.blocks.get(b.index()) {
            for &i in &d.insts {
                self.prefetch_inst(i);
            }
        }
    }

    /// Ask the cache for the record of `b`'s terminator, ahead of a walk
    /// that reads it (reads `b`'s block record). Only a hint: nothing
    /// observable changes. Walks over large functions call it a few blocks
    /// ahead, so that the block record -> terminator record chain of the
    /// next blocks is already on its way while this one is processed.
    #[inline]
    pub fn prefetch_terminator(&self, b: Block) {
        if !self.prefetch_pays() {
            return;
        }
        if let Some(&last) = self.blocks.get(b.index()).and_then(|d| d.insts.last()) {
            self.prefetch_inst(last);
        }
    }

    /// Ask the cache for the dense-table entries of `b`'s instructions,
    /// one request per table line (reads `b`'s block record).
    #[inline]
    pub fn prefetch_block_opcodes(&self, b: Block) {
        if !self.prefetch_pays() {
            return;
        }
        if let Some(d) = self.blocks.get(b.index()) {
            self.prefetch_opcodes(&d.insts);
        }
    }

    /// Ask the cache for the dense-table entries of `insts`, one request
    /// per table line (consecutive ids share one).
    #[inline]
    pub fn prefetch_opcodes(&self, insts: &[Inst]) {
        if !self.prefetch_pays() {
            return;
        }
        const PER_LINE: usize = 64 / std::mem::size_of::<InstHot>();
        let mut last = usize::MAX;
        for &i in insts {
            let line = i.index() / PER_LINE;
            if line != last {
                self.hint(self.hot.get(i.index()));
                last = line;
            }
        }
    }

    /// Ask the cache for the dense-table entries of `i`'s instruction
    /// operands (reads `i`'s record: ask for that earlier with
    /// `prefetch_inst`).
    #[inline]
    pub fn prefetch_operand_opcodes(&self, i: Inst) {
        if !self.prefetch_pays() {
            return;
        }
        if let Some(core) = self.insts.get(i.index()) {
            for v in &core.operands {
                if let Value::Inst(d) = v {
                    self.hint(self.hot.get(d.index()));
                }
            }
        }
    }

    /// Ask the cache for the use list of `v` (its inline part or the
    /// pointer to the rest), ahead of a walk that reads it.
    #[inline]
    pub fn prefetch_uses(&self, v: Value) {
        if let Value::Inst(i) = v {
            self.hint(self.inst_uses.get(i.index()));
        }
    }

    /// Ask the cache for the dense-table entries of `v`'s users (reads the
    /// use list: ask for that earlier with `prefetch_uses`).
    #[inline]
    pub fn prefetch_user_opcodes(&self, v: Value) {
        if !self.prefetch_pays() {
            return;
        }
        for u in self.uses(v) {
            self.hint(self.hot.get(u.user.index()));
        }
    }

    /// Ask the cache for the records of `v`'s users (reads the use list:
    /// ask for that earlier with `prefetch_uses`), ahead of rewriting their
    /// operands.
    #[inline]
    pub fn prefetch_user_records(&self, v: Value) {
        if !self.prefetch_pays() {
            return;
        }
        for u in self.uses(v) {
            self.prefetch_inst(u.user);
        }
    }
}
