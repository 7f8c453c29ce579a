//! A switch output port's eight strict-priority FIFOs of packets.
//!
//! Each FIFO is a list threaded through the packet records it holds
//! ([`Packet::queue_next`](crate::packet::Packet::queue_next)): a port keeps only each
//! FIFO's head and tail. A dequeue therefore reads the record it dequeues (which the
//! port is about to serialise anyway) and nothing else, where a ring buffer of ids costs
//! one more dependent cache miss per frame; and a queue holds no memory of its own, so
//! memory follows the frames queued now, never a port's deepest backlog ever. A bit mask
//! of the non-empty priorities sits beside the heads, so a dequeue finds its FIFO without
//! probing eight.

use crate::packet::{PacketArena, PktId, NO_PKT};

/// The eight 802.1Q priority FIFOs of one output port; priority 7 is served first.
pub struct EgressQueues {
    /// Bit p set ⇔ FIFO p is non-empty.
    nonempty: u8,
    /// Frames queued at all priorities.
    len: u32,
    head: [u32; 8],
    tail: [u32; 8],
}

impl Default for EgressQueues {
    fn default() -> Self {
        EgressQueues { nonempty: 0, len: 0, head: [NO_PKT; 8], tail: [NO_PKT; 8] }
    }
}

impl EgressQueues {
    /// Appends `pkt` to FIFO `prio` (0..=7).
    #[inline]
    pub fn push(&mut self, prio: usize, pkt: PktId, arena: &mut PacketArena) {
        arena.get_mut(pkt).queue_next = NO_PKT;
        if self.nonempty & (1 << prio) == 0 {
            self.head[prio] = pkt.0;
            self.nonempty |= 1 << prio;
        } else {
            arena.get_mut(PktId(self.tail[prio])).queue_next = pkt.0;
        }
        self.tail[prio] = pkt.0;
        self.len += 1;
    }

    /// Removes the head of the highest non-empty priority (non-preemptive strict
    /// priority: called only when the port is free to start a frame).
    #[inline]
    pub fn pop_highest(&mut self, arena: &PacketArena) -> Option<PktId> {
        if self.nonempty == 0 {
            return None;
        }
        let prio = 7 - self.nonempty.leading_zeros() as usize;
        let pkt = PktId(self.head[prio]);
        let next = arena.get(pkt).queue_next;
        self.head[prio] = next;
        if next == NO_PKT {
            self.nonempty &= !(1 << prio);
        }
        self.len -= 1;
        Some(pkt)
    }

    /// The frame `pop_highest` would return next, if any.
    #[inline]
    pub fn peek_highest(&self) -> Option<PktId> {
        if self.nonempty == 0 {
            return None;
        }
        Some(PktId(self.head[7 - self.nonempty.leading_zeros() as usize]))
    }

    /// Frames queued at all priorities.
    pub fn len(&self) -> usize {
        self.len as usize
    }

    pub fn is_empty(&self) -> bool {
        self.nonempty == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Packet;

    #[test]
    fn serves_strict_priority_then_fifo_order() {
        let mut arena = PacketArena::default();
        let ids: Vec<PktId> = (0..10).map(|seq| arena.alloc(Packet { seq, ..Packet::default() })).collect();
        let mut q = EgressQueues::default();
        for (prio, i) in [(0, 1), (3, 2), (0, 3), (7, 4), (3, 5)] {
            q.push(prio, ids[i], &mut arena);
        }
        assert_eq!(q.len(), 5);
        assert_eq!(q.peek_highest(), Some(ids[4]));
        let order: Vec<u32> = std::iter::from_fn(|| q.pop_highest(&arena).map(|p| arena.get(p).seq)).collect();
        assert_eq!(order, vec![4, 2, 5, 1, 3]);
        assert!(q.is_empty());
        assert_eq!(q.len(), 0);
        q.push(5, ids[9], &mut arena);
        assert_eq!(q.pop_highest(&arena), Some(ids[9]));
        assert_eq!(q.pop_highest(&arena), None);
    }

    #[test]
    fn a_fifo_refilled_after_emptying_keeps_order() {
        let mut arena = PacketArena::default();
        let ids: Vec<PktId> = (0..6).map(|seq| arena.alloc(Packet { seq, ..Packet::default() })).collect();
        let mut q = EgressQueues::default();
        q.push(2, ids[0], &mut arena);
        q.push(2, ids[1], &mut arena);
        assert_eq!(q.pop_highest(&arena), Some(ids[0]));
        q.push(2, ids[2], &mut arena);
        assert_eq!(q.pop_highest(&arena), Some(ids[1]));
        assert_eq!(q.pop_highest(&arena), Some(ids[2]));
        assert!(q.is_empty());
        // An emptied FIFO starts a new list: the stale tail is never linked to.
        q.push(2, ids[3], &mut arena);
        q.push(2, ids[4], &mut arena);
        assert_eq!(q.pop_highest(&arena), Some(ids[3]));
        assert_eq!(q.pop_highest(&arena), Some(ids[4]));
        assert_eq!(q.pop_highest(&arena), None);
    }
}
