//! The RDS sender: per message, the unscheduled packets blindly at line rate, then what
//! the receiver grants; resends on NACKs and on its own timeout.
//!
//! - New data (unscheduled, then granted) goes through the thread's share of the
//!   transmit ring (`host.tx_ring_frames`) like raw Ethernet, refilled as frames leave;
//!   each batch handed over ends with `BURST_END`. Resends are handed over at once.
//! - The thread is released when every packet of its message has been handed to the NIC
//!   once (a blocking send, like the prototype's); resends happen afterwards from the
//!   message's state, on the same thread's NIC queue.
//! - Sender timeout: armed when the last unscheduled packet is handed over, unless the
//!   receiver was already heard from. Any GRANT, NACK or DONE for the message disarms it
//!   for good: the receiver has the message and its own gap detection and timeout take
//!   over. On expiry all unscheduled packets are resent (the sender cannot know which
//!   were lost) and the timer re-armed.
//! - The message's state is kept until DONE (a message whose DONE is lost after the
//!   receiver took over stays in the table; it costs memory only).

use super::wire::{self, Control, Data, MsgRef};
use super::{Ctx, RdsStats};
use crate::packet::flags;
use crate::slab::Slab;
use crate::transport::{Actions, MsgInfo};
use crate::units::SimTime;
use std::collections::HashMap;

struct SendMsg {
    info: MsgInfo,
    n_pkts: u32,
    unsched: u32,
    /// Packets below this index may be sent.
    limit: u32,
    /// First packet never handed over.
    next: u32,
    heard: bool,
    timer_armed: bool,
}

pub(super) struct Sender {
    msgs: Slab<SendMsg>,
    index: HashMap<(u32, u16), u32>,
    /// The message each thread is sending (blocked on).
    thread_msg: Vec<Option<u32>>,
    /// Frames each thread has in the NIC (every frame this host hands over, control
    /// frames included, counts against the thread that carries it).
    pub(super) in_ring: Vec<u32>,
    ring: u32,
}

fn timer_id(idx: u32) -> u32 {
    2 * idx
}

impl Sender {
    pub fn new(threads: u16, ring: u32) -> Sender {
        Sender {
            msgs: Slab::default(),
            index: HashMap::new(),
            thread_msg: vec![None; threads as usize],
            in_ring: vec![0; threads as usize],
            ring: ring.max(1),
        }
    }

    /// Messages whose DONE has not arrived.
    pub fn live(&self) -> usize {
        self.index.len()
    }

    pub fn on_message(&mut self, now: SimTime, ctx: &Ctx, msg: &MsgInfo, st: &mut RdsStats, out: &mut Actions) {
        let n_pkts = msg.size.div_ceil(ctx.max_payload).max(1) as u32;
        let unsched = ctx.cfg.unscheduled_packets(n_pkts, ctx.max_payload);
        let m = SendMsg { info: *msg, n_pkts, unsched, limit: unsched, next: 0, heard: false, timer_armed: false };
        let idx = self.msgs.insert(m);
        self.index.insert((msg.slot, msg.gen), idx);
        debug_assert!(self.thread_msg[msg.thread as usize].is_none(), "thread busy");
        self.thread_msg[msg.thread as usize] = Some(idx);
        st.messages_sent += 1;
        self.fill(now, ctx, msg.thread, out);
    }

    fn data(ctx: &Ctx, m: &SendMsg, i: u32, resent: bool) -> crate::transport::SendSpec {
        let off = u64::from(i) * ctx.max_payload;
        let payload = (m.info.size - off).min(ctx.max_payload);
        let d = Data {
            msg: MsgRef::from(&m.info),
            size: m.info.size,
            index: i,
            unscheduled: i < m.unsched,
            resent,
        };
        wire::encode_data(m.info.dst, &d, payload as u32, ctx.l4, ctx.cfg.data_priority, m.info.thread)
    }

