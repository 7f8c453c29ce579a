//! The sending side: one flow per message (an RDMA write on a queue pair of its own, as
//! HPCC's simulator gives every flow its own QP), with go-back-N or selective repeat and a
//! timeout. It is a frame source for the DCQCN host layer below (`layer/dcqcn/`), which
//! paces every flow at its DCQCN rate and picks the next frame: the sender says when a
//! flow may send ([`Sender::sendable`]) and builds the flow's next frame when picked
//! ([`Sender::pull`]), so a go-back-N rewind takes effect at the next pick.
//!
//! - The message's thread is released at once (posting a write returns; messages of one
//!   host proceed side by side, each paced on its own).
//! - Window (HPCC `IsWinBound`, `rdma-queue-pair.cc:120-137`): a flow whose bytes in
//!   flight reach its window waits for an acknowledgement (a window scaled by the rate
//!   reads the rate the layer gives).
//! - An ACK or NACK acknowledges every PSN below its own; a NACK then rewinds the next PSN
//!   to it (go-back-N, `RecoverQueue`, `rdma-hw.cc:495-497`) or queues that one packet
//!   (selective repeat). The timeout, restarted by every data frame sent and every
//!   acknowledgement that advances, rewinds to (or resends) the first unacknowledged PSN.
//! - SFC: a signal for a flow makes it send nothing before the signal's arrival + its
//!   pause (a later signal extends the pause, never shortens it). The pause is kept apart
//!   from the layer's pacing, and neither the flow's DCQCN state nor its timers change. A
//!   data frame already in the NIC still goes. The host's other flows are not paused:
//!   they take the NIC in round robin as before.
//!
//! Wherever the sender's state changes what a flow may send, it sets `Actions::wake`
//! for the layer to pick again.

use super::receiver::{packets_of, payload_of};
use super::wire::{self, Frame, MsgRef};
use super::{Ctx, LossRecovery, RoceStats};
use crate::slab::Slab;
use crate::transport::{Actions, MsgInfo, Pulled};
use crate::units::{BitsPerSec, Bytes, SimTime};
use rustc_hash::FxHashMap;
use std::collections::VecDeque;

/// One flow being sent. Its retransmission timeout has the flow's index as its timer id.
struct Flow {
    info: MsgInfo,
    msg: MsgRef,
    n_pkts: u32,
    /// Next PSN to send new (go-back-N rewinds it), first unacknowledged, highest sent + 1.
    snd_nxt: u32,
    snd_una: u32,
    high: u32,
    /// Selective repeat: PSNs NACKed, to resend first.
    resend: VecDeque<u32>,
    /// SFC: the flow sends nothing before this.
    paused_until: SimTime,
}

impl Flow {
    fn has_work(&self) -> bool {
        !self.resend.is_empty() || self.snd_nxt < self.n_pkts
    }

    fn offset(&self, psn: u32, mp: u64) -> u64 {
        (u64::from(psn) * mp).min(self.info.size)
    }

    /// Bytes in flight at or beyond the flow's window at `rate`.
    fn window_bound(&self, ctx: &Ctx, rate: BitsPerSec) -> bool {
        let d = &ctx.settings.dcqcn;
        let Some(Bytes(w)) = d.window else {
            return false;
        };
        let w = if d.window_scales_with_rate { (u128::from(w) * u128::from(rate.0) / u128::from(d.line_rate.0)).max(1) as u64 } else { w };
        self.offset(self.snd_nxt, ctx.max_payload) - self.offset(self.snd_una, ctx.max_payload) >= w
    }
}

pub(super) struct Sender {
    flows: Slab<Flow>,
    index: FxHashMap<(u32, u16), u32>,
    /// Live flows.
    live: u32,
}

impl Sender {
    pub fn new() -> Sender {
        Sender { flows: Slab::default(), index: FxHashMap::default(), live: 0 }
    }

    /// Messages whose last acknowledgement has not arrived.
    pub fn live(&self) -> usize {
        self.live as usize
    }

    pub fn on_message(&mut self, _now: SimTime, ctx: &Ctx, msg: &MsgInfo, st: &mut RoceStats, out: &mut Actions) {
        let f = Flow {
            info: *msg,
            msg: MsgRef::from(msg),
            n_pkts: packets_of(msg.size, ctx.max_payload),
            snd_nxt: 0,
            snd_una: 0,
            high: 0,
            resend: VecDeque::new(),
            paused_until: SimTime::ZERO,
        };
        let idx = self.flows.insert(f);
        self.index.insert((msg.slot, msg.gen), idx);
        self.live += 1;
        st.messages_sent += 1;
        out.released.push(msg.thread);
        out.wake = true;
    }

    /// When flow `key` may send as far as the sender is concerned: it has a frame to send
    /// (new, or one to resend) and room in its window at `rate`; then not before its SFC
    /// pause ends.
    pub fn sendable(&self, ctx: &Ctx, key: (u32, u16), rate: BitsPerSec) -> Option<SimTime> {
        let f = self.flows.get(*self.index.get(&key)?)?;
        (f.has_work() && !f.window_bound(ctx, rate)).then_some(f.paused_until)
    }

