//! `RoceConfig`: the scenario's settings of the RoCE transport and DCQCN. A `preset`
//! (default `dcqcn_paper`) fills every DCQCN field left unset ([`RoceConfig::resolve`],
//! values in [`super::presets`]); fields set explicitly always win. Reliability, framing and
//! priorities are not part of a preset.

use super::presets;
use crate::framing::L4Headers;
pub use crate::layer::dcqcn::params::{AlphaUpdate, ClampTarget, DcqcnParams, HyperIncrease};
use crate::units::{BitsPerSec, Bytes, Duration};
use serde::{Deserialize, Serialize};

/// RoCE-like transport (RDMA writes over a rate-paced sender, go-back-N) with DCQCN.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct RoceConfig {
    /// The values of the DCQCN fields left unset: `dcqcn_paper` (default; Zhu et al.,
    /// SIGCOMM 2015), `hpcc_mellanox` (HPCC's ns-3 simulator, `cc = dcqcn`),
    /// `hpcc_mellanox_win` (the same with its window, `dcqcn_vwin`; needs `window`) or
    /// `sfc_seed` (the SFC slides' backup slide, read as `seed_reading` says).
    pub preset: RocePreset,
    /// Bytes of L3 + L4 headers on every frame (a control frame is this header alone).
    /// Default 44: IPv4 20 + UDP 8 + InfiniBand BTH 12 + ICRC 4 (RoCEv2; the RETH of a
    /// write's first packet is not modelled).
    pub header_bytes: u16,
    /// 802.1Q priority of data frames (the lossless class PFC pauses). Default 3.
    pub data_priority: u8,
    /// 802.1Q priority of ACK, NACK and CNP frames (a class PFC never pauses). Default 7.
    pub control_priority: u8,
    /// What a gap makes the receiver do: `go_back_n` (default; RoCE NICs and HPCC's
    /// simulator: the out-of-order packet is dropped and NACKed, the sender rewinds) or
    /// `selective_repeat` (the receiver keeps it; the sender resends only the missing one).
    pub loss_recovery: LossRecovery,
    /// The receiver acknowledges every this many in-order packets, and always the
    /// message's last. 0: only the last (one ACK per message). Default 1 (HPCC's
    /// simulator ACKs every packet in practice: `L2_ACK_INTERVAL 1`, `run.py:33`).
    pub ack_every_packets: u32,
    /// A receiver NACKs one expected packet again only after this long (HPCC
    /// `NACK Generation Interval`, `rdma-hw.cc:37-41`). Default 500 µs.
    pub nack_interval: Duration,
    /// The local ACK timeout: a flow with unacknowledged packets that has neither sent a
    /// data frame nor had an acknowledgement advance for this long rewinds (go-back-N) or
    /// resends its first unacknowledged packet (selective repeat); 0: none (HPCC's
    /// simulator: recovery only by NACK, `rdma-hw.cc:416-417,495-497`; InfiniBand's
    /// timeout field 0). InfiniBand sets it per QP as 4.096 µs × 2^n (`timeout` n =
    /// 1..31). Default 4.096 µs × 2^14 = 67.108864 ms: n = 14, perftest's default
    /// (`DEF_QP_TIME`), the common RoCE benchmark setting (rdma-cm's RoCE default is
    /// 2^19 × 4.096 µs ≈ 2.1 s, NCCL's 2^18 × 4.096 µs ≈ 1.07 s). A timeout far below the
    /// pauses PFC can impose fires on flows that are only paused.
    pub rto: Duration,
    /// Data frames the NIC holds between its pacer and the wire: the pacer picks the next
    /// frame one full frame's line-rate time after the last (at the flow's rate), while
    /// up to this many of the host's data frames are still in the send path
    /// (`[network.host]` send costs and `send_latency`) or the NIC queue — a NIC
    /// prefetching far enough ahead to hide its DMA latency, so that latency delays
    /// frames without capping the rate. Default (unset): 1 + ⌈(the send path's bound) /
    /// (a full frame's time at the link rate)⌉, 1 with no send path (HPCC's NIC, one frame
    /// per transmit opportunity).
    pub tx_pipeline_frames: Option<u32>,
    /// Publish per-flow probes `roce_rate_bps`, `roce_target_bps` and `roce_alpha` at every
    /// rate change. Default true.
    pub probes: bool,
    /// How the `sfc_seed` preset reads the seed's open points (only that preset reads it).
    pub seed_reading: SeedReading,
    /// DCQCN's EWMA gain g. Preset: paper 1/256; HPCC 1/256; seed 0.0009813.
    pub g: Option<f64>,
    /// α when a flow's first CNP arrives. Preset: 1 everywhere.
    pub alpha_init: Option<f64>,
    /// The α timer K. Preset: paper 55 µs; HPCC 1 µs; seed 5 µs.
    pub alpha_timer: Option<Duration>,
    /// When α takes in a CNP. Preset: paper and seed `on_cnp`; HPCC `per_tick`.
    pub alpha_update: Option<AlphaUpdate>,
    /// 0: the rate is cut at each CNP (paper). Otherwise the rate-decrease check: at most
    /// one cut per interval, if a CNP arrived in it. Preset: paper 0; HPCC 4 µs; seed 0 or
    /// 4 µs (`seed_reading.timer`).
    pub decrease_interval: Option<Duration>,
    /// When a cut first sets the target rate to the current rate. Preset: paper and seed
    /// `always`; HPCC `after_increase`.
    pub clamp_target: Option<ClampTarget>,
    /// F: increase events spent in fast recovery after a cut. Preset: paper 5; HPCC 1;
    /// seed 1.
    pub fast_recovery_steps: Option<u32>,
    /// The rate-increase timer T. Preset: paper 55 µs; HPCC 300 µs; seed 4 µs or 300 µs
    /// (`seed_reading.timer`).
    pub increase_timer: Option<Duration>,
    /// The byte counter B (bytes sent per increase event); 0 turns it off. Preset: paper
    /// 10 MB; HPCC 0; seed 2097152 B.
    pub byte_counter: Option<Bytes>,
    /// Additive increase R_AI of the target rate. Preset: paper 40 Mbps; HPCC 5 Mbps per
    /// 25 Gbps of link rate; seed 0.0125 Gbps or 0.0125 × link rate (`seed_reading.ai`).
    pub rate_ai: Option<BitsPerSec>,
    /// Hyper increase R_HAI. Preset: paper 200 Mbps; HPCC 50 Mbps per 25 Gbps of link
    /// rate; seed 0.025 Gbps or 0.025 × link rate.
    pub rate_hai: Option<BitsPerSec>,
    /// How hyper increase grows the target. Preset: paper and seed `multiplied`; HPCC
    /// `constant`.
    pub hyper_increase: Option<HyperIncrease>,
    /// Floor of the rate. Preset: paper and seed 100 Mbps; HPCC 1 Gbps.
    pub min_rate: Option<BitsPerSec>,
    /// The notification point sends a flow at most one CNP per this interval; 0: one for
    /// every marked packet. Preset: paper 50 µs; HPCC 0; seed 4 µs.
    pub cnp_interval: Option<Duration>,
    /// CNPs ride on the ACK or NACK the marked packet triggers, as a flag, instead of
    /// being frames of their own (a marked packet that triggers neither notifies nothing).
    /// Preset: HPCC true; paper and seed false.
    pub cnp_on_ack: Option<bool>,
    /// A flow stops sending while its bytes in flight reach this window, given as the
    /// time the link rate takes to send it (15 µs = 187.5 KB at 100 Gbps); 0: no window.
    /// Preset: paper, HPCC 0; seed 15 µs; `hpcc_mellanox_win` has no value: HPCC uses
    /// the network's largest base RTT (`third.cc:910-930`), so set yours.
    pub window: Option<Duration>,
    /// The window shrinks with the rate: window × rate / link rate (HPCC `VarWin`,
    /// `rdma-queue-pair.cc:125-137`). Preset: `hpcc_mellanox_win` true; others false.
    pub window_scales_with_rate: Option<bool>,
}

