//! The Polo receiver: D and its epochs, one driving packet per data packet, the three
//! ways it asks for a lost packet, and the pause mechanism. D is each active flow's own
//! (`d_scope = "flow"`, default) or the receiver's, shared by its flows (`"receiver"`);
//! the reasons for this and every other open choice are in `docs/model.md`, "Polo". The
//! receiver's own D is kept in both cases: the pause mechanism reads it.
//!
//! - Driving (Polo slides, "Overview", "Adjusting the number of driving packets"): the
//!   receiver keeps the packets it has asked its active flows for (first bursts and
//!   driven packets) and not yet received at most D. A data packet's arrival frees one place, so it is
//!   answered by one driving packet; D growing by one in an epoch adds one more, D
//!   falling by M/2 withholds M/2. In steady state that is D driving packets per epoch.
//! - Who gets a driving packet: the flow whose packet arrived. If that flow has nothing
//!   left to ask for, the driving packet would be wasted; our optimisation (Polo^a turns
//!   it off) gives it to the next active flow that can use it, round robin, or sends none.
//!   Without it the useless driving packet is sent to the arriving flow all the same.
//!   Driving packets not answering an arrival (D grew at an epoch's end) go round robin.
//! - D: 0 when the receiver is idle (no active or paused flow). First epoch: +1 per
//!   unmarked data packet. Later epochs: +1 if at least one data packet arrived and none
//!   was marked (and, with `d_bound = "validated"`, not in the slides, only if at least
//!   half of D arrived in the epoch: RFC 7661's validation of cwnd). Any epoch with M marked packets: D ← max(D − M/2, `d_min_packets`).
//! - Epochs (Polo slides, "Determining the adjustment epoch"): the receiver acknowledges
//!   an adjoint packet (epoch ack); the sender's echo closes the epoch, and its
//!   acknowledgement opens the next, so an epoch is one round trip of this ping-pong. A
//!   lost ack or echo is replaced after `rto`.
//! - Recovery 1: a data packet beyond the highest seen + 1 → one loss packet naming the
//!   gap. Recovery 2: `idle_epochs` epochs with no data from any active flow → one loss
//!   packet for the lowest missing packet of a random active flow. A duplicate data
//!   packet is answered with a driving packet at the flow's current limit (it repairs a
//!   lost driving packet after the sender's timeout).
//! - Pause (Polo slides, "Optimization for highly concurrent flows"): after the first
//!   marked packet since the receiver was idle, a new flow is paused (a pause packet)
//!   unless no flow is active; its packets are still received. When an active flow
//!   finishes, the oldest paused flow becomes active: loss packets for its gaps, then a
//!   driving packet (which resumes its sender). With `pause_end = "unmarked_epoch"` an
//!   epoch that ends with data and no mark ends the marked state (new flows are active
//!   again unless older ones are still paused) and, if the receiver's D is above its
//!   number of active flows, resumes the oldest paused flow.

use super::wire::{self, Data, Frame, MsgRef};
use super::{Ctx, PauseEnd, PoloStats};
use crate::rng::SimRng;
use crate::slab::Slab;
use crate::transport::Actions;
use crate::units::SimTime;
use std::collections::VecDeque;

const NONE: u32 = u32::MAX;
const DELIVERED: u32 = u32::MAX - 1;
/// Timer id of the receiver's epoch guard.
pub(super) const EPOCH_TIMER: u32 = 0;
/// The receiver's packets ride on thread 0's NIC queue.
const CONTROL_THREAD: u16 = 0;

struct RxFlow {
    src: u32,
    msg: MsgRef,
    n_pkts: u32,
    got: Vec<u64>,
    n_got: u32,
    /// Highest data index seen + 1.
    seen: u32,
    /// Packets asked for: the first burst plus driven packets (and those a loss packet
    /// named).
    requested: u32,
    active: bool,
    /// With `d_scope = "flow"`: this flow's D, its packets asked for and not received
    /// (kept while active), its marks and arrivals in the running epoch, and the last
    /// epoch of its first phase (+1 per unmarked packet until that epoch closes).
    d: u32,
    outstanding: u32,
    marks: u32,
    arrivals: u32,
    first_until: u32,
}

