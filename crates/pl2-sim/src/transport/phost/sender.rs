//! The pHost sender: an RTS and the free packets at a flow's start, then one data packet
//! per token, the flow with the fewest packets left first.
//!
//! - Start (YAPS `CapabilityHost::start_capability_flow`, `ext/capabilityhost.cpp:97-113`;
//!   pHost §3): the RTS goes to the NIC with the flow's free tokens, which expire
//!   (free packets + `token_ttl`) MTU times after the start (`assign_init_capability`,
//!   `ext/capabilityflow.cpp:246-256`). The sending thread is released at once: a flow
//!   is sent by the host, not the thread, as in YAPS where flows start independently.
//! - Tokens (`ext/capabilityflow.cpp:160-180`): a token is usable until `token_ttl` after
//!   its arrival; it names the packet to send; the flow's "remaining" becomes the token's
//!   (the receiver's count of missing packets). Tokens are spent earliest expiry first,
//!   expired ones are discarded (`has_capability`, `:318-345`).
//! - Scheduling (`CapabilityHost::send`, `ext/capabilityhost.cpp:150-208`, comparator
//!   `:48-63`): the host keeps one data packet in its NIC; when its last bit has left, the
//!   flow with an unexpired token and the fewest remaining packets (ties: the earlier
//!   start) sends the packet its earliest token names. YAPS checks again 1 ps after the
//!   packet's transmission ends (`ext/capabilityflow.cpp:68-71`); we check at the end.
//! - A flow ends at its ACK (`ext/capabilityflow.cpp:154-159`): the probe
//!   `phost_sender_fct_ns` (flow = message id) records its completion time as the sender
//!   sees it, YAPS's FCT.
//! - Not in YAPS: a flow that hears no token and no ACK for `rts_timeout` sends its RTS
//!   again (a lost RTS or ACK would otherwise leave it waiting for ever).

use super::wire::{self, Frame};
use super::{Ctx, PhostStats};
use crate::slab::Slab;
use crate::transport::{Actions, MsgInfo, MsgRef};
use crate::units::SimTime;
use rustc_hash::FxHashMap;
use std::collections::VecDeque;

#[derive(Copy, Clone, Debug)]
struct Token {
    expires: SimTime,
    data_seq: u32,
    token_seq: u32,
    free: bool,
}

struct Flow {
    info: MsgInfo,
    msg: MsgRef,
    n_pkts: u32,
    /// By expiry, earliest first.
    tokens: VecDeque<Token>,
    /// Packets still missing at the receiver, as its last token said (YAPS
    /// `remaining_pkts_at_sender`; the flow's packet count before any token).
    remaining: u32,
    /// Data packets sent, resends included.
    sent: u32,
    /// Payload bytes sent, resends included.
    bytes_sent: u64,
}

pub(super) struct Sender {
    flows: Slab<Flow>,
    index: FxHashMap<(u32, u16), u32>,
    /// Live flows in arrival order (the order ties are broken in).
    active: Vec<u32>,
    /// A data packet is in the NIC.
    in_nic: bool,
}

/// Timer id of sender flow `idx` (0 is the receiver's token pacer).
fn timer_id(idx: u32) -> u32 {
    idx + 1
}

impl Sender {
    pub fn new() -> Sender {
        Sender { flows: Slab::default(), index: FxHashMap::default(), active: Vec::new(), in_nic: false }
    }

    /// Flows whose ACK has not arrived.
    pub fn live(&self) -> usize {
        self.active.len()
    }

    pub fn on_message(&mut self, now: SimTime, ctx: &Ctx, msg: &MsgInfo, st: &mut PhostStats, out: &mut Actions) {
        let p = &ctx.params;
        let n_pkts = msg.size.div_ceil(p.max_payload).max(1) as u32;
        let free = p.free_packets(n_pkts);
        let expires = now + p.mtu_time_times(u64::from(free)) + p.token_ttl;
        let tokens = (0..free).map(|i| Token { expires, data_seq: i, token_seq: i, free: true }).collect();
        let f = Flow { info: *msg, msg: MsgRef::from(msg), n_pkts, tokens, remaining: n_pkts, sent: 0, bytes_sent: 0 };
        let idx = self.flows.insert(f);
        self.index.insert((msg.slot, msg.gen), idx);
        self.active.push(idx);
        st.messages_sent += 1;
        st.rts_sent += 1;
        out.sends.push(wire::encode(msg.dst, &Frame::Rts { msg: MsgRef::from(msg), size: msg.size }, 0, &ctx.stamp, msg.thread));
        out.released.push(msg.thread);
        out.set_timer(timer_id(idx), now + p.rts_timeout);
        self.pump(now, ctx, st, out);
    }

