//! The receiving half: per connection (sending host, sending thread) the next expected
//! byte, the out-of-order segments held, and the delayed-ACK state.
//!
//! - In-order bytes are delivered at once (the application reads immediately, so the
//!   advertised window stays `receive_window`); a message is delivered when its last
//!   byte is (the segment flagged as ending it is delivered in order).
//! - ACKs (RFC 5681 §4.2, RFC 1122): with delayed ACKs, every second in-order segment is
//!   acknowledged at once, a lone one after `delayed_ack_timeout`; an out-of-order or
//!   duplicate segment, and one that fills a hole, is acknowledged at once. The first
//!   `quick_acks` in-order segments of a connection are each acknowledged at once (ns-3
//!   ACKs the first data segment after the handshake at once, Linux quick-ACKs up to 16).
//! - SACK (RFC 2018): an ACK carries the block holding the most recently received
//!   out-of-order segment (after a hole is partly filled: the lowest block left).
//! - ECN (RFC 8257 §3.2): every ACK echoes the CE bit of the latest segment (ECE); when
//!   the CE bit changes with an ACK pending, the pending ACK goes out first with the old
//!   state, so each acknowledged byte is echoed exactly (`ce_change_ack = "ns3"`: that
//!   ACK stops before the delayed segment, as ns-3's does).
//! - GRO (`gro`, off by default): in-order segments arriving within `gro.window` of a
//!   unit's first, up to `gro.max_bytes`, are one unit for the ACK rules, applied when the
//!   unit closes (a unit of two or more segments is acknowledged at once, by one ACK);
//!   a segment out of order, duplicate or with its CE bit changed closes the open unit
//!   first. While a unit is open the connection's one timer is the unit's end.
//! - Handshake (`handshake = true`, RFC 9293 §3.5): a SYN opens the connection (passive
//!   open, no listen queue or SYN cookies) and is answered with a SYN-ACK at once; every
//!   SYN is answered, so a SYN resent after a lost SYN-ACK gets another one.

use super::config::CeChangeAck;
use super::wire::{self, Ack, Segment, Syn};
use super::{Ctx, TcpStats};
use crate::packet::Packet;
use crate::transport::Actions;
use crate::units::SimTime;
use super::conn_index::ConnIndex;
use std::collections::BTreeMap;

struct Ooo {
    end: u64,
    msg: u32,
    gen: u16,
    msg_end: bool,
}

struct RxConn {
    src: u32,
    thread: u16,
    flow: u32,
    rcv_nxt: u64,
    /// `rcv_nxt` before the latest in-order segment (`ce_change_ack = "ns3"`).
    prior_rcv_nxt: u64,
    ooo: BTreeMap<u64, Ooo>,
    pending: u32,
    /// In-order data segments still to be acknowledged at once (`quick_acks`).
    quick: u32,
    ce: bool,
    timer_armed: bool,
    last_msg: (u32, u16),
    /// The open GRO unit: segments and payload bytes (0 segments: none open).
    gro_segs: u32,
    gro_bytes: u64,
}

pub(super) struct Receiver {
    conns: Vec<RxConn>,
    /// Connection index by (peer, thread).
    index: ConnIndex<(u32, u16)>,
}

fn timer_id(idx: u32) -> u32 {
    4 * idx + 1
}

impl Receiver {
    pub fn new() -> Receiver {
        Receiver { conns: Vec::new(), index: ConnIndex::new() }
    }

    fn send_ack(ctx: &Ctx, i: u32, c: &mut RxConn, sack: (u32, u32), st: &mut TcpStats, out: &mut Actions) {
        Self::send_ack_at(ctx, i, c, c.rcv_nxt, sack, st, out);
    }

    /// Sends an ACK of everything below `point` (`rcv_nxt` but for the CE-change ACK of
    /// `ce_change_ack = "ns3"`).
    fn send_ack_at(ctx: &Ctx, i: u32, c: &mut RxConn, point: u64, sack: (u32, u32), st: &mut TcpStats, out: &mut Actions) {
        let a = Ack { ack32: point as u32, flow: c.flow, thread: c.thread, sack: if ctx.cfg.sack { sack } else { (0, 0) }, ece: c.ce };
        out.sends.push(wire::encode_ack(c.src, &a, ctx.cfg.priority, c.last_msg.0, c.last_msg.1));
        st.acks_sent += 1;
        c.pending = 0;
        if c.timer_armed {
            c.timer_armed = false;
            out.cancel_timer(timer_id(i));
        }
    }

