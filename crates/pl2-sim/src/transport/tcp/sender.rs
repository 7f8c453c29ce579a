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
//! - Not modelled: Nagle, slow start after idle, PRR (RFC 6937), RACK, D-SACK, the
//!   retransmission of a SACKed segment after reneging.

use super::cc::{none::UNLIMITED, AckInfo, Cc, CongestionControl, Window};
use super::rto::Rto;
use super::wire::{self, Ack, Segment, Syn};
use super::config::{HandshakeAck, TcpConfig};
use super::{Ctx, TcpStats};
use crate::transport::{Actions, MsgInfo, SendSpec};
use crate::units::{Duration, SimTime};
use rustc_hash::FxHashMap;
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

pub(super) struct Conn {
    pub dst: u32,
    pub thread: u16,
    /// Position in its thread's connection list (`Sender::per_thread`).
    pos: u32,
    pub flow: u32,
    pub snd_una: u64,
    pub snd_nxt: u64,
    pub write_end: u64,
    /// Messages whose bytes are not all sent: (stream end offset, slot, generation).
    msgs: VecDeque<(u64, u32, u16)>,
    segs: VecDeque<Seg>,
    pub w: Window,
    pub cc: Cc,
    pub rto: Rto,
    pub state: State,
    recover: u64,
    dupacks: u32,
    /// A thread blocked until its message (ending at this offset) fits in the buffer.
    blocked: Option<(u16, u64)>,
    rto_armed: bool,
    /// Timeouts since the last ACK of new data.
    rto_series: u32,
    /// Resend the first lost segment regardless of the window.
    retx_now: bool,
    pub retransmissions: u64,
    /// Some segment may be SACKed or lost (false: `pipe` is `snd_nxt − snd_una`).
    marks: bool,
    pub handshake: Handshake,
    /// When the latest SYN was sent, whether any SYN was sent twice (Karn), and the
    /// timeout of the SYN now out (`syn_rto`, doubled per resend).
    syn_sent: SimTime,
    syn_resent: bool,
    syn_rto: Duration,
}

