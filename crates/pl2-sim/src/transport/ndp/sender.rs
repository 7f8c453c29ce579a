//! The NDP sender (htsim `NdpSrc`, `ndp.cpp`): an initial window at once, then one packet
//! per pull, retransmissions first; NACKs queue a resend, the timeout resends what is
//! overdue.
//!
//! - Start (`startflow`, `:270-325`): `initial_window` packets (at most the message's)
//!   are handed to the NIC together; the NIC serialises them at line rate. The sending
//!   thread is released at once: the message is in the transport's hands, and a host's
//!   messages proceed side by side as htsim's connections do.
//! - Pulls (`pull_packets`, `:858-873`): pull numbers are cumulative; the sender keeps the
//!   highest seen (`max_pull`) and the pulls it has used (`last_pull`), sends while
//!   `last_pull < max_pull` and keeps the credit when it has nothing to send. Initial
//!   window packets and timeout resends use no credit.
//! - What a pull sends (`send_packet`, `:876-1019`): the lowest NACKed packet first, else
//!   the next new packet. Every packet is re-routed when it is sent.
//! - ACK (`processAck`, `:576-675`): RTT sample and RTO ([`super::rtt`]), the packet is no
//!   longer outstanding, a cumulative ack covering the message ends the flow (no pull
//!   then), else the timeout is re-armed and the pull bit honoured.
//! - NACK (`processNack`, `:504-571`): the packet is queued for resending (and consumes a
//!   path slot, htsim's quirk); it goes at once only if the NACK carries a pull or unused
//!   credit remains (the `af57f45` fix), else with the next PULL.
//! - Timeout (`RESEND_ON_TIMEOUT`, `:1021-1139`): due at the earliest outstanding
//!   packet's clock + RTO (set at the first send to send time + RTO, recomputed on each
//!   ACK and each pulled resend, not on NACKs). A packet's clock is when its latest
//!   transmission started to serialise: htsim estimates it at hand-over as now + the NIC
//!   backlog ahead of it (`:923-924`); pl2 reads it exactly when the frame's last bit
//!   leaves (`on_tx_done`, minus the frame's wire time at the host rate). On expiry every
//!   packet with clock + RTO ≤ now is resent at once, in sequence order, on the path at
//!   the current slot (then the slot advances), and leaves the outstanding set.
//! - Returned header (`processRTS`, `:454-498`, with `SWALLOW`): the packet leaves the
//!   outstanding set and joins the resend queue; it is resent at once only if no pull is
//!   expected and at most one initial-window packet is unanswered, or the last 12
//!   feedbacks (ACK, NACK, return) hold at least 25 % ACKs (`is_bad_path`, `:414-451`);
//!   otherwise it waits for a pull. The path-avoidance bookkeeping of htsim's
//!   `PULL_BASED` strategy is not modelled.
//!
//! Memory: a flow keeps state only for the packets it has sent that the receiver's
//! cumulative ack does not cover yet (a window from `base`), so a long message costs
//! what it has in flight, not what it will ever send. A NACK or returned header for a
//! packet the cumulative ack already covers is ignored (htsim would resend it once
//! more; the receiver has it), as is the RTT sample of an ACK below the window; their
//! pull numbers still count.

use super::paths::Paths;
use super::rtt::RttEstimate;
use super::wire::{self, CtlHdr, CtlKind, DataHdr, Msg};
use super::{Ctx, NdpStats};
use crate::packet::{Packet, PktKind};
use crate::rng::SimRng;
use crate::slab::Slab;
use crate::transport::{Actions, MsgInfo};
use crate::units::SimTime;
use rustc_hash::FxHashMap;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// A packet's clock value when it is not outstanding.
const NOT_OUT: u64 = u64::MAX;
/// htsim's `HIST_LEN`: feedbacks `is_bad_path` looks at.
const HISTORY: usize = 12;

/// One feedback in a flow's history (htsim `FeedbackType`).
#[derive(Copy, Clone, PartialEq, Eq)]
enum Feedback {
    Unknown,
    Ack,
    Nack,
    Returned,
}

#[derive(Copy, Clone)]
struct PktState {
    /// When its latest transmission was handed to the NIC (htsim's `ts`).
    sent: SimTime,
    /// Its RTO clock in ps (htsim's `_sent_times`), [`NOT_OUT`] when not outstanding.
    clock: u64,
    /// Transmission count modulo 8 of the latest transmission.
    tag: u8,
    /// In the retransmission queue.
    queued: bool,
}

