//! RoCE-like transport with DCQCN: RDMA writes cut at the MTU, sent by a per-flow rate
//! pacer, recovered by go-back-N on NACK (selective repeat as an option), under DCQCN
//! congestion control (Zhu et al., "Congestion Control for Large-Scale RDMA
//! Deployments", SIGCOMM 2015). It runs with or without PFC in the network: data rides
//! in a lossless class (priority 3 by default), ACKs, NACKs and CNPs in a class PFC
//! never pauses (7).
//!
//! Where each part of DCQCN is:
//! - Congestion point: the switches' ECN marking of ECT frames (`[network.switch] ecn =
//!   { kind = "red", min, max, p_max, at_dequeue = true }`; a step when `min = max`), not
//!   this module. Only data frames are ECT ([`wire`]).
//! - Notification point: the receiver's CNPs ([`receiver`]).
//! - Reaction point: [`dcqcn`], one per flow, driving the sender's pacer ([`sender`]).
//!
//! Pacing is done inside the transport with a timer, not by the host layer designed in
//! `docs/architecture.md` (which is not built yet): the sender keeps up to
//! `tx_pipeline_frames` data frames between itself and the wire (one with no send path)
//! and releases the next when the line and its flow's rate allow (see [`sender`]).
//! A flow is one message (its own QP, as in HPCC's simulator), starting at line rate.
//!
//! Source Flow Control (`sim/sfc.rs`): a switch's SFC signal names the flow of the data
//! frame that triggered it; the sender pauses that flow alone for the signal's duration
//! ([`sender`]); the host's other flows keep their pacing.
//!
//! Settings: [`RoceConfig`] with `preset` (the paper, HPCC's Mellanox version with and
//! without window, the SFC seed); choices the sources leave open are documented there
//! and in `docs/model.md`, "RoCE with DCQCN". Probes (flow = message id):
//! `roce_rate_bps`, `roce_target_bps`, `roce_alpha` at every rate change. Counters:
//! [`RoceStats`] (summary key `roce`).

pub mod config;
pub mod dcqcn;
mod presets;
mod receiver;
mod sender;
pub mod wire;

#[cfg(test)]
mod tests;

pub use config::{
    AlphaUpdate, ClampTarget, DcqcnParams, HyperIncrease, LossRecovery, RoceConfig, RoceConfigError, RocePreset, RoceSettings, SeedAiUnit, SeedReading,
    SeedTimer,
};

use crate::error::{invalid, BuildError};
use crate::framing::{Framing, L4Headers};
use crate::packet::{flags, Packet};
use crate::transport::{Actions, HostSite, HostView, ModuleStats, MsgInfo, Protocol, StatsSection, Transport};
use crate::units::{BitsPerSec, Duration, SimTime};
use receiver::Receiver;
use sender::Sender;
use wire::Frame;

crate::counters! {
    /// RoCE counters (per host, or summed over a run).
    #[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
    pub struct RoceStats {
        /// Messages started / whose last acknowledgement reached the sender / delivered.
        pub messages_sent: u64,
        pub messages_acked: u64,
        pub messages_received: u64,
        /// Data packets sent the first time / again (go-back-N, selective repeat, timeout).
        pub data_sent: u64,
        pub retransmissions: u64,
        /// ACKs and NACKs receivers sent / senders received.
        pub acks_sent: u64,
        pub acks_received: u64,
        pub nacks_sent: u64,
        pub nacks_received: u64,
        /// NACKs that rewound a go-back-N sender.
        pub go_back_n_rewinds: u64,
        /// Timeouts that found packets unacknowledged.
        pub timeouts: u64,
        /// Data packets received twice (or for a delivered message) / beyond a gap.
        pub duplicates: u64,
        pub out_of_order: u64,
        /// Marked (CE) data packets received.
        pub marked_packets: u64,
        /// CNPs sent by notification points (frames, or flags on ACKs) / received by senders.
        pub cnps_sent: u64,
        pub cnps_received: u64,
        /// Rate cuts, and cuts that hit the minimum rate.
        pub rate_decreases: u64,
        pub min_rate_reached: u64,
        /// Rate-increase events by phase.
        pub fast_recovery_steps: u64,
        pub additive_increases: u64,
        pub hyper_increases: u64,
        /// ACKs, NACKs or CNPs for a message the sender no longer has.
        pub stale_control: u64,
        /// SFC signals that paused one of the host's flows / named a flow it no longer has.
        pub sfc_pauses: u64,
        pub sfc_stale: u64,
        /// Time SFC signals added to flows' pauses (ps; overlapping pauses counted once).
        pub sfc_paused_ps: u64,
    }
}

impl StatsSection for RoceStats {}


/// The RoCE module.
pub struct Roce;

impl Transport for Roce {
    type Config = RoceConfig;
    type Host = Box<RoceHost>;
    type Stats = RoceStats;

    fn l4(cfg: &RoceConfig) -> L4Headers {
        cfg.l4()
    }

