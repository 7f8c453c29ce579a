//! The sending half: one connection per (sending thread, destination), opened by the
//! first message to that destination and open for the rest of the run (closing, FIN, is
//! not modelled).
//!
//! - Opening: by default the connection is pre-established and its first segment goes out
//!   at once with the initial window. With `handshake = true` it starts with RFC 9293
//!   §3.5's three-way handshake: the first message's bytes go into the send buffer (the
//!   thread is released as usual, as after a non-blocking connect) and a SYN leaves
//!   through the thread's transmit-ring share; the receiver answers with a SYN-ACK
//!   ([`super::receiver`]), on which the connection is established and data starts. The
//!   third segment of the handshake is not a frame of its own: its ACK rides on the first
//!   data segment, as Linux does when data is waiting. A SYN unanswered for `syn_rto` is
//!   sent again with the timeout doubled each time, up to `max_rto`, with no retry limit
//!   (RFC 6298 §5.5's backoff as for data; no `tcp_syn_retries` give-up). The SYN's round
//!   trip is the connection's first RTT sample (RFC 6298 §2.2: SRTT = R, RTTVAR = R/2),
//!   unless the SYN was resent (Karn: the SYN-ACK may answer either copy); then the data
//!   RTO starts at `initial_rto` (RFC 6298 §5.7's 3 s re-initialisation after a SYN
//!   timeout is not modelled, as `initial_rto` itself is at datacenter scale). A
//!   duplicate SYN-ACK (the answer to a resent SYN) is ignored. Messages count from the
//!   application's send call, so a connection's first message includes the handshake.
//! - Byte stream: each message is appended to its connection's stream; segments are at
//!   most one MSS and never span two messages (no Nagle, no coalescing: TCP_NODELAY
//!   with one write per message), so every segment names the message its bytes belong
//!   to. The thread is released as soon as the message's last byte is in the send
//!   buffer (`send_buffer` bytes beyond `snd_una`): at once unless the buffer is full.
//! - Window: new data goes out while `pipe + segment ≤ cwnd` and the receive window
//!   allows, through the thread's share of the transmit ring (refilled as frames leave;
//!   the connections of one thread take turns).
//! - Loss recovery (RFC 6675 with SACK, RFC 6582 without): a segment is lost when three
//!   SACKed segments (or more than 2·MSS SACKed bytes) lie above it, or it is the first
//!   unacknowledged segment after the third duplicate ACK; without SACK, a partial ACK
//!   marks the next one lost. Entering recovery (at most once per window: `recover` =
//!   `snd_nxt`) asks the congestion control for `ssthresh` and `cwnd`; the first lost
//!   segment is resent at once, the rest while `pipe < cwnd`. `pipe` is RFC 6675's
//!   (outstanding, not SACKed, not lost unless resent); without SACK each duplicate ACK
//!   counts one MSS as having left the network (Linux's Reno emulation, equivalent to
//!   RFC 6582's window inflation). Recovery ends when the ACK reaches `recover`.
//! - RTO (RFC 6298, [`super::rto`]): armed while data is outstanding and restarted by
//!   every ACK of new data. On expiry: the first expiry of a series sets `ssthresh` (RFC
//!   5681 eq. 4 with RFC 6675's pipe as the flight, as ns-3; or the algorithm's own),
//!   `cwnd` = 1 MSS, every unSACKed segment is
//!   marked lost and resent as the window opens (slow start), the RTO doubles. RTT
//!   samples come from the newest segment an ACK covers, never when the ACK covers a
//!   resent segment (Karn).
//! - TCP over PL2 (`scheduler = "pl2"`, [`super::pl2`]): released segments (new and
//!   resent) go to the PL2 layer instead of the NIC, still counted in the thread's ring
//!   share until the NIC takes them; a segment's send time is when PL2 hands it to the
//!   NIC (`Sender::on_handed`), and an expiring RTO is pushed back to one RTO after the
//!   oldest outstanding segment actually left (never while it waits for its slot).
//! - Window growth counts the bytes each ACK newly reports delivered (cumulatively
//!   acknowledged and not SACKed before, or SACKed now), as Linux and ns-3 do; duplicate
//!   ACKs do not grow the window.
//! - RACK-TLP (`rack_tlp = true`, RFC 8985, state in [`super::rack`]): every ACK feeds
//!   the segments it newly delivers to RACK (§6.2 steps 1-4), which then marks lost each
//!   outstanding segment sent before the latest delivered one once RACK.rtt plus the
//!   reordering window has passed since it left, or arms the reordering timer for the
//!   rest (step 5); a segment RACK marks lost starts fast recovery as RFC 6675's rules
//!   do (both run, as in Linux 4.4–4.17). A lost retransmission is marked again the same
//!   way. With nothing SACKed and no recovery under way, the tail loss probe timer
//!   (§7.2) stands in for the RTO: when it fires, one segment goes out beyond the
//!   window (the next new one, or the last one sent again, §7.3), the RTO is re-armed,
//!   and an ACK beyond the resent probe's end shows it repaired a loss, which cuts the
//!   window as a fast recovery would (§7.4.2). On an RTO, only the first unacknowledged
//!   segment and those sent more than RACK.rtt + the reordering window ago are marked
//!   lost (§6.3).
//! - Not modelled: Nagle, slow start after idle, PRR (RFC 6937), D-SACK, the
//!   retransmission of a SACKed segment after reneging.

use super::cc::bbr::{CaState, RateSample};
use super::cc::{none::UNLIMITED, AckInfo, Cc, CongestionControl, Window};
use super::prr::Prr;
use super::rack::{Rack, TimerKind};
use super::rto::Rto;
use super::wire::{self, Ack, Segment, Syn};
use super::config::{CcKind, HandshakeAck, TcpConfig};
use super::{Ctx, TcpStats};
use crate::transport::{Actions, MsgInfo, SendSpec};
use crate::units::{Duration, SimTime};
use super::conn_index::ConnIndex;
use std::collections::VecDeque;

#[derive(Copy, Clone, Debug)]
struct Seg {
    start: u64,
    len: u32,
    msg: u32,
    gen: u16,
    msg_end: bool,
    sent: SimTime,
    /// Released to the PL2 layer and not yet handed to the NIC (TCP over PL2).
    queued: bool,
    /// Ever resent.
    retx: bool,
    sacked: bool,
    lost: bool,
    /// Resent since marked lost (counts in `pipe` again).
    rtx_out: bool,
    /// ns-3's retransmitted mark: set at every resend, cleared only by a timeout
    /// (`TcpConfig::sacked_retransmissions_in_flight`).
    rtx_mark: bool,
    /// The connection's delivery-rate state when this segment was (last) sent (Linux
    /// `tcp_rate_skb_sent`): delivered bytes, when the latest of them was reported, the
    /// send time of the flight's first segment, and whether the sender was
    /// application-limited. `rate_time` is [`SAMPLED`] once the segment has given its
    /// sample (a sentinel rather than an `Option`, which would take the record from 64 to
    /// 72 bytes).
    rate_delivered: u64,
    rate_time: SimTime,
    rate_first_tx: SimTime,
    rate_app_limited: bool,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum State {
    Open,
    /// Fast recovery (duplicate ACKs / SACK).
    Recovery,
    /// After a retransmission timeout.
    Loss,
}

/// Where a connection is in its three-way handshake (RFC 9293 §3.5).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Handshake {
    /// A SYN is due (the first one, or a resend after a SYN timeout) and waits for room in
    /// the thread's transmit-ring share.
    SynDue,
    /// A SYN is out, the SYN-ACK not yet back.
    SynSent,
    /// Data may flow (from the start when `handshake` is off).
    Established,
}

