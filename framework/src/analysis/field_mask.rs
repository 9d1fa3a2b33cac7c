//! Aggregate field bitmasks: a bit per scalar leaf of a slot's type and, for
//! every address derived from a local slot, the leaves it covers. Passes ask
//! "which fields does this access reach" without re-walking gep chains, and
//! the pointer-usage dataflow (`pointer_usage`) runs over these bits.
//!
//! Leaf numbering is depth-first in member order: a struct's fields one
//! after the other, an array's elements, a vector's lanes, a matrix's
//! columns (each `dim` lanes); a scalar or opaque type is one leaf. A type
//! with more than [`MAX_LEAVES`] leaves is *coarse*: one leaf for the whole
//! slot, so only a whole-slot access covers it exactly.
//!
//! A gep path maps to the leaves under it; a dynamic index (or a constant
//! out of range) covers every element of its level, and such an access is
//! not `exact`: a store through it may leave some of its leaves unwritten.

use rustc_hash::FxHashMap;
use smallvec::SmallVec;

use crate::ir::{Function, Inst, Module, Opcode, Type, TypeId, TypeTable, Value};

/// Above this many leaves a slot is one coarse leaf (keeps masks and the
/// dataflow over them small for big arrays).
pub const MAX_LEAVES: u64 = 1024;

/// A set of leaves, one bit each.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct FieldMask {
    words: SmallVec<[u64; 2]>,
}

impl FieldMask {
    /// No leaf of a type with `n` leaves.
    pub fn empty(n: u32) -> FieldMask {
        FieldMask { words: SmallVec::from_elem(0, (n as usize).div_ceil(64)) }
    }

    /// Every leaf of a type with `n` leaves.
    pub fn full(n: u32) -> FieldMask {
        let mut m = FieldMask::empty(n);
        m.insert_range(0, n);
        m
    }

    /// Add leaves `start..end`.
    pub fn insert_range(&mut self, start: u32, end: u32) {
        for k in start..end {
            self.insert(k);
        }
    }

    pub fn insert(&mut self, k: u32) {
        let w = (k / 64) as usize;
        if w >= self.words.len() {
            self.words.resize(w + 1, 0);
        }
        self.words[w] |= 1 << (k % 64);
    }

    pub fn contains(&self, k: u32) -> bool {
        self.words.get((k / 64) as usize).is_some_and(|w| w & (1 << (k % 64)) != 0)
    }

    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }

    /// Add every leaf of `o`; returns whether anything was added.
    pub fn union_with(&mut self, o: &FieldMask) -> bool {
        if o.words.len() > self.words.len() {
            self.words.resize(o.words.len(), 0);
        }
        let mut changed = false;
        for (a, &b) in self.words.iter_mut().zip(&o.words) {
            changed |= b & !*a != 0;
            *a |= b;
        }
        changed
    }

    /// Remove every leaf of `o`.
    pub fn subtract(&mut self, o: &FieldMask) {
        for (a, &b) in self.words.iter_mut().zip(&o.words) {
            *a &= !b;
        }
    }

    pub fn intersects(&self, o: &FieldMask) -> bool {
        self.words.iter().zip(&o.words).any(|(&a, &b)| a & b != 0)
    }

    /// Whether some leaf of `start..end` is in the set.
    pub fn intersects_range(&self, start: u32, end: u32) -> bool {
        (start..end).any(|k| self.contains(k))
    }

    /// The leaves in the set, ascending.
    pub fn ones(&self) -> Vec<u32> {
        let mut out = Vec::new();
        for (w, &bits) in self.words.iter().enumerate() {
            for b in 0..64 {
                if bits & (1 << b) != 0 {
                    out.push(w as u32 * 64 + b);
                }
            }
        }
        out
    }

    /// The leaves `offset..offset + n` of `self` as a mask of their own.
    pub fn slice(&self, offset: u32, n: u32) -> FieldMask {
        let mut m = FieldMask::empty(n);
        for k in 0..n {
            if self.contains(offset + k) {
                m.insert(k);
            }
        }
        m
    }

    /// Add `o` shifted up by `offset` leaves.
    pub fn insert_shifted(&mut self, o: &FieldMask, offset: u32) {
        for k in o.ones() {
            self.insert(offset + k);
        }
    }

    /// Remove `o` shifted up by `offset` leaves.
    pub fn subtract_shifted(&mut self, o: &FieldMask, offset: u32) {
        for k in o.ones() {
            let w = ((offset + k) / 64) as usize;
            if let Some(w) = self.words.get_mut(w) {
                *w &= !(1 << ((offset + k) % 64));
            }
        }
    }

    /// Whether `o` shifted up by `offset` leaves meets the set.
    pub fn intersects_shifted(&self, o: &FieldMask, offset: u32) -> bool {
        o.ones().into_iter().any(|k| self.contains(offset + k))
    }
}

