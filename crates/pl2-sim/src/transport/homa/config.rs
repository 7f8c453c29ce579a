//! `HomaConfig`: every knob of Homa, with the HomaSimulation defaults
//! (PlatformLab/HomaSimulation @ ab09ecb, `src/dcntopo/homaTransportConfig.ini`, written
//! `ini` below) or the network-derived value they stand for, a `preset = "polo"` for the
//! Polo slides' comparison, and the resolution of unset fields into [`Params`].
//! `docs/model.md`, "Homa", gives the reasoning for each.

use super::layout::Layout;
use crate::config::EcmpMode;
use crate::framing::{Framing, L4Headers, IPV4_HEADER, UDP_HEADER};
use crate::units::{BitsPerSec, Bytes, Duration};
use serde::{Deserialize, Serialize};

/// Priority levels a switch port has (802.1Q); Homa uses all of them (`ini` `prioLevels=8`).
pub const LEVELS: u8 = 8;

/// Homa (Montazeri et al., SIGCOMM 2018) parameters. Unset fields take the preset's value
/// or one derived from the network and, through the scenario, from the workload.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct HomaConfig {
    /// Where unset fields come from: `reference` (default; the Homa simulator's
    /// `homaTransportConfig.ini`) or `polo` (the Polo slides' Homa: overcommitment 2,
    /// RTTbytes 12 packets, 1 ms RESEND timeout, packet spraying).
    pub preset: HomaPreset,
    /// Headers of data and control frames: `homa` (default: IPv4 + UDP + Homa's header,
    /// 30 B on unscheduled and 16 B on scheduled data and grants, as the simulator's
    /// `HomaPkt::headerSize`, `HomaPkt.cc:63-96`), `udp` (IPv4 + UDP only) or `none`.
    pub headers: HomaHeaders,
    /// RTTbytes, in wire bytes (headers, preamble and gap included): the unscheduled part
    /// of every message is the data that fits in this many wire bytes, and the receiver
    /// keeps at most this many granted-or-unscheduled wire bytes of a message in flight
    /// (`ini:36` `rttBytes = 10000`; `HomaTransport.cc:1815-1874`). Default: the network's
    /// base round trip (a full frame from host 0 to the farthest host and a minimum frame
    /// back, every delay at its minimum) times the host link rate, rounded up to a byte.
    /// Set at most one of `rtt_bytes` and `rtt_packets`.
    pub rtt_bytes: Option<Bytes>,
    /// RTTbytes as a number of full unscheduled packets (preset `polo`: 12).
    pub rtt_packets: Option<u32>,
    /// Priority levels for unscheduled packets (the highest ones). Default: from the
    /// workload through the scenario (`ini` `prioResolverPrioLevels`: W1 7, W2 5, W3 4,
    /// W4 and W5 1), else 8 minus `scheduled_levels`, else 1.
    pub unscheduled_levels: Option<u8>,
    /// Priority levels for scheduled packets (the lowest ones; `ini`
    /// `adaptiveSchedPrioLevels`). Default: 8 minus `unscheduled_levels`.
    pub scheduled_levels: Option<u8>,
    /// Unscheduled cut-offs in bytes, one per boundary between unscheduled levels
    /// (`unscheduled_levels − 1` values, increasing): an unscheduled packet with `r` bytes
    /// of its message left to send (itself included) goes at the highest level `j` with
    /// `r ≤ cutoffs[j]`, the last level beyond them (`PriorityResolver.cc:29-65`).
    /// Default: computed by the scenario from the workload's size distribution so that
    /// each level carries the same bytes (`PriorityResolver.cc:124-176`); needed when
    /// `unscheduled_levels > 1`.
    pub unscheduled_cutoffs: Option<Vec<Bytes>>,
    /// Overcommitment: senders a receiver grants to at once, the best on the highest
    /// scheduled level (`ini` `numSendersToKeepGranted`). Default: `scheduled_levels`
    /// (`reference`) or 2 (`polo`).
    pub overcommit: Option<u32>,
    /// Pace each sender's grants at the host link rate: after a grant of `n` bytes the next
    /// grant to that sender waits `n` bytes' wire time (`HomaTransport.cc:1815-1874`).
    /// Default true.
    pub grant_pacing: bool,
    /// Grant the last RTTbytes of a message at its unscheduled level when that is higher
    /// than its scheduled one (the simulator's `boostTailBytesPrio`,
    /// `PriorityResolver.cc:80-111`, `HomaTransport.cc:1825-1828`; the paper does not
    /// describe it). Default true.
    pub tail_boost: bool,
    /// A receiver that expects data of a message and receives none for this long sends a
    /// RESEND (Homa paper §3.7; the simulator has no loss and no RESEND). Default 10 ms
    /// (`reference`: long enough not to fire in loss-free runs) or 1 ms (`polo`).
    pub resend_timeout: Option<Duration>,
    /// Consecutive RESEND timeouts without any answer (data or BUSY) after which the
    /// receiver aborts the message (paper §3.7: "several"). Default 5.
    pub abort_after_timeouts: u32,
    /// Spray every packet over the equal-cost paths (`paths` override), as the simulator's
    /// ToRs do (`IPv4.cc:443-460`). Default true in both presets; `false` keeps the
    /// switches' `ecmp` setting.
    pub packet_spraying: Option<bool>,
}

