//! The parts of [`OpSet`] and [`Dialect`] that speak of this build's
//! [`Opcode`] enum. They are kept apart from `dialect.rs`, which `build.rs`
//! shares to resolve the built-in dialects: the enum is what the build
//! script generates, so the script cannot name it.

use crate::{Dialect, OpSet, Opcode};

impl OpSet {
    pub fn insert(&mut self, op: Opcode) {
        self.insert_index(op.index())
    }
    pub fn remove(&mut self, op: Opcode) {
        self.remove_index(op.index())
    }
    pub fn contains(&self, op: Opcode) -> bool {
        self.contains_index(op.index())
    }
    pub fn iter(&self) -> impl Iterator<Item = Opcode> + '_ {
        Opcode::ALL.iter().copied().filter(|&op| self.contains(op))
    }
}

impl Dialect {
    /// Why `self` does not refine `other`, as readable reasons.
    pub fn refinement_gaps(&self, other: &Dialect) -> Vec<String> {
        let mut gaps = Vec::new();
        let extra: Vec<_> = self.ops.iter().filter(|&op| !other.ops.contains(op)).map(|op| op.name()).collect();
        if !extra.is_empty() {
            gaps.push(format!("`{}` allows opcodes `{}` forbids: {}", self.name, other.name, extra.join(", ")));
        }
        let extra_types: Vec<_> = self.types.difference(&other.types).collect();
        if !extra_types.is_empty() {
            gaps.push(format!("`{}` allows types `{}` forbids: {}", self.name, other.name, extra_types.join(", ")));
        }
        let missing: Vec<_> = other.invariants.difference(&self.invariants).collect();
        if !missing.is_empty() {
            gaps.push(format!("`{}` requires invariants not established: {}", other.name, missing.join(", ")));
        }
        gaps
    }
}
