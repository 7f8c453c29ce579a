//! A timing wheel of `u128` keys whose high 64 bits are a time in picoseconds: the event
//! queue's priority queue.
//!
//! A packet simulation schedules almost every event a little ahead of the one it runs
//! (a serialisation, a propagation delay), never before it. The wheel keeps the near
//! future in `2^B` slots of `2^S` ps each: slot `i` of the window starting at absolute
//! slot `base` holds the keys whose time falls in absolute slot `base + i`, found by
//! masking the time. A bitmap of non-empty slots (and a summary word of non-empty bitmap
//! words) finds the next slot in a few instructions. A slot keeps its keys sorted, and
//! keys mostly arrive in order (same-time events in insertion order, as when a thousand
//! hosts start together), so an insertion usually lands at the back after one
//! comparison, and the smallest key is at the front. Keys beyond the window (timers far
//! ahead) wait in a 4-ary heap ([`crate::quad_heap`]) and move into the wheel when the
//! window reaches them. The order is exactly the keys' order, so same-time events keep
//! their insertion order: the result does not depend on `S` or `B`, only the speed.
//!
//! The window starts at the slot of the last key popped: `peek` never moves it, so a key
//! may still be pushed anywhere from the last popped time on (as an event being run
//! schedules others), even before the peeked key. A slot's sorted order makes the wheel
//! independent of how many keys share a slot: a key out of order costs a binary search and
//! a shift within its slot, never a scan of the slot at every pop.

use crate::quad_heap::QuadHeap;
use std::collections::VecDeque;

/// The wheel's shape: slots of `2^slot_bits` ps, `2^window_bits` of them.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct WheelShape {
    pub slot_bits: u32,
    pub window_bits: u32,
}

impl Default for WheelShape {
    /// 1.024 ns slots over a 4.2 µs window: a 1500 B frame at 100 Gbps takes 120 ns.
    fn default() -> Self {
        WheelShape { slot_bits: 10, window_bits: 12 }
    }
}

impl WheelShape {
    /// A shape for a network whose shortest frame takes `min_event_gap_ps` on its fastest
    /// link and whose events are scheduled at most about `horizon_ps` ahead (a frame's
    /// serialisation plus propagation on the slowest, longest link): slots about a
    /// quarter of the gap, and a window of twice the horizon (at most 2^16 slots).
    pub fn for_network(min_event_gap_ps: u64, horizon_ps: u64) -> WheelShape {
        let slot_bits = (min_event_gap_ps.max(4) / 4).ilog2().min(40);
        let slots = (horizon_ps.saturating_mul(2) >> slot_bits).max(64);
        let window_bits = slots.next_power_of_two().ilog2().clamp(6, 16);
        WheelShape { slot_bits, window_bits }
    }
}

/// Min-priority queue of `u128` keys (time in the high 64 bits) that never go below the
/// last key popped.
pub struct TimeWheel {
    shape: WheelShape,
    /// Each slot's keys, in ascending order.
    slots: Vec<VecDeque<u128>>,
    /// Bit `i % 64` of word `i / 64`: slot `i` is not empty.
    bits: Vec<u64>,
    /// Bit `w % 64` of word `w / 64`: bitmap word `w` is not zero.
    summary: Vec<u64>,
    /// Absolute slot (time >> slot_bits) of the window's first slot: that of the last
    /// key popped.
    base: u64,
    /// The first non-empty slot in window order, if any slot has keys.
    head: Option<usize>,
    /// Keys at or beyond absolute slot `base + 2^window_bits`.
    far: QuadHeap,
    len: usize,
}

impl Default for TimeWheel {
    fn default() -> Self {
        TimeWheel::new(WheelShape::default())
    }
}

impl TimeWheel {
    pub fn new(shape: WheelShape) -> TimeWheel {
        let n = 1usize << shape.window_bits;
        let words = n.div_ceil(64);
        TimeWheel {
            shape,
            slots: (0..n).map(|_| VecDeque::new()).collect(),
            bits: vec![0; words],
            summary: vec![0; words.div_ceil(64)],
            base: 0,
            head: None,
            far: QuadHeap::default(),
            len: 0,
        }
    }

    #[inline(always)]
    fn abs_slot(&self, key: u128) -> u64 {
        ((key >> 64) as u64) >> self.shape.slot_bits
    }

