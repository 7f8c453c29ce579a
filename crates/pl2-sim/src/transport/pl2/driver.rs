//! `Pl2Driver`: the host half of PL2 that does not depend on what the bursts carry. It
//! owns pl2-protocol's [`Sender`] and [`Receiver`], carries out their actions (RSVs,
//! CANCELs, timers, bursts handed over at their `at_ps`, §4.2.1 equation (1)), and asks a
//! [`BurstSource`] for the frames of each burst. Two transports use it:
//!
//! - [`super::Pl2Host`]: application messages cut into bursts (PL2 over raw Ethernet/UDP,
//!   §5 "RDMA raw Ethernet with PL2").
//! - [`crate::transport::tcp::pl2`]: TCP segments grouped into bursts ("TCP VMA PL2",
//!   §4.5, §5, §6.3.1).
//!
//! Timer ids: the driver's own timers are numbered in a slab and given to the engine as
//! `slab · stride + offset`, so a transport with timers of its own can interleave both
//! (PL2 alone: stride 1, offset 0).

use super::wire::{self, Control};
use crate::packet::{proto, Packet};
use crate::slab::Slab;
use crate::transport::{Actions, HostView};
use crate::units::SimTime;
use pl2_protocol::receiver::{Arrival, Receiver, ReceiverAction};
use pl2_protocol::sender::{AppMessage, BurstProbe, BurstSend, Sender, SenderAction};
use pl2_protocol::{BurstId, DataTag, MsgId, TimerToken};

/// What a transport puts into PL2's bursts.
pub trait BurstSource {
    /// What the source needs to build a burst's frames later, captured when the sender
    /// asks for the burst (the message may be forgotten before a delayed hand-over).
    type Info: Copy;
    /// The sender asked for burst `b` (now or at `b.at_ps`).
    fn prepare(&mut self, b: &BurstSend) -> Self::Info;
    /// Pushes the frames of one copy of burst `b` into `out.sends`: one hand-over unit,
    /// its last frame flagged `BURST_END | NOTIFY_TX_DONE`, every frame `SCHEDULED`.
    fn frames(&mut self, now: u64, b: &BurstSend, info: &Self::Info, out: &mut Actions);
    /// Every packet of message `msg` has been handed to the NIC at least once.
    fn message_handed_over(&mut self, msg: MsgId, out: &mut Actions);
    /// A GRT was processed for a burst (published as probes by the driver first).
    fn grt_processed(&mut self, _p: &BurstProbe) {}
}

/// What one of the driver's timers stands for.
#[derive(Copy, Clone, Debug)]
enum Pending<I> {
    Sender(TimerToken),
    Receiver(TimerToken),
    Handover(BurstSend, I),
}

/// PL2's sender and receiver on one host, and the plumbing between them and the engine.
pub struct Pl2Driver<I> {
    me: u32,
    pub(crate) sender: Sender,
    pub(crate) receiver: Receiver,
    timers: Slab<Pending<I>>,
    stride: u32,
    offset: u32,
    sacts: Vec<SenderAction>,
    racts: Vec<ReceiverAction>,
}

impl<I: Copy> Pl2Driver<I> {
    pub fn new(me: u32, sender: Sender, receiver: Receiver, stride: u32, offset: u32) -> Pl2Driver<I> {
        assert!(offset < stride.max(1));
        Pl2Driver {
            me,
            sender,
            receiver,
            timers: Slab::default(),
            stride: stride.max(1),
            offset,
            sacts: Vec::new(),
            racts: Vec::new(),
        }
    }

    /// Whether engine timer `id` is one of the driver's.
    pub fn owns_timer(&self, id: u32) -> bool {
        id % self.stride == self.offset
    }

    fn timer(&mut self, what: Pending<I>, at_ps: u64, out: &mut Actions) {
        let id = self.timers.insert(what);
        out.set_timer(id * self.stride + self.offset, SimTime(at_ps));
    }