    /// The SACK block (offset from `rcv_nxt`, length) of the held run containing `seq`.
    fn block(c: &RxConn, seq: u64) -> (u32, u32) {
        let Some((&k, _)) = c.ooo.range(..=seq).next_back() else { return (0, 0) };
        let mut s = k;
        while let Some((&p, o)) = c.ooo.range(..s).next_back() {
            if o.end != s {
                break;
            }
            s = p;
        }
        let mut e = c.ooo[&k].end;
        while let Some(o) = c.ooo.get(&e) {
            e = o.end;
        }
        ((s - c.rcv_nxt) as u32, (e - s) as u32)
    }

    /// The SACK block of the lowest held run ((0, 0): nothing held).
    #[inline]
    fn first_block(c: &RxConn) -> (u32, u32) {
        if c.ooo.is_empty() {
            return (0, 0);
        }
        Self::first_block_held(c)
    }

    /// [`Self::first_block`] when segments are held: out of line (only after a loss or
    /// reordering).
    #[inline(never)]
    fn first_block_held(c: &RxConn) -> (u32, u32) {
        c.ooo.keys().next().map_or((0, 0), |&k| Self::block(c, k))
    }

    /// Holds an out-of-order segment starting at `seq` (a copy already held is kept).
    #[inline(never)]
    fn hold(c: &mut RxConn, seq: u64, o: Ooo) {
        c.ooo.entry(seq).or_insert(o);
    }

    /// Delivers the held segments an in-order one has made contiguous: out of line (only
    /// when a hole was filled).
    #[inline(never)]
    fn deliver_held(c: &mut RxConn, out: &mut Actions) {
        while let Some(e) = c.ooo.first_entry() {
            if *e.key() > c.rcv_nxt {
                break;
            }
            let o = e.remove();
            Self::deliver(c, o.end, (o.msg, o.gen), o.msg_end, out);
        }
    }

    fn deliver(c: &mut RxConn, end: u64, msg: (u32, u16), msg_end: bool, out: &mut Actions) {
        if end > c.rcv_nxt {
            out.goodput_bytes += end - c.rcv_nxt;
            c.rcv_nxt = end;
            if msg_end {
                out.delivered.push(msg);
            }
        }
    }

    /// The connection from `src`'s `thread`, opened if new.
    fn conn(&mut self, ctx: &Ctx, src: u32, thread: u16, flow: u32, msg: (u32, u16)) -> u32 {
        let key = (src, thread);
        if let Some(i) = self.index.get(key) {
            return i;
        }
        self.conns.push(RxConn { src, thread, flow, rcv_nxt: 0, prior_rcv_nxt: 0, ooo: BTreeMap::new(), pending: 0, quick: ctx.cfg.quick_acks, ce: false, timer_armed: false, last_msg: msg, gro_segs: 0, gro_bytes: 0 });
        let i = self.conns.len() as u32 - 1;
        self.index.insert(key, i);
        i
    }

    /// A SYN arrived: open the connection if new and answer with a SYN-ACK (each time).
    pub fn on_syn(&mut self, ctx: &Ctx, p: &Packet, s: &Syn, st: &mut TcpStats, out: &mut Actions) {
        self.conn(ctx, p.src, p.thread, s.flow, (s.msg, s.msg_gen));
        let a = Syn { ack: true, ..*s };
        out.sends.push(wire::encode_syn(p.src, &a, ctx.cfg.priority));
        st.syn_acks_sent += 1;
    }

