//! The PL2 receiver: counts duplicate packets (an unsolicited copy and its resend both
//! arriving, §4.4: "the receiver has to deal with a small number of duplicate packets")
//! and, optionally, tracks pending bursts from GRT copies (§4.5) to release the
//! reservations of bursts that never arrive.
//!
//! Choices (ours; §4.5 sketches the idea only):
//! - A burst is expected `granted` packets per GRT copy seen (a retried RSV that reserved
//!   twice is expected twice, so the extra reservation is released too).
//! - Its deadline is the copy's arrival + `chosen · slot` + `deadline_slack_ps`: the data
//!   is due at the switch `chosen` slots after the RSV was processed, and the copy left
//!   the switch at that moment. The slack (default 100 µs, the sender's RSV timeout)
//!   must cover the sender's timing errors and queueing: a cancel sent before the data
//!   arrives makes the counters drift low.
//! - At the deadline the receiver sends CANCEL(src, dst, expected − distinct packets
//!   seen) if positive.
//! - Memory is bounded: the last `bursts_remembered` bursts are kept, oldest evicted.

use std::collections::{HashMap, VecDeque};

use serde::{Deserialize, Serialize};

use crate::error::ConfigError;
use crate::msg::{BurstId, Cancel, DataTag, Grt, HostId, TimerToken};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ReceiverConfig {
    pub host: HostId,
    /// Track pending bursts from GRT copies and cancel what does not arrive.
    pub track_pending: bool,
    pub slot_ps: u64,
    pub deadline_slack_ps: u64,
    pub bursts_remembered: usize,
}

impl Default for ReceiverConfig {
    fn default() -> Self {
        ReceiverConfig {
            host: 0,
            track_pending: false,
            slot_ps: 123_360,
            deadline_slack_ps: 100_000_000,
            bursts_remembered: 4096,
        }
    }
}

/// What the receiver asks its driver to do.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ReceiverAction {
    /// Send this CANCEL to the switch.
    SendCancel(Cancel),
    SetTimer {
        token: TimerToken,
        at_ps: u64,
    },
}

/// Whether a data packet was seen before.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Arrival {
    New,
    Duplicate,
}

#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReceiverStats {
    pub packets: u64,
    pub duplicates: u64,
    pub grt_copies: u64,
    pub cancels_sent: u64,
    pub cancelled_packets: u64,
}

#[derive(Copy, Clone, Debug, Default)]
struct Record {
    /// Bit i: packet i of the burst has arrived.
    seen: u64,
    expected: u64,
    deadline_ps: u64,
}

#[derive(Debug)]
pub struct Receiver {
    cfg: ReceiverConfig,
    records: HashMap<(HostId, BurstId), Record>,
    order: VecDeque<(HostId, BurstId)>,
    stats: ReceiverStats,
}

impl Receiver {
    pub fn new(cfg: ReceiverConfig) -> Result<Receiver, ConfigError> {
        if cfg.slot_ps == 0 || cfg.bursts_remembered == 0 {
            return Err(ConfigError::Invalid(
                "receiver needs slot_ps and bursts_remembered > 0",
            ));
        }
        Ok(Receiver {
            cfg,
            records: HashMap::new(),
            order: VecDeque::new(),
            stats: ReceiverStats::default(),
        })
    }

    pub fn stats(&self) -> &ReceiverStats {
        &self.stats
    }

    /// A PL2 data packet arrives. Bursts are remembered if they may see duplicates
    /// (unsolicited or resent packets) or are tracked from a GRT copy. Packets at index
    /// 64 or beyond (K > 64) are not deduplicated.
    pub fn on_data(&mut self, _now_ps: u64, tag: &DataTag) -> Arrival {
        self.stats.packets += 1;
        let key = (tag.src, tag.burst);
        let track = tag.unsolicited || tag.resent || self.records.contains_key(&key);
        if !track || tag.index_in_burst >= 64 {
            return Arrival::New;
        }
        let bit = 1u64 << tag.index_in_burst;
        let rec = self.record(key);
        if rec.seen & bit != 0 {
            self.stats.duplicates += 1;
            return Arrival::Duplicate;
        }
        rec.seen |= bit;
        Arrival::New
    }

    /// A copy of a GRT for a burst to this host (§4.5).
    pub fn on_grt_copy(&mut self, now_ps: u64, grt: &Grt, out: &mut Vec<ReceiverAction>) {
        if !self.cfg.track_pending || grt.dst != self.cfg.host || grt.granted_packets == 0 {
            return;
        }
        self.stats.grt_copies += 1;
        let deadline = now_ps
            + grt.chosen_slots().saturating_mul(self.cfg.slot_ps)
            + self.cfg.deadline_slack_ps;
        let rec = self.record((grt.src, grt.burst));
        rec.expected += u64::from(grt.granted_packets);
        rec.deadline_ps = rec.deadline_ps.max(deadline);
        let token = TimerToken((u64::from(grt.src) << 32) | u64::from(grt.burst.0));
        out.push(ReceiverAction::SetTimer {
            token,
            at_ps: deadline,
        });
    }

