//! The pull pacer: one per receiving host, shared by every flow to it (htsim
//! `NdpPullPacer`, `ndp.cpp:1814-2069`, NDP paper §3.2). It releases at most one pull per
//! drain time, so the senders together send at the receiver's link rate.
//!
//! - Drain time: the wire time of `pull_spacing` bytes at the host's link rate, in
//!   picoseconds truncated (as htsim casts), divided by `pull_rate_modifier` and
//!   truncated again (`:1817`).
//! - An ACK or NACK carries the pull itself when no PULL is queued and a drain time has
//!   passed since the last pull (`sendPacket`, `:1870-1976`); otherwise it goes at once
//!   without it, and a PULL is queued for its flow (and the pacer's timer is armed if
//!   nothing was queued). The last pull time starts at 0, as in htsim.
//! - The timer releases one queued PULL and re-arms a drain time later while PULLs remain
//!   (`doNextEvent`, `:2007-2069`). htsim can briefly run two pacer events after a flush
//!   (notes §3.2, "minor wart"); pl2's single timer cannot.
//! - Which flow's PULL goes next: [`PullOrder`] (htsim's fair, FIFO and priority queues).

use super::config::PullOrder;
use crate::units::{BitsPerSec, Duration, SimTime};

/// How a flow with queued PULLs ranks.
#[derive(Copy, Clone, Debug)]
pub(super) struct Rank {
    /// Order of first arrival at the receiver.
    pub order: u64,
    pub prio: u8,
    /// Packets it still has to receive.
    pub remaining: u32,
    /// Queue stamp of its oldest queued PULL.
    pub head_stamp: u64,
}

pub(super) struct Pacer {
    pub drain: Duration,
    /// When the last pull left (htsim `_last_pull`).
    pub last_pull: SimTime,
    /// Receiver flows with PULLs queued.
    ready: Vec<u32>,
    /// Order of the flow served last (round robin resumes after it).
    cursor: u64,
    stamps: u64,
}

/// The pacer's drain time: `bytes` at `rate`, truncated to the picosecond, divided by
/// `modifier`, truncated.
pub(super) fn drain_time(rate: BitsPerSec, bytes: u64, modifier: f64) -> Duration {
    let base = (u128::from(bytes) * 8 * 1_000_000_000_000 / u128::from(rate.bps().max(1))) as u64;
    Duration((base as f64 / modifier) as u64)
}

impl Pacer {
    pub fn new(drain: Duration) -> Pacer {
        Pacer { drain, last_pull: SimTime::ZERO, ready: Vec::new(), cursor: 0, stamps: 0 }
    }

    /// No PULL is queued.
    pub fn idle(&self) -> bool {
        self.ready.is_empty()
    }

    /// An ACK or NACK sent now may carry the pull.
    pub fn may_pull_now(&self, now: SimTime) -> bool {
        self.idle() && now.0 - self.last_pull.0.min(now.0) >= self.drain.0
    }

    /// When the pacer's timer is due if the queue starts now.
    pub fn due(&self) -> SimTime {
        self.last_pull + self.drain
    }

    /// A stamp for a PULL being queued (FIFO order).
    pub fn stamp(&mut self) -> u64 {
        self.stamps += 1;
        self.stamps
    }

    /// `flow` has its first PULL queued.
    pub fn add(&mut self, flow: u32) {
        self.ready.push(flow);
    }

    /// `flow` has no PULL queued any more.
    pub fn remove(&mut self, flow: u32) {
        if let Some(k) = self.ready.iter().position(|&f| f == flow) {
            self.ready.swap_remove(k);
        }
    }

    /// The flow whose PULL goes next.
    pub fn pick(&mut self, order: PullOrder, rank: impl Fn(u32) -> Rank) -> Option<u32> {
        let ranks = self.ready.iter().map(|&f| (f, rank(f)));
        let chosen = match order {
            PullOrder::Fifo => ranks.min_by_key(|(_, r)| r.head_stamp),
            PullOrder::SmallestRemaining => ranks.min_by_key(|(_, r)| (r.remaining, r.order)),
            PullOrder::Fair | PullOrder::Priority => {
                let top = if order == PullOrder::Priority { self.ready.iter().map(|&f| rank(f).prio).max()? } else { 0 };
                let cursor = self.cursor;
                // Round robin in arrival order: the first flow after the one served last,
                // else the first (a persistent iterator over htsim's ordered map).
                ranks.filter(|(_, r)| order == PullOrder::Fair || r.prio == top).min_by_key(|(_, r)| (r.order <= cursor, r.order))
            }
        };
        let (f, r) = chosen?;
        self.cursor = r.order;
        Some(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drain_times_match_htsims_arithmetic() {
        let g10 = BitsPerSec::gbps(10);
        // 9064 B · 8 bit / 10 Gb/s = 72,512 bit / 10^10 bit/s = 7,251,200 ps: htsim's
        // data-frame drain at modifier 1.
        assert_eq!(drain_time(g10, 9064, 1.0), Duration(7_251_200));
        // With main_ndp's 0.99: 7,251,200 / 0.99 = 7,324,444.4 → 7,324,444 ps.
        assert_eq!(drain_time(g10, 9064, 0.99), Duration(7_324_444));
        // Data and a 64 B control frame: 9128 B · 800 ps/B = 7,302,400 ps.
        assert_eq!(drain_time(g10, 9064 + 64, 1.0), Duration(7_302_400));
        // 100 Gb/s: 725,120 / 0.99 = 732,444.4 → 732,444 ps (notes §3.2 table).
        assert_eq!(drain_time(BitsPerSec::gbps(100), 9064, 0.99), Duration(732_444));
    }

    fn rank(order: u64, prio: u8, remaining: u32, head_stamp: u64) -> Rank {
        Rank { order, prio, remaining, head_stamp }
    }

    #[test]
    fn service_orders() {
        // Flows 0, 1, 2 arrived in orders 10, 30, 20; priorities 1, 5, 5; remaining 9, 4, 7;
        // oldest PULLs stamped 3, 2, 1.
        let r = |f: u32| [rank(10, 1, 9, 3), rank(30, 5, 4, 2), rank(20, 5, 7, 1)][f as usize];
        let mut p = Pacer::new(Duration(1));
        for f in 0..3 {
            p.add(f);
        }
        // Fair: ascending arrival order, wrapping: 0 (10), 2 (20), 1 (30), 0 ...
        let fair: Vec<u32> = (0..4).map(|_| p.pick(PullOrder::Fair, r).unwrap()).collect();
        assert_eq!(fair, [0, 2, 1, 0]);
        // Priority 5 first, round robin within it: after order 10 comes 2 (20), then 1 (30).
        let prio: Vec<u32> = (0..3).map(|_| p.pick(PullOrder::Priority, r).unwrap()).collect();
        assert_eq!(prio, [2, 1, 2]);
        assert_eq!(p.pick(PullOrder::Fifo, r), Some(2));
        assert_eq!(p.pick(PullOrder::SmallestRemaining, r), Some(1));
        p.remove(1);
        assert_eq!(p.pick(PullOrder::SmallestRemaining, r), Some(2));
        p.remove(0);
        p.remove(2);
        assert!(p.idle() && p.pick(PullOrder::Fair, r).is_none());
    }
}
