//! Homa: a receiver-driven low-latency transport using network priorities (Montazeri,
//! Li, Alizadeh, Ousterhout, SIGCOMM 2018), with the semantics of its reference simulator
//! (PlatformLab/HomaSimulation @ ab09ecb, `RpcTransportDesign/OMNeT++Simulation/
//! homatransport/src/transport/`; file:line citations in each module are to it).
//!
//! What the paper says (§3), and where it is implemented:
//! - A message's first RTTbytes go unscheduled at once (§3.2), at a priority chosen by
//!   its size from cut-offs that split the workload's bytes equally over the unscheduled
//!   levels (§3.4) ([`sender`], [`cutoffs`], [`layout`]).
//! - The receiver grants the rest, one packet per data packet received, keeping at most
//!   RTTbytes of a message granted and not received; SRPT among incoming messages, the
//!   `overcommit` best granted at once, each on its own scheduled level (§3.3-3.5)
//!   ([`receiver`]).
//! - The sender is SRPT among its outgoing messages (§3.6) ([`sender`]).
//! - Loss: the receiver sends RESEND after a timeout; the sender answers with the data
//!   or BUSY; the receiver aborts after repeated timeouts (§3.7).
//!
//! Every choice the paper leaves open follows the simulator; where pl2 differs, the
//! module says so, and `docs/model.md`, "Homa", lists each with its reason. Counters:
//! [`HomaStats`], summed over hosts into [`crate::transport::ModuleStats`] (summary key
//! `homa`).

pub mod config;
pub mod cutoffs;
pub mod layout;
pub mod receiver;
pub mod sender;
pub mod wire;

pub use config::{HomaConfig, HomaConfigError, HomaHeaders, HomaPreset, Params};

use crate::config::EcmpMode;
use crate::error::{invalid, BuildError};
use crate::framing::L4Headers;
use crate::packet::Packet;
use crate::transport::{Actions, HostSite, HostView, ModuleStats, MsgInfo, Protocol, StatsSection, Transport};
use crate::units::SimTime;
use receiver::Receiver;
use sender::Sender;
use wire::Control;

crate::counters! {
    /// Homa counters (per host, or summed over a run).
    #[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
    pub struct HomaStats {
        /// Messages started by senders / delivered by receivers.
        pub messages_sent: u64,
        pub messages_received: u64,
        /// Data packets sent unscheduled / scheduled (first transmissions and resends).
        pub unscheduled_packets: u64,
        pub scheduled_packets: u64,
        /// Data packets sent, by 802.1Q priority (index 7 is Homa's level 0).
        pub data_packets_by_prio: [u64; 8],
        /// GRANTs sent by receivers / received by senders.
        pub grants: u64,
        pub grants_received: u64,
        /// Largest wire bytes of one message unscheduled or granted and not received, at any
        /// receiver (a maximum over hosts, not a sum). Never above RTTbytes plus one packet.
        pub max_in_flight_bytes: u64 => max,
        /// RESEND timeouts, RESEND packets sent, RESENDs senders received.
        pub resend_timeouts: u64,
        pub resends: u64,
        pub resends_received: u64,
        /// Data packets sent again.
        pub retransmissions: u64,
        /// BUSY packets sent / received.
        pub busy_sent: u64,
        pub busy_received: u64,
        /// Messages a receiver gave up on after repeated timeouts.
        pub aborted: u64,
        /// Data packets received twice, or for a closed message.
        pub duplicates: u64,
        /// GRANTs for a message the sender has finished.
        pub stale_control: u64,
    }
}

impl StatsSection for HomaStats {}


/// The Homa module.
pub struct Homa;

impl Transport for Homa {
    type Config = HomaConfig;
    type Host = Box<HomaHost>;
    type Stats = HomaStats;

    fn l4(cfg: &HomaConfig) -> L4Headers {
        cfg.l4()
    }

    fn host(cfg: &HomaConfig, at: &HostSite<'_>) -> Result<Box<HomaHost>, BuildError> {
        let p = cfg.resolve(at.net.framing, at.net.mtu.0, at.base_rtt, at.host_rate).map_err(|e| invalid(at.field, e.to_string()))?;
        Ok(Box::new(HomaHost::new(p)))
    }

    fn report(host: &Box<HomaHost>, stats: &mut ModuleStats) {
        stats.homa.get_or_insert_default().add(host.stats());
    }

    /// Every message is taken whole and the thread released at once (no send buffer).
    fn holds_thread(_cfg: &HomaConfig) -> bool {
        false
    }
    fn paths(cfg: &HomaConfig) -> Option<EcmpMode> {
        cfg.paths()
    }
}

/// Homa on one host: a sender and a receiver. Timer ids: 0 the sender's pacing, `2s + 1`
/// the grant pacing of sender host `s`, `2i + 2` the RESEND timer of receiver message `i`.
pub struct HomaHost {
    p: Params,
    sender: Sender,
    receiver: Receiver,
    stats: HomaStats,
}

impl HomaHost {
    pub fn new(p: Params) -> HomaHost {
        HomaHost { p, sender: Sender::new(), receiver: Receiver::new(), stats: HomaStats::default() }
    }

    pub fn stats(&self) -> &HomaStats {
        &self.stats
    }

    pub fn params(&self) -> &Params {
        &self.p
    }

    /// Messages this host sends with packets never sent, and messages it is receiving.
    pub fn live(&self) -> (usize, usize) {
        (self.sender.live(), self.receiver.live())
    }
}

impl Protocol for HomaHost {
    fn on_message(&mut self, now: SimTime, msg: &MsgInfo, out: &mut Actions) {
        self.sender.on_message(now, &self.p, msg, &mut self.stats, out);
    }

    fn on_packet(&mut self, now: SimTime, pkt: &Packet, _view: &HostView, out: &mut Actions) {
        let (p, st) = (&self.p, &mut self.stats);
        if let Some(d) = wire::decode_data(pkt) {
            self.receiver.on_data(now, p, pkt.src, &d, st, out);
        } else if let Some(c) = wire::decode_control(pkt) {
            match c {
                Control::Busy { msg } => self.receiver.on_busy(now, p, &msg, st, out),
                _ => self.sender.on_control(now, p, pkt.src, &c, st, out),
            }
        }
    }

    fn on_timer(&mut self, now: SimTime, id: u32, out: &mut Actions) {
        let (p, st) = (&self.p, &mut self.stats);
        if id == sender::SEND_TIMER {
            self.sender.on_timer(now, p, st, out);
        } else if id % 2 == 1 {
            self.receiver.on_pacing(now, p, id / 2, st, out);
        } else {
            self.receiver.on_resend_timer(now, p, id / 2 - 1, st, out);
        }
    }

    fn on_tx_dequeue(&mut self, _now: SimTime, _thread: u16, _out: &mut Actions) {}
}