/// A sender's connection. Laid out by cache line (`repr(C)`, in this order): what every
/// ACK and send of a window-based control reads comes first, in the first six lines
/// (sequence numbers, scoreboard, window, the control's state, RTO, the flags, the
/// delivery-rate fields a new segment copies); recovery, handshake, RACK-TLP and BBR's
/// pacing after them. Hundreds of connections at a fat tree's scale do not stay in
/// cache: an ACK then misses on every line it touches (asserted by
/// `the_per_ack_fields_share_six_cache_lines`).
#[repr(C, align(64))]
pub(super) struct Conn {
    pub snd_una: u64,
    pub snd_nxt: u64,
    pub write_end: u64,
    segs: VecDeque<Seg>,
    pub dst: u32,
    pub flow: u32,
    pub w: Window,
    /// Messages whose bytes are not all sent: (stream end offset, slot, generation).
    msgs: VecDeque<(u64, u32, u16)>,
    /// Position in its thread's connection list (`Sender::per_thread`).
    pos: u32,
    dupacks: u32,
    pub cc: Cc,
    pub rto: Rto,
    /// A thread blocked until its message (ending at this offset) fits in the buffer.
    blocked: Option<(u16, u64)>,
    /// Timeouts since the last ACK of new data.
    rto_series: u32,
    pub thread: u16,
    pub state: State,
    pub handshake: Handshake,
    rto_armed: bool,
    /// Resend the first lost segment regardless of the window.
    retx_now: bool,
    /// Some segment may be SACKed or lost (false: `pipe` is `snd_nxt − snd_una`).
    marks: bool,
    /// The congestion control is BBR (read on every ACK and send: a flag is cheaper to
    /// test than the enum's variant).
    bbr: bool,
    /// Delivery-rate sampling (every new segment copies its first four fields) and BBR's
    /// pacing.
    rate: RateState,
    recover: u64,
    pub retransmissions: u64,
    /// Proportional Rate Reduction's state in the current fast recovery (`prr`).
    prr: Prr,
    /// When the latest SYN was sent, whether any SYN was sent twice (Karn), and the
    /// timeout of the SYN now out (`syn_rto`, doubled per resend).
    syn_sent: SimTime,
    syn_resent: bool,
    syn_rto: Duration,
    /// RACK-TLP's state (`rack_tlp` only).
    rack: Rack,
}

/// A connection's delivery-rate sampling (Linux `tcp_rate.c`) and pacing, read by BBR
/// only (but copied into every new segment's record: the first four fields, kept first).
#[derive(Default)]
#[repr(C)]
struct RateState {
    /// Bytes delivered so far, when the latest delivery was reported, the send time of
    /// the segment that starts the current sample's flight, and the application-limited
    /// mark (0: not limited; else limited until `delivered` passes it). `lost`: bytes
    /// marked lost so far.
    delivered: u64,
    delivered_time: SimTime,
    first_tx: SimTime,
    app_limited: u64,
    lost: u64,
    /// The least RTT sample seen (Linux `tcp_min_rtt`, whose 5-minute window outlasts
    /// any run): a rate sample over a shorter interval is not taken.
    min_rtt: Option<Duration>,
    /// Pacing: no unit leaves before `next_send`; the pacing timer is set.
    next_send: SimTime,
    pace_armed: bool,
}

pub(super) struct Sender {
    pub conns: Vec<Conn>,
    /// Connection index by (thread, peer).
    index: ConnIndex<(u16, u32)>,
    per_thread: Vec<Vec<u32>>,
    /// Per thread, a bit per position in `per_thread`: the connection's last `send` stopped
    /// because the thread's ring share was full. Only these can send when a frame leaves,
    /// so a dequeue visits them alone, in the same round-robin order as a visit of every
    /// connection would (any other connection's `send` would do nothing), instead of
    /// scanning all of a thread's connections: over a long run a host opens one to
    /// nearly every peer.
    waiting: Vec<Vec<u64>>,
    rr: Vec<usize>,
    pub(super) in_ring: Vec<u32>,
    ring: u32,
    /// TCP over PL2: released segments go to `staged` (connection, start, frame) for the
    /// PL2 layer instead of the NIC.
    pl2: bool,
    pub(super) staged: Vec<(u32, u64, SendSpec)>,
}

/// The first set bit of `words` in positions `from..to`.
fn next_set_bit(words: &[u64], from: usize, to: usize) -> Option<usize> {
    let mut j = from;
    while j < to {
        let w = words[j / 64] >> (j % 64);
        if w != 0 {
            let k = j + w.trailing_zeros() as usize;
            return (k < to).then_some(k);
        }
        j = (j / 64 + 1) * 64;
    }
    None
}

/// `Seg::rate_time` of a segment whose delivery has given its rate sample (Linux clears
/// `tx.delivered_mstamp` of a SACKed skb).
const SAMPLED: SimTime = SimTime(u64::MAX);

fn timer_id(idx: u32) -> u32 {
    4 * idx
}

fn pacing_timer_id(idx: u32) -> u32 {
    4 * idx + 3
}

/// One ACK's delivery-rate sample as it is gathered (Linux `struct rate_sample`, filled
/// by `tcp_rate_skb_delivered` for each segment the ACK delivers): the state when the
/// most recently sent of them left.
#[derive(Default)]
struct RateAcc {
    prior_delivered: Option<u64>,
    prior_time: SimTime,
    send_elapsed: Duration,
    app_limited: bool,
    /// RTT of the newest segment the ACK covers cumulatively (none if it covers a resent
    /// one), and the send time of the newest newly SACKed one not resent (Linux's
    /// `ca_rtt_us` takes the SACKed one when there is one).
    rtt: Option<Duration>,
    sack_newest: Option<SimTime>,
}

impl RateAcc {
    /// `tcp_rate_skb_delivered`: the segment sent with the highest delivered count gives
    /// the sample; the flight's first-send time moves to its send time.
    fn take(&mut self, g: &Seg, first_tx: &mut SimTime) {
        let t = g.rate_time;
        if t == SAMPLED {
            return;
        }
        if self.prior_delivered.is_none_or(|p| g.rate_delivered > p) {
            self.prior_delivered = Some(g.rate_delivered);
            self.prior_time = t;
            self.app_limited = g.rate_app_limited;
            self.send_elapsed = g.sent.since(g.rate_first_tx);
            *first_tx = g.sent;
        }
    }
}

impl Conn {
    /// Bytes in flight: RFC 6675's pipe with SACK (§4 `SetPipe`), RFC 5681's FlightSize
    /// less the duplicate ACKs without (Reno emulation).
    fn pipe(&self, cfg: &TcpConfig, mss: u64) -> u64 {
        let sack = cfg.sack;
        if !self.marks {
            return (self.snd_nxt - self.snd_una).saturating_sub(if sack { 0 } else { u64::from(self.dupacks) * mss });
        }
        self.pipe_marked(cfg, mss)
    }

    /// [`Conn::pipe`] with segments marked SACKed or lost: a walk of the scoreboard, out
    /// of line (only after a loss or reordering).
    #[inline(never)]
    fn pipe_marked(&self, cfg: &TcpConfig, mss: u64) -> u64 {
        let sack = cfg.sack;
        let sacked_rtx = cfg.sacked_retransmissions_in_flight;
        let mut p = 0u64;
        for s in &self.segs {
            let counts = if s.sacked { sacked_rtx && s.rtx_mark } else { !s.lost || s.rtx_out };
            if counts {
                p += u64::from(s.len);
            }
        }
        if !sack {
            p = p.saturating_sub(u64::from(self.dupacks) * mss);
        }
        p
    }

    /// RFC 6675 IsLost for every segment: marks newly lost ones; true if any.
    #[inline]
    fn mark_lost_sack(&mut self, mss: u64) -> bool {
        if !self.marks {
            return false;
        }
        self.mark_lost_sack_marked(mss)
    }

    /// [`Conn::mark_lost_sack`]'s walk, out of line (only with marks).
    #[inline(never)]
    fn mark_lost_sack_marked(&mut self, mss: u64) -> bool {
        let (mut n, mut bytes, mut any) = (0u32, 0u64, false);
        for s in self.segs.iter_mut().rev() {
            if s.sacked {
                n += 1;
                bytes += u64::from(s.len);
            } else if !s.lost && (n >= 3 || bytes > 2 * mss) {
                s.lost = true;
                s.rtx_out = false;
                any = true;
                self.marks = true;
            }
        }
        any
    }

    /// Bytes marked lost and not resent (BBR's loss count is the growth of this over an
    /// ACK).
    fn lost_bytes(&self) -> u64 {
        if !self.marks {
            return 0;
        }
        self.segs.iter().filter(|s| s.lost && !s.rtx_out && !s.sacked).map(|s| u64::from(s.len)).sum()
    }

