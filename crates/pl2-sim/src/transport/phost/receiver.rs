//! The pHost receiver: one token per MTU wire time to the chosen flow, a window of
//! outstanding tokens per flow, a re-grant of missing packets after the last token, and
//! the ACK when every packet has arrived.
//!
//! - A flow becomes known by its RTS, or its first data packet if that comes first
//!   (`receive_rts`, `ext/capabilityflow.cpp:89-109`). Its free packets count as tokens
//!   already sent (`set_capability_count`, `:259-266`), and the host skips as many token
//!   slots (`hold_on`, assigned, not added: a later RTS replaces it). A flow sent whole
//!   on free tokens gets a re-grant timer of 2 × its packets MTU times.
//! - Slots (`CapabilityHost::send_capability`, `ext/capabilityhost.cpp:264-366`): one
//!   every MTU wire time while tokens go out. In a slot the flows are tried in SRPT order
//!   (fewest packets missing; ties to the earlier arrival) or round robin. A flow waiting
//!   for its re-grant timer is skipped; when the timer has passed, every missing packet
//!   is granted again (`goal += remaining`, `:307-311`). A flow with more than
//!   `window_tokens` tokens unanswered (token count − highest token number seen in its
//!   data) is skipped until `window_timeout` after its last token, then its gap is relaxed
//!   to the window (`:313-324`, `relax_capability_gap`, `ext/capabilityflow.cpp:369-373`).
//!   The first flow that passes gets a token naming its next missing packet
//!   (`get_next_capa_seq_num`, `:269-292`); a flow whose tokens reach its goal arms its
//!   re-grant timer, `resend_timeout` (`:332-333`). With no token sent, the pacer sleeps
//!   until the earliest of those timers, or until the next RTS.
//! - Completion: every packet received (by index) → ACK (`ext/capabilityflow.cpp:147-152`),
//!   and again for every later duplicate.

use super::config::TokenScheduling;
use super::wire::{self, Frame};
use super::{Ctx, PhostStats};
use crate::packet::Packet;
use crate::slab::Slab;
use crate::transport::{Actions, MsgRef};
use crate::units::SimTime;

const NONE: u32 = u32::MAX;
const DELIVERED: u32 = u32::MAX - 1;
/// Timer id of the receiver's token pacer.
pub(super) const PACER_TIMER: u32 = 0;
/// The receiver's packets ride on thread 0's NIC queue.
const CONTROL_THREAD: u16 = 0;

struct RxFlow {
    src: u32,
    msg: MsgRef,
    n_pkts: u32,
    got: Vec<u64>,
    received: u32,
    /// First packet not yet received.
    received_until: u32,
    /// Tokens sent, free ones included (YAPS `capability_count`).
    tokens: u64,
    /// Tokens to send before the re-grant timer (YAPS `capability_goal`).
    goal: u64,
    /// Highest token number seen in data (YAPS `largest_cap_seq_received`, −1 at first).
    largest_seen: i64,
    /// Packet the last token named (YAPS `last_capa_data_seq_num_sent`).
    last_granted: i64,
    regrant_at: Option<SimTime>,
    last_token_at: SimTime,
    /// Arrival order, the SRPT tie-break.
    order: u64,
}

impl RxFlow {
    fn has(&self, i: u32) -> bool {
        self.got[(i / 64) as usize] >> (i % 64) & 1 == 1
    }
    fn remaining(&self) -> u32 {
        self.n_pkts - self.received
    }
    fn gap(&self) -> i64 {
        self.tokens as i64 - self.largest_seen
    }
    /// The next packet to grant: after the last one granted, skipping those received,
    /// wrapping to the first missing one.
    fn next_grant(&self) -> u32 {
        let mut d = ((self.last_granted + 1) as u64 % u64::from(self.n_pkts)) as u32;
        for _ in 0..self.n_pkts {
            if !self.has(d) {
                return d;
            }
            d += 1;
            if d >= self.n_pkts {
                d = self.received_until;
            }
        }
        unreachable!("an unfinished flow misses a packet")
    }
}

enum Pacer {
    Idle,
    /// The next slot, one MTU time after the last token.
    Slot,
    /// Asleep until a flow's timer.
    Timeout,
}

