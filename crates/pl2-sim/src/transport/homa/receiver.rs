//! The Homa receiver: which packets of each incoming message arrived, its grants (SRPT
//! over senders, the `overcommit` best each on its own scheduled level, at most RTTbytes
//! in flight per message, paced at the link rate), and RESEND on silence.
//!
//! - A message's state is created by its first data packet (every packet carries the
//!   size) and looked up by the engine's message slot, checked by generation; after
//!   delivery or abort the slot remembers the generation, so late copies are duplicates.
//! - In flight (`InboundMessage`, `HomaTransport.cc:2603-2762`): at the first packet,
//!   the wire bytes of the whole unscheduled part; minus each packet's wire bytes at its
//!   first arrival; plus each grant's. A grant is sent only while the count is below
//!   RTTbytes, so the first grant leaves as soon as the first packet arrives (`:1815-1874`).
//! - Scheduling (`ReceiveScheduler`, `HomaTransport.h:316-329,536-547`): the unit is the
//!   sender; its candidate is its message with the fewest bytes not yet granted (ties:
//!   smaller message, then lower id); senders rank by their candidates. After every data
//!   packet and every pacing timer, each of the `overcommit` best senders whose pacing
//!   timer is idle and whose candidate is below the cap gets one grant of one scheduled
//!   packet, at the scheduled level of its rank ([`Params::sched_level`]), or at the
//!   candidate's unscheduled level when the tail boost applies and is higher. With
//!   pacing, that sender's next grant waits the granted packet's wire time
//!   (`handleGrantTimerEvent`, `:2344-2381`).
//! - Messages within RTTbytes are never scheduled: they just complete.
//! - RESEND (Homa paper §3.7; none in the simulator): a message expecting packets (sent
//!   unscheduled, or granted) that receives nothing new for `resend_timeout` gets one
//!   RESEND per run of missing expected packets; a BUSY answer or a new packet resets the
//!   count, and after `abort_after_timeouts` RESEND rounds in a row the next timeout
//!   aborts the message (it stays unfinished).

use super::wire::{self, Control, Data, MsgRef, RESEND_MAX};
use super::{HomaStats, Params};
use crate::slab::Slab;
use crate::transport::Actions;
use crate::units::SimTime;

const NONE: u32 = u32::MAX;
/// Delivered or aborted.
const CLOSED: u32 = u32::MAX - 1;

/// Timer id of the grant pacing timer for sender host `src` (odd ids).
pub(super) fn pacing_timer(src: u32) -> u32 {
    2 * src + 1
}
/// Timer id of the RESEND timer of receiver message `idx` (even ids from 2).
pub(super) fn resend_timer(idx: u32) -> u32 {
    2 * idx + 2
}

struct RxMsg {
    src: u32,
    msg: MsgRef,
    size: u64,
    n_pkts: u32,
    got: Vec<u64>,
    n_got: u32,
    /// Packets expected: the unscheduled ones and those granted.
    limit: u32,
    /// Scheduled bytes not yet granted.
    to_grant: u64,
    /// Wire bytes unscheduled or granted and not yet received.
    in_flight: u64,
    /// Level of the latest grant.
    level: u8,
    /// RESEND rounds in a row without an answer.
    timeouts: u32,
}

impl RxMsg {
    fn has(&self, i: u32) -> bool {
        self.got[(i / 64) as usize] >> (i % 64) & 1 == 1
    }
    /// Candidate order: fewest bytes to grant, smaller message, lower id.
    fn key(&self) -> (u64, u64, u32) {
        (self.to_grant, self.size, self.msg.flow)
    }
}

pub(super) struct Receiver {
    msgs: Slab<RxMsg>,
    /// Per engine message slot: generation and state (index into `msgs`, `NONE`, `CLOSED`).
    slots: Vec<(u16, u32)>,
    /// Messages with bytes to grant.
    grantable: Vec<u32>,
    /// Per sender host: its pacing timer is pending.
    pacing: Vec<bool>,
    /// Scratch: grantable messages in candidate order, and the senders chosen.
    order: Vec<((u64, u64, u32), u32)>,
    chosen: Vec<u32>,
}