    /// Records a first transmission of `len` bytes from `snd_nxt` with the connection's
    /// delivery-rate state (Linux `tcp_rate_skb_sent`: with nothing outstanding, the
    /// flight and the delivery clock start now).
    fn push_new_segment(&mut self, now: SimTime, len: u64, msg: u32, gen: u16, msg_end: bool, queued: bool) {
        if self.snd_una == self.snd_nxt {
            self.rate.first_tx = now;
            self.rate.delivered_time = now;
        }
        self.segs.push_back(Seg {
            start: self.snd_nxt,
            len: len as u32,
            msg,
            gen,
            msg_end,
            sent: now,
            queued,
            retx: false,
            sacked: false,
            lost: false,
            rtx_out: false,
            rtx_mark: false,
            rate_delivered: self.rate.delivered,
            rate_time: self.rate.delivered_time,
            rate_first_tx: self.rate.first_tx,
            rate_app_limited: self.rate.app_limited != 0,
        });
    }

    fn mark_first_lost(&mut self) {
        if let Some(s) = self.segs.iter_mut().find(|s| !s.sacked) {
            s.lost = true;
            s.rtx_out = false;
            self.marks = true;
        }
    }
}

impl Sender {
    pub fn new(threads: u16, ring: u32, pl2: bool) -> Sender {
        Sender {
            conns: Vec::new(),
            index: ConnIndex::new(),
            per_thread: vec![Vec::new(); threads as usize],
            waiting: vec![Vec::new(); threads as usize],
            rr: vec![0; threads as usize],
            in_ring: vec![0; threads as usize],
            ring: ring.max(1),
            pl2,
            staged: Vec::new(),
        }
    }

    fn conn(&mut self, ctx: &Ctx, thread: u16, dst: u32) -> u32 {
        if let Some(i) = self.index.get((thread, dst)) {
            return i;
        }
        let mss = ctx.mss;
        let flow = wire::flow_id(ctx.host, dst, thread);
        let cc = Cc::for_config(&ctx.cfg, mss, || crate::rng::SimRng::stream(ctx.bbr_seed, &format!("conn{flow}")));
        let unlimited = matches!(cc, Cc::None(_));
        let cc_kind = ctx.cfg.cc_kind();
        let pos = self.per_thread[thread as usize].len() as u32;
        let c = Conn {
            dst,
            thread,
            pos,
            flow,
            snd_una: 0,
            snd_nxt: 0,
            write_end: 0,
            msgs: VecDeque::new(),
            segs: VecDeque::new(),
            w: Window {
                cwnd: if unlimited { UNLIMITED } else { u64::from(ctx.cfg.initial_window) * mss },
                ssthresh: UNLIMITED,
                mss,
            },
            cc,
            rto: Rto::new(ctx.cfg.initial_rto, ctx.cfg.min_rto, ctx.cfg.max_rto).linux(ctx.cfg.linux_rto),
            state: State::Open,
            recover: 0,
            dupacks: 0,
            blocked: None,
            rto_armed: false,
            rto_series: 0,
            retx_now: false,
            prr: Prr::default(),
            retransmissions: 0,
            marks: false,
            handshake: if ctx.cfg.handshake { Handshake::SynDue } else { Handshake::Established },
            syn_sent: SimTime::ZERO,
            syn_resent: false,
            syn_rto: ctx.cfg.syn_rto,
            rack: Rack::default(),
            bbr: matches!(cc_kind, CcKind::Bbr),
            rate: RateState::default(),
        };
        self.conns.push(c);
        let i = self.conns.len() as u32 - 1;
        self.index.insert((thread, dst), i);
        self.per_thread[thread as usize].push(i);
        let words = &mut self.waiting[thread as usize];
        if words.len() * 64 <= pos as usize {
            words.push(0);
        }
        i
    }

    pub fn on_message(&mut self, now: SimTime, ctx: &Ctx, msg: &MsgInfo, st: &mut TcpStats, out: &mut Actions) {
        st.messages_sent += 1;
        let i = self.conn(ctx, msg.thread, msg.dst);
        let c = &mut self.conns[i as usize];
        c.write_end += msg.size;
        c.msgs.push_back((c.write_end, msg.slot, msg.gen));
        if c.write_end - c.snd_una <= ctx.cfg.send_buffer.0 {
            out.released.push(msg.thread);
        } else {
            c.blocked = Some((msg.thread, c.write_end));
        }
        self.send(now, ctx, i, st, out);
    }

    /// Sends what the window, the buffer and the ring allow: lost segments first; before
    /// the connection is established, only a due SYN.
    fn send(&mut self, now: SimTime, ctx: &Ctx, i: u32, st: &mut TcpStats, out: &mut Actions) {
        let ring_full = self.send_within_ring(now, ctx, i, st, out);
        let c = &self.conns[i as usize];
        let (word, bit) = (c.pos as usize / 64, 1u64 << (c.pos % 64));
        let w = &mut self.waiting[c.thread as usize][word];
        if ring_full {
            *w |= bit;
        } else {
            *w &= !bit;
        }
    }

    /// [`Self::send`]'s work; true if it stopped only because the ring share was full.
    fn send_within_ring(&mut self, now: SimTime, ctx: &Ctx, i: u32, st: &mut TcpStats, out: &mut Actions) -> bool {
        let mss = ctx.mss;
        let c = &mut self.conns[i as usize];
        let t = c.thread as usize;
        if c.handshake != Handshake::Established {
            if c.handshake == Handshake::SynDue && self.in_ring[t] >= self.ring {
                return true;
            }
            if c.handshake == Handshake::SynDue {
                // Never scheduled by PL2 (a control frame like a pure ACK): straight to
                // the NIC; under PL2 `TcpHost::schedule` counts it in the ring share.
                let &(_, msg, msg_gen) = c.msgs.front().expect("a message opened the connection");
                let syn = Syn { flow: c.flow, thread: c.thread, msg, msg_gen, ack: false };
                out.sends.push(wire::encode_syn(c.dst, &syn, ctx.cfg.priority));
                if !self.pl2 {
                    self.in_ring[t] += 1;
                }
                st.syns_sent += 1;
                c.handshake = Handshake::SynSent;
                c.syn_sent = now;
                out.set_timer(timer_id(i), now + c.syn_rto);
            }
            return false;
        }
        let ect = c.cc.ecn();
        let mut pipe = c.pipe(&ctx.cfg, mss);
        let mut sent_new = false;
        // Pacing (BBR): one sending unit of at most `unit` segments when `next_send` has
        // come (Linux 4.15's internal pacing: a TSO skb of `tso_segs_goal` segments, then
        // a timer for its length at the pacing rate).
        let paced = c.bbr;
        let mut unit = match &c.cc {
            Cc::Bbr(_) if now < c.rate.next_send => 0,
            Cc::Bbr(b) => b.unit_segs(),
            _ => u64::MAX,
        };
        let mut unit_bytes = 0u64;
        while self.in_ring[t] < self.ring {
            if unit == 0 {
                break;
            }
            // A lost segment not yet resent.
            let next_lost = if c.marks { c.segs.iter().position(|s| s.lost && !s.rtx_out && !s.sacked) } else { None };
            if let Some(j) = next_lost {
                let s = &mut c.segs[j];
                let len = u64::from(s.len);
                if c.retx_now || pipe + len <= c.w.cwnd {
                    c.retx_now = false;
                    s.rtx_out = true;
                    s.retx = true;
                    s.rtx_mark = true;
                    s.sent = now;
                    s.queued = self.pl2;
                    s.rate_delivered = c.rate.delivered;
                    s.rate_time = c.rate.delivered_time;
                    s.rate_first_tx = c.rate.first_tx;
                    s.rate_app_limited = c.rate.app_limited != 0;
                    pipe += len;
                    unit -= 1;
                    unit_bytes += len;
                    let seg = Segment { seq32: s.start as u32, flow: c.flow, msg: s.msg, msg_gen: s.gen, msg_end: s.msg_end, ect, ce: false, retx: true };
                    let spec = wire::encode_segment(c.dst, &seg, s.len, ctx.cfg.priority, c.thread);
                    if self.pl2 {
                        self.staged.push((i, s.start, spec));
                    } else {
                        out.sends.push(spec);
                    }
                    self.in_ring[t] += 1;
                    c.retransmissions += 1;
                    st.retransmissions += 1;
                    if c.state == State::Recovery {
                        c.prr.on_sent();
                    }
                    continue;
                }
                break;
            }
            // New data.
            let limit = c.write_end.min(c.snd_una + ctx.cfg.send_buffer.0);
            if c.snd_nxt >= limit {
                // `tcp_rate_check_app_limited`: nothing to send with room in the window.
                if paced && pipe < c.w.cwnd {
                    c.rate.app_limited = (c.rate.delivered + pipe).max(1);
                }
                break;
            }
            let &(mend, slot, gen) = c.msgs.front().expect("unsent bytes belong to a message");
            let end = (c.snd_nxt + mss).min(mend).min(limit);
            let len = end - c.snd_nxt;
            if pipe + len > c.w.cwnd || end - c.snd_una > ctx.cfg.receive_window.0 {
                break;
            }
            let msg_end = end == mend;
            if msg_end {
                c.msgs.pop_front();
            }
            c.push_new_segment(now, len, slot, gen, msg_end, self.pl2);
            let seg = Segment { seq32: c.snd_nxt as u32, flow: c.flow, msg: slot, msg_gen: gen, msg_end, ect, ce: false, retx: false };
            let spec = wire::encode_segment(c.dst, &seg, len as u32, ctx.cfg.priority, c.thread);
            if self.pl2 {
                self.staged.push((i, c.snd_nxt, spec));
            } else {
                out.sends.push(spec);
            }
            self.in_ring[t] += 1;
            st.segments_sent += 1;
            if c.state == State::Recovery {
                c.prr.on_sent();
            }
            c.snd_nxt = end;
            pipe += len;
            sent_new = true;
            unit -= 1;
            unit_bytes += len;
        }
        if paced {
            if let Cc::Bbr(b) = &c.cc {
                if unit_bytes > 0 {
                    c.rate.next_send = now + b.unit_gap(unit_bytes);
                }
            }
            // More may be ready when the gap has passed: the timer sends it then.
            if now < c.rate.next_send && !c.rate.pace_armed {
                c.rate.pace_armed = true;
                out.set_timer(pacing_timer_id(i), c.rate.next_send);
            }
        }
        if ctx.cfg.rack_tlp {
            // RFC 8985 §7.2: new data (re)starts the PTO.
            c.rack.pto_restart |= sent_new;
            if !c.rto_armed && c.snd_una < c.snd_nxt {
                c.rto_armed = true;
                c.rack.rto_due = now + c.rto.rto;
            }
            Self::arm(now, ctx, c, i, out);
        } else if !c.rto_armed && c.snd_una < c.snd_nxt {
            c.rto_armed = true;
            out.set_timer(timer_id(i), now + c.rto.rto);
        }
        // Every `break` above leaves the ring share with room; only the loop's own
        // condition ends it full.
        self.in_ring[t] >= self.ring
    }

