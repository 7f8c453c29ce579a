//! The Polo sender: data at line rate with an adjoint packet after each one, new packets
//! as driving packets allow, resends on loss packets and on its own timeout.
//!
//! - Line rate with adjoints (Polo slides, "Overview"): the host keeps one data packet in
//!   its NIC at a time. When its last bit has left (`on_tx_done`), the adjoint of that
//!   packet and the next data packet are handed over together; the adjoint's higher
//!   priority puts it on the wire first, so the link carries data, adjoint, data, ... back
//!   to back (with the default zero send-path latency).
//! - Flows with something to send are served round robin, resends before new packets.
//! - First burst: a new flow may send `initial_window_packets` packets unasked. Then a
//!   driving packet raises its limit, a loss packet asks for a resend (and raises the
//!   limit to the packets it names), a pause packet stops new packets until the next
//!   driving packet.
//! - Recovery 3 (Polo slides, "Recovering the lost packet quickly"): `rto` after an
//!   adjoint is handed over, re-armed by every driving or loss packet, a flow
//!   that is not paused resends its highest packet sent (the receiver's recovery 1 then
//!   finds any gap below it).
//! - Epochs: the sender answers every epoch acknowledgement at once with an echo, even for
//!   a message it has finished (the receiver's epoch is not a flow's).
//! - The thread is released when every packet has been handed over once, or at once
//!   with `release_thread_at_once` (as Homa, NDP and pHost release it); the flow's state
//!   stays until the receiver's done packet.

use super::wire::{self, Data, Frame, MsgRef};
use super::{Ctx, PoloStats};
use crate::packet::Packet;
use crate::slab::Slab;
use crate::transport::{Actions, MsgInfo};
use crate::units::SimTime;
use rustc_hash::FxHashMap;
use std::collections::VecDeque;

struct Flow {
    info: MsgInfo,
    msg: MsgRef,
    n_pkts: u32,
    /// First packet never sent.
    next: u32,
    /// Packets below this may be sent.
    limit: u32,
    /// Packets the receiver asked to be resent, in order.
    resend: VecDeque<u32>,
    paused: bool,
    /// In the round-robin queue.
    queued: bool,
}

impl Flow {
    fn has_work(&self) -> bool {
        !self.resend.is_empty() || (!self.paused && self.next < self.limit)
    }
}

pub(super) struct Sender {
    flows: Slab<Flow>,
    index: FxHashMap<(u32, u16), u32>,
    ready: VecDeque<u32>,
    /// The data packet in the NIC now: (flow, index).
    in_nic: Option<(u32, u32)>,
}

/// Timer id of sender flow `idx` (0 is the receiver's).
pub(super) fn timer_id(idx: u32) -> u32 {
    idx + 1
}

impl Sender {
    pub fn new() -> Sender {
        Sender { flows: Slab::default(), index: FxHashMap::default(), ready: VecDeque::new(), in_nic: None }
    }

    /// Flows whose done packet has not arrived.
    pub fn live(&self) -> usize {
        self.index.len()
    }

    pub fn on_message(&mut self, ctx: &Ctx, msg: &MsgInfo, st: &mut PoloStats, out: &mut Actions) {
        let n_pkts = msg.size.div_ceil(ctx.max_payload).max(1) as u32;
        let f = Flow {
            info: *msg,
            msg: MsgRef::from(msg),
            n_pkts,
            next: 0,
            limit: ctx.cfg.initial_window_packets.min(n_pkts),
            resend: VecDeque::new(),
            paused: false,
            queued: false,
        };
        let idx = self.flows.insert(f);
        self.index.insert((msg.slot, msg.gen), idx);
        st.messages_sent += 1;
        if ctx.cfg.release_thread_at_once {
            out.released.push(msg.thread);
        }
        self.wake(idx);
        self.pump(ctx, st, out);
    }

    fn wake(&mut self, idx: u32) {
        let f = self.flows.get_mut(idx).expect("live");
        if !f.queued && f.has_work() {
            f.queued = true;
            self.ready.push_back(idx);
        }
    }

