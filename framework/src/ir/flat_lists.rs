//! Lists for the keys `0..n` (block ids, construct numbers, ...) in one
//! table: key `k`'s items are `items[start[k]..start[k + 1]]`. Analyses over
//! large functions build these instead of a `Vec` per key: two allocations
//! whatever `n`, and dropping one visits nothing (a list per block was a
//! quarter of block-level passes on 10^6-instruction functions:
//! BENCHMARKS.md, legalization).

/// Per-key lists in one flat table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlatLists<T> {
    start: Vec<u32>,
    items: Vec<T>,
}

impl<T: Copy> FlatLists<T> {
    /// Group `(key, item)` pairs by key (a counting sort): each key keeps
    /// its items in the order the pairs give them. Pairs whose key is not
    /// below `n` are dropped. The iterator is walked twice (count, fill).
    pub fn from_pairs<I>(n: usize, pairs: I) -> FlatLists<T>
    where
        I: Iterator<Item = (usize, T)> + Clone,
    {
        let mut start = vec![0u32; n + 1];
        let mut filler = None;
        for (k, x) in pairs.clone() {
            if k < n {
                start[k + 1] += 1;
                filler.get_or_insert(x);
            }
        }
        for k in 0..n {
            start[k + 1] += start[k];
        }
        let Some(filler) = filler else { return FlatLists { start, items: Vec::new() } };
        let mut fill: Vec<u32> = start[..n].to_vec();
        let mut items = vec![filler; start[n] as usize];
        for (k, x) in pairs {
            if k < n {
                items[fill[k] as usize] = x;
                fill[k] += 1;
            }
        }
        FlatLists { start, items }
    }
}

impl<T> FlatLists<T> {
    /// The items of key `k` (empty for keys past the table).
    pub fn get(&self, k: usize) -> &[T] {
        match (self.start.get(k), self.start.get(k + 1)) {
            (Some(&lo), Some(&hi)) => &self.items[lo as usize..hi as usize],
            _ => &[],
        }
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.start.len().saturating_sub(1)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::FlatLists;

    #[test]
    fn groups_by_key_in_order_and_drops_keys_past_the_table() {
        let pairs = [(2, 'a'), (0, 'b'), (2, 'c'), (5, 'x'), (0, 'd')];
        let t = FlatLists::from_pairs(3, pairs.iter().copied());
        assert_eq!(t.len(), 3);
        assert_eq!(t.get(0), &['b', 'd']);
        assert_eq!(t.get(1), &[] as &[char]);
        assert_eq!(t.get(2), &['a', 'c']);
        assert_eq!(t.get(3), &[] as &[char]);
        let empty = FlatLists::<char>::from_pairs(2, std::iter::empty());
        assert_eq!((empty.len(), empty.get(1)), (2, &[] as &[char]));
    }
}
