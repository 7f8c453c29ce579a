//! Test support for the event queue's priority queues ([`crate::radix_heap`],
//! [`crate::timing_wheel`]): one check of a queue against the standard library's heap under
//! the event queue's access pattern.

use crate::rng::SimRng;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A min-priority queue of unique `u128` keys pushed in monotone order, as the event queue
/// uses it.
pub trait MonotoneQueue {
    fn push(&mut self, key: u128);
    /// Puts back the key just popped, where the queue offers it (the event queue's
    /// `unpop`); `false` where it does not.
    fn put_back(&mut self, key: u128) -> bool;
    fn pop(&mut self) -> Option<u128>;
    fn peek(&self) -> Option<u128>;
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool;
}

macro_rules! monotone_queue {
    ($t:ty, $put_back:expr) => {
        impl MonotoneQueue for $t {
            fn push(&mut self, key: u128) {
                <$t>::push(self, key)
            }
            fn put_back(&mut self, key: u128) -> bool {
                let put_back: fn(&mut $t, u128) -> bool = $put_back;
                put_back(self, key)
            }
            fn pop(&mut self) -> Option<u128> {
                <$t>::pop(self)
            }
            fn peek(&self) -> Option<u128> {
                <$t>::peek(self)
            }
            fn len(&self) -> usize {
                <$t>::len(self)
            }
            fn is_empty(&self) -> bool {
                <$t>::is_empty(self)
            }
        }
    };
}
// The radix heap holds only keys beyond the wheel's horizon: nothing is put back into it.
monotone_queue!(crate::radix_heap::RadixHeap, |_, _| false);
monotone_queue!(crate::timing_wheel::TimingWheel, |q, k| {
    q.push_front(k);
    true
});

/// `steps` random operations on `q` and on a binary heap, compared after each: pushes at
/// `ahead(rng)` after the last popped time (ordered within a time by the step number in
/// the low bits), the last popped key put back where `q` offers it, peeks and pops; then
/// both emptied.
pub fn against_binary_heap(q: &mut impl MonotoneQueue, seed: u64, steps: u128, mut ahead: impl FnMut(&mut SimRng) -> u128) {
    let mut rng = SimRng::stream(seed, "monotone queue");
    let mut b = BinaryHeap::new();
    let mut now: u128 = 0;
    let mut last_popped: Option<u128> = None;
    for step in 1..steps {
        match rng.below(10) {
            0..=5 => {
                let k = (now + ahead(&mut rng)) << 64 | step;
                q.push(k);
                b.push(Reverse(k));
                last_popped = None;
            }
            6 => {
                if let Some(k) = last_popped.take() {
                    if q.put_back(k) {
                        b.push(Reverse(k));
                    }
                }
            }
            _ => {
                assert_eq!(q.peek(), b.peek().map(|x| x.0));
                let got = q.pop();
                assert_eq!(got, b.pop().map(|x| x.0));
                if let Some(k) = got {
                    now = k >> 64;
                }
                last_popped = got;
            }
        }
        assert_eq!(q.len(), b.len());
    }
    while let Some(Reverse(k)) = b.pop() {
        assert_eq!(q.peek(), Some(k));
        assert_eq!(q.pop(), Some(k));
    }
    assert!(q.is_empty());
    assert_eq!(q.pop(), None);
}