/// Where unset [`HomaConfig`] fields come from.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HomaPreset {
    /// The Homa simulator's configuration (`homaTransportConfig.ini`).
    #[default]
    Reference,
    /// The Polo slides' Homa: 8 priority queues, overcommitment 2, packet spraying, 1 ms
    /// timeout, RTTbytes 12 packets.
    Polo,
}

/// Which headers Homa's frames carry.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HomaHeaders {
    /// IPv4 + UDP + Homa's header (30 B unscheduled, 16 B scheduled and control).
    #[default]
    Homa,
    /// IPv4 + UDP.
    Udp,
    /// None (raw Ethernet).
    None,
}

/// Homa's header on REQUEST/UNSCHED_DATA packets: msgId u64, msgByteLen u32,
/// totalUnschedBytes u16, first and last byte u32, and 8 B of vector (`HomaPkt.msg:41`,
/// `HomaPkt.cc:63-96`).
pub const UNSCHED_HEADER_BYTES: u16 = 30;
/// Homa's header on SCHED_DATA and GRANT packets (`HomaPkt.cc:63-96`).
pub const SCHED_HEADER_BYTES: u16 = 16;

impl HomaHeaders {
    /// Headers of unscheduled data frames.
    pub fn unscheduled(self) -> L4Headers {
        self.with(UNSCHED_HEADER_BYTES)
    }
    /// Headers of scheduled data frames and of control frames.
    pub fn scheduled(self) -> L4Headers {
        self.with(SCHED_HEADER_BYTES)
    }
    fn with(self, homa: u16) -> L4Headers {
        match self {
            HomaHeaders::Homa => L4Headers::Bytes { bytes: (IPV4_HEADER + UDP_HEADER) as u16 + homa },
            HomaHeaders::Udp => L4Headers::Udp,
            HomaHeaders::None => L4Headers::None,
        }
    }
}

impl Default for HomaConfig {
    fn default() -> Self {
        HomaConfig {
            preset: HomaPreset::Reference,
            headers: HomaHeaders::Homa,
            rtt_bytes: None,
            rtt_packets: None,
            unscheduled_levels: None,
            scheduled_levels: None,
            unscheduled_cutoffs: None,
            overcommit: None,
            grant_pacing: true,
            tail_boost: true,
            resend_timeout: None,
            abort_after_timeouts: 5,
            packet_spraying: None,
        }
    }
}

