//! Uniqued constants. Scalars keep their exact bit pattern (signed zero, NaN
//! payloads, f16 and fp8 included); composites list their members.

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use super::{Const, TypeId};

#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ConstValue {
    /// The scalar's bits, zero-extended to 64 (bool: 0 or 1).
    Scalar(u64),
    /// Members of a vector, matrix (columns), array or struct.
    Composite(Vec<Const>),
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ConstData {
    pub ty: TypeId,
    pub value: ConstValue,
}

#[derive(Debug, Default)]
pub struct ConstTable {
    data: Vec<ConstData>,
    map: FxHashMap<ConstData, Const>,
    /// How many constants, from the first, the verifier has found well
    /// formed. The table only grows and a constant never changes (nor do
    /// the types it names), so a verdict stays true: each verification
    /// checks only the constants added since (a composite of a million
    /// members is checked once, not at every pass's verification).
    verified: std::sync::atomic::AtomicUsize,
}

impl Clone for ConstTable {
    fn clone(&self) -> Self {
        ConstTable { data: self.data.clone(), map: self.map.clone(), verified: self.verified_len().into() }
    }
}

/// Tables are equal when their constants are (the verifier's progress aside).
impl PartialEq for ConstTable {
    fn eq(&self, other: &Self) -> bool {
        self.data == other.data
    }
}

impl ConstTable {
    /// Heap bytes of the table: each constant is held twice (by id and as
    /// its map key), a composite's member list with it.
    pub(crate) fn heap_bytes(&self) -> usize {
        use super::footprint::{hash_map_bytes, vec_bytes};
        let members = |c: &ConstData| match &c.value {
            ConstValue::Scalar(_) => 0,
            ConstValue::Composite(m) => vec_bytes(m),
        };
        vec_bytes(&self.data)
            + hash_map_bytes(self.map.capacity(), std::mem::size_of::<(ConstData, Const)>())
            + 2 * self.data.iter().map(members).sum::<usize>()
    }

    pub fn intern(&mut self, c: ConstData) -> Const {
        if let Some(&id) = self.map.get(&c) {
            return id;
        }
        let id = Const::new(self.data.len());
        self.data.push(c.clone());
        self.map.insert(c, id);
        id
    }
    pub fn get(&self, c: Const) -> &ConstData {
        &self.data[c.index()]
    }
    pub fn contains(&self, c: Const) -> bool {
        c.index() < self.data.len()
    }
    pub fn len(&self) -> usize {
        self.data.len()
    }
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }
    pub fn iter(&self) -> impl Iterator<Item = (Const, &ConstData)> {
        self.data.iter().enumerate().map(|(i, d)| (Const::new(i), d))
    }
    /// How many constants, from the first, are known well formed.
    pub(crate) fn verified_len(&self) -> usize {
        self.verified.load(std::sync::atomic::Ordering::Relaxed)
    }
    /// The first `n` constants are well formed (the verifier found them so).
    pub(crate) fn set_verified(&self, n: usize) {
        self.verified.fetch_max(n.min(self.data.len()), std::sync::atomic::Ordering::Relaxed);
    }
}
