//! The engine's side of host layers (`crate::layer`): each transport instance may run
//! over one layer, kept beside it (`Simulation::layers`, same index). The layer sees a
//! message before its transport, a received frame before its transport (and may keep
//! it), its own timers and transmit notifications, and every batch of the transport's
//! actions before the engine carries them out (`apply_actions`), when it may pull frames
//! from the transport. Nothing here names a layer: they are reached through the list.

use super::Simulation;
use crate::layer::{Consumed, HostLayer, HostLayers, LayerOut};
use crate::packet::Packet;
use crate::transport::{Actions, MsgInfo};

impl Simulation {
    #[inline]
    fn layer_index(&self, tp: u8, h: u32) -> usize {
        tp as usize * self.graph.hosts as usize + h as usize
    }

    /// Host `h`'s layer under transport `tp`, if it runs over one.
    pub(crate) fn layer_mut(&mut self, tp: u8, h: u32) -> Option<&mut HostLayers> {
        let i = self.layer_index(tp, h);
        self.layers.get_mut(i).and_then(Option::as_mut)
    }

    /// Transport `tp` of host `h` is about to start `msg`.
    pub(crate) fn layer_on_message(&mut self, h: u32, tp: u8, msg: &MsgInfo) {
        let now = self.now;
        if let Some(l) = self.layer_mut(tp, h) {
            l.on_message(now, msg);
        }
    }

    /// A frame for transport `tp` of host `h` arrived: whether its layer kept it.
    pub(crate) fn layer_on_packet(&mut self, h: u32, tp: u8, p: &Packet, acts: &mut Actions) -> Consumed {
        let now = self.now;
        match self.layer_mut(tp, h) {
            Some(l) => l.on_packet(now, p, &mut LayerOut(acts)),
            None => Consumed::No,
        }
    }

    /// Layer timer `id` of transport `tp`'s layer on host `h` expired.
    pub(crate) fn layer_on_timer(&mut self, h: u32, tp: u8, id: u32, acts: &mut Actions) {
        let now = self.now;
        if let Some(l) = self.layer_mut(tp, h) {
            l.on_timer(now, id, &mut LayerOut(acts));
        }
    }

    /// A frame of transport `tp` on host `h` that asked for it finished transmitting.
    pub(crate) fn layer_on_tx_done(&mut self, h: u32, tp: u8, p: &Packet, acts: &mut Actions) {
        let now = self.now;
        if let Some(l) = self.layer_mut(tp, h) {
            l.on_tx_done(now, p, &mut LayerOut(acts));
        }
    }

    /// Transport `tp` of host `h` (or its layer) acted: the layer sees the actions first.
    #[inline]
    pub(crate) fn layer_on_actions(&mut self, h: u32, tp: u8, acts: &mut Actions) {
        if self.layers.is_empty() {
            return;
        }
        let i = self.layer_index(tp, h);
        if let Some(Some(l)) = self.layers.get_mut(i) {
            l.on_actions(self.now, &mut self.transports[i], acts);
        }
    }
}
