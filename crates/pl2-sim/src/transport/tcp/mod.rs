//! TCP: NewReno, CUBIC, DCTCP or no congestion control over a byte stream per (sending
//! thread, destination), with SACK loss recovery, delayed ACKs and an RFC 6298 RTO.
//!
//! - Connections are pre-established by default: the first message on a (thread,
//!   destination) pair sends at once with the initial window. With `handshake = true` a
//!   connection opens with RFC 9293 §3.5's three-way handshake (SYN, SYN-ACK, then data
//!   carrying the third segment's ACK; SYN timeout `syn_rto` with backoff), whose round
//!   trip seeds the RTT estimator and is part of the first message's latency (and of its
//!   slowdown: the ideal completion time leaves handshakes out). Connections are never
//!   closed (no FIN). See [`sender`] and [`wire`] (SYN frames carry 20 option bytes).
//! - MSS = MTU − 40 (IPv4 20 + TCP 20, no options on data: no timestamps): 1460 B at a
//!   1500 B MTU, in 1542 B on the wire with an 802.1Q tag. ACKs carrying a SACK block
//!   have 12 option bytes (74 B frames against 64 B for a plain ACK). See [`wire`] for
//!   the header mapping onto the 64-byte packet.
//! - Messages ride the stream (segments never span two messages); a message completes
//!   when its last byte is delivered in order; the sending thread is released when the
//!   message's last byte is in the send buffer ([`sender`]).
//! - Sender: [`sender`] (window, SACK / NewReno recovery, RTO, and with `rack_tlp` the
//!   RACK-TLP loss detection of RFC 8985, [`rack`]); receiver: [`receiver`]
//!   (in-order delivery, delayed ACKs, SACK blocks, ECN echo); RTO estimator: [`rto`];
//!   congestion control: [`cc`].
//!
//! Probes (flow = [`wire::flow_id`] of the connection), published at every ACK, SYN-ACK
//! and timeout: `tcp_cwnd` and `tcp_ssthresh` (bytes), `tcp_srtt_us`, `tcp_inflight` (RFC
//! 6675 pipe, bytes), `tcp_retx` (segments resent so far), `tcp_alpha` (DCTCP), `tcp_cubic_reno_friendly` (CUBIC: 1 when the
//! last window update came from the Reno-friendly estimate); BBR: `tcp_bbr_bw_gbps`
//! (bandwidth estimate, payload), `tcp_bbr_min_rtt_us`, `tcp_pacing_gbps` (headers
//! included) and `tcp_bbr_mode` (0 STARTUP, 1 DRAIN, 2 PROBE_BW, 3 PROBE_RTT).
//! Counters: [`TcpStats`], summed over hosts into the run's
//! [`crate::transport::ModuleStats`] (summary key `tcp`; TCP over PL2 also adds its PL2
//! layer's counters to PL2's, key `pl2`).
//!
//! - TCP over PL2 (`scheduler = "pl2"`): [`pl2`] puts the data segments into PL2 bursts
//!   (the paper's "TCP VMA PL2", §4.5, §5, §6.3.1); congestion control defaults to
//!   `none` there, loss recovery is unchanged. SYNs and SYN-ACKs are not scheduled (like
//!   pure ACKs they leave at once and never touch the ToR's counters).
//!
//! Timer ids: `4·i` for sender connection `i` (RTO), `4·i + 1` for receiver connection
//! `i` (delayed ACK), `4·j + 2` for the PL2 layer's timers, `4·i + 3` for sender
//! connection `i`'s pacing (BBR).

pub mod cc;
pub mod config;
mod conn_index;
pub mod pl2;
pub mod prr;
pub mod rack;
pub mod receiver;
pub mod rto;
pub mod sender;
pub mod wire;

pub use config::{CcKind, CeChangeAck, CubicAlpha, CubicLinux, DctcpLoss, GroConfig, HandshakeAck, TcpConfig, TcpScheduler};

