//! Test support: a transport over the DCQCN layer driven in the engine's order
//! (`sim/layers.rs`, `sim/host.rs`) with no network, for hand-worked checks.

use super::pacer::{DcqcnHost, PACING_TIMER};
use crate::layer::{Consumed, HostLayer, LayerOut, LAYER_TIMER};
use crate::packet::Packet;
use crate::transport::{Actions, HostView, MsgInfo, Protocol};
use crate::units::SimTime;

/// Transport `t` over layer `l` on one host.
pub struct Stack<T: Protocol> {
    pub t: T,
    pub l: DcqcnHost,
}

impl<T: Protocol> Stack<T> {
    pub fn on_message(&mut self, now: SimTime, msg: &MsgInfo, out: &mut Actions) {
        self.l.on_message(now, msg);
        self.t.on_message(now, msg, out);
        self.l.on_actions(now, &mut self.t, out);
    }
    /// Returns whether the layer kept the frame.
    pub fn on_packet(&mut self, now: SimTime, p: &Packet, out: &mut Actions) -> bool {
        let kept = self.l.on_packet(now, p, &mut LayerOut(out)) == Consumed::Yes;
        if !kept {
            self.t.on_packet(now, p, &HostView::default(), out);
        }
        self.l.on_actions(now, &mut self.t, out);
        kept
    }
    pub fn on_tx_done(&mut self, now: SimTime, p: &Packet, out: &mut Actions) {
        self.t.on_tx_done(now, p, out);
        self.l.on_tx_done(now, p, &mut LayerOut(out));
        self.l.on_actions(now, &mut self.t, out);
    }
    /// Timer `id` as the engine keeps it (a layer's tagged with [`LAYER_TIMER`]).
    pub fn on_timer(&mut self, now: SimTime, id: u32, out: &mut Actions) {
        if id & LAYER_TIMER != 0 {
            self.l.on_timer(now, id & !LAYER_TIMER, &mut LayerOut(out));
        } else {
            self.t.on_timer(now, id, out);
        }
        self.l.on_actions(now, &mut self.t, out);
    }
}

/// The engine's id of the layer's pacing timer.
pub const PACING: u32 = PACING_TIMER | LAYER_TIMER;

/// The last time the pacing timer was armed for in `out` (`None`: not armed).
pub fn pacing_timer(out: &Actions) -> Option<SimTime> {
    out.timers.iter().rev().find(|(id, _)| *id == PACING).and_then(|(_, t)| *t)
}
