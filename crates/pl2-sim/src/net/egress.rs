//! A switch output port's eight strict-priority FIFOs of packets, with what a trimming
//! queue needs besides (`sim/trimming.rs`): a FIFO's length, and removal of its newest
//! frame. Both walk the FIFO rather than keep counts every port would pay for; trimming
//! queues are a few frames deep.
//!
//! Each FIFO is a [`PktList`] threaded through the packet records it holds, so a dequeue
//! reads the record it dequeues (which the port is about to serialise anyway) and
//! nothing else, where a ring buffer of ids costs one more dependent cache miss per
//! frame; and a queue holds no memory of its own, so memory follows the frames queued
//! now, never a port's deepest backlog ever. A bit mask of the non-empty priorities sits
//! beside the lists, so a dequeue finds its FIFO without probing eight.

use crate::packet::{PacketArena, PktId, PktList};

/// The eight 802.1Q priority FIFOs of one output port; priority 7 is served first.
///
/// Laid out (C order, one cache line aligned) so that the mask and the FIFOs of
/// priorities 0 to 6 share the first line: an enqueue or dequeue at those priorities
/// touches one line, not the two that 68 bytes placed anywhere span.
#[derive(Default)]
#[repr(C, align(64))]
pub struct EgressQueues {
    /// Bit p set ⇔ FIFO p is non-empty.
    nonempty: u8,
    fifos: [PktList; 8],
}

impl EgressQueues {
    /// Appends `pkt` to FIFO `prio` (0..=7).
    #[inline]
    pub fn push(&mut self, prio: usize, pkt: PktId, arena: &mut PacketArena) {
        self.fifos[prio].push_back(pkt, arena);
        self.nonempty |= 1 << prio;
    }

    /// Frames waiting in FIFO `prio` (not the one being serialised), counted by walking
    /// the FIFO.
    pub fn len(&self, prio: usize, arena: &PacketArena) -> u32 {
        let mut n = 0;
        let mut at = self.fifos[prio].front();
        while let Some(p) = at {
            n += 1;
            let next = arena.get(p).queue_next;
            at = (next != crate::packet::NO_PKT).then_some(PktId(next));
        }
        n
    }

    /// The newest frame of FIFO `prio`, if any.
    pub fn back(&self, prio: usize) -> Option<PktId> {
        self.fifos[prio].back()
    }

    /// Removes the newest frame of FIFO `prio`.
    pub fn pop_back(&mut self, prio: usize, arena: &mut PacketArena) -> Option<PktId> {
        let pkt = self.fifos[prio].pop_back(arena)?;
        if self.fifos[prio].is_empty() {
            self.nonempty &= !(1 << prio);
        }
        Some(pkt)
    }

    /// Removes the head of the highest non-empty priority (non-preemptive strict
    /// priority: called only when the port is free to start a frame).
    #[inline]
    pub fn pop_highest(&mut self, arena: &PacketArena) -> Option<PktId> {
        if self.nonempty == 0 {
            return None;
        }
        let prio = 7 - self.nonempty.leading_zeros() as usize;
        let fifo = &mut self.fifos[prio];
        let pkt = fifo.pop_front(arena);
        if fifo.is_empty() {
            self.nonempty &= !(1 << prio);
        }
        pkt
    }

    /// As [`EgressQueues::pop_highest`], among the priorities whose bit is set in
    /// `allowed` (PFC: a paused priority keeps its frames).
    #[inline]
    pub fn pop_highest_among(&mut self, allowed: u8, arena: &PacketArena) -> Option<PktId> {
        let ready = self.nonempty & allowed;
        if ready == 0 {
            return None;
        }
        let prio = 7 - ready.leading_zeros() as usize;
        let fifo = &mut self.fifos[prio];
        let pkt = fifo.pop_front(arena);
        if fifo.is_empty() {
            self.nonempty &= !(1 << prio);
        }
        pkt
    }

    /// Bytes-free view: whether FIFO `prio` holds a frame.
    #[inline]
    pub fn has(&self, prio: usize) -> bool {
        self.nonempty & (1 << prio) != 0
    }

    /// The frame `pop_highest` would return next, if any.
    #[inline]
    pub fn peek_highest(&self) -> Option<PktId> {
        if self.nonempty == 0 {
            return None;
        }
        self.fifos[7 - self.nonempty.leading_zeros() as usize].front()
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
    fn the_mask_and_the_first_seven_fifos_share_a_cache_line() {
        use std::mem::{align_of, offset_of, size_of};
        assert_eq!(align_of::<EgressQueues>(), 64);
        assert_eq!(offset_of!(EgressQueues, nonempty), 0);
        assert!(offset_of!(EgressQueues, fifos) + 7 * size_of::<PktList>() <= 64);
    }

    #[test]
    fn serves_strict_priority_then_fifo_order() {
        let mut arena = PacketArena::default();
        let ids: Vec<PktId> = (0..10).map(|seq| arena.alloc(Packet { seq, ..Packet::default() })).collect();
        let mut q = EgressQueues::default();
        for (prio, i) in [(0, 1), (3, 2), (0, 3), (7, 4), (3, 5)] {
            q.push(prio, ids[i], &mut arena);
        }
        assert_eq!(q.peek_highest(), Some(ids[4]));
        let order: Vec<u32> = std::iter::from_fn(|| q.pop_highest(&arena).map(|p| arena.get(p).seq)).collect();
        assert_eq!(order, vec![4, 2, 5, 1, 3]);
        assert!(q.is_empty());
        q.push(5, ids[9], &mut arena);
        assert_eq!(q.pop_highest(&arena), Some(ids[9]));
        assert_eq!(q.pop_highest(&arena), None);
    }

    #[test]
    fn the_newest_frame_leaves_from_the_back_and_the_rest_keep_their_order() {
        let mut arena = PacketArena::default();
        let ids: Vec<PktId> = (0..4).map(|seq| arena.alloc(Packet { seq, ..Packet::default() })).collect();
        let mut q = EgressQueues::default();
        for &id in &ids[..3] {
            q.push(2, id, &mut arena);
        }
        assert_eq!(q.len(2, &arena), 3);
        assert_eq!(q.pop_back(2, &mut arena), Some(ids[2]));
        q.push(2, ids[3], &mut arena);
        assert_eq!(q.pop_back(2, &mut arena), Some(ids[3]));
        assert_eq!(q.pop_back(2, &mut arena), Some(ids[1]));
        assert_eq!(q.len(2, &arena), 1);
        q.push(2, ids[2], &mut arena);
        let order: Vec<u32> = std::iter::from_fn(|| q.pop_highest(&arena).map(|p| arena.get(p).seq)).collect();
        assert_eq!(order, vec![0, 2]);
        assert_eq!(q.pop_back(2, &mut arena), None);
        assert!(q.is_empty() && q.len(2, &arena) == 0);
    }
}
