//! TCP over PL2, the paper's "TCP VMA PL2" (§4.5 "Implications for intra-rack
//! transports", §5, §6.3.1, Fig. 9c): PL2 decides *when* data segments leave, TCP only
//! *what* is sent. Selected by `scheduler = "pl2"` in the TCP configuration; the ToR runs
//! the PL2 scheduler ([`crate::transport::pl2::Pl2Switch`], reading tags in
//! [`TagLayout::Tcp`]).
//!
//! - Every data segment the TCP sender releases (new data and retransmissions alike) is
//!   queued here, per connection (= per sending thread and destination, the context and
//!   destination a PL2 host schedules raw messages by). Whenever a connection has no burst
//!   in PL2's hands, up to K queued segments become one PL2 "message" of that many
//!   packets, so one burst of ≤ K frames and one RSV–GRT exchange; segments released
//!   meanwhile wait and form the next burst. pl2-protocol's [`pl2_protocol::sender::Sender`]
//!   (through the shared [`Pl2Driver`]) sends the RSV, reads the GRT and hands the burst
//!   over at equation (1)'s waiting time, unsolicited at low load (§4.4) exactly as for
//!   raw messages; exchanges are per thread (`exchanges = "per_thread"`, the prototype)
//!   or per thread and destination.
//! - A burst is one hand-over unit: the segments' frames back to back, the tag in the TCP
//!   layout, `BURST_END | NOTIFY_TX_DONE` on the last (blocking mode's next RSV waits for
//!   its last bit). When a segment's first copy is handed to the NIC, TCP is told
//!   (`Sender::on_handed` in [`super::sender`]): its RTT clock starts there, and the
//!   retransmission timer never expires while the oldest outstanding segment still waits
//!   for its slot (otherwise a deep PL2 queue would look like loss).
//! - Pure ACKs are not scheduled: they leave at once, unflagged, and the ToR program
//!   forwards them without touching its counters (only `SCHEDULED` frames release
//!   reservations). They are minimum-size frames, one per two segments with delayed ACKs,
//!   travelling against the data; the paper's prototype schedules data only.
//! - Receiver: a scheduled segment goes through pl2-protocol's receiver first, which drops
//!   the duplicate copies PL2 itself makes (an unsolicited burst and its scheduled resend)
//!   so TCP never answers them with duplicate ACKs; everything else is TCP's.
//! - An unsolicited burst may be resent after its GRT, so its segments are kept until
//!   then; the connection's next burst waits for that (it would wait for the GRT anyway in
//!   blocking mode).
//!
//! Probes: PL2's per-burst probes (`pl2_rsv_grt_ps`, `pl2_wait_ps`, `pl2_chosen_slots`,
//! ..., flow = burst id, `pl2_msg` = the burst's internal message id) beside TCP's
//! per-connection ones (flow = the connection). Counters: [`Pl2LayerStats`], and the PL2
//! sender/receiver counters, added to PL2's ([`crate::transport::pl2::Pl2Stats`], summary key `pl2`).
//!
//! Loss recovery stays TCP's (SACK, RTO): a segment lost on a link is resent by TCP and
//! scheduled again like any other. Its reservation stays charged at the switch if it was
//! lost before the ToR's ingress (PL2's counter hole, §4.5).

use super::super::pl2::driver::{BurstSource, Pl2Driver};
use super::super::pl2::wire::{self, TagLayout};
use super::super::pl2::Pl2Config;
use crate::packet::{proto, Packet};
use crate::transport::{Actions, HostView, SendSpec};
use pl2_protocol::receiver::{Arrival, Receiver, ReceiverStats};
use pl2_protocol::sender::{AppMessage, BurstProbe, BurstSend, Sender, SenderStats};
use pl2_protocol::{DataTag, MsgId};
use std::collections::VecDeque;

/// A segment waiting for (or in) a burst: its 64-bit start and its frame.
#[derive(Copy, Clone, Debug)]
struct QSeg {
    start: u64,
    spec: SendSpec,
}

/// The PL2 message a connection has in the sender: its first `n` queued segments.
#[derive(Copy, Clone, Debug)]
struct Cur {
    id: MsgId,
    n: u32,
    /// Every packet handed to the NIC once.
    handed: bool,
    /// Bursts that went unsolicited and may still be resent.
    unresolved: u32,
}