/// A Homa setting that cannot work: the field and how to fix it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HomaConfigError {
    #[error("rtt_bytes and rtt_packets are both set; set one of them")]
    TwoRtts,
    #[error("rtt_bytes = {value} B; must hold at least one full unscheduled frame ({min} wire bytes)")]
    RttTooSmall { value: u64, min: u64 },
    #[error("rtt_packets = 0; the unscheduled part needs at least one packet")]
    ZeroRttPackets,
    #[error("unscheduled_levels = {0}; use 1..7 (one level at least stays scheduled)")]
    UnscheduledLevels(u8),
    #[error("scheduled_levels = {0}; use 1..7 (one level at least stays unscheduled)")]
    ScheduledLevels(u8),
    #[error("unscheduled_levels + scheduled_levels = {0}; switches have 8 priority levels, lower one of them")]
    TooManyLevels(u8),
    #[error("unscheduled_cutoffs has {got} values for {levels} unscheduled levels; give {want} (one per boundary), or leave it unset to derive it from the workload")]
    CutoffCount { got: usize, levels: u8, want: usize },
    #[error("unscheduled_cutoffs must increase strictly ({0:?}); sort them and remove repeats")]
    CutoffOrder(Vec<u64>),
    #[error("overcommit = 0; a receiver must grant to at least one sender")]
    ZeroOvercommit,
    #[error("resend_timeout = 0; use a positive time, e.g. \"1ms\"")]
    ZeroTimeout,
    #[error("abort_after_timeouts = 0; a receiver must send at least one RESEND before aborting")]
    ZeroAbort,
    #[error("the MTU leaves no payload after Homa's headers; raise network.mtu")]
    NoPayload,
}

/// Everything a host needs, every field resolved.
#[derive(Clone, Debug, PartialEq)]
pub struct Params {
    pub layout: Layout,
    /// Unscheduled and scheduled levels.
    pub unsched_levels: u8,
    pub sched_levels: u8,
    /// Cut-offs (bytes left to send), `unsched_levels − 1` of them.
    pub cutoffs: Vec<u64>,
    pub overcommit: u32,
    pub grant_pacing: bool,
    pub tail_boost: bool,
    pub resend_timeout: Duration,
    pub abort_after: u32,
    /// Host link rate: pacing of the sender and of grants.
    pub rate: BitsPerSec,
}

impl HomaConfig {
    /// Headers of data frames for the ideal time (`Transport::l4`): the unscheduled ones,
    /// so a message within RTTbytes has its ideal time exactly.
    pub fn l4(&self) -> L4Headers {
        self.headers.unscheduled()
    }

    /// Path choice for Homa's frames.
    pub fn paths(&self) -> Option<EcmpMode> {
        self.packet_spraying.unwrap_or(true).then_some(EcmpMode::PerPacket)
    }

    /// RTTbytes in wire bytes, given the network's base round trip and host rate.
    pub fn rtt_wire_bytes(&self, framing: Framing, mtu: u64, base_rtt: Duration, rate: BitsPerSec) -> Result<u64, HomaConfigError> {
        let full = self.full_unsched_wire(framing, mtu)?;
        let packets = match self.preset {
            HomaPreset::Polo => Some(12),
            HomaPreset::Reference => None,
        };
        match (self.rtt_bytes, self.rtt_packets) {
            (Some(_), Some(_)) => Err(HomaConfigError::TwoRtts),
            (Some(b), None) if b.0 < full => Err(HomaConfigError::RttTooSmall { value: b.0, min: full }),
            (Some(b), None) => Ok(b.0),
            (None, Some(0)) => Err(HomaConfigError::ZeroRttPackets),
            (None, Some(n)) => Ok(u64::from(n) * full),
            (None, None) => Ok(match packets {
                Some(n) => n * full,
                // ceil(rtt · rate / 8 bits), in ps and bits per second.
                None => ((u128::from(base_rtt.0) * u128::from(rate.0)).div_ceil(8 * 1_000_000_000_000) as u64).max(full),
            }),
        }
    }

    fn full_unsched_wire(&self, framing: Framing, mtu: u64) -> Result<u64, HomaConfigError> {
        let l4 = self.headers.unscheduled();
        let p = framing.max_payload(l4, mtu);
        if p == 0 || framing.max_payload(self.headers.scheduled(), mtu) == 0 {
            return Err(HomaConfigError::NoPayload);
        }
        Ok(framing.wire_bytes(l4, p))
    }

