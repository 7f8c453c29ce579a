//! A timing wheel in front of the radix heap: the event queue's priority queue.
//!
//! Keys are those of [`crate::radix_heap`]: a time in the high 64 bits and a unique
//! tie-breaker in the low 64, pushed in monotone order (never below the last time
//! popped; within a time, in increasing order). Most events of a packet network fall
//! within a few microseconds of now (a serialisation, a link's delay), so the wheel
//! keeps those in [`SLOTS`] slots of 2^[`SHIFT`] ps each: a push is a shift, a compare,
//! a node from one pool linked at its slot's head, and two bit sets (the pool, not the
//! slots, holds the keys, so memory follows the most keys held at once). The slot being
//! served is sorted once, when the wheel reaches it, into `front`; a key pushed into that
//! slot later is inserted in order (it is usually the last). A key beyond the wheel's horizon waits in the radix heap and
//! moves into the wheel when the wheel comes within reach of it; every key in the heap
//! is later than every key in the wheel, so the heap's own monotone contract holds.
//! The next occupied slot is found with two trailing-zero counts on a two-level bit map.

use crate::radix_heap::RadixHeap;

/// log2 of a slot's width in picoseconds (1.024 ns).
pub const SHIFT: u32 = 10;
/// Slots on the wheel (a horizon of 4.19 µs): 64 words of 64 bits, one summary word.
pub const SLOTS: u64 = 4096;
const MASK: u64 = SLOTS - 1;

const NONE: u32 = u32::MAX;

/// A key in a slot's list: its halves (8-byte aligned, so 24 bytes) and the next node.
#[derive(Copy, Clone)]
struct Node {
    hi: u64,
    lo: u64,
    next: u32,
}

#[inline(always)]
fn slot_of(key: u128) -> u64 {
    ((key >> 64) as u64) >> SHIFT
}

/// Min-priority queue of unique `u128` keys, pushed in monotone order.
pub struct TimingWheel {
    /// The keys of slot `base`, sorted: `front[front_at..]` are held, popped by moving
    /// `front_at` on (a vector and a cursor: cheaper than a ring buffer's wrapping).
    front: Vec<u128>,
    front_at: usize,
    /// The slot being served: every key held in the wheel is in slots
    /// `base .. base + SLOTS`, every key in `overflow` beyond them.
    base: u64,
    /// The keys of each later slot within the horizon, unsorted (the slot is sorted when
    /// it is served): a list through `nodes` from `heads[slot & MASK]` (`NONE`: empty),
    /// newest first. One pool for every slot keeps the wheel's memory at its most keys
    /// held at once.
    heads: Box<[u32]>,
    nodes: Vec<Node>,
    /// The first unused node (`NONE`: none; `nodes` grows).
    free: u32,
    /// A slot's keys while it is sorted.
    scratch: Vec<u128>,
    /// Bit `i % 64` of word `i / 64`: slot `i` (wheel position) holds keys.
    words: [u64; 64],
    /// Bit `w`: word `w` is not zero.
    summary: u64,
    /// Keys beyond the horizon.
    overflow: RadixHeap,
    /// The smallest key in `overflow` (`u128::MAX` if none): the heap finds its minimum
    /// by scanning a bucket, so it is asked only when that key leaves.
    overflow_min: u128,
    /// Its slot (`u64::MAX` if none), the one compare a wheel's move makes.
    overflow_slot: u64,
    len: usize,
}

impl Default for TimingWheel {
    fn default() -> Self {
        TimingWheel {
            front: Vec::new(),
            front_at: 0,
            base: 0,
            heads: vec![NONE; SLOTS as usize].into_boxed_slice(),
            nodes: Vec::new(),
            free: NONE,
            scratch: Vec::new(),
            words: [0; 64],
            summary: 0,
            overflow: RadixHeap::default(),
            overflow_min: u128::MAX,
            overflow_slot: u64::MAX,
            len: 0,
        }
    }
}

impl TimingWheel {
    /// Adds a key; no earlier than the last key popped, and within a time in increasing
    /// order.
    #[inline(always)]
    pub fn push(&mut self, key: u128) {
        self.len += 1;
        let s = slot_of(key);
        debug_assert!(s >= self.base, "timing wheel: key pushed before the slot being served");
        // One compare for the common case, a later slot within the horizon (1 ..= SLOTS - 1
        // ahead); the slot being served and keys beyond the horizon take a call.
        if (s - self.base).wrapping_sub(1) < SLOTS - 1 {
            self.link((s & MASK) as usize, key);
        } else {
            self.push_here_or_beyond(s, key);
        }
    }

    /// [`TimingWheel::push`] of a key into the slot being served or beyond the horizon.
    #[inline(never)]
    fn push_here_or_beyond(&mut self, s: u64, key: u128) {
        if s == self.base {
            self.insert_front(key);
        } else {
            self.overflow.push(key);
            if key < self.overflow_min {
                self.overflow_min = key;
                self.overflow_slot = s;
            }
        }
    }

