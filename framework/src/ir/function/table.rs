//! `Table<T>`: a function's per-instruction tables (cores, payloads,
//! metadata, spans, the dense opcode table, use lists), indexed by
//! instruction id and stored in chunks of a fixed number of entries.
//!
//! Why not a `Vec`: a pass that adds a few instructions to a large function
//! whose tables happen to be full made every table double, copying all of
//! them and faulting in twice their memory (on a 10^6-instruction function,
//! a sixth of `restructure_cfg`). Here adding an entry allocates at most one
//! new chunk: the cost of growth is proportional to what is added, never to
//! what is there. The first chunk is a plain `Vec` field, so a small
//! function holds no more memory than before and indexes its tables as
//! fast; ids past it cost one more load (the chunk's header, from a table
//! of a few dozen entries).

use std::ops::{Index, IndexMut};

/// Entries per chunk (a power of two): 16 Ki entries, 1 MiB of 64-byte
/// instruction cores.
const SHIFT: usize = 14;
const CHUNK: usize = 1 << SHIFT;
const MASK: usize = CHUNK - 1;

pub(super) struct Table<T> {
    /// Entries `0..CHUNK`, directly: a function of fewer instructions (most
    /// of them) indexes its tables exactly as it would a `Vec`.
    first: Vec<T>,
    /// Entries from `CHUNK` on, `CHUNK` per chunk; every chunk but the
    /// last is full.
    rest: Vec<Vec<T>>,
    len: usize,
}

impl<T> Default for Table<T> {
    fn default() -> Self {
        Table { first: Vec::new(), rest: Vec::new(), len: 0 }
    }
}

impl<T> Table<T> {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn push(&mut self, x: T) {
        if self.first.len() < CHUNK {
            self.first.push(x);
        } else {
            match self.rest.last_mut() {
                Some(c) if c.len() < CHUNK => c.push(x),
                // Later chunks are allocated whole: they never move.
                _ => {
                    let mut c = Vec::with_capacity(CHUNK);
                    c.push(x);
                    self.rest.push(c);
                }
            }
        }
        self.len += 1;
    }

    #[inline]
    pub fn get(&self, k: usize) -> Option<&T> {
        if k < CHUNK {
            self.first.get(k)
        } else {
            self.rest.get((k >> SHIFT) - 1)?.get(k & MASK)
        }
    }

    #[inline]
    pub fn get_mut(&mut self, k: usize) -> Option<&mut T> {
        if k < CHUNK {
            self.first.get_mut(k)
        } else {
            self.rest.get_mut((k >> SHIFT) - 1)?.get_mut(k & MASK)
        }
    }

    /// The entries chunk by chunk, each slice with the id of its first
    /// entry: sweeps run a plain slice loop per chunk.
    pub fn chunks(&self) -> impl Iterator<Item = (usize, &[T])> + '_ {
        std::iter::once((0, self.first.as_slice()))
            .chain(self.rest.iter().enumerate().map(|(c, v)| ((c + 1) << SHIFT, v.as_slice())))
    }

    /// The entries in id order.
    pub fn iter(&self) -> impl Iterator<Item = &T> + '_ {
        self.chunks().flat_map(|(_, c)| c.iter())
    }

    /// Frees the spare room of the growing chunk (the first, or the last
    /// of the rest): for a table that is complete, as after reading a
    /// module. Growing it again later copies at most that one chunk.
    pub fn shrink_to_fit(&mut self) {
        match self.rest.last_mut() {
            Some(c) => c.shrink_to_fit(),
            None => self.first.shrink_to_fit(),
        }
    }

    /// Heap bytes: the chunks' buffers (by capacity) plus what `owned`
    /// says each entry owns.
    pub fn heap_bytes(&self, owned: impl Fn(&T) -> usize) -> usize {
        let buffers = crate::ir::footprint::vec_bytes(&self.first)
            + crate::ir::footprint::vec_bytes(&self.rest)
            + self.rest.iter().map(crate::ir::footprint::vec_bytes).sum::<usize>();
        buffers + self.iter().map(owned).sum::<usize>()
    }

    /// A table of `n` entries, entry `k` being `f(k)`.
    pub fn from_fn(n: usize, mut f: impl FnMut(usize) -> T) -> Self {
        let mut t = Table::default();
        for k in 0..n {
            t.push(f(k));
        }
        t
    }
}

impl<T> Index<usize> for Table<T> {
    type Output = T;
    #[inline]
    fn index(&self, k: usize) -> &T {
        if k < CHUNK {
            &self.first[k]
        } else {
            &self.rest[(k >> SHIFT) - 1][k & MASK]
        }
    }
}

impl<T> IndexMut<usize> for Table<T> {
    #[inline]
    fn index_mut(&mut self, k: usize) -> &mut T {
        if k < CHUNK {
            &mut self.first[k]
        } else {
            &mut self.rest[(k >> SHIFT) - 1][k & MASK]
        }
    }
}

impl<T> FromIterator<T> for Table<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let mut t = Table::default();
        for x in iter {
            t.push(x);
        }
        t
    }
}

/// A clone keeps each chunk's spare capacity, so a pass run on a copy grows
/// the tables exactly as it would on the original.
impl<T: Clone> Clone for Table<T> {
    fn clone(&self) -> Self {
        fn with_room<T: Clone>(c: &Vec<T>) -> Vec<T> {
            let mut out = Vec::with_capacity(c.capacity());
            out.extend_from_slice(c);
            out
        }
        Table { first: with_room(&self.first), rest: self.rest.iter().map(with_room).collect(), len: self.len }
    }
}

impl<T: PartialEq> PartialEq for Table<T> {
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len && self.iter().eq(other.iter())
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for Table<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::{Table, CHUNK};

    #[test]
    fn entries_keep_their_ids_across_chunks() {
        let n = 2 * CHUNK + 5;
        let mut t: Table<usize> = Table::default();
        for k in 0..n {
            t.push(k * 3);
        }
        assert_eq!(t.len(), n);
        assert_eq!(t[CHUNK - 1], (CHUNK - 1) * 3);
        assert_eq!(t[CHUNK], CHUNK * 3);
        assert_eq!(t.get(n - 1), Some(&((n - 1) * 3)));
        assert_eq!(t.get(n), None);
        t[CHUNK + 1] = 7;
        assert_eq!(t.get_mut(CHUNK + 1).copied(), Some(7));
        assert!(t.chunks().all(|(base, c)| c.iter().enumerate().all(|(j, &x)| x == t[base + j])));
        assert!(t.iter().enumerate().all(|(k, &x)| x == if k == CHUNK + 1 { 7 } else { k * 3 }));
        let c = t.clone();
        assert_eq!(c, t);
        assert_eq!(Table::from_fn(n, |k| k).iter().copied().collect::<Table<_>>(), Table::from_fn(n, |k| k));
    }

    #[test]
    fn growth_never_moves_a_full_chunk() {
        let mut t: Table<u64> = Table::default();
        for k in 0..CHUNK as u64 + 1 {
            t.push(k);
        }
        let second: *const u64 = &t[CHUNK];
        for k in 0..3 * CHUNK as u64 {
            t.push(k);
        }
        assert_eq!(second, &t[CHUNK] as *const u64, "a full chunk was copied");
        assert_eq!(t.len(), 4 * CHUNK + 1);
    }
}