    /// The level split: (unscheduled, scheduled).
    pub fn levels(&self) -> Result<(u8, u8), HomaConfigError> {
        let (u, s) = match (self.unscheduled_levels, self.scheduled_levels) {
            (Some(u), Some(s)) => (u, s),
            (Some(u), None) => (u, LEVELS.saturating_sub(u)),
            (None, Some(s)) => (LEVELS.saturating_sub(s), s),
            (None, None) => (1, LEVELS - 1),
        };
        if !(1..LEVELS).contains(&u) {
            return Err(HomaConfigError::UnscheduledLevels(u));
        }
        if !(1..LEVELS).contains(&s) {
            return Err(HomaConfigError::ScheduledLevels(s));
        }
        if u + s > LEVELS {
            return Err(HomaConfigError::TooManyLevels(u + s));
        }
        Ok((u, s))
    }

    /// Resolves every field for a network with this framing, MTU, base round trip and host
    /// link rate.
    pub fn resolve(&self, framing: Framing, mtu: u64, base_rtt: Duration, rate: BitsPerSec) -> Result<Params, HomaConfigError> {
        let rtt = self.rtt_wire_bytes(framing, mtu, base_rtt, rate)?;
        let layout = Layout::new(framing, self.headers, mtu, rtt);
        let (u, s) = self.levels()?;
        let cutoffs: Vec<u64> = match &self.unscheduled_cutoffs {
            Some(c) => c.iter().map(|b| b.0).collect(),
            None if u == 1 => Vec::new(),
            None => return Err(HomaConfigError::CutoffCount { got: 0, levels: u, want: usize::from(u) - 1 }),
        };
        if cutoffs.len() != usize::from(u) - 1 {
            return Err(HomaConfigError::CutoffCount { got: cutoffs.len(), levels: u, want: usize::from(u) - 1 });
        }
        if cutoffs.windows(2).any(|w| w[0] >= w[1]) {
            return Err(HomaConfigError::CutoffOrder(cutoffs));
        }
        let overcommit = self.overcommit.unwrap_or(match self.preset {
            HomaPreset::Reference => u32::from(s),
            HomaPreset::Polo => 2,
        });
        if overcommit == 0 {
            return Err(HomaConfigError::ZeroOvercommit);
        }
        let resend_timeout = self.resend_timeout.unwrap_or(match self.preset {
            HomaPreset::Reference => Duration::from_ms(10),
            HomaPreset::Polo => Duration::from_ms(1),
        });
        if resend_timeout.0 == 0 {
            return Err(HomaConfigError::ZeroTimeout);
        }
        if self.abort_after_timeouts == 0 {
            return Err(HomaConfigError::ZeroAbort);
        }
        Ok(Params {
            layout,
            unsched_levels: u,
            sched_levels: s,
            cutoffs,
            overcommit,
            grant_pacing: self.grant_pacing,
            tail_boost: self.tail_boost,
            resend_timeout,
            abort_after: self.abort_after_timeouts,
            rate,
        })
    }
}

impl Params {
    /// The unscheduled level (0 = highest) for a packet with `left` bytes of its message
    /// still to send, itself included (`PriorityResolver.cc:29-65`, graduated).
    pub fn unsched_level(&self, left: u64) -> u8 {
        self.cutoffs.iter().position(|&c| left <= c).unwrap_or(self.cutoffs.len()) as u8
    }

    /// Levels in use: unscheduled ones first (0 is the highest), then the scheduled ones.
    pub fn total_levels(&self) -> u8 {
        self.unsched_levels + self.sched_levels
    }

    /// The scheduled level of the sender ranked `rank` (0 = best) among `active` granted
    /// senders: packed at the bottom, the best highest (`HomaTransport.cc:2031-2104,
    /// 2459-2470`); ranks beyond the scheduled levels share the lowest.
    pub fn sched_level(&self, rank: u32, active: u32) -> u8 {
        let t = u32::from(self.total_levels());
        let used = active.min(u32::from(self.sched_levels));
        (t - used + rank).min(t - 1) as u8
    }
}

/// The 802.1Q priority of Homa level `level` (Homa's 0 is the highest; 802.1Q's 7 is).
pub fn prio_of(level: u8) -> u8 {
    LEVELS - 1 - level
}
