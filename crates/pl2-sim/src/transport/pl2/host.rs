//! `Pl2Host`: the PL2 end host as a [`Protocol`], a thin driver around pl2-protocol's
//! [`Sender`] and [`Receiver`].
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
use super::wire::{self, Control, DataFields};
use crate::framing::L4Headers;
use crate::packet::{flags, Packet};
use crate::transport::{Actions, HostView, MsgInfo, Protocol, SendSpec};
use crate::units::SimTime;
use pl2_protocol::receiver::{Arrival, Receiver, ReceiverAction, ReceiverStats};
use pl2_protocol::sender::{AppMessage, BurstSend, Sender, SenderAction, SenderStats};
use pl2_protocol::{BurstId, DataTag, MsgId, TimerToken};
use std::collections::HashMap;

/// What one of our timer ids stands for.
#[derive(Copy, Clone, Debug)]
enum Pending {
    Sender(TimerToken),
    Receiver(TimerToken),
    Handover(BurstSend, MsgInfo),
}

/// Counters of the driver itself (the protocol's are in its sender and receiver).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Pl2HostStats {
    /// Data frames of a message already delivered (or of an older generation) that the
    /// protocol's receiver did not flag (it remembers a bounded number of bursts).
    pub late_frames: u64,
}

/// PL2 on one host.
pub struct Pl2Host {
    me: u32,
    l4: L4Headers,
    prio: u8,
    priorities: bool,
    max_payload: u64,
    sender: Sender,
    receiver: Receiver,
    /// Messages being sent, by run-wide id.
    sending: HashMap<u64, MsgInfo>,
    /// Bursts that went unsolicited and whose GRT has not been processed: their scheduled
    /// resend may come after the message was handed over.
    resend_msg: HashMap<u32, MsgInfo>,
    /// Per message slot at the receiver: generation, bytes received, delivered.
    rx: Vec<(u16, u64, bool)>,
    timers: Vec<Option<Pending>>,
    free_timers: Vec<u32>,
    sacts: Vec<SenderAction>,
    racts: Vec<ReceiverAction>,
    stats: Pl2HostStats,
}

impl Pl2Host {
    /// `max_payload`: payload bytes per data frame; `slot_ps`: the timeslot.
    pub fn new(cfg: &Pl2Config, me: u32, max_payload: u64, slot_ps: u64) -> Result<Pl2Host, String> {
        let l4 = cfg.l4();
        Ok(Pl2Host {
            me,
            l4,
            prio: cfg.data_priority,
            priorities: cfg.priorities,
            max_payload,
            sender: Sender::new(cfg.sender(me, max_payload, slot_ps)).map_err(|e| e.to_string())?,
            receiver: Receiver::new(cfg.receiver(me, slot_ps)).map_err(|e| e.to_string())?,
            sending: HashMap::new(),
            resend_msg: HashMap::new(),
            rx: Vec::new(),
            timers: Vec::new(),
            free_timers: Vec::new(),
            sacts: Vec::new(),
            racts: Vec::new(),
            stats: Pl2HostStats::default(),
        })
    }

    pub fn sender_stats(&self) -> &SenderStats {
        self.sender.stats()
    }
    pub fn receiver_stats(&self) -> &ReceiverStats {
        self.receiver.stats()
    }
    pub fn stats(&self) -> &Pl2HostStats {
        &self.stats
    }

    fn timer(&mut self, what: Pending, at_ps: u64, out: &mut Actions) {
        let id = match self.free_timers.pop() {
            Some(id) => {
                self.timers[id as usize] = Some(what);
                id
            }
            None => {
                self.timers.push(Some(what));
                self.timers.len() as u32 - 1
            }
        };
        out.set_timer(id, SimTime(at_ps));
    }

