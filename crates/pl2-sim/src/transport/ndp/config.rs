//! `NdpConfig`: every knob of NDP, with htsim's values (Broadcom/csg-htsim 841d9e7, cited
//! file:line) or the NDP paper's (Handley et al., SIGCOMM 2017) where they differ, and our
//! documented choices where neither decides. A `preset` fills the fields left unset
//! ([`NdpConfig::resolve`]); fields set explicitly always win.

use crate::framing::L4Headers;
use crate::units::Duration;
use serde::{Deserialize, Serialize};

/// NDP (receiver-pulled transport over trimming switches) parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct NdpConfig {
    /// A named set of values for the fields below marked "preset", applied to those left
    /// unset: `polo` is the setting of Polo's comparison (2 priority queues: control at 1,
    /// data at 0; `rto_min` 1 ms; `initial_window` 12). Default: none.
    pub preset: Option<NdpPreset>,
    /// Bytes of L3 + L4 header on every NDP frame (a control frame is this header alone).
    /// Default 28 (IPv4 + UDP; we found no documented size for NDP's own header). htsim
    /// counts 64 B for every header (`ndppacket.h:55,105`): with the PPP link layer (2 B)
    /// that is `header_bytes = 62`.
    pub header_bytes: u16,
    /// Packets a message sends at once when it starts, handed to the NIC together with no
    /// pacing (htsim `startflow`, `ndp.cpp:270-325`). Preset. Default 23, the largest
    /// window of the NDP paper's incast runs (1, 10 and 23; notes §5.4); `polo`: 12.
    pub initial_window: Option<u32>,
    /// 802.1Q priority of data frames, first transmissions and retransmissions alike
    /// (htsim: both LO at the host, `ndppacket.h:98-104`). Default 0. A trimmed header is
    /// re-prioritised by the switch that trims it, not by NDP.
    pub data_priority: u8,
    /// 802.1Q priority of ACK, NACK and PULL frames. Preset. Default 7; `polo`: 1. htsim
    /// queues NACKs at LO at the host NIC (`ndppacket.h:218`); pl2 sends them with the
    /// other control frames.
    pub control_priority: Option<u8>,
    /// How data frames pick their path. Default `permute` (htsim `SCATTER_PERMUTE`, the
    /// paper's `-strat perm`).
    pub paths: NdpPaths,
    /// The pull pacer's rate relative to the receiving host's link: one PULL per
    /// `pull_spacing` wire time divided by this (htsim `NdpPullPacer`, `ndp.cpp:1814-1821`).
    /// Default 0.99, htsim's maintained driver (`main_ndp.cpp:553`), which leaves the
    /// receiver's downlink 1 % slack; the paper's incast driver uses 1.0
    /// (`old_tests/main_ndp_incast_shortflows.cpp:254`).
    pub pull_rate_modifier: f64,
    /// What one pull interval covers. Default `data_frame` (htsim's
    /// `(data_packet_size()+64)`, a full data frame on the wire).
    pub pull_spacing: PullSpacing,
    /// Which flow the pull pacer serves next. Default `fair` (htsim `FairPullQueue`).
    pub pull_order: PullOrder,
    /// Retransmit on timeout (htsim's `RESEND_ON_TIMEOUT`, compiled out by default there,
    /// `ndp.cpp:1142-1146`): when the earliest outstanding packet has been out for the
    /// RTO, every overdue packet is resent at once, each once, with no backoff
    /// (`ndp.cpp:1058-1139`). Default true: with no return-to-sender a header dropped by
    /// a full header queue is otherwise never recovered.
    pub resend_on_timeout: bool,
    /// Floor of the RTO: whenever the Jacobson estimate is below it, the RTO is redrawn
    /// uniformly in [0.75, 1.25] × this on every ACK (`ndp.cpp:644-645`). Preset. Default
    /// 5 ms (`DEFAULT_RTO_MIN`, `ndp.h:26`); `polo`: 1 ms.
    pub rto_min: Option<Duration>,
    /// RTO before the first RTT sample. Default 20 ms (`ndp.cpp:85`).
    pub rto_initial: Duration,
    /// Whether a packet resent by the timeout can time out again. Default false (htsim:
    /// the resent packet is not put back among the outstanding ones, `ndp.cpp:1123`, so a
    /// lost timeout resend is never recovered by another timeout).
    pub rto_rearm: bool,
}

