//! pHost (Gao, Narayan, Kumar, Ratnasamy, Shenker; CoNEXT 2015): receiver-driven
//! transport with tokens, over a network that only needs two priority levels and packet
//! spraying. Implemented after the paper and its reference simulator YAPS
//! (`NetSys/simulator` @ 179b64e, `ext/capabilityflow.cpp`, `ext/capabilityhost.cpp`),
//! with file and line beside each rule; `docs/model.md`, "pHost", gives the choices and
//! the differences kept on purpose.
//!
//! - Sender ([`sender`]): an RTS carrying the size; free packets before any token
//!   (`free_tokens`); tokens that expire; SRPT among flows holding tokens; one data packet
//!   in the NIC at a time.
//! - Receiver ([`receiver`]): one token per MTU wire time to the chosen flow (SRPT, or
//!   round robin with `preset = "polo"`), a window of unanswered tokens per flow, a
//!   re-grant of missing packets after the last token, the ACK.
//! - Control (RTS, tokens, ACKs) at `control_priority`, data at `data_priority`; packet
//!   spraying (`paths`).
//!
//! Probe: `phost_sender_fct_ns` (flow = message id; the flow's completion time when its
//! ACK reaches the sender, YAPS's FCT). Counters: [`PhostStats`] (summary key `phost`).

pub mod config;
pub mod receiver;
pub mod sender;
pub mod wire;

pub use config::{FreeTokens, PhostConfig, PhostConfigError, PhostPreset, TokenScheduling};

use crate::config::EcmpMode;
use crate::error::{invalid, BuildError};
use crate::framing::L4Headers;
use crate::packet::Packet;
use crate::transport::{Actions, HostSite, HostView, ModuleStats, MsgInfo, Protocol, StatsSection, Transport};
use crate::units::SimTime;
use config::Params;
use receiver::Receiver;
use sender::Sender;
use wire::Frame;

crate::counters! {
    /// pHost counters (per host, or summed over a run).
    #[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
    pub struct PhostStats {
        /// Messages started by senders / delivered by receivers.
        pub messages_sent: u64,
        pub messages_received: u64,
        /// RTS packets sent at flow starts / again after `rts_timeout`.
        pub rts_sent: u64,
        pub rts_resent: u64,
        /// Tokens sent by receivers / received by senders / expired unused at senders (the
        /// free tokens a sender gives itself at a flow's start included, so it can exceed
        /// `tokens_received`).
        pub tokens_sent: u64,
        pub tokens_received: u64,
        pub tokens_expired: u64,
        /// Token slots skipped for free packets on their way (YAPS `hold_on`).
        pub held_slots: u64,
        /// Data packets sent (resends included), of which on free tokens.
        pub data_sent: u64,
        pub free_data_sent: u64,
        /// Data packets sent beyond each acknowledged flow's packet count.
        pub data_resent: u64,
        /// Data packets received, and those already received or of a delivered message.
        pub data_received: u64,
        pub duplicates: u64,
        /// Re-grants of missing packets after the resend timeout.
        pub regrants: u64,
        /// Windows relaxed after the window timeout.
        pub window_relaxed: u64,
        /// ACKs sent by receivers (repeats included) / received by senders for a live flow.
        pub acks_sent: u64,
        pub acks_received: u64,
        /// Tokens or ACKs about a flow the sender no longer has.
        pub stale_control: u64,
    }
}

impl StatsSection for PhostStats {}


/// The pHost module.
pub struct Phost;

impl Transport for Phost {
    type Config = PhostConfig;
    type Host = Box<PhostHost>;
    type Stats = PhostStats;

    fn l4(cfg: &PhostConfig) -> L4Headers {
        cfg.l4()
    }

    fn host(cfg: &PhostConfig, at: &HostSite<'_>) -> Result<Box<PhostHost>, BuildError> {
        let max_payload = at.max_payload(cfg.l4());
        let frame = at.net.framing.wire_bytes(cfg.l4(), max_payload);
        let params = cfg.resolve(max_payload, frame, at.host_rate).map_err(|e| invalid(at.field, e.to_string()))?;
        Ok(Box::new(PhostHost::new(params)))
    }

    fn report(host: &Box<PhostHost>, stats: &mut ModuleStats) {
        stats.phost.get_or_insert_default().add(host.stats());
    }

    /// Every message is taken whole and the thread released at once (no send buffer).
    fn holds_thread(_cfg: &PhostConfig) -> bool {
        false
    }
    fn paths(cfg: &PhostConfig) -> Option<EcmpMode> {
        Some(cfg.paths)
    }
}

/// What both halves read.
pub(crate) struct Ctx {
    pub params: Params,
    pub stamp: wire::Stamp,
}

/// pHost on one host: a sender and a receiver. Timer ids: 0 is the receiver's token
/// pacer, `1 + i` sender flow `i`'s RTS timeout (indices are recycled).
pub struct PhostHost {
    ctx: Ctx,
    sender: Sender,
    receiver: Receiver,
    stats: PhostStats,
}

impl PhostHost {
    pub fn new(params: Params) -> PhostHost {
        let stamp = wire::Stamp { l4: params.l4, data: params.data_priority, control: params.control_priority };
        PhostHost { ctx: Ctx { params, stamp }, sender: Sender::new(), receiver: Receiver::new(), stats: PhostStats::default() }
    }

    pub fn stats(&self) -> &PhostStats {
        &self.stats
    }

    /// Flows this host sends whose ACK has not arrived.
    pub fn unacknowledged(&self) -> usize {
        self.sender.live()
    }

    /// Flows this host receives that are not complete.
    pub fn receiving(&self) -> usize {
        self.receiver.live()
    }
}

impl Protocol for PhostHost {
    fn on_message(&mut self, now: SimTime, msg: &MsgInfo, out: &mut Actions) {
        self.sender.on_message(now, &self.ctx, msg, &mut self.stats, out);
    }

    fn on_packet(&mut self, now: SimTime, pkt: &Packet, _view: &HostView, out: &mut Actions) {
        let Some(f) = wire::decode(pkt) else { return };
        let (ctx, st) = (&self.ctx, &mut self.stats);
        match f {
            Frame::Rts { .. } => self.receiver.on_rts(now, ctx, pkt.src, &f, st, out),
            Frame::Data { .. } => self.receiver.on_data(now, ctx, pkt, &f, st, out),
            Frame::Token { .. } => self.sender.on_token(now, ctx, &f, st, out),
            Frame::Ack { msg, .. } => self.sender.on_ack(now, msg, st, out),
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

    fn on_tx_done(&mut self, now: SimTime, _pkt: &Packet, out: &mut Actions) {
        self.sender.on_tx_done(now, &self.ctx, &mut self.stats, out);
    }
}