    /// The connection's probe values, if `probes` is on (a flag read inline on every ACK;
    /// the values out of line).
    #[inline(always)]
    fn probes(ctx: &Ctx, c: &Conn, out: &mut Actions) {
        if ctx.cfg.probes {
            Self::push_probes(ctx, c, out);
        }
    }

    #[inline(never)]
    fn push_probes(ctx: &Ctx, c: &Conn, out: &mut Actions) {
        let f = c.flow;
        out.probes.push((f, "tcp_cwnd", c.w.cwnd as f64));
        out.probes.push((f, "tcp_ssthresh", c.w.ssthresh as f64));
        out.probes.push((f, "tcp_srtt_us", c.rto.srtt.map_or(f64::NAN, |d| d.as_secs_f64() * 1e6)));
        out.probes.push((f, "tcp_inflight", c.pipe(&ctx.cfg, ctx.mss) as f64));
        out.probes.push((f, "tcp_retx", c.retransmissions as f64));
        if let Some(a) = c.cc.alpha() {
            out.probes.push((f, "tcp_alpha", a));
        }
        if let Cc::Cubic(cu) = &c.cc {
            out.probes.push((f, "tcp_cubic_reno_friendly", f64::from(u8::from(cu.reno_friendly))));
        }
        if let Cc::Bbr(b) = &c.cc {
            out.probes.push((f, "tcp_bbr_bw_gbps", b.bw() * 8e-9));
            out.probes.push((f, "tcp_bbr_min_rtt_us", b.min_rtt().map_or(f64::NAN, |d| d.as_secs_f64() * 1e6)));
            out.probes.push((f, "tcp_pacing_gbps", b.pacing_rate() * 8e-9));
            out.probes.push((f, "tcp_bbr_mode", f64::from(b.mode as u8)));
        }
    }

    /// Enters fast recovery. The window is cut from the bytes actually in flight (RFC 6675's
    /// `pipe`: SACKed and lost segments excluded), as ns-3 does and as Linux's cwnd-based
    /// cut amounts to, rather than from snd_nxt − snd_una (RFC 5681's FlightSize): with
    /// SACK the latter still counts everything SACKed above a hole, so after one loss it
    /// can exceed the path's capacity many times and every later recovery starts with a
    /// window that overflows the bottleneck again (found by the ns-3 comparison).
    #[inline(never)]
    fn enter_recovery(now: SimTime, c: &mut Conn, st: &mut TcpStats, cfg: &TcpConfig, mss: u64) {
        c.state = State::Recovery;
        c.recover = c.snd_nxt;
        c.retx_now = true;
        let flight = c.pipe(cfg, mss);
        c.prr = Prr::start(c.w.cwnd, mss);
        c.cc.on_congestion_point(c.snd_una, c.snd_nxt);
        c.cc.on_loss(&mut c.w, now, flight);
        st.fast_recoveries += 1;
    }

    /// RACK-TLP's one timer (RFC 8985 §8): RACK's reordering timer if armed; else, with
    /// no recovery under way and nothing SACKed (§7.2), the PTO, restarted after new data
    /// left or an ACK acknowledged new data and otherwise left as set; else the RTO. With
    /// nothing outstanding, no timer. An RTO deadline already passed is pushed to one RTO
    /// from now, as Linux's `tcp_rearm_rto` does.
    fn arm(now: SimTime, ctx: &Ctx, c: &mut Conn, i: u32, out: &mut Actions) {
        let r = &mut c.rack;
        if c.snd_una >= c.snd_nxt {
            r.reo_due = None;
            r.pto_restart = false;
            c.rto_armed = false;
            if r.timer_at.take().is_some() {
                out.cancel_timer(timer_id(i));
            }
            return;
        }
        c.rto_armed = true;
        if r.rto_due <= now {
            r.rto_due = now + c.rto.rto;
        }
        let probe_allowed = c.state == State::Open && !(c.marks && c.segs.iter().any(|g| g.sacked));
        let (kind, at) = match (r.reo_due, r.timer_at) {
            (Some(t), _) => (TimerKind::Reo, t),
            (None, _) if probe_allowed && r.pto_restart => {
                let delack = if ctx.cfg.delayed_ack { ctx.cfg.delayed_ack_timeout } else { Duration::ZERO };
                (TimerKind::Pto, super::rack::pto_at(now, c.rto.srtt, c.segs.len() == 1, delack, ctx.cfg.min_pto, ctx.cfg.initial_rto, r.rto_due))
            }
            (None, Some(t)) if probe_allowed && r.timer == TimerKind::Pto => (TimerKind::Pto, t),
            _ => (TimerKind::Rto, r.rto_due),
        };
        r.pto_restart = false;
        r.timer = kind;
        if r.timer_at != Some(at) {
            r.timer_at = Some(at);
            out.set_timer(timer_id(i), at);
        }
    }

    /// RFC 8985 §6.2 step 5 (RACK_detect_loss): marks lost every outstanding segment sent
    /// before RACK.segment whose RACK.rtt + reordering window has passed since it left
    /// (skipping those already marked lost and not resent since), and sets the
    /// reordering timer to the latest deadline of the rest. True if any was marked.
    #[inline(never)]
    fn rack_detect_loss(now: SimTime, c: &mut Conn, st: &mut TcpStats) -> bool {
        if c.rack.segment.is_none() {
            c.rack.reo_due = None;
            return false;
        }
        let sacked = if c.marks { c.segs.iter().filter(|g| g.sacked).count() as u32 } else { 0 };
        let w = c.rack.reo_wnd(c.state != State::Open, sacked, c.rto.srtt);
        let (mut timeout, mut any) = (Duration::ZERO, false);
        for g in c.segs.iter_mut() {
            if g.sacked || (g.lost && !g.rtx_out) {
                continue;
            }
            match c.rack.remaining(now, g.sent, g.start + u64::from(g.len), w) {
                Some(d) if d == Duration::ZERO => {
                    g.lost = true;
                    g.rtx_out = false;
                    any = true;
                    st.rack_marked_lost += 1;
                }
                Some(d) => timeout = timeout.max(d),
                None => {}
            }
        }
        if any {
            c.marks = true;
        }
        c.rack.reo_due = (timeout > Duration::ZERO).then(|| now + timeout);
        any
    }

