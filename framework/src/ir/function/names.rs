//! `Names`: a function's table of the names of its instructions and
//! blocks. Each distinct name is stored once, in one string; an entity
//! holds a `NameId` (4 bytes, `NameId::NONE` for no name).
//!
//! Why: a name was a `String` in a 64-byte metadata box, about 70 bytes for
//! a 5-character name, and every block and about half the values of a
//! parsed module are named (BENCHMARKS.md, "Memory per instruction"). A
//! legalized module names most values alike (`x`), which this stores once.
//! The index finds a name's id by its text without holding the text again:
//! it is a hash table of ids whose hashes are taken from the string.

use std::hash::BuildHasher;
use std::mem::size_of;

use hashbrown::HashTable;
use rustc_hash::FxBuildHasher;

/// A name in a function's `Names`; `NONE` for no name.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub(super) struct NameId(u32);

impl NameId {
    pub const NONE: NameId = NameId(u32::MAX);

    pub fn index(self) -> Option<usize> {
        (self != NameId::NONE).then_some(self.0 as usize)
    }
}

#[derive(Clone, Debug, Default)]
pub(super) struct Names {
    /// Every name, back to back.
    text: String,
    /// Per id, where its name ends in `text` (it starts where the one
    /// before ends).
    ends: Vec<u32>,
    /// Every id, hashed by its name's text.
    index: HashTable<u32>,
}

fn hash(s: &str) -> u64 {
    FxBuildHasher.hash_one(s)
}

impl Names {
    /// Names held (each once).
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// The text of `id` (`None` for `NameId::NONE`).
    #[inline]
    pub fn get(&self, id: NameId) -> Option<&str> {
        let k = id.index()?;
        let start = if k == 0 { 0 } else { self.ends[k - 1] as usize };
        Some(&self.text[start..self.ends[k] as usize])
    }

    /// The id of `name`, added if new.
    pub fn intern(&mut self, name: &str) -> NameId {
        let h = hash(name);
        let Names { text, ends, index } = self;
        let text_of = |k: u32| {
            let k = k as usize;
            let start = if k == 0 { 0 } else { ends[k - 1] as usize };
            &text[start..ends[k] as usize]
        };
        if let Some(&k) = index.find(h, |&k| text_of(k) == name) {
            return NameId(k);
        }
        let k = u32::try_from(ends.len()).ok().filter(|&k| k != NameId::NONE.0).expect("fewer than 2^32 - 1 names");
        text.push_str(name);
        let end = u32::try_from(text.len()).expect("a function's names fit in 4 GiB");
        ends.push(end);
        let (text, ends) = (&*text, &*ends);
        let rehash = |&j: &u32| {
            let j = j as usize;
            let start = if j == 0 { 0 } else { ends[j - 1] as usize };
            hash(&text[start..ends[j] as usize])
        };
        index.insert_unique(h, k, rehash);
        NameId(k)
    }

    /// A table of only the names `live` yields (each id once or more), and
    /// the map from old id to new: renamed and removed entities leave their
    /// old names behind, which this drops.
    pub fn compacted(&self, live: impl Iterator<Item = NameId>) -> (Names, Vec<NameId>) {
        let mut map = vec![NameId::NONE; self.len()];
        let mut out = Names::default();
        for id in live {
            if let Some(k) = id.index() {
                if map[k] == NameId::NONE {
                    map[k] = out.intern(self.get(id).expect("a live id"));
                }
            }
        }
        out.shrink_to_fit();
        (out, map)
    }

    pub fn shrink_to_fit(&mut self) {
        self.text.shrink_to_fit();
        self.ends.shrink_to_fit();
        let (text, ends) = (&self.text, &self.ends);
        self.index.shrink_to_fit(|&j| {
            let j = j as usize;
            let start = if j == 0 { 0 } else { ends[j - 1] as usize };
            hash(&text[start..ends[j] as usize])
        });
    }

    /// Heap bytes: the text, the ends and the index (hashbrown's layout).
    pub fn heap_bytes(&self) -> usize {
        use crate::ir::footprint::{hash_map_bytes, vec_bytes};
        self.text.capacity() + vec_bytes(&self.ends) + hash_map_bytes(self.index.capacity(), size_of::<u32>())
    }
}

/// Two tables are equal when they hold the same names under the same ids.
impl PartialEq for Names {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text && self.ends == other.ends
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_name_twice_shares_one_copy() {
        let mut n = Names::default();
        let (x, y, x2) = (n.intern("x"), n.intern("y1"), n.intern("x"));
        assert_eq!(x, x2);
        assert_ne!(x, y);
        assert_eq!((n.get(x), n.get(y), n.get(NameId::NONE)), (Some("x"), Some("y1"), None));
        assert_eq!((n.len(), n.text.as_str()), (2, "xy1"));
        let e = n.intern("");
        assert_eq!(n.intern(""), e);
        assert_eq!((n.get(e), n.len()), (Some(""), 3), "the empty name is a name");
    }

    #[test]
    fn many_names_survive_growth_of_the_index() {
        let mut n = Names::default();
        let ids: Vec<NameId> = (0..1000).map(|k| n.intern(&format!("v{k}"))).collect();
        for (k, &id) in ids.iter().enumerate() {
            assert_eq!(n.get(id), Some(format!("v{k}").as_str()));
            assert_eq!(n.intern(&format!("v{k}")), id);
        }
        n.shrink_to_fit();
        assert_eq!(n.intern("v999"), ids[999]);
        assert_eq!(n.len(), 1000);
    }

    #[test]
    fn compaction_keeps_only_live_names() {
        let mut n = Names::default();
        let (a, b, c) = (n.intern("a"), n.intern("b"), n.intern("c"));
        let (m, map) = n.compacted([c, a, c, NameId::NONE].into_iter());
        assert_eq!(m.len(), 2);
        assert_eq!((m.get(map[c.0 as usize]), m.get(map[a.0 as usize])), (Some("c"), Some("a")));
        assert_eq!(map[b.0 as usize], NameId::NONE);
    }

    #[test]
    fn heap_bytes_follow_the_capacities() {
        let mut n = Names::default();
        assert_eq!(n.heap_bytes(), 0);
        n.intern("abc");
        n.shrink_to_fit();
        // 3 bytes of text, one end, an index of 4 buckets of 4 bytes plus
        // 4 + 16 control bytes.
        assert_eq!(n.heap_bytes(), 3 + 4 + (16 + 4 + 16));
    }
}
