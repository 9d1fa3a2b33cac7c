//! Where a module's heap goes: bytes per part of the IR core (instruction
//! records, operand spill lists, payloads, metadata, spans, the dense
//! opcode table, use lists, blocks, types and constants), counted from the
//! capacities the core holds, not estimated from counts.
//!
//! Why: the memory figures of BENCHMARKS.md ("Memory per instruction") are
//! only actionable split by part, and the split must be the core's own
//! account (the text bench holds it against a counting allocator, so the
//! account cannot drift from the truth). Hash maps are counted with
//! hashbrown's layout (buckets a power of two, one control byte a bucket),
//! which the allocator measurement checks too.

use std::fmt;
use std::mem::size_of;

use smallvec::{Array, SmallVec};

/// Heap bytes by part of the IR core.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Footprint {
    /// The per-instruction core records (opcode, type, inline operands).
    pub inst_cores: usize,
    /// Operand and block lists too long for a core record's inline slots.
    pub operand_spills: usize,
    /// Payload slots and what they own (case literals, message text).
    pub payloads: usize,
    /// Metadata slots and boxes (names, locations, comments) of
    /// instructions, blocks, arguments and functions.
    pub metadata: usize,
    /// Source spans of instructions.
    pub spans: usize,
    /// The dense opcode / parent table.
    pub dense: usize,
    /// Use lists of instruction results and arguments.
    pub uses: usize,
    /// Block records, their spilled instruction lists and the layout.
    pub blocks: usize,
    /// Interned types and uniqued constants (with their hash maps).
    pub types_and_consts: usize,
    /// Everything else: function records, names, argument lists.
    pub other: usize,
}

impl Footprint {
    pub fn total(&self) -> usize {
        self.parts().iter().map(|(_, b)| b).sum()
    }

    /// The parts with their names, in a fixed order (for tables).
    pub fn parts(&self) -> [(&'static str, usize); 10] {
        [
            ("inst cores", self.inst_cores),
            ("operand spills", self.operand_spills),
            ("payloads", self.payloads),
            ("metadata", self.metadata),
            ("spans", self.spans),
            ("dense table", self.dense),
            ("use lists", self.uses),
            ("blocks", self.blocks),
            ("types and consts", self.types_and_consts),
            ("other", self.other),
        ]
    }
}

impl std::ops::AddAssign for Footprint {
    fn add_assign(&mut self, o: Footprint) {
        self.inst_cores += o.inst_cores;
        self.operand_spills += o.operand_spills;
        self.payloads += o.payloads;
        self.metadata += o.metadata;
        self.spans += o.spans;
        self.dense += o.dense;
        self.uses += o.uses;
        self.blocks += o.blocks;
        self.types_and_consts += o.types_and_consts;
        self.other += o.other;
    }
}

impl fmt::Display for Footprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (name, bytes) in self.parts() {
            writeln!(f, "{name:>18}: {bytes}")?;
        }
        write!(f, "{:>18}: {}", "total", self.total())
    }
}

/// Heap bytes of a `Vec`'s buffer.
pub(crate) fn vec_bytes<T>(v: &Vec<T>) -> usize {
    v.capacity() * size_of::<T>()
}

/// Heap bytes of a `SmallVec` (none while its items are inline).
pub(crate) fn smallvec_bytes<A: Array>(v: &SmallVec<A>) -> usize {
    if v.spilled() {
        v.capacity() * size_of::<A::Item>()
    } else {
        0
    }
}

/// Heap bytes of a hashbrown table holding `capacity` entries of
/// `entry` bytes: buckets (a power of two, at most 7/8 full) plus one control
/// byte a bucket and a group's width of trailing control bytes.
pub(crate) fn hash_map_bytes(capacity: usize, entry: usize) -> usize {
    if capacity == 0 {
        return 0;
    }
    let buckets =
        if capacity < 8 { (capacity + 1).next_power_of_two() } else { (capacity * 8 / 7).next_power_of_two() };
    buckets * entry + buckets + 16
}
