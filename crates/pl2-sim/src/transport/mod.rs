//! Transports as sans-IO state machines. A transport instance runs on one host; the
//! engine hands it application messages, packets, timer expiries and NIC transmit
//! notifications, each with the current time, and it writes what it wants done into an
//! [`Actions`] buffer the engine owns and reuses (no allocation per packet).
//!
//! Protocols form a closed enum ([`HostTransport`]) over one trait ([`Protocol`]), so
//! dispatch is static. Raw Ethernet ([`raw`]) is the template for every protocol.

pub mod pl2;
pub mod raw;
pub mod rds;
pub mod tcp;

use crate::framing::L4Headers;
use crate::packet::{Packet, PktKind};
use crate::units::SimTime;

/// An application message as a transport sees it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct MsgInfo {
    /// Slot in the engine's message table and its generation: together they name the
    /// message while it is live (slots are recycled).
    pub slot: u32,
    pub gen: u16,
    /// Run-wide message id (for records and flow hashing).
    pub id: u64,
    pub src: u32,
    pub dst: u32,
    /// Payload bytes.
    pub size: u64,
    pub thread: u16,
    pub prio: u8,
    /// When the application handed it to its sending thread.
    pub start: SimTime,
}

/// A frame a transport asks the host to send. The engine fills in timestamps, wire
/// size and routing.
#[derive(Copy, Clone, Debug, Default)]
pub struct SendSpec {
    pub dst: u32,
    pub kind: PktKind,
    pub prio: u8,
    pub payload: u32,
    pub l4: Option<L4Headers>,
    pub msg: u32,
    pub msg_gen: u16,
    pub flow: u32,
    pub seq: u32,
    pub thread: u16,
    pub flags: u8,
    pub aux: u64,
}

impl SendSpec {
    /// The frame this spec describes, sent by node `src` at `now` with the network's
    /// framing.
    pub fn to_packet(&self, src: u32, now: SimTime, framing: crate::framing::Framing) -> Packet {
        let wire = framing.wire_bytes(self.l4.unwrap_or(L4Headers::None), self.payload as u64);
        Packet {
            created: now,
            enqueued: now,
            aux: self.aux,
            src,
            dst: self.dst,
            msg: self.msg,
            flow: self.flow,
            seq: self.seq,
            // Transports segment at the MTU, which the network's validation keeps at or
            // below 65,000 B: a larger frame is a transport's bug, not bad input.
            payload: u16::try_from(self.payload).expect("a frame's payload is at most the MTU"),
            wire: u16::try_from(wire).expect("a frame is at most the MTU plus its framing"),
            next_port: 0,
            queue_next: crate::packet::NO_PKT,
            msg_gen: self.msg_gen,
            thread: self.thread,
            kind: self.kind,
            prio: self.prio,
            flags: self.flags,
            transport: 0,
        }
    }
}

/// What a transport wants done, collected during one call.
#[derive(Default)]
pub struct Actions {
    /// Frames to hand to the host's send path, in order.
    pub sends: Vec<SendSpec>,
    /// Timers to arm (`Some(at)`) or cancel (`None`), by the transport's own timer id.
    pub timers: Vec<(u32, Option<SimTime>)>,
    /// Messages (slot, generation) fully delivered to the receiving application.
    pub delivered: Vec<(u32, u16)>,
    /// Sending threads the transport releases (their send call returns).
    pub released: Vec<u16>,
    /// Application payload newly delivered in order to this host's applications
    /// (duplicates excluded): the goodput series.
    pub goodput_bytes: u64,
    /// Values published for the probe table: (flow, name, value).
    pub probes: Vec<(u32, &'static str, f64)>,
}

impl Actions {
    pub fn clear(&mut self) {
        self.sends.clear();
        self.timers.clear();
        self.delivered.clear();
        self.released.clear();
        self.goodput_bytes = 0;
        self.probes.clear();
    }
    pub fn set_timer(&mut self, id: u32, at: SimTime) {
        self.timers.push((id, Some(at)));
    }
    pub fn cancel_timer(&mut self, id: u32) {
        self.timers.push((id, None));
    }
}

/// Read-only facts about the host a transport runs on, filled by the engine at each
/// call that takes one.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct HostView {
    /// Time the NIC needs to send what is queued at the host's egress port now (bytes
    /// queued, including the frame being serialised, at the port's rate). PL2's
    /// `pendingDataDelay`, reading (a) of equation (1).
    pub nic_backlog: crate::units::Duration,
}

