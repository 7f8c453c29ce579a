//! RDS: the PL2 paper's receiver-driven baseline, "a receiver-driven congestion control
//! scheme based on Homa" (Le et al., §2 Fig. 1 and §6.1 "Transport protocols").
//!
//! What the paper says, and where it is implemented:
//! - Senders send up to RTTbytes (61 KiB, the bandwidth-delay product) blindly, as fast
//!   as they can ([`sender`]).
//! - The receiver schedules the rest, "up to 4 packets when possible" per grant
//!   ([`receiver`]); the issue adds: granted-but-not-received bytes per sender ≤
//!   RTTbytes, at most `overcommit` senders granted at once, round-robin (SRPT optional).
//! - Loss: the receiver detects gaps from out-of-order arrivals and notifies the sender
//!   at once; when a whole burst is lost it times out after 1 ms and sends a lost-packet
//!   notification; a sender whose initial (unscheduled) packets are lost times out after
//!   1 ms and resends them.
//! - Grants and notifications are control frames at priority 7 ([`wire`]).
//!
//! Choices the paper leaves open are documented in [`sender`] and [`receiver`]; in short:
//! unscheduled = packets whose first byte is within RTTbytes; a NACK names a run of
//! missing packets and also grants them; a DONE frame closes the message at the sender
//! (and answers duplicates); the sender's timeout is disarmed for good by any frame from
//! the receiver, after which the receiver's timeout is the backstop; the sending thread
//! is released once every packet has been handed to the NIC once.
//!
//! Probes: `rds_outstanding` (flow = sender host; the receiver's granted-but-not-received
//! bytes for that sender after each GRANT) and `rds_retx` (flow = message id; the index
//! of each packet resent). Counters: [`RdsStats`], summed over hosts into the run's
//! [`crate::transport::ModuleStats`] (summary key `rds`).
//!
//! Scope: any topology, any host pairs, any number of concurrent messages. Not modelled:
//! the prototype's separate scheduling and data-processing threads (the receive path
//! costs of `host` apply to every frame).

pub mod config;
pub mod receiver;
pub mod sender;
pub mod wire;

pub use config::{RdsConfig, RdsPolicy};

use crate::error::{invalid, BuildError};
use crate::framing::L4Headers;
use crate::packet::Packet;
use crate::transport::{Actions, HostSite, HostView, ModuleStats, MsgInfo, Protocol, StatsSection, Transport};
use crate::units::SimTime;
use receiver::Receiver;
use sender::Sender;

crate::counters! {
    /// RDS counters (per host, or summed over a run).
    #[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
    pub struct RdsStats {
        /// Messages started by senders / delivered by receivers.
        pub messages_sent: u64,
        pub messages_received: u64,
        /// GRANT frames sent.
        pub grants: u64,
        /// Gaps detected from out-of-order arrivals (each sends one NACK at once).
        pub gap_nacks: u64,
        /// NACK frames sent (gap and timeout).
        pub nack_frames: u64,
        /// Receiver timeouts that found missing packets (each NACKs every missing run).
        pub receiver_timeouts: u64,
        /// Sender timeouts (each resends every unscheduled packet).
        pub sender_timeouts: u64,
        /// Data frames sent again.
        pub retransmissions: u64,
        /// Data frames received twice, or for a message already delivered.
        pub duplicates: u64,
        /// DONE frames sent (one per delivery, and one per duplicate of a delivered message).
        pub done_sent: u64,
        /// GRANT and NACK frames the senders received.
        pub grants_received: u64,
        pub nacks_received: u64,
        /// Control frames for a message the sender no longer has (after DONE).
        pub stale_control: u64,
        /// Largest granted-but-not-received byte count of any sender at any receiver (the
        /// maximum, not a sum, over hosts). Never above `rtt_bytes`.
        pub max_outstanding_bytes: u64 => max,
    }
}

impl StatsSection for RdsStats {}


/// The RDS module.
pub struct Rds;

impl Transport for Rds {
    type Config = RdsConfig;
    type Host = Box<RdsHost>;
    type Stats = RdsStats;

    fn l4(cfg: &RdsConfig) -> L4Headers {
        cfg.l4()
    }

    fn host(cfg: &RdsConfig, at: &HostSite<'_>) -> Result<Box<RdsHost>, BuildError> {
        let hc = &at.net.host;
        let t = RdsHost::new(cfg, at.max_payload(cfg.l4()), hc.threads, hc.tx_ring_frames).map_err(|e| invalid(at.field, e))?;
        Ok(Box::new(t))
    }

    fn report(host: &Box<RdsHost>, stats: &mut ModuleStats) {
        stats.rds.get_or_insert_default().add(host.stats());
    }
}

/// What both halves read.
pub(crate) struct Ctx {
    pub cfg: RdsConfig,
    pub l4: L4Headers,
    pub max_payload: u64,
}

/// RDS on one host: a sender and a receiver. Timer ids: `2·i` for sender message `i`,
/// `2·i + 1` for receiver message `i` (both indices are recycled).
pub struct RdsHost {
    ctx: Ctx,
    sender: Sender,
    receiver: Receiver,
    stats: RdsStats,
}

impl RdsHost {
    pub fn new(cfg: &RdsConfig, max_payload: u64, threads: u16, ring: u32) -> Result<RdsHost, String> {
        cfg.validate(max_payload)?;
        Ok(RdsHost {
            ctx: Ctx { cfg: cfg.clone(), l4: cfg.l4(), max_payload },
            sender: Sender::new(threads, ring),
            receiver: Receiver::new(),
            stats: RdsStats::default(),
        })
    }

    pub fn stats(&self) -> &RdsStats {
        &self.stats
    }

    /// Messages this host sent whose DONE has not arrived.
    pub fn unacknowledged(&self) -> usize {
        self.sender.live()
    }

    /// The receiver's control frames count against its thread's ring share.
    fn count_control(&mut self, from: usize, out: &Actions) {
        let n = out.sends.len() - from;
        self.sender.in_ring[receiver::CONTROL_THREAD as usize] += n as u32;
    }
}

impl Protocol for RdsHost {
    fn on_message(&mut self, now: SimTime, msg: &MsgInfo, out: &mut Actions) {
        self.sender.on_message(now, &self.ctx, msg, &mut self.stats, out);
    }

    fn on_packet(&mut self, now: SimTime, pkt: &Packet, _view: &HostView, out: &mut Actions) {
        if let Some(d) = wire::decode_data(pkt) {
            let from = out.sends.len();
            self.receiver.on_data(now, &self.ctx, pkt, &d, &mut self.stats, out);
            self.count_control(from, out);
        } else if let Some(c) = wire::decode_control(pkt) {
            self.sender.on_control(now, &self.ctx, &c, &mut self.stats, out);
        }
    }

    fn on_timer(&mut self, now: SimTime, id: u32, out: &mut Actions) {
        if id.is_multiple_of(2) {
            self.sender.on_timer(now, &self.ctx, id, &mut self.stats, out);
        } else {
            let from = out.sends.len();
            self.receiver.on_timer(now, &self.ctx, id, &mut self.stats, out);
            self.count_control(from, out);
        }
    }

    fn on_tx_dequeue(&mut self, now: SimTime, thread: u16, out: &mut Actions) {
        self.sender.on_tx_dequeue(now, &self.ctx, thread, out);
    }
}
