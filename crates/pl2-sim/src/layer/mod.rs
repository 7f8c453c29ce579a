//! Host layers: sans-IO state machines between a transport and the host's NIC, owning
//! what they hold (a flow's rate limiter, a scheduler's bursts, pauses). A transport
//! declares the layer it runs over ([`crate::transport::Transport::layer`]); the engine
//! then calls the layer around every call of that transport on that host:
//!
//! - a received frame goes to the layer first ([`HostLayer::on_packet`]): the layer's
//!   own control frames (DCQCN's CNPs) are consumed there and never reach the transport;
//! - after each call of the transport, and after each of the layer's own events, the
//!   layer sees the transport's [`Actions`] before the engine carries them out
//!   ([`HostLayer::on_actions`]): it may pull frames from the transport then
//!   ([`Protocol::sendable`], [`Protocol::pull`]), which is how a pacing layer picks the
//!   next frame at the moment the line and the flow's rate allow;
//! - the layer has timers of its own (an id space apart from the transport's:
//!   [`LayerOut`] tags them), probes and counters (summary key = the layer's module name).
//!
//! Each layer is a folder here that declares itself through [`Layer`] and one line in the
//! list below, from which the macro in `list.rs` generates the closed enums
//! ([`LayerConfig`], [`HostLayers`], [`LayerStats`]) and their static dispatch. Nothing
//! is allocated per frame: a layer's state lives in its own slabs, its actions in the
//! engine's reused [`Actions`] buffer.

pub mod dcqcn;
mod list;

use crate::error::BuildError;
use crate::packet::Packet;
use crate::transport::{Actions, HostSite, MsgInfo, Protocol, StatsSection};
use crate::units::SimTime;
use list::layers;

layers! {
    /// DCQCN's reaction point (Zhu et al., SIGCOMM 2015): a rate limiter per flow at the
    /// flow's DCQCN rate, CNPs consumed; RoCE runs over it.
    Dcqcn(dcqcn::Dcqcn),
}

/// A host layer module. Implemented by a marker type in the layer's folder (e.g.
/// `dcqcn::Dcqcn`) and listed once above.
pub trait Layer {
    /// Its settings, as the transport over it (or the scenario) decides them.
    type Config;
    /// Its state on one host (boxed when large).
    type Host: HostLayer;
    /// Its counters summed over a run, written to the summary under the layer's name.
    type Stats: StatsSection;
    /// Its instance on the host `at` describes; a bad setting names `at.field`.
    fn host(cfg: &Self::Config, at: &HostSite<'_>) -> Result<Self::Host, BuildError>;
    /// Adds a host instance's counters to the run's. Default: nothing to report.
    fn report(_host: &Self::Host, _stats: &mut LayerStats) {}
}

/// Whether the layer kept a received frame for itself.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Consumed {
    /// The layer's own control frame: the transport never sees it.
    Yes,
    /// The transport's frame: pass it on.
    No,
}

/// The calls every host layer answers; `now` is the simulated time of the call.
pub trait HostLayer {
    /// The transport above starts sending `msg` (called before the transport is).
    fn on_message(&mut self, _now: SimTime, _msg: &MsgInfo) {}
    /// A frame for the transport above arrived, before the transport sees it.
    fn on_packet(&mut self, now: SimTime, pkt: &Packet, out: &mut LayerOut<'_>) -> Consumed;
    /// The layer's timer `id` expired.
    fn on_timer(&mut self, _now: SimTime, _id: u32, _out: &mut LayerOut<'_>) {}
    /// The last bit of a frame of the transport above with
    /// [`crate::packet::flags::NOTIFY_TX_DONE`] left the NIC (after the transport heard).
    fn on_tx_done(&mut self, _now: SimTime, _pkt: &Packet, _out: &mut LayerOut<'_>) {}
    /// The transport (or the layer itself) has just acted: `out` holds what it wants done,
    /// not yet carried out. The layer may pull frames from `src` here.
    fn on_actions<P: Protocol>(&mut self, now: SimTime, src: &mut P, out: &mut Actions);
}

/// A layer's timer ids are tagged with this bit in the shared [`Actions`] list, so that
/// the engine keeps them apart from the transport's (and the order of all arms and
/// cancels is the order they were asked in).
pub const LAYER_TIMER: u32 = 1 << 31;

/// A layer's view of the engine's action buffer: its timers are its own.
pub struct LayerOut<'a>(pub &'a mut Actions);

impl LayerOut<'_> {
    pub fn set_timer(&mut self, id: u32, at: SimTime) {
        debug_assert!(id & LAYER_TIMER == 0);
        self.0.set_timer(id | LAYER_TIMER, at);
    }
    pub fn cancel_timer(&mut self, id: u32) {
        self.0.cancel_timer(id | LAYER_TIMER);
    }
    pub fn probe(&mut self, flow: u32, name: &'static str, value: f64) {
        self.0.probes.push((flow, name, value));
    }
}

/// A boxed layer answers as the layer it holds (large states are boxed so the enum of
/// all of them stays small).
impl<L: HostLayer + ?Sized> HostLayer for Box<L> {
    #[inline]
    fn on_message(&mut self, now: SimTime, msg: &MsgInfo) {
        (**self).on_message(now, msg)
    }
    #[inline]
    fn on_packet(&mut self, now: SimTime, pkt: &Packet, out: &mut LayerOut<'_>) -> Consumed {
        (**self).on_packet(now, pkt, out)
    }
    #[inline]
    fn on_timer(&mut self, now: SimTime, id: u32, out: &mut LayerOut<'_>) {
        (**self).on_timer(now, id, out)
    }
    #[inline]
    fn on_tx_done(&mut self, now: SimTime, pkt: &Packet, out: &mut LayerOut<'_>) {
        (**self).on_tx_done(now, pkt, out)
    }
    #[inline]
    fn on_actions<P: Protocol>(&mut self, now: SimTime, src: &mut P, out: &mut Actions) {
        (**self).on_actions(now, src, out)
    }
}
