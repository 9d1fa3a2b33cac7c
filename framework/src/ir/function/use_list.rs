//! `UseList`: the uses of one value (instruction result or argument), in
//! 16 bytes: one use inline, more in a heap list whose length and capacity
//! live in the allocation (`ThinVec`), so the slot is one pointer.
//!
//! Why: every instruction id has a use list slot, and most values have at
//! most one use (ids with 0 / 1 / 2 / 3+ uses: 39 / 46 / 7 / 8% over the
//! parsed corpus, 55 / 40 / 2 / 3% after `spirv-legalize` of the legalize
//! bench's kernel; void instructions have none). A `SmallVec` with two
//! inline uses was 24 bytes a slot; this is 16, and a value of two or more
//! uses pays a heap list (BENCHMARKS.md, "Memory per instruction").

use thin_vec::ThinVec;

use crate::ir::Use;

#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum UseList {
    /// Exactly one use.
    One(Use),
    /// Any number of uses; the empty list is `Many` without allocation
    /// (a list emptied by removals keeps its room, as a `Vec` does).
    Many(ThinVec<Use>),
}

impl Default for UseList {
    fn default() -> Self {
        UseList::Many(ThinVec::new())
    }
}

impl UseList {
    /// Room of the first heap list: values of two uses are the most common
    /// of those that need one.
    const FIRST_HEAP_ROOM: usize = 2;

    #[inline]
    pub fn as_slice(&self) -> &[Use] {
        match self {
            UseList::One(u) => std::slice::from_ref(u),
            UseList::Many(v) => v,
        }
    }

    pub fn push(&mut self, u: Use) {
        match self {
            UseList::Many(v) if v.capacity() == 0 => *self = UseList::One(u),
            UseList::Many(v) => v.push(u),
            UseList::One(first) => {
                let mut v = ThinVec::with_capacity(Self::FIRST_HEAP_ROOM);
                v.push(*first);
                v.push(u);
                *self = UseList::Many(v);
            }
        }
    }

    /// Keeps the uses for which `keep` holds, in order.
    pub fn retain(&mut self, mut keep: impl FnMut(&Use) -> bool) {
        match self {
            UseList::One(u) => {
                if !keep(u) {
                    *self = UseList::default();
                }
            }
            UseList::Many(v) => v.retain(|u| keep(u)),
        }
    }

    /// Removes one occurrence of `u` (the last use takes its place).
    pub fn remove(&mut self, u: Use) {
        match self {
            UseList::One(x) if *x == u => *self = UseList::default(),
            UseList::One(_) => {}
            UseList::Many(v) => {
                if let Some(p) = v.iter().position(|x| *x == u) {
                    v.swap_remove(p);
                }
            }
        }
    }

    /// Heap bytes of the list: a `ThinVec`'s allocation is its header
    /// (length and capacity, two `usize`) and its room; `Use` needs no
    /// padding after the header.
    pub fn heap_bytes(&self) -> usize {
        match self {
            UseList::Many(v) if v.capacity() > 0 => {
                2 * std::mem::size_of::<usize>() + v.capacity() * std::mem::size_of::<Use>()
            }
            _ => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Inst;

    fn u(k: usize) -> Use {
        Use { user: Inst::new(k), index: 0 }
    }

    #[test]
    fn sixteen_bytes_and_one_use_inline() {
        assert_eq!(std::mem::size_of::<UseList>(), 16);
        let mut l = UseList::default();
        assert_eq!((l.as_slice(), l.heap_bytes()), (&[][..], 0));
        l.push(u(1));
        assert_eq!(l, UseList::One(u(1)));
        assert_eq!(l.heap_bytes(), 0);
        l.push(u(2));
        assert_eq!(l.as_slice(), [u(1), u(2)]);
        assert_eq!(l.heap_bytes(), 16 + 2 * 8);
        l.push(u(3));
        assert_eq!(l.heap_bytes(), 16 + 4 * 8, "the heap list doubles");
    }

    #[test]
    fn removal_and_retain() {
        let mut l = UseList::default();
        l.push(u(1));
        l.remove(u(2));
        assert_eq!(l.as_slice(), [u(1)], "removing a use not there changes nothing");
        l.remove(u(1));
        assert_eq!(l, UseList::default());
        for k in 1..=4 {
            l.push(u(k));
        }
        l.remove(u(1));
        assert_eq!(l.as_slice(), [u(4), u(2), u(3)]);
        l.retain(|x| x.user != Inst::new(2));
        assert_eq!(l.as_slice(), [u(4), u(3)]);
        l.retain(|_| false);
        assert!(l.as_slice().is_empty());
        assert_eq!(l.heap_bytes(), 16 + 4 * 8, "an emptied heap list keeps its room");
        l.push(u(5));
        assert_eq!(l.as_slice(), [u(5)]);
        let mut one = UseList::default();
        one.push(u(6));
        one.retain(|_| false);
        assert_eq!(one, UseList::default());
    }
}
