//! The NDP receiver (htsim `NdpSink`, `ndp.cpp:1441-1797`): an ACK for every data packet
//! and a NACK for every trimmed header, each through the host's pull pacer
//! ([`super::pacer`]).
//!
//! - Each ACK and NACK carries the flow's pull number, which counts every data packet and
//!   header received, duplicates included (`:1663-1664`, `:1733-1734`), the cumulative
//!   ack (packets received in order) and the data frame's transmission tag (for the
//!   sender's RTT sample). A duplicate is still ACKed and still pulls (`:1557-1558`).
//! - ACKs and NACKs choose their path from the receiver flow's own permutation
//!   ([`super::paths`]); a queued PULL keeps its ACK's path (`ndppacket.h:291-326`).
//! - Once the message is complete the flow's queued PULLs are discarded
//!   (`release_pulls`, `:1592-1596`), after the final ACK went through the pacer, and
//!   the message is delivered, once. A frame of a delivered message is answered (ACK, or
//!   NACK for a header) with the full cumulative ack and no pull, so a sender that lost
//!   the final ACK still finishes.

use super::config::NdpPaths;
use super::pacer::{Pacer, Rank};
use super::paths::Paths;
use super::wire::{self, CtlHdr, CtlKind, DataHdr, Msg};
use super::{Ctx, NdpStats};
use crate::rng::SimRng;
use crate::slab::Slab;
use crate::transport::Actions;
use crate::units::SimTime;
use std::collections::VecDeque;

/// Timer id of the pull pacer.
pub(super) const PACER_TIMER: u32 = 0;
/// The receiver's frames ride on thread 0's NIC queue.
const CONTROL_THREAD: u16 = 0;
const NONE: u32 = u32::MAX;
const DELIVERED: u32 = u32::MAX - 1;

/// A PULL waiting in the pacer: the fields of the ACK or NACK it was queued for.
struct QueuedPull {
    pull_no: u32,
    cum: u32,
    index: u32,
    path: u32,
    stamp: u64,
}

pub(super) struct RxFlow {
    src: u32,
    msg: Msg,
    n_pkts: u32,
    prio: u8,
    order: u64,
    got: Vec<u64>,
    n_got: u32,
    /// Packets received in order.
    cum: u32,
    pull_no: u32,
    paths: Paths,
    pulls: VecDeque<QueuedPull>,
}

impl RxFlow {
    fn has(&self, i: u32) -> bool {
        self.got[(i / 64) as usize] >> (i % 64) & 1 == 1
    }
}

pub(super) struct Receiver {
    flows: Slab<RxFlow>,
    /// Per engine message slot: generation and state (flow index, `NONE`, `DELIVERED`).
    slots: Vec<(u16, u32)>,
    pacer: Pacer,
    rng: SimRng,
    arrivals: u64,
}

impl Receiver {
    pub fn new(pacer: Pacer, rng: SimRng) -> Receiver {
        Receiver { flows: Slab::default(), slots: Vec::new(), pacer, rng, arrivals: 0 }
    }

    /// The pull pacer's spacing.
    pub fn drain(&self) -> crate::units::Duration {
        self.pacer.drain
    }

    /// A data frame (`trimmed`: a header) from `src` on path or ECMP key `flow`.
    #[allow(clippy::too_many_arguments)]
    pub fn on_data(&mut self, now: SimTime, ctx: &Ctx, src: u32, flow: u32, d: &DataHdr, trimmed: bool, payload: u64, st: &mut NdpStats, out: &mut Actions) {
        if trimmed {
            st.trimmed_received += 1;
        }
        let Some(idx) = self.lookup(ctx, src, flow, d, trimmed, st, out) else { return };
        let f = self.flows.get_mut(idx).expect("live");
        f.pull_no = f.pull_no.wrapping_add(1);
        if trimmed {
            self.reply(now, ctx, idx, CtlKind::Nack, d, st, out);
            return;
        }
        if d.index >= f.n_pkts || f.has(d.index) {
            st.duplicates += 1;
        } else {
            f.got[(d.index / 64) as usize] |= 1 << (d.index % 64);
            f.n_got += 1;
            out.goodput_bytes += payload;
            while f.cum < f.n_pkts && f.has(f.cum) {
                f.cum += 1;
            }
        }
        self.reply(now, ctx, idx, CtlKind::Ack, d, st, out);
        let f = self.flows.get(idx).expect("live");
        if f.cum == f.n_pkts {
            st.pulls_flushed += f.pulls.len() as u64;
            self.pacer.remove(idx);
            let f = self.flows.remove(idx).expect("live");
            self.slots[f.msg.slot as usize] = (f.msg.gen, DELIVERED);
            out.delivered.push((f.msg.slot, f.msg.gen));
            st.messages_received += 1;
        }
    }

