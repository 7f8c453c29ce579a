//! Configuration of the sender. Defaults follow the prototype (§5, §6.1: K = 4, t = 15,
//! blocking contexts, 123.36 ns slots) plus our documented choices for what the paper
//! leaves open (estimator, reading of equation (1), recency window, timeouts).

use serde::{Deserialize, Serialize};

use crate::error::ConfigError;
use crate::estimator::EstimatorKind;
use crate::msg::HostId;

/// Which reading of equation (1) (§4.2.1) computes the waiting time.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WaitRule {
    /// (a) Literal: `wait = max(0, chosen·slot − rsvGrtDelay − pendingDataDelay)`, with
    /// `pendingDataDelay` the NIC backlog (bytes queued / line rate) at the GRT, supplied
    /// by the driver: the burst is handed over early so it leaves the NIC queue on time.
    Literal,
    /// (b) At hand-off (default): `wait = max(0, chosen·slot − rsvGrtDelay)`; a NIC
    /// backlog delays the burst by itself. Which of (a) and (b) keeps the switch queue
    /// bounded is for the simulations to decide.
    #[default]
    AtHandoff,
}

/// When a context may send its next RSV.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PipelineMode {
    /// The prototype (§5): "the application send call blocks until transmission
    /// completes" and "we wait to receive the GRT before transmitting the next burst".
    /// The next RSV goes once the current burst's GRT has been processed and every copy
    /// of it has been transmitted (the driver calls `on_burst_transmitted`). Default.
    #[default]
    Blocking,
    /// The talk: "burst RSV packet with last burst data packets". The next RSV may go
    /// when the current burst is handed to the NIC (`on_burst_handed_to_nic`), so it
    /// travels with the burst's last packets. At most two exchanges of a context await
    /// their GRT at once (the current and the next one).
    Pipelined,
}

/// What one exchange serialises (§4.2.1, last paragraph).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExchangeScope {
    /// One FIFO of messages and one exchange at a time per context (the prototype: one
    /// per application thread, head-of-line blocking across destinations). Default.
    #[default]
    PerContext,
    /// One FIFO and one exchange at a time per (context, destination) (the NIC design:
    /// "one outstanding RSV-GRT exchange per destination mac address").
    PerDestination,
}

/// How recent the last GRT must be for an unsolicited burst (§4.4 condition (ii):
/// "comparable to the time for a RSV-GRT exchange").
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Recency {
    /// Within this many RSV–GRT delay estimates of now (default 2).
    EstimateTimes(u32),
    /// Within a fixed time.
    FixedPs(u64),
}

/// The low-load optimisation (§4.4, Algorithm 2).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LowLoadConfig {
    pub enabled: bool,
    /// t: unsolicited only if the last chosen timeslot is below it; resend if the new
    /// chosen timeslot is above it (§6.1: 15).
    pub t_slots: u64,
    pub recency: Recency,
}

impl Default for LowLoadConfig {
    fn default() -> Self {
        LowLoadConfig {
            enabled: true,
            t_slots: 15,
            recency: Recency::EstimateTimes(2),
        }
    }
}

/// Everything the sender is parameterised by.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SenderConfig {
    /// This host.
    pub host: HostId,
    /// K: packets per burst at most (§4.3).
    pub k_packets: u32,
    /// Payload bytes per packet: a message of B bytes is `ceil(B / this)` packets (at
    /// least one).
    pub payload_per_packet_bytes: u64,
    pub slot_ps: u64,
    pub low_load: LowLoadConfig,
    /// Pair with the improved switch: resend an unsolicited burst iff its GRT says it was
    /// not admitted (instead of `chosen > t`).
    pub improved: bool,
    pub estimator: EstimatorKind,
    pub wait_rule: WaitRule,
    pub pipeline: PipelineMode,
    pub scope: ExchangeScope,
    /// An RSV whose GRT has not come back after this long is sent again.
    pub rsv_timeout_ps: u64,
    /// Pair with a switch running the talk's priority scheme: bursts send exactly the
    /// packets granted, and low-priority bursts never go unsolicited (their grant may be
    /// partial or a reject, which an unsolicited copy cannot honour).
    pub priority_scheme: bool,
    /// After a reject, ask again this much later. Default 64 slots (T2 − T1 with the talk's
    /// values): by then a backlog at T2 has drained by up to 64 slots, into the grant-one
    /// region, if nothing else was reserved meanwhile.
    pub reject_backoff_ps: u64,
}

impl Default for SenderConfig {
    fn default() -> Self {
        let slot_ps = 123_360;
        SenderConfig {
            host: 0,
            k_packets: 4,
            payload_per_packet_bytes: 1500,
            slot_ps,
            low_load: LowLoadConfig::default(),
            improved: false,
            estimator: EstimatorKind::default(),
            wait_rule: WaitRule::default(),
            pipeline: PipelineMode::default(),
            scope: ExchangeScope::default(),
            rsv_timeout_ps: 100_000_000,
            priority_scheme: false,
            reject_backoff_ps: 64 * slot_ps,
        }
    }
}

impl SenderConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.k_packets == 0 {
            return Err(ConfigError::Invalid("k_packets must be at least 1"));
        }
        if self.payload_per_packet_bytes == 0 {
            return Err(ConfigError::Invalid(
                "payload_per_packet_bytes must be positive",
            ));
        }
        if self.slot_ps == 0 {
            return Err(ConfigError::Invalid("slot_ps must be positive"));
        }
        if self.rsv_timeout_ps == 0 {
            return Err(ConfigError::Invalid("rsv_timeout_ps must be positive"));
        }
        if let EstimatorKind::WindowMin { samples: 0 } = self.estimator {
            return Err(ConfigError::Invalid(
                "the estimator window needs at least 1 sample",
            ));
        }
        Ok(())
    }
}
