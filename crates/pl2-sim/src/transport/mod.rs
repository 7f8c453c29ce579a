//! Transports as sans-IO state machines. A transport instance runs on one host; the
//! engine hands it application messages, packets, timer expiries and NIC transmit
//! notifications, each with the current time, and it writes what it wants done into an
//! [`Actions`] buffer the engine owns and reuses (no allocation per packet).
//!
//! Each protocol is a folder here that declares itself through [`Transport`] (its
//! settings, host state, counters, data headers and optional switch program) and one line
//! in the list below, from which the macro in `list.rs` generates the closed enums
//! ([`TransportConfig`], [`HostTransport`], [`ModuleStats`]) and their static dispatch.
//! Raw Ethernet ([`raw`]) is the template for every protocol; `docs/add-a-protocol.md`
//! walks through adding one.

pub mod homa;
pub mod ndp;
pub mod phost;
pub mod pl2;
pub mod polo;
pub mod raw;
pub mod rds;
pub mod roce;
pub mod tcp;

mod list;
pub mod counters;
mod module;

use crate::packet::Packet;
use crate::units::SimTime;
use list::transports;

pub use crate::packet::{SendSpec, MAX_TRANSPORTS};
pub use module::{field_of, HostSite, Installed, LinkSite, NetSite, StatsSection, Transport};

transports! {
    /// Raw Ethernet / UDP, no congestion control.
    Raw(raw::Raw),
    /// PL2 rack-scale scheduling (single rack; the ToR runs the scheduler).
    Pl2(pl2::Pl2),
    /// RDS, the PL2 paper's receiver-driven baseline (modelled after Homa).
    Rds(rds::Rds),
    /// TCP (NewReno, CUBIC, DCTCP or no congestion control; SACK, delayed ACKs).
    Tcp(tcp::Tcp),
    /// Polo: receiver-driven congestion control over priority queues and ECN marking.
    Polo(polo::Polo),
    /// NDP: receiver-pulled transport over trimming switches (htsim's NDP).
    Ndp(ndp::Ndp),
    /// Homa: receiver-driven, SRPT, with network priorities (the Homa simulator's semantics).
    Homa(homa::Homa),
    /// pHost: receiver-driven tokens, free packets, SRPT, packet spraying (YAPS semantics).
    Phost(phost::Phost),
    /// RoCE-like RDMA writes over a rate-paced sender with go-back-N and DCQCN.
    Roce(roce::Roce),
}

impl Default for TransportConfig {
    fn default() -> Self {
        TransportConfig::Raw(raw::RawConfig::default())
    }
}

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

/// Names a message at both ends, as a message-oriented protocol carries it in its
/// headers: the engine's slot and generation, and the low 32 bits of the message id.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct MsgRef {
    pub slot: u32,
    pub gen: u16,
    /// Low 32 bits of the run-wide message id.
    pub flow: u32,
}

impl From<&MsgInfo> for MsgRef {
    fn from(m: &MsgInfo) -> MsgRef {
        MsgRef { slot: m.slot, gen: m.gen, flow: m.id as u32 }
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
    /// Messages (slot, generation) whose sender state is gone (the last acknowledgement
    /// arrived): the host layer below closes their flows.
    pub finished: Vec<(u32, u16)>,
    /// A flow may have become sendable (work, window or a pause changed): the host layer
    /// below picks frames again ([`Protocol::sendable`]).
    pub wake: bool,
}

impl Actions {
    /// Whether nothing here is for the engine to carry out (`finished` and `wake` are
    /// for the host layer, which has seen them by then).
    #[inline]
    pub fn is_idle(&self) -> bool {
        self.sends.is_empty()
            && self.timers.is_empty()
            && self.delivered.is_empty()
            && self.released.is_empty()
            && self.goodput_bytes == 0
            && self.probes.is_empty()
    }