pub(super) struct Receiver {
    flows: Slab<RxFlow>,
    /// Per engine message slot: generation and state (index into `flows`, `NONE`,
    /// `DELIVERED`).
    slots: Vec<(u16, u32)>,
    /// Flows being received, in arrival order (sorted by SRPT at each slot).
    active: Vec<u32>,
    hold_on: u32,
    pacer: Pacer,
    rr: usize,
    arrivals: u64,
    /// A new flow arrived while the pacer was idle or asleep: run a slot now.
    kick: bool,
}

impl Receiver {
    pub fn new() -> Receiver {
        Receiver { flows: Slab::default(), slots: Vec::new(), active: Vec::new(), hold_on: 0, pacer: Pacer::Idle, rr: 0, arrivals: 0, kick: false }
    }

    /// Flows being received.
    pub fn live(&self) -> usize {
        self.active.len()
    }

    fn send(ctx: &Ctx, dst: u32, f: Frame, out: &mut Actions) {
        out.sends.push(wire::encode(dst, &f, 0, &ctx.stamp, CONTROL_THREAD));
    }

    /// The flow of `msg`, created if new; `Err(true)` if it was delivered (to be
    /// answered by an ACK), `Err(false)` if older than the slot's message.
    fn lookup(&mut self, now: SimTime, ctx: &Ctx, src: u32, msg: MsgRef, size: u64) -> Result<u32, bool> {
        let s = msg.slot as usize;
        if s >= self.slots.len() {
            self.slots.resize(s + 1, (0, NONE));
        }
        let (gen, state) = self.slots[s];
        let newer = (msg.gen.wrapping_sub(gen) as i16) > 0;
        if state == NONE || (state == DELIVERED && newer) {
            return Ok(self.create(now, ctx, src, msg, size));
        }
        if gen == msg.gen && state != DELIVERED {
            return Ok(state);
        }
        Err(gen == msg.gen)
    }

    /// The ACK of a delivered message, again.
    fn ack_again(ctx: &Ctx, src: u32, msg: MsgRef, size: u64, st: &mut PhostStats, out: &mut Actions) {
        let n_pkts = size.div_ceil(ctx.params.max_payload).max(1) as u32;
        st.acks_sent += 1;
        Self::send(ctx, src, Frame::Ack { msg, n_pkts }, out);
    }

    fn create(&mut self, now: SimTime, ctx: &Ctx, src: u32, msg: MsgRef, size: u64) -> u32 {
        let p = &ctx.params;
        let n_pkts = size.div_ceil(p.max_payload).max(1) as u32;
        let free = p.free_packets(n_pkts);
        let goal = u64::from(n_pkts);
        let regrant_at = (u64::from(free) == goal).then(|| now + p.mtu_time_times(2 * u64::from(free)));
        let f = RxFlow {
            src,
            msg,
            n_pkts,
            got: vec![0; n_pkts.div_ceil(64) as usize],
            received: 0,
            received_until: 0,
            tokens: u64::from(free),
            goal,
            largest_seen: -1,
            last_granted: i64::from(free) - 1,
            regrant_at,
            last_token_at: now,
            order: self.arrivals,
        };
        self.arrivals += 1;
        let idx = self.flows.insert(f);
        self.slots[msg.slot as usize] = (msg.gen, idx);
        self.active.push(idx);
        self.hold_on = free;
        // YAPS cancels a pending timeout and runs the pacer now (`:98-108`).
        self.kick |= !matches!(self.pacer, Pacer::Slot);
        idx
    }

    pub fn on_rts(&mut self, now: SimTime, ctx: &Ctx, src: u32, f: &Frame, st: &mut PhostStats, out: &mut Actions) {
        let Frame::Rts { msg, size } = *f else { return };
        if let Err(true) = self.lookup(now, ctx, src, msg, size) {
            Self::ack_again(ctx, src, msg, size, st, out);
        }
        self.kick_pacer(now, ctx, st, out);
    }