#[derive(Default)]
struct ConnQ {
    dst: u32,
    thread: u16,
    q: VecDeque<QSeg>,
    cur: Option<Cur>,
    next_id: u32,
    ready: bool,
}

/// The segments side: what the bursts carry.
struct Segments {
    me: u32,
    k: u32,
    mss: u64,
    conns: Vec<ConnQ>,
    /// Connections with queued segments and no burst in PL2's hands, first come first.
    ready: VecDeque<u32>,
    /// First copies handed to the NIC since TCP was last told: (connection, start).
    handed: Vec<(u32, u64)>,
}

fn conn_of(msg: MsgId) -> u32 {
    (msg.0 >> 32) as u32
}

impl Segments {
    fn try_finish(&mut self, i: u32) {
        let c = &mut self.conns[i as usize];
        let Some(cur) = c.cur else { return };
        if cur.handed && cur.unresolved == 0 {
            c.q.drain(..cur.n as usize);
            c.cur = None;
            if !c.q.is_empty() && !c.ready {
                c.ready = true;
                self.ready.push_back(i);
            }
        }
    }
}

impl BurstSource for Segments {
    type Info = ();

    fn prepare(&mut self, b: &BurstSend) {
        if b.unsolicited {
            let c = &mut self.conns[conn_of(b.msg) as usize];
            if let Some(cur) = c.cur.as_mut().filter(|cur| cur.id == b.msg) {
                cur.unresolved += 1;
            }
        }
    }

    fn frames(&mut self, _now: u64, b: &BurstSend, _info: &(), out: &mut Actions) {
        let i = conn_of(b.msg);
        let c = &mut self.conns[i as usize];
        assert!(c.cur.is_some_and(|cur| cur.id == b.msg), "PL2 under TCP: burst {:?} of a finished message", b.burst);
        for j in 0..b.packets {
            let qs = c.q[(b.first_packet + j) as usize];
            let mut spec = qs.spec;
            let tag = DataTag { src: self.me, dst: b.dst, burst: b.burst, index_in_burst: j, unsolicited: b.unsolicited, resent: b.resent };
            wire::encode_tcp_tag(&mut spec, &tag, j + 1 == b.packets);
            out.sends.push(spec);
            if !b.resent {
                self.handed.push((i, qs.start));
            }
        }
        if b.resent {
            if let Some(cur) = c.cur.as_mut() {
                cur.unresolved = cur.unresolved.saturating_sub(1);
            }
            self.try_finish(i);
        }
    }

    fn message_handed_over(&mut self, msg: MsgId, _out: &mut Actions) {
        let i = conn_of(msg);
        if let Some(cur) = self.conns[i as usize].cur.as_mut().filter(|cur| cur.id == msg) {
            cur.handed = true;
        }
        self.try_finish(i);
    }

    fn grt_processed(&mut self, p: &BurstProbe) {
        // A granted unsolicited burst is resolved here unless it is resent (its resend
        // was emitted before this probe and resolves it when handed over).
        if p.unsolicited && p.granted_packets > 0 && !p.resent {
            let i = conn_of(p.msg);
            if let Some(cur) = self.conns[i as usize].cur.as_mut().filter(|cur| cur.id == p.msg) {
                cur.unresolved = cur.unresolved.saturating_sub(1);
            }
            self.try_finish(i);
        }
    }
}

/// Counters of the PL2 layer under TCP.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Pl2LayerStats {
    /// Segments queued for scheduling (first transmissions and TCP retransmissions).
    pub segments_scheduled: u64,
    /// Duplicate copies made by PL2 (unsolicited burst and its resend) dropped before TCP.
    pub duplicates_dropped: u64,
}

/// The PL2 layer of one TCP host.
pub struct Pl2Layer {
    driver: Pl2Driver<()>,
    segs: Segments,
    stats: Pl2LayerStats,
}