    /// Puts `key` at the head of the list of wheel position `i` and marks it occupied.
    #[inline(always)]
    fn link(&mut self, i: usize, key: u128) {
        let head = self.heads[i];
        let node = Node { hi: (key >> 64) as u64, lo: key as u64, next: head };
        let n = if self.free == NONE {
            self.new_node(node)
        } else {
            let n = self.free;
            self.free = self.nodes[n as usize].next;
            self.nodes[n as usize] = node;
            n
        };
        if head == NONE {
            self.words[i >> 6] |= 1 << (i & 63);
            self.summary |= 1 << (i >> 6);
        }
        self.heads[i] = n;
    }

    /// A node from a grown pool (the free list is empty).
    #[inline(never)]
    fn new_node(&mut self, node: Node) -> u32 {
        self.nodes.push(node);
        (self.nodes.len() - 1) as u32
    }

    /// A key of the slot being served, in order (scanning from the back: it is usually
    /// the newest).
    #[inline]
    fn insert_front(&mut self, key: u128) {
        let mut at = self.front.len();
        while at > self.front_at && self.front[at - 1] > key {
            at -= 1;
        }
        self.front.insert(at, key);
    }

    /// Puts back the key just popped (it is smaller than every key held).
    pub fn push_front(&mut self, key: u128) {
        debug_assert!(slot_of(key) == self.base && self.front.get(self.front_at).is_none_or(|&f| key < f));
        self.len += 1;
        if self.front_at > 0 {
            self.front_at -= 1;
            self.front[self.front_at] = key;
        } else {
            self.front.insert(0, key);
        }
    }

    /// Removes and returns the smallest key.
    #[inline]
    pub fn pop(&mut self) -> Option<u128> {
        if let Some(&k) = self.front.get(self.front_at) {
            self.front_at += 1;
            self.len -= 1;
            return Some(k);
        }
        if self.len == 0 {
            return None;
        }
        self.len -= 1;
        Some(self.advance())
    }

    /// `front` is empty and keys are held: moves the wheel to the next slot that holds
    /// keys (pulling keys from the overflow heap as the horizon passes them) and returns
    /// that slot's smallest key, its others sorted into `front`.
    fn advance(&mut self) -> u128 {
        // `front` is spent: reuse it from the start.
        self.front.clear();
        self.front_at = 0;
        // The wheel is empty: jump to the overflow's first slot.
        self.base = self.next_occupied().unwrap_or(self.overflow_slot);
        if self.overflow_slot < self.base + SLOTS {
            self.pull_overflow();
        }
        let i = (self.base & MASK) as usize;
        self.words[i >> 6] &= !(1 << (i & 63));
        if self.words[i >> 6] == 0 {
            self.summary &= !(1 << (i >> 6));
        }
        let first = self.heads[i];
        self.heads[i] = NONE;
        let node = &mut self.nodes[first as usize];
        if node.next == NONE {
            // Most slots hold one key (a slot is about a nanosecond).
            let k = (node.hi as u128) << 64 | node.lo as u128;
            node.next = self.free;
            self.free = first;
            return k;
        }
        // The list goes back to the free list whole: its last node points at the old head.
        let (mut n, mut last) = (first, first);
        while n != NONE {
            let node = self.nodes[n as usize];
            self.scratch.push((node.hi as u128) << 64 | node.lo as u128);
            last = n;
            n = node.next;
        }
        self.nodes[last as usize].next = self.free;
        self.free = first;
        // The list runs newest first, and keys pushed for one time arrive in increasing
        // order: reversed, such runs are in the order the sort is fastest on (an
        // insertion sort for a few keys). The sorted keys become `front` (the spent one
        // is the next scratch space).
        self.scratch.reverse();
        self.scratch.sort_unstable();
        std::mem::swap(&mut self.front, &mut self.scratch);
        self.front_at = 1;
        self.front[0]
    }

    /// Moves the overflow's keys that the horizon now reaches into the wheel.
    fn pull_overflow(&mut self) {
        let horizon = self.base + SLOTS;
        while self.overflow_slot < horizon {
            let k = self.overflow.pop().expect("overflow_min is held");
            debug_assert_eq!(k, self.overflow_min);
            self.overflow_min = self.overflow.peek().unwrap_or(u128::MAX);
            self.overflow_slot = if self.overflow_min == u128::MAX { u64::MAX } else { slot_of(self.overflow_min) };
            self.link((slot_of(k) & MASK) as usize, k);
        }
    }