impl Receiver {
    pub fn new() -> Receiver {
        Receiver { msgs: Slab::default(), slots: Vec::new(), grantable: Vec::new(), pacing: Vec::new(), order: Vec::new(), chosen: Vec::new() }
    }

    /// Messages being received.
    pub fn live(&self) -> usize {
        self.msgs.len()
    }

    fn send(p: &Params, dst: u32, c: &Control, out: &mut Actions) {
        out.sends.push(wire::encode_control(dst, c, p.layout.l4_sched));
    }

    pub fn on_data(&mut self, now: SimTime, p: &Params, src: u32, d: &Data, st: &mut HomaStats, out: &mut Actions) {
        let Some(idx) = self.lookup(p, src, d, st) else { return };
        let l = &p.layout;
        let m = self.msgs.get_mut(idx).expect("live");
        let i = d.index;
        if i >= m.n_pkts || m.has(i) {
            st.duplicates += 1;
            return;
        }
        m.got[(i / 64) as usize] |= 1 << (i % 64);
        m.n_got += 1;
        m.timeouts = 0;
        let pkt = l.pkt(m.size, i);
        out.goodput_bytes += pkt.len;
        if i < m.limit {
            m.in_flight = m.in_flight.saturating_sub(l.wire(pkt));
        }
        if m.n_got == m.n_pkts {
            let m = self.msgs.remove(idx).expect("live");
            self.slots[m.msg.slot as usize] = (m.msg.gen, CLOSED);
            out.delivered.push((m.msg.slot, m.msg.gen));
            out.cancel_timer(resend_timer(idx));
            st.messages_received += 1;
        } else if m.n_got < m.limit {
            out.set_timer(resend_timer(idx), now + p.resend_timeout);
        } else {
            out.cancel_timer(resend_timer(idx));
        }
        self.schedule(now, p, st, out);
    }

    /// The message of a data packet, created by its first packet; `None` for a closed one.
    fn lookup(&mut self, p: &Params, src: u32, d: &Data, st: &mut HomaStats) -> Option<u32> {
        let s = d.msg.slot as usize;
        if s >= self.slots.len() {
            self.slots.resize(s + 1, (0, NONE));
        }
        let (gen, state) = self.slots[s];
        let newer = (d.msg.gen.wrapping_sub(gen) as i16) > 0;
        if state != NONE && state != CLOSED && gen == d.msg.gen {
            return Some(state);
        }
        if !(state == NONE || newer) {
            st.duplicates += 1;
            return None;
        }
        let l = &p.layout;
        let n_pkts = l.packets(d.size);
        let unsched = l.unsched_of(d.size);
        let m = RxMsg {
            src,
            msg: d.msg,
            size: d.size,
            n_pkts,
            got: vec![0; n_pkts.div_ceil(64) as usize],
            n_got: 0,
            limit: l.unsched_packets(d.size),
            to_grant: d.size - unsched,
            in_flight: l.unsched_wire(d.size),
            level: 0,
            timeouts: 0,
        };
        let scheduled = m.to_grant > 0;
        let idx = self.msgs.insert(m);
        self.slots[s] = (d.msg.gen, idx);
        if scheduled {
            self.grantable.push(idx);
        }
        Some(idx)
    }

    /// Grants to the `overcommit` best senders that may have one now.
    fn schedule(&mut self, now: SimTime, p: &Params, st: &mut HomaStats, out: &mut Actions) {
        self.order.clear();
        for &idx in &self.grantable {
            self.order.push((self.msgs.get(idx).expect("grantable is live").key(), idx));
        }
        self.order.sort_unstable();
        self.chosen.clear();
        for &(_, idx) in &self.order {
            let src = self.msgs.get(idx).expect("live").src;
            if self.chosen.len() as u32 == p.overcommit {
                break;
            }
            if !self.chosen.iter().any(|&c| self.msgs.get(c).expect("live").src == src) {
                self.chosen.push(idx);
            }
        }
        let active = self.chosen.len() as u32;
        for rank in 0..active {
            let idx = self.chosen[rank as usize];
            self.grant(now, p, idx, p.sched_level(rank, active), st, out);
        }
        self.grantable.retain(|&i| self.msgs.get(i).is_some_and(|m| m.to_grant > 0));
    }

