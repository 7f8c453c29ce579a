//! A switch output port's eight strict-priority FIFOs of packet ids.
//!
//! A bit mask of the non-empty priorities sits beside the FIFOs, so a dequeue reads the
//! mask and then only the FIFO it serves, instead of probing up to eight queue headers
//! (four cache lines) per frame.
//!
//! A FIFO that empties gives back a large buffer. Without that, each FIFO would keep the
//! capacity of its deepest backlog ever, and the sum of those per-port maxima grows with
//! the simulated duration (a long run visits every port's worst burst), so peak memory
//! would not stay flat; with it, the FIFOs hold about as much as is queued now.

use crate::packet::PktId;
use std::collections::VecDeque;

/// An emptied FIFO whose buffer holds more than this many ids shrinks it...
const SHRINK_ABOVE: usize = 512;
/// ...to this many: a port that empties between small bursts reallocates nothing.
const SHRINK_TO: usize = 64;

/// The eight 802.1Q priority FIFOs of one output port; priority 7 is served first.
#[derive(Default)]
pub struct EgressQueues {
    /// Bit p set ⇔ FIFO p is non-empty.
    nonempty: u8,
    fifos: [VecDeque<PktId>; 8],
}

impl EgressQueues {
    /// Appends `pkt` to FIFO `prio` (0..=7).
    #[inline]
    pub fn push(&mut self, prio: usize, pkt: PktId) {
        self.fifos[prio].push_back(pkt);
        self.nonempty |= 1 << prio;
    }

    /// Removes the head of the highest non-empty priority (non-preemptive strict
    /// priority: called only when the port is free to start a frame).
    #[inline]
    pub fn pop_highest(&mut self) -> Option<PktId> {
        if self.nonempty == 0 {
            return None;
        }
        let prio = 7 - self.nonempty.leading_zeros() as usize;
        let fifo = &mut self.fifos[prio];
        let pkt = fifo.pop_front();
        if fifo.is_empty() {
            self.nonempty &= !(1 << prio);
            if fifo.capacity() > SHRINK_ABOVE {
                fifo.shrink_to(SHRINK_TO);
            }
        }
        pkt
    }

    /// The frame `pop_highest` would return next, if any.
    #[inline]
    pub fn peek_highest(&self) -> Option<PktId> {
        if self.nonempty == 0 {
            return None;
        }
        self.fifos[7 - self.nonempty.leading_zeros() as usize].front().copied()
    }

    /// Frames queued at all priorities.
    pub fn len(&self) -> usize {
        self.fifos.iter().map(VecDeque::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.nonempty == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serves_strict_priority_then_fifo_order() {
        let mut q = EgressQueues::default();
        for (prio, id) in [(0, 1), (3, 2), (0, 3), (7, 4), (3, 5)] {
            q.push(prio, PktId(id));
        }
        assert_eq!(q.len(), 5);
        assert_eq!(q.peek_highest(), Some(PktId(4)));
        let order: Vec<u32> = std::iter::from_fn(|| q.pop_highest().map(|p| p.0)).collect();
        assert_eq!(order, vec![4, 2, 5, 1, 3]);
        assert!(q.is_empty());
        q.push(5, PktId(9));
        assert_eq!(q.pop_highest(), Some(PktId(9)));
        assert_eq!(q.pop_highest(), None);
    }

    #[test]
    fn an_emptied_fifo_gives_back_a_large_buffer() {
        let mut q = EgressQueues::default();
        for id in 0..10 * SHRINK_ABOVE as u32 {
            q.push(2, PktId(id));
        }
        while q.pop_highest().is_some() {}
        assert!(q.fifos[2].capacity() <= SHRINK_ABOVE);
        q.push(2, PktId(1));
        assert_eq!(q.pop_highest(), Some(PktId(1)));
    }
}
