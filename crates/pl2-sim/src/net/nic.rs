//! A NIC's transmit queues: 8 strict-priority classes, each holding one FIFO per
//! application thread, with round-robin or burst-contiguous arbitration between threads.
//! The FIFOs are lists threaded through the frames' records ([`PktList`]), as a switch's
//! egress queues are: a frame's `BURST_END` flag says where its hand-over unit ends.

use crate::config::Arbitration;
use crate::packet::{flags, PacketArena, PktId, PktList};
use std::collections::VecDeque;

#[derive(Default)]
struct Class {
    /// One FIFO per thread (a boxed slice: the count is fixed, and eight bytes fewer
    /// than a vector let the first class share a cache line with the mask).
    per_thread: Box<[PktList]>,
    /// Threads with frames queued, in service order (kept only with more than one
    /// thread: a lone thread is always the one served).
    active: VecDeque<u16>,
    /// Thread whose burst is being sent (burst-contiguous arbitration).
    locked: Option<u16>,
    frames: u32,
}

/// Transmit queues of one NIC.
///
/// Laid out (C order, one cache line aligned) so that the mask, the frame count and
/// priority 0's class share the first line: a frame's enqueue and dequeue at the default
/// priority touch that line (and its thread's FIFO), not two.
#[repr(C, align(64))]
pub struct NicQueues {
    /// Bit p set ⇔ class p holds frames, so a pop finds its class without probing eight.
    nonempty: u8,
    arbitration: Arbitration,
    pub frames: u32,
    classes: [Class; 8],
}

impl NicQueues {
    pub fn new(threads: u16, arbitration: Arbitration) -> NicQueues {
        let mut classes: [Class; 8] = Default::default();
        for c in &mut classes {
            c.per_thread = vec![PktList::default(); threads as usize].into_boxed_slice();
        }
        NicQueues { classes, nonempty: 0, arbitration, frames: 0 }
    }

    /// Queues frame `pkt` of `thread` at priority `prio` (the last frame of a hand-over
    /// unit carries `BURST_END`).
    #[inline(always)]
    pub fn push(&mut self, pkt: PktId, prio: u8, thread: u16, arena: &mut PacketArena) {
        let c = &mut self.classes[prio as usize & 7];
        let several = c.per_thread.len() > 1;
        let q = &mut c.per_thread[thread as usize];
        if several && q.is_empty() && c.locked != Some(thread) {
            c.active.push_back(thread);
        }
        q.push_back(pkt, arena);
        c.frames += 1;
        self.frames += 1;
        self.nonempty |= 1 << (prio & 7);
    }

    /// Takes the next frame to serialise: the highest non-empty class, then the thread
    /// the arbitration picks. Returns the frame and the thread it belongs to.
    pub fn pop(&mut self, arena: &PacketArena) -> Option<(PktId, u16)> {
        self.pop_among(0xff, arena)
    }

    /// As [`NicQueues::pop`], from the classes whose bit is set in `allowed` only (PFC:
    /// a paused class keeps its frames).
    #[inline]
    pub fn pop_among(&mut self, allowed: u8, arena: &PacketArena) -> Option<(PktId, u16)> {
        let ready = self.nonempty & allowed;
        if ready == 0 {
            return None;
        }
        let prio = 7 - ready.leading_zeros() as usize;
        let c = &mut self.classes[prio];
        if c.per_thread.len() > 1 {
            return self.pop_arbitrated(prio, arena);
        }
        // One thread: whatever the arbitration, its FIFO is the class's (the class holds
        // frames, so it has one).
        let pkt = c.per_thread[0].pop_front(arena).expect("a ready class has frames");
        self.took(prio);
        Some((pkt, 0))
    }

    /// Counts a frame taken from class `prio`.
    #[inline(always)]
    fn took(&mut self, prio: usize) {
        let c = &mut self.classes[prio];
        c.frames -= 1;
        self.frames -= 1;
        if c.frames == 0 {
            self.nonempty &= !(1 << prio);
        }
    }