/// Named settings for the fields a preset fills.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum NdpPreset {
    /// Polo's comparison: 2 priority queues (control 1, data 0), 1 ms RTO floor, initial
    /// window 12.
    Polo,
}

/// Path choice for NDP's frames.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum NdpPaths {
    /// The sender numbers the paths (source routing): per flow, a random permutation of
    /// every path number, one packet per path, reshuffled after each cycle, the index
    /// incremented before use (htsim `SCATTER_PERMUTE`, `ndp.cpp:793-802`).
    #[default]
    Permute,
    /// A path number drawn uniformly per packet (htsim `SCATTER_RANDOM`, `ndp.cpp:788-792`).
    Random,
    /// The switches hash each message onto one path.
    PerFlow,
    /// The switches pick a random next hop per packet.
    PerPacket,
    /// The switches take their next hop in turn.
    RoundRobin,
}

/// The wire time one pull interval stands for.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PullSpacing {
    /// A full data frame (what each PULL brings back): htsim's spacing.
    #[default]
    DataFrame,
    /// A full data frame plus a control frame (room for the receiver's own control
    /// traffic on the same link).
    DataAndControl,
}

/// The pull pacer's service order among the flows with PULLs queued.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PullOrder {
    /// Round robin over flows in the order they first reached the receiver (htsim
    /// `FairPullQueue`, ascending flow id, `fairpullqueue.cpp:75-109`).
    #[default]
    Fair,
    /// PULLs in the order they were queued (htsim `FifoPullQueue`).
    Fifo,
    /// Highest message priority first, round robin within a priority (htsim
    /// `PrioPullQueue`, `priopullqueue.cpp:43-87`, with pl2's 802.1Q sense: 7 is highest).
    Priority,
    /// The flow with the fewest packets still to receive first (ties: arrival order).
    SmallestRemaining,
}

impl Default for NdpConfig {
    fn default() -> Self {
        NdpConfig {
            preset: None,
            header_bytes: 28,
            initial_window: None,
            data_priority: 0,
            control_priority: None,
            paths: NdpPaths::Permute,
            pull_rate_modifier: 0.99,
            pull_spacing: PullSpacing::DataFrame,
            pull_order: PullOrder::Fair,
            resend_on_timeout: true,
            rto_min: None,
            rto_initial: Duration::from_ms(20),
            rto_rearm: false,
        }
    }
}

/// Every setting with its value decided (preset applied).
#[derive(Clone, Debug, PartialEq)]
pub struct NdpSettings {
    pub header_bytes: u16,
    pub initial_window: u32,
    pub data_priority: u8,
    pub control_priority: u8,
    pub paths: NdpPaths,
    pub pull_rate_modifier: f64,
    pub pull_spacing: PullSpacing,
    pub pull_order: PullOrder,
    pub resend_on_timeout: bool,
    pub rto_min: Duration,
    pub rto_initial: Duration,
    pub rto_rearm: bool,
}

