//! Polo: receiver-driven congestion control for low latency over commodity switches
//! (Ruan, Wang, Jiang, Zhang; seed slides `001_eef3ede4c86ec7b6`). It needs only what
//! commodity switches have: strict priority queues and ECN marking at a threshold.
//!
//! What the slides say, and where it is implemented:
//! - The sender sends data at line rate, each data packet followed by a header-sized
//!   adjoint packet at high priority ([`sender`]).
//! - The switch marks ECN-capable packets when the queue passes a threshold (the
//!   network's `[network.switch.ecn]`; only Polo's data packets are ECN-capable, [`wire`]).
//! - The receiver returns one driving packet per data packet and keeps D, the driving
//!   packets per epoch, adjusted AIMD-like per epoch (one round trip of an adjoint
//!   acknowledgement); recovery 1 (sequence gap), recovery 2 (idle epochs) and the pause
//!   mechanism are the receiver's ([`receiver`]); recovery 3 (a timeout) the sender's.
//! - Ablations: Polo^a, Polo^b, Polo^c are [`PoloConfig`] switches.
//!
//! Choices the slides leave open are [`PoloConfig`] fields with documented defaults; the
//! reasoning is in `docs/model.md`, "Polo".
//!
//! Probes: `polo_d` (flow = receiving host; D at the end of each epoch, summed over the
//! active flows with `d_scope = "flow"`), `polo_flow_d` (flow = message id; the flow's
//! own D at the end of each of its receiver's epochs, `d_scope = "flow"` only) and
//! `polo_retx` (flow = message id; the index of each packet resent). Counters: [`PoloStats`], summed
//! over hosts into the run's [`crate::transport::ModuleStats`] (summary key `polo`).

pub mod config;
pub mod receiver;
pub mod sender;
pub mod wire;

pub use config::{DBound, DScope, MarkRounding, PauseEnd, PoloConfig, PoloConfigError, ShortFirst};

use crate::error::{invalid, BuildError};
use crate::framing::L4Headers;
use crate::packet::{flags, Packet};
use crate::transport::{Actions, HostSite, HostView, ModuleStats, MsgInfo, Protocol, StatsSection, Transport};
use crate::units::SimTime;
use receiver::Receiver;
use sender::Sender;
use wire::Frame;

crate::counters! {
    /// Polo counters (per host, or summed over a run).
    #[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
    pub struct PoloStats {
        /// Messages started by senders / delivered by receivers.
        pub messages_sent: u64,
        pub messages_received: u64,
        /// Adjoint packets sent (one per data packet, resends included).
        pub adjoints: u64,
        /// Driving packets sent by receivers / received by senders.
        pub driving_sent: u64,
        pub driving_received: u64,
        /// Driving packets sent to a flow with nothing left to send (only without the
        /// wasted-driving optimisation, Polo^a).
        pub driving_wasted: u64,
        /// ECN-marked data packets received.
        pub marked_packets: u64,
        /// Epochs closed, and closed by the guard timer (ack or echo lost).
        pub epochs: u64,
        pub epoch_timeouts: u64,
        /// Epoch echoes senders returned.
        pub epoch_echoes: u64,
        /// Loss packets from recovery 1 (gaps, also at a resume) and recovery 2 (idle epochs).
        pub gap_losses: u64,
        pub idle_losses: u64,
        /// Loss packets senders received.
        pub loss_received: u64,
        /// Recovery 3: sender timeouts.
        pub timeouts: u64,
        /// Data packets sent again.
        pub retransmissions: u64,
        /// Data packets received twice, or for a message already delivered.
        pub duplicates: u64,
        /// Flows paused at their first packet / resumed when an active flow finished.
        pub pauses: u64,
        pub resumes: u64,
        /// Pause packets senders received.
        pub pauses_received: u64,
        /// Packets about a flow the sender no longer has.
        pub stale_control: u64,
    }
}

impl StatsSection for PoloStats {}


/// The Polo module.
pub struct Polo;