use crate::error::{invalid, BuildError};
use crate::framing::L4Headers;
use crate::packet::Packet;
use crate::transport::{Actions, HostSite, HostView, ModuleStats, MsgInfo, Protocol, StatsSection, Transport};
use crate::units::SimTime;
use receiver::Receiver;
use sender::Sender;

crate::counters! {
    /// TCP counters (per host, or summed over a run).
    #[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
    pub struct TcpStats {
        /// Messages written by senders.
        pub messages_sent: u64,
        /// New data segments sent (first transmissions).
        pub segments_sent: u64,
        /// Segments sent again (fast recovery and after timeouts).
        pub retransmissions: u64,
        /// Fast-recovery episodes entered (duplicate ACKs or SACK).
        pub fast_recoveries: u64,
        /// Retransmission timeouts.
        pub timeouts: u64,
        /// RTT samples taken (Karn's rule skips ACKs of resent segments).
        pub rtt_samples: u64,
        /// ACKs received, duplicate ACKs among them, ACKs ignored (old or unknown).
        pub acks_received: u64,
        pub dupacks: u64,
        pub stale_acks: u64,
        /// ACKs with ECN-Echo received.
        pub ecn_echoes: u64,
        /// Data segments received, out of order, duplicated.
        pub segments_received: u64,
        pub out_of_order: u64,
        pub duplicates: u64,
        /// Data segments received with CE set (marked by a switch).
        pub ce_received: u64,
        /// ACKs sent, and delayed ACKs sent by their timer.
        pub acks_sent: u64,
        pub delayed_ack_timeouts: u64,
        /// Handshake (`handshake = true`; left out of serialised summaries while zero): SYNs
        /// sent (resends included), SYN timeouts, SYN-ACKs sent and received.
        #[serde(skip_serializing_if = "is_zero")]
        pub syns_sent: u64,
        #[serde(skip_serializing_if = "is_zero")]
        pub syn_timeouts: u64,
        #[serde(skip_serializing_if = "is_zero")]
        pub syn_acks_sent: u64,
        #[serde(skip_serializing_if = "is_zero")]
        pub syn_acks_received: u64,
        /// RACK-TLP (`rack_tlp = true`; left out of serialised summaries while zero):
        /// tail loss probes sent (RFC 8985 §7.3; a probe that resends a segment is also
        /// counted in `retransmissions`), probes whose ACK showed they repaired a loss
        /// (§7.4.2), segments RACK marked lost by time (§6.2 step 5), and reordering
        /// timer expiries.
        #[serde(skip_serializing_if = "is_zero")]
        pub loss_probes: u64,
        #[serde(skip_serializing_if = "is_zero")]
        pub loss_probe_recoveries: u64,
        #[serde(skip_serializing_if = "is_zero")]
        pub rack_marked_lost: u64,
        #[serde(skip_serializing_if = "is_zero")]
        pub rack_reorder_timeouts: u64,
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl StatsSection for TcpStats {}


/// The TCP module.
pub struct Tcp;

impl Transport for Tcp {
    type Config = TcpConfig;
    type Host = Box<TcpHost>;
    type Stats = TcpStats;

    fn l4(cfg: &TcpConfig) -> L4Headers {
        cfg.l4()
    }

    fn host(cfg: &TcpConfig, at: &HostSite<'_>) -> Result<Box<TcpHost>, BuildError> {
        cfg.validate_scheduler().map_err(|(f, e)| invalid(f.replacen("transport", at.field, 1), e))?;
        if cfg.cc_kind() == CcKind::Bbr && cfg.scheduler == TcpScheduler::Pl2 {
            return Err(invalid(
                &format!("{}.cc", at.field),
                "\"bbr\" paces segments itself, and under scheduler = \"pl2\" PL2 decides when they leave: use cc = \"none\" (the paper's TCP over PL2) or scheduler = \"none\"".to_string(),
            ));
        }
        if cfg.cc_kind() == CcKind::Dctcp && !at.net.marks_ecn() {
            // DCTCP without marks is a window that only grows until a buffer overflows
            // (RFC 8257 §3 needs the switches to mark): a silent mistake, not a choice.
            return Err(invalid(
                &format!("{}.cc", at.field),
                "\"dctcp\" reacts only to ECN marks, and no switch marks: set [network.switch.ecn] kind = \"step\" with a threshold (DCTCP's K, e.g. \"97KB\" at 100 Gbps), or use cc = \"cubic\"".to_string(),
            ));
        }
        let basis = cfg.pl2_config().unwrap_or_default().slot_basis();
        let slot = pl2_protocol::timeslot::timeslot_ps(at.net.mtu.0, at.host_rate.0, basis);
        let hc = &at.net.host;
        let mut t = TcpHost::new(cfg, at.host, at.max_payload(cfg.l4()), hc.threads, hc.tx_ring_frames, slot).map_err(|e| invalid(at.field, e))?;
        t.ctx.bbr_seed = at.rng("bbr").next_u64();
        Ok(Box::new(t))
    }

    fn report(host: &Box<TcpHost>, stats: &mut ModuleStats) {
        stats.tcp.get_or_insert_default().add(host.stats());
        if let Some(l) = host.pl2_layer() {
            stats.pl2.get_or_insert_default().add_host(l.sender_stats(), l.receiver_stats());
        }
    }
}

/// What both halves read.
pub(crate) struct Ctx {
    pub cfg: TcpConfig,
    pub mss: u64,
    pub host: u32,
    /// Seeds each BBR connection's draws (from the run's seed).
    pub bbr_seed: u64,
}

/// TCP on one host: a sender and a receiver, and under `scheduler = "pl2"` the PL2 layer
/// between the sender and the NIC.
pub struct TcpHost {
    ctx: Ctx,
    sender: Sender,
    receiver: Receiver,
    stats: TcpStats,
    pl2: Option<Box<pl2::Pl2Layer>>,
}

impl TcpHost {
    /// `slot_ps`: PL2's timeslot (used with `scheduler = "pl2"` only).
    pub fn new(cfg: &TcpConfig, host: u32, mss: u64, threads: u16, ring: u32, slot_ps: u64) -> Result<TcpHost, String> {
        cfg.validate(mss)?;
        cfg.validate_scheduler().map_err(|(f, e)| format!("{f}: {e}"))?;
        let layer = match cfg.pl2_config() {
            Some(p) => Some(Box::new(pl2::Pl2Layer::new(&p, host, mss, slot_ps)?)),
            None => None,
        };
        Ok(TcpHost {
            ctx: Ctx { cfg: cfg.clone(), mss, host, bbr_seed: 0 },
            sender: Sender::new(threads, ring, layer.is_some()),
            receiver: Receiver::new(),
            stats: TcpStats::default(),
            pl2: layer,
        })
    }

    /// The PL2 layer (TCP over PL2 only).
    pub fn pl2_layer(&self) -> Option<&pl2::Pl2Layer> {
        self.pl2.as_deref()
    }

    pub fn stats(&self) -> &TcpStats {
        &self.stats
    }

    /// Bytes written by this host's applications and not yet acknowledged.
    pub fn unacknowledged(&self) -> u64 {
        self.sender.unacknowledged()
    }
}

impl Protocol for TcpHost {
    fn on_message(&mut self, now: SimTime, msg: &MsgInfo, out: &mut Actions) {
        let from = out.sends.len();
        self.sender.on_message(now, &self.ctx, msg, &mut self.stats, out);
        self.schedule(now, from, out);
    }

    fn on_packet(&mut self, now: SimTime, pkt: &Packet, view: &HostView, out: &mut Actions) {
        let from = out.sends.len();
        if self.pl2.is_some() && !self.pl2_passes(now, pkt, view, out) {
            return self.schedule(now, from, out);
        }
        if let Some(s) = wire::decode_segment(pkt) {
            self.receiver.on_data(now, &self.ctx, pkt, &s, &mut self.stats, out);
            if self.pl2.is_none() {
                self.count_acks(from, out);
            }
        } else if let Some(a) = wire::decode_ack(pkt) {
            self.sender.on_ack(now, &self.ctx, pkt.src, &a, &mut self.stats, out);
        } else if let Some(s) = wire::decode_syn(pkt) {
            if s.ack {
                self.sender.on_syn_ack(now, &self.ctx, pkt.src, &s, &mut self.stats, out);
            } else {
                self.receiver.on_syn(&self.ctx, pkt, &s, &mut self.stats, out);
                if self.pl2.is_none() {
                    self.count_acks(from, out);
                }
            }
        }
        self.schedule(now, from, out);
    }

    fn on_timer(&mut self, now: SimTime, id: u32, out: &mut Actions) {
        let from = out.sends.len();
        match id % 4 {
            0 => self.sender.on_timer(now, &self.ctx, id, &mut self.stats, out),
            3 => self.sender.on_pacing_timer(now, &self.ctx, id / 4, &mut self.stats, out),
            1 => {
                self.receiver.on_timer(now, &self.ctx, id, &mut self.stats, out);
                if self.pl2.is_none() {
                    self.count_acks(from, out);
                }
            }
            _ => {
                if let Some(layer) = self.pl2.as_mut() {
                    layer.on_timer(now.0, id, out);
                }
            }
        }
        self.schedule(now, from, out);
    }

    fn on_tx_dequeue(&mut self, now: SimTime, thread: u16, out: &mut Actions) {
        let from = out.sends.len();
        self.sender.on_tx_dequeue(now, &self.ctx, thread, &mut self.stats, out);
        self.schedule(now, from, out);
    }

    fn on_tx_done(&mut self, now: SimTime, pkt: &Packet, out: &mut Actions) {
        let from = out.sends.len();
        if let Some(layer) = self.pl2.as_mut() {
            layer.on_tx_done(now.0, pkt, out);
        }
        self.schedule(now, from, out);
    }
}

impl TcpHost {
    /// TCP over PL2, after every call: the segments TCP released go to the PL2 layer,
    /// which starts the bursts it can; TCP learns which segments left; every frame emitted
    /// in this call that TCP has not already counted takes its place in its thread's
    /// transmit-ring share (the NIC reports each one when it takes it). Without PL2:
    /// nothing to do (tested inline: every TCP call ends here).
    #[inline(always)]
    fn schedule(&mut self, now: SimTime, from: usize, out: &mut Actions) {
        if self.pl2.is_some() {
            self.schedule_pl2(now, from, out);
        }
    }

    /// PL2's host layer sees a frame first: false if it kept it (TCP never sees it). Out
    /// of line: only over PL2.
    #[inline(never)]
    fn pl2_passes(&mut self, now: SimTime, pkt: &Packet, view: &HostView, out: &mut Actions) -> bool {
        let Some(layer) = self.pl2.as_mut() else { return true };
        !matches!(layer.on_packet(now.0, pkt, view, out), Some(false))
    }

    /// [`TcpHost::schedule`] over PL2.
    #[inline(never)]
    fn schedule_pl2(&mut self, now: SimTime, from: usize, out: &mut Actions) {
        let Some(layer) = self.pl2.as_mut() else { return };
        for (i, start, spec) in self.sender.staged.drain(..) {
            layer.stage(i, start, spec);
        }
        layer.pump(now.0, out);
        for (i, start) in layer.handed().drain(..) {
            self.sender.on_handed(now, i, start);
        }
        for s in &out.sends[from..] {
            let t = s.thread as usize;
            if !pl2::counted_at_release(s) && t < self.sender.in_ring.len() {
                self.sender.in_ring[t] += 1;
            }
        }
    }

    /// ACKs and SYN-ACKs count against the ring share of the thread they carry (they never wait).
    fn count_acks(&mut self, from: usize, out: &Actions) {
        for s in &out.sends[from..] {
            let t = s.thread as usize;
            if t < self.sender.in_ring.len() {
                self.sender.in_ring[t] += 1;
            }
        }
    }
}