    pub fn clear(&mut self) {
        self.sends.clear();
        self.timers.clear();
        self.delivered.clear();
        self.released.clear();
        self.goodput_bytes = 0;
        self.probes.clear();
        self.finished.clear();
        self.wake = false;
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
    /// Bytes queued at the host's egress port now, including the frame being serialised.
    pub queued_bytes: u64,
    /// The egress port's rate.
    pub rate: crate::units::BitsPerSec,
}

impl HostView {
    /// Time the NIC needs to send what is queued at the host's egress port now (its
    /// queued bytes at its rate): PL2's `pendingDataDelay`, reading (a) of equation (1).
    /// Computed when asked (a division), not for every frame delivered.
    pub fn nic_backlog(&self) -> crate::units::Duration {
        if self.queued_bytes == 0 {
            return crate::units::Duration::ZERO;
        }
        self.rate.tx_time(self.queued_bytes)
    }
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
    /// For a transport over a pacing host layer: when the flow of message `flow` (slot,
    /// generation) may send its next frame as far as the transport is concerned (`None`:
    /// nothing it may send now — no work, or its window is full at the flow's `rate`).
    /// Default: never (the transport pushes its frames itself).
    fn sendable(&self, _flow: (u32, u16), _rate: crate::units::BitsPerSec) -> Option<SimTime> {
        None
    }
    /// The layer picked the flow of message `flow`: build its next frame into
    /// `out.sends` now. Called only when [`Protocol::sendable`] allowed it.
    fn pull(&mut self, _now: SimTime, _flow: (u32, u16), _out: &mut Actions) -> Option<Pulled> {
        None
    }
}

/// The frame a transport built when its host layer pulled it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Pulled {
    /// Its sequence number (what the NIC reports back on transmit) and wire bytes.
    pub seq: u32,
    pub wire: u64,
}

/// A boxed protocol answers as the protocol it holds (large host states are boxed so the
/// enum of all of them stays small).
impl<P: Protocol + ?Sized> Protocol for Box<P> {
    #[inline]
    fn on_message(&mut self, now: SimTime, msg: &MsgInfo, out: &mut Actions) {
        (**self).on_message(now, msg, out)
    }
    #[inline]
    fn on_packet(&mut self, now: SimTime, pkt: &Packet, view: &HostView, out: &mut Actions) {
        (**self).on_packet(now, pkt, view, out)
    }
    #[inline]
    fn on_timer(&mut self, now: SimTime, id: u32, out: &mut Actions) {
        (**self).on_timer(now, id, out)
    }
    #[inline]
    fn on_tx_dequeue(&mut self, now: SimTime, thread: u16, out: &mut Actions) {
        (**self).on_tx_dequeue(now, thread, out)
    }
    #[inline]
    fn on_tx_done(&mut self, now: SimTime, pkt: &Packet, out: &mut Actions) {
        (**self).on_tx_done(now, pkt, out)
    }
    fn frames_if_never_resent(&self, size: u64) -> Option<u32> {
        (**self).frames_if_never_resent(size)
    }
    #[inline]
    fn sendable(&self, flow: (u32, u16), rate: crate::units::BitsPerSec) -> Option<SimTime> {
        (**self).sendable(flow, rate)
    }
    #[inline]
    fn pull(&mut self, now: SimTime, flow: (u32, u16), out: &mut Actions) -> Option<Pulled> {
        (**self).pull(now, flow, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A buffer is idle only when the engine has nothing to carry out: each thing the
    /// engine acts on makes it busy on its own, and what only a host layer reads does not.
    #[test]
    fn an_action_buffer_is_idle_only_when_the_engine_has_nothing_to_do() {
        let engine_work: [fn(&mut Actions); 6] = [
            |a| a.sends.push(crate::packet::SendSpec::default()),
            |a| a.set_timer(1, SimTime(5)),
            |a| a.delivered.push((0, 0)),
            |a| a.released.push(0),
            |a| a.goodput_bytes = 1,
            |a| a.probes.push((0, "cwnd", 1.0)),
        ];
        for (i, add) in engine_work.iter().enumerate() {
            let mut a = Actions::default();
            add(&mut a);
            assert!(!a.is_idle(), "work {i} left the buffer idle");
            a.clear();
            assert!(a.is_idle(), "work {i} survived clear()");
        }
        let mut a = Actions::default();
        a.finished.push((0, 0));
        a.wake = true;
        assert!(a.is_idle(), "a layer's own fields made the buffer busy");
    }
}