    /// A timer set by [`ReceiverAction::SetTimer`] fires.
    pub fn on_timer(&mut self, now_ps: u64, token: TimerToken, out: &mut Vec<ReceiverAction>) {
        let key = ((token.0 >> 32) as HostId, BurstId(token.0 as u32));
        let Some(rec) = self.records.get_mut(&key) else {
            return;
        };
        if now_ps < rec.deadline_ps {
            return; // a later copy moved the deadline; its own timer will come
        }
        let arrived = u64::from(rec.seen.count_ones());
        if rec.expected > arrived {
            let packets = (rec.expected - arrived) as u32;
            rec.expected = arrived;
            self.stats.cancels_sent += 1;
            self.stats.cancelled_packets += u64::from(packets);
            out.push(ReceiverAction::SendCancel(Cancel {
                src: key.0,
                dst: self.cfg.host,
                packets,
            }));
        }
    }

    fn record(&mut self, key: (HostId, BurstId)) -> &mut Record {
        if !self.records.contains_key(&key) {
            self.order.push_back(key);
            if self.order.len() > self.cfg.bursts_remembered {
                if let Some(old) = self.order.pop_front() {
                    self.records.remove(&old);
                }
            }
        }
        self.records.entry(key).or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tag(burst: u32, i: u32, unsolicited: bool, resent: bool) -> DataTag {
        DataTag {
            src: 1,
            dst: 0,
            burst: BurstId(burst),
            index_in_burst: i,
            unsolicited,
            resent,
        }
    }

    fn grt_copy(burst: u32, granted: u32, chosen: u32) -> Grt {
        Grt {
            src: 1,
            dst: 0,
            burst: BurstId(burst),
            attempt: 0,
            send_timeslot_slots: 0,
            recv_timeslot_slots: chosen,
            granted_packets: granted,
            unsolicited_admitted: false,
        }
    }

    #[test]
    fn counts_an_unsolicited_copy_and_its_resend_once_each() {
        let mut r = Receiver::new(ReceiverConfig::default()).unwrap();
        for i in 0..4 {
            assert_eq!(r.on_data(0, &tag(3, i, true, false)), Arrival::New);
        }
        for i in 0..4 {
            assert_eq!(r.on_data(0, &tag(3, i, false, true)), Arrival::Duplicate);
        }
        // A resend whose unsolicited copy was dropped is new.
        assert_eq!(r.on_data(0, &tag(4, 0, false, true)), Arrival::New);
        assert_eq!(r.stats().duplicates, 4);
        assert_eq!(r.stats().packets, 9);
    }

    #[test]
    fn cancels_what_did_not_arrive_by_the_deadline() {
        let cfg = ReceiverConfig {
            track_pending: true,
            deadline_slack_ps: 1_000,
            slot_ps: 100,
            ..Default::default()
        };
        let mut r = Receiver::new(cfg).unwrap();
        let mut out = Vec::new();
        r.on_grt_copy(10, &grt_copy(5, 4, 7), &mut out);
        let (token, at) = match out[0] {
            ReceiverAction::SetTimer { token, at_ps } => (token, at_ps),
            other => panic!("{other:?}"),
        };
        assert_eq!(at, 10 + 700 + 1_000);
        r.on_data(20, &tag(5, 0, false, false));
        r.on_data(20, &tag(5, 1, false, false));
        out.clear();
        r.on_timer(at - 1, token, &mut out);
        assert!(out.is_empty(), "not yet due");
        r.on_timer(at, token, &mut out);
        assert_eq!(
            out,
            vec![ReceiverAction::SendCancel(Cancel {
                src: 1,
                dst: 0,
                packets: 2
            })]
        );
        // Firing again cancels nothing more.
        out.clear();
        r.on_timer(at + 5, token, &mut out);
        assert!(out.is_empty());
    }

    #[test]
    fn a_complete_burst_is_not_cancelled_and_a_double_grant_is() {
        let cfg = ReceiverConfig {
            track_pending: true,
            ..Default::default()
        };
        let mut r = Receiver::new(cfg).unwrap();
        let mut out = Vec::new();
        r.on_grt_copy(0, &grt_copy(1, 2, 0), &mut out);
        r.on_grt_copy(0, &grt_copy(2, 2, 0), &mut out);
        r.on_grt_copy(0, &grt_copy(2, 2, 0), &mut out); // a retried RSV reserved twice
        for b in [1, 2] {
            for i in 0..2 {
                r.on_data(0, &tag(b, i, false, false));
            }
        }
        let timers: Vec<_> = out
            .iter()
            .map(|a| match *a {
                ReceiverAction::SetTimer { token, at_ps } => (token, at_ps),
                other => panic!("{other:?}"),
            })
            .collect();
        out.clear();
        for (token, at) in timers {
            r.on_timer(at, token, &mut out);
        }
        assert_eq!(
            out,
            vec![ReceiverAction::SendCancel(Cancel {
                src: 1,
                dst: 0,
                packets: 2
            })]
        );
    }

    #[test]
    fn ignores_copies_when_not_tracking() {
        let mut r = Receiver::new(ReceiverConfig::default()).unwrap();
        let mut out = Vec::new();
        r.on_grt_copy(0, &grt_copy(1, 2, 0), &mut out);
        assert!(out.is_empty());
    }
}