impl RxFlow {
    fn has(&self, i: u32) -> bool {
        self.got[(i / 64) as usize] >> (i % 64) & 1 == 1
    }
    fn usable(&self) -> bool {
        self.active && self.requested < self.n_pkts
    }
    fn first_missing(&self, below: u32) -> Option<u32> {
        (0..below).find(|&i| !self.has(i))
    }
    /// Whether epoch `number` is in this flow's first phase (serial-number order).
    fn in_first_phase(&self, number: u32) -> bool {
        (number.wrapping_sub(self.first_until) as i32) <= 0
    }
}

#[derive(Default)]
struct Epoch {
    running: bool,
    number: u32,
    first: bool,
    marks: u32,
    arrivals: u32,
    active_arrivals: u32,
    /// Where the epoch's ack went: (sender host, message).
    peer: Option<(u32, MsgRef)>,
}

pub(super) struct Receiver {
    flows: Slab<RxFlow>,
    /// Per engine message slot: generation and state (index into `flows`, `NONE`,
    /// `DELIVERED`).
    slots: Vec<(u16, u32)>,
    active: Vec<u32>,
    rr: usize,
    paused: VecDeque<u32>,
    d: u32,
    /// Asked for and not received, over the active flows (a paused flow's first burst
    /// counts from its resume, so its losses never block the active flows).
    outstanding: u64,
    marked_seen: bool,
    idle_epochs: u32,
    epoch: Epoch,
    rng: SimRng,
    host: u32,
    /// `d_scope = "flow"`.
    per_flow: bool,
}

impl Receiver {
    pub fn new(host: u32, per_flow: bool, rng: SimRng) -> Receiver {
        Receiver {
            flows: Slab::default(),
            slots: Vec::new(),
            active: Vec::new(),
            rr: 0,
            paused: VecDeque::new(),
            d: 0,
            outstanding: 0,
            marked_seen: false,
            idle_epochs: 0,
            epoch: Epoch { first: true, ..Epoch::default() },
            rng,
            host,
            per_flow,
        }
    }

    /// D now (driving packets per epoch): the receiver's, or with `d_scope = "flow"`
    /// the sum of its active flows' D.
    pub fn d(&self) -> u32 {
        if self.per_flow {
            self.active.iter().filter_map(|&i| self.flows.get(i)).map(|f| f.d).sum()
        } else {
            self.d
        }
    }

    fn send(&self, ctx: &Ctx, dst: u32, f: Frame, out: &mut Actions) {
        out.sends.push(wire::encode(dst, &f, &ctx.stamp, CONTROL_THREAD));
    }

    fn loss(&self, ctx: &Ctx, idx: u32, first: u32, count: u32, out: &mut Actions) {
        let f = self.flows.get(idx).expect("live");
        self.send(ctx, f.src, Frame::Loss { msg: f.msg, first, count }, out);
    }