    /// The receiver flow of a frame, created by the first; `None` for a frame of a
    /// delivered (answered here) or older message.
    #[allow(clippy::too_many_arguments)]
    fn lookup(&mut self, ctx: &Ctx, src: u32, flow: u32, d: &DataHdr, trimmed: bool, st: &mut NdpStats, out: &mut Actions) -> Option<u32> {
        let s = d.msg.slot as usize;
        if s >= self.slots.len() {
            self.slots.resize(s + 1, (0, NONE));
        }
        let (gen, state) = self.slots[s];
        if gen == d.msg.gen && state != NONE && state != DELIVERED {
            return Some(state);
        }
        let newer = (d.msg.gen.wrapping_sub(gen) as i16) > 0;
        if state == NONE || newer {
            if state != NONE && state != DELIVERED {
                // The slot's older message was never completed here: its state goes.
                self.pacer.remove(state);
                self.flows.remove(state);
            }
            return Some(self.create(ctx, src, flow, d));
        }
        if !trimmed {
            st.duplicates += 1;
        }
        if state == DELIVERED && gen == d.msg.gen {
            let n_pkts = n_pkts(d.size, ctx.max_payload);
            let path = match ctx.cfg.paths {
                NdpPaths::Permute | NdpPaths::Random => self.rng.below(u64::from(ctx.paths.max(1))) as u32,
                _ => flow,
            };
            let kind = if trimmed { CtlKind::Nack } else { CtlKind::Ack };
            let c = CtlHdr { kind, msg: d.msg, index: d.index, pull_no: 0, cum: n_pkts, pull: false, tag: d.tag };
            count_sent(kind, st);
            out.sends.push(wire::encode_ctl(src, path, &c, &ctx.stamp, CONTROL_THREAD));
        }
        None
    }

    fn create(&mut self, ctx: &Ctx, src: u32, flow: u32, d: &DataHdr) -> u32 {
        let n = n_pkts(d.size, ctx.max_payload);
        self.arrivals += 1;
        let f = RxFlow {
            src,
            msg: d.msg,
            n_pkts: n,
            prio: d.prio,
            order: self.arrivals,
            got: vec![0; n.div_ceil(64) as usize],
            n_got: 0,
            cum: 0,
            pull_no: 0,
            paths: Paths::new(ctx.cfg.paths, ctx.paths, flow, &mut self.rng),
            pulls: VecDeque::new(),
        };
        let idx = self.flows.insert(f);
        self.slots[d.msg.slot as usize] = (d.msg.gen, idx);
        idx
    }

    /// An ACK or NACK for `d` through the pacer (htsim `NdpPullPacer::sendPacket`).
    #[allow(clippy::too_many_arguments)]
    fn reply(&mut self, now: SimTime, ctx: &Ctx, idx: u32, kind: CtlKind, d: &DataHdr, st: &mut NdpStats, out: &mut Actions) {
        let f = self.flows.get_mut(idx).expect("live");
        let path = f.paths.next_post(&mut self.rng);
        let mut c = CtlHdr { kind, msg: f.msg, index: d.index, pull_no: f.pull_no, cum: f.cum, pull: true, tag: d.tag };
        if self.pacer.may_pull_now(now) {
            self.pacer.last_pull = now;
            st.pulls_piggybacked += 1;
        } else {
            if self.pacer.idle() {
                out.set_timer(PACER_TIMER, self.pacer.due());
            }
            if f.pulls.is_empty() {
                self.pacer.add(idx);
            }
            let stamp = self.pacer.stamp();
            f.pulls.push_back(QueuedPull { pull_no: f.pull_no, cum: f.cum, index: d.index, path, stamp });
            c.pull = false;
            c.pull_no = 0;
        }
        count_sent(kind, st);
        out.sends.push(wire::encode_ctl(f.src, path, &c, &ctx.stamp, CONTROL_THREAD));
    }

    /// The pacer's timer: release one queued PULL.
    pub fn on_timer(&mut self, now: SimTime, ctx: &Ctx, st: &mut NdpStats, out: &mut Actions) {
        let flows = &self.flows;
        let rank = |i: u32| {
            let f = flows.get(i).expect("queued flow is live");
            Rank { order: f.order, prio: f.prio, remaining: f.n_pkts - f.n_got, head_stamp: f.pulls.front().map_or(u64::MAX, |p| p.stamp) }
        };
        let Some(idx) = self.pacer.pick(ctx.cfg.pull_order, rank) else { return };
        let f = self.flows.get_mut(idx).expect("queued flow is live");
        let q = f.pulls.pop_front().expect("a ready flow has a PULL queued");
        if f.pulls.is_empty() {
            self.pacer.remove(idx);
        }
        let c = CtlHdr { kind: CtlKind::Pull, msg: f.msg, index: q.index, pull_no: q.pull_no, cum: q.cum, pull: true, tag: 0 };
        out.sends.push(wire::encode_ctl(f.src, q.path, &c, &ctx.stamp, CONTROL_THREAD));
        st.pulls_sent += 1;
        self.pacer.last_pull = now;
        if !self.pacer.idle() {
            out.set_timer(PACER_TIMER, now + self.pacer.drain);
        }
    }
}

fn n_pkts(size: u64, max_payload: u64) -> u32 {
    size.div_ceil(max_payload).max(1) as u32
}

fn count_sent(kind: CtlKind, st: &mut NdpStats) {
    match kind {
        CtlKind::Nack => st.nacks_sent += 1,
        _ => st.acks_sent += 1,
    }
}