    /// RFC 8985 §7.4 (TLP_process_ack), for an ACK up to `ack` (`dup_no_sack`: a
    /// duplicate ACK without a SACK block): the probe episode ends when the ACK reaches
    /// TLP.end_seq; a resent probe followed by an ACK beyond it repaired a loss
    /// (§7.4.2), and the congestion control reacts as to any loss (once: not if this very
    /// ACK started a recovery). No D-SACK, so a redundant probe is only seen by a
    /// duplicate ACK without SACK (the original and the probe both arrived).
    #[inline(never)]
    fn tlp_process_ack(now: SimTime, ctx: &Ctx, c: &mut Conn, ack: u64, dup_no_sack: bool, st: &mut TcpStats) {
        let Some(end) = c.rack.tlp_end_seq else { return };
        if ack < end {
            return;
        }
        if !c.rack.tlp_is_retrans || dup_no_sack {
            c.rack.tlp_end_seq = None;
        } else if ack > end {
            c.rack.tlp_end_seq = None;
            st.loss_probe_recoveries += 1;
            if c.state == State::Open {
                let flight = c.pipe(&ctx.cfg, ctx.mss);
                c.cc.on_congestion_point(c.snd_una, c.snd_nxt);
                c.cc.on_loss(&mut c.w, now, flight);
            }
        }
    }

    /// The PTO of connection `i` fired (RFC 8985 §7.3, TLP_send_probe): with no probe
    /// out and an RTT sample since the last one, send one segment whatever the window
    /// and the ring share: the next new segment if the send buffer and the receive window
    /// allow, else the last one sent again. Then the RTO, not the PTO, is re-armed.
    fn send_probe(&mut self, now: SimTime, ctx: &Ctx, i: u32, st: &mut TcpStats, out: &mut Actions) {
        let mss = ctx.mss;
        let c = &mut self.conns[i as usize];
        if c.rack.tlp_end_seq.is_none() && c.rack.rtt_sampled_since_probe {
            let ect = c.cc.ecn();
            let limit = c.write_end.min(c.snd_una + ctx.cfg.send_buffer.0);
            let next = c.msgs.front().map(|&(mend, _, _)| (c.snd_nxt + mss).min(mend).min(limit));
            let new = next.filter(|&end| c.snd_nxt < limit && end - c.snd_una <= ctx.cfg.receive_window.0);
            let mut sent = false;
            if let Some(end) = new {
                let &(mend, slot, gen) = c.msgs.front().expect("checked");
                let len = end - c.snd_nxt;
                let msg_end = end == mend;
                if msg_end {
                    c.msgs.pop_front();
                }
                c.push_new_segment(now, len, slot, gen, msg_end, false);
                let seg = Segment { seq32: c.snd_nxt as u32, flow: c.flow, msg: slot, msg_gen: gen, msg_end, ect, ce: false, retx: false };
                out.sends.push(wire::encode_segment(c.dst, &seg, len as u32, ctx.cfg.priority, c.thread));
                st.segments_sent += 1;
                c.snd_nxt = end;
                c.rack.tlp_is_retrans = false;
                sent = true;
            } else if let Some(g) = c.segs.back_mut() {
                g.retx = true;
                g.rtx_mark = true;
                g.sent = now;
                if g.lost {
                    g.rtx_out = true;
                }
                let seg = Segment { seq32: g.start as u32, flow: c.flow, msg: g.msg, msg_gen: g.gen, msg_end: g.msg_end, ect, ce: false, retx: true };
                out.sends.push(wire::encode_segment(c.dst, &seg, g.len, ctx.cfg.priority, c.thread));
                c.retransmissions += 1;
                st.retransmissions += 1;
                c.rack.tlp_is_retrans = true;
                sent = true;
            }
            if sent {
                self.in_ring[c.thread as usize] += 1;
                st.loss_probes += 1;
                c.rack.tlp_end_seq = Some(c.snd_nxt);
                c.rack.rtt_sampled_since_probe = false;
            }
        }
        c.rack.rto_due = now + c.rto.rto;
        c.rack.timer = TimerKind::Rto;
        c.rack.pto_restart = false;
        self.send(now, ctx, i, st, out);
        Self::probes(ctx, &self.conns[i as usize], out);
    }

    /// `tcp_rate_gen` then `bbr_main`: closes this ACK's rate sample and hands it to BBR.
    #[inline(never)]
    fn bbr_sample(now: SimTime, ctx: &Ctx, c: &mut Conn, acc: RateAcc, delivered: u64, losses: u64, prior_in_flight: u64) {
        c.rate.delivered += delivered;
        c.rate.lost += losses;
        if c.rate.app_limited != 0 && c.rate.delivered > c.rate.app_limited {
            c.rate.app_limited = 0;
        }
        if delivered > 0 {
            c.rate.delivered_time = now;
        }
        let rtt = match acc.sack_newest {
            Some(t) => Some(now.since(t)),
            None => acc.rtt,
        };
        if let Some(r) = rtt {
            c.rate.min_rtt = Some(c.rate.min_rtt.map_or(r, |m| m.min(r)));
        }
        let rate = acc.prior_delivered.and_then(|prior| {
            let interval = acc.send_elapsed.max(now.since(acc.prior_time));
            let short = c.rate.min_rtt.is_some_and(|m| interval < m);
            (!short).then_some((c.rate.delivered - prior, interval))
        });
        let state = match c.state {
            State::Open => CaState::Open,
            State::Recovery => CaState::Recovery,
            State::Loss => CaState::Loss,
        };
        let sample = RateSample {
            now,
            acked_sacked: delivered,
            rate,
            prior_delivered: acc.prior_delivered.unwrap_or(0),
            is_app_limited: acc.app_limited,
            rtt,
            losses,
            prior_in_flight,
            in_flight: c.pipe(&ctx.cfg, ctx.mss),
            delivered: c.rate.delivered,
            lost: c.rate.lost,
            delivered_time: c.rate.delivered_time,
            state,
            srtt: c.rto.srtt,
        };
        if let Cc::Bbr(b) = &mut c.cc {
            b.on_rate_sample(&mut c.w, &sample);
            if std::mem::take(&mut b.app_limited_request) {
                c.rate.app_limited = (c.rate.delivered + sample.in_flight).max(1);
            }
        }
    }

    /// Connection `i`'s pacing timer fired: the next sending unit may leave.
    pub fn on_pacing_timer(&mut self, now: SimTime, ctx: &Ctx, i: u32, st: &mut TcpStats, out: &mut Actions) {
        let Some(c) = self.conns.get_mut(i as usize) else { return };
        c.rate.pace_armed = false;
        self.send(now, ctx, i, st, out);
    }

