//! Ideal completion time of a message: the time from its arrival at the sending
//! application to the delivery of its last byte when it is alone in the network, under
//! the same host model with every delay at its minimum, the transport's data framing,
//! and the first equal-cost path. Frames are pushed through the chain of stages exactly
//! as the engine moves them (send path, NIC serialisation, per hop propagation, input
//! pipeline with cut-through or store-and-forward, output serialisation, receive path),
//! so on an idle network with constant delays the simulated and ideal times are equal.
//! Transports that add handshakes or reservations are slower than this by design: the
//! slowdown shows their cost. The sending thread's share of the transmit ring
//! (`host.tx_ring_frames`) is modelled as raw Ethernet uses it: the first `R` frames are
//! handed over at once, frame `i ≥ R` when the NIC starts serialising frame `i − R`.

use super::Simulation;
use crate::framing::L4Headers;
use crate::units::{Duration, SimTime};

/// Ideal times remembered at most (the memo is cleared when full). Small, so that the
/// bound is reached early in a run and memory stays flat: a workload drawing sizes from a
/// continuous distribution rarely repeats a size anyway, and one with a few sizes fits.
const IDEAL_CACHE_ENTRIES: usize = 1 << 12;
/// Distinct path descriptions remembered at most (both memos are cleared when full).
const IDEAL_PATH_CLASSES: usize = 1 << 12;

/// Memo of ideal times. A path's description (the transport's header bytes, each hop's
/// rate, delay and switch pipeline) is interned once into a class number, so that an
/// entry per (size, class) is a fixed-size key rather than a vector per message.
#[derive(Default)]
pub(crate) struct IdealCache {
    classes: rustc_hash::FxHashMap<Box<[u64]>, u32>,
    times: rustc_hash::FxHashMap<(u64, u32), Duration>,
}

impl Simulation {
    /// Data framing of transport `tp`: (headers, largest payload).
    pub(crate) fn data_framing(&self, tp: u8) -> (L4Headers, u64) {
        let l4 = self.transport_cfgs[tp as usize].l4();
        (l4, self.net.framing.max_payload(l4, self.net.mtu.0))
    }

    /// The ideal time of a message of `size` bytes from `src` to `dst`, memoised by
    /// everything it depends on (each hop's rate, delay and switch pipeline, and the
    /// size and the transport's framing), so messages of the same size over alike paths
    /// compute it once.
    pub(crate) fn ideal_completion(&mut self, src: u32, dst: u32, size: u64, tp: u8) -> Duration {
        // Path: the egress ports from src to dst (first equal-cost choice at each switch).
        let mut path = vec![self.hosts[src as usize].port];
        let mut node = self.ports[path[0] as usize].peer;
        while node >= self.graph.hosts {
            let hops = self.routes.next_hops(node - self.graph.hosts, dst);
            let Some(&p) = hops.first() else { return Duration::ZERO };
            path.push(p);
            node = self.ports[p as usize].peer;
        }
        let (l4, _) = self.data_framing(tp);
        let mut desc = vec![l4.bytes()];
        for &p in &path {
            let port = &self.ports[p as usize];
            desc.extend([port.rate.0, port.delay.0]);
            if port.peer_host().is_none() {
                let sc = &self.switches[(port.peer - self.graph.hosts) as usize].cfg;
                desc.extend([sc.latency.min().0, u64::from(sc.cut_through)]);
            }
        }
        let memo = &mut self.ideal_cache;
        let class = match memo.classes.get(desc.as_slice()) {
            Some(&c) => c,
            None => {
                if memo.classes.len() >= IDEAL_PATH_CLASSES {
                    // Class numbers are reused from zero: the times memoised under the
                    // old numbers go too.
                    memo.classes.clear();
                    memo.times.clear();
                }
                let c = memo.classes.len() as u32;
                memo.classes.insert(desc.into_boxed_slice(), c);
                c
            }
        };
        if let Some(&d) = self.ideal_cache.times.get(&(size, class)) {
            return d;
        }
        let d = self.ideal_on_path(&path, size, tp);
        let times = &mut self.ideal_cache.times;
        if times.len() >= IDEAL_CACHE_ENTRIES {
            times.clear();
        }
        times.insert((size, class), d);
        d
    }

    fn ideal_on_path(&self, path: &[u32], size: u64, tp: u8) -> Duration {
        let (l4, max_payload) = self.data_framing(tp);
        let hc = &self.net.host;
        let fec = self.net.link.fec_jitter.min();
        let frames = size.div_ceil(max_payload).max(1);
        // Per stage: the time the previous frame left it.
        // A message alone is at least one hand-over unit.
        let mut send_cpu = SimTime::ZERO + hc.send_cpu_per_message.min() + hc.send_cpu_per_burst.min();
        let ring = hc.tx_ring_frames.max(1) as usize;
        // When the NIC started serialising each of the last `ring` frames (the ring slot
        // it frees refills with frame `i + ring`).
        let mut nic_start: std::collections::VecDeque<SimTime> = std::collections::VecDeque::with_capacity(ring.min(frames as usize));
        let mut port_free = vec![SimTime::ZERO; path.len()];
        let mut pipe_last = vec![SimTime::ZERO; path.len()];
        let mut rx_cpu = SimTime::ZERO;
        let mut txline_last = SimTime::ZERO;
        let mut done = SimTime::ZERO;
        for i in 0..frames {
            let payload = if i + 1 == frames { size - i * max_payload } else { max_payload };
            let wire = self.net.framing.wire_bytes(l4, payload);
            if nic_start.len() == ring {
                let handed = nic_start.pop_front().expect("ring is full");
                send_cpu = send_cpu.max(handed);
            }
            send_cpu += hc.send_cpu_per_packet.min();
            txline_last = txline_last.max(send_cpu + hc.send_latency.min());
            let mut ready = txline_last;
            for (k, &p) in path.iter().enumerate() {
                let port = &self.ports[p as usize];
                let start = ready.max(port_free[k]);
                if k == 0 {
                    nic_start.push_back(start);
                }
                let ser = port.rate.tx_time(wire);
                port_free[k] = start + ser;
                let first = start + port.delay + fec;
                let last = first + ser;
                ready = if k + 1 == path.len() {
                    let r = pipe_last[k].max(last + hc.recv_latency.min());
                    rx_cpu = rx_cpu.max(r) + hc.recv_cpu_per_packet.min();
                    rx_cpu
                } else {
                    let out = &self.ports[path[k + 1] as usize];
                    let sc = &self.switches[(port.peer - self.graph.hosts) as usize].cfg;
                    let base = if sc.cut_through && out.rate <= port.rate { first } else { last };
                    pipe_last[k].max(base + sc.latency.min())
                };
                pipe_last[k] = ready;
            }
            done = ready;
        }
        Duration(done.0)
    }
}