    pub fn on_data(&mut self, ctx: &Ctx, src: u32, d: &Data, ce: bool, st: &mut PoloStats, out: &mut Actions) {
        let Some(idx) = self.lookup(ctx, src, d, st, out) else { return };
        // Polo slides, "Adjusting the number of driving packets": the epoch's marks.
        if ce {
            self.epoch.marks += 1;
            self.marked_seen = true;
            st.marked_packets += 1;
        } else if self.epoch.first {
            self.d += 1;
        }
        self.epoch.arrivals += 1;
        let number = self.epoch.number;
        let f = self.flows.get_mut(idx).expect("live");
        if f.active {
            self.epoch.active_arrivals += 1;
        }
        // The same rules per flow (`d_scope = "flow"`).
        f.arrivals += 1;
        if ce {
            f.marks += 1;
        } else if f.in_first_phase(number) {
            f.d += 1;
        }
        let i = d.index;
        if i >= f.n_pkts || f.has(i) {
            st.duplicates += 1;
            if f.active {
                let (src, msg, limit) = (f.src, f.msg, f.requested);
                // A resent packet the receiver has is the sender's recovery 3 (its highest
                // packet): recovery 1 names the lowest gap below it again, since the loss
                // packet it sent for that gap, or its resend, was lost too.
                let gap = f.first_missing(f.seen).filter(|_| ctx.cfg.recovery_gap);
                if let Some(first) = gap {
                    let end = (first..f.seen).find(|&k| f.has(k)).unwrap_or(f.seen);
                    st.gap_losses += 1;
                    self.loss(ctx, idx, first, end - first, out);
                }
                st.driving_sent += 1;
                self.send(ctx, src, Frame::Driving { msg, limit }, out);
            }
            return;
        }
        f.got[(i / 64) as usize] |= 1 << (i % 64);
        f.n_got += 1;
        // A loss packet may have named a packet beyond the requested ones.
        let grew = (i + 1).saturating_sub(f.requested);
        f.requested = f.requested.max(i + 1);
        if f.active {
            self.outstanding = self.outstanding + u64::from(grew) - 1;
            f.outstanding = f.outstanding + grew - 1;
        }
        let off = u64::from(i) * ctx.max_payload;
        out.goodput_bytes += (d.size - off.min(d.size)).min(ctx.max_payload);
        // Recovery 1: a gap between the highest sequence seen and this one.
        if i > f.seen && f.active && ctx.cfg.recovery_gap {
            let (first, count) = (f.seen, i - f.seen);
            st.gap_losses += 1;
            f.seen = i + 1;
            self.loss(ctx, idx, first, count, out);
        }
        let f = self.flows.get_mut(idx).expect("live");
        f.seen = f.seen.max(i + 1);
        if f.n_got == f.n_pkts {
            self.deliver(ctx, idx, st, out);
            self.drive(ctx, None, st, out);
        } else {
            self.drive(ctx, Some(idx), st, out);
        }
    }

    /// The flow of a data packet, created by its first packet; `None` for a packet of a
    /// delivered message (answered with done).
    fn lookup(&mut self, ctx: &Ctx, src: u32, d: &Data, st: &mut PoloStats, out: &mut Actions) -> Option<u32> {
        let s = d.msg.slot as usize;
        if s >= self.slots.len() {
            self.slots.resize(s + 1, (0, NONE));
        }
        let (gen, state) = self.slots[s];
        let newer = (d.msg.gen.wrapping_sub(gen) as i16) > 0;
        if state == NONE || (state == DELIVERED && newer) {
            return Some(self.create(ctx, src, d, st, out));
        }
        if gen == d.msg.gen && state != DELIVERED {
            return Some(state);
        }
        st.duplicates += 1;
        if state == DELIVERED || !newer {
            self.send(ctx, src, Frame::Done { msg: d.msg }, out);
        }
        None
    }

    fn create(&mut self, ctx: &Ctx, src: u32, d: &Data, st: &mut PoloStats, out: &mut Actions) -> u32 {
        let n_pkts = d.size.div_ceil(ctx.max_payload).max(1) as u32;
        let requested = ctx.cfg.initial_window_packets.min(n_pkts);
        // Polo slides, "Optimization for highly concurrent flows":         // flows arriving after the first mark wait (and, when an unmarked epoch ended the
        // marked state, behind flows still paused).
        let active = !(ctx.cfg.pause && (self.marked_seen || !self.paused.is_empty()) && !self.active.is_empty());
        // Its first phase: until the end of the next epoch to open (the running one, if
        // any, and the whole next one), so it lasts at least one whole epoch; for a flow
        // that finds the receiver idle that is the receiver's first epoch.
        let first_until = self.epoch.number.wrapping_add(1);
        let outstanding = if active { requested } else { 0 };
        let f = RxFlow {
            src,
            msg: d.msg,
            n_pkts,
            got: vec![0; n_pkts.div_ceil(64) as usize],
            n_got: 0,
            seen: 0,
            requested,
            active,
            d: 0,
            outstanding,
            marks: 0,
            arrivals: 0,
            first_until,
        };
        let idx = self.flows.insert(f);
        self.slots[d.msg.slot as usize] = (d.msg.gen, idx);
        if active {
            self.outstanding += u64::from(requested);
            self.active.push(idx);
        } else {
            self.paused.push_back(idx);
            st.pauses += 1;
            self.send(ctx, src, Frame::Pause { msg: d.msg }, out);
        }
        idx
    }