    /// An ACK from `src` arrived.
    pub fn on_ack(&mut self, now: SimTime, ctx: &Ctx, src: u32, a: &Ack, st: &mut TcpStats, out: &mut Actions) {
        st.acks_received += 1;
        let Some(i) = self.index.get((a.thread, src)) else {
            std::hint::cold_path();
            st.stale_acks += 1;
            return;
        };
        let mss = ctx.mss;
        let c = &mut self.conns[i as usize];
        let ack = wire::unwrap_seq(a.ack32, c.snd_una);
        if ack < c.snd_una || ack > c.snd_nxt {
            std::hint::cold_path();
            st.stale_acks += 1;
            return;
        }
        if a.ece {
            st.ecn_echoes += 1;
        }
        let rack = ctx.cfg.rack_tlp;
        let advanced = ack > c.snd_una;
        // BBR's rate sample (Linux `tcp_rate_skb_delivered`, `tcp_rate_gen`).
        let bbr = c.bbr;
        let prior_in_flight = if bbr { c.pipe(&ctx.cfg, mss) } else { 0 };
        let mut rs = RateAcc::default();
        if rack && advanced {
            Self::rack_rtt_first(now, c, ack);
        }
        // RACK (§6.2 steps 2-3): the latest sent segment this ACK newly delivers, and
        // RACK.fack before it.
        let mut best = None;
        // (Read under `rack_tlp` only: the record sits in a line no other ACK touches.)
        let fack = if rack { c.rack.fack } else { 0 };
        let (mut sack_fack, mut cum_fack) = (fack, fack);
        // Bytes this ACK newly reports delivered (SACKed now, or cumulatively acknowledged
        // and not SACKed before): what the window grows by, see below.
        let mut delivered = 0u64;
        // Whether a resent segment is among them (PRR's slow-start bound, `prr`).
        let mut retx_delivered = false;
        if ctx.cfg.sack && a.sack.1 > 0 {
            (delivered, retx_delivered) = Self::walk_sack_block(now, c, ack, a.sack, rack, &mut rs, &mut best, &mut sack_fack);
        }
        if ack > c.snd_una {
            let acked = ack - c.snd_una;
            let (mut any_retx, mut last_sent) = (false, None);
            while let Some(g) = c.segs.front_mut() {
                let end = g.start + u64::from(g.len);
                if end <= ack {
                    any_retx |= g.retx;
                    last_sent = Some(g.sent);
                    if !g.sacked {
                        delivered += u64::from(g.len);
                        retx_delivered |= g.retx;
                        if bbr {
                            rs.take(g, &mut c.rate.first_tx);
                        }
                        if rack {
                            c.rack.on_delivered(now, g.sent, end, g.retx, &mut best);
                            c.rack.detect_reordering(&mut cum_fack, end, g.retx);
                        }
                    }
                    c.segs.pop_front();
                } else {
                    if g.start < ack {
                        if !g.sacked {
                            delivered += ack - g.start;
                        }
                        g.len = (end - ack) as u32;
                        g.start = ack;
                    }
                    break;
                }
            }
            c.snd_una = ack;
            if c.segs.is_empty() {
                std::hint::cold_path();
                c.marks = false;
                // An idle connection frees its scoreboard and message list: a host may
                // open a connection to every peer over a long run, and each would
                // otherwise keep a window's worth of records (kilobytes) forever. Once
                // per idle period, not per segment; the next message allocates afresh.
                c.segs = VecDeque::new();
                if c.msgs.is_empty() {
                    c.msgs = VecDeque::new();
                }
            }
            if let (false, Some(t)) = (any_retx, last_sent) {
                c.rto.sample(now.since(t));
                st.rtt_samples += 1;
                rs.rtt = Some(now.since(t));
            }
            c.rto_series = 0;
            if c.state == State::Recovery && !ctx.cfg.sack {
                std::hint::cold_path();
                // Reno emulation: the segments this ACK covers include those the
                // duplicate ACKs counted (all but the resent one).
                let n = (acked / mss).saturating_sub(1);
                c.dupacks = c.dupacks.saturating_sub(n.min(u64::from(u32::MAX)) as u32);
            } else {
                c.dupacks = 0;
            }
            let was_recovery = c.state == State::Recovery;
            match c.state {
                State::Recovery | State::Loss if ack >= c.recover => {
                    std::hint::cold_path();
                    if c.state == State::Recovery && ctx.cfg.prr {
                        // `tcp_end_cwnd_reduction`: the window is ssthresh when recovery ends.
                        c.w.cwnd = c.w.ssthresh;
                    }
                    c.state = State::Open;
                    // Recovery is over: the duplicate ACKs it counted are spent (left
                    // over, they would start a spurious recovery on this very ACK).
                    c.dupacks = 0;
                    c.marks = c.segs.iter().any(|g| g.sacked || g.lost);
                }
                State::Recovery if !ctx.cfg.sack => {
                    std::hint::cold_path();
                    // RFC 6582 partial ACK: the next segment is lost too.
                    c.mark_first_lost();
                    c.retx_now = true;
                }
                _ => {}
            }
            // The window grows by the bytes this ACK newly reports delivered, not by
            // `ack − snd_una`: a cumulative ACK that fills a hole also covers everything
            // SACKed above it, delivered (and reported) by earlier ACKs. Counting it again
            // opened cwnd by up to a whole window on one ACK (after a timeout, from 1 to
            // ssthresh) and released it as one line-rate burst into the full queue.
            // RFC 5681 §3.1 grows by "previously unacknowledged bytes", at most SMSS
            // (RFC 3465 §2.3: L = 2·SMSS) per ACK, against exactly such bursts; Linux
            // (`tcp_newly_delivered`, growth only on ACKs that advance snd_una) and ns-3
            // (`TcpRateOps` delivered bytes of the ACK) count this ACK's delivered data, as
            // here. Duplicate ACKs never grow the window (their SACKed bytes are not counted
            // later either).
            let in_flight = c.pipe(&ctx.cfg, mss);
            let info = AckInfo { now, acked: delivered, cum_acked: acked, ece: a.ece, srtt: c.rto.srtt, rtt: rs.rtt, in_recovery: was_recovery, in_flight, snd_una: c.snd_una, snd_nxt: c.snd_nxt };
            c.cc.on_ack(&mut c.w, &info);
            if let Some((thread, end)) = c.blocked {
                if end - c.snd_una <= ctx.cfg.send_buffer.0 {
                    c.blocked = None;
                    out.released.push(thread);
                }
            }
            if rack {
                // RFC 6298 §5.3 restarts the RTO; RFC 8985 §7.2 the PTO (`arm`, called
                // by `send` below, decides which of the two the timer stands for).
                c.rack.rto_due = now + c.rto.rto;
                c.rack.pto_restart = true;
            } else if c.snd_una < c.snd_nxt {
                c.rto_armed = true;
                out.set_timer(timer_id(i), now + c.rto.rto);
            } else if c.rto_armed {
                c.rto_armed = false;
                out.cancel_timer(timer_id(i));
            }
        } else if c.snd_una < c.snd_nxt {
            std::hint::cold_path();
            c.dupacks += 1;
            st.dupacks += 1;
        }
        let lost_before = if bbr { c.lost_bytes() } else { 0 };
        let mut rack_lost = false;
        if rack {
            c.rack.fack = sack_fack.max(cum_fack);
            c.rack.update(now, best);
            rack_lost = Self::rack_detect_loss(now, c, st);
        }
        match c.state {
            State::Open => {
                let mut lost = rack_lost | (ctx.cfg.sack && c.mark_lost_sack(mss));
                if c.dupacks >= 3 {
                    std::hint::cold_path();
                    c.mark_first_lost();
                    lost = true;
                }
                if lost {
                    std::hint::cold_path();
                    Self::enter_recovery(now, c, st, &ctx.cfg, mss);
                }
            }
            State::Recovery if ctx.cfg.sack => {
                std::hint::cold_path();
                c.mark_lost_sack(mss);
            }
            _ => {}
        }
        if c.state == State::Recovery && ctx.cfg.prr {
            std::hint::cold_path();
            // RFC 6937 on every ACK of the recovery, its first included (Linux's
            // `tcp_cong_control` after `tcp_fastretrans_alert`).
            if let Some(w) = c.prr.on_ack(c.w.ssthresh, c.pipe(&ctx.cfg, mss), delivered, retx_delivered, mss) {
                c.w.cwnd = w;
            }
        }
        if rack {
            Self::tlp_process_ack(now, ctx, c, ack, !advanced && a.sack.1 == 0, st);
        }
        if bbr {
            let losses = c.lost_bytes().saturating_sub(lost_before);
            Self::bbr_sample(now, ctx, c, rs, delivered, losses, prior_in_flight);
        }
        self.send(now, ctx, i, st, out);
        Self::probes(ctx, &self.conns[i as usize], out);
    }

    /// RFC 8985 §6.2 step 1 (RACK): this ACK's RTT sample (as taken in `on_ack`: the
    /// newest segment it covers, none if it covers a resent one) updates min_RTT before
    /// the delivered segments are walked. Out of line: only under `rack_tlp`.
    #[inline(never)]
    fn rack_rtt_first(now: SimTime, c: &mut Conn, ack: u64) {
        let (mut any_retx, mut last_sent) = (false, None);
        for g in c.segs.iter().take_while(|g| g.start + u64::from(g.len) <= ack) {
            any_retx |= g.retx;
            last_sent = Some(g.sent);
        }
        if let (false, Some(t)) = (any_retx, last_sent) {
            c.rack.on_rtt_sample(now.since(t));
        }
    }