    /// [`NicQueues::pop_among`] from ready class `prio` with several threads: the
    /// arbitration picks one.
    #[inline(never)]
    fn pop_arbitrated(&mut self, prio: usize, arena: &PacketArena) -> Option<(PktId, u16)> {
        let arb = self.arbitration;
        let c = &mut self.classes[prio];
        let thread = match c.locked {
            Some(t) if !c.per_thread[t as usize].is_empty() => t,
            _ => {
                if let Some(t) = c.locked.take() {
                    // The locked thread's burst is not all here yet: let others go and
                    // requeue it behind them.
                    c.active.push_back(t);
                }
                c.active.pop_front()?
            }
        };
        let q = &mut c.per_thread[thread as usize];
        let pkt = q.pop_front(arena).expect("active thread has frames");
        let hold = arb == Arbitration::Burst && !arena.get(pkt).has(flags::BURST_END);
        if hold {
            c.locked = Some(thread);
        } else {
            if c.locked == Some(thread) {
                c.locked = None;
            }
            if !q.is_empty() {
                c.active.push_back(thread);
            }
        }
        self.took(prio);
        Some((pkt, thread))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Packet;

    #[test]
    fn the_mask_count_and_first_class_share_a_cache_line() {
        use std::mem::{align_of, offset_of, size_of};
        assert_eq!(align_of::<NicQueues>(), 64);
        assert!(offset_of!(NicQueues, nonempty) < 64 && offset_of!(NicQueues, frames) + 4 <= 64);
        assert!(offset_of!(NicQueues, classes) + size_of::<Class>() <= 64);
    }

    /// A NIC and an arena holding frames 0.. with the given `BURST_END` flags.
    fn frames(ends: &[bool]) -> PacketArena {
        let mut arena = PacketArena::default();
        for &end in ends {
            arena.alloc(Packet { flags: if end { flags::BURST_END } else { 0 }, ..Default::default() });
        }
        arena
    }

    fn drain(n: &mut NicQueues, arena: &PacketArena) -> Vec<u32> {
        std::iter::from_fn(|| n.pop(arena).map(|p| p.0 .0)).collect()
    }

    #[test]
    fn round_robin_interleaves_threads_and_priority_wins() {
        let mut arena = frames(&[false; 7]);
        let mut n = NicQueues::new(2, Arbitration::RoundRobin);
        for i in 0..3 {
            n.push(PktId(i), 0, 0, &mut arena);
            n.push(PktId(3 + i), 0, 1, &mut arena);
        }
        n.push(PktId(6), 7, 1, &mut arena);
        assert_eq!(drain(&mut n, &arena), vec![6, 0, 3, 1, 4, 2, 5]);
    }

    #[test]
    fn bursts_go_out_back_to_back() {
        let mut arena = frames(&[false, true, false, true, true]);
        let mut n = NicQueues::new(2, Arbitration::Burst);
        n.push(PktId(0), 0, 0, &mut arena);
        n.push(PktId(1), 0, 0, &mut arena);
        n.push(PktId(2), 0, 1, &mut arena);
        n.push(PktId(3), 0, 1, &mut arena);
        n.push(PktId(4), 0, 0, &mut arena);
        assert_eq!(drain(&mut n, &arena), vec![0, 1, 2, 3, 4]);
    }

    /// One thread (served without the arbitration's bookkeeping): each class is a FIFO,
    /// the highest class first, pauses (`pop_among`) skip a class, and frames pushed
    /// between pops join the order they would under either arbitration; the counts and
    /// the mask follow.
    #[test]
    fn a_lone_thread_is_served_in_fifo_order_by_class() {
        for arb in [Arbitration::RoundRobin, Arbitration::Burst] {
            let mut arena = frames(&[false, true, false, false, true, false]);
            let mut n = NicQueues::new(1, arb);
            n.push(PktId(0), 0, 0, &mut arena);
            n.push(PktId(1), 3, 0, &mut arena);
            n.push(PktId(2), 0, 0, &mut arena);
            n.push(PktId(3), 3, 0, &mut arena);
            assert_eq!(n.pop_among(!(1 << 3), &arena), Some((PktId(0), 0)), "{arb:?}: class 3 paused");
            assert_eq!(n.pop(&arena), Some((PktId(1), 0)));
            n.push(PktId(4), 0, 0, &mut arena);
            n.push(PktId(5), 3, 0, &mut arena);
            assert_eq!(drain(&mut n, &arena), vec![3, 5, 2, 4], "{arb:?}");
            assert_eq!((n.frames, n.nonempty), (0, 0));
            assert_eq!(n.pop(&arena), None);
        }
    }
}