    /// The layer picked flow `key`: its next data frame (a PSN to resend first, else the
    /// next new one) goes to the send path now.
    pub fn pull(&mut self, now: SimTime, ctx: &Ctx, key: (u32, u16), st: &mut RoceStats, out: &mut Actions) -> Option<Pulled> {
        let idx = *self.index.get(&key)?;
        let f = self.flows.get_mut(idx).expect("indexed flows are live");
        let (psn, resent) = match f.resend.pop_front() {
            Some(p) => (p, true),
            None => {
                f.snd_nxt += 1;
                (f.snd_nxt - 1, f.snd_nxt <= f.high)
            }
        };
        f.high = f.high.max(psn + 1);
        let payload = payload_of(f.info.size, psn, ctx.max_payload) as u32;
        let frame = Frame::Data { msg: f.msg, size: f.info.size, psn, resent };
        let wire = ctx.framing.wire_bytes(ctx.stamp.l4, u64::from(payload));
        out.sends.push(wire::encode(f.info.dst, &frame, payload, &ctx.stamp, f.info.thread));
        if resent {
            st.retransmissions += 1;
        } else {
            st.data_sent += 1;
        }
        Self::restart_rto(now, ctx, idx, out);
        Some(Pulled { seq: psn, wire })
    }

    /// Restarts flow `idx`'s local ACK timeout (none when `rto` is 0).
    fn restart_rto(now: SimTime, ctx: &Ctx, idx: u32, out: &mut Actions) {
        if ctx.settings.rto.0 > 0 {
            out.set_timer(idx, now + ctx.settings.rto);
        }
    }

    /// An ACK or NACK for one of this host's flows (a CNP on it is the layer's).
    pub fn on_frame(&mut self, now: SimTime, ctx: &Ctx, f: &Frame, st: &mut RoceStats, out: &mut Actions) {
        let (msg, next, nack) = match *f {
            Frame::Ack { msg, next, .. } => (msg, next, false),
            Frame::Nack { msg, next, .. } => (msg, next, true),
            Frame::Cnp { .. } | Frame::Data { .. } => return,
        };
        let Some(&idx) = self.index.get(&(msg.slot, msg.gen)) else {
            st.stale_control += 1;
            return;
        };
        if nack {
            st.nacks_received += 1;
        } else {
            st.acks_received += 1;
        }
        out.wake = true;
        if self.acknowledge(now, ctx, idx, next, st, out) {
            return;
        }
        if nack {
            let fl = self.flows.get_mut(idx).expect("live");
            match ctx.settings.loss_recovery {
                LossRecovery::GoBackN if fl.snd_nxt > next => {
                    fl.snd_nxt = next;
                    st.go_back_n_rewinds += 1;
                }
                LossRecovery::SelectiveRepeat if next < fl.high && !fl.resend.contains(&next) => fl.resend.push_back(next),
                _ => {}
            }
        }
    }

    /// An SFC signal for flow `msg`: it sends nothing for `pause_ps` from now.
    pub fn on_sfc(&mut self, now: SimTime, msg: MsgRef, pause_ps: u64, st: &mut RoceStats, out: &mut Actions) {
        let Some(&idx) = self.index.get(&(msg.slot, msg.gen)) else {
            st.sfc_stale += 1;
            return;
        };
        let f = self.flows.get_mut(idx).expect("indexed flows are live");
        let until = now + crate::units::Duration(pause_ps);
        if until > f.paused_until {
            st.sfc_paused_ps += until.0 - f.paused_until.max(now).0;
            f.paused_until = until;
        }
        st.sfc_pauses += 1;
        out.wake = true;
    }

    /// Every PSN below `next` arrived. Returns whether that completed the message (its
    /// state is then gone).
    fn acknowledge(&mut self, now: SimTime, ctx: &Ctx, idx: u32, next: u32, st: &mut RoceStats, out: &mut Actions) -> bool {
        let f = self.flows.get_mut(idx).expect("live");
        if next <= f.snd_una {
            return false;
        }
        f.snd_una = next;
        f.snd_nxt = f.snd_nxt.max(next);
        f.resend.retain(|&p| p >= next);
        if next < f.n_pkts {
            Self::restart_rto(now, ctx, idx, out);
            return false;
        }
        st.messages_acked += 1;
        let key = (f.msg.slot, f.msg.gen);
        self.index.remove(&key);
        self.flows.remove(idx);
        self.live -= 1;
        out.finished.push(key);
        out.cancel_timer(idx);
        true
    }

    /// Flow `id`'s retransmission timeout expired.
    pub fn on_timer(&mut self, _now: SimTime, ctx: &Ctx, id: u32, st: &mut RoceStats, out: &mut Actions) {
        let Some(f) = self.flows.get_mut(id) else {
            return;
        };
        if f.snd_una < f.high {
            st.timeouts += 1;
            match ctx.settings.loss_recovery {
                LossRecovery::GoBackN => f.snd_nxt = f.snd_una,
                LossRecovery::SelectiveRepeat if !f.resend.contains(&f.snd_una) => f.resend.push_front(f.snd_una),
                LossRecovery::SelectiveRepeat => {}
            }
        }
        out.wake = true;
    }
}
