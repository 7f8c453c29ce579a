//! A NIC's transmit queues: 8 strict-priority classes, each holding one FIFO per
//! application thread, with round-robin or burst-contiguous arbitration between threads.

use crate::config::Arbitration;
use crate::packet::PktId;
use std::collections::VecDeque;

#[derive(Default)]
struct Class {
    per_thread: Vec<VecDeque<(PktId, bool)>>,
    /// Threads with frames queued, in service order.
    active: VecDeque<u16>,
    /// Thread whose burst is being sent (burst-contiguous arbitration).
    locked: Option<u16>,
    frames: u32,
}

/// Transmit queues of one NIC.
pub struct NicQueues {
    classes: [Class; 8],
    /// Bit p set ⇔ class p holds frames, so a pop finds its class without probing eight.
    nonempty: u8,
    arbitration: Arbitration,
    pub frames: u32,
}

impl NicQueues {
    pub fn new(threads: u16, arbitration: Arbitration) -> NicQueues {
        let mut classes: [Class; 8] = Default::default();
        for c in &mut classes {
            c.per_thread = (0..threads).map(|_| VecDeque::new()).collect();
        }
        NicQueues { classes, nonempty: 0, arbitration, frames: 0 }
    }

    /// Queues a frame of `thread` at priority `prio`; `burst_end` marks the last frame
    /// of a hand-over unit.
    pub fn push(&mut self, pkt: PktId, prio: u8, thread: u16, burst_end: bool) {
        let c = &mut self.classes[prio as usize & 7];
        let q = &mut c.per_thread[thread as usize];
        if q.is_empty() && c.locked != Some(thread) {
            c.active.push_back(thread);
        }
        q.push_back((pkt, burst_end));
        c.frames += 1;
        self.frames += 1;
        self.nonempty |= 1 << (prio & 7);
    }

    /// Takes the next frame to serialise: the highest non-empty class, then the thread
    /// the arbitration picks. Returns the frame and the thread it belongs to.
    pub fn pop(&mut self) -> Option<(PktId, u16)> {
        self.pop_among(0xff)
    }

    /// As [`NicQueues::pop`], from the classes whose bit is set in `allowed` only (PFC:
    /// a paused class keeps its frames).
    pub fn pop_among(&mut self, allowed: u8) -> Option<(PktId, u16)> {
        let arb = self.arbitration;
        let ready = self.nonempty & allowed;
        if ready == 0 {
            return None;
        }
        let prio = 7 - ready.leading_zeros() as usize;
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
        let (pkt, burst_end) = q.pop_front().expect("active thread has frames");
        c.frames -= 1;
        self.frames -= 1;
        if c.frames == 0 {
            self.nonempty &= !(1 << prio);
        }
        let hold = arb == Arbitration::Burst && !burst_end;
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
        Some((pkt, thread))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(n: &mut NicQueues) -> Vec<u32> {
        std::iter::from_fn(|| n.pop().map(|p| p.0 .0)).collect()
    }

    #[test]
    fn round_robin_interleaves_threads_and_priority_wins() {
        let mut n = NicQueues::new(2, Arbitration::RoundRobin);
        for i in 0..3 {
            n.push(PktId(i), 0, 0, false);
            n.push(PktId(10 + i), 0, 1, false);
        }
        n.push(PktId(99), 7, 1, true);
        assert_eq!(drain(&mut n), vec![99, 0, 10, 1, 11, 2, 12]);
    }

    #[test]
    fn bursts_go_out_back_to_back() {
        let mut n = NicQueues::new(2, Arbitration::Burst);
        n.push(PktId(0), 0, 0, false);
        n.push(PktId(1), 0, 0, true);
        n.push(PktId(10), 0, 1, false);
        n.push(PktId(11), 0, 1, true);
        n.push(PktId(2), 0, 0, true);
        assert_eq!(drain(&mut n), vec![0, 1, 10, 11, 2]);
    }
}
