//! The RDS receiver: per message being received, which packets arrived and how far it
//! granted; grants across all its messages; gap NACKs and the receiver timeout.
//!
//! - A message's state is created by its first data frame (any packet: the size rides in
//!   every frame) and looked up by the engine's message slot, checked by generation.
//!   After delivery the slot remembers the delivered generation: a later frame of that
//!   generation, or of an older one (a slot is reused only after delivery, so an older
//!   generation was delivered too), is a duplicate and answered with DONE, so a sender
//!   still resending stops.
//! - Granted-but-not-received bytes are counted per sender (host) over all its messages:
//!   the bytes of granted packets (index ≥ the unscheduled ones) whose first copy has not
//!   arrived. A grant unit (up to `grant_packets` packets) is issued only if it keeps the
//!   count ≤ `rtt_bytes`; so a lost granted packet holds its share until it is resent.
//! - Admission: at most `overcommit` messages, from distinct senders, are being granted
//!   at once. A message leaves when it is fully granted; the freed place goes to the next
//!   waiting message: round-robin (the next sender in cyclic host order after the last
//!   one admitted, its oldest message) or SRPT (fewest bytes left to receive; ties: the
//!   oldest). Granting starts at the message's first arrival.
//! - Loss: a frame with an index beyond the highest seen reveals a gap, NACKed at once.
//!   The receiver becomes responsible for a message once it grants or NACKs it; from then
//!   on, if no new packet of the message arrives for `receiver_timeout`, every missing
//!   packet below the grant limit is NACKed (one NACK per run of consecutive packets)
//!   and the timer re-armed. Messages that fit in the unscheduled bytes and lost their
//!   tail are left to the sender's timeout (the receiver sees no gap and never took over).

use super::wire::{self, Control, Data, MsgRef};
use super::{Ctx, RdsStats};
use crate::packet::Packet;
use crate::slab::Slab;
use crate::transport::Actions;
use crate::units::SimTime;
use super::config::RdsPolicy;

const NONE: u32 = u32::MAX;
const DELIVERED: u32 = u32::MAX - 1;

/// The receiver's control frames ride on thread 0's NIC queue.
pub(super) const CONTROL_THREAD: u16 = 0;

struct RxMsg {
    src: u32,
    msg: MsgRef,
    size: u64,
    n_pkts: u32,
    unsched: u32,
    got: Vec<u64>,
    n_got: u32,
    bytes_got: u64,
    /// Highest index seen + 1.
    next_expected: u32,
    /// Packets below this are granted (or unscheduled).
    limit: u32,
    responsible: bool,
}

impl RxMsg {
    fn has(&self, i: u32) -> bool {
        self.got[(i / 64) as usize] >> (i % 64) & 1 == 1
    }
    fn bytes(&self, from: u32, to: u32, mp: u64) -> u64 {
        (u64::from(to) * mp).min(self.size) - (u64::from(from) * mp).min(self.size)
    }
}

pub(super) struct Receiver {
    msgs: Slab<RxMsg>,
    /// Per engine message slot: generation and state (index into `msgs`, `NONE`,
    /// `DELIVERED`).
    slots: Vec<(u16, u32)>,
    /// Messages not fully granted, in arrival order.
    waiting: Vec<u32>,
    /// Messages being granted (≤ overcommit, distinct senders).
    admitted: Vec<u32>,
    last_src: u32,
    /// Granted-but-not-received bytes per sender host.
    outstanding: Vec<u64>,
}

fn timer_id(idx: u32) -> u32 {
    2 * idx + 1
}

impl Receiver {
    pub fn new() -> Receiver {
        Receiver {
            msgs: Slab::default(),
            slots: Vec::new(),
            waiting: Vec::new(),
            admitted: Vec::new(),
            last_src: u32::MAX,
            outstanding: Vec::new(),
        }
    }

    fn control(&self, ctx: &Ctx, dst: u32, c: Control, st: &mut RdsStats, out: &mut Actions) {
        match c {
            Control::Grant { .. } => st.grants += 1,
            Control::Nack { .. } => st.nack_frames += 1,
            Control::Done { .. } => st.done_sent += 1,
        }
        out.sends.push(wire::encode_control(dst, &c, ctx.l4, CONTROL_THREAD));
    }

    pub fn on_data(&mut self, now: SimTime, ctx: &Ctx, p: &Packet, d: &Data, st: &mut RdsStats, out: &mut Actions) {
        let s = d.msg.slot as usize;
        if s >= self.slots.len() {
            self.slots.resize(s + 1, (0, NONE));
        }
        let (gen, state) = self.slots[s];
        let newer = (d.msg.gen.wrapping_sub(gen) as i16) > 0;
        let idx = if state == NONE || (state == DELIVERED && newer) {
            self.create(p.src, d, ctx)
        } else if gen == d.msg.gen && state != DELIVERED {
            state
        } else {
            // A frame of a delivered message (this generation or an older one).
            st.duplicates += 1;
            if state == DELIVERED || !newer {
                self.control(ctx, p.src, Control::Done { msg: d.msg }, st, out);
            }
            return;
        };
        let mp = ctx.max_payload;
        let m = self.msgs.get_mut(idx).expect("live");
        let i = d.index;
        if i >= m.n_pkts || m.has(i) {
            st.duplicates += 1;
            return;
        }
        m.got[(i / 64) as usize] |= 1 << (i % 64);
        m.n_got += 1;
        let b = m.bytes(i, i + 1, mp);
        m.bytes_got += b;
        out.goodput_bytes += b;
        let src = m.src;
        if i >= m.unsched {
            let o = &mut self.outstanding[src as usize];
            *o = o.saturating_sub(b);
        }
        let mut nack = None;
        if i > m.next_expected {
            nack = Some(Control::Nack { msg: m.msg, first: m.next_expected, count: i - m.next_expected });
            m.responsible = true;
        }
        m.next_expected = m.next_expected.max(i + 1);
        let done = m.n_got == m.n_pkts;
        let responsible = m.responsible;
        if let Some(c) = nack {
            st.gap_nacks += 1;
            self.control(ctx, src, c, st, out);
        }
        if done {
            self.deliver(idx, ctx, st, out);
        } else if responsible {
            out.set_timer(timer_id(idx), now + ctx.cfg.receiver_timeout);
        }
        self.schedule(now, ctx, st, out);
    }