/// Leaves of `ty` (saturating; above [`MAX_LEAVES`] the caller goes coarse).
pub fn leaf_count(t: &TypeTable, ty: TypeId) -> u64 {
    match t.get(ty) {
        Type::Struct { fields, .. } => fields.iter().fold(0u64, |a, &f| a.saturating_add(leaf_count(t, f))),
        Type::Array { elem, len } => leaf_count(t, *elem).saturating_mul(*len),
        Type::Vector { lanes, .. } => *lanes as u64,
        Type::Matrix { dim, .. } => (*dim as u64) * (*dim as u64),
        _ => 1,
    }
}

/// Member `k` of `ty` as a gep index selects it: its type and the leaves
/// before it. `None` for types a gep cannot enter and indices out of range.
fn member(t: &TypeTable, ty: TypeId, k: u64) -> Option<(TypeId, u64)> {
    match t.get(ty) {
        Type::Struct { fields, .. } => {
            let f = *fields.get(k as usize)?;
            Some((f, fields[..k as usize].iter().map(|&x| leaf_count(t, x)).sum()))
        }
        Type::Array { elem, len } if k < *len => Some((*elem, k * leaf_count(t, *elem))),
        Type::Vector { elem, lanes } if k < *lanes as u64 => Some((*elem, k)),
        Type::Matrix { elem, dim } if k < *dim as u64 => {
            // Not interned: not entered (covered whole, conservatively).
            let col = t.lookup(&Type::Vector { elem: *elem, lanes: *dim })?;
            Some((col, k * *dim as u64))
        }
        _ => None,
    }
}

fn member_count(t: &TypeTable, ty: TypeId) -> u64 {
    match t.get(ty) {
        Type::Struct { fields, .. } => fields.len() as u64,
        Type::Array { len, .. } => *len,
        Type::Vector { lanes, .. } => *lanes as u64,
        Type::Matrix { dim, .. } => *dim as u64,
        _ => 0,
    }
}

/// The leaves of member `k` of `ty` (a leaf range in `ty`'s numbering).
pub fn member_range(t: &TypeTable, ty: TypeId, k: u64) -> Option<std::ops::Range<u32>> {
    let (m, before) = member(t, ty, k)?;
    let n = leaf_count(t, m);
    (before + n <= MAX_LEAVES).then(|| before as u32..(before + n) as u32)
}

/// The leaves of `ty` under `path` (`None`: a dynamic index), and whether
/// the path names them exactly (every index constant and in range).
/// `ty` must have at most [`MAX_LEAVES`] leaves.
pub fn path_mask(t: &TypeTable, ty: TypeId, path: &[Option<u64>]) -> (FieldMask, bool) {
    let n = leaf_count(t, ty) as u32;
    let mut mask = FieldMask::empty(n);
    let mut exact = true;
    cover(t, ty, path, 0, &mut mask, &mut exact);
    (mask, exact)
}

fn cover(t: &TypeTable, ty: TypeId, path: &[Option<u64>], base: u64, out: &mut FieldMask, exact: &mut bool) {
    let Some((&first, rest)) = path.split_first() else {
        out.insert_range(base as u32, (base + leaf_count(t, ty)) as u32);
        return;
    };
    match first.and_then(|k| member(t, ty, k)) {
        Some((m, before)) => cover(t, m, rest, base + before, out, exact),
        None => {
            *exact = false;
            let count = member_count(t, ty);
            let all = (count <= MAX_LEAVES).then(|| (0..count).map(|k| member(t, ty, k)).collect::<Option<Vec<_>>>());
            match all.flatten() {
                Some(all) if count > 0 => {
                    for (m, before) in all {
                        cover(t, m, rest, base + before, out, exact);
                    }
                }
                // Not enterable (malformed, a matrix without its column
                // type, an array of empty members): the whole of it.
                _ => out.insert_range(base as u32, (base + leaf_count(t, ty)) as u32),
            }
        }
    }
}

