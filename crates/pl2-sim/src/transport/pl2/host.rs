//! `Pl2Host`: the PL2 end host as a [`Protocol`]: application messages put into bursts
//! through [`Pl2Driver`], the plumbing around pl2-protocol's [`Sender`] and [`Receiver`].
//!
//! - A thread's message goes to the sender (context = thread), which cuts it into bursts
//!   of at most K packets and asks for RSVs, bursts, cancels and timers.
//! - A burst is handed over at its `at_ps` (a timer if in the future) as one hand-over
//!   unit: its frames back to back with `BURST_END` (and `NOTIFY_TX_DONE`) on the last,
//!   so the NIC's burst arbitration sends them contiguously. The sender is told at once
//!   (`on_burst_handed_to_nic`) and again when the last frame's last bit leaves the NIC
//!   (`on_burst_transmitted`, from [`Protocol::on_tx_done`]).
//! - The thread is released when the sender reports the message handed over (every
//!   packet given to the NIC once): the prototype's blocking send (§5).
//! - GRTs are read with the NIC backlog of [`HostView`] (reading (a) of equation (1)).
//! - The receiver delivers a message when all its bytes arrived, dropping duplicates
//!   (an unsolicited copy and its resend) that pl2-protocol's receiver recognises.
//! - Every processed GRT publishes probes, keyed by burst id: `pl2_msg` (message id),
//!   `pl2_rsv_grt_ps`, `pl2_wait_ps`, `pl2_chosen_slots`, `pl2_granted`,
//!   `pl2_unsolicited`, `pl2_resent` (0/1).
//!
//! Not modelled: the transmit-ring limit (a burst is at most K ≤ 64 frames, handed over
//! whole).

use super::config::Pl2Config;
use super::driver::{raw_burst_of, BurstSource, Pl2Driver};
use super::wire::{self, DataFields};
use crate::framing::L4Headers;
use crate::packet::Packet;
use crate::transport::{Actions, HostView, MsgInfo, Protocol, SendSpec};
use crate::units::SimTime;
use pl2_protocol::receiver::{Arrival, Receiver, ReceiverStats};
use pl2_protocol::sender::{AppMessage, BurstProbe, BurstSend, Sender, SenderStats};
use pl2_protocol::{DataTag, MsgId};
use std::collections::HashMap;

/// Counters of the driver itself (the protocol's are in its sender and receiver).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Pl2HostStats {
    /// Data frames of a message already delivered (or of an older generation) that the
    /// protocol's receiver did not flag (it remembers a bounded number of bursts).
    pub late_frames: u64,
}

/// The message side of a PL2 host: what its bursts carry.
struct Messages {
    me: u32,
    l4: L4Headers,
    prio: u8,
    max_payload: u64,
    /// Messages being sent, by run-wide id.
    sending: HashMap<u64, MsgInfo>,
    /// Bursts that went unsolicited and whose GRT has not been processed: their scheduled
    /// resend may come after the message was handed over.
    resend_msg: HashMap<u32, MsgInfo>,
}

impl BurstSource for Messages {
    type Info = MsgInfo;

    fn prepare(&mut self, b: &BurstSend) -> MsgInfo {
        match self.sending.get(&b.msg.0).or_else(|| self.resend_msg.get(&b.burst.0)) {
            Some(m) => *m,
            None => panic!("PL2 host {}: burst {:?} of an unknown message", self.me, b.burst),
        }
    }

    /// One copy of a burst: its frames as one hand-over unit.
    fn frames(&mut self, _now: u64, b: &BurstSend, m: &MsgInfo, out: &mut Actions) {
        for i in 0..b.packets {
            let index = b.first_packet + i;
            let offset = u64::from(index) * self.max_payload;
            let payload = m.size.saturating_sub(offset).min(self.max_payload);
            let tag = DataTag { src: self.me, dst: m.dst, burst: b.burst, index_in_burst: i, unsolicited: b.unsolicited, resent: b.resent };
            let d = DataFields {
                msg_slot: m.slot,
                msg_gen: m.gen,
                msg_size: m.size,
                packet_index: index,
                last_of_burst: i + 1 == b.packets,
            };
            let mut s = SendSpec { prio: self.prio, payload: payload as u32, l4: Some(self.l4), thread: m.thread, ..Default::default() };
            wire::encode_data(&mut s, &tag, &d);
            out.sends.push(s);
        }
        if b.unsolicited {
            self.resend_msg.insert(b.burst.0, *m);
        }
    }

