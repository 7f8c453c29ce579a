//! `Pl2Config`: every PL2 knob a scenario can set, with the prototype's values as
//! defaults (§5, §6.1), mapped onto pl2-protocol's sender, receiver and scheduler
//! configurations.

use crate::transport::raw::RawHeaders;
use crate::units::Duration;
use pl2_protocol::estimator::EstimatorKind;
use pl2_protocol::receiver::ReceiverConfig;
use pl2_protocol::sender::{ExchangeScope, LowLoadConfig, PipelineMode, Recency, SenderConfig, WaitRule};
use pl2_protocol::switch::{DecrementPoint, PriorityThresholds, SchedulerConfig, SwitchMode};
use pl2_protocol::timeslot::SlotBasis;
use serde::{Deserialize, Serialize};

/// PL2 (Le et al., rack-scale scheduling) parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Pl2Config {
    /// Headers between Ethernet and the data payload: `none` (default) or `udp`.
    pub headers: RawHeaders,
    /// 802.1Q priority of data frames. Default 0. (RSV/GRT/CANCEL always use 7.)
    pub data_priority: u8,
    /// K: packets per burst at most (§4.3). Default 4 (§6.1). At most 64.
    pub k: u32,
    /// t (§4.4): a burst goes unsolicited only if the last chosen timeslot is below t; an
    /// unsolicited burst is resent if its chosen timeslot is above t. Default 15.
    pub t: u64,
    /// T (§4.4): the switch drops an unsolicited packet when max(in, out) > T. Default 128.
    pub t_unsolicited: u64,
    /// The low-load optimisation (unsolicited bursts, §4.4). Default true.
    pub low_load: bool,
    /// Condition (ii) of §4.4: the last GRT is at most this many RSV–GRT estimates old.
    /// Default 2.
    pub recency_estimates: u32,
    /// Switch scheduler: `faithful` (Algorithm 1, default) or `ideal` (§4.2's absolute
    /// slots, shared chosen slot).
    pub switch_mode: Pl2SwitchMode,
    /// Ideal mode's lead L from processing an RSV to its data at the switch. Default
    /// none: derived from the model's minimum delays (the minimum RSV–GRT exchange between
    /// two hosts, rounded up to whole slots).
    pub ideal_lead: Option<Duration>,
    /// The improved variant (admission decided at the RSV, no decrements beyond a burst's
    /// reservation). Default false.
    pub improved: bool,
    /// Drift fix a Tofino could run (issue 24, hypothesis (c) for the paper's zero loss):
    /// a burst's packets beyond its reservation, such as the resent copy of an unsolicited
    /// burst whose original passed, do not decrement the switch's counters (a per-burst
    /// register table counts arrivals). The T rule and Algorithm 2's resend rule are
    /// unchanged; `improved` does this too and also moves admission to the RSV. Default
    /// false (left out of the canonical scenario then, so older scenarios keep their keys).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    #[schemars(!skip_serializing_if)]
    pub suppress_excess_decrements: bool,
    /// Issue 24, hypothesis (b): unsolicited packets that pass the T rule are forwarded
    /// without decrementing the switch's counters; a burst that is not resent leaves its
    /// reservation on them for good. Default false (left out of the canonical scenario
    /// then).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    #[schemars(!skip_serializing_if)]
    pub unsolicited_bypass: bool,
    /// Where a data packet releases its reservation: `ingress` (Algorithm 1, default) or
    /// `dequeue` (ablation: when it leaves the ToR's output queue).
    pub decrement_at: Pl2Decrement,
    /// Reading of equation (1): `b` (default, wait = chosen·slot − rsvGrtDelay, handed
    /// over then) or `a` (also minus the NIC backlog at the GRT).
    pub equation1: Pl2Equation1,
    /// RSV–GRT delay estimator. Default `{kind = "window_min", samples = 16}`.
    pub estimator: Pl2Estimator,
    /// `blocking` (the prototype, default: next RSV once the burst is transmitted) or
    /// `pipelined` (the talk: next RSV once the burst is handed to the NIC).
    pub pipeline: Pl2Pipeline,
    /// One exchange at a time `per_thread` (the prototype, default) or
    /// `per_destination` (per thread and destination, the NIC design).
    pub exchanges: Pl2Exchanges,
    /// The talk's priority scheme (message priority > 0 is high priority). Default false.
    pub priorities: bool,
    /// Priority scheme: low priority gets one slot at or above this backlog. Default 64.
    pub priority_t1: u64,
    /// Priority scheme: low priority is rejected at or above this backlog. Default 128.
    pub priority_t2: u64,
    /// Send a copy of every GRT to the receiver, which cancels what does not arrive
    /// (§4.5). Default false.
    pub grt_copy_to_receiver: bool,
    /// Share of every port kept for external (inter-rack) traffic, parts per million
    /// (§7): every reservation counts 1 / (1 − share) slots, so the frames entering the
    /// rack unscheduled have that share of each downlink. Below 1,000,000. Default: §7's
    /// example, 10% (100,000), on a network of several racks; 0 in a single rack (no
    /// external traffic reaches it).
    pub external_share_ppm: Option<u32>,
    /// What a timeslot is the transmission time of: `full_frame_wire` (default, an MTU
    /// frame with all wire overhead: 123.36 ns at 100G) or `mtu_over_line_rate` (120 ns).
    pub timeslot: Pl2Timeslot,
    /// An RSV whose GRT has not come back after this long is sent again. Default 100 µs.
    pub retry_timeout: Duration,
}