    fn deliver(&mut self, ctx: &Ctx, idx: u32, st: &mut PoloStats, out: &mut Actions) {
        let f = self.flows.remove(idx).expect("live");
        out.delivered.push((f.msg.slot, f.msg.gen));
        self.slots[f.msg.slot as usize] = (f.msg.gen, DELIVERED);
        st.messages_received += 1;
        self.send(ctx, f.src, Frame::Done { msg: f.msg }, out);
        if let Some(k) = self.active.iter().position(|&a| a == idx) {
            self.active.remove(k);
            if let Some(p) = self.paused.pop_front() {
                self.resume(ctx, p, st, out);
            }
        } else {
            self.paused.retain(|&p| p != idx);
        }
        if self.active.is_empty() && self.paused.is_empty() {
            // Idle: D and the epochs start again with the next flow.
            self.d = 0;
            self.marked_seen = false;
            self.idle_epochs = 0;
            self.epoch = Epoch { number: self.epoch.number, first: true, ..Epoch::default() };
            out.cancel_timer(EPOCH_TIMER);
        }
    }

    /// A paused flow becomes active: its gaps are asked for, and a driving packet
    /// resumes its sender.
    fn resume(&mut self, ctx: &Ctx, idx: u32, st: &mut PoloStats, out: &mut Actions) {
        st.resumes += 1;
        let f = self.flows.get_mut(idx).expect("paused flow is live");
        f.active = true;
        f.outstanding = f.requested - f.n_got;
        self.outstanding += u64::from(f.outstanding);
        self.active.push(idx);
        let f = self.flows.get(idx).expect("live");
        if ctx.cfg.recovery_gap {
            let mut i = 0;
            while i < f.seen {
                if f.has(i) {
                    i += 1;
                    continue;
                }
                let first = i;
                while i < f.seen && !f.has(i) {
                    i += 1;
                }
                st.gap_losses += 1;
                self.loss(ctx, idx, first, i - first, out);
            }
        }
        let f = self.flows.get_mut(idx).expect("live");
        let room = if self.per_flow { f.outstanding < f.d } else { self.outstanding < u64::from(self.d) };
        if room && f.requested < f.n_pkts {
            f.requested += 1;
            f.outstanding += 1;
            self.outstanding += 1;
        }
        let (src, msg, limit) = (f.src, f.msg, f.requested);
        st.driving_sent += 1;
        self.send(ctx, src, Frame::Driving { msg, limit }, out);
    }

    /// Sends driving packets while fewer than D packets are asked for and not received.
    fn drive(&mut self, ctx: &Ctx, preferred: Option<u32>, st: &mut PoloStats, out: &mut Actions) {
        if self.per_flow {
            return self.drive_per_flow(ctx, preferred, st, out);
        }
        while self.outstanding < u64::from(self.d) {
            let usable = |r: &Receiver, i: u32| r.flows.get(i).is_some_and(RxFlow::usable);
            let target = match preferred {
                Some(p) if usable(self, p) => p,
                Some(p) if !ctx.cfg.redirect_wasted_driving => {
                    // Polo^a: the arriving flow gets its driving packet even if it cannot
                    // use it.
                    if let Some(f) = self.flows.get(p).filter(|f| f.active) {
                        st.driving_sent += 1;
                        st.driving_wasted += 1;
                        self.send(ctx, f.src, Frame::Driving { msg: f.msg, limit: f.requested }, out);
                    }
                    break;
                }
                _ => {
                    let n = self.active.len();
                    let Some(k) = (0..n).map(|k| (self.rr + k) % n).find(|&k| usable(self, self.active[k])) else { break };
                    self.rr = (k + 1) % n;
                    self.active[k]
                }
            };
            let f = self.flows.get_mut(target).expect("usable is live");
            f.requested += 1;
            f.outstanding += 1;
            self.outstanding += 1;
            let (src, msg, limit) = (f.src, f.msg, f.requested);
            st.driving_sent += 1;
            self.send(ctx, src, Frame::Driving { msg, limit }, out);
        }
    }

