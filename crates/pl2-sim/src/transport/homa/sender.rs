//! The Homa sender: one packet at a time at the link rate, SRPT among its outgoing
//! messages, unscheduled packets at their cut-off level, scheduled ones at the level their
//! grant names; RESENDs answered with the packets, or BUSY while shorter messages go first.
//!
//! - Pacing (`HomaTransport.cc:670-723`): after handing a data packet of `w` wire bytes
//!   to the NIC the sender waits `w`'s serialisation time at the host link rate before
//!   the next, so its NIC never queues data and each choice is made when the link frees.
//!   Control packets (grants of this host's receiver, BUSY) are handed over at once at the
//!   highest priority, so they go before the next data packet (`:578-634`).
//! - SRPT (`ini:49` `senderScheme=SRBF`, `HomaTransport.cc:795-801`): among messages with
//!   a packet ready, the fewest bytes not yet sent (ungranted ones included); ties to
//!   the earlier start, then the lower message id. Within a message, resends first, then
//!   the lowest new packet (`:1102-1121`).
//! - All unscheduled packets are ready when the message arrives
//!   (`prepareRequestAndUnsched`, `:931-1013`); unscheduled packet `i` goes at the level
//!   of the bytes left before it (graduated, `PriorityResolver.cc:57-65`). A GRANT makes
//!   the packets below its limit ready at its level (`:531-559,1027-1055`).
//! - The sending thread is released at once: Homa's send is asynchronous, so every
//!   message of the host competes in SRPT (the simulator's application hands messages
//!   over as they are generated).
//! - A message's state is freed when its last packet has been handed over once. A RESEND
//!   for a freed message (Homa paper §3.7) is answered from the RESEND alone (it carries
//!   the size and the level), so the sender keeps nothing per finished message.

use super::layout::Pkt;
use super::wire::{self, Control, Data, MsgRef};
use super::{HomaStats, Params};
use crate::slab::Slab;
use crate::transport::{Actions, MsgInfo};
use crate::units::SimTime;
use rustc_hash::FxHashMap;
use std::collections::VecDeque;

/// Timer id of the sender's pacing timer.
pub(super) const SEND_TIMER: u32 = 0;

struct TxMsg {
    info: MsgInfo,
    msg: MsgRef,
    n_pkts: u32,
    /// First packet never sent, and packets below `limit` may be sent.
    next: u32,
    limit: u32,
    /// Bytes never sent (the SRPT key).
    bytes_left: u64,
    /// Grants whose packets are not all sent: (limit, level).
    grants: VecDeque<(u32, u8)>,
    /// Level of the latest grant or RESEND, for resent scheduled packets.
    level: u8,
    resend: VecDeque<u32>,
    /// In `ready`.
    ready: bool,
}

impl TxMsg {
    fn has_work(&self) -> bool {
        !self.resend.is_empty() || self.next < self.limit
    }
    fn key(&self) -> (u64, SimTime, u64) {
        (self.bytes_left, self.info.start, self.info.id)
    }
}

/// A packet to resend for a message whose state is gone.
struct Orphan {
    dst: u32,
    msg: MsgRef,
    size: u64,
    index: u32,
    level: u8,
}

pub(super) struct Sender {
    msgs: Slab<TxMsg>,
    index: FxHashMap<(u32, u16), u32>,
    /// Messages with a packet ready.
    ready: Vec<u32>,
    orphans: VecDeque<Orphan>,
    /// The pacing timer is pending: the link is busy with the last packet.
    busy: bool,
}

impl Sender {
    pub fn new() -> Sender {
        Sender { msgs: Slab::default(), index: FxHashMap::default(), ready: Vec::new(), orphans: VecDeque::new(), busy: false }
    }

    /// Messages with packets never sent.
    pub fn live(&self) -> usize {
        self.index.len()
    }

    pub fn on_message(&mut self, now: SimTime, p: &Params, msg: &MsgInfo, st: &mut HomaStats, out: &mut Actions) {
        let l = &p.layout;
        let n_pkts = l.packets(msg.size);
        let sched = n_pkts > l.unsched_packets(msg.size);
        let m = TxMsg {
            info: *msg,
            msg: MsgRef::from(msg),
            n_pkts,
            next: 0,
            limit: l.unsched_packets(msg.size),
            bytes_left: msg.size,
            grants: if sched { VecDeque::with_capacity(8) } else { VecDeque::new() },
            level: 0,
            resend: VecDeque::new(),
            ready: false,
        };
        let idx = self.msgs.insert(m);
        self.index.insert((msg.slot, msg.gen), idx);
        st.messages_sent += 1;
        out.released.push(msg.thread);
        self.wake(idx);
        self.pump(now, p, st, out);
    }

    fn wake(&mut self, idx: u32) {
        let m = self.msgs.get_mut(idx).expect("live");
        if !m.ready && m.has_work() {
            m.ready = true;
            self.ready.push(idx);
        }
    }

    /// The ready message SRPT serves next, and its place in `ready`.
    fn pick(&self) -> Option<(usize, u32)> {
        self.ready
            .iter()
            .enumerate()
            .min_by_key(|&(_, &i)| self.msgs.get(i).expect("ready is live").key())
            .map(|(k, &i)| (k, i))
    }