    /// Marks the segments inside the ACK's SACK block `sack` (offset from `ack`, length)
    /// SACKed; returns the bytes newly reported delivered and whether a resent segment is
    /// among them (with BBR's rate sample and RACK's state taken as in `on_ack`). Out of
    /// line: an ACK carries a block only after a loss or reordering.
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn walk_sack_block(now: SimTime, c: &mut Conn, ack: u64, sack: (u32, u32), rack: bool, rs: &mut RateAcc, best: &mut Option<(SimTime, u64)>, sack_fack: &mut u64) -> (u64, bool) {
        let bbr = c.bbr;
        let (mut delivered, mut retx_delivered) = (0u64, false);
        let s = ack + u64::from(sack.0);
        let e = s + u64::from(sack.1);
        for g in c.segs.iter_mut() {
            if g.start >= s && g.start + u64::from(g.len) <= e {
                if !g.sacked {
                    delivered += u64::from(g.len);
                    retx_delivered |= g.retx;
                    if bbr {
                        rs.take(g, &mut c.rate.first_tx);
                        g.rate_time = SAMPLED;
                        if !g.retx {
                            rs.sack_newest = rs.sack_newest.max(Some(g.sent));
                        }
                    }
                    if rack {
                        // Newly SACKed segments lie above everything this ACK covers
                        // cumulatively, which raises RACK.fack less than any of them:
                        // their walk can start from RACK.fack as it was (step 3).
                        let end = g.start + u64::from(g.len);
                        c.rack.on_delivered(now, g.sent, end, g.retx, best);
                        c.rack.detect_reordering(sack_fack, end, g.retx);
                    }
                }
                g.sacked = true;
                g.lost = false;
                c.marks = true;
            }
        }
        (delivered, retx_delivered)
    }

    /// A SYN-ACK from `src` arrived: the connection is established (RFC 9293 §3.5) and
    /// its data starts, after a pure ACK of the SYN-ACK (`handshake_ack = "separate"`) or
    /// with the handshake's ACK riding on the first segment (`"with_data"`).
    pub fn on_syn_ack(&mut self, now: SimTime, ctx: &Ctx, src: u32, s: &Syn, st: &mut TcpStats, out: &mut Actions) {
        st.syn_acks_received += 1;
        let Some(i) = self.index.get((s.thread, src)) else { return };
        let c = &mut self.conns[i as usize];
        if c.handshake == Handshake::Established {
            return;
        }
        if !c.syn_resent {
            // RFC 6298 §2.2: the first RTT measurement seeds SRTT and RTTVAR.
            c.rto.sample(now.since(c.syn_sent));
            st.rtt_samples += 1;
            if ctx.cfg.rack_tlp {
                c.rack.on_rtt_sample(now.since(c.syn_sent));
            }
        }
        c.handshake = Handshake::Established;
        out.cancel_timer(timer_id(i));
        if ctx.cfg.handshake_ack == HandshakeAck::Separate {
            // A control frame like the SYN: straight to the NIC, counted in the thread's
            // transmit-ring share (under PL2 by `TcpHost::schedule`).
            out.sends.push(wire::encode_handshake_ack(c.dst, s, ctx.cfg.priority));
            if !self.pl2 {
                self.in_ring[c.thread as usize] += 1;
            }
        }
        self.send(now, ctx, i, st, out);
        Self::probes(ctx, &self.conns[i as usize], out);
    }

    /// The SYN of connection `i` went unanswered for its timeout: send it again with the
    /// timeout doubled (RFC 6298 §5.5), at most `max_rto` (or `syn_rto` if larger).
    fn on_syn_timeout(&mut self, now: SimTime, ctx: &Ctx, i: u32, st: &mut TcpStats, out: &mut Actions) {
        let c = &mut self.conns[i as usize];
        if c.handshake != Handshake::SynSent {
            return;
        }
        st.syn_timeouts += 1;
        c.syn_resent = true;
        let cap = ctx.cfg.max_rto.0.max(ctx.cfg.syn_rto.0);
        c.syn_rto = Duration(c.syn_rto.0.saturating_mul(2).min(cap));
        c.handshake = Handshake::SynDue;
        self.send(now, ctx, i, st, out);
    }

    /// TCP over PL2: the first copy of the segment of connection `i` starting at `start`
    /// was handed to the NIC now (its RTT sample and retransmission timer count from here).
    pub fn on_handed(&mut self, now: SimTime, i: u32, start: u64) {
        let Some(c) = self.conns.get_mut(i as usize) else { return };
        let j = c.segs.partition_point(|g| g.start + u64::from(g.len) <= start);
        if let Some(g) = c.segs.get_mut(j).filter(|g| g.start <= start) {
            g.sent = now;
            g.queued = false;
        }
    }

    /// Timer `id` (`4·i`) fired: retransmission timeout (of the SYN while the connection
    /// is not established).
    pub fn on_timer(&mut self, now: SimTime, ctx: &Ctx, id: u32, st: &mut TcpStats, out: &mut Actions) {
        let i = id / 4;
        let Some(c) = self.conns.get_mut(i as usize) else { return };
        if c.handshake != Handshake::Established {
            return self.on_syn_timeout(now, ctx, i, st, out);
        }
        if !c.rto_armed || c.snd_una >= c.snd_nxt {
            c.rto_armed = false;
            return;
        }
        if ctx.cfg.rack_tlp {
            c.rack.timer_at = None;
            match c.rack.timer {
                TimerKind::Reo => {
                    // RFC 8985 §6.2 step 5: the reordering timer runs RACK_detect_loss
                    // again (and re-arms itself for what is still pending).
                    st.rack_reorder_timeouts += 1;
                    if Self::rack_detect_loss(now, c, st) && c.state == State::Open {
                        Self::enter_recovery(now, c, st, &ctx.cfg, ctx.mss);
                    }
                    self.send(now, ctx, i, st, out);
                    Self::probes(ctx, &self.conns[i as usize], out);
                    return;
                }
                TimerKind::Pto => return self.send_probe(now, ctx, i, st, out),
                TimerKind::Rto => {}
            }
        }
        if self.pl2 {
            // The oldest outstanding segment may still wait for its PL2 slot, or have left
            // less than an RTO ago: time out only an RTO after it actually left.
            if let Some(g) = c.segs.iter().find(|g| !g.sacked) {
                let due = if g.queued { now + c.rto.rto } else { g.sent + c.rto.rto };
                if due > now {
                    out.set_timer(id, due);
                    return;
                }
            }
        }
        st.timeouts += 1;
        // ssthresh halves the bytes in flight by RFC 6675's pipe (SACKed and lost segments
        // excluded), as fast recovery does and as ns-3 does on a timeout
        // (`TcpSocketBase::ReTxTimeout` halves BytesInFlight), not RFC 5681's FlightSize
        // (snd_nxt − snd_una): after a stalled SACK recovery the latter counts everything
        // SACKed above the holes and can be several times the path's capacity, so the
        // slow start after the timeout would overflow the bottleneck again.
        let flight = c.pipe(&ctx.cfg, ctx.mss);
        if c.rto_series == 0 {
            c.cc.on_congestion_point(c.snd_una, c.snd_nxt);
            c.cc.on_rto(&mut c.w, now, flight);
        }
        c.rto_series += 1;
        if !matches!(c.cc, Cc::None(_)) {
            c.w.cwnd = ctx.mss;
        }
        let lost_before = if matches!(c.cc, Cc::Bbr(_)) { c.lost_bytes() } else { 0 };
        if ctx.cfg.rack_tlp {
            // RFC 8985 §6.3 (RACK_mark_losses_on_RTO): the first unacknowledged segment,
            // and every one sent more than RACK.rtt + the reordering window ago, is lost;
            // the outstanding probe, if any, is forgotten.
            let w = c.rack.reo_wnd(true, 0, c.rto.srtt);
            let (rtt, una) = (c.rack.rtt, c.snd_una);
            for g in c.segs.iter_mut() {
                g.rtx_mark = false;
                if !g.sacked && (g.start <= una || g.sent + rtt + w <= now) {
                    g.lost = true;
                    g.rtx_out = false;
                }
            }
            c.rack.tlp_end_seq = None;
            c.rack.reo_due = None;
        } else {
            for g in c.segs.iter_mut() {
                // ns-3's `SetSentListLost` clears every retransmitted mark, SACKed or not.
                g.rtx_mark = false;
                if !g.sacked {
                    g.lost = true;
                    g.rtx_out = false;
                }
            }
        }
        c.marks = true;
        if matches!(c.cc, Cc::Bbr(_)) {
            // `tp->lost` counts what the timeout marks (BBR's long-term estimator).
            c.rate.lost += c.lost_bytes().saturating_sub(lost_before);
        }
        c.state = State::Loss;
        c.recover = c.snd_nxt;
        c.dupacks = 0;
        c.retx_now = true;
        c.rto.backoff();
        if ctx.cfg.rack_tlp {
            c.rack.rto_due = now + c.rto.rto;
            c.rack.timer = TimerKind::Rto;
        } else {
            out.set_timer(id, now + c.rto.rto);
        }
        self.send(now, ctx, i, st, out);
        Self::probes(ctx, &self.conns[i as usize], out);
    }

