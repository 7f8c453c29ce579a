//! The event queue: events ordered by (time, insertion sequence), so that simultaneous
//! events run in the order they were scheduled and every run is deterministic.
//!
//! Components keep their own FIFOs (a link's packets in flight, a host's delay line) and
//! put only their head in this queue, so it holds O(ports + hosts + timers) entries, not
//! O(packets). Entries are single 16-byte integers in a timing wheel of the next few
//! microseconds backed by a monotone radix heap for later ones ([`crate::timing_wheel`],
//! [`crate::radix_heap`]): the simulation never schedules into the past.

use crate::timing_wheel::TimingWheel;
use crate::units::SimTime;

/// What happens when an event fires. Indices refer to the simulation's tables (at most
/// 2²⁸ of each).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Ev {
    /// The port finished serialising its current frame.
    PortFree(u32),
    /// The head of the port's link reached the far node.
    LinkHead(u32),
    /// The head of the host's send path reached its NIC queues.
    HostTx(u32),
    /// A transport timer (global timer index).
    Timer(u32),
    /// The next arrival of workload source `i`.
    Arrival(u32),
    /// The first message of persistent stream `i`.
    Stream(u32),
    /// Scheduled fault or schedule change `i`.
    Fault(u32),
    /// Periodic sampling tick.
    Sample,
    /// Application event `i` (a service or think time ended, an iteration starts...).
    App(u32),
    /// A pause a port received may have expired: serve it again if so.
    PauseEnd(u32),
    /// Time to refresh the PAUSE frames a switch port sends upstream.
    PauseRefresh(u32),
    /// The last bit of the oldest PAUSE frame on the port's link reached the far MAC.
    PauseArrive(u32),
    /// The oldest lossless frame on the link to the host reached its MAC (`host.pfc`).
    HostRxArrive(u32),
    /// A circuit schedule's day starts or ends (`sim/hybrid.rs`).
    Circuit(u32),
}

/// An event's code: its tag (the variant's position in [`Ev`], so that decoding is the
/// identity and the loop's dispatch one jump) over a 28-bit index.
const INDEX_BITS: u32 = 28;
const INDEX_MASK: u32 = (1 << INDEX_BITS) - 1;

impl Ev {
    #[inline]
    fn encode(self) -> u32 {
        let (tag, i) = match self {
            Ev::PortFree(i) => (0, i),
            Ev::LinkHead(i) => (1, i),
            Ev::HostTx(i) => (2, i),
            Ev::Timer(i) => (3, i),
            Ev::Arrival(i) => (4, i),
            Ev::Stream(i) => (5, i),
            Ev::Fault(i) => (6, i),
            Ev::Sample => (7, 0),
            Ev::App(i) => (8, i),
            Ev::PauseEnd(i) => (9, i),
            Ev::PauseRefresh(i) => (10, i),
            Ev::PauseArrive(i) => (11, i),
            Ev::HostRxArrive(i) => (12, i),
            Ev::Circuit(i) => (13, i),
        };
        debug_assert!(i <= INDEX_MASK, "event index {i} exceeds 2^28");
        tag << INDEX_BITS | (i & INDEX_MASK)
    }
    #[inline(always)]
    fn decode(code: u32) -> Ev {
        let i = code & INDEX_MASK;
        match code >> INDEX_BITS {
            0 => Ev::PortFree(i),
            1 => Ev::LinkHead(i),
            2 => Ev::HostTx(i),
            3 => Ev::Timer(i),
            4 => Ev::Arrival(i),
            5 => Ev::Stream(i),
            6 => Ev::Fault(i),
            8 => Ev::App(i),
            9 => Ev::PauseEnd(i),
            10 => Ev::PauseRefresh(i),
            11 => Ev::PauseArrive(i),
            12 => Ev::HostRxArrive(i),
            13 => Ev::Circuit(i),
            _ => Ev::Sample,
        }
    }
}

/// Time-then-insertion ordered event queue. An entry is one `u128`: time in the high
/// 64 bits, then the insertion sequence (32 bits) and the event code (32 bits), so one
/// branch-free integer comparison orders by time and then by insertion.
#[derive(Default)]
pub struct EventQueue {
    heap: TimingWheel,
    seq: u32,
    popped: u64,
    /// The entry popped last, for [`EventQueue::unpop`].
    last: u128,
    /// Debug builds check that `unpop` comes right after a `pop`.
    #[cfg(debug_assertions)]
    last_valid: bool,
}