    #[inline(always)]
    fn mask(&self) -> usize {
        (1usize << self.shape.window_bits) - 1
    }

    #[inline(always)]
    fn mark(&mut self, i: usize) {
        let w = i >> 6;
        self.bits[w] |= 1 << (i & 63);
        self.summary[w >> 6] |= 1 << (w & 63);
    }

    #[inline(always)]
    fn unmark(&mut self, i: usize) {
        let w = i >> 6;
        self.bits[w] &= !(1 << (i & 63));
        if self.bits[w] == 0 {
            self.summary[w >> 6] &= !(1 << (w & 63));
        }
    }

    /// Puts `key` in its slot, in order; the caller knows it is inside the window.
    #[inline(always)]
    fn insert(&mut self, key: u128) {
        let i = (self.abs_slot(key) as usize) & self.mask();
        let slot = &mut self.slots[i];
        match slot.back() {
            Some(&last) if last > key => {
                let at = slot.partition_point(|&k| k < key);
                slot.insert(at, key);
            }
            _ => slot.push_back(key),
        }
        self.mark(i);
        let start = (self.base as usize) & self.mask();
        let pos = |j: usize| j.wrapping_sub(start) & ((1usize << self.shape.window_bits) - 1);
        if self.head.is_none_or(|h| pos(i) < pos(h)) {
            self.head = Some(i);
        }
    }

    /// Adds `key`, which must not be below the last key popped.
    #[inline]
    pub fn push(&mut self, key: u128) {
        let a = self.abs_slot(key);
        debug_assert!(a >= self.base, "time wheel: key pushed before the last key popped");
        self.len += 1;
        if a - self.base <= self.mask() as u64 {
            self.insert(key);
        } else {
            self.far.push(key);
        }
    }

    /// The first non-empty slot at or after the window's start, in window order.
    #[inline]
    fn first_slot(&self) -> Option<usize> {
        let n = self.slots.len();
        let start = (self.base as usize) & self.mask();
        let found = self.next_set(start, n).or_else(|| self.next_set(0, start));
        found
    }

    /// The first set bit in `[from, to)` of the slot bitmap.
    #[inline]
    fn next_set(&self, from: usize, to: usize) -> Option<usize> {
        if from >= to {
            return None;
        }
        let mut w = from >> 6;
        let first = self.bits[w] & (!0u64 << (from & 63));
        if first != 0 {
            let i = (w << 6) + first.trailing_zeros() as usize;
            return (i < to).then_some(i);
        }
        // Whole words after `w`, through the summary.
        w += 1;
        let last_word = (to - 1) >> 6;
        while w <= last_word {
            let s = self.summary[w >> 6] & (!0u64 << (w & 63));
            if s == 0 {
                w = ((w >> 6) + 1) << 6;
                continue;
            }
            let word = ((w >> 6) << 6) + s.trailing_zeros() as usize;
            if word > last_word {
                return None;
            }
            let i = (word << 6) + self.bits[word].trailing_zeros() as usize;
            return (i < to).then_some(i);
        }
        None
    }

    /// The smallest key.
    #[inline]
    pub fn peek(&self) -> Option<u128> {
        match self.head {
            Some(i) => self.slots[i].front().copied(),
            None => self.far.peek(),
        }
    }

    /// Removes and returns the smallest key.
    #[inline]
    pub fn pop(&mut self) -> Option<u128> {
        let m = match self.head {
            Some(i) => {
                let slot = &mut self.slots[i];
                let m = slot.pop_front().expect("the head slot has keys");
                if slot.is_empty() {
                    self.unmark(i);
                    self.head = self.first_slot();
                }
                m
            }
            None => self.far.pop()?,
        };
        self.len -= 1;
        let a = self.abs_slot(m);
        if a != self.base {
            self.base = a;
            self.pull_far();
        }
        Some(m)
    }