    /// With `d_scope = "flow"`: each flow is driven within its own D, so an arrival's freed
    /// place drives only the arriving flow (`preferred`), and none is passed to another
    /// flow; a flow that cannot use it gets nothing (Polo^a: a wasted driving packet).
    /// `None` (an epoch's end) tops up every active flow.
    fn drive_per_flow(&mut self, ctx: &Ctx, preferred: Option<u32>, st: &mut PoloStats, out: &mut Actions) {
        match preferred {
            Some(p) => self.drive_flow(ctx, p, true, st, out),
            None => {
                for k in 0..self.active.len() {
                    let idx = self.active[k];
                    self.drive_flow(ctx, idx, false, st, out);
                }
            }
        }
    }

    fn drive_flow(&mut self, ctx: &Ctx, idx: u32, arrival: bool, st: &mut PoloStats, out: &mut Actions) {
        let Some(f) = self.flows.get_mut(idx).filter(|f| f.active) else { return };
        if arrival && !f.usable() && f.outstanding < f.d && !ctx.cfg.redirect_wasted_driving {
            st.driving_sent += 1;
            st.driving_wasted += 1;
            let (src, msg, limit) = (f.src, f.msg, f.requested);
            self.send(ctx, src, Frame::Driving { msg, limit }, out);
            return;
        }
        while f.usable() && f.outstanding < f.d {
            f.requested += 1;
            f.outstanding += 1;
            self.outstanding += 1;
            st.driving_sent += 1;
            let (src, msg, limit) = (f.src, f.msg, f.requested);
            out.sends.push(wire::encode(src, &Frame::Driving { msg, limit }, &ctx.stamp, CONTROL_THREAD));
        }
    }

    /// An adjoint packet arrived: it opens an epoch if none is running.
    pub fn on_adjoint(&mut self, now: SimTime, ctx: &Ctx, src: u32, d: &Data, out: &mut Actions) {
        if self.epoch.running || self.active.is_empty() && self.paused.is_empty() {
            return;
        }
        self.open_epoch(now, ctx, src, d.msg, out);
    }

    fn open_epoch(&mut self, now: SimTime, ctx: &Ctx, src: u32, msg: MsgRef, out: &mut Actions) {
        self.epoch.running = true;
        self.epoch.number = self.epoch.number.wrapping_add(1);
        self.epoch.peer = Some((src, msg));
        self.send(ctx, src, Frame::EpochAck { msg, epoch: self.epoch.number }, out);
        out.set_timer(EPOCH_TIMER, now + ctx.cfg.rto);
    }

    /// The sender's echo of the epoch ack: the epoch is over.
    pub fn on_echo(&mut self, now: SimTime, ctx: &Ctx, epoch: u32, st: &mut PoloStats, out: &mut Actions) {
        if !self.epoch.running || epoch != self.epoch.number {
            return;
        }
        self.close_epoch(now, ctx, st, out);
    }

    /// The epoch guard fired: the ack or its echo was lost.
    pub fn on_timer(&mut self, now: SimTime, ctx: &Ctx, st: &mut PoloStats, out: &mut Actions) {
        if self.epoch.running {
            st.epoch_timeouts += 1;
            self.close_epoch(now, ctx, st, out);
        }
    }

