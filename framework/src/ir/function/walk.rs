//! Walks over a list of blocks, instructions or values that ask the cache
//! for what they will read, ahead of reading it.
//!
//! A pass says *what* it reads of each entry (`Reads`: the block record,
//! the terminator, every instruction record, the dense-table entries, the
//! use lists, ...); the walk decides *when* to ask. No pass names a
//! distance or a look-ahead index. A walk does not borrow the function
//! between steps (`Walk::next` takes it for the step only), so the loop
//! body may mutate the function it walks.
//!
//! On functions below `PREFETCH_MIN_INSTS` instructions the hints are off
//! (their tables stay in a core's caches); the walk is then a plain loop.
//! BENCHMARKS.md ("Legalization passes") has the measurements at 10^6
//! instructions that justify the hints kept.

use super::prefetch::PREFETCH_DISTANCE;
use super::{Block, Function, Inst, Value};

/// How long the chain of reads behind one entry is, which sets how far
/// ahead the walk asks for its first and its second read.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Chain {
    /// One random access per entry, or two where the second is cheap
    /// (a use list, then the users' entries).
    Short,
    /// A record that leads to more records (a block record, then its
    /// terminator or its instructions' table lines): the first read is
    /// asked for twice as far ahead.
    Long,
}

impl Chain {
    /// Entries ahead for the first, the second and the third read.
    fn stages(self) -> (usize, usize, usize) {
        match self {
            Chain::Short => (PREFETCH_DISTANCE, PREFETCH_DISTANCE / 2, PREFETCH_DISTANCE / 4),
            Chain::Long => (2 * PREFETCH_DISTANCE, PREFETCH_DISTANCE, PREFETCH_DISTANCE / 2),
        }
    }
}

/// What a walk reads of each entry of type `T`. `first` is asked for
/// well ahead; `then` (reads reached through the first, such as a
/// terminator named by a block record) nearer, once the first has had time
/// to arrive; `last` nearer still. Only hints: nothing observable may
/// change.
pub trait Reads<T: Copy> {
    const CHAIN: Chain = Chain::Short;
    fn first(&self, f: &Function, x: T);
    fn then(&self, _f: &Function, _x: T) {}
    /// Reads reached through the second (a scan's per-instruction tables
    /// found from the opcodes), nearer still.
    fn last(&self, _f: &Function, _x: T) {}
}

/// A walk over `list` in order (`Function::walk`).
pub struct Walk<'l, T, R> {
    list: &'l [T],
    pos: usize,
    reads: R,
    hints: bool,
}

impl<'l, T: Copy, R: Reads<T>> Walk<'l, T, R> {
    /// The next entry, after asking for what the walk will read of the
    /// entries ahead of it.
    #[inline]
    pub fn next(&mut self, f: &Function) -> Option<T> {
        let k = self.pos;
        let x = *self.list.get(k)?;
        if self.hints {
            let (far, near, nearest) = R::CHAIN.stages();
            if let Some(&a) = self.list.get(k + far) {
                self.reads.first(f, a);
            }
            if let Some(&a) = self.list.get(k + near) {
                self.reads.then(f, a);
            }
            if let Some(&a) = self.list.get(k + nearest) {
                self.reads.last(f, a);
            }
        }
        self.pos += 1;
        Some(x)
    }

    /// Stand at position `k` (a walk that follows the list only roughly,
    /// such as an emission in about the list's order): the entries after
    /// `k` are asked for, and `next` continues after `k`.
    #[inline]
    pub fn seek(&mut self, f: &Function, k: usize) -> Option<T> {
        self.pos = k;
        self.next(f)
    }

    /// The position of the entry `next` returned last.
    pub fn position(&self) -> usize {
        self.pos.saturating_sub(1)
    }
}

/// A walk over every instruction id, from the highest down
/// (`Function::walk_ids_descending`): a descending stream, which the
/// hardware does not follow on its own.
pub struct IdsDescending<R> {
    next: usize,
    reads: R,
    hints: bool,
}

impl<R: Reads<Inst>> IdsDescending<R> {
    /// The next lower id (removed instructions included).
    #[inline]
    pub fn next(&mut self, f: &Function) -> Option<Inst> {
        let k = self.next.checked_sub(1)?;
        self.next = k;
        if self.hints {
            let (far, near, nearest) = R::CHAIN.stages();
            if let Some(a) = k.checked_sub(far) {
                self.reads.first(f, Inst::new(a));
            }
            if let Some(a) = k.checked_sub(near) {
                self.reads.then(f, Inst::new(a));
            }
            if let Some(a) = k.checked_sub(nearest) {
                self.reads.last(f, Inst::new(a));
            }
        }
        Some(Inst::new(k))
    }
}

impl Function {
    /// Walk every instruction id from the highest down, asking ahead for
    /// what `reads` says the loop reads of each.
    pub fn walk_ids_descending<R: Reads<Inst>>(&self, reads: R) -> IdsDescending<R> {
        IdsDescending { next: self.inst_capacity(), reads, hints: self.prefetch_pays() }
    }

    /// Walk `list` in order, asking the cache ahead for what `reads` says
    /// the loop reads of each entry:
    ///
    /// ```ignore
    /// let mut walk = f.walk(&order, reads::Terminator);
    /// while let Some(b) = walk.next(f) { /* may mutate f */ }
    /// ```
    pub fn walk<'l, T: Copy, R: Reads<T>>(&self, list: &'l [T], reads: R) -> Walk<'l, T, R> {
        Walk { list, pos: 0, reads, hints: self.prefetch_pays() }
    }
}

/// The reads walks commonly make, and `Via` / pairs to compose them over
/// what hangs off a walk's entries (mem2reg's accesses per block, cvp's
/// single predecessors). Passes compose these; only the core names the
/// `Function::prefetch_*` hints (the alias analysis's memory scans are
/// core too).
pub mod reads {
    use super::*;

