//! The event queue: events ordered by (time, insertion sequence), so that simultaneous
//! events run in the order they were scheduled and every run is deterministic.
//!
//! Components keep their own FIFOs (a link's packets in flight, a host's delay line) and
//! put only their head in this queue, so it holds O(ports + hosts + timers) entries, not
//! O(packets). Entries are plain 24-byte records in a binary heap.

use crate::units::SimTime;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// What happens when an event fires. Indices refer to the simulation's tables.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Ev {
    /// The port finished serialising its current frame.
    PortFree(u32),
    /// The head of the port's link reached the far node.
    LinkHead(u32),
    /// The head of the host's send path reached its NIC queues.
    HostTx(u32),
    /// A transport timer (host, timer id).
    Timer(u32, u32),
    /// The next arrival of workload source `i`.
    Arrival(u32),
    /// The first message of persistent stream `i`.
    Stream(u32),
    /// Scheduled fault or schedule change `i`.
    Fault(u32),
    /// Periodic sampling tick.
    Sample,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct Entry {
    time: SimTime,
    seq: u64,
    ev: Ev,
}

impl Ord for Entry {
    fn cmp(&self, o: &Self) -> Ordering {
        // Reversed: BinaryHeap is a max-heap and we want the earliest first.
        o.time.cmp(&self.time).then(o.seq.cmp(&self.seq))
    }
}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

/// Time-then-insertion ordered event queue.
#[derive(Default)]
pub struct EventQueue {
    heap: BinaryHeap<Entry>,
    seq: u64,
    popped: u64,
}

impl EventQueue {
    pub fn push(&mut self, time: SimTime, ev: Ev) {
        self.seq += 1;
        self.heap.push(Entry { time, seq: self.seq, ev });
    }
    pub fn pop(&mut self) -> Option<(SimTime, Ev)> {
        let e = self.heap.pop()?;
        self.popped += 1;
        Some((e.time, e.ev))
    }
    pub fn peek_time(&self) -> Option<SimTime> {
        self.heap.peek().map(|e| e.time)
    }
    /// Events executed so far.
    pub fn executed(&self) -> u64 {
        self.popped
    }
    pub fn len(&self) -> usize {
        self.heap.len()
    }
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

/// One re-armable timer. Re-arming later than the queued entry changes only the deadline
/// (the queued entry, when it fires, re-queues itself at the new deadline); re-arming
/// earlier pushes a new entry and the old one is recognised as stale. So a timer re-armed
/// on every ACK pushes a queue entry only when its deadline moves earlier.
#[derive(Copy, Clone, Debug, Default)]
pub struct TimerSlot {
    deadline: Option<SimTime>,
    queued: Option<SimTime>,
}

/// What a popped timer entry means.
#[derive(Debug, PartialEq, Eq)]
pub enum TimerFire {
    /// Deliver the timer now.
    Fire,
    /// Not yet due: re-queue at this time.
    Requeue(SimTime),
    /// Cancelled or superseded: ignore.
    Stale,
}

impl TimerSlot {
    /// Arms the timer for `at`; returns the time to push an entry at, if one is needed.
    pub fn arm(&mut self, at: SimTime) -> Option<SimTime> {
        self.deadline = Some(at);
        match self.queued {
            Some(q) if q <= at => None,
            _ => {
                self.queued = Some(at);
                Some(at)
            }
        }
    }
    pub fn cancel(&mut self) {
        self.deadline = None;
    }
    pub fn is_armed(&self) -> bool {
        self.deadline.is_some()
    }
    /// Interprets an entry for this timer popped at `now`.
    pub fn on_pop(&mut self, now: SimTime) -> TimerFire {
        if self.queued != Some(now) {
            return TimerFire::Stale;
        }
        self.queued = None;
        match self.deadline {
            None => TimerFire::Stale,
            Some(d) if d > now => {
                self.queued = Some(d);
                TimerFire::Requeue(d)
            }
            Some(_) => {
                self.deadline = None;
                TimerFire::Fire
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_break_by_insertion_order() {
        let mut q = EventQueue::default();
        q.push(SimTime(5), Ev::Sample);
        q.push(SimTime(3), Ev::PortFree(1));
        q.push(SimTime(5), Ev::PortFree(2));
        q.push(SimTime(3), Ev::PortFree(3));
        let order: Vec<Ev> = std::iter::from_fn(|| q.pop().map(|e| e.1)).collect();
        assert_eq!(order, vec![Ev::PortFree(1), Ev::PortFree(3), Ev::Sample, Ev::PortFree(2)]);
    }

    #[test]
    fn rearming_later_pushes_nothing_and_fires_at_the_new_deadline() {
        let mut t = TimerSlot::default();
        assert_eq!(t.arm(SimTime(10)), Some(SimTime(10)));
        assert_eq!(t.arm(SimTime(20)), None);
        assert_eq!(t.arm(SimTime(30)), None);
        assert_eq!(t.on_pop(SimTime(10)), TimerFire::Requeue(SimTime(30)));
        assert_eq!(t.on_pop(SimTime(30)), TimerFire::Fire);
    }

    #[test]
    fn rearming_earlier_makes_the_old_entry_stale() {
        let mut t = TimerSlot::default();
        t.arm(SimTime(50));
        assert_eq!(t.arm(SimTime(20)), Some(SimTime(20)));
        assert_eq!(t.on_pop(SimTime(20)), TimerFire::Fire);
        assert_eq!(t.on_pop(SimTime(50)), TimerFire::Stale);
    }

    #[test]
    fn cancelled_timer_never_fires() {
        let mut t = TimerSlot::default();
        t.arm(SimTime(10));
        t.cancel();
        assert_eq!(t.on_pop(SimTime(10)), TimerFire::Stale);
    }
}