impl Pl2Layer {
    /// `mss`: payload per data frame; `slot_ps`: the timeslot; the driver's timers are
    /// `4·j + 2` (TCP's own are `4·i`, `4·i + 1` and `4·i + 3`).
    pub fn new(cfg: &Pl2Config, me: u32, mss: u64, slot_ps: u64) -> Result<Pl2Layer, String> {
        let sender = Sender::new(cfg.sender(me, mss, slot_ps)).map_err(|e| e.to_string())?;
        let receiver = Receiver::new(cfg.receiver(me, slot_ps)).map_err(|e| e.to_string())?;
        Ok(Pl2Layer {
            driver: Pl2Driver::new(me, sender, receiver, 4, 2),
            segs: Segments { me, k: cfg.k, mss, conns: Vec::new(), ready: VecDeque::new(), handed: Vec::new() },
            stats: Pl2LayerStats::default(),
        })
    }

    pub fn sender_stats(&self) -> &SenderStats {
        self.driver.sender.stats()
    }
    pub fn receiver_stats(&self) -> &ReceiverStats {
        self.driver.receiver.stats()
    }
    pub fn stats(&self) -> &Pl2LayerStats {
        &self.stats
    }

    pub fn owns_timer(&self, id: u32) -> bool {
        self.driver.owns_timer(id)
    }

    /// TCP connection `conn` (to `spec.dst`, from `spec.thread`) releases a segment
    /// starting at byte `start`.
    pub fn stage(&mut self, conn: u32, start: u64, spec: SendSpec) {
        self.stats.segments_scheduled += 1;
        let s = &mut self.segs;
        let i = conn as usize;
        if i >= s.conns.len() {
            s.conns.resize_with(i + 1, ConnQ::default);
        }
        let c = &mut s.conns[i];
        c.dst = spec.dst;
        c.thread = spec.thread;
        c.q.push_back(QSeg { start, spec });
        if c.cur.is_none() && !c.ready {
            c.ready = true;
            s.ready.push_back(conn);
        }
    }

    /// Gives every ready connection's next burst (≤ K queued segments) to PL2.
    pub fn pump(&mut self, now: u64, out: &mut Actions) {
        while let Some(i) = self.segs.ready.pop_front() {
            let c = &mut self.segs.conns[i as usize];
            c.ready = false;
            if c.cur.is_some() || c.q.is_empty() {
                continue;
            }
            let n = (c.q.len() as u32).min(self.segs.k);
            let id = MsgId(u64::from(i) << 32 | u64::from(c.next_id));
            c.next_id = c.next_id.wrapping_add(1);
            c.cur = Some(Cur { id, n, handed: false, unresolved: 0 });
            let m = AppMessage { id, dst: c.dst, bytes: u64::from(n) * self.segs.mss, ctx: u32::from(c.thread), high_priority: false };
            self.driver.on_message(now, m, &mut self.segs, out);
        }
    }

    /// First copies handed to the NIC since the last call: (connection, start).
    pub fn handed(&mut self) -> &mut Vec<(u32, u64)> {
        &mut self.segs.handed
    }

    /// A frame for this host. `Some(true)`: a scheduled segment for TCP; `Some(false)`:
    /// PL2's (a control frame, or a duplicate copy); `None`: not PL2's (e.g. an ACK).
    pub fn on_packet(&mut self, now: u64, pkt: &Packet, view: &HostView, out: &mut Actions) -> Option<bool> {
        if let Some(tag) = wire::decode_tag_in(TagLayout::Tcp, pkt) {
            if self.driver.on_data(now, &tag) == Arrival::Duplicate {
                self.stats.duplicates_dropped += 1;
                return Some(false);
            }
            return Some(true);
        }
        self.driver.on_control(now, pkt, view, &mut self.segs, out).then_some(false)
    }

    pub fn on_timer(&mut self, now: u64, id: u32, out: &mut Actions) {
        self.driver.on_timer(now, id, &mut self.segs, out);
    }

    pub fn on_tx_done(&mut self, now: u64, pkt: &Packet, out: &mut Actions) {
        self.driver.on_tx_done(now, wire::tcp_burst_of(pkt), &mut self.segs, out);
    }
}

/// Whether a frame the host emits was already counted in its thread's transmit-ring share
/// when TCP released it: the first copy of a scheduled segment.
pub fn counted_at_release(s: &SendSpec) -> bool {
    s.proto & proto::SCHEDULED != 0 && s.aux & (1 << 1) == 0
}
