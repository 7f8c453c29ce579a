//! The sending side: one flow per message (an RDMA write on a queue pair of its own, as
//! HPCC's simulator gives every flow its own QP), paced at the flow's DCQCN rate, with
//! go-back-N or selective repeat and a timeout.
//!
//! - Pacing is inside the transport, with a timer (not the host layer designed in
//!   `docs/architecture.md`). HPCC's NIC pulls one packet per transmit opportunity
//!   (`qbb-net-device.cc:95-130`); here the pacer picks the next frame — from the first
//!   flow in round-robin order whose next send time has come — once the line would be
//!   free had the last one gone straight to the wire (its pick + its wire bytes at the
//!   link rate), while fewer than `tx_pipeline_frames` of the host's data frames are
//!   between the pacer and the wire (the host's send path, then the NIC queue). With no
//!   send path that is one frame, picked when the last one has left, as HPCC's; with a
//!   send latency the NIC pipelines: every frame is late by it and the rate holds.
//!   A flow's next send time is when its last frame was picked plus that frame's wire
//!   bytes × 8 / its current rate, rounded up to the picosecond (HPCC `UpdateNextAvail`,
//!   `rdma-hw.cc:591-598`, whose pick is the frame's start on the wire); a rate change
//!   recomputes it with the new rate (`ChangeRate`, `:600-612`). A frame that starts
//!   later than its pick + the send path's shortest delay (the NIC was busy or paused)
//!   moves its flow's pacing to that start, so a held-up flow does not burst to catch
//!   up (and the line's next pick likewise). Every flow starts at line rate.
//! - The message's thread is released at once (posting a write returns; messages of one
//!   host proceed side by side, each paced on its own).
//! - Window (HPCC `IsWinBound`, `rdma-queue-pair.cc:120-137`): a flow whose bytes in
//!   flight reach its window waits for an acknowledgement.
//! - An ACK or NACK acknowledges every PSN below its own; a NACK then rewinds the next PSN
//!   to it (go-back-N, `RecoverQueue`, `rdma-hw.cc:495-497`) or queues that one packet
//!   (selective repeat). The timeout, restarted by every data frame sent and every
//!   acknowledgement that advances, rewinds to (or resends) the first unacknowledged PSN.
//! - SFC: a signal for a flow makes its pacer send nothing before the signal's arrival +
//!   its pause (a later signal extends the pause, never shortens it). The pause is kept
//!   apart from the pacing time (a rate change recomputes that one), and neither the
//!   flow's DCQCN state nor its timers change. A data frame already in the NIC still
//!   goes. The host's other flows are not paused: they take the NIC in round robin as
//!   before.

use super::dcqcn::{Arm, Change, Rp};
use super::receiver::{packets_of, payload_of};
use super::wire::{self, Frame, MsgRef};
use super::{Ctx, LossRecovery, RoceStats};
use crate::packet::Packet;
use crate::slab::Slab;
use crate::transport::{Actions, MsgInfo};
use crate::units::{Bytes, SimTime};
use rustc_hash::FxHashMap;
use std::collections::VecDeque;

/// Timer id of the host's pacing timer.
pub(super) const PACING_TIMER: u32 = 0;
/// Timers per flow: α, rate-decrease check, rate increase, retransmission timeout.
const PER_FLOW: u32 = 4;
const ALPHA: u32 = 0;
const DECREASE: u32 = 1;
const INCREASE: u32 = 2;
const RTO: u32 = 3;

fn timer_id(idx: u32, which: u32) -> u32 {
    1 + idx * PER_FLOW + which
}

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
    rp: Rp,
    next_avail: SimTime,
    /// SFC: the flow sends nothing before this.
    paused_until: SimTime,
    /// When the flow's last frame was picked (or, held up, started less the send path's
    /// shortest delay), its wire bytes and PSN.
    last_start: SimTime,
    last_wire: u64,
    last_psn: u32,
}

impl Flow {
    fn has_work(&self) -> bool {
        !self.resend.is_empty() || self.snd_nxt < self.n_pkts
    }

    fn offset(&self, psn: u32, mp: u64) -> u64 {
        (u64::from(psn) * mp).min(self.info.size)
    }

    /// Bytes in flight at or beyond the flow's window.
    fn window_bound(&self, ctx: &Ctx) -> bool {
        let d = &ctx.settings.dcqcn;
        let Some(Bytes(w)) = d.window else {
            return false;
        };
        let w = if d.window_scales_with_rate { (u128::from(w) * u128::from(self.rp.rate.0) / u128::from(d.line_rate.0)).max(1) as u64 } else { w };
        self.offset(self.snd_nxt, ctx.max_payload) - self.offset(self.snd_una, ctx.max_payload) >= w
    }
}

pub(super) struct Sender {
    flows: Slab<Flow>,
    index: FxHashMap<(u32, u16), u32>,
    /// Live flows in start order (round robin).
    order: Vec<u32>,
    cursor: usize,
    /// This host's data frames between the pacer and the wire (send path or NIC queue).
    in_nic: u32,
    /// When the line would be free had the last frame gone straight to the wire: the
    /// earliest next pick.
    line_free: SimTime,
}