    pub fn on_data(&mut self, now: SimTime, ctx: &Ctx, p: &Packet, s: &Segment, st: &mut TcpStats, out: &mut Actions) {
        st.segments_received += 1;
        if s.ce {
            st.ce_received += 1;
        }
        let i = self.conn(ctx, p.src, p.thread, s.flow, (s.msg, s.msg_gen));
        let c = &mut self.conns[i as usize];
        if c.gro_segs > 0 && (s.ce != c.ce || wire::unwrap_seq(s.seq32, c.rcv_nxt) != c.rcv_nxt) {
            Self::gro_close(now, ctx, i, c, st, out);
        }
        if s.ce != c.ce {
            if c.pending > 0 {
                let point = match ctx.cfg.ce_change_ack {
                    CeChangeAck::Rfc8257 => c.rcv_nxt,
                    CeChangeAck::Ns3 => c.prior_rcv_nxt,
                };
                Self::send_ack_at(ctx, i, c, point, (0, 0), st, out);
            }
            c.ce = s.ce;
        }
        c.last_msg = (s.msg, s.msg_gen);
        let seq = wire::unwrap_seq(s.seq32, c.rcv_nxt);
        let end = seq + u64::from(p.payload);
        if end <= c.rcv_nxt {
            std::hint::cold_path();
            st.duplicates += 1;
            let b = Self::first_block(c);
            Self::send_ack(ctx, i, c, b, st, out);
        } else if seq > c.rcv_nxt {
            std::hint::cold_path();
            st.out_of_order += 1;
            Self::hold(c, seq, Ooo { end, msg: s.msg, gen: s.msg_gen, msg_end: s.msg_end });
            let b = Self::block(c, seq);
            Self::send_ack(ctx, i, c, b, st, out);
        } else {
            let had_hole = !c.ooo.is_empty();
            c.prior_rcv_nxt = c.rcv_nxt;
            Self::deliver(c, end, (s.msg, s.msg_gen), s.msg_end, out);
            if had_hole {
                Self::deliver_held(c, out);
            }
            match ctx.cfg.gro {
                Some(g) if !had_hole => {
                    c.gro_segs += 1;
                    c.gro_bytes += u64::from(p.payload);
                    if g.window.0 == 0 || c.gro_bytes + ctx.mss > g.max_bytes.0 {
                        Self::gro_close(now, ctx, i, c, st, out);
                    } else if c.gro_segs == 1 {
                        c.timer_armed = true;
                        out.set_timer(timer_id(i), now + g.window);
                    }
                }
                _ => Self::ack_received(now, ctx, i, c, 1, had_hole, st, out),
            }
        }
    }

    /// The ACK rules for `segs` in-order segments received at once (one segment, or a
    /// GRO unit).
    #[allow(clippy::too_many_arguments)]
    fn ack_received(now: SimTime, ctx: &Ctx, i: u32, c: &mut RxConn, segs: u32, had_hole: bool, st: &mut TcpStats, out: &mut Actions) {
        if c.quick > 0 && !had_hole && ctx.cfg.delayed_ack {
            c.quick -= 1;
            Self::send_ack(ctx, i, c, (0, 0), st, out);
        } else if had_hole || !ctx.cfg.delayed_ack {
            let b = Self::first_block(c);
            Self::send_ack(ctx, i, c, b, st, out);
        } else {
            c.pending += segs;
            if c.pending >= 2 {
                Self::send_ack(ctx, i, c, (0, 0), st, out);
            } else if !c.timer_armed {
                c.timer_armed = true;
                out.set_timer(timer_id(i), now + ctx.cfg.delayed_ack_timeout);
            }
        }
    }

    /// Closes the open GRO unit: its segments reach TCP's ACK rules at once.
    fn gro_close(now: SimTime, ctx: &Ctx, i: u32, c: &mut RxConn, st: &mut TcpStats, out: &mut Actions) {
        let segs = std::mem::take(&mut c.gro_segs);
        c.gro_bytes = 0;
        // The connection's timer, if armed, is the unit's end.
        if c.timer_armed {
            c.timer_armed = false;
            out.cancel_timer(timer_id(i));
        }
        Self::ack_received(now, ctx, i, c, segs, false, st, out);
    }