/// What an address derived from a slot covers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Access {
    /// The `alloca` / `alloca.shared` it lies in.
    pub root: Inst,
    /// Its leaves, in the root's numbering.
    pub mask: FieldMask,
    /// Whether the address names exactly those leaves (a store writes all).
    pub exact: bool,
}

/// One slot's field facts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RootFields {
    pub slot: Inst,
    /// Leaves in the slot's numbering (1 when coarse).
    pub leaves: u32,
    /// Whether some use is neither a gep base nor a load's or store's
    /// address (a call argument, an atomic...): then `read` and `written`
    /// do not tell everything.
    pub escapes: bool,
    /// Leaves some load may read.
    pub read: FieldMask,
    /// Leaves some store may write.
    pub written: FieldMask,
}

/// The field bitmasks of one function's slots and of every address derived
/// from them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldMasks {
    roots: Vec<RootFields>,
    root_index: FxHashMap<Inst, u32>,
    access: FxHashMap<Inst, Access>,
}

impl FieldMasks {
    pub fn compute(m: &Module, f: &Function) -> FieldMasks {
        let mut out = FieldMasks::default();
        let slots = f.select_in_layout_order(|op| matches!(op, Opcode::Alloca | Opcode::AllocaShared));
        for slot in slots {
            let ty = f.inst(slot).ty;
            let count = leaf_count(&m.types, ty);
            let coarse = count > MAX_LEAVES || count == 0;
            let leaves = if coarse { 1 } else { count as u32 };
            let mut rf = RootFields {
                slot,
                leaves,
                escapes: false,
                read: FieldMask::empty(leaves),
                written: FieldMask::empty(leaves),
            };
            // Depth-first over the gep tree: (address, its path).
            let mut work: Vec<(Inst, Vec<Option<u64>>)> = vec![(slot, Vec::new())];
            while let Some((addr, path)) = work.pop() {
                let (mask, exact) =
                    if coarse { (FieldMask::full(1), path.is_empty()) } else { path_mask(&m.types, ty, &path) };
                for u in f.uses(Value::Inst(addr)) {
                    let d = f.inst(u.user);
                    match d.opcode {
                        Opcode::Gep if u.index == 0 => {
                            let mut p = path.clone();
                            p.extend(
                                d.operands[1..]
                                    .iter()
                                    .map(|&v| m.const_int_value(v).and_then(|c| u64::try_from(c).ok())),
                            );
                            work.push((u.user, p));
                        }
                        Opcode::Load if u.index == 0 => {
                            rf.read.union_with(&mask);
                        }
                        Opcode::Store if u.index == 0 => {
                            rf.written.union_with(&mask);
                        }
                        _ => rf.escapes = true,
                    }
                }
                out.access.insert(addr, Access { root: slot, mask, exact });
            }
            out.root_index.insert(slot, out.roots.len() as u32);
            out.roots.push(rf);
        }
        out
    }

    /// Every slot of the function, in layout order.
    pub fn roots(&self) -> &[RootFields] {
        &self.roots
    }

    /// The facts of slot `slot`.
    pub fn root(&self, slot: Inst) -> Option<&RootFields> {
        self.root_index.get(&slot).map(|&k| &self.roots[k as usize])
    }

    /// What the address `addr` (a slot or a gep into one) covers.
    pub fn access(&self, addr: Inst) -> Option<&Access> {
        self.access.get(&addr)
    }

    /// What the load or store `i` of `f` accesses.
    pub fn access_of(&self, f: &Function, i: Inst) -> Option<&Access> {
        let d = f.inst(i);
        match (d.opcode, d.operands.first()) {
            (Opcode::Load | Opcode::Store, Some(Value::Inst(a))) => self.access(*a),
            _ => None,
        }
    }
}