/// The calls every protocol answers. `now` is the simulated time of the call.
pub trait Protocol {
    /// A sending thread starts sending `msg` (the thread is blocked until released).
    fn on_message(&mut self, now: SimTime, msg: &MsgInfo, out: &mut Actions);
    /// A frame addressed to this host reached the transport (after the receive path).
    fn on_packet(&mut self, now: SimTime, pkt: &Packet, view: &HostView, out: &mut Actions);
    /// Timer `id` expired.
    fn on_timer(&mut self, now: SimTime, id: u32, out: &mut Actions);
    /// The NIC started transmitting a frame handed over by `thread`.
    fn on_tx_dequeue(&mut self, now: SimTime, thread: u16, out: &mut Actions);
    /// The last bit of a frame this host sent with [`crate::packet::flags::NOTIFY_TX_DONE`]
    /// left the NIC. Only frames carrying that flag are reported.
    fn on_tx_done(&mut self, _now: SimTime, _pkt: &Packet, _out: &mut Actions) {}
    /// For a transport that never sends a frame twice: how many data frames a message of
    /// `size` bytes takes. The simulator then knows that a message with a dropped frame is
    /// over once its other frames are delivered or dropped: it reports it unfinished at
    /// that moment and frees its state, rather than holding it to the end of the run.
    /// `None` (the default): frames may be resent, so a drop settles nothing.
    fn frames_if_never_resent(&self, _size: u64) -> Option<u32> {
        None
    }
}

/// All protocols pl2 implements: one variant each, dispatched statically.
pub enum HostTransport {
    Raw(raw::RawHost),
    Pl2(Box<pl2::Pl2Host>),
    Rds(Box<rds::RdsHost>),
    Tcp(Box<tcp::TcpHost>),
}

impl Protocol for HostTransport {
    #[inline]
    fn on_message(&mut self, now: SimTime, msg: &MsgInfo, out: &mut Actions) {
        match self {
            HostTransport::Raw(t) => t.on_message(now, msg, out),
            HostTransport::Pl2(t) => t.on_message(now, msg, out),
            HostTransport::Rds(t) => t.on_message(now, msg, out),
            HostTransport::Tcp(t) => t.on_message(now, msg, out),
        }
    }
    #[inline]
    fn on_packet(&mut self, now: SimTime, pkt: &Packet, view: &HostView, out: &mut Actions) {
        match self {
            HostTransport::Raw(t) => t.on_packet(now, pkt, view, out),
            HostTransport::Pl2(t) => t.on_packet(now, pkt, view, out),
            HostTransport::Rds(t) => t.on_packet(now, pkt, view, out),
            HostTransport::Tcp(t) => t.on_packet(now, pkt, view, out),
        }
    }
    #[inline]
    fn on_tx_done(&mut self, now: SimTime, pkt: &Packet, out: &mut Actions) {
        match self {
            HostTransport::Raw(t) => t.on_tx_done(now, pkt, out),
            HostTransport::Pl2(t) => t.on_tx_done(now, pkt, out),
            HostTransport::Rds(t) => t.on_tx_done(now, pkt, out),
            HostTransport::Tcp(t) => t.on_tx_done(now, pkt, out),
        }
    }
    #[inline]
    fn on_timer(&mut self, now: SimTime, id: u32, out: &mut Actions) {
        match self {
            HostTransport::Raw(t) => t.on_timer(now, id, out),
            HostTransport::Pl2(t) => t.on_timer(now, id, out),
            HostTransport::Rds(t) => t.on_timer(now, id, out),
            HostTransport::Tcp(t) => t.on_timer(now, id, out),
        }
    }
    #[inline]
    fn on_tx_dequeue(&mut self, now: SimTime, thread: u16, out: &mut Actions) {
        match self {
            HostTransport::Raw(t) => t.on_tx_dequeue(now, thread, out),
            HostTransport::Pl2(t) => t.on_tx_dequeue(now, thread, out),
            HostTransport::Rds(t) => t.on_tx_dequeue(now, thread, out),
            HostTransport::Tcp(t) => t.on_tx_dequeue(now, thread, out),
        }
    }
    fn frames_if_never_resent(&self, size: u64) -> Option<u32> {
        match self {
            HostTransport::Raw(t) => t.frames_if_never_resent(size),
            HostTransport::Pl2(t) => t.frames_if_never_resent(size),
            HostTransport::Rds(t) => t.frames_if_never_resent(size),
            HostTransport::Tcp(t) => t.frames_if_never_resent(size),
        }
    }
}
