//! Configuration of the switch scheduler. Defaults are the paper's prototype: Algorithm 1
//! with decrements at ingress, K = 4, T = 128, no priorities, no GRT copies, no
//! inter-rack share, 123.36 ns slots.

use serde::{Deserialize, Serialize};

use crate::error::ConfigError;

/// How reservations are kept.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SwitchMode {
    /// Algorithm 1: per-port relative backlogs (packets granted, not yet arrived), one
    /// counter per direction, `sendTimeslot`/`recvTimeslot` read separately (§4.2).
    #[default]
    Faithful,
    /// What §4.2 says hardware cannot do: absolute next-free slots on the switch clock
    /// and one chosen slot for both ports, `chosen = max(now_slot + L, next_in[src],
    /// next_out[dst])`, then both next-free slots become `chosen + demand`; no decrements.
    /// The GRT carries `chosen - now_slot` in both slot fields.
    Ideal {
        /// L: the minimum lead from processing an RSV to its data reaching the switch, in
        /// whole slots (see [`crate::timeslot::lead_slots`]).
        lead_slots: u64,
    },
}

/// Where a PL2-scheduled data packet releases its reservation.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DecrementPoint {
    /// When it enters the switch (Algorithm 1 lines 13-15). Default.
    #[default]
    Ingress,
    /// When it leaves its output queue (ablation): the driver calls
    /// [`crate::switch::Scheduler::on_data_dequeued`].
    Dequeue,
}

/// The talk's low-latency priority scheme: thresholds on `max(in[src], out[dst])`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PriorityThresholds {
    /// Low priority gets one slot at or above this backlog (talk: 64).
    pub t1_slots: u64,
    /// Low priority is rejected at or above this backlog (talk: 128).
    pub t2_slots: u64,
}

impl Default for PriorityThresholds {
    fn default() -> Self {
        PriorityThresholds {
            t1_slots: 64,
            t2_slots: 128,
        }
    }
}

/// Everything the scheduler is parameterised by.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SchedulerConfig {
    pub mode: SwitchMode,
    pub decrement_at: DecrementPoint,
    /// K: the most packets one RSV may reserve (§4.3); larger demands are capped.
    pub k_max_packets: u32,
    /// T (§4.4): an unsolicited packet is dropped when `max(in[src], out[dst]) > T`.
    pub t_unsolicited_slots: u64,
    /// The senders' t (§4.4), used only to count `unsolicited_unrecovered` (a dropped
    /// unsolicited burst whose GRT said `chosen <= t`, so it is never resent).
    pub t_sender_slots: u64,
    /// The improved variant (off by default): admission of an unsolicited burst is
    /// decided when its RSV is processed and carried in the GRT, and a burst's arrivals
    /// beyond its reservation do not decrement the counters.
    pub improved: bool,
    /// Drift fix (off by default; issue 24's hypothesis (c) for the paper's zero loss): a
    /// burst's arrivals beyond what was reserved for it (the resent copy of an
    /// unsolicited burst whose original already passed) do not decrement the counters.
    /// Uses the per-burst ledger (a register table indexed by (source, burst): one
    /// read-modify-write of its arrival count, then the counters' decrement predicated on
    /// it, within §4.2's one operation per object per packet). Unlike `improved`, the T
    /// rule stays per packet and the senders' resend rule stays Algorithm 2's.
    pub suppress_excess_decrements: bool,
    /// Hypothesis (b) for the paper's zero loss (off by default): an unsolicited packet
    /// that passes the T rule is forwarded without decrementing the counters (the switch
    /// "passes through" unsolicited bursts, §4.4). The reservation its RSV made is then
    /// released only by the burst's resent copy; a burst that is not resent (its chosen
    /// slot ≤ t) leaves its reservation on both counters for good, so the counters
    /// overstate the backlog by the unsolicited traffic that passed.
    pub unsolicited_bypass: bool,
    /// The talk's priority scheme; `None` grants every demand (up to K).
    pub priority: Option<PriorityThresholds>,
    /// Send a copy of every non-reject GRT to the receiver (§4.5).
    pub grt_copy_to_receiver: bool,
    /// Share of every port kept for external (inter-rack) traffic, parts per million
    /// (§7; see `share.rs`). 0 by default.
    pub external_share_ppm: u32,
    /// Timeslot length; the ideal mode needs it to read the switch clock in slots.
    pub slot_ps: u64,
    /// Bursts remembered per source host by the per-burst ledger (accounting for both
    /// modes; admission and duplicate suppression for the improved one). Oldest evicted.
    pub ledger_bursts_per_host: usize,
}

impl Default for SchedulerConfig {
    fn default() -> Self {
        SchedulerConfig {
            mode: SwitchMode::Faithful,
            decrement_at: DecrementPoint::Ingress,
            k_max_packets: 4,
            t_unsolicited_slots: 128,
            t_sender_slots: 15,
            improved: false,
            suppress_excess_decrements: false,
            unsolicited_bypass: false,
            priority: None,
            grt_copy_to_receiver: false,
            external_share_ppm: 0,
            slot_ps: 123_360,
            ledger_bursts_per_host: 1024,
        }
    }
}

impl SchedulerConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.k_max_packets == 0 {
            return Err(ConfigError::Invalid("k_max_packets must be at least 1"));
        }
        if self.slot_ps == 0 {
            return Err(ConfigError::Invalid("slot_ps must be positive"));
        }
        if u64::from(self.external_share_ppm) >= super::share::PPM {
            return Err(ConfigError::Invalid(
                "external_share_ppm must be below 1_000_000",
            ));
        }
        if self.ledger_bursts_per_host == 0 {
            return Err(ConfigError::Invalid(
                "ledger_bursts_per_host must be at least 1",
            ));
        }
        if let Some(p) = self.priority {
            if p.t1_slots > p.t2_slots {
                return Err(ConfigError::Invalid("priority thresholds need t1 <= t2"));
            }
        }
        Ok(())
    }
}
