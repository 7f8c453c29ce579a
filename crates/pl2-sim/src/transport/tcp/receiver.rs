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
//! - Handshake (`handshake = true`, RFC 9293 §3.5): a SYN opens the connection (passive
//!   open, no listen queue or SYN cookies) and is answered with a SYN-ACK at once; every
//!   SYN is answered, so a SYN resent after a lost SYN-ACK gets another one.

use super::config::CeChangeAck;
use super::wire::{self, Ack, Segment, Syn};
use super::{Ctx, TcpStats};
use crate::packet::Packet;
use crate::transport::Actions;
use crate::units::SimTime;
use rustc_hash::FxHashMap;
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
}

pub(super) struct Receiver {
    conns: Vec<RxConn>,
    /// Connection index by key: looked up, never iterated, so the fast
    /// non-cryptographic hash cannot change any result.
    index: FxHashMap<(u32, u16), u32>,
}

fn timer_id(idx: u32) -> u32 {
    3 * idx + 1
}

impl Receiver {
    pub fn new() -> Receiver {
        Receiver { conns: Vec::new(), index: FxHashMap::default() }
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
        if let Some(&i) = self.index.get(&key) {
            return i;
        }
        self.conns.push(RxConn { src, thread, flow, rcv_nxt: 0, prior_rcv_nxt: 0, ooo: BTreeMap::new(), pending: 0, quick: ctx.cfg.quick_acks, ce: false, timer_armed: false, last_msg: msg });
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
            st.duplicates += 1;
            let b = c.ooo.keys().next().map_or((0, 0), |&k| Self::block(c, k));
            Self::send_ack(ctx, i, c, b, st, out);
        } else if seq > c.rcv_nxt {
            st.out_of_order += 1;
            c.ooo.entry(seq).or_insert(Ooo { end, msg: s.msg, gen: s.msg_gen, msg_end: s.msg_end });
            let b = Self::block(c, seq);
            Self::send_ack(ctx, i, c, b, st, out);
        } else {
            let had_hole = !c.ooo.is_empty();
            c.prior_rcv_nxt = c.rcv_nxt;
            Self::deliver(c, end, (s.msg, s.msg_gen), s.msg_end, out);
            while let Some(e) = c.ooo.first_entry() {
                if *e.key() > c.rcv_nxt {
                    break;
                }
                let o = e.remove();
                Self::deliver(c, o.end, (o.msg, o.gen), o.msg_end, out);
            }
            if c.quick > 0 && !had_hole && ctx.cfg.delayed_ack {
                c.quick -= 1;
                Self::send_ack(ctx, i, c, (0, 0), st, out);
            } else if had_hole || !ctx.cfg.delayed_ack {
                let b = c.ooo.keys().next().map_or((0, 0), |&k| Self::block(c, k));
                Self::send_ack(ctx, i, c, b, st, out);
            } else {
                c.pending += 1;
                if c.pending >= 2 {
                    Self::send_ack(ctx, i, c, (0, 0), st, out);
                } else if !c.timer_armed {
                    c.timer_armed = true;
                    out.set_timer(timer_id(i), now + ctx.cfg.delayed_ack_timeout);
                }
            }
        }
    }

    /// Timer `id` (`3·i + 1`) fired: the delayed ACK is due.
    pub fn on_timer(&mut self, _now: SimTime, ctx: &Ctx, id: u32, st: &mut TcpStats, out: &mut Actions) {
        let i = id / 3;
        let Some(c) = self.conns.get_mut(i as usize) else { return };
        if !c.timer_armed {
            return;
        }
        c.timer_armed = false;
        if c.pending > 0 {
            st.delayed_ack_timeouts += 1;
            Self::send_ack(ctx, i, c, (0, 0), st, out);
        }
    }
}