impl Sender {
    pub fn new() -> Sender {
        Sender { flows: Slab::default(), index: FxHashMap::default(), order: Vec::new(), cursor: 0, in_nic: 0, line_free: SimTime::ZERO }
    }

    /// Messages whose last acknowledgement has not arrived.
    pub fn live(&self) -> usize {
        self.order.len()
    }

    /// The current rate and α of the flow sending message (`slot`, `gen`).
    pub fn rate_of(&self, slot: u32, gen: u16) -> Option<(u64, u64, f64)> {
        let f = self.flows.get(*self.index.get(&(slot, gen))?)?;
        Some((f.rp.rate.0, f.rp.target.0, f.rp.alpha))
    }

    pub fn on_message(&mut self, now: SimTime, ctx: &Ctx, msg: &MsgInfo, st: &mut RoceStats, out: &mut Actions) {
        let f = Flow {
            info: *msg,
            msg: MsgRef::from(msg),
            n_pkts: packets_of(msg.size, ctx.max_payload),
            snd_nxt: 0,
            snd_una: 0,
            high: 0,
            resend: VecDeque::new(),
            rp: Rp::new(ctx.settings.dcqcn.line_rate, &ctx.settings.dcqcn),
            next_avail: now,
            paused_until: SimTime::ZERO,
            last_start: now,
            last_wire: 0,
            last_psn: u32::MAX,
        };
        let idx = self.flows.insert(f);
        self.index.insert((msg.slot, msg.gen), idx);
        self.order.push(idx);
        st.messages_sent += 1;
        out.released.push(msg.thread);
        self.pump(now, ctx, st, out);
    }

    /// The pacing timer expired.
    pub fn on_pacing_timer(&mut self, now: SimTime, ctx: &Ctx, st: &mut RoceStats, out: &mut Actions) {
        self.pump(now, ctx, st, out);
    }

    /// Hands the next data frame to the send path if the pipeline has room, the line is
    /// free and a flow may send; otherwise arms the pacing timer for the earliest time a
    /// flow will be allowed (a full pipeline waits for a frame to leave).
    fn pump(&mut self, now: SimTime, ctx: &Ctx, st: &mut RoceStats, out: &mut Actions) {
        if self.in_nic >= ctx.pipeline {
            return;
        }
        let n = self.order.len();
        let mut earliest: Option<SimTime> = None;
        for k in 0..n {
            let pos = (self.cursor + k) % n;
            let idx = self.order[pos];
            let f = self.flows.get(idx).expect("ordered flows are live");
            if !f.has_work() || f.window_bound(ctx) {
                continue;
            }
            let ready = f.next_avail.max(f.paused_until).max(self.line_free);
            if ready > now {
                earliest = Some(earliest.map_or(ready, |e| e.min(ready)));
                continue;
            }
            self.cursor = pos + 1;
            self.send_one(now, ctx, idx, st, out);
            // Room left in the pipeline: the next pick's timer.
            return self.pump(now, ctx, st, out);
        }
        if let Some(t) = earliest {
            out.set_timer(PACING_TIMER, t);
        }
    }

    fn send_one(&mut self, now: SimTime, ctx: &Ctx, idx: u32, st: &mut RoceStats, out: &mut Actions) {
        let f = self.flows.get_mut(idx).expect("live");
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
        f.last_start = now;
        f.last_wire = wire;
        f.last_psn = psn;
        f.next_avail = now + f.rp.rate.tx_time(wire);
        out.sends.push(wire::encode(f.info.dst, &frame, payload, &ctx.stamp, f.info.thread));
        if resent {
            st.retransmissions += 1;
        } else {
            st.data_sent += 1;
        }
        Self::restart_rto(now, ctx, idx, out);
        self.in_nic += 1;
        self.line_free = now + ctx.link_rate.tx_time(wire);
    }

    /// Our data frame's last bit left: its byte counter, the pacing of a frame that was
    /// held up, and the next frame.
    pub fn on_tx_done(&mut self, now: SimTime, ctx: &Ctx, pkt: &Packet, st: &mut RoceStats, out: &mut Actions) {
        self.in_nic -= 1;
        let wire = u64::from(pkt.wire);
        let line = ctx.link_rate.tx_time(wire).0;
        // Where its pick would have been had it met no wait beyond the send path's shortest.
        let unheld = SimTime((now.0 - line).saturating_sub(ctx.path_min.0));
        self.line_free = self.line_free.max(unheld + crate::units::Duration(line));
        if let Some(&idx) = self.index.get(&(pkt.msg, pkt.msg_gen)) {
            let f = self.flows.get_mut(idx).expect("indexed flows are live");
            debug_assert!(pkt.seq != f.last_psn || wire == f.last_wire, "the pacer's wire bytes are the frame's");
            if pkt.seq == f.last_psn && unheld > f.last_start {
                f.last_start = unheld;
                f.next_avail = unheld + f.rp.rate.tx_time(wire);
            }
            let c = f.rp.on_sent(wire, &ctx.settings.dcqcn);
            self.moved(idx, ctx, c, st, out);
        }
        self.pump(now, ctx, st, out);
    }