    pub fn on_data(&mut self, now: SimTime, ctx: &Ctx, pkt: &Packet, f: &Frame, st: &mut PhostStats, out: &mut Actions) {
        let Frame::Data { msg, size, index, token_seq, .. } = *f else {
            return;
        };
        st.data_received += 1;
        let idx = match self.lookup(now, ctx, pkt.src, msg, size) {
            Ok(idx) => idx,
            Err(delivered) => {
                st.duplicates += 1;
                if delivered {
                    Self::ack_again(ctx, pkt.src, msg, size, st, out);
                }
                return;
            }
        };
        let fl = self.flows.get_mut(idx).expect("live");
        if index >= fl.n_pkts || fl.has(index) {
            st.duplicates += 1;
        } else {
            fl.got[(index / 64) as usize] |= 1 << (index % 64);
            fl.received += 1;
            while fl.received_until < fl.n_pkts && fl.has(fl.received_until) {
                fl.received_until += 1;
            }
            out.goodput_bytes += u64::from(pkt.payload);
        }
        let seen = wire::widen_token_seq(token_seq, fl.tokens.saturating_sub(1)) as i64;
        fl.largest_seen = fl.largest_seen.max(seen);
        if fl.received == fl.n_pkts {
            self.deliver(ctx, idx, st, out);
        }
        self.kick_pacer(now, ctx, st, out);
    }

    fn deliver(&mut self, ctx: &Ctx, idx: u32, st: &mut PhostStats, out: &mut Actions) {
        let f = self.flows.remove(idx).expect("live");
        out.delivered.push((f.msg.slot, f.msg.gen));
        self.slots[f.msg.slot as usize] = (f.msg.gen, DELIVERED);
        let k = self.active.iter().position(|&a| a == idx).expect("live flows are active");
        self.active.remove(k);
        st.messages_received += 1;
        st.acks_sent += 1;
        Self::send(ctx, f.src, Frame::Ack { msg: f.msg, n_pkts: f.n_pkts }, out);
    }
}

impl Receiver {
    fn kick_pacer(&mut self, now: SimTime, ctx: &Ctx, st: &mut PhostStats, out: &mut Actions) {
        if std::mem::take(&mut self.kick) {
            self.slot(now, ctx, st, out);
        }
    }

    /// The pacer's timer fired: a slot.
    pub fn on_timer(&mut self, now: SimTime, ctx: &Ctx, st: &mut PhostStats, out: &mut Actions) {
        self.slot(now, ctx, st, out);
    }

    /// One token slot (YAPS `send_capability`).
    fn slot(&mut self, now: SimTime, ctx: &Ctx, st: &mut PhostStats, out: &mut Actions) {
        let p = &ctx.params;
        let mut sent = false;
        let mut wake: Option<SimTime> = None;
        if self.hold_on > 0 {
            self.hold_on -= 1;
            st.held_slots += 1;
            sent = true;
        }
        let n = self.active.len();
        if !sent && n > 0 {
            let start = match p.scheduling {
                TokenScheduling::Srpt => {
                    let flows = &self.flows;
                    self.active.sort_unstable_by_key(|&i| {
                        let f = flows.get(i).expect("active flows are live");
                        (f.remaining(), f.order)
                    });
                    0
                }
                TokenScheduling::RoundRobin => self.rr % n,
            };
            for k in 0..n {
                let pos = (start + k) % n;
                let f = self.flows.get_mut(self.active[pos]).expect("active flows are live");
                if let Some(t) = f.regrant_at {
                    if t > now {
                        wake = Some(wake.map_or(t, |w| w.min(t)));
                        continue;
                    }
                    f.regrant_at = None;
                    f.goal += u64::from(f.remaining());
                    st.regrants += 1;
                }
                if f.gap() > i64::from(p.window_tokens) {
                    let t = f.last_token_at + p.window_timeout;
                    if now < t {
                        wake = Some(wake.map_or(t, |w| w.min(t)));
                        continue;
                    }
                    f.largest_seen = f.tokens as i64 - i64::from(p.window_tokens);
                    st.window_relaxed += 1;
                }
                let data_seq = f.next_grant();
                f.last_granted = i64::from(data_seq);
                let tok = Frame::Token { msg: f.msg, data_seq, token_seq: f.tokens as u32, remaining: f.remaining() };
                f.tokens += 1;
                f.last_token_at = now;
                if f.tokens == f.goal {
                    f.regrant_at = Some(now + p.resend_timeout);
                }
                let src = f.src;
                Self::send(ctx, src, tok, out);
                st.tokens_sent += 1;
                self.rr = pos + 1;
                sent = true;
                break;
            }
        }
        if sent {
            self.pacer = Pacer::Slot;
            out.set_timer(PACER_TIMER, now + p.mtu_time);
        } else if let Some(t) = wake {
            self.pacer = Pacer::Timeout;
            out.set_timer(PACER_TIMER, t);
        } else {
            self.pacer = Pacer::Idle;
            out.cancel_timer(PACER_TIMER);
        }
    }
}
