//! The DCQCN layer: DCQCN's reaction point (Zhu et al., "Congestion Control for
//! Large-Scale RDMA Deployments", SIGCOMM 2015, §3.1) as a host layer, with the rate
//! limiters it drives. Per flow (one message, its own QP as in HPCC's simulator) it keeps
//! the reaction point's state ([`rp`]) and a rate limiter; per host, the NIC's scheduler
//! that picks the next frame ([`pacer`]). CNPs ([`wire`]) are consumed here and never
//! reach the transport; the notification point stays with the receiving transport (it
//! knows which frames are marked and where its acknowledgements go).
//!
//! The transport over this layer is a frame source: it tells when each of its flows may
//! send ([`crate::transport::Protocol::sendable`]: work to do, window, pauses) and builds
//! the flow's next frame when the pacer picks it ([`crate::transport::Protocol::pull`]),
//! so go-back-N rewinds and acknowledgements take effect up to the pick. Settings:
//! [`DcqcnLayerConfig`] (RoCE's `preset` and DCQCN fields decide them). Probes
//! (flow = message id): `roce_rate_bps`, `roce_target_bps`, `roce_alpha` at every rate
//! change (names kept from when the pacing lived in RoCE). Counters: [`DcqcnStats`]
//! (summary key `dcqcn`).

pub mod pacer;
pub mod params;
pub mod rp;
#[cfg(test)]
pub(crate) mod stack;
#[cfg(test)]
mod tests;
pub mod wire;

pub use pacer::DcqcnHost;
pub use params::{AlphaUpdate, ClampTarget, DcqcnParams, HyperIncrease};

use super::{Layer, LayerStats};
use crate::error::{invalid, BuildError};
use crate::transport::{HostSite, StatsSection};
use crate::units::Duration;

crate::counters! {
    /// DCQCN layer counters (per host, or summed over a run).
    #[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
    pub struct DcqcnStats {
        /// CNPs received (frames, or flags on acknowledgements) for a live flow / for a
        /// flow already finished.
        pub cnps_received: u64,
        pub stale_cnps: u64,
        /// Rate cuts, and cuts that hit the minimum rate.
        pub rate_decreases: u64,
        pub min_rate_reached: u64,
        /// Rate-increase events by phase.
        pub fast_recovery_steps: u64,
        pub additive_increases: u64,
        pub hyper_increases: u64,
    }
}

impl StatsSection for DcqcnStats {}

/// The layer's settings.
#[derive(Clone, Debug, PartialEq)]
pub struct DcqcnLayerConfig {
    /// The reaction point's parameters (a preset applied).
    pub params: DcqcnParams,
    /// Data frames the NIC holds between the pacer and the wire (`None`: one plus the
    /// full frames the send path's longest delay covers).
    pub tx_pipeline_frames: Option<u32>,
    /// Publish the per-flow rate probes.
    pub probes: bool,
}

/// A DCQCN setting the layer cannot run with: the field and how to fix it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DcqcnLayerError {
    #[error("line_rate = 0 bit/s; the reaction point starts every flow at the host's link rate")]
    NoLineRate,
    #[error("min_rate = {min} bit/s is above the line rate ({line} bit/s); set it below")]
    MinAboveLine { min: u64, line: u64 },
    #[error("tx_pipeline_frames = 0; the NIC holds at least the frame it sends (1, or leave it unset to derive it from the send path)")]
    NoPipeline,
    #[error("{field} = 0; the timer would fire without end at one instant (give a positive duration)")]
    ZeroTimer { field: &'static str },
}

impl DcqcnLayerConfig {
    /// Checks what the layer relies on.
    pub fn validate(&self) -> Result<(), DcqcnLayerError> {
        let p = &self.params;
        if p.line_rate.0 == 0 {
            return Err(DcqcnLayerError::NoLineRate);
        }
        if p.min_rate > p.line_rate {
            return Err(DcqcnLayerError::MinAboveLine { min: p.min_rate.0, line: p.line_rate.0 });
        }
        if self.tx_pipeline_frames == Some(0) {
            return Err(DcqcnLayerError::NoPipeline);
        }
        for (field, d) in [("alpha_timer", p.alpha_timer), ("increase_timer", p.increase_timer)] {
            if d == Duration::ZERO {
                return Err(DcqcnLayerError::ZeroTimer { field });
            }
        }
        Ok(())
    }
}

/// The DCQCN layer module.
pub struct Dcqcn;

impl Layer for Dcqcn {
    type Config = DcqcnLayerConfig;
    type Host = Box<DcqcnHost>;
    type Stats = DcqcnStats;

    fn host(cfg: &DcqcnLayerConfig, at: &HostSite<'_>) -> Result<Box<DcqcnHost>, BuildError> {
        cfg.validate().map_err(|e| invalid(at.field, e.to_string()))?;
        let hc = &at.net.host;
        let path = [&hc.send_cpu_per_packet, &hc.send_cpu_per_burst, &hc.send_latency];
        let min = Duration(path.iter().map(|d| d.min().0).sum());
        let bound = path.iter().map(|d| d.bound().0).sum::<u64>();
        // A full frame's wire bytes (the same whatever the headers: the MTU fills it).
        let l4 = crate::framing::L4Headers::None;
        let full = at.link_rate.tx_time(at.net.framing.wire_bytes(l4, at.max_payload(l4))).0.max(1);
        Ok(Box::new(DcqcnHost::new(cfg.clone(), at.link_rate).with_tx_path(min, cfg.tx_pipeline_frames.unwrap_or(1 + bound.div_ceil(full) as u32))))
    }

    fn report(host: &Box<DcqcnHost>, stats: &mut LayerStats) {
        stats.dcqcn.get_or_insert_default().add(host.stats());
    }
}