/// InfiniBand's local ACK timeout unit (4.096 µs; the timeout is this × 2^n), in ps.
pub const IB_ACK_TIMEOUT_UNIT_PS: u64 = 4_096_000;

/// Named DCQCN parameter sets (`docs/model.md`, "RoCE with DCQCN", has the table).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RocePreset {
    /// The DCQCN paper's algorithm and parameters.
    #[default]
    DcqcnPaper,
    /// HPCC's simulator, Mellanox's version (`run.py --cc dcqcn`): no byte counter, CNP
    /// on every marked ACK, α and rate cut on timers.
    HpccMellanox,
    /// The same with HPCC's window scaled by the rate (`run.py --cc dcqcn_vwin`).
    HpccMellanoxWin,
    /// The SFC seed's backup slide (`003_eda4436261382f03.txt:240-251`).
    SfcSeed,
}

/// Go-back-N or selective repeat.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LossRecovery {
    /// The receiver drops a packet beyond a gap and NACKs the missing PSN; the sender
    /// resends everything from it (RoCE NICs; HPCC `RecoverQueue`, `rdma-hw.cc:495-497`).
    #[default]
    GoBackN,
    /// The receiver keeps packets beyond a gap; the sender resends only the PSN a NACK
    /// names.
    SelectiveRepeat,
}