impl Default for Pl2Config {
    fn default() -> Self {
        Pl2Config {
            headers: RawHeaders::None,
            data_priority: 0,
            k: 4,
            t: 15,
            t_unsolicited: 128,
            low_load: true,
            recency_estimates: 2,
            switch_mode: Pl2SwitchMode::Faithful,
            ideal_lead: None,
            improved: false,
            suppress_excess_decrements: false,
            unsolicited_bypass: false,
            decrement_at: Pl2Decrement::Ingress,
            equation1: Pl2Equation1::B,
            estimator: Pl2Estimator::WindowMin { samples: 16 },
            pipeline: Pl2Pipeline::Blocking,
            exchanges: Pl2Exchanges::PerThread,
            priorities: false,
            priority_t1: 64,
            priority_t2: 128,
            grt_copy_to_receiver: false,
            external_share_ppm: None,
            timeslot: Pl2Timeslot::FullFrameWire,
            retry_timeout: Duration::from_us(100),
        }
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Pl2SwitchMode {
    /// Algorithm 1: relative per-port backlog counters.
    #[default]
    Faithful,
    /// Absolute next-free slots and one shared chosen slot (§4.2: not implementable in
    /// hardware; the reference point).
    Ideal,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Pl2Decrement {
    /// When the packet enters the switch (Algorithm 1).
    #[default]
    Ingress,
    /// When it leaves its output queue (ablation).
    Dequeue,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Pl2Equation1 {
    /// Literal: wait = chosen·slot − rsvGrtDelay − NIC backlog at the GRT.
    A,
    /// At hand-off: wait = chosen·slot − rsvGrtDelay.
    #[default]
    B,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Pl2Estimator {
    /// Minimum of the last `samples` RSV–GRT delays.
    WindowMin {
        /// Window length (default 16).
        samples: u32,
    },
    /// EWMA with gain 1/8 from `initial`.
    Ewma {
        /// Estimate before the first sample.
        initial: Duration,
    },
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Pl2Pipeline {
    /// The next RSV once the burst is granted and transmitted (prototype, §5).
    #[default]
    Blocking,
    /// The next RSV once the burst is handed to the NIC (the talk).
    Pipelined,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Pl2Exchanges {
    /// One exchange at a time per sending thread (prototype).
    #[default]
    PerThread,
    /// One per thread and destination (the NIC design).
    PerDestination,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Pl2Timeslot {
    /// MTU + Ethernet header, 802.1Q tag, FCS, preamble and IFG (1542 B at MTU 1500).
    #[default]
    FullFrameWire,
    /// MTU bytes only, as written in equation (1).
    MtuOverLineRate,
}

impl Pl2Config {
    /// Headers of data frames.
    pub fn l4(&self) -> crate::framing::L4Headers {
        crate::transport::raw::RawConfig { headers: self.headers, ..Default::default() }.l4()
    }

    /// Checks ranges; the message names the fix.
    pub fn validate(&self) -> Result<(), String> {
        if self.k == 0 || self.k > 64 {
            return Err(format!("k = {}; use 1..64 (the receiver deduplicates up to 64 packets per burst)", self.k));
        }
        if self.data_priority > 7 {
            return Err(format!("data_priority = {}; 802.1Q priorities are 0..7", self.data_priority));
        }
        if self.priority_t1 > self.priority_t2 {
            return Err("priority_t1 must not exceed priority_t2".into());
        }
        if let Pl2Estimator::WindowMin { samples: 0 } = self.estimator {
            return Err("estimator.samples must be at least 1".into());
        }
        if self.switch_mode == Pl2SwitchMode::Ideal {
            for (on, field) in [(self.suppress_excess_decrements, "suppress_excess_decrements"), (self.unsolicited_bypass, "unsolicited_bypass")] {
                if on {
                    return Err(format!("{field} = true needs switch_mode = \"faithful\": the ideal switch never decrements; remove {field} or use the faithful switch"));
                }
            }
        }
        if self.retry_timeout.0 == 0 {
            return Err("retry_timeout must be positive".into());
        }
        Ok(())
    }

    pub fn slot_basis(&self) -> SlotBasis {
        match self.timeslot {
            Pl2Timeslot::FullFrameWire => SlotBasis::FullFrameWire,
            Pl2Timeslot::MtuOverLineRate => SlotBasis::MtuOverLineRate,
        }
    }

    pub fn sender(&self, host: u32, payload_per_packet: u64, slot_ps: u64) -> SenderConfig {
        SenderConfig {
            host,
            k_packets: self.k,
            payload_per_packet_bytes: payload_per_packet,
            slot_ps,
            low_load: LowLoadConfig {
                enabled: self.low_load,
                t_slots: self.t,
                recency: Recency::EstimateTimes(self.recency_estimates),
            },
            improved: self.improved,
            estimator: match self.estimator {
                Pl2Estimator::WindowMin { samples } => EstimatorKind::WindowMin { samples: samples as usize },
                Pl2Estimator::Ewma { initial } => EstimatorKind::Ewma { initial_ps: initial.0 },
            },
            wait_rule: match self.equation1 {
                Pl2Equation1::A => WaitRule::Literal,
                Pl2Equation1::B => WaitRule::AtHandoff,
            },
            pipeline: match self.pipeline {
                Pl2Pipeline::Blocking => PipelineMode::Blocking,
                Pl2Pipeline::Pipelined => PipelineMode::Pipelined,
            },
            scope: match self.exchanges {
                Pl2Exchanges::PerThread => ExchangeScope::PerContext,
                Pl2Exchanges::PerDestination => ExchangeScope::PerDestination,
            },
            rsv_timeout_ps: self.retry_timeout.0,
            priority_scheme: self.priorities,
            reject_backoff_ps: (self.priority_t2 - self.priority_t1).max(1) * slot_ps,
        }
    }

    pub fn receiver(&self, host: u32, slot_ps: u64) -> ReceiverConfig {
        ReceiverConfig {
            host,
            track_pending: self.grt_copy_to_receiver,
            slot_ps,
            deadline_slack_ps: self.retry_timeout.0,
            ..ReceiverConfig::default()
        }
    }

    /// §7's example share, kept by default when the network has several racks.
    pub const MULTI_RACK_SHARE_PPM: u32 = 100_000;

    /// The share in force: the configured one, else [`Self::MULTI_RACK_SHARE_PPM`] on a
    /// network of several racks and 0 in one rack.
    pub fn share_ppm(&self, multi_rack: bool) -> u32 {
        self.external_share_ppm.unwrap_or(if multi_rack { Self::MULTI_RACK_SHARE_PPM } else { 0 })
    }

    /// `lead_slots` is used in ideal mode only; `multi_rack` picks the default share.
    pub fn scheduler(&self, slot_ps: u64, lead_slots: u64, multi_rack: bool) -> SchedulerConfig {
        SchedulerConfig {
            mode: match self.switch_mode {
                Pl2SwitchMode::Faithful => SwitchMode::Faithful,
                Pl2SwitchMode::Ideal => SwitchMode::Ideal { lead_slots },
            },
            decrement_at: match self.decrement_at {
                Pl2Decrement::Ingress => DecrementPoint::Ingress,
                Pl2Decrement::Dequeue => DecrementPoint::Dequeue,
            },
            k_max_packets: self.k,
            t_unsolicited_slots: self.t_unsolicited,
            t_sender_slots: self.t,
            improved: self.improved,
            suppress_excess_decrements: self.suppress_excess_decrements,
            unsolicited_bypass: self.unsolicited_bypass,
            priority: self.priorities.then_some(PriorityThresholds { t1_slots: self.priority_t1, t2_slots: self.priority_t2 }),
            grt_copy_to_receiver: self.grt_copy_to_receiver,
            external_share_ppm: self.share_ppm(multi_rack),
            slot_ps,
            ..SchedulerConfig::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_map_onto_the_prototype() {
        let c = Pl2Config::default();
        c.validate().unwrap();
        let s = c.sender(3, 1500, 123_360);
        let d = SenderConfig::default();
        assert_eq!(s, SenderConfig { host: 3, ..d });
        assert_eq!(c.scheduler(123_360, 0, false), SchedulerConfig::default());
        assert_eq!(c.scheduler(123_360, 0, true).external_share_ppm, 100_000);
        let set = Pl2Config { external_share_ppm: Some(0), ..c.clone() };
        assert_eq!(set.scheduler(123_360, 0, true).external_share_ppm, 0);
        assert!(Pl2Config { k: 65, ..c.clone() }.validate().is_err());
    }

    #[test]
    fn the_zero_loss_hypotheses_need_the_faithful_switch() {
        let c = Pl2Config { unsolicited_bypass: true, suppress_excess_decrements: true, ..Default::default() };
        c.validate().unwrap();
        let s = c.scheduler(123_360, 0, false);
        assert!(s.unsolicited_bypass && s.suppress_excess_decrements);
        let e = Pl2Config { switch_mode: Pl2SwitchMode::Ideal, unsolicited_bypass: true, ..Default::default() }.validate().unwrap_err();
        assert!(e.contains("unsolicited_bypass") && e.contains("faithful"), "{e}");
    }
}