    fn close_epoch(&mut self, now: SimTime, ctx: &Ctx, st: &mut PoloStats, out: &mut Actions) {
        let e = std::mem::take(&mut self.epoch);
        st.epochs += 1;
        // Polo slides, "Adjusting the number of driving packets"; with `d_bound =
        // "validated"` only if the epoch used at least half of D (RFC 7661).
        if !e.first && e.marks == 0 && e.arrivals > 0 && ctx.cfg.d_bound.allows_growth(self.d, e.arrivals) {
            self.d += 1;
        }
        if e.marks > 0 {
            let half = ctx.cfg.mark_rounding.half(e.marks);
            self.d = self.d.saturating_sub(half).max(ctx.cfg.d_min_packets);
        }
        if self.per_flow {
            self.close_flow_epochs(ctx, e.number, out);
        }
        // `pause_end = "unmarked_epoch"`: an epoch without marks ends the marked state and,
        // while the receiver's D has room for one more flow's packet per epoch, lets the
        // oldest paused flow in.
        if ctx.cfg.pause && ctx.cfg.pause_end == PauseEnd::UnmarkedEpoch && e.marks == 0 && e.arrivals > 0 {
            self.marked_seen = false;
            if self.active.len() < self.d as usize {
                if let Some(p) = self.paused.pop_front() {
                    self.resume(ctx, p, st, out);
                }
            }
        }
        out.probes.push((self.host, "polo_d", f64::from(self.d())));
        // Recovery 2: epochs with no data from any active flow.
        if e.active_arrivals == 0 && !self.active.is_empty() {
            self.idle_epochs += 1;
        } else {
            self.idle_epochs = 0;
        }
        if ctx.cfg.recovery_idle && self.idle_epochs >= ctx.cfg.idle_epochs {
            self.idle_epochs = 0;
            self.idle_loss(ctx, st, out);
        }
        let peer = e.peer;
        self.epoch = Epoch { number: e.number, peer, ..Epoch::default() };
        // The next epoch's ack goes to the same sender if its flow is still here, else to
        // the first active flow.
        let live = |r: &Receiver, m: &MsgRef| {
            let s = r.slots.get(m.slot as usize);
            s.is_some_and(|&(g, st)| g == m.gen && st != NONE && st != DELIVERED)
        };
        let next = match peer {
            Some((src, m)) if live(self, &m) => Some((src, m)),
            _ => self.active.first().or(self.paused.front()).map(|&i| {
                let f = self.flows.get(i).expect("live");
                (f.src, f.msg)
            }),
        };
        match next {
            Some((src, m)) => self.open_epoch(now, ctx, src, m, out),
            None => out.cancel_timer(EPOCH_TIMER),
        }
        self.drive(ctx, None, st, out);
    }

    /// The epoch's end for every flow's own D (`d_scope = "flow"`): the same rules as the
    /// receiver's D over the flow's own packets, and the floor at every end (a flow that
    /// got no packet this epoch is still driven next epoch). Each flow's new D is probed
    /// (`polo_flow_d`, flow = message id).
    fn close_flow_epochs(&mut self, ctx: &Ctx, number: u32, out: &mut Actions) {
        for k in 0..self.active.len() + self.paused.len() {
            let idx = if k < self.active.len() { self.active[k] } else { self.paused[k - self.active.len()] };
            let f = self.flows.get_mut(idx).expect("listed flows are live");
            if !f.in_first_phase(number) && f.marks == 0 && f.arrivals > 0 && ctx.cfg.d_bound.allows_growth(f.d, f.arrivals) {
                f.d += 1;
            }
            let half = ctx.cfg.mark_rounding.half(f.marks);
            f.d = f.d.saturating_sub(half).max(ctx.cfg.d_min_packets);
            f.marks = 0;
            f.arrivals = 0;
            out.probes.push((f.msg.flow, "polo_flow_d", f64::from(f.d)));
        }
    }

    fn idle_loss(&mut self, ctx: &Ctx, st: &mut PoloStats, out: &mut Actions) {
        let missing: u32 = self.active.iter().filter(|&&i| self.flows.get(i).is_some_and(|f| f.n_got < f.requested)).count() as u32;
        if missing == 0 {
            return;
        }
        // A random active flow, drawn from the run's seed.
        let pick = self.rng.below(u64::from(missing)) as usize;
        let idx = *self.active.iter().filter(|&&i| self.flows.get(i).is_some_and(|f| f.n_got < f.requested)).nth(pick).expect("counted");
        let f = self.flows.get(idx).expect("live");
        let Some(first) = f.first_missing(f.requested) else { return };
        st.idle_losses += 1;
        self.loss(ctx, idx, first, 1, out);
    }
}