    /// Each block's record (its instruction list).
    pub struct BlockList;
    impl Reads<Block> for BlockList {
        fn first(&self, f: &Function, b: Block) {
            f.prefetch_block(b);
        }
    }

    /// Each block's record and its terminator's record.
    pub struct Terminator;
    impl Reads<Block> for Terminator {
        const CHAIN: Chain = Chain::Long;
        fn first(&self, f: &Function, b: Block) {
            f.prefetch_block(b);
        }
        fn then(&self, f: &Function, b: Block) {
            f.prefetch_terminator(b);
        }
    }

    /// Each block's record and every instruction record it lists.
    pub struct BlockInsts;
    impl Reads<Block> for BlockInsts {
        fn first(&self, f: &Function, b: Block) {
            f.prefetch_block(b);
        }
        fn then(&self, f: &Function, b: Block) {
            f.prefetch_block_insts(b);
        }
    }

    /// Each block's record and the dense-table entries (opcode, block) of
    /// its instructions, for walks that decide by opcode what to read.
    pub struct BlockOpcodes;
    impl Reads<Block> for BlockOpcodes {
        const CHAIN: Chain = Chain::Long;
        fn first(&self, f: &Function, b: Block) {
            f.prefetch_block(b);
        }
        fn then(&self, f: &Function, b: Block) {
            f.prefetch_block_opcodes(b);
        }
    }

    /// Each instruction's record.
    pub struct Record;
    impl Reads<Inst> for Record {
        fn first(&self, f: &Function, i: Inst) {
            f.prefetch_inst(i);
        }
    }
    /// The same for walks whose entries pair an instruction with its
    /// block, in either order.
    impl Reads<(Inst, Block)> for Record {
        fn first(&self, f: &Function, (i, _): (Inst, Block)) {
            f.prefetch_inst(i);
        }
    }
    impl Reads<(Block, Inst)> for Record {
        fn first(&self, f: &Function, (_, i): (Block, Inst)) {
            f.prefetch_inst(i);
        }
    }

    /// Each instruction's use list and its users' dense-table entries.
    pub struct UserOpcodes;
    impl Reads<Inst> for UserOpcodes {
        fn first(&self, f: &Function, i: Inst) {
            f.prefetch_uses(Value::Inst(i));
        }
        fn then(&self, f: &Function, i: Inst) {
            f.prefetch_user_opcodes(Value::Inst(i));
        }
    }

    /// Each instruction's record, its use list and its users' dense-table
    /// entries.
    pub struct RecordAndUserOpcodes;
    impl Reads<Inst> for RecordAndUserOpcodes {
        fn first(&self, f: &Function, i: Inst) {
            f.prefetch_inst(i);
            f.prefetch_uses(Value::Inst(i));
        }
        fn then(&self, f: &Function, i: Inst) {
            f.prefetch_user_opcodes(Value::Inst(i));
        }
    }

    /// Each instruction's record and its operands' dense-table entries
    /// (liveness, opcode).
    pub struct OperandOpcodes;
    impl Reads<Inst> for OperandOpcodes {
        const CHAIN: Chain = Chain::Long;
        fn first(&self, f: &Function, i: Inst) {
            f.prefetch_inst(i);
        }
        fn then(&self, f: &Function, i: Inst) {
            f.prefetch_operand_opcodes(i);
        }
    }

    /// Memory accesses as `(instruction, is_store)`: a store's record (its
    /// value operand), a load's use list and then its users' records (a
    /// promotion rewrites them).
    pub struct Access;
    impl Reads<(Inst, bool)> for Access {
        fn first(&self, f: &Function, (i, is_store): (Inst, bool)) {
            if is_store {
                f.prefetch_inst(i);
            } else {
                f.prefetch_uses(Value::Inst(i));
            }
        }
        fn then(&self, f: &Function, (i, is_store): (Inst, bool)) {
            if !is_store {
                f.prefetch_user_records(Value::Inst(i));
            }
        }
    }

    /// Each value's use list (an instruction's or an argument's).
    pub struct Uses;
    impl Reads<Value> for Uses {
        fn first(&self, f: &Function, v: Value) {
            f.prefetch_uses(v);
        }
    }

    /// What `R` reads of the entries `map` gives for each entry walked (none,
    /// one or several): the walk's own list may be blocks while what is read
    /// hangs off them (a block's single predecessor, its memory accesses).
    pub struct Via<F, R>(pub F, pub R);
    impl<T, U, I, F, R> Reads<T> for Via<F, R>
    where
        T: Copy,
        U: Copy,
        I: IntoIterator<Item = U>,
        F: Fn(T) -> I,
        R: Reads<U>,
    {
        const CHAIN: Chain = R::CHAIN;
        fn first(&self, f: &Function, x: T) {
            for u in (self.0)(x) {
                self.1.first(f, u);
            }
        }
        fn then(&self, f: &Function, x: T) {
            for u in (self.0)(x) {
                self.1.then(f, u);
            }
        }
        fn last(&self, f: &Function, x: T) {
            for u in (self.0)(x) {
                self.1.last(f, u);
            }
        }
    }

    /// Both reads of each entry (the chain of the first).
    impl<T: Copy, A: Reads<T>, B: Reads<T>> Reads<T> for (A, B) {
        const CHAIN: Chain = A::CHAIN;
        fn first(&self, f: &Function, x: T) {
            self.0.first(f, x);
            self.1.first(f, x);
        }
        fn then(&self, f: &Function, x: T) {
            self.0.then(f, x);
            self.1.then(f, x);
        }
        fn last(&self, f: &Function, x: T) {
            self.0.last(f, x);
            self.1.last(f, x);
        }
    }
}
