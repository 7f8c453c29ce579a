//! Connection indices by key for TCP's two ends: a hash map that remembers its last hit.
//!
//! Entries are only ever added (a connection keeps its index for the whole run), so the
//! last (key, index) pair found stays valid, and consecutive frames mostly belong to one
//! connection: a sender's ACKs come in runs from one peer, a receiver's segments in a
//! sender's bursts. The map is looked up, never iterated, so its fast non-cryptographic
//! hash cannot change any result.

use rustc_hash::FxHashMap;
use std::hash::Hash;

pub(super) struct ConnIndex<K> {
    map: FxHashMap<K, u32>,
    last: Option<(K, u32)>,
}

impl<K: Hash + Eq + Copy> ConnIndex<K> {
    pub fn new() -> ConnIndex<K> {
        ConnIndex { map: FxHashMap::default(), last: None }
    }

    /// The index of the connection `key` names, if it is open.
    #[inline]
    pub fn get(&mut self, key: K) -> Option<u32> {
        if let Some((k, i)) = self.last {
            if k == key {
                return Some(i);
            }
        }
        let i = *self.map.get(&key)?;
        self.last = Some((key, i));
        Some(i)
    }

    /// Records a new connection's index.
    pub fn insert(&mut self, key: K, index: u32) {
        let old = self.map.insert(key, index);
        debug_assert!(old.is_none(), "a connection's index never changes");
    }
}

#[cfg(test)]
mod tests {
    use super::ConnIndex;

    /// Hits, misses and the remembered pair agree with the map, whatever the order.
    #[test]
    fn the_remembered_hit_never_answers_for_another_key() {
        let mut ix = ConnIndex::new();
        assert_eq!(ix.get((1u16, 7u32)), None);
        ix.insert((1, 7), 0);
        ix.insert((2, 7), 1);
        for (key, want) in [((1, 7), Some(0)), ((1, 7), Some(0)), ((2, 7), Some(1)), ((1, 8), None), ((2, 7), Some(1)), ((1, 7), Some(0))] {
            assert_eq!(ix.get(key), want, "{key:?}");
        }
    }
}