    /// Carries out the sender's actions, including those its callbacks add.
    fn drain_sender<S: BurstSource<Info = I>>(&mut self, now: u64, src: &mut S, out: &mut Actions) {
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
                    let info = src.prepare(&b);
                    if b.at_ps <= now {
                        self.hand_over(now, &b, &info, src, out, &mut acts);
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
                    src.grt_processed(&p);
                }
                SenderAction::MessageHandedOver { msg } => src.message_handed_over(msg, out),
            }
        }
        acts.clear();
        self.sacts = acts;
    }

    /// Hands one copy of a burst to the NIC.
    fn hand_over<S: BurstSource<Info = I>>(
        &mut self,
        now: u64,
        b: &BurstSend,
        info: &I,
        src: &mut S,
        out: &mut Actions,
        acts: &mut Vec<SenderAction>,
    ) {
        src.frames(now, b, info, out);
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

    /// A message (a run of packets for one destination and context) to send.
    pub fn on_message<S: BurstSource<Info = I>>(&mut self, now: u64, m: AppMessage, src: &mut S, out: &mut Actions) {
        self.sender.on_app_message(now, m, &mut self.sacts).expect("a new message with a fresh id");
        self.drain_sender(now, src, out);
    }

    /// A scheduled data frame arrived: whether it is new or a duplicate copy (an
    /// unsolicited burst and its scheduled resend).
    pub fn on_data(&mut self, now: u64, tag: &DataTag) -> Arrival {
        self.receiver.on_data(now, tag)
    }

    /// A frame that is not scheduled data: GRTs (and their copies) are PL2's; RSVs and
    /// CANCELs are consumed by the ToR. Returns whether the frame was PL2 control.
    pub fn on_control<S: BurstSource<Info = I>>(&mut self, now: u64, pkt: &Packet, view: &HostView, src: &mut S, out: &mut Actions) -> bool {
        match wire::decode_control(pkt) {
            Some(Control::Grt(g, false)) => {
                self.sender.on_grt(now, &g, view.nic_backlog().0, &mut self.sacts);
                self.drain_sender(now, src, out);
                true
            }
            Some(Control::Grt(g, true)) => {
                self.receiver.on_grt_copy(now, &g, &mut self.racts);
                self.drain_receiver(out);
                true
            }
            Some(_) => true,
            None => false,
        }
    }

    /// One of the driver's timers (see [`Pl2Driver::owns_timer`]) expired.
    pub fn on_timer<S: BurstSource<Info = I>>(&mut self, now: u64, id: u32, src: &mut S, out: &mut Actions) {
        let slab = (id - self.offset) / self.stride;
        let Some(what) = self.timers.remove(slab) else { return };
        match what {
            Pending::Sender(token) => {
                self.sender.on_timer(now, token, &mut self.sacts);
                self.drain_sender(now, src, out);
            }
            Pending::Receiver(token) => {
                self.receiver.on_timer(now, token, &mut self.racts);
                self.drain_receiver(out);
            }
            Pending::Handover(b, info) => {
                let mut acts = std::mem::take(&mut self.sacts);
                self.hand_over(now, &b, &info, src, out, &mut acts);
                self.sacts = acts;
                self.drain_sender(now, src, out);
            }
        }
    }

    /// The last bit of a frame flagged `NOTIFY_TX_DONE` left the NIC: a scheduled
    /// burst's last frame, so the burst is transmitted (blocking mode's next RSV).
    pub fn on_tx_done<S: BurstSource<Info = I>>(&mut self, now: u64, burst: Option<BurstId>, src: &mut S, out: &mut Actions) {
        if let Some(b) = burst {
            self.sender.on_burst_transmitted(now, b, &mut self.sacts);
            self.drain_sender(now, src, out);
        }
    }
}

/// The burst a frame reported by `on_tx_done` ends, under the raw layout (`flow` = burst).
pub fn raw_burst_of(pkt: &Packet) -> Option<BurstId> {
    pkt.has_proto(proto::SCHEDULED).then_some(BurstId(pkt.flow))
}