    /// The flow's rate or target changed: counters, probes and its next send time.
    fn moved(&mut self, idx: u32, ctx: &Ctx, c: Change, st: &mut RoceStats, out: &mut Actions) {
        if !c.moved() {
            return;
        }
        st.rate_decreases += u64::from(c.cut);
        st.min_rate_reached += u64::from(c.floor);
        st.fast_recovery_steps += u64::from(c.fast_recovery);
        st.additive_increases += u64::from(c.additive);
        st.hyper_increases += u64::from(c.hyper);
        let f = self.flows.get_mut(idx).expect("live");
        if f.last_wire > 0 {
            f.next_avail = f.last_start + f.rp.rate.tx_time(f.last_wire);
        }
        if ctx.settings.probes {
            out.probes.push((f.msg.flow, "roce_rate_bps", f.rp.rate.0 as f64));
            out.probes.push((f.msg.flow, "roce_target_bps", f.rp.target.0 as f64));
            out.probes.push((f.msg.flow, "roce_alpha", f.rp.alpha));
        }
    }

    /// Restarts flow `idx`'s local ACK timeout (none when `rto` is 0).
    fn restart_rto(now: SimTime, ctx: &Ctx, idx: u32, out: &mut Actions) {
        if ctx.settings.rto.0 > 0 {
            out.set_timer(timer_id(idx, RTO), now + ctx.settings.rto);
        }
    }

    fn arm(idx: u32, a: Arm, out: &mut Actions) {
        for (which, at) in [(ALPHA, a.alpha), (DECREASE, a.decrease), (INCREASE, a.increase)] {
            if let Some(t) = at {
                out.set_timer(timer_id(idx, which), t);
            }
        }
    }

    /// An ACK, NACK or CNP for one of this host's flows.
    pub fn on_frame(&mut self, now: SimTime, ctx: &Ctx, f: &Frame, st: &mut RoceStats, out: &mut Actions) {
        let (msg, next, nack, cnp) = match *f {
            Frame::Ack { msg, next, cnp } => (msg, Some(next), false, cnp),
            Frame::Nack { msg, next, cnp } => (msg, Some(next), true, cnp),
            Frame::Cnp { msg, .. } => (msg, None, false, true),
            Frame::Data { .. } => return,
        };
        let Some(&idx) = self.index.get(&(msg.slot, msg.gen)) else {
            st.stale_control += 1;
            return;
        };
        if let Some(next) = next {
            if nack {
                st.nacks_received += 1;
            } else {
                st.acks_received += 1;
            }
            if self.acknowledge(now, ctx, idx, next, st, out) {
                self.pump(now, ctx, st, out);
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
        if cnp {
            st.cnps_received += 1;
            let mut a = Arm::default();
            let fl = self.flows.get_mut(idx).expect("live");
            let c = fl.rp.on_cnp(now, &ctx.settings.dcqcn, &mut a);
            Self::arm(idx, a, out);
            self.moved(idx, ctx, c, st, out);
        }
        self.pump(now, ctx, st, out);
    }

    /// An SFC signal for flow `msg`: it sends nothing for `pause_ps` from now.
    pub fn on_sfc(&mut self, now: SimTime, ctx: &Ctx, msg: MsgRef, pause_ps: u64, st: &mut RoceStats, out: &mut Actions) {
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
        self.pump(now, ctx, st, out);
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
        if let Some(pos) = self.order.iter().position(|&i| i == idx) {
            self.order.remove(pos);
            if self.cursor > pos {
                self.cursor -= 1;
            }
        }
        for which in [ALPHA, DECREASE, INCREASE, RTO] {
            out.cancel_timer(timer_id(idx, which));
        }
        true
    }

    /// Timer `id` (not the pacing timer) expired.
    pub fn on_timer(&mut self, now: SimTime, ctx: &Ctx, id: u32, st: &mut RoceStats, out: &mut Actions) {
        let (idx, which) = ((id - 1) / PER_FLOW, (id - 1) % PER_FLOW);
        let Some(f) = self.flows.get_mut(idx) else {
            return;
        };
        let d = &ctx.settings.dcqcn;
        let mut a = Arm::default();
        let c = match which {
            ALPHA => {
                f.rp.on_alpha_timer(now, d, &mut a);
                Change::default()
            }
            DECREASE => f.rp.on_decrease_timer(now, d, &mut a),
            INCREASE => f.rp.on_increase_timer(now, d, &mut a),
            _ => {
                if f.snd_una < f.high {
                    st.timeouts += 1;
                    match ctx.settings.loss_recovery {
                        LossRecovery::GoBackN => f.snd_nxt = f.snd_una,
                        LossRecovery::SelectiveRepeat if !f.resend.contains(&f.snd_una) => f.resend.push_front(f.snd_una),
                        LossRecovery::SelectiveRepeat => {}
                    }
                }
                Change::default()
            }
        };
        Self::arm(idx, a, out);
        self.moved(idx, ctx, c, st, out);
        self.pump(now, ctx, st, out);
    }
}