struct Flow {
    info: MsgInfo,
    msg: Msg,
    n_pkts: u32,
    /// New packets sent (htsim `_highest_sent / mss`).
    next: u32,
    max_pull: u64,
    last_pull: u64,
    /// NACKed packets waiting for a pull, lowest first (htsim's `_rtx_queue` map).
    rtx: BinaryHeap<Reverse<u32>>,
    /// State of packets `base ..`: sent at least once and not covered by the receiver's
    /// cumulative ack.
    pkts: VecDeque<PktState>,
    base: u32,
    /// (clock, packet) of outstanding packets, lowest clock first; an entry whose clock
    /// no longer matches the packet's is stale and skipped.
    clocks: BinaryHeap<Reverse<(u64, u32)>>,
    est: RttEstimate,
    /// htsim's `_rtx_timeout` (`None`: unset).
    timeout: Option<SimTime>,
    paths: Paths,
    /// htsim `_pull_window`: +1 per ACK or NACK, −1 per PULL or pull-carrying ACK.
    pull_window: i64,
    /// htsim `_first_window_count`: +1 per initial-window packet, −1 per ACK, NACK or
    /// returned header.
    first_window: i64,
    /// The last feedbacks, a ring (htsim `_feedback_history`).
    history: [Feedback; HISTORY],
    history_at: usize,
}

impl Flow {
    /// Packet `i`'s state, if it is in the window.
    fn pkt(&mut self, i: u32) -> Option<&mut PktState> {
        i.checked_sub(self.base).and_then(|k| self.pkts.get_mut(k as usize))
    }

    /// The receiver holds packets `..cum` in order: their state is no longer needed.
    fn advance(&mut self, cum: u32) {
        while self.base < cum && !self.pkts.is_empty() {
            self.pkts.pop_front();
            self.base += 1;
        }
    }

    fn feedback(&mut self, f: Feedback) {
        self.history[self.history_at] = f;
        self.history_at = (self.history_at + 1) % HISTORY;
    }

    /// htsim `is_bad_path`: at least 25 % ACKs among the recent feedbacks means the
    /// network is not congested as a whole, so the returned header met one bad path.
    fn bad_path(&self) -> bool {
        let count = |k: Feedback| self.history.iter().filter(|&&f| f == k).count();
        let acks = count(Feedback::Ack);
        let total = acks + count(Feedback::Nack) + count(Feedback::Returned);
        acks > 0 && total / acks <= 3
    }
}

/// Why a packet is resent.
#[derive(Copy, Clone)]
enum Why {
    Pull,
    Returned,
}

pub(super) struct Sender {
    flows: Slab<Flow>,
    index: FxHashMap<Msg, u32>,
    rng_paths: SimRng,
    rng_rto: SimRng,
    overdue: Vec<u32>,
}

/// Timer id of sender flow `idx` (0 is the pull pacer's).
fn timer_id(idx: u32) -> u32 {
    idx + 1
}

impl Sender {
    pub fn new(rng_paths: SimRng, rng_rto: SimRng) -> Sender {
        Sender { flows: Slab::default(), index: FxHashMap::default(), rng_paths, rng_rto, overdue: Vec::new() }
    }

    /// Messages whose final cumulative ack has not arrived.
    pub fn live(&self) -> usize {
        self.index.len()
    }

    pub fn on_message(&mut self, now: SimTime, ctx: &Ctx, m: &MsgInfo, st: &mut NdpStats, out: &mut Actions) {
        let n_pkts = m.size.div_ceil(ctx.max_payload).max(1) as u32;
        let f = Flow {
            info: *m,
            msg: Msg { slot: m.slot, gen: m.gen },
            n_pkts,
            next: 0,
            max_pull: 0,
            last_pull: 0,
            rtx: BinaryHeap::new(),
            pkts: VecDeque::new(),
            base: 0,
            clocks: BinaryHeap::new(),
            est: RttEstimate::new(ctx.cfg.rto_initial, ctx.cfg.rto_min),
            timeout: None,
            paths: Paths::new(ctx.cfg.paths, ctx.paths, m.id as u32, &mut self.rng_paths),
            pull_window: 0,
            first_window: 0,
            history: [Feedback::Unknown; HISTORY],
            history_at: 0,
        };
        let idx = self.flows.insert(f);
        self.index.insert(Msg { slot: m.slot, gen: m.gen }, idx);
        st.messages_sent += 1;
        out.released.push(m.thread);
        for _ in 0..ctx.cfg.initial_window.min(n_pkts) {
            self.send_one(now, ctx, idx, Why::Pull, st, out);
            self.flows.get_mut(idx).expect("live flow").first_window += 1;
        }
    }

