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
/// Aligned to a cache line: its 192 bytes then span three lines, where at the
/// allocator's 16-byte alignment most ports span four (every hop reads and writes
/// fields across the whole record).
#[repr(align(64))]
pub(crate) struct Port {
    pub owner: Owner,
    pub peer: u32,
    /// Host index of the peer, if the peer is a host.
    pub peer_host: Option<u32>,
    /// The reverse port's local index at the peer, if the peer is a switch (`u32::MAX`
    /// otherwise): the ingress a frame arriving over this link is accounted to, kept here
    /// so that an arrival reads the one port record it has already loaded.
    pub peer_local: u32,
    pub rate: BitsPerSec,
    pub delay: Duration,
    pub busy: bool,
    /// The frame being serialised: its wire bytes (a frame's `wire` is 16 bits).
    pub cur_wire: u32,
    pub cur_prio: u8,
    pub cur_ingress: u32,
    pub cur_data: bool,
    /// Bytes queued including the frame being serialised.
    pub queued: u64,
    /// Frames on the wire or in the far node's input pipeline, oldest first, each
    /// carrying the time the frame behind it reaches the far node (see
    /// `Simulation::pipe_push`); the head's time is its `LinkHead` event's.
    pub pipe: PktList,
    pub pipe_last: SimTime,
    /// When the last bit of the newest frame on the link reaches the far MAC (a PAUSE
    /// frame is acted on there, behind the frames ahead of it on the wire only).
    pub mac_last: SimTime,
    pub up: bool,
    pub loss: f64,
    pub max_queue: u64,
    pub tx_bytes: u64,
    /// Frames a trimming queue at this port cut to their header.
    pub trims: u64,
    pub window: LazyWindow,
    /// The queue's time integral within `window`'s current window.
    pub area: QueueIntegral,
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
    use super::Port;

    #[test]
    fn a_port_spans_three_cache_lines() {
        assert_eq!(std::mem::align_of::<Port>(), 64);
        assert!(std::mem::size_of::<Port>() <= 3 * 64, "a field added to Port costs every hop a fourth cache line");
    }
}
