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
//! - Reaction point: the DCQCN host layer below RoCE (`layer/dcqcn/`): a rate limiter
//!   per flow and the NIC's scheduler, which pulls RoCE's frames (the host layer paces);
//!   CNPs are consumed there and never reach this module. RoCE declares the layer with
//!   the DCQCN parameters its `preset` and fields decide ([`Roce`]'s `Transport::layer`).
//!
//! The sender is a frame source for that layer: it says when each flow may send (work,
//! window, SFC pause) and builds the flow's next frame when the layer picks it (see
//! [`sender`]). A flow is one message (its own QP, as in HPCC's simulator), starting at
//! line rate.
//!
//! Source Flow Control (`sim/sfc.rs`): a switch's SFC signal names the flow of the data
//! frame that triggered it; the sender pauses that flow alone for the signal's duration
//! ([`sender`]); the host's other flows keep their pacing.
//!
//! Settings: [`RoceConfig`] with `preset` (the paper, HPCC's Mellanox version with and
//! without window, the SFC seed); choices the sources leave open are documented there
//! and in `docs/model.md`, "RoCE with DCQCN". Probes (flow = message id):
//! `roce_rate_bps`, `roce_target_bps`, `roce_alpha` at every rate change (published by the
//! layer). Counters: [`RoceStats`] (summary key `roce`; DCQCN's are the layer's, `dcqcn`).

pub mod config;
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
use crate::layer::LayerConfig;
use crate::packet::{flags, Packet};
use crate::transport::{Actions, HostSite, HostView, ModuleStats, MsgInfo, Protocol, Pulled, StatsSection, Transport};
use crate::units::{BitsPerSec, SimTime};
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
        /// CNPs sent by notification points (frames, or flags on ACKs; the DCQCN layer's
        /// `cnps_received` counts them at the senders).
        pub cnps_sent: u64,
        /// ACKs or NACKs for a message the sender no longer has.
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
        let max_payload = at.max_payload(cfg.l4());
        Ok(Box::new(RoceHost::new(settings, max_payload).with_framing(at.net.framing)))
    }

    /// DCQCN's reaction point and the pacing: the DCQCN layer, with the parameters the
    /// preset and the fields decide.
    fn layer(cfg: &RoceConfig, at: &HostSite<'_>) -> Result<Option<LayerConfig>, BuildError> {
        let s = cfg.resolve(at.link_rate).map_err(|e| invalid(at.field, e.to_string()))?;
        Ok(Some(LayerConfig::Dcqcn(s.layer())))
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
    /// The network's framing (a data frame's wire bytes when the layer picks it).
    pub framing: Framing,
}

/// RoCE on one host: a sender and a receiver. Timer id `i`: sender flow `i`'s
/// retransmission timeout (flow indices are recycled); DCQCN's timers are the layer's.
pub struct RoceHost {
    ctx: Ctx,
    sender: Sender,
    receiver: Receiver,
    stats: RoceStats,
}

impl RoceHost {
    pub fn new(settings: RoceSettings, max_payload: u64) -> RoceHost {
        let stamp = wire::Stamp {
            l4: crate::framing::L4Headers::Bytes { bytes: settings.header_bytes },
            data: settings.data_priority,
            control: settings.control_priority,
        };
        let ctx = Ctx { settings, stamp, max_payload, framing: Framing::default() };
        RoceHost { ctx, sender: Sender::new(), receiver: Receiver::new(), stats: RoceStats::default() }
    }

    /// The network's framing (`new` assumes the default).
    pub fn with_framing(mut self, framing: Framing) -> RoceHost {
        self.ctx.framing = framing;
        self
    }

    pub fn stats(&self) -> &RoceStats {
        &self.stats
    }

    /// Messages this host sent whose last acknowledgement has not arrived.
    pub fn unacknowledged(&self) -> usize {
        self.sender.live()
    }
}

impl Protocol for RoceHost {
    fn on_message(&mut self, now: SimTime, msg: &MsgInfo, out: &mut Actions) {
        self.sender.on_message(now, &self.ctx, msg, &mut self.stats, out);
    }

    fn on_packet(&mut self, now: SimTime, pkt: &Packet, _view: &HostView, out: &mut Actions) {
        if let Some((msg, pause_ps)) = wire::sfc_pause(pkt) {
            return self.sender.on_sfc(now, msg, pause_ps, &mut self.stats, out);
        }
        let Some(f) = wire::decode(pkt) else { return };
        match f {
            Frame::Data { msg, size, psn, .. } => self.receiver.on_data(now, &self.ctx, pkt.src, msg, size, psn, pkt.has(flags::CE), &mut self.stats, out),
            _ => self.sender.on_frame(now, &self.ctx, &f, &mut self.stats, out),
        }
    }

    fn on_timer(&mut self, now: SimTime, id: u32, out: &mut Actions) {
        self.sender.on_timer(now, &self.ctx, id, &mut self.stats, out);
    }

    fn on_tx_dequeue(&mut self, _now: SimTime, _thread: u16, _out: &mut Actions) {}

    fn sendable(&self, flow: (u32, u16), rate: BitsPerSec) -> Option<SimTime> {
        self.sender.sendable(&self.ctx, flow, rate)
    }

    fn pull(&mut self, now: SimTime, flow: (u32, u16), out: &mut Actions) -> Option<Pulled> {
        self.sender.pull(now, &self.ctx, flow, &mut self.stats, out)
    }
}