    /// The first slot from `base` on (circularly, within the horizon) that holds keys.
    #[inline]
    fn next_occupied(&self) -> Option<u64> {
        if self.summary == 0 {
            return None;
        }
        let p = (self.base & MASK) as usize;
        let (w, b) = (p >> 6, p & 63);
        let here = self.words[w] & (!0u64 << b);
        let pos = if here != 0 {
            (w << 6) | here.trailing_zeros() as usize
        } else {
            // Later words, then from the start (the wheel wraps), then this word's low bits.
            let later = if w == 63 { 0 } else { self.summary & (!0u64 << (w + 1)) };
            let w2 = if later != 0 { later.trailing_zeros() as usize } else { self.summary.trailing_zeros() as usize };
            let bits = if w2 == w { self.words[w] & !(!0u64 << b) } else { self.words[w2] };
            (w2 << 6) | bits.trailing_zeros() as usize
        };
        let ahead = (pos as u64).wrapping_sub(p as u64) & MASK;
        Some(self.base + ahead)
    }

    /// The smallest key, without removing it.
    #[inline]
    pub fn peek(&self) -> Option<u128> {
        if let Some(&k) = self.front.get(self.front_at) {
            return Some(k);
        }
        match self.next_occupied() {
            Some(s) => {
                let (mut n, mut min) = (self.heads[(s & MASK) as usize], u128::MAX);
                while n != NONE {
                    let node = &self.nodes[n as usize];
                    min = min.min((node.hi as u128) << 64 | node.lo as u128);
                    n = node.next;
                }
                Some(min)
            }
            None => (self.overflow_min != u128::MAX).then_some(self.overflow_min),
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Removes every key, in no particular order, and resets the wheel to time zero (so
    /// any key may be pushed next).
    pub fn drain(&mut self) -> Vec<u128> {
        let mut all: Vec<u128> = self.front.drain(self.front_at..).collect();
        self.front.clear();
        self.front_at = 0;
        for i in 0..SLOTS as usize {
            let mut n = self.heads[i];
            while n != NONE {
                let node = self.nodes[n as usize];
                all.push((node.hi as u128) << 64 | node.lo as u128);
                n = node.next;
            }
        }
        self.heads.fill(NONE);
        self.nodes.clear();
        self.free = NONE;
        all.append(&mut self.overflow.drain());
        self.overflow_min = u128::MAX;
        self.overflow_slot = u64::MAX;
        self.words = [0; 64];
        self.summary = 0;
        self.base = 0;
        self.len = 0;
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Against the standard library's heap, with the event queue's access pattern
    /// (`queue_check`): same-time keys, within a slot, within the horizon, beyond it, far
    /// beyond it.
    #[test]
    fn pops_in_order_against_a_binary_heap() {
        crate::queue_check::against_binary_heap(&mut TimingWheel::default(), 12, 400_000, |rng| match rng.below(6) {
            0 => 0,
            1 => rng.below(1 << SHIFT) as u128,
            2 => rng.below(1 << 16) as u128,
            3 => rng.below(SLOTS << SHIFT) as u128,
            4 => rng.below((4 * SLOTS) << SHIFT) as u128,
            _ => rng.below(1 << 40) as u128,
        });
    }

    /// A slot found across the wheel's wrap: with the slot being served near the end of
    /// the wheel, a key a few slots ahead sits at a low position and one in the same
    /// word behind the served position is a whole turn ahead; both pop in time order.
    #[test]
    fn finds_slots_across_the_wrap() {
        let t = |slot: u64, off: u64, seq: u128| (((slot << SHIFT) + off) as u128) << 64 | seq;
        let mut q = TimingWheel::default();
        let start = SLOTS - 3;
        q.push(t(start, 5, 1));
        assert_eq!(q.pop(), Some(t(start, 5, 1)));
        let keys = [t(start + 5, 0, 2), t(start + SLOTS - 1, 7, 3), t(start + 1, 1, 4), t(start + SLOTS + 2, 0, 5)];
        for k in keys {
            q.push(k);
        }
        let mut want = keys.to_vec();
        want.sort_unstable();
        let got: Vec<u128> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn drain_returns_every_key_and_allows_any_key_next() {
        let t = |time: u128, seq: u128| time << 64 | seq;
        let mut q = TimingWheel::default();
        for k in [t(5, 1), t(9 << SHIFT, 2), t(7, 3), t(1 << 40, 4)] {
            q.push(k);
        }
        assert_eq!(q.pop(), Some(t(5, 1)));
        let mut all = q.drain();
        all.sort_unstable();
        assert_eq!(all, vec![t(7, 3), t(9 << SHIFT, 2), t(1 << 40, 4)]);
        assert!(q.is_empty());
        q.push(t(1, 1));
        q.push(t(0, 2));
        assert_eq!(q.pop(), Some(t(0, 2)));
        assert_eq!(q.pop(), Some(t(1, 1)));
    }
}
