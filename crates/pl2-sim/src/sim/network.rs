//! The network's state: who owns each egress port, the ports themselves (queue, wire,
//! link FIFO, counters), the hosts (NIC queues, send path, threads, timers) and the
//! switches (configuration, program, shared buffer).

use crate::config::SwitchConfig;
use crate::metrics::{LazyWindow, QueueIntegral};
use crate::net::buffer::SharedBuffer;
use crate::net::nic::NicQueues;
use crate::packet::{Packet, PktId, PktList};
use crate::programs::SwitchProgram;
use crate::rng::SimRng;
use crate::units::{BitsPerSec, Duration, SimTime};
use std::collections::VecDeque;

/// Who owns an egress port.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Owner {
    Host(u32),
    Switch { index: u32, local: u32 },
}

/// One direction of a link: the egress queue at `node` and the wire to `peer`.
///
/// Laid out by cache line (`repr(C)`, in this order, 64-byte aligned: three lines, where
/// at the allocator's 16-byte alignment most ports would span four), by the moments of a
/// hop that touch it: a frame joining the queue reads and writes line 0 (queue bytes,
/// time integral, owner, busy) and line 1 (the sampling window); the end of a frame's
/// serialisation and the start of the next all three; a frame reaching the far end of
/// the link line 2 alone (the link's FIFO, state and far end). Asserted by
/// `a_hop_touches_the_port_lines_it_needs`.
#[repr(C, align(64))]
pub(crate) struct Port {
    /// The queue's time integral within `window`'s current window.
    pub area: QueueIntegral,
    /// Bytes queued including the frame being serialised.
    pub queued: u64,
    pub max_queue: u64,
    pub owner: Owner,
    pub busy: bool,
    pub cur_prio: u8,
    pub cur_data: bool,
    pub window: LazyWindow,
    pub tx_bytes: u64,
    /// The frame being serialised: its wire bytes (a frame's `wire` is 16 bits).
    pub cur_wire: u32,
    pub cur_ingress: u32,
    /// Frames a trimming queue at this port cut to their header.
    pub trims: u64,
    /// Frames on the wire or in the far node's input pipeline, oldest first, each
    /// carrying the time the frame behind it reaches the far node (see
    /// `Simulation::pipe_push`); the head's time is its `LinkHead` event's.
    pub pipe: PktList,
    pub peer: u32,
    /// The reverse port's local index at the peer, if the peer is a switch (`u32::MAX`
    /// otherwise): the ingress a frame arriving over this link is accounted to, kept here
    /// so that an arrival reads the one port record it has already loaded.
    pub peer_local: u32,
    /// Host index of the peer (`u32::MAX` if the peer is a switch): see
    /// [`Port::peer_host`]. Four bytes, where an `Option` takes eight.
    pub peer_host_index: u32,
    pub up: bool,
    pub loss: f64,
    pub rate: BitsPerSec,
    pub delay: Duration,
    pub pipe_last: SimTime,
    /// When the last bit of the newest frame on the link reaches the far MAC (a PAUSE
    /// frame is acted on there, behind the frames ahead of it on the wire only).
    pub mac_last: SimTime,
}

impl Port {
    /// Host index of the peer, if the peer is a host.
    #[inline(always)]
    pub fn peer_host(&self) -> Option<u32> {
        (self.peer_host_index != u32::MAX).then_some(self.peer_host_index)
    }
}

impl Host {
    /// The CPU clock that pays for a frame of `kind` sent (or, for a control frame,
    /// received) by `thread`: the thread's own with `host.cpu = "thread"` for data and
    /// control frames of a local thread, the host's otherwise.
    #[inline]
    pub fn cpu_clock(&mut self, kind: crate::packet::PktKind, thread: u16) -> &mut SimTime {
        use crate::packet::PktKind;
        match self.thread_cpu_free.get_mut(thread as usize) {
            Some(c) if matches!(kind, PktKind::Data | PktKind::Control) => c,
            _ => &mut self.tx_cpu_free,
        }
    }
}

pub(crate) struct Host {
    pub port: u32,
    pub nic: NicQueues,
    pub txline: VecDeque<(SimTime, PktId)>,
    pub txline_last: SimTime,
    pub tx_cpu_free: SimTime,
    pub rx_cpu_free: SimTime,
    /// With `host.cpu = "thread"`: when each application thread's CPU is next free
    /// (empty otherwise: every cost goes to `tx_cpu_free`).
    pub thread_cpu_free: Vec<SimTime>,
    pub rng: SimRng,
    pub thread_busy: Vec<bool>,
    pub thread_queue: Vec<VecDeque<u32>>,
    pub shared_queue: VecDeque<u32>,
    /// Global timer index of each transport's timer ids, by transport then id
    /// (`u32::MAX`: none yet).
    pub timers: Vec<Vec<u32>>,
    /// The same for each transport's host layer's timer ids.
    pub layer_timers: Vec<Vec<u32>>,
    pub up: bool,
    pub goodput: LazyWindow,
    /// The frame being serialised, if its transport asked to hear when it is done
    /// (`flags::NOTIFY_TX_DONE`).
    pub tx_notify: Option<Packet>,
}

pub(crate) struct Switch {
    pub node: u32,
    /// Global id of each of its ports, by local index.
    pub ports: Vec<u32>,
    pub cfg: SwitchConfig,
    pub program: SwitchProgram,
    pub buffer: SharedBuffer,
    pub rng: SimRng,
    pub ecmp_seed: u64,
    /// Selects this switch's digit of a source-chosen path number
    /// (`RoutingTable::path_divisor`).
    pub path_divisor: u32,
    /// Round-robin spraying's counter.
    pub next_hop_turn: u32,
    /// Its trimming rules, if its ports trim (`config::QueueDiscipline::Trimming`).
    pub trim: Option<super::trimming::TrimRules>,
}

#[cfg(test)]
mod tests {
    use super::{LazyWindow, Owner, PktList, Port, QueueIntegral};

    #[test]
    fn a_hop_touches_the_port_lines_it_needs() {
        use std::mem::{align_of, offset_of, size_of};
        assert_eq!(align_of::<Port>(), 64);
        assert_eq!(size_of::<Port>(), 3 * 64, "a field added to Port costs every hop a fourth cache line");
        let line = |offset: usize, size: usize| {
            let (first, last) = (offset / 64, (offset + size - 1) / 64);
            assert_eq!(first, last, "a field at {offset} straddles two lines");
            first
        };
        // A frame joins the queue: lines 0 and 1.
        for (o, n) in [(offset_of!(Port, area), size_of::<QueueIntegral>()), (offset_of!(Port, queued), 8), (offset_of!(Port, max_queue), 8), (offset_of!(Port, owner), size_of::<Owner>()), (offset_of!(Port, busy), 1)] {
            assert_eq!(line(o, n), 0);
        }
        assert_eq!(line(offset_of!(Port, window), size_of::<LazyWindow>()), 1);
        // A frame reaches the far end: line 2 alone.
        for (o, n) in [(offset_of!(Port, pipe), size_of::<PktList>()), (offset_of!(Port, peer), 4), (offset_of!(Port, peer_local), 4), (offset_of!(Port, peer_host_index), 4), (offset_of!(Port, up), 1), (offset_of!(Port, loss), 8)] {
            assert_eq!(line(o, n), 2);
        }
    }
}