    /// htsim's `send_packet`: one resend or one new packet; false if nothing to send.
    fn send_one(&mut self, now: SimTime, ctx: &Ctx, idx: u32, why: Why, st: &mut NdpStats, out: &mut Actions) -> bool {
        let f = self.flows.get_mut(idx).expect("live flow");
        let (seq, resent) = if let Some(Reverse(seq)) = f.rtx.pop() {
            if let Some(p) = f.pkt(seq) {
                p.queued = false;
            }
            match why {
                Why::Pull => st.retransmissions_pulled += 1,
                Why::Returned => st.retransmissions_returned += 1,
            }
            (seq, true)
        } else if f.next < f.n_pkts {
            f.next += 1;
            f.pkts.push_back(PktState { sent: SimTime::ZERO, clock: NOT_OUT, tag: 0, queued: false });
            st.data_sent += 1;
            (f.next - 1, false)
        } else {
            return false;
        };
        let path = f.paths.next_pre(&mut self.rng_paths);
        transmit(now, ctx, f, seq, resent, path, out);
        if let Some(p) = f.pkt(seq) {
            p.clock = now.0;
            f.clocks.push(Reverse((now.0, seq)));
        }
        if resent {
            update_timeout(f);
        }
        if f.timeout.is_none() {
            f.timeout = Some(now + f.est.rto());
        }
        arm(ctx, f, idx, out);
        true
    }

    fn pull(&mut self, now: SimTime, ctx: &Ctx, idx: u32, pull_no: u32, st: &mut NdpStats, out: &mut Actions) {
        let f = self.flows.get_mut(idx).expect("live flow");
        f.max_pull = f.max_pull.max(u64::from(pull_no));
        while self.flows.get(idx).is_some_and(|f| f.last_pull < f.max_pull) {
            if !self.send_one(now, ctx, idx, Why::Pull, st, out) {
                break;
            }
            self.flows.get_mut(idx).expect("live flow").last_pull += 1;
        }
    }

    /// An ACK, NACK or PULL from a receiver.
    pub fn on_ctl(&mut self, now: SimTime, ctx: &Ctx, c: &CtlHdr, st: &mut NdpStats, out: &mut Actions) {
        match c.kind {
            CtlKind::Ack => st.acks_received += 1,
            CtlKind::Nack => st.nacks_received += 1,
            CtlKind::Pull => st.pulls_received += 1,
        }
        let Some(&idx) = self.index.get(&c.msg) else {
            st.stale_control += 1;
            return;
        };
        let f = self.flows.get_mut(idx).expect("indexed flow is live");
        if c.index >= f.n_pkts {
            st.stale_control += 1;
            return;
        }
        match c.kind {
            CtlKind::Ack => {
                f.pull_window += 1 - i64::from(c.pull);
                f.first_window -= 1;
                f.feedback(Feedback::Ack);
                let sample = f.pkt(c.index).and_then(|p| {
                    p.clock = NOT_OUT;
                    (p.tag == c.tag).then(|| now.0.saturating_sub(p.sent.0))
                });
                f.est.on_ack(sample, &mut self.rng_rto);
                f.advance(c.cum);
                if c.cum >= f.n_pkts {
                    self.finish(idx, st, out);
                    return;
                }
                update_timeout(f);
                arm(ctx, f, idx, out);
                if c.pull {
                    self.pull(now, ctx, idx, c.pull_no, st, out);
                }
            }
            CtlKind::Nack => {
                f.pull_window += 1;
                f.first_window -= 1;
                f.feedback(Feedback::Nack);
                if let Some(p) = f.pkt(c.index) {
                    p.clock = NOT_OUT;
                    if !p.queued {
                        p.queued = true;
                        f.rtx.push(Reverse(c.index));
                    }
                }
                // htsim builds the resend on a route of its own (`:541`): one path slot.
                f.paths.next_pre(&mut self.rng_paths);
                if c.pull || f.last_pull < f.max_pull {
                    let pull_no = if c.pull { c.pull_no } else { 0 };
                    self.pull(now, ctx, idx, pull_no, st, out);
                }
            }
            CtlKind::Pull => {
                f.pull_window -= 1;
                self.pull(now, ctx, idx, c.pull_no, st, out);
            }
        }
    }

    /// A trimming queue returned the header of one of this host's packets.
    pub fn on_returned(&mut self, now: SimTime, ctx: &Ctx, d: &DataHdr, st: &mut NdpStats, out: &mut Actions) {
        st.headers_returned += 1;
        let Some(&idx) = self.index.get(&d.msg) else { return };
        let f = self.flows.get_mut(idx).expect("indexed flow is live");
        let Some(p) = f.pkt(d.index) else { return };
        p.clock = NOT_OUT;
        if !p.queued {
            p.queued = true;
            f.rtx.push(Reverse(d.index));
        }
        f.first_window -= 1;
        f.feedback(Feedback::Returned);
        if (f.pull_window == 0 && f.first_window <= 1) || f.bad_path() {
            self.send_one(now, ctx, idx, Why::Returned, st, out);
        }
    }