    fn message_handed_over(&mut self, msg: MsgId, out: &mut Actions) {
        if let Some(m) = self.sending.remove(&msg.0) {
            out.released.push(m.thread);
        }
    }

    fn grt_processed(&mut self, p: &BurstProbe) {
        if p.unsolicited && p.granted_packets > 0 {
            // Its resend, if any, was emitted before this probe.
            self.resend_msg.remove(&p.burst.0);
        }
    }
}

/// PL2 on one host.
pub struct Pl2Host {
    priorities: bool,
    driver: Pl2Driver<MsgInfo>,
    msgs: Messages,
    /// Per message slot at the receiver: generation, bytes received, delivered.
    rx: Vec<(u16, u64, bool)>,
    stats: Pl2HostStats,
}

impl Pl2Host {
    /// `max_payload`: payload bytes per data frame; `slot_ps`: the timeslot.
    pub fn new(cfg: &Pl2Config, me: u32, max_payload: u64, slot_ps: u64) -> Result<Pl2Host, String> {
        let sender = Sender::new(cfg.sender(me, max_payload, slot_ps)).map_err(|e| e.to_string())?;
        let receiver = Receiver::new(cfg.receiver(me, slot_ps)).map_err(|e| e.to_string())?;
        Ok(Pl2Host {
            priorities: cfg.priorities,
            driver: Pl2Driver::new(me, sender, receiver, 1, 0),
            msgs: Messages {
                me,
                l4: cfg.l4(),
                prio: cfg.data_priority,
                max_payload,
                sending: HashMap::new(),
                resend_msg: HashMap::new(),
            },
            rx: Vec::new(),
            stats: Pl2HostStats::default(),
        })
    }

    pub fn sender_stats(&self) -> &SenderStats {
        self.driver.sender.stats()
    }
    pub fn receiver_stats(&self) -> &ReceiverStats {
        self.driver.receiver.stats()
    }
    pub fn stats(&self) -> &Pl2HostStats {
        &self.stats
    }

    fn receive_data(&mut self, now: u64, pkt: &Packet, tag: &DataTag, out: &mut Actions) {
        if self.driver.on_data(now, tag) == Arrival::Duplicate {
            return;
        }
        let d = wire::decode_data(pkt);
        let slot = d.msg_slot as usize;
        if slot >= self.rx.len() {
            self.rx.resize(slot + 1, (u16::MAX, 0, false));
        }
        let e = &mut self.rx[slot];
        if e.0 != d.msg_gen {
            *e = (d.msg_gen, 0, false);
        }
        if e.2 {
            self.stats.late_frames += 1;
            return;
        }
        e.1 += u64::from(pkt.payload);
        out.goodput_bytes += u64::from(pkt.payload);
        if e.1 >= d.msg_size {
            e.2 = true;
            out.delivered.push((d.msg_slot, d.msg_gen));
        }
    }
}

impl Protocol for Pl2Host {
    fn on_message(&mut self, now: SimTime, msg: &MsgInfo, out: &mut Actions) {
        self.msgs.sending.insert(msg.id, *msg);
        let m = AppMessage {
            id: MsgId(msg.id),
            dst: msg.dst,
            bytes: msg.size,
            ctx: u32::from(msg.thread),
            high_priority: self.priorities && msg.prio > 0,
        };
        self.driver.on_message(now.0, m, &mut self.msgs, out);
    }

    fn on_packet(&mut self, now: SimTime, pkt: &Packet, view: &HostView, out: &mut Actions) {
        if let Some(tag) = wire::decode_tag(pkt) {
            return self.receive_data(now.0, pkt, &tag, out);
        }
        // RSVs and CANCELs are consumed by the ToR; nothing else is PL2's.
        self.driver.on_control(now.0, pkt, view, &mut self.msgs, out);
    }

    fn on_timer(&mut self, now: SimTime, id: u32, out: &mut Actions) {
        self.driver.on_timer(now.0, id, &mut self.msgs, out);
    }

    fn on_tx_dequeue(&mut self, _now: SimTime, _thread: u16, _out: &mut Actions) {}

    fn on_tx_done(&mut self, now: SimTime, pkt: &Packet, out: &mut Actions) {
        self.driver.on_tx_done(now.0, raw_burst_of(pkt), &mut self.msgs, out);
    }
}