/// The `sfc_seed` preset's reading of what the slide leaves open (`docs/model.md`, "RoCE
/// with DCQCN", gives the reasoning).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct SeedReading {
    /// What "Timer: 4 us" is: `increase_timer` (default; T, beside "Byte counter" as in
    /// the paper's parameter list; cuts at each CNP) or `decrease_interval` (Mellanox's
    /// `rate_reduce_monitor_period` and HPCC's decrease check; T is then 300 µs).
    pub timer: SeedTimer,
    /// What "AI: 0.0125, Hyper AI: 0.025" are: `gbps` (default; 12.5 and 25 Mbps) or
    /// `line_rate_fraction` (1.25 and 2.5 Gbps at 100 Gbps).
    pub ai: SeedAiUnit,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SeedTimer {
    /// The rate-increase timer T = 4 µs; the rate is cut at each CNP.
    #[default]
    IncreaseTimer,
    /// The decrease check interval = 4 µs; T = 300 µs (ConnectX's `rpg_time_reset` default,
    /// HPCC's `t_inc`).
    DecreaseInterval,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SeedAiUnit {
    /// R_AI = 0.0125 Gbps, R_HAI = 0.025 Gbps.
    #[default]
    Gbps,
    /// R_AI = 0.0125 × link rate, R_HAI = 0.025 × link rate.
    LineRateFraction,
}

impl Default for RoceConfig {
    fn default() -> Self {
        RoceConfig {
            preset: RocePreset::DcqcnPaper,
            header_bytes: 44,
            data_priority: 3,
            control_priority: 7,
            loss_recovery: LossRecovery::GoBackN,
            ack_every_packets: 1,
            nack_interval: Duration::from_us(500),
            rto: Duration(IB_ACK_TIMEOUT_UNIT_PS << 14),
            tx_pipeline_frames: None,
            probes: true,
            seed_reading: SeedReading::default(),
            g: None,
            alpha_init: None,
            alpha_timer: None,
            alpha_update: None,
            decrease_interval: None,
            clamp_target: None,
            fast_recovery_steps: None,
            increase_timer: None,
            byte_counter: None,
            rate_ai: None,
            rate_hai: None,
            hyper_increase: None,
            min_rate: None,
            cnp_interval: None,
            cnp_on_ack: None,
            window: None,
            window_scales_with_rate: None,
        }
    }
}

/// Every setting decided.
#[derive(Clone, Debug, PartialEq)]
pub struct RoceSettings {
    pub header_bytes: u16,
    pub data_priority: u8,
    pub control_priority: u8,
    pub loss_recovery: LossRecovery,
    pub ack_every_packets: u32,
    pub nack_interval: Duration,
    pub rto: Duration,
    /// `None`: derived from the host's send path where the host is built.
    pub tx_pipeline_frames: Option<u32>,
    pub probes: bool,
    pub dcqcn: DcqcnParams,
}

/// A RoCE setting out of range: the field and how to fix it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RoceConfigError {
    #[error("{field} = {value}; 802.1Q priorities are 0..7")]
    Priority { field: &'static str, value: u8 },
    #[error("control_priority = {control}; must differ from data_priority ({data}) so PFC can pause data and never the ACKs, NACKs and CNPs")]
    SameClass { control: u8, data: u8 },
    #[error("header_bytes = 0; RoCEv2 frames carry IP, UDP and BTH headers (44 B with the ICRC)")]
    NoHeader,
    #[error("tx_pipeline_frames = 0; the NIC holds at least the frame it sends (1, or leave it unset to derive it from the send path)")]
    NoPipeline,
    #[error("{field} = 0; the interval must be positive, e.g. \"55us\"")]
    ZeroTime { field: &'static str },
    #[error("g = {0}; the EWMA gain must be in (0, 1], e.g. 0.00390625 (1/256)")]
    Gain(f64),
    #[error("alpha_init = {0}; α must be in [0, 1] (1 as the paper, HPCC and Mellanox)")]
    AlphaInit(f64),
    #[error("min_rate = {min}; must be positive and at most the link rate {line}")]
    MinRate { min: BitsPerSec, line: BitsPerSec },
    #[error("preset hpcc_mellanox_win needs `window`: HPCC sets it to the network's largest base RTT (third.cc:910-930); set window = \"<your base RTT>\", e.g. \"12us\"")]
    WindowRequired,
    #[error("seed_reading is read only by preset sfc_seed (preset here: {0:?}); remove it or set preset = \"sfc_seed\"")]
    SeedReadingUnused(RocePreset),
}

impl RoceConfig {
    pub fn l4(&self) -> L4Headers {
        L4Headers::Bytes { bytes: self.header_bytes }
    }

    /// The settings for a host whose link runs at `line_rate`: the preset fills unset
    /// DCQCN fields; each value checked.
    pub fn resolve(&self, line_rate: BitsPerSec) -> Result<RoceSettings, RoceConfigError> {
        if self.preset != RocePreset::SfcSeed && self.seed_reading != SeedReading::default() {
            return Err(RoceConfigError::SeedReadingUnused(self.preset));
        }
        let p = presets::preset(self.preset, self.seed_reading, line_rate);
        let d = DcqcnParams {
            line_rate,
            g: self.g.unwrap_or(p.g),
            alpha_init: self.alpha_init.unwrap_or(p.alpha_init),
            alpha_timer: self.alpha_timer.unwrap_or(p.alpha_timer),
            alpha_update: self.alpha_update.unwrap_or(p.alpha_update),
            decrease_interval: self.decrease_interval.unwrap_or(p.decrease_interval),
            clamp_target: self.clamp_target.unwrap_or(p.clamp_target),
            fast_recovery_steps: self.fast_recovery_steps.unwrap_or(p.fast_recovery_steps),
            increase_timer: self.increase_timer.unwrap_or(p.increase_timer),
            byte_counter: self.byte_counter.map_or(p.byte_counter, |b| (b.0 > 0).then_some(b)),
            rate_ai: self.rate_ai.unwrap_or(p.rate_ai),
            rate_hai: self.rate_hai.unwrap_or(p.rate_hai),
            hyper_increase: self.hyper_increase.unwrap_or(p.hyper_increase),
            min_rate: self.min_rate.unwrap_or(p.min_rate),
            cnp_interval: self.cnp_interval.unwrap_or(p.cnp_interval),
            cnp_on_ack: self.cnp_on_ack.unwrap_or(p.cnp_on_ack),
            window: match self.window {
                Some(t) => presets::window_at(line_rate, t),
                None if self.preset == RocePreset::HpccMellanoxWin => return Err(RoceConfigError::WindowRequired),
                None => p.window,
            },
            window_scales_with_rate: self.window_scales_with_rate.unwrap_or(p.window_scales_with_rate),
        };
        let s = RoceSettings {
            header_bytes: self.header_bytes,
            data_priority: self.data_priority,
            control_priority: self.control_priority,
            loss_recovery: self.loss_recovery,
            ack_every_packets: self.ack_every_packets,
            nack_interval: self.nack_interval,
            rto: self.rto,
            tx_pipeline_frames: self.tx_pipeline_frames,
            probes: self.probes,
            dcqcn: d,
        };
        s.validate()?;
        Ok(s)
    }
}

impl RoceSettings {
    /// The DCQCN layer's settings (RoCE runs over that layer).
    pub fn layer(&self) -> crate::layer::dcqcn::DcqcnLayerConfig {
        crate::layer::dcqcn::DcqcnLayerConfig { params: self.dcqcn.clone(), tx_pipeline_frames: self.tx_pipeline_frames, probes: self.probes }
    }

    fn validate(&self) -> Result<(), RoceConfigError> {
        for (field, value) in [("data_priority", self.data_priority), ("control_priority", self.control_priority)] {
            if value > 7 {
                return Err(RoceConfigError::Priority { field, value });
            }
        }
        if self.control_priority == self.data_priority {
            return Err(RoceConfigError::SameClass { control: self.control_priority, data: self.data_priority });
        }
        if self.header_bytes == 0 {
            return Err(RoceConfigError::NoHeader);
        }
        if self.tx_pipeline_frames == Some(0) {
            return Err(RoceConfigError::NoPipeline);
        }
        let d = &self.dcqcn;
        for (field, t) in [("nack_interval", self.nack_interval), ("alpha_timer", d.alpha_timer), ("increase_timer", d.increase_timer)] {
            if t.0 == 0 {
                return Err(RoceConfigError::ZeroTime { field });
            }
        }
        if !(d.g > 0.0 && d.g <= 1.0) {
            return Err(RoceConfigError::Gain(d.g));
        }
        if !(0.0..=1.0).contains(&d.alpha_init) {
            return Err(RoceConfigError::AlphaInit(d.alpha_init));
        }
        if d.min_rate.0 == 0 || d.min_rate > d.line_rate {
            return Err(RoceConfigError::MinRate { min: d.min_rate, line: d.line_rate });
        }
        Ok(())
    }
}
