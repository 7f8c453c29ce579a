//! A 4-ary min-heap of `u128` keys: the event queue's priority queue.
//!
//! A node's four children are adjacent, 64 bytes: one cache line holds all the keys a
//! sift-down step compares, and the tree is half as deep as a binary heap's. Removal
//! moves the hole to the bottom along the smallest children and then sifts the last
//! key up from there (the strategy of Rust's `BinaryHeap::pop`), which saves a
//! comparison per level because the displaced key usually belongs near the bottom. The
//! smallest of four children is found without data-dependent branches.

/// Min-priority queue of `u128` keys.
#[derive(Default)]
pub struct QuadHeap {
    keys: Vec<u128>,
}

const ARITY: usize = 4;

impl QuadHeap {
    #[inline]
    pub fn push(&mut self, key: u128) {
        self.keys.push(key);
        let end = self.keys.len() - 1;
        self.sift_up(end, key);
    }

    /// Removes and returns the smallest key.
    #[inline]
    pub fn pop(&mut self) -> Option<u128> {
        let last = self.keys.pop()?;
        if self.keys.is_empty() {
            return Some(last);
        }
        let top = self.keys[0];
        let n = self.keys.len();
        // Move the hole from the root to a leaf, always along the smallest child.
        let mut hole = 0;
        loop {
            let first = ARITY * hole + 1;
            if first >= n {
                break;
            }
            let (best, best_key) = if first + ARITY <= n {
                min_of_four(&self.keys[first..first + ARITY], first)
            } else {
                let mut best = first;
                let mut best_key = self.keys[first];
                for c in first + 1..n {
                    let k = self.keys[c];
                    if k < best_key {
                        best = c;
                        best_key = k;
                    }
                }
                (best, best_key)
            };
            self.keys[hole] = best_key;
            hole = best;
        }
        self.sift_up(hole, last);
        Some(top)
    }

    #[inline]
    pub fn peek(&self) -> Option<u128> {
        self.keys.first().copied()
    }

    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Removes every key, in no particular order.
    pub fn drain(&mut self) -> Vec<u128> {
        std::mem::take(&mut self.keys)
    }

    #[inline]
    fn sift_up(&mut self, mut hole: usize, key: u128) {
        while hole > 0 {
            let parent = (hole - 1) / ARITY;
            let p = self.keys[parent];
            if p <= key {
                break;
            }
            self.keys[hole] = p;
            hole = parent;
        }
        self.keys[hole] = key;
    }
}

/// The smallest of four keys and its index (`base` + position), as a two-round
/// tournament of selects: no data-dependent branch, because which child is smallest is
/// a coin toss the branch predictor loses about half the time.
#[inline(always)]
fn min_of_four(k: &[u128], base: usize) -> (usize, u128) {
    let (a, ia) = select_min(k[0], base, k[1], base + 1);
    let (b, ib) = select_min(k[2], base + 2, k[3], base + 3);
    let (m, im) = select_min(a, ia, b, ib);
    (im, m)
}

#[inline(always)]
fn select_min(x: u128, ix: usize, y: u128, iy: usize) -> (u128, usize) {
    let take_y = y < x;
    (if take_y { y } else { x }, if take_y { iy } else { ix })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    #[test]
    fn pops_in_order_against_a_binary_heap() {
        let mut rng = crate::rng::SimRng::stream(11, "quad");
        let mut q = QuadHeap::default();
        let mut b = BinaryHeap::new();
        for step in 0..200_000u64 {
            if rng.below(5) < 3 {
                let k = (rng.below(if step % 7 == 0 { 1 << 40 } else { 1000 }) as u128) << 64 | step as u128;
                q.push(k);
                b.push(Reverse(k));
            } else {
                assert_eq!(q.peek(), b.peek().map(|x| x.0));
                assert_eq!(q.pop(), b.pop().map(|x| x.0));
            }
            assert_eq!(q.len(), b.len());
        }
        while let Some(Reverse(k)) = b.pop() {
            assert_eq!(q.pop(), Some(k));
        }
        assert!(q.is_empty());
    }
}