    /// Grants message `idx` one scheduled packet (more without pacing) if its sender's
    /// pacing timer is idle and it is below the cap.
    fn grant(&mut self, now: SimTime, p: &Params, idx: u32, slot_level: u8, st: &mut HomaStats, out: &mut Actions) {
        let l = &p.layout;
        let m = self.msgs.get_mut(idx).expect("live");
        let s = m.src as usize;
        if s >= self.pacing.len() {
            self.pacing.resize(s + 1, false);
        }
        if self.pacing[s] {
            return;
        }
        while m.in_flight < l.rtt_wire && m.to_grant > 0 {
            // Tail boost: the last RTTbytes go at their unscheduled level if higher.
            let boost = p.tail_boost && l.sched_wire(m.to_grant) < l.rtt_wire;
            let level = if boost { slot_level.min(p.unsched_level(m.to_grant)) } else { slot_level };
            let bytes = m.to_grant.min(l.sched_payload);
            let wire = l.sched_wire(bytes);
            m.to_grant -= bytes;
            m.in_flight += wire;
            m.limit += 1;
            m.level = level;
            st.grants += 1;
            st.max_in_flight_bytes = st.max_in_flight_bytes.max(m.in_flight);
            Self::send(p, m.src, &Control::Grant { msg: m.msg, limit: m.limit, level }, out);
            out.set_timer(resend_timer(idx), now + p.resend_timeout);
            if p.grant_pacing && m.to_grant > 0 && m.in_flight < l.rtt_wire {
                self.pacing[s] = true;
                out.set_timer(pacing_timer(m.src), now + p.rate.tx_time(wire));
                return;
            }
            if p.grant_pacing {
                return;
            }
        }
    }

    /// Sender `src`'s pacing timer fired.
    pub fn on_pacing(&mut self, now: SimTime, p: &Params, src: u32, st: &mut HomaStats, out: &mut Actions) {
        if let Some(b) = self.pacing.get_mut(src as usize) {
            *b = false;
        }
        self.schedule(now, p, st, out);
    }

    /// A BUSY from the sender of a message: it is alive, keep waiting.
    pub fn on_busy(&mut self, now: SimTime, p: &Params, msg: &MsgRef, st: &mut HomaStats, out: &mut Actions) {
        st.busy_received += 1;
        let Some(&(gen, idx)) = self.slots.get(msg.slot as usize) else { return };
        if gen != msg.gen || idx == NONE || idx == CLOSED {
            return;
        }
        let m = self.msgs.get_mut(idx).expect("slot names a live message");
        m.timeouts = 0;
        out.set_timer(resend_timer(idx), now + p.resend_timeout);
    }

    /// Message `idx`'s RESEND timer fired.
    pub fn on_resend_timer(&mut self, now: SimTime, p: &Params, idx: u32, st: &mut HomaStats, out: &mut Actions) {
        let Some(m) = self.msgs.get_mut(idx) else { return };
        if m.n_got >= m.limit || (0..m.limit).all(|i| m.has(i)) {
            return;
        }
        st.resend_timeouts += 1;
        if m.timeouts >= p.abort_after {
            let m = self.msgs.remove(idx).expect("live");
            self.slots[m.msg.slot as usize] = (m.msg.gen, CLOSED);
            self.grantable.retain(|&i| i != idx);
            st.aborted += 1;
            return;
        }
        m.timeouts += 1;
        let mut i = 0;
        while i < m.limit {
            if m.has(i) {
                i += 1;
                continue;
            }
            let first = i;
            while i < m.limit && !m.has(i) && i - first < RESEND_MAX {
                i += 1;
            }
            st.resends += 1;
            Self::send(p, m.src, &Control::Resend { msg: m.msg, first, count: i - first, size: m.size, level: m.level }, out);
        }
        out.set_timer(resend_timer(idx), now + p.resend_timeout);
    }
}