    /// Moves the far keys that the window now reaches into their slots.
    #[inline]
    fn pull_far(&mut self) {
        let end = self.base + self.mask() as u64;
        while let Some(k) = self.far.peek() {
            if self.abs_slot(k) > end {
                break;
            }
            self.far.pop();
            self.insert(k);
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Removes every key, in no particular order, and forgets the last key popped (the
    /// caller may push smaller keys afterwards).
    pub fn drain(&mut self) -> Vec<u128> {
        let mut all = self.far.drain();
        for s in &mut self.slots {
            all.extend(s.drain(..));
        }
        self.bits.iter_mut().for_each(|w| *w = 0);
        self.summary.iter_mut().for_each(|w| *w = 0);
        self.base = 0;
        self.head = None;
        self.len = 0;
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    /// Against the standard library's heap, with keys shaped as the event queue makes
    /// them (time, then a rising sequence): near-future times, ties, far timers, long
    /// idle gaps, and pushes between a peek and its pop; on small wheels so that keys
    /// wrap around the window and move in from far.
    #[test]
    fn pops_in_order_against_a_binary_heap() {
        for shape in [WheelShape { slot_bits: 4, window_bits: 6 }, WheelShape { slot_bits: 0, window_bits: 7 }, WheelShape::default()] {
            let mut rng = crate::rng::SimRng::stream(11, "wheel");
            let mut q = TimeWheel::new(shape);
            let mut b = BinaryHeap::new();
            let mut now = 0u64;
            for seq in 1..200_000u64 {
                let r = rng.below(10);
                if r < 6 {
                    let ahead = match rng.below(10) {
                        0 => 0,
                        1 => rng.below(1 << 40),
                        2 => rng.below(50_000),
                        _ => rng.below(2000),
                    };
                    let k = ((now + ahead) as u128) << 64 | (seq as u128) << 32 | rng.below(1 << 20) as u128;
                    q.push(k);
                    b.push(Reverse(k));
                } else if r < 8 {
                    assert_eq!(q.peek(), b.peek().map(|x| x.0), "{shape:?}");
                } else {
                    let got = q.pop();
                    assert_eq!(got, b.pop().map(|x| x.0), "{shape:?}");
                    if let Some(k) = got {
                        now = (k >> 64) as u64;
                    }
                }
                assert_eq!(q.len(), b.len());
            }
            while let Some(Reverse(k)) = b.pop() {
                assert_eq!(q.pop(), Some(k), "{shape:?}");
            }
            assert!(q.is_empty() && q.pop().is_none() && q.peek().is_none());
        }
    }

    #[test]
    fn a_push_between_peek_and_pop_comes_first_if_smaller() {
        let mut q = TimeWheel::new(WheelShape { slot_bits: 2, window_bits: 6 });
        let t = |time: u64, seq: u128| (time as u128) << 64 | seq << 32;
        q.push(t(100, 1));
        q.push(t(50, 2));
        assert_eq!(q.pop(), Some(t(50, 2)));
        q.push(t(10_000, 3));
        assert_eq!(q.peek(), Some(t(100, 1)));
        q.push(t(70, 4));
        assert_eq!(q.peek(), Some(t(70, 4)));
        assert_eq!(q.pop(), Some(t(70, 4)));
        assert_eq!(q.pop(), Some(t(100, 1)));
        assert_eq!(q.pop(), Some(t(10_000, 3)), "from far, across an empty window");
    }

    #[test]
    fn drain_returns_everything_and_resets() {
        let mut q = TimeWheel::new(WheelShape { slot_bits: 2, window_bits: 6 });
        for k in [5u128 << 64, 9 << 64, 7 << 64, 1 << 100] {
            q.push(k);
        }
        assert_eq!(q.pop(), Some(5 << 64));
        let mut all = q.drain();
        all.sort_unstable();
        assert_eq!(all, vec![7 << 64, 9 << 64, 1 << 100]);
        q.push(1);
        assert_eq!(q.pop(), Some(1), "smaller keys are allowed after a drain");
    }

    #[test]
    fn shape_follows_the_network() {
        // 100 Gbps: 64 B take 5.12 ns; 1 µs links: slots of 1 ns, window ≥ 2 × 1.1 µs.
        let s = WheelShape::for_network(5_120, 1_120_000);
        assert_eq!(s.slot_bits, 10);
        assert!((1u64 << (s.slot_bits + s.window_bits)) >= 2 * 1_120_000);
        // 1 Gbps: slots of 128 ns.
        assert_eq!(WheelShape::for_network(512_000, 13_000_000).slot_bits, 16);
    }
}
