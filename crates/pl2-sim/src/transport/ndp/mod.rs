//! NDP: receiver-pulled transport over trimming switches (Handley, Raiciu, Agache,
//! Voinescu, Moore, Antichi, Wójcik, "Re-architecting datacenter networks and stacks for
//! low latency and high performance", SIGCOMM 2017), reproducing htsim's NDP
//! (Broadcom/csg-htsim 841d9e7, `sim/ndp.cpp`; reading notes in
//! `/work/notes/ndp-htsim-reference.md`, cited as file:line there and here).
//!
//! What the paper says, and where it is implemented:
//! - §3.1 The sender starts a message with a full initial window at line rate, sprayed
//!   over every path ([`sender`], [`paths`]); its data frames are `TRIMMABLE`, so a full
//!   switch queue cuts them to their header instead of dropping them (the trimming queue
//!   is the switch's, not NDP's).
//! - §3.2 The receiver ACKs every data packet, NACKs every header, and paces PULLs so
//!   that the senders together fill its link and no more ([`receiver`], [`pacer`]); a
//!   PULL lets its sender send one packet, a NACKed one first.
//! - §3.2 A header that overflows a header queue is returned to its sender if the switch
//!   is set to (`header_overflow = "return_to_sender"`); the sender queues its resend and
//!   sends it at once only when no pull is coming or the path looks bad (htsim
//!   `processRTS` with `SWALLOW`). A header that is dropped is recovered by the sender's
//!   timeout (htsim's `RESEND_ON_TIMEOUT`).
//!
//! Identity and paths: with source-chosen paths (`paths = "permute"` or `"random"`, the
//! default) the frame's `flow` field carries the path number the switches decode, so a
//! message is named by `msg`/`msg_gen` (the engine's slot and generation) and a packet by
//! `seq`; the trace's flow column shows path numbers for NDP, and faults that name a flow
//! (`DropNth`, `DropControl`) name a path number. With switch-chosen paths `flow` is the
//! message id's low 32 bits. The wire layout is in [`wire`].
//!
//! Counters: [`NdpStats`], summed over hosts into the run's
//! [`crate::transport::ModuleStats`] (summary key `ndp`).

pub mod config;
mod pacer;
mod paths;
mod receiver;
mod rtt;
mod sender;
pub mod wire;

pub use config::{NdpConfig, NdpConfigError, NdpPaths, NdpPreset, NdpSettings, PullOrder, PullSpacing};

use crate::config::EcmpMode;
use crate::error::{invalid, BuildError};
use crate::framing::L4Headers;
use crate::packet::{flags, Packet};
use crate::transport::{Actions, HostSite, HostView, ModuleStats, MsgInfo, Protocol, StatsSection, Transport};
use crate::units::{BitsPerSec, Duration, SimTime};
use receiver::Receiver;
use sender::Sender;
use wire::Frame;

crate::counters! {
    /// NDP counters (per host, or summed over a run).
    #[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
    pub struct NdpStats {
        /// Messages started by senders / whose final cumulative ACK reached the sender /
        /// delivered by receivers.
        pub messages_sent: u64,
        pub messages_acked: u64,
        pub messages_received: u64,
        /// New data packets sent (first transmissions).
        pub data_sent: u64,
        /// Data packets resent on a pull (after a NACK or a returned header) / by the timeout
        /// / at once on a returned header.
        pub retransmissions_pulled: u64,
        pub retransmissions_rto: u64,
        pub retransmissions_returned: u64,
        /// Returned headers senders got.
        pub headers_returned: u64,
        /// Timeouts that expired (each resends every overdue packet, possibly none).
        pub timeouts: u64,
        /// ACKs and NACKs receivers sent (after a delivery too).
        pub acks_sent: u64,
        pub nacks_sent: u64,
        /// PULL frames the pacers sent / ACKs and NACKs that carried the pull themselves.
        pub pulls_sent: u64,
        pub pulls_piggybacked: u64,
        /// Queued PULLs discarded when their message completed.
        pub pulls_flushed: u64,
        /// ACKs, NACKs and PULLs senders received.
        pub acks_received: u64,
        pub nacks_received: u64,
        pub pulls_received: u64,
        /// Trimmed headers receivers got.
        pub trimmed_received: u64,
        /// Data packets received again (or for a delivered message).
        pub duplicates: u64,
        /// Pull credit senders held unused when their message finished (pulls beyond what
        /// they had to send).
        pub pull_credit_unused: u64,
        /// ACKs, NACKs and PULLs for a message the sender has finished.
        pub stale_control: u64,
    }
}

impl StatsSection for NdpStats {}


/// The NDP module.
pub struct Ndp;

impl Transport for Ndp {
    type Config = NdpConfig;
    type Host = Box<NdpHost>;
    type Stats = NdpStats;

    fn l4(cfg: &NdpConfig) -> L4Headers {
        cfg.l4()
    }