    fn finish(&mut self, idx: u32, st: &mut NdpStats, out: &mut Actions) {
        let f = self.flows.remove(idx).expect("live flow");
        self.index.remove(&f.msg);
        out.cancel_timer(timer_id(idx));
        st.messages_acked += 1;
        st.pull_credit_unused += f.max_pull - f.last_pull.min(f.max_pull);
    }

    /// The last bit of a data frame left the NIC: its RTO clock is when it started.
    pub fn on_tx_done(&mut self, now: SimTime, ctx: &Ctx, pkt: &Packet) {
        if pkt.kind != PktKind::Data {
            return;
        }
        let Some(&idx) = self.index.get(&Msg { slot: pkt.msg, gen: pkt.msg_gen }) else { return };
        let f = self.flows.get_mut(idx).expect("indexed flow is live");
        let Some(p) = f.pkt(pkt.seq) else { return };
        if p.clock == NOT_OUT || p.tag != wire::tag_of(pkt) {
            return;
        }
        let start = now.0.saturating_sub(ctx.host_rate.tx_time(u64::from(pkt.wire)).0);
        if start > p.clock {
            p.clock = start;
            f.clocks.push(Reverse((start, pkt.seq)));
        }
    }

    /// The flow's timeout expired: resend every overdue packet (htsim `retransmit_packet`).
    pub fn on_timer(&mut self, now: SimTime, ctx: &Ctx, id: u32, st: &mut NdpStats, out: &mut Actions) {
        let idx = id - 1;
        let Some(f) = self.flows.get_mut(idx) else { return };
        if f.timeout.is_none_or(|t| t > now) {
            return;
        }
        st.timeouts += 1;
        let rto = f.est.rto;
        self.overdue.clear();
        while let Some(&Reverse((clock, seq))) = f.clocks.peek() {
            if !f.pkt(seq).is_some_and(|p| p.clock == clock) {
                f.clocks.pop();
                continue;
            }
            if clock.saturating_add(rto) > now.0 {
                break;
            }
            f.clocks.pop();
            f.pkt(seq).expect("in the window").clock = NOT_OUT;
            self.overdue.push(seq);
        }
        self.overdue.sort_unstable();
        for &seq in &self.overdue {
            let path = f.paths.next_post(&mut self.rng_paths);
            transmit(now, ctx, f, seq, true, path, out);
            st.retransmissions_rto += 1;
            if ctx.cfg.rto_rearm {
                if let Some(p) = f.pkt(seq) {
                    p.clock = now.0;
                    f.clocks.push(Reverse((now.0, seq)));
                }
            }
        }
        update_timeout(f);
        arm(ctx, f, idx, out);
    }
}

/// Hands packet `seq` of `f` to the NIC on path (or ECMP key) `path`.
fn transmit(now: SimTime, ctx: &Ctx, f: &mut Flow, seq: u32, resent: bool, path: u32, out: &mut Actions) {
    // A resend of a packet below the window (queued before the cumulative ack covered it)
    // carries tag 0: its ACK is below the window too and gives no RTT sample.
    let mut spare = PktState { sent: now, clock: NOT_OUT, tag: 0, queued: false };
    let p = f.pkt(seq).unwrap_or(&mut spare);
    if resent {
        p.tag = (p.tag + 1) & 7;
    }
    p.sent = now;
    let tag = p.tag;
    let off = u64::from(seq) * ctx.max_payload;
    let payload = (f.info.size - off.min(f.info.size)).min(ctx.max_payload) as u32;
    let d = DataHdr { msg: f.msg, index: seq, size: f.info.size, prio: f.info.prio, tag, resent };
    out.sends.push(wire::encode_data(f.info.dst, path, &d, payload, &ctx.stamp, f.info.thread));
}

/// htsim's `update_rtx_time`: the earliest outstanding clock + RTO, or unset.
fn update_timeout(f: &mut Flow) {
    while let Some(&Reverse((clock, seq))) = f.clocks.peek() {
        if f.pkt(seq).is_some_and(|p| p.clock == clock) {
            f.timeout = Some(SimTime(clock.saturating_add(f.est.rto)));
            return;
        }
        f.clocks.pop();
    }
    f.timeout = None;
}

/// Mirrors the flow's timeout into its timer (none without `resend_on_timeout`).
fn arm(ctx: &Ctx, f: &Flow, idx: u32, out: &mut Actions) {
    if !ctx.cfg.resend_on_timeout {
        return;
    }
    match f.timeout {
        Some(t) => out.set_timer(timer_id(idx), t),
        None => out.cancel_timer(timer_id(idx)),
    }
}