    fn create(&mut self, src: u32, d: &Data, ctx: &Ctx) -> u32 {
        let n_pkts = d.size.div_ceil(ctx.max_payload).max(1) as u32;
        let unsched = ctx.cfg.unscheduled_packets(n_pkts, ctx.max_payload);
        let m = RxMsg {
            src,
            msg: d.msg,
            size: d.size,
            n_pkts,
            unsched,
            got: vec![0; n_pkts.div_ceil(64) as usize],
            n_got: 0,
            bytes_got: 0,
            next_expected: 0,
            limit: unsched,
            responsible: false,
        };
        let idx = self.msgs.insert(m);
        self.slots[d.msg.slot as usize] = (d.msg.gen, idx);
        if src as usize >= self.outstanding.len() {
            self.outstanding.resize(src as usize + 1, 0);
        }
        if unsched < n_pkts {
            self.waiting.push(idx);
        }
        idx
    }

    fn deliver(&mut self, idx: u32, ctx: &Ctx, st: &mut RdsStats, out: &mut Actions) {
        let m = self.msgs.remove(idx).expect("live");
        out.delivered.push((m.msg.slot, m.msg.gen));
        out.cancel_timer(timer_id(idx));
        self.slots[m.msg.slot as usize] = (m.msg.gen, DELIVERED);
        self.waiting.retain(|&r| r != idx);
        self.admitted.retain(|&r| r != idx);
        st.messages_received += 1;
        self.control(ctx, m.src, Control::Done { msg: m.msg }, st, out);
    }

    /// Admits waiting messages into free grant places and grants what the cap allows.
    fn schedule(&mut self, now: SimTime, ctx: &Ctx, st: &mut RdsStats, out: &mut Actions) {
        let mp = ctx.max_payload;
        let cap = ctx.cfg.rtt_bytes.0;
        loop {
            let msgs = &self.msgs;
            self.admitted.retain(|&r| msgs.get(r).is_some_and(|m| m.limit < m.n_pkts));
            while self.admitted.len() < ctx.cfg.overcommit as usize {
                let mut best: Option<(u64, u32)> = None;
                for &r in &self.waiting {
                    let m = self.msgs.get(r).expect("waiting is live");
                    if self.admitted.iter().any(|&a| a == r || self.msgs.get(a).expect("live").src == m.src) {
                        continue;
                    }
                    let key = match ctx.cfg.policy {
                        RdsPolicy::RoundRobin => u64::from(m.src.wrapping_sub(self.last_src.wrapping_add(1))),
                        RdsPolicy::Srpt => m.size - m.bytes_got,
                    };
                    if best.is_none_or(|(k, _)| key < k) {
                        best = Some((key, r));
                    }
                }
                let Some((_, r)) = best else { break };
                self.admitted.push(r);
                self.last_src = self.msgs.get(r).expect("live").src;
            }
            let mut finished = false;
            for k in 0..self.admitted.len() {
                let r = self.admitted[k];
                let m = self.msgs.get_mut(r).expect("admitted is live");
                let src = m.src as usize;
                let mut granted = false;
                while m.limit < m.n_pkts {
                    let end = (m.limit + ctx.cfg.grant_packets).min(m.n_pkts);
                    let b = m.bytes(m.limit, end, mp);
                    if self.outstanding[src] + b > cap {
                        break;
                    }
                    self.outstanding[src] += b;
                    m.limit = end;
                    granted = true;
                    st.max_outstanding_bytes = st.max_outstanding_bytes.max(self.outstanding[src]);
                    st.grants += 1;
                    out.sends.push(wire::encode_control(m.src, &Control::Grant { msg: m.msg, limit: end }, ctx.l4, CONTROL_THREAD));
                    out.probes.push((m.src, "rds_outstanding", self.outstanding[src] as f64));
                }
                if granted {
                    m.responsible = true;
                    out.set_timer(timer_id(r), now + ctx.cfg.receiver_timeout);
                }
                if m.limit >= m.n_pkts {
                    finished = true;
                    self.waiting.retain(|&w| w != r);
                }
            }
            if !finished {
                return;
            }
        }
    }

    /// Timer `id` (odd) fired: NACK everything missing below the grant limit.
    pub fn on_timer(&mut self, now: SimTime, ctx: &Ctx, id: u32, st: &mut RdsStats, out: &mut Actions) {
        let idx = id / 2;
        let Some(m) = self.msgs.get(idx) else { return };
        if !m.responsible {
            return;
        }
        let mut runs = Vec::new();
        let mut i = 0;
        while i < m.limit {
            if m.has(i) {
                i += 1;
                continue;
            }
            let first = i;
            while i < m.limit && !m.has(i) {
                i += 1;
            }
            runs.push(Control::Nack { msg: m.msg, first, count: i - first });
        }
        if runs.is_empty() {
            return;
        }
        let src = m.src;
        st.receiver_timeouts += 1;
        for c in runs {
            self.control(ctx, src, c, st, out);
        }
        out.set_timer(id, now + ctx.cfg.receiver_timeout);
    }
}