impl EventQueue {
    /// Inlined: a call's register saves cost a third of a push (callgrind, A).
    #[inline(always)]
    pub fn push(&mut self, time: SimTime, ev: Ev) {
        if self.seq == u32::MAX {
            self.renumber();
        }
        self.seq += 1;
        #[cfg(debug_assertions)]
        {
            self.last_valid = false;
        }
        self.heap.push((time.0 as u128) << 64 | (self.seq as u128) << 32 | ev.encode() as u128);
    }

    pub fn pop(&mut self) -> Option<(SimTime, Ev)> {
        let k = self.heap.pop()?;
        self.popped += 1;
        self.last = k;
        #[cfg(debug_assertions)]
        {
            self.last_valid = true;
        }
        Some((SimTime((k >> 64) as u64), Ev::decode(k as u32)))
    }

    /// Puts back the event just popped, with its place in the order: the run loop pops
    /// before it knows whether the event is past its end. Only valid right after `pop`.
    pub fn unpop(&mut self) {
        #[cfg(debug_assertions)]
        {
            assert!(self.last_valid, "unpop right after a pop");
            self.last_valid = false;
        }
        let k = self.last;
        self.popped -= 1;
        self.heap.push_front(k);
    }

    /// The event that would be popped next, without popping it.
    #[inline]
    pub fn peek_event(&self) -> Option<Ev> {
        self.heap.peek().map(|k| Ev::decode(k as u32))
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

    /// Sequence numbers ran out (2³² insertions): renumber the queued entries in their
    /// current order, keeping the order exactly.
    fn renumber(&mut self) {
        let mut all = self.heap.drain();
        all.sort_unstable();
        for (i, k) in all.iter_mut().enumerate() {
            let time = *k >> 64;
            let code = *k & 0xffff_ffff;
            *k = time << 64 | ((i as u128 + 1) << 32) | code;
        }
        self.seq = all.len() as u32;
        for k in all {
            self.heap.push(k);
        }
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
    fn every_event_survives_its_code() {
        let max = INDEX_MASK;
        let all = [
            Ev::PortFree(max),
            Ev::LinkHead(0),
            Ev::HostTx(7),
            Ev::Timer(max),
            Ev::Arrival(1),
            Ev::Stream(2),
            Ev::Fault(3),
            Ev::Sample,
            Ev::App(4),
            Ev::PauseEnd(5),
            Ev::PauseRefresh(6),
            Ev::PauseArrive(8),
            Ev::HostRxArrive(9),
            Ev::Circuit(10),
        ];
        for (tag, ev) in all.into_iter().enumerate() {
            assert_eq!(ev.encode() >> INDEX_BITS, tag as u32, "{ev:?}: its tag is its position in Ev");
            assert_eq!(Ev::decode(ev.encode()), ev);
        }
    }

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
    fn matches_a_sorted_reference_on_random_pushes_and_pops() {
        let mut rng = crate::rng::SimRng::stream(5, "heap");
        let mut q = EventQueue::default();
        let mut reference: Vec<(u64, u64, Ev)> = Vec::new();
        let mut seq = 0;
        let mut now = 0;
        for _ in 0..20_000 {
            if rng.below(3) < 2 {
                // Never before the last popped time, as in a simulation.
                let t = now + rng.below(500);
                let ev = Ev::LinkHead(rng.below(1 << 20) as u32);
                seq += 1;
                q.push(SimTime(t), ev);
                reference.push((t, seq, ev));
            } else {
                reference.sort_by_key(|r| (r.0, r.1));
                let want = (!reference.is_empty()).then(|| reference.remove(0));
                let got = q.pop();
                assert_eq!(got, want.map(|(t, _, e)| (SimTime(t), e)));
                if let Some((t, _)) = got {
                    now = t.0;
                }
            }
        }
    }

    #[test]
    fn renumbering_keeps_the_order() {
        let mut q = EventQueue::default();
        q.seq = u32::MAX - 2;
        for i in 0..6 {
            q.push(SimTime(7), Ev::HostTx(i));
        }
        let order: Vec<Ev> = std::iter::from_fn(|| q.pop().map(|e| e.1)).collect();
        assert_eq!(order, (0..6).map(Ev::HostTx).collect::<Vec<_>>());
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