    pub fn on_tx_dequeue(&mut self, now: SimTime, ctx: &Ctx, thread: u16, st: &mut TcpStats, out: &mut Actions) {
        let t = thread as usize;
        self.in_ring[t] = self.in_ring[t].saturating_sub(1);
        let n = self.per_thread[t].len();
        let start = if n > 0 { self.rr[t] } else { 0 };
        // Most dequeues find no connection waiting for ring space (a word per 64
        // connections to look at): the walk is skipped.
        if self.waiting[t].iter().any(|&w| w != 0) {
            // Positions start..n, then 0..start: each waiting connection at most once.
            for (from, to) in [(start, n), (0, start)] {
                let mut j = from;
                while self.in_ring[t] < self.ring {
                    let Some(k) = next_set_bit(&self.waiting[t], j, to) else { break };
                    self.send(now, ctx, self.per_thread[t][k], st, out);
                    j = k + 1;
                }
            }
        }
        if n > 0 {
            // (rr + 1) mod n, without a division in the common case.
            let r = self.rr[t] + 1;
            self.rr[t] = if r < n { r } else { r % n };
        }
    }

    /// Bytes written and not yet acknowledged, over all connections.
    pub fn unacknowledged(&self) -> u64 {
        self.conns.iter().map(|c| c.write_end - c.snd_una).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    /// A connection in recovery with five segments out: `flags[i]` = (sacked, lost,
    /// resent since marked lost, ns-3 retransmitted mark).
    fn conn(flags: [(bool, bool, bool, bool); 5]) -> Conn {
        let cfg = TcpConfig::default();
        let segs = flags
            .iter()
            .enumerate()
            .map(|(i, &(sacked, lost, rtx_out, rtx_mark))| Seg {
                start: i as u64 * MSS,
                len: MSS as u32,
                msg: 0,
                gen: 0,
                msg_end: i == 4,
                sent: SimTime::ZERO,
                queued: false,
                retx: rtx_mark,
                sacked,
                lost,
                rtx_out,
                rtx_mark,
                rate_delivered: 0,
                rate_time: SAMPLED,
                rate_first_tx: SimTime::ZERO,
                rate_app_limited: false,
            })
            .collect();
        Conn {
            dst: 1,
            thread: 0,
            pos: 0,
            flow: 0,
            snd_una: 0,
            snd_nxt: 5 * MSS,
            write_end: 5 * MSS,
            msgs: VecDeque::new(),
            segs,
            w: Window { cwnd: 10 * MSS, ssthresh: 5 * MSS, mss: MSS },
            cc: Cc::for_config(&cfg, MSS, || crate::rng::SimRng::stream(0, "test")),
            rto: Rto::new(cfg.initial_rto, cfg.min_rto, cfg.max_rto),
            state: State::Recovery,
            recover: 5 * MSS,
            dupacks: 0,
            blocked: None,
            rto_armed: true,
            rto_series: 0,
            retx_now: false,
            prr: Prr::default(),
            retransmissions: 0,
            marks: true,
            handshake: Handshake::Established,
            syn_sent: SimTime::ZERO,
            syn_resent: false,
            syn_rto: cfg.syn_rto,
            rack: Rack::default(),
            bbr: false,
            rate: RateState::default(),
        }
    }

    /// A thread's connections take turns at the transmit ring: each frame that leaves
    /// lets the next connection in order, from a position that moves one on per frame,
    /// send one segment; a connection with nothing to send passes its turn to the next.
    /// Hand-worked, with a ring share of 2 frames: A (to host 1) and B (host 2) have ten
    /// segments each, C (host 3) one. A fills the ring; B and C wait. The k-th frame to
    /// leave (from 0) starts the turn at position k mod 3, so the refills go to A, B, C,
    /// A, B, then A (C's turn, but C has nothing left), A, B.
    #[test]
    fn connections_of_a_thread_take_turns_at_the_ring() {
        let ctx = Ctx { cfg: TcpConfig::default(), mss: MSS, host: 0, bbr_seed: 0 };
        let mut snd = Sender::new(1, 2, false);
        let mut st = TcpStats::default();
        let mut out = Actions::default();
        for (slot, (dst, segs)) in [(1u32, 10u64), (2, 10), (3, 1)].into_iter().enumerate() {
            let msg = MsgInfo { slot: slot as u32, gen: 0, id: slot as u64, src: 0, dst, size: segs * MSS, thread: 0, prio: 0, start: SimTime::ZERO };
            snd.on_message(SimTime::ZERO, &ctx, &msg, &mut st, &mut out);
        }
        let first: Vec<u32> = out.sends.iter().map(|f| f.dst).collect();
        assert_eq!(first, [1, 1], "A fills the ring share");
        let mut refills = Vec::new();
        for _ in 0..8 {
            out.clear();
            snd.on_tx_dequeue(SimTime::ZERO, &ctx, 0, &mut st, &mut out);
            assert_eq!(out.sends.len(), 1, "one frame left, one segment refills the ring");
            refills.push(out.sends[0].dst);
        }
        assert_eq!(refills, [1, 2, 3, 1, 2, 1, 1, 2]);
    }

    #[test]
    fn the_per_ack_fields_share_six_cache_lines() {
        use std::mem::{align_of, offset_of};
        assert_eq!(align_of::<Conn>(), 64, "a connection starts a line");
        assert_eq!(offset_of!(Conn, snd_una), 0);
        // The delivery-rate fields every new segment copies end the hot part.
        assert_eq!(offset_of!(RateState, app_limited), 24);
        let hot_end = offset_of!(Conn, rate) + offset_of!(RateState, app_limited) + 8;
        assert!(hot_end <= 6 * 64, "per-ACK fields span {hot_end} bytes, more than six lines");
        for cold in [offset_of!(Conn, recover), offset_of!(Conn, prr), offset_of!(Conn, syn_sent), offset_of!(Conn, rack)] {
            assert!(cold >= hot_end, "a field read only in recovery, the handshake or RACK-TLP sits among the per-ACK ones");
        }
    }

    /// A connection keeps a record per outstanding segment; the delivery-rate snapshot
    /// (BBR's) must not take it past one cache line.
    #[test]
    fn a_segment_record_fits_in_64_bytes() {
        assert_eq!(std::mem::size_of::<Seg>(), 64);
    }

    #[test]
    fn pipe_counts_a_sacked_retransmission_only_under_ns3s_rule() {
        // Segment 0 lost and not yet resent, 1 lost and resent (in flight), 2 resent and
        // then SACKed, 3 SACKed, 4 sent. RFC 6675 SetPipe: 1 and 4 are in flight, 2 000 B.
        // ns-3's BytesInFlight (sent 5 − SACKed 2 − lost 2 + retransmitted 2) = 3 segments:
        // the SACKed retransmission of 2 still counts.
        let c = conn([(false, true, false, false), (false, true, true, true), (true, false, false, true), (true, false, false, false), (false, false, false, false)]);
        let rfc = TcpConfig::default();
        let ns3 = TcpConfig { sacked_retransmissions_in_flight: true, ..TcpConfig::default() };
        assert_eq!(c.pipe(&rfc, MSS), 2 * MSS);
        assert_eq!(c.pipe(&ns3, MSS), 3 * MSS);
    }
}