    fn host(cfg: &RoceConfig, at: &HostSite<'_>) -> Result<Box<RoceHost>, BuildError> {
        let settings = cfg.resolve(at.link_rate).map_err(|e| invalid(at.field, e.to_string()))?;
        let hc = &at.net.host;
        let path = [&hc.send_cpu_per_packet, &hc.send_cpu_per_burst, &hc.send_latency];
        let min = Duration(path.iter().map(|d| d.min().0).sum());
        let bound = path.iter().map(|d| d.bound().0).sum::<u64>();
        let max_payload = at.max_payload(cfg.l4());
        let full = at.link_rate.tx_time(at.net.framing.wire_bytes(cfg.l4(), max_payload)).0.max(1);
        let frames = settings.tx_pipeline_frames.unwrap_or(1 + bound.div_ceil(full) as u32);
        Ok(Box::new(RoceHost::new(settings, max_payload, at.link_rate).with_tx_path(at.net.framing, min, frames)))
    }

    fn report(host: &Box<RoceHost>, stats: &mut ModuleStats) {
        stats.roce.get_or_insert_default().add(host.stats());
    }

    /// A write is posted whole and the thread released at once (no send queue bound).
    fn holds_thread(_cfg: &RoceConfig) -> bool {
        false
    }
}

/// What both halves read.
pub(crate) struct Ctx {
    pub settings: RoceSettings,
    pub stamp: wire::Stamp,
    pub max_payload: u64,
    /// The host's link rate: line rate, and the serialisation time of its frames.
    pub link_rate: BitsPerSec,
    /// The network's framing (a data frame's wire bytes when the pacer picks it).
    pub framing: Framing,
    /// The send path's shortest delay (CPU costs and latency) and the data frames the
    /// NIC holds between the pacer and the wire (`RoceConfig::tx_pipeline_frames`).
    pub path_min: Duration,
    pub pipeline: u32,
}

/// RoCE on one host: a sender and a receiver. Timer ids: 0 the sender's pacing timer,
/// `1 + 4i + k` sender flow `i`'s α (k = 0), rate-decrease check (1), rate increase (2)
/// and retransmission timeout (3) timers (flow indices are recycled).
pub struct RoceHost {
    ctx: Ctx,
    sender: Sender,
    receiver: Receiver,
    stats: RoceStats,
}

impl RoceHost {
    pub fn new(settings: RoceSettings, max_payload: u64, link_rate: BitsPerSec) -> RoceHost {
        let stamp = wire::Stamp {
            l4: crate::framing::L4Headers::Bytes { bytes: settings.header_bytes },
            data: settings.data_priority,
            control: settings.control_priority,
        };
        let ctx = Ctx { settings, stamp, max_payload, link_rate, framing: Framing::default(), path_min: Duration::ZERO, pipeline: 1 };
        RoceHost { ctx, sender: Sender::new(), receiver: Receiver::new(), stats: RoceStats::default() }
    }

    /// The host's framing, its send path's shortest delay and the NIC's transmit pipeline
    /// depth (`new` assumes default framing, no send path and one frame).
    pub fn with_tx_path(mut self, framing: Framing, path_min: Duration, frames: u32) -> RoceHost {
        self.ctx.framing = framing;
        self.ctx.path_min = path_min;
        self.ctx.pipeline = frames.max(1);
        self
    }

    pub fn stats(&self) -> &RoceStats {
        &self.stats
    }

    /// Messages this host sent whose last acknowledgement has not arrived.
    pub fn unacknowledged(&self) -> usize {
        self.sender.live()
    }

    /// (rate in bit/s, target in bit/s, α) of the flow sending message (`slot`, `gen`).
    pub fn rate_of(&self, slot: u32, gen: u16) -> Option<(u64, u64, f64)> {
        self.sender.rate_of(slot, gen)
    }
}

impl Protocol for RoceHost {
    fn on_message(&mut self, now: SimTime, msg: &MsgInfo, out: &mut Actions) {
        self.sender.on_message(now, &self.ctx, msg, &mut self.stats, out);
    }

    fn on_packet(&mut self, now: SimTime, pkt: &Packet, _view: &HostView, out: &mut Actions) {
        if let Some((msg, pause_ps)) = wire::sfc_pause(pkt) {
            return self.sender.on_sfc(now, &self.ctx, msg, pause_ps, &mut self.stats, out);
        }
        let Some(f) = wire::decode(pkt) else { return };
        match f {
            Frame::Data { msg, size, psn, .. } => self.receiver.on_data(now, &self.ctx, pkt.src, msg, size, psn, pkt.has(flags::CE), &mut self.stats, out),
            _ => self.sender.on_frame(now, &self.ctx, &f, &mut self.stats, out),
        }
    }

    fn on_timer(&mut self, now: SimTime, id: u32, out: &mut Actions) {
        if id == sender::PACING_TIMER {
            self.sender.on_pacing_timer(now, &self.ctx, &mut self.stats, out);
        } else {
            self.sender.on_timer(now, &self.ctx, id, &mut self.stats, out);
        }
    }

    fn on_tx_dequeue(&mut self, _now: SimTime, _thread: u16, _out: &mut Actions) {}

    fn on_tx_done(&mut self, now: SimTime, pkt: &Packet, out: &mut Actions) {
        self.sender.on_tx_done(now, &self.ctx, pkt, &mut self.stats, out);
    }
}