    /// Carries out the sender's actions, including those its callbacks add.
    fn drain_sender(&mut self, now: u64, out: &mut Actions) {
        let mut acts = std::mem::take(&mut self.sacts);
        let mut i = 0;
        while i < acts.len() {
            let a = acts[i];
            i += 1;
            match a {
                SenderAction::SendRsv(r) => out.sends.push(wire::encode_rsv(&r, 0)),
                SenderAction::SendCancel(c) => out.sends.push(wire::encode_cancel(&c, self.me)),
                SenderAction::SetTimer { token, at_ps } => self.timer(Pending::Sender(token), at_ps, out),
                SenderAction::SendBurst(b) => {
                    let info = match self.sending.get(&b.msg.0).or_else(|| self.resend_msg.get(&b.burst.0)) {
                        Some(m) => *m,
                        None => panic!("PL2 host {}: burst {:?} of an unknown message", self.me, b.burst),
                    };
                    if b.at_ps <= now {
                        self.hand_over(now, &b, &info, out, &mut acts);
                    } else {
                        self.timer(Pending::Handover(b, info), b.at_ps, out);
                    }
                }
                SenderAction::Probe(p) => {
                    let f = p.burst.0;
                    out.probes.push((f, "pl2_msg", p.msg.0 as f64));
                    out.probes.push((f, "pl2_rsv_grt_ps", p.grt_time_ps.saturating_sub(p.rsv_time_ps) as f64));
                    out.probes.push((f, "pl2_wait_ps", p.wait_ps as f64));
                    out.probes.push((f, "pl2_chosen_slots", p.chosen_slots as f64));
                    out.probes.push((f, "pl2_granted", f64::from(p.granted_packets)));
                    out.probes.push((f, "pl2_unsolicited", f64::from(u8::from(p.unsolicited))));
                    out.probes.push((f, "pl2_resent", f64::from(u8::from(p.resent))));
                    if p.unsolicited && p.granted_packets > 0 {
                        // Its resend, if any, was emitted before this probe.
                        self.resend_msg.remove(&p.burst.0);
                    }
                }
                SenderAction::MessageHandedOver { msg } => {
                    if let Some(m) = self.sending.remove(&msg.0) {
                        out.released.push(m.thread);
                    }
                }
            }
        }
        acts.clear();
        self.sacts = acts;
    }

    /// Hands one copy of a burst to the NIC: its frames as one hand-over unit.
    fn hand_over(&mut self, now: u64, b: &BurstSend, m: &MsgInfo, out: &mut Actions, acts: &mut Vec<SenderAction>) {
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
        self.sender.on_burst_handed_to_nic(now, b.burst, acts);
    }

    fn drain_receiver(&mut self, out: &mut Actions) {
        let mut racts = std::mem::take(&mut self.racts);
        for a in racts.drain(..) {
            match a {
                ReceiverAction::SendCancel(c) => out.sends.push(wire::encode_cancel(&c, self.me)),
                ReceiverAction::SetTimer { token, at_ps } => self.timer(Pending::Receiver(token), at_ps, out),
            }
        }
        self.racts = racts;
    }

    fn receive_data(&mut self, now: u64, pkt: &Packet, tag: &DataTag, out: &mut Actions) {
        if self.receiver.on_data(now, tag) == Arrival::Duplicate {
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
        self.sending.insert(msg.id, *msg);
        let m = AppMessage {
            id: MsgId(msg.id),
            dst: msg.dst,
            bytes: msg.size,
            ctx: u32::from(msg.thread),
            high_priority: self.priorities && msg.prio > 0,
        };
        self.sender.on_app_message(now.0, m, &mut self.sacts).expect("a new message with a fresh id");
        self.drain_sender(now.0, out);
    }

    fn on_packet(&mut self, now: SimTime, pkt: &Packet, view: &HostView, out: &mut Actions) {
        if let Some(tag) = wire::decode_tag(pkt) {
            return self.receive_data(now.0, pkt, &tag, out);
        }
        match wire::decode_control(pkt) {
            Some(Control::Grt(g, false)) => {
                self.sender.on_grt(now.0, &g, view.nic_backlog.0, &mut self.sacts);
                self.drain_sender(now.0, out);
            }
            Some(Control::Grt(g, true)) => {
                self.receiver.on_grt_copy(now.0, &g, &mut self.racts);
                self.drain_receiver(out);
            }
            // RSVs and CANCELs are consumed by the ToR; nothing else is PL2's.
            _ => {}
        }
    }

    fn on_timer(&mut self, now: SimTime, id: u32, out: &mut Actions) {
        let Some(what) = self.timers.get_mut(id as usize).and_then(Option::take) else { return };
        self.free_timers.push(id);
        match what {
            Pending::Sender(token) => {
                self.sender.on_timer(now.0, token, &mut self.sacts);
                self.drain_sender(now.0, out);
            }
            Pending::Receiver(token) => {
                self.receiver.on_timer(now.0, token, &mut self.racts);
                self.drain_receiver(out);
            }
            Pending::Handover(b, m) => {
                let mut acts = std::mem::take(&mut self.sacts);
                self.hand_over(now.0, &b, &m, out, &mut acts);
                self.sacts = acts;
                self.drain_sender(now.0, out);
            }
        }
    }

    fn on_tx_dequeue(&mut self, _now: SimTime, _thread: u16, _out: &mut Actions) {}

    fn on_tx_done(&mut self, now: SimTime, pkt: &Packet, out: &mut Actions) {
        if pkt.has(flags::SCHEDULED) {
            self.sender.on_burst_transmitted(now.0, BurstId(pkt.flow), &mut self.sacts);
            self.drain_sender(now.0, out);
        }
    }
}