    /// Timer `id` (`3·i + 1`) fired: the delayed ACK is due.
    pub fn on_timer(&mut self, now: SimTime, ctx: &Ctx, id: u32, st: &mut TcpStats, out: &mut Actions) {
        let i = id / 4;
        let Some(c) = self.conns.get_mut(i as usize) else { return };
        if !c.timer_armed {
            return;
        }
        c.timer_armed = false;
        if c.gro_segs > 0 {
            Self::gro_close(now, ctx, i, c, st, out);
            return;
        }
        if c.pending > 0 {
            st.delayed_ack_timeouts += 1;
            Self::send_ack(ctx, i, c, (0, 0), st, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::framing::Framing;
    use crate::transport::tcp::config::{GroConfig, TcpConfig};
    use crate::units::{Bytes, Duration};

    const MSS: u64 = 1000;

    /// Feeds data segments `(arrival µs, segment index)` (and the connection's timer when
    /// due) to a receiver; returns each ACK as (µs, cumulative ACK, SACK block).
    fn acks(cfg: TcpConfig, arrivals: &[(u64, u64)]) -> Vec<(u64, u32, (u32, u32))> {
        let ctx = Ctx { cfg, mss: MSS, host: 1, bbr_seed: 0 };
        let mut rx = Receiver::new();
        let mut st = TcpStats::default();
        let mut out = Actions::default();
        let mut timer: Option<SimTime> = None;
        let mut got = Vec::new();
        let mut take = |out: &mut Actions, timer: &mut Option<SimTime>, now: SimTime| {
            for f in &out.sends {
                let a = wire::decode_ack(&f.to_packet(1, now, Framing::default())).expect("an ACK");
                got.push((now.0 / 1_000_000, a.ack32, a.sack));
            }
            for &(_, at) in &out.timers {
                *timer = at;
            }
            out.clear();
        };
        for &(us, k) in arrivals {
            let now = SimTime(us * 1_000_000);
            while let Some(t) = timer.filter(|&t| t <= now) {
                timer = None;
                rx.on_timer(t, &ctx, 1, &mut st, &mut out);
                take(&mut out, &mut timer, t);
            }
            let s = wire::Segment { seq32: (k * MSS) as u32, flow: 9, msg: 0, msg_gen: 0, msg_end: false, ect: false, ce: false, retx: false };
            let p = wire::encode_segment(1, &s, MSS as u32, 0, 0).to_packet(0, now, Framing::default());
            rx.on_data(now, &ctx, &p, &s, &mut st, &mut out);
            take(&mut out, &mut timer, now);
        }
        got
    }

    /// Hand-worked: segments 0, 1, 2 at 0, 2, 4 µs, 3 at 20, 4 at 50, then 6 (5 lost) at
    /// 52 µs; delayed ACKs (40 µs timer). Without GRO: every second segment is ACKed (at 2
    /// and 20 µs), segment 6 gets an immediate duplicate ACK with its SACK block. With GRO
    /// (10 µs window, 3 500 B: three segments fill a unit): the unit 0-2 is full at 4 µs,
    /// one ACK of 3 000; the unit of segment 3 closes at 30 µs with one segment, which
    /// waits for the delayed-ACK timer; segment 4 opens a unit at 50 µs (the timer is the
    /// unit's end again), and out-of-order segment 6 closes it first: two segments
    /// pending, an ACK of 5 000, then the duplicate ACK with the SACK block.
    #[test]
    fn gro_acknowledges_a_unit_at_its_end_and_closes_it_on_a_gap() {
        let arrivals = [(0, 0), (2, 1), (4, 2), (20, 3), (50, 4), (52, 6)];
        let plain = acks(TcpConfig::default(), &arrivals);
        assert_eq!(plain, [(2, 2000, (0, 0)), (20, 4000, (0, 0)), (52, 5000, (1000, 1000))]);
        let gro = TcpConfig { gro: Some(GroConfig { window: Duration::from_us(10), max_bytes: Bytes(3500) }), ..TcpConfig::default() };
        assert_eq!(acks(gro.clone(), &arrivals), [(4, 3000, (0, 0)), (52, 5000, (0, 0)), (52, 5000, (1000, 1000))]);
        // The lone segment's delayed ACK fires 40 µs after its unit closed (30 + 40 µs).
        let lone = acks(gro, &[(0, 0), (2, 1), (4, 2), (20, 3), (80, 4)]);
        assert_eq!(lone, [(4, 3000, (0, 0)), (70, 4000, (0, 0))]);
        // A zero window: every segment is its own unit, as without GRO.
        let zero = TcpConfig { gro: Some(GroConfig { window: Duration::ZERO, max_bytes: Bytes(65_536) }), ..TcpConfig::default() };
        assert_eq!(acks(zero, &arrivals), plain);
    }
}