    fn host(cfg: &NdpConfig, at: &HostSite<'_>) -> Result<Box<NdpHost>, BuildError> {
        let s = cfg.resolve().map_err(|e| invalid(at.field, e.to_string()))?;
        let l4 = cfg.l4();
        let max_payload = at.max_payload(l4);
        if max_payload == 0 {
            return Err(invalid(
                format!("{}.header_bytes", at.field),
                format!("{} leaves no payload under the network's MTU of {} B; lower it or raise network.mtu", cfg.header_bytes, at.net.mtu.0),
            ));
        }
        let framing = at.net.framing;
        let data = framing.wire_bytes(l4, max_payload);
        let spacing = match s.pull_spacing {
            PullSpacing::DataFrame => data,
            PullSpacing::DataAndControl => data + framing.wire_bytes(l4, 0),
        };
        let drain = pacer::drain_time(at.link_rate, spacing, s.pull_rate_modifier);
        let ctx = Ctx {
            stamp: wire::Stamp { l4, data: s.data_priority, control: s.control_priority },
            cfg: s,
            max_payload,
            host_rate: at.link_rate,
            paths: at.paths,
        };
        Ok(Box::new(NdpHost::new(ctx, drain, at)))
    }

    fn report(host: &Box<NdpHost>, stats: &mut ModuleStats) {
        stats.ndp.get_or_insert_default().add(host.stats());
    }

    /// Every message is taken whole and the thread released at once (no send buffer).
    fn holds_thread(_cfg: &NdpConfig) -> bool {
        false
    }
    fn paths(cfg: &NdpConfig) -> Option<EcmpMode> {
        Some(match cfg.paths {
            NdpPaths::Permute | NdpPaths::Random => EcmpMode::Source,
            NdpPaths::PerFlow => EcmpMode::PerFlow,
            NdpPaths::PerPacket => EcmpMode::PerPacket,
            NdpPaths::RoundRobin => EcmpMode::RoundRobin,
        })
    }
}

/// What both halves read.
pub(crate) struct Ctx {
    pub cfg: NdpSettings,
    pub stamp: wire::Stamp,
    pub max_payload: u64,
    /// The host's link rate (the NIC's serialisation).
    pub host_rate: BitsPerSec,
    /// Path numbers for source-chosen paths.
    pub paths: u32,
}

/// NDP on one host: a sender, a receiver with its pull pacer. Timer ids: 0 is the pacer,
/// `1 + i` sender flow `i`'s timeout (indices are recycled).
pub struct NdpHost {
    ctx: Ctx,
    sender: Sender,
    receiver: Receiver,
    stats: NdpStats,
}

impl NdpHost {
    fn new(ctx: Ctx, drain: Duration, at: &HostSite<'_>) -> NdpHost {
        let sender = Sender::new(at.rng("paths"), at.rng("rto"));
        let receiver = Receiver::new(pacer::Pacer::new(drain), at.rng("ack_paths"));
        NdpHost { ctx, sender, receiver, stats: NdpStats::default() }
    }

    pub fn stats(&self) -> &NdpStats {
        &self.stats
    }

    /// The pull pacer's spacing.
    pub fn pull_drain(&self) -> Duration {
        self.receiver.drain()
    }

    /// Messages this host sent whose final cumulative ACK has not arrived.
    pub fn unacknowledged(&self) -> usize {
        self.sender.live()
    }
}

impl Protocol for NdpHost {
    fn on_message(&mut self, now: SimTime, msg: &MsgInfo, out: &mut Actions) {
        self.sender.on_message(now, &self.ctx, msg, &mut self.stats, out);
    }

    fn on_packet(&mut self, now: SimTime, pkt: &Packet, _view: &HostView, out: &mut Actions) {
        let (ctx, st) = (&self.ctx, &mut self.stats);
        let Some(frame) = wire::decode(pkt) else { return };
        match frame {
            Frame::Data(d) => self.receiver.on_data(now, ctx, pkt.src, pkt.flow, &d, false, u64::from(pkt.payload), st, out),
            Frame::Header(d) => self.receiver.on_data(now, ctx, pkt.src, pkt.flow, &d, true, 0, st, out),
            Frame::Returned(d) => self.sender.on_returned(now, ctx, &d, st, out),
            Frame::Ctl(c) => self.sender.on_ctl(now, ctx, &c, st, out),
        }
    }

    fn on_timer(&mut self, now: SimTime, id: u32, out: &mut Actions) {
        if id == receiver::PACER_TIMER {
            self.receiver.on_timer(now, &self.ctx, &mut self.stats, out);
        } else {
            self.sender.on_timer(now, &self.ctx, id, &mut self.stats, out);
        }
    }

    fn on_tx_dequeue(&mut self, _now: SimTime, _thread: u16, _out: &mut Actions) {}

    fn on_tx_done(&mut self, now: SimTime, pkt: &Packet, _out: &mut Actions) {
        if pkt.has(flags::NOTIFY_TX_DONE) {
            self.sender.on_tx_done(now, &self.ctx, pkt);
        }
    }
}

#[cfg(test)]
mod tests;