    /// Sends the next data packet unless the link is still busy with the last one.
    fn pump(&mut self, now: SimTime, p: &Params, st: &mut HomaStats, out: &mut Actions) {
        if self.busy {
            return;
        }
        let l = &p.layout;
        let (spec, wire) = if let Some(o) = self.orphans.pop_front() {
            let pkt = l.pkt(o.size, o.index);
            let level = if pkt.scheduled { o.level } else { p.unsched_level(o.size - pkt.offset) };
            let d = Data { msg: o.msg, size: o.size, index: o.index, unscheduled: !pkt.scheduled, resent: true };
            st.retransmissions += 1;
            (Self::data(p, o.dst, &d, pkt, level), l.wire(pkt))
        } else {
            let Some((k, idx)) = self.pick() else { return };
            let m = self.msgs.get_mut(idx).expect("ready is live");
            let (i, resent) = match m.resend.pop_front() {
                Some(i) => (i, true),
                None => {
                    m.next += 1;
                    (m.next - 1, false)
                }
            };
            let pkt = l.pkt(m.info.size, i);
            let level = if !pkt.scheduled {
                p.unsched_level(m.info.size - pkt.offset)
            } else if resent {
                m.level
            } else {
                while m.grants.front().is_some_and(|&(lim, _)| lim <= i) {
                    m.grants.pop_front();
                }
                m.grants.front().map_or(m.level, |&(_, lv)| lv)
            };
            if resent {
                st.retransmissions += 1;
            } else {
                m.bytes_left -= pkt.len;
            }
            let d = Data { msg: m.msg, size: m.info.size, index: i, unscheduled: !pkt.scheduled, resent };
            let spec = Self::data(p, m.info.dst, &d, pkt, level);
            if !m.has_work() {
                m.ready = false;
                self.ready.swap_remove(k);
                if m.next == m.n_pkts {
                    let key = (m.info.slot, m.info.gen);
                    self.msgs.remove(idx);
                    self.index.remove(&key);
                }
            }
            (spec, l.wire(pkt))
        };
        if spec.proto & crate::packet::proto::UNSOLICITED != 0 {
            st.unscheduled_packets += 1;
        } else {
            st.scheduled_packets += 1;
        }
        st.data_packets_by_prio[spec.prio as usize] += 1;
        out.sends.push(spec);
        self.busy = true;
        out.set_timer(SEND_TIMER, now + p.rate.tx_time(wire));
    }

    fn data(p: &Params, dst: u32, d: &Data, pkt: Pkt, level: u8) -> crate::transport::SendSpec {
        let l4 = if pkt.scheduled { p.layout.l4_sched } else { p.layout.l4_unsched };
        wire::encode_data(dst, d, pkt.len, l4, level)
    }

    /// The pacing timer fired: the link is free.
    pub fn on_timer(&mut self, now: SimTime, p: &Params, st: &mut HomaStats, out: &mut Actions) {
        self.busy = false;
        self.pump(now, p, st, out);
    }

    /// A GRANT or RESEND from a receiver (`src`).
    pub fn on_control(&mut self, now: SimTime, p: &Params, src: u32, c: &Control, st: &mut HomaStats, out: &mut Actions) {
        match *c {
            Control::Grant { msg, limit, level } => {
                st.grants_received += 1;
                let Some(&idx) = self.index.get(&(msg.slot, msg.gen)) else {
                    st.stale_control += 1;
                    return;
                };
                let m = self.msgs.get_mut(idx).expect("indexed is live");
                let limit = limit.min(m.n_pkts);
                if limit > m.limit {
                    m.limit = limit;
                    m.grants.push_back((limit, level));
                }
                m.level = level;
                self.wake(idx);
            }
            Control::Resend { msg, first, count, size, level } => {
                st.resends_received += 1;
                match self.index.get(&(msg.slot, msg.gen)) {
                    Some(&idx) => {
                        let head = self.pick().map(|(_, i)| i);
                        let m = self.msgs.get_mut(idx).expect("indexed is live");
                        m.level = level;
                        // Packets the receiver expects but were never sent: their GRANT
                        // was lost, and the RESEND grants them again.
                        let end = first.saturating_add(count).min(m.n_pkts);
                        if end > m.limit {
                            m.limit = end;
                            m.grants.push_back((end, level));
                        }
                        for i in first..end.min(m.next) {
                            if !m.resend.contains(&i) {
                                m.resend.push_back(i);
                            }
                        }
                        // Homa paper §3.7: a sender busy with shorter messages says so,
                        // and the receiver keeps waiting.
                        if head.is_some_and(|h| h != idx) {
                            st.busy_sent += 1;
                            out.sends.push(wire::encode_control(src, &Control::Busy { msg }, p.layout.l4_sched));
                        }
                        self.wake(idx);
                    }
                    None => {
                        let n = p.layout.packets(size);
                        for index in first..first.saturating_add(count).min(n) {
                            self.orphans.push_back(Orphan { dst: src, msg, size, index, level });
                        }
                    }
                }
            }
            Control::Busy { .. } => return,
        }
        self.pump(now, p, st, out);
    }
}