    /// Hands the next data packet to the NIC if none is there.
    fn pump(&mut self, ctx: &Ctx, st: &mut PoloStats, out: &mut Actions) {
        if self.in_nic.is_some() {
            return;
        }
        while let Some(idx) = self.ready.pop_front() {
            let Some(f) = self.flows.get_mut(idx) else { continue };
            f.queued = false;
            let (i, resent) = if let Some(i) = f.resend.pop_front() {
                (i, true)
            } else if !f.paused && f.next < f.limit {
                f.next += 1;
                if f.next == f.n_pkts && !ctx.cfg.release_thread_at_once {
                    out.released.push(f.info.thread);
                }
                (f.next - 1, false)
            } else {
                continue;
            };
            let off = u64::from(i) * ctx.max_payload;
            let payload = (f.info.size - off.min(f.info.size)).min(ctx.max_payload) as u32;
            let d = Data { msg: f.msg, size: f.info.size, index: i };
            out.sends.push(wire::encode_data(f.info.dst, d, resent, payload, &ctx.stamp, f.info.thread));
            if resent {
                st.retransmissions += 1;
                out.probes.push((f.msg.flow, "polo_retx", f64::from(i)));
            }
            self.in_nic = Some((idx, i));
            self.wake(idx);
            return;
        }
    }

    /// The last bit of a data packet left: its adjoint, then the next data packet.
    pub fn on_tx_done(&mut self, now: SimTime, ctx: &Ctx, _pkt: &Packet, st: &mut PoloStats, out: &mut Actions) {
        let Some((idx, i)) = self.in_nic.take() else { return };
        if let Some(f) = self.flows.get(idx) {
            let d = Data { msg: f.msg, size: f.info.size, index: i };
            out.sends.push(wire::encode(f.info.dst, &Frame::Adjoint(d), &ctx.stamp, f.info.thread));
            st.adjoints += 1;
            if !f.paused {
                out.set_timer(timer_id(idx), now + ctx.cfg.rto);
            }
        }
        self.pump(ctx, st, out);
    }

    /// A packet from a receiver about one of this host's flows.
    pub fn on_frame(&mut self, now: SimTime, ctx: &Ctx, src: u32, f: &Frame, st: &mut PoloStats, out: &mut Actions) {
        let msg = match *f {
            Frame::EpochAck { msg, epoch } => {
                // Polo slides, "Determining the adjustment epoch": the ping-pong.
                out.sends.push(wire::encode(src, &Frame::EpochEcho { msg, epoch }, &ctx.stamp, 0));
                st.epoch_echoes += 1;
                msg
            }
            Frame::Driving { msg, .. } | Frame::Loss { msg, .. } | Frame::Pause { msg } | Frame::Done { msg } => msg,
            _ => return,
        };
        let Some(&idx) = self.index.get(&(msg.slot, msg.gen)) else {
            if !matches!(f, Frame::EpochAck { .. }) {
                st.stale_control += 1;
            }
            return;
        };
        let fl = self.flows.get_mut(idx).expect("indexed flow is live");
        match *f {
            Frame::Driving { limit, .. } => {
                st.driving_received += 1;
                fl.paused = false;
                fl.limit = fl.limit.max(limit.min(fl.n_pkts));
            }
            Frame::Loss { first, count, .. } => {
                st.loss_received += 1;
                let end = first.saturating_add(count).min(fl.n_pkts);
                fl.limit = fl.limit.max(end);
                for i in first..end.min(fl.next) {
                    if !fl.resend.contains(&i) {
                        fl.resend.push_back(i);
                    }
                }
            }
            Frame::Pause { .. } => {
                st.pauses_received += 1;
                fl.paused = true;
                out.cancel_timer(timer_id(idx));
                return;
            }
            Frame::Done { .. } => {
                self.flows.remove(idx);
                self.index.remove(&(msg.slot, msg.gen));
                out.cancel_timer(timer_id(idx));
                return;
            }
            // The epoch's ping-pong says nothing about the flow's data: it never
            // re-arms the timeout (or a lost tail would never be resent).
            Frame::EpochAck { .. } => return,
            _ => unreachable!("filtered above"),
        }
        if !fl.paused {
            out.set_timer(timer_id(idx), now + ctx.cfg.rto);
        }
        self.wake(idx);
        self.pump(ctx, st, out);
    }

    /// Recovery 3: the flow's timer fired.
    pub fn on_timer(&mut self, ctx: &Ctx, id: u32, st: &mut PoloStats, out: &mut Actions) {
        let idx = id - 1;
        let Some(f) = self.flows.get_mut(idx) else { return };
        if f.paused || f.next == 0 {
            return;
        }
        st.timeouts += 1;
        let last = f.next - 1;
        if !f.resend.contains(&last) {
            f.resend.push_back(last);
        }
        self.wake(idx);
        self.pump(ctx, st, out);
    }
}