pub(super) struct Sender {
    pub conns: Vec<Conn>,
    /// Connection index by key: looked up, never iterated, so the fast
    /// non-cryptographic hash cannot change any result.
    index: FxHashMap<(u16, u32), u32>,
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

fn timer_id(idx: u32) -> u32 {
    3 * idx
}

impl Conn {
    /// Bytes in flight: RFC 6675's pipe with SACK (§4 `SetPipe`), RFC 5681's FlightSize
    /// less the duplicate ACKs without (Reno emulation).
    fn pipe(&self, cfg: &TcpConfig, mss: u64) -> u64 {
        let sack = cfg.sack;
        if !self.marks {
            return (self.snd_nxt - self.snd_una).saturating_sub(if sack { 0 } else { u64::from(self.dupacks) * mss });
        }
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
    fn mark_lost_sack(&mut self, mss: u64) -> bool {
        if !self.marks {
            return false;
        }
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
            index: FxHashMap::default(),
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
        if let Some(&i) = self.index.get(&(thread, dst)) {
            return i;
        }
        let mss = ctx.mss;
        let cc = Cc::for_config(&ctx.cfg);
        let unlimited = matches!(cc, Cc::None(_));
        let pos = self.per_thread[thread as usize].len() as u32;
        let c = Conn {
            dst,
            thread,
            pos,
            flow: wire::flow_id(ctx.host, dst, thread),
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
            rto: Rto::new(ctx.cfg.initial_rto, ctx.cfg.min_rto, ctx.cfg.max_rto),
            state: State::Open,
            recover: 0,
            dupacks: 0,
            blocked: None,
            rto_armed: false,
            rto_series: 0,
            retx_now: false,
            retransmissions: 0,
            marks: false,
            handshake: if ctx.cfg.handshake { Handshake::SynDue } else { Handshake::Established },
            syn_sent: SimTime::ZERO,
            syn_resent: false,
            syn_rto: ctx.cfg.syn_rto,
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
        while self.in_ring[t] < self.ring {
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
                    pipe += len;
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
                    continue;
                }
                break;
            }
            // New data.
            let limit = c.write_end.min(c.snd_una + ctx.cfg.send_buffer.0);
            if c.snd_nxt >= limit {
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
            c.segs.push_back(Seg { start: c.snd_nxt, len: len as u32, msg: slot, gen, msg_end, sent: now, queued: self.pl2, retx: false, sacked: false, lost: false, rtx_out: false, rtx_mark: false });
            let seg = Segment { seq32: c.snd_nxt as u32, flow: c.flow, msg: slot, msg_gen: gen, msg_end, ect, ce: false, retx: false };
            let spec = wire::encode_segment(c.dst, &seg, len as u32, ctx.cfg.priority, c.thread);
            if self.pl2 {
                self.staged.push((i, c.snd_nxt, spec));
            } else {
                out.sends.push(spec);
            }
            self.in_ring[t] += 1;
            st.segments_sent += 1;
            c.snd_nxt = end;
            pipe += len;
        }
        if !c.rto_armed && c.snd_una < c.snd_nxt {
            c.rto_armed = true;
            out.set_timer(timer_id(i), now + c.rto.rto);
        }
        // Every `break` above leaves the ring share with room; only the loop's own
        // condition ends it full.
        self.in_ring[t] >= self.ring
    }

    fn probes(ctx: &Ctx, c: &Conn, out: &mut Actions) {
        if !ctx.cfg.probes {
            return;
        }
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
    }

    /// Enters fast recovery. The window is cut from the bytes actually in flight (RFC 6675's
    /// `pipe`: SACKed and lost segments excluded), as ns-3 does and as Linux's cwnd-based
    /// cut amounts to, rather than from snd_nxt − snd_una (RFC 5681's FlightSize): with
    /// SACK the latter still counts everything SACKed above a hole, so after one loss it
    /// can exceed the path's capacity many times and every later recovery starts with a
    /// window that overflows the bottleneck again (found by the ns-3 comparison).
    fn enter_recovery(now: SimTime, c: &mut Conn, st: &mut TcpStats, cfg: &TcpConfig, mss: u64) {
        c.state = State::Recovery;
        c.recover = c.snd_nxt;
        c.retx_now = true;
        let flight = c.pipe(cfg, mss);
        c.cc.on_congestion_point(c.snd_una, c.snd_nxt);
        c.cc.on_loss(&mut c.w, now, flight);
        st.fast_recoveries += 1;
    }

    /// An ACK from `src` arrived.
    pub fn on_ack(&mut self, now: SimTime, ctx: &Ctx, src: u32, a: &Ack, st: &mut TcpStats, out: &mut Actions) {
        st.acks_received += 1;
        let Some(&i) = self.index.get(&(a.thread, src)) else {
            st.stale_acks += 1;
            return;
        };
        let mss = ctx.mss;
        let c = &mut self.conns[i as usize];
        let ack = wire::unwrap_seq(a.ack32, c.snd_una);
        if ack < c.snd_una || ack > c.snd_nxt {
            st.stale_acks += 1;
            return;
        }
        if a.ece {
            st.ecn_echoes += 1;
        }
        // Bytes this ACK newly reports delivered (SACKed now, or cumulatively acknowledged
        // and not SACKed before): what the window grows by, see below.
        let mut delivered = 0u64;
        if ctx.cfg.sack && a.sack.1 > 0 {
            let s = ack + u64::from(a.sack.0);
            let e = s + u64::from(a.sack.1);
            for g in c.segs.iter_mut() {
                if g.start >= s && g.start + u64::from(g.len) <= e {
                    if !g.sacked {
                        delivered += u64::from(g.len);
                    }
                    g.sacked = true;
                    g.lost = false;
                    c.marks = true;
                }
            }
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
            }
            c.rto_series = 0;
            if c.state == State::Recovery && !ctx.cfg.sack {
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
                    c.state = State::Open;
                    // Recovery is over: the duplicate ACKs it counted are spent (left
                    // over, they would start a spurious recovery on this very ACK).
                    c.dupacks = 0;
                    c.marks = c.segs.iter().any(|g| g.sacked || g.lost);
                }
                State::Recovery if !ctx.cfg.sack => {
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
            let info = AckInfo { now, acked: delivered, cum_acked: acked, ece: a.ece, srtt: c.rto.srtt, in_recovery: was_recovery, snd_una: c.snd_una, snd_nxt: c.snd_nxt };
            c.cc.on_ack(&mut c.w, &info);
            if let Some((thread, end)) = c.blocked {
                if end - c.snd_una <= ctx.cfg.send_buffer.0 {
                    c.blocked = None;
                    out.released.push(thread);
                }
            }
            if c.snd_una < c.snd_nxt {
                c.rto_armed = true;
                out.set_timer(timer_id(i), now + c.rto.rto);
            } else if c.rto_armed {
                c.rto_armed = false;
                out.cancel_timer(timer_id(i));
            }
        } else if c.snd_una < c.snd_nxt {
            c.dupacks += 1;
            st.dupacks += 1;
        }
        match c.state {
            State::Open => {
                let mut lost = ctx.cfg.sack && c.mark_lost_sack(mss);
                if c.dupacks >= 3 {
                    c.mark_first_lost();
                    lost = true;
                }
                if lost {
                    Self::enter_recovery(now, c, st, &ctx.cfg, mss);
                }
            }
            State::Recovery if ctx.cfg.sack => {
                c.mark_lost_sack(mss);
            }
            _ => {}
        }
        self.send(now, ctx, i, st, out);
        Self::probes(ctx, &self.conns[i as usize], out);
    }

    /// A SYN-ACK from `src` arrived: the connection is established (RFC 9293 §3.5) and
    /// its data starts, after a pure ACK of the SYN-ACK (`handshake_ack = "separate"`) or
    /// with the handshake's ACK riding on the first segment (`"with_data"`).
    pub fn on_syn_ack(&mut self, now: SimTime, ctx: &Ctx, src: u32, s: &Syn, st: &mut TcpStats, out: &mut Actions) {
        st.syn_acks_received += 1;
        let Some(&i) = self.index.get(&(s.thread, src)) else { return };
        let c = &mut self.conns[i as usize];
        if c.handshake == Handshake::Established {
            return;
        }
        if !c.syn_resent {
            // RFC 6298 §2.2: the first RTT measurement seeds SRTT and RTTVAR.
            c.rto.sample(now.since(c.syn_sent));
            st.rtt_samples += 1;
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

    /// Timer `id` (`3·i`) fired: retransmission timeout (of the SYN while the connection
    /// is not established).
    pub fn on_timer(&mut self, now: SimTime, ctx: &Ctx, id: u32, st: &mut TcpStats, out: &mut Actions) {
        let i = id / 3;
        let Some(c) = self.conns.get_mut(i as usize) else { return };
        if c.handshake != Handshake::Established {
            return self.on_syn_timeout(now, ctx, i, st, out);
        }
        if !c.rto_armed || c.snd_una >= c.snd_nxt {
            c.rto_armed = false;
            return;
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
        for g in c.segs.iter_mut() {
            // ns-3's `SetSentListLost` clears every retransmitted mark, SACKed or not.
            g.rtx_mark = false;
            if !g.sacked {
                g.lost = true;
                g.rtx_out = false;
            }
        }
        c.marks = true;
        c.state = State::Loss;
        c.recover = c.snd_nxt;
        c.dupacks = 0;
        c.retx_now = true;
        c.rto.backoff();
        out.set_timer(id, now + c.rto.rto);
        self.send(now, ctx, i, st, out);
        Self::probes(ctx, &self.conns[i as usize], out);
    }

    pub fn on_tx_dequeue(&mut self, now: SimTime, ctx: &Ctx, thread: u16, st: &mut TcpStats, out: &mut Actions) {
        let t = thread as usize;
        self.in_ring[t] = self.in_ring[t].saturating_sub(1);
        let n = self.per_thread[t].len();
        let start = if n > 0 { self.rr[t] } else { 0 };
        // Positions start..n, then 0..start: each waiting connection at most once.
        for (from, to) in [(start, n), (0, start)] {
            let mut j = from;
            while self.in_ring[t] < self.ring {
                let Some(k) = next_set_bit(&self.waiting[t], j, to) else { break };
                self.send(now, ctx, self.per_thread[t][k], st, out);
                j = k + 1;
            }
        }
        if n > 0 {
            self.rr[t] = (self.rr[t] + 1) % n;
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
            .map(|(i, &(sacked, lost, rtx_out, rtx_mark))| Seg { start: i as u64 * MSS, len: MSS as u32, msg: 0, gen: 0, msg_end: i == 4, sent: SimTime::ZERO, queued: false, retx: rtx_mark, sacked, lost, rtx_out, rtx_mark })
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
            cc: Cc::for_config(&cfg),
            rto: Rto::new(cfg.initial_rto, cfg.min_rto, cfg.max_rto),
            state: State::Recovery,
            recover: 5 * MSS,
            dupacks: 0,
            blocked: None,
            rto_armed: true,
            rto_series: 0,
            retx_now: false,
            retransmissions: 0,
            marks: true,
            handshake: Handshake::Established,
            syn_sent: SimTime::ZERO,
            syn_resent: false,
            syn_rto: cfg.syn_rto,
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
        let ctx = Ctx { cfg: TcpConfig::default(), mss: MSS, host: 0 };
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
