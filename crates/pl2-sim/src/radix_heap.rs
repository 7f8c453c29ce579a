//! A monotone radix heap of `u128` event keys: the priority queue behind the event
//! queue's timing wheel ([`crate::timing_wheel`]), holding the keys beyond its horizon.
//!
//! A key is a time (its high 64 bits) and a tie-breaker (the low 64: the event queue's
//! insertion sequence and event code); keys are unique. A discrete-event simulation never
//! schedules into the past, so every key pushed is at least the last key popped. A
//! radix heap (Ahuja, Mehlhorn, Orlin and Tarjan, "Faster algorithms for the shortest
//! path problem", J. ACM 37(2), 1990) uses that: a key goes into the bucket named by the
//! highest bit in which its *time* differs from the last time popped, so a push is one
//! XOR, one leading-zero count and one `Vec` push. A pop takes the lowest non-empty
//! bucket (one trailing-zero count on a bit mask), finds its earliest time, makes it the
//! new reference and moves the bucket's other keys into strictly lower buckets; each key
//! moves down at most once per bit of time, in practice a few times.
//!
//! Keys at the reference time wait in `front`, in key order: the keys a redistribution
//! brings there are sorted (usually one or two), and a key pushed at the reference time
//! comes after every key held, because its sequence number is the newest. That is the
//! event queue's contract: within a time, keys are pushed in increasing order, and debug
//! builds assert it, as they assert that no key goes below the reference.

use std::collections::VecDeque;

/// Min-priority queue of unique `u128` keys, pushed in monotone order.
pub struct RadixHeap {
    /// The time (high 64 bits) of the last key popped: every key held is at least this.
    last: u64,
    /// Held keys at time `last`, in increasing order.
    front: VecDeque<u128>,
    /// `buckets[i]`: keys whose time's highest bit differing from `last` is bit `i`.
    buckets: Box<[Vec<u128>; 64]>,
    /// Bit `i` set iff `buckets[i]` is not empty.
    nonempty: u64,
    len: usize,
}

impl Default for RadixHeap {
    fn default() -> Self {
        RadixHeap { last: 0, front: VecDeque::new(), buckets: Box::new(std::array::from_fn(|_| Vec::new())), nonempty: 0, len: 0 }
    }
}

#[inline(always)]
fn time_of(key: u128) -> u64 {
    (key >> 64) as u64
}

/// The bucket of a key at time `t` relative to reference time `reference` (`t` ≠ it).
/// Masked to 0..64, which `t` ≠ `reference` already guarantees: the compiler then needs
/// no bounds check where it indexes the buckets.
#[inline(always)]
fn bucket_of(t: u64, reference: u64) -> usize {
    (63 - (t ^ reference).leading_zeros() as usize) & 63
}

impl RadixHeap {
    /// Adds a key; within one time, keys must come in increasing order.
    #[inline]
    pub fn push(&mut self, key: u128) {
        let t = time_of(key);
        debug_assert!(t >= self.last, "radix heap: key pushed before the last time popped");
        self.len += 1;
        if t == self.last {
            debug_assert!(self.front.back().is_none_or(|&b| b < key), "radix heap: keys of one time pushed out of order");
            self.front.push_back(key);
            return;
        }
        let b = bucket_of(t, self.last);
        self.buckets[b].push(key);
        self.nonempty |= 1 << b;
    }

    /// Removes and returns the smallest key.
    #[inline]
    pub fn pop(&mut self) -> Option<u128> {
        if let Some(k) = self.front.pop_front() {
            self.len -= 1;
            return Some(k);
        }
        if self.nonempty == 0 {
            return None;
        }
        let b = self.nonempty.trailing_zeros() as usize;
        self.len -= 1;
        let bucket = &mut self.buckets[b];
        if bucket.len() == 1 {
            let k = bucket[0];
            bucket.clear();
            self.nonempty &= !(1 << b);
            self.last = time_of(k);
            return Some(k);
        }
        let mut keys = std::mem::take(bucket);
        self.nonempty &= !(1 << b);
        let min = keys.iter().map(|&k| time_of(k)).min().expect("non-empty bucket");
        self.last = min;
        // Every other key's time agrees with `min` above bit `b`, so it lands in a lower
        // bucket (never bucket `b` itself, which is being emptied). The buckets reached
        // are gathered in a register and marked once.
        let (front, buckets) = (&mut self.front, &mut *self.buckets);
        let mut reached = 0u64;
        for &k in &keys {
            let t = time_of(k);
            if t == min {
                front.push_back(k);
            } else {
                let to = bucket_of(t, min);
                buckets[to].push(k);
                reached |= 1 << to;
            }
        }
        self.nonempty |= reached;
        keys.clear();
        self.buckets[b] = keys;
        if self.front.len() > 1 {
            self.front.make_contiguous().sort_unstable();
        }
        self.front.pop_front()
    }

    /// The smallest key, without removing it (scans the lowest non-empty bucket).
    #[inline]
    pub fn peek(&self) -> Option<u128> {
        if let Some(&k) = self.front.front() {
            return Some(k);
        }
        if self.nonempty == 0 {
            return None;
        }
        self.buckets[self.nonempty.trailing_zeros() as usize].iter().min().copied()
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Removes every key, in no particular order, and resets the reference to time zero
    /// (so any key may be pushed next).
    pub fn drain(&mut self) -> Vec<u128> {
        let mut all: Vec<u128> = self.front.drain(..).collect();
        for b in self.buckets.iter_mut() {
            all.append(b);
        }
        self.nonempty = 0;
        self.len = 0;
        self.last = 0;
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Against the standard library's heap, with the event queue's access pattern
    /// (`queue_check`): same-time keys, near and far futures.
    #[test]
    fn pops_in_order_against_a_binary_heap() {
        crate::queue_check::against_binary_heap(&mut RadixHeap::default(), 11, 300_000, |rng| match rng.below(4) {
            0 => 0,
            1 => rng.below(1000) as u128,
            2 => rng.below(1 << 20) as u128,
            _ => rng.below(1 << 40) as u128,
        });
    }

    #[test]
    fn drain_returns_every_key_and_allows_any_key_next() {
        let t = |time: u128, seq: u128| time << 64 | seq;
        let mut q = RadixHeap::default();
        for k in [t(5, 1), t(9, 2), t(7, 3), t(1 << 40, 4)] {
            q.push(k);
        }
        assert_eq!(q.pop(), Some(t(5, 1)));
        let mut all = q.drain();
        all.sort_unstable();
        assert_eq!(all, vec![t(7, 3), t(9, 2), t(1 << 40, 4)]);
        assert!(q.is_empty());
        q.push(t(1, 1));
        q.push(t(0, 2));
        assert_eq!(q.pop(), Some(t(0, 2)));
        assert_eq!(q.pop(), Some(t(1, 1)));
    }
}