    /// Hands new packets of the thread's message to the NIC while its ring has room.
    fn fill(&mut self, now: SimTime, ctx: &Ctx, thread: u16, out: &mut Actions) {
        let t = thread as usize;
        let Some(idx) = self.thread_msg[t] else { return };
        let m = self.msgs.get_mut(idx).expect("thread's message is live");
        let mut pushed = false;
        while self.in_ring[t] < self.ring && m.next < m.limit {
            out.sends.push(Self::data(ctx, m, m.next, false));
            m.next += 1;
            self.in_ring[t] += 1;
            pushed = true;
        }
        if !pushed {
            return;
        }
        out.sends.last_mut().expect("pushed").flags |= flags::BURST_END;
        if m.next >= m.unsched && !m.heard && !m.timer_armed {
            m.timer_armed = true;
            out.set_timer(timer_id(idx), now + ctx.cfg.sender_timeout);
        }
        if m.next >= m.n_pkts {
            self.thread_msg[t] = None;
            out.released.push(thread);
        }
    }

    fn resend(&mut self, ctx: &Ctx, idx: u32, i: u32, st: &mut RdsStats, out: &mut Actions) {
        let m = self.msgs.get(idx).expect("live");
        let mut s = Self::data(ctx, m, i, true);
        s.flags |= flags::BURST_END;
        out.sends.push(s);
        self.in_ring[m.info.thread as usize] += 1;
        st.retransmissions += 1;
        out.probes.push((m.info.id as u32, "rds_retx", f64::from(i)));
    }

    fn heard(&mut self, idx: u32, out: &mut Actions) {
        let m = self.msgs.get_mut(idx).expect("live");
        m.heard = true;
        if m.timer_armed {
            m.timer_armed = false;
            out.cancel_timer(timer_id(idx));
        }
    }

    pub fn on_control(&mut self, now: SimTime, ctx: &Ctx, c: &Control, st: &mut RdsStats, out: &mut Actions) {
        let msg = match c {
            Control::Grant { msg, .. } | Control::Nack { msg, .. } | Control::Done { msg } => *msg,
        };
        let Some(&idx) = self.index.get(&(msg.slot, msg.gen)) else {
            st.stale_control += 1;
            return;
        };
        match *c {
            Control::Grant { limit, .. } => {
                st.grants_received += 1;
                self.heard(idx, out);
                let m = self.msgs.get_mut(idx).expect("live");
                m.limit = m.limit.max(limit.min(m.n_pkts));
            }
            Control::Nack { first, count, .. } => {
                st.nacks_received += 1;
                self.heard(idx, out);
                let m = self.msgs.get_mut(idx).expect("live");
                let end = first.saturating_add(count).min(m.n_pkts);
                // Packets never sent: the NACK doubles as their grant (the GRANT may
                // have been lost).
                m.limit = m.limit.max(end);
                let sent_end = end.min(m.next);
                for i in first..sent_end {
                    self.resend(ctx, idx, i, st, out);
                }
            }
            Control::Done { .. } => {
                let m = self.msgs.remove(idx).expect("live");
                if m.timer_armed {
                    out.cancel_timer(timer_id(idx));
                }
                self.index.remove(&(msg.slot, msg.gen));
                let t = m.info.thread as usize;
                if self.thread_msg[t] == Some(idx) {
                    // Cannot happen (DONE needs every packet, so all were handed over);
                    // kept so a thread is never blocked forever.
                    self.thread_msg[t] = None;
                    out.released.push(m.info.thread);
                }
                return;
            }
        }
        let thread = self.msgs.get(idx).expect("live").info.thread;
        if self.thread_msg[thread as usize] == Some(idx) {
            self.fill(now, ctx, thread, out);
        }
    }

    /// Timer `id` (even) fired.
    pub fn on_timer(&mut self, now: SimTime, ctx: &Ctx, id: u32, st: &mut RdsStats, out: &mut Actions) {
        let idx = id / 2;
        let Some(m) = self.msgs.get_mut(idx) else { return };
        if m.heard || !m.timer_armed {
            return;
        }
        st.sender_timeouts += 1;
        let n = m.unsched.min(m.next);
        out.set_timer(id, now + ctx.cfg.sender_timeout);
        for i in 0..n {
            self.resend(ctx, idx, i, st, out);
        }
    }

    pub fn on_tx_dequeue(&mut self, now: SimTime, ctx: &Ctx, thread: u16, out: &mut Actions) {
        let t = thread as usize;
        self.in_ring[t] = self.in_ring[t].saturating_sub(1);
        self.fill(now, ctx, thread, out);
    }
}