    /// Hands the next data packet to the NIC if none is there.
    fn pump(&mut self, now: SimTime, ctx: &Ctx, st: &mut PhostStats, out: &mut Actions) {
        if self.in_nic {
            return;
        }
        let mut best: Option<(u32, u32, SimTime)> = None;
        for &idx in &self.active {
            let f = self.flows.get_mut(idx).expect("active flows are live");
            while f.tokens.front().is_some_and(|t| t.expires < now) {
                f.tokens.pop_front();
                st.tokens_expired += 1;
            }
            if f.tokens.is_empty() {
                continue;
            }
            let key = (f.remaining, f.info.start);
            if best.is_none_or(|(_, r, s)| key < (r, s)) {
                best = Some((idx, f.remaining, f.info.start));
            }
        }
        let Some((idx, _, _)) = best else { return };
        let f = self.flows.get_mut(idx).expect("chosen flow is live");
        let t = f.tokens.pop_front().expect("chosen for its token");
        // YAPS's sizing (an option): the next bytes in order, none once all were sent.
        let off = if ctx.params.yaps_header_only_resends { f.bytes_sent } else { u64::from(t.data_seq) * ctx.params.max_payload };
        let payload = (f.info.size - off.min(f.info.size)).min(ctx.params.max_payload) as u32;
        f.bytes_sent += u64::from(payload);
        let d = Frame::Data { msg: f.msg, size: f.info.size, index: t.data_seq, token_seq: t.token_seq, free: t.free };
        out.sends.push(wire::encode(f.info.dst, &d, payload, &ctx.stamp, f.info.thread));
        f.sent += 1;
        st.data_sent += 1;
        st.free_data_sent += u64::from(t.free);
        self.in_nic = true;
    }

    /// The last bit of this host's data packet left the NIC.
    pub fn on_tx_done(&mut self, now: SimTime, ctx: &Ctx, st: &mut PhostStats, out: &mut Actions) {
        self.in_nic = false;
        self.pump(now, ctx, st, out);
    }

    pub fn on_token(&mut self, now: SimTime, ctx: &Ctx, f: &Frame, st: &mut PhostStats, out: &mut Actions) {
        let Frame::Token { msg, data_seq, token_seq, remaining } = *f else {
            return;
        };
        st.tokens_received += 1;
        let Some(&idx) = self.index.get(&(msg.slot, msg.gen)) else {
            st.stale_control += 1;
            return;
        };
        let f = self.flows.get_mut(idx).expect("indexed flow is live");
        let t = Token { expires: now + ctx.params.token_ttl, data_seq, token_seq, free: false };
        let at = f.tokens.iter().rposition(|o| o.expires <= t.expires).map_or(0, |k| k + 1);
        f.tokens.insert(at, t);
        f.remaining = remaining;
        out.set_timer(timer_id(idx), now + ctx.params.rts_timeout);
        self.pump(now, ctx, st, out);
    }

    pub fn on_ack(&mut self, now: SimTime, msg: MsgRef, st: &mut PhostStats, out: &mut Actions) {
        let Some(idx) = self.index.remove(&(msg.slot, msg.gen)) else {
            st.stale_control += 1;
            return;
        };
        let f = self.flows.remove(idx).expect("indexed flow is live");
        let k = self.active.iter().position(|&a| a == idx).expect("live flows are active");
        self.active.remove(k);
        out.cancel_timer(timer_id(idx));
        st.acks_received += 1;
        st.data_resent += u64::from(f.sent.saturating_sub(f.n_pkts));
        out.probes.push((msg.flow, "phost_sender_fct_ns", now.since(f.info.start).as_ns_f64()));
    }

    /// Timer `id` (a flow's RTS timeout) fired: nothing heard for `rts_timeout`.
    pub fn on_timer(&mut self, now: SimTime, ctx: &Ctx, id: u32, st: &mut PhostStats, out: &mut Actions) {
        let Some(f) = self.flows.get(id - 1) else {
            return;
        };
        st.rts_resent += 1;
        out.sends.push(wire::encode(f.info.dst, &Frame::Rts { msg: f.msg, size: f.info.size }, 0, &ctx.stamp, 0));
        out.set_timer(id, now + ctx.params.rts_timeout);
    }
}