/// An NDP setting out of range: the field and how to fix it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum NdpConfigError {
    #[error("{field} = {value}; 802.1Q priorities are 0..7")]
    Priority { field: &'static str, value: u8 },
    #[error("control_priority = {control}; must be above data_priority ({data}) so ACKs, NACKs and PULLs overtake data")]
    ControlNotAboveData { control: u8, data: u8 },
    #[error("initial_window = 0; a message must start with at least one packet (set 1 or more)")]
    ZeroWindow,
    #[error("header_bytes = 0; NDP frames carry a header (28 for IPv4 + UDP, 62 to match htsim over PPP)")]
    NoHeader,
    #[error("pull_rate_modifier = {0}; must be a positive finite number (0.99 as htsim's main_ndp, 1.0 for line rate)")]
    Modifier(f64),
    #[error("{field} = 0; the timeout must be positive, e.g. \"5ms\"")]
    ZeroRto { field: &'static str },
}

impl NdpConfig {
    pub fn l4(&self) -> L4Headers {
        L4Headers::Bytes { bytes: self.header_bytes }
    }

    /// The settings with the preset (if any) filling unset fields, then the defaults; each
    /// checked.
    pub fn resolve(&self) -> Result<NdpSettings, NdpConfigError> {
        let (iw, ctrl, rto_min) = match self.preset {
            None => (23, 7, Duration::from_ms(5)),
            Some(NdpPreset::Polo) => (12, 1, Duration::from_ms(1)),
        };
        let s = NdpSettings {
            header_bytes: self.header_bytes,
            initial_window: self.initial_window.unwrap_or(iw),
            data_priority: self.data_priority,
            control_priority: self.control_priority.unwrap_or(ctrl),
            paths: self.paths,
            pull_rate_modifier: self.pull_rate_modifier,
            pull_spacing: self.pull_spacing,
            pull_order: self.pull_order,
            resend_on_timeout: self.resend_on_timeout,
            rto_min: self.rto_min.unwrap_or(rto_min),
            rto_initial: self.rto_initial,
            rto_rearm: self.rto_rearm,
        };
        s.validate()?;
        Ok(s)
    }
}

impl NdpSettings {
    fn validate(&self) -> Result<(), NdpConfigError> {
        for (field, value) in [("data_priority", self.data_priority), ("control_priority", self.control_priority)] {
            if value > 7 {
                return Err(NdpConfigError::Priority { field, value });
            }
        }
        if self.control_priority <= self.data_priority {
            return Err(NdpConfigError::ControlNotAboveData { control: self.control_priority, data: self.data_priority });
        }
        if self.initial_window == 0 {
            return Err(NdpConfigError::ZeroWindow);
        }
        if self.header_bytes == 0 {
            return Err(NdpConfigError::NoHeader);
        }
        if !(self.pull_rate_modifier.is_finite() && self.pull_rate_modifier > 0.0) {
            return Err(NdpConfigError::Modifier(self.pull_rate_modifier));
        }
        for (field, d) in [("rto_min", self.rto_min), ("rto_initial", self.rto_initial)] {
            if d.0 == 0 {
                return Err(NdpConfigError::ZeroRto { field });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_polo_preset_fills_only_unset_fields() {
        let d = NdpConfig::default().resolve().unwrap();
        assert_eq!((d.initial_window, d.control_priority, d.rto_min), (23, 7, Duration::from_ms(5)));
        let p = NdpConfig { preset: Some(NdpPreset::Polo), ..NdpConfig::default() }.resolve().unwrap();
        assert_eq!((p.initial_window, p.control_priority, p.data_priority, p.rto_min), (12, 1, 0, Duration::from_ms(1)));
        let mixed = NdpConfig { preset: Some(NdpPreset::Polo), initial_window: Some(5), ..NdpConfig::default() };
        assert_eq!(mixed.resolve().unwrap().initial_window, 5, "an explicit field beats the preset");
    }

    #[test]
    fn bad_values_name_the_field() {
        let bad = |c: NdpConfig| c.resolve().unwrap_err().to_string();
        assert!(bad(NdpConfig { data_priority: 9, ..NdpConfig::default() }).starts_with("data_priority = 9"));
        assert!(bad(NdpConfig { control_priority: Some(0), ..NdpConfig::default() }).starts_with("control_priority = 0"));
        assert!(bad(NdpConfig { initial_window: Some(0), ..NdpConfig::default() }).starts_with("initial_window"));
        assert!(bad(NdpConfig { pull_rate_modifier: f64::NAN, ..NdpConfig::default() }).starts_with("pull_rate_modifier"));
        assert!(bad(NdpConfig { pull_rate_modifier: 0.0, ..NdpConfig::default() }).starts_with("pull_rate_modifier"));
        assert!(bad(NdpConfig { rto_min: Some(Duration(0)), ..NdpConfig::default() }).starts_with("rto_min"));
        assert!(bad(NdpConfig { header_bytes: 0, ..NdpConfig::default() }).starts_with("header_bytes"));
        let polo_bad = NdpConfig { preset: Some(NdpPreset::Polo), data_priority: 1, ..NdpConfig::default() };
        assert!(bad(polo_bad).contains("must be above data_priority (1)"));
    }
}
