//! The optional per-message latency breakdown (`metrics.breakdown`): where the time of
//! the frame that completed a message went, from the message's arrival at the sending
//! application to its delivery. The seven parts add up to the latency exactly:
//! transport wait (thread wait, reservations, retransmission timeouts: arrival to the
//! frame's creation), send path (creation to the NIC queue), NIC queue, switch queues
//! (summed over hops), wire (per hop: serialisation start to the instant the next node
//! may act, i.e. first bit when cutting through, last bit otherwise, plus propagation
//! and FEC), switch pipelines (summed), receive path. Off by default; when off the
//! engine pays one branch per hook.

use super::Simulation;
use crate::packet::PktId;
use crate::units::SimTime;

/// Timestamps and accumulated delays of one frame.
#[derive(Copy, Clone, Debug, Default)]
pub(crate) struct PktTimes {
    pub nic_enq: u64,
    pub nic_tx: u64,
    pub queue: u64,
    pub wire: u64,
    pub pipeline: u64,
    pub receive: u64,
}

/// The frame being delivered: (message slot, generation, creation time, its times).
pub(crate) type Critical = (u32, u16, SimTime, PktTimes);

impl Simulation {
    /// The breakdown entry of `pkt`, if the breakdown is on.
    #[inline]
    pub(crate) fn times(&mut self, pkt: PktId) -> Option<&mut PktTimes> {
        let bd = self.breakdown.as_mut()?;
        let i = pkt.0 as usize;
        if i >= bd.len() {
            bd.resize(i + 1, PktTimes::default());
        }
        Some(&mut bd[i])
    }

    /// The seven parts for a message that started at `start`, from its last frame.
    pub(crate) fn parts(start: SimTime, c: &Critical) -> [u64; 7] {
        let (_, _, created, t) = c;
        [created.0 - start.0, t.nic_enq - created.0, t.nic_tx - t.nic_enq, t.queue, t.wire, t.pipeline, t.receive]
    }
}