impl Transport for Polo {
    type Config = PoloConfig;
    type Host = Box<PoloHost>;
    type Stats = PoloStats;

    fn l4(cfg: &PoloConfig) -> L4Headers {
        cfg.l4()
    }

    fn host(cfg: &PoloConfig, at: &HostSite<'_>) -> Result<Box<PoloHost>, BuildError> {
        cfg.validate().map_err(|e| invalid(at.field, e.to_string()))?;
        Ok(Box::new(PoloHost::new(cfg, at.max_payload(cfg.l4()), at.host, at.rng("recovery_idle"))))
    }

    fn report(host: &Box<PoloHost>, stats: &mut ModuleStats) {
        stats.polo.get_or_insert_default().add(host.stats());
    }
}

/// What both halves read.
pub(crate) struct Ctx {
    pub cfg: PoloConfig,
    pub stamp: wire::Stamp,
    pub max_payload: u64,
}

/// Polo on one host: a sender and a receiver. Timer ids: 0 is the receiver's epoch
/// guard, `1 + i` sender flow `i`'s timeout (indices are recycled).
pub struct PoloHost {
    ctx: Ctx,
    sender: Sender,
    receiver: Receiver,
    stats: PoloStats,
}

impl PoloHost {
    /// `rng`: the receiver's draws (recovery 2's random active flow), from the run's seed.
    pub fn new(cfg: &PoloConfig, max_payload: u64, host: u32, rng: crate::rng::SimRng) -> PoloHost {
        let (short_max_bytes, short) = cfg.short_first.map_or((0, cfg.data_priority), |sf| (sf.max_bytes.0, sf.priority));
        let stamp = wire::Stamp {
            l4: cfg.l4(),
            data: cfg.data_priority,
            retransmit: cfg.retransmit_priority,
            control: cfg.control_priority,
            short_max_bytes,
            short,
        };
        PoloHost { ctx: Ctx { cfg: cfg.clone(), stamp, max_payload }, sender: Sender::new(), receiver: Receiver::new(host, cfg.d_scope == DScope::Flow, rng), stats: PoloStats::default() }
    }

    pub fn stats(&self) -> &PoloStats {
        &self.stats
    }

    /// The receiver's D now.
    pub fn d(&self) -> u32 {
        self.receiver.d()
    }

    /// Messages this host sent whose done packet has not arrived.
    pub fn unacknowledged(&self) -> usize {
        self.sender.live()
    }
}

impl Protocol for PoloHost {
    fn on_message(&mut self, _now: SimTime, msg: &MsgInfo, out: &mut Actions) {
        self.sender.on_message(&self.ctx, msg, &mut self.stats, out);
    }

    fn on_packet(&mut self, now: SimTime, pkt: &Packet, _view: &HostView, out: &mut Actions) {
        let Some(f) = wire::decode(pkt) else { return };
        let (ctx, st) = (&self.ctx, &mut self.stats);
        match f {
            Frame::Data { d, .. } => self.receiver.on_data(ctx, pkt.src, &d, pkt.has(flags::CE), st, out),
            Frame::Adjoint(d) => self.receiver.on_adjoint(now, ctx, pkt.src, &d, out),
            Frame::EpochEcho { epoch, .. } => self.receiver.on_echo(now, ctx, epoch, st, out),
            _ => self.sender.on_frame(now, ctx, pkt.src, &f, st, out),
        }
    }

    fn on_timer(&mut self, now: SimTime, id: u32, out: &mut Actions) {
        if id == receiver::EPOCH_TIMER {
            self.receiver.on_timer(now, &self.ctx, &mut self.stats, out);
        } else {
            self.sender.on_timer(&self.ctx, id, &mut self.stats, out);
        }
    }

    fn on_tx_dequeue(&mut self, _now: SimTime, _thread: u16, _out: &mut Actions) {}

    fn on_tx_done(&mut self, now: SimTime, pkt: &Packet, out: &mut Actions) {
        self.sender.on_tx_done(now, &self.ctx, pkt, &mut self.stats, out);
    }
}
