//! The hybrid ToR of a reconfigurable datacenter network (`topology.kind =
//! "hybrid_racks"`), a network mechanism beside PFC and trimming that names no protocol:
//!
//! - One virtual output queue (VOQ) per destination rack at every ToR, a FIFO threaded
//!   through the frames it holds, limited in frames (`[network.voq]`, resized in time
//!   by `net/circuit.rs`), with step marking of ECN-capable frames.
//! - The ToR's packet uplink serves its non-empty VOQs round robin, skipping a VOQ whose
//!   circuit is up (the circuit serves it) and, with `night_packet_path = "closed"`, the
//!   VOQ whose circuit comes after the current night. Its circuit uplink serves the VOQ
//!   of the rack its circuit reaches now, and starts a frame only if its last bit leaves
//!   before the day ends: no frame is ever serialised onto a circuit during a night.
//!   Routing thus follows the schedule: a frame takes the circuit if it is up when the
//!   frame reaches the head of its VOQ, the packet network otherwise.
//! - A circuit switch that drops frames reaching it while their circuit is down
//!   (`in_flight_at_night = "drop"`), or forwards them (`"deliver"`).
//! - The circuit-state signal: the congestion-echo bit (engine flag `CE`) on
//!   acknowledgement frames (`PktKind::Ack`: the network's own frame kind, header-only
//!   frames travelling back to a sender) delivered by a ToR to its hosts, set while the
//!   circuit from the host's rack to the acknowledging rack is up or due within
//!   `signal_lead`, cleared otherwise (`signal_timing = "recompute"`: as of the last time
//!   etalon's runner would have recomputed it).
//! - Counters (from `stats_from`): bytes each rack pair's circuit and packet path
//!   carried, and a histogram of data frames' latency from their arrival at the source
//!   ToR until their last bit reaches the destination ToR (etalon's latency, see
//!   `docs/model.md`).
//!
//! Frames in a VOQ are not in the ToR's shared buffer; a frame enters the buffer's (and
//! the port's) accounting when an uplink takes it, and leaves it when its last bit has
//! left, as every switch frame does.

use super::network::Owner;
use super::Simulation;
use crate::engine::Ev;
use crate::metrics::DropReason;
use crate::net::circuit::{CircuitConfig, InFlightAtNight, NightPacketPath, Schedule, ShrinkPolicy, VoqConfig};
use crate::net::topology::Graph;
use crate::packet::{flags, PktId, PktKind, PktList};
use crate::units::SimTime;
use serde::Serialize;

/// Width of a latency histogram bin, and bins (the last one holds everything longer).
const BIN_PS: u64 = 100_000;
const BINS: usize = 200_000;

/// Latency percentiles reported, and the smallest payload a frame needs to count (etalon
/// counts frames with more than 1000 B of TCP payload, `experiments/parse_logs.py:503-505`).
const MIN_LATENCY_PAYLOAD: u16 = 1001;

/// What an uplink of a ToR is.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Uplink {
    Packet,
    Circuit,
}

/// The hybrid racks' state.
pub(crate) struct Hybrid {
    pub sched: Schedule,
    cfg: CircuitConfig,
    voq_cfg: VoqConfig,
    hosts_per_rack: u32,
    racks: u32,
    /// Switch index of the circuit switch.
    circuit_switch: u32,
    /// Per ToR: its packet and circuit uplink (global port ids).
    packet_port: Vec<u32>,
    circuit_port: Vec<u32>,
    /// Per global port: `Some((tor, kind))` for ToR uplinks.
    uplink: Vec<Option<(u32, Uplink)>>,
    /// VOQ (src rack r → dst rack d) at `r * racks + d`, and its length in frames.
    voq: Vec<PktList>,
    voq_len: Vec<u32>,
    /// Per ToR: the VOQ the packet uplink looks at first next time.
    turn: Vec<u32>,
    /// Whether a boundary event is pending.
    ticking: bool,
    stats_from: SimTime,
    pub stats: CircuitCounters,
    hist_all: Vec<u64>,
    hist_circuit: Vec<u64>,
    hist_packet: Vec<u64>,
}

/// Counters of the circuit network, per rack pair at `src * racks + dst`.
#[derive(Clone, Debug, Default, Serialize)]
pub struct CircuitCounters {
    pub circuit_payload_bytes: Vec<u64>,
    pub circuit_wire_bytes: Vec<u64>,
    pub packet_payload_bytes: Vec<u64>,
    /// Frames a full VOQ refused.
    pub voq_drops: u64,
    /// Frames dropped at the circuit switch because their circuit was down.
    pub night_drops: u64,
    /// Acknowledgements delivered with the circuit-state bit set / clear.
    pub signal_set: u64,
    pub signal_clear: u64,
    /// Frames marked CE at a VOQ.
    pub voq_marks: u64,
    /// Frames a shrinking VOQ dropped (`resize.shrink = "drop"`; also in `voq_drops`).
    pub voq_shrink_drops: u64,
}

/// The circuit network's report for `summary.json` (`circuit`).
#[derive(Clone, Debug, Serialize)]
pub struct CircuitStats {
    pub racks: u32,
    pub from_ps: u64,
    pub until_ps: u64,
    #[serde(flatten)]
    pub counters: CircuitCounters,
    /// How long each rack pair's circuit was up within the window, ps.
    pub circuit_up_ps: Vec<u64>,
    /// Circuit rate, bits per second.
    pub circuit_bps: u64,
    /// Latency percentiles (p50, p90, p99, p99.9) in µs, of all data frames and of those
    /// that took the circuit or the packet network (bins of 0.1 µs); `None` without one.
    pub latency_us: LatencyReport,
}

#[derive(Clone, Debug, Serialize)]
pub struct LatencyReport {
    pub all: Option<[f64; 4]>,
    pub circuit: Option<[f64; 4]>,
    pub packet: Option<[f64; 4]>,
    pub frames: u64,
}

fn percentiles(h: &[u64]) -> Option<[f64; 4]> {
    let n: u64 = h.iter().sum();
    if n == 0 {
        return None;
    }
    let q = |p: f64| {
        let want = ((p * n as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (i, &c) in h.iter().enumerate() {
            seen += c;
            if seen >= want {
                return (i as f64 + 0.5) * BIN_PS as f64 / 1e6;
            }
        }
        BINS as f64 * BIN_PS as f64 / 1e6
    };
    Some([q(0.5), q(0.9), q(0.99), q(0.999)])
}

impl Hybrid {
    /// The state for a built hybrid-racks network (`None` for other topologies).
    pub(crate) fn build(graph: &Graph, ports_of: &[Vec<u32>], peer_of: impl Fn(u32) -> u32, nports: usize, net: &crate::config::NetworkConfig) -> Result<Option<Hybrid>, crate::error::BuildError> {
        let invalid = |f: String, e: String| crate::error::BuildError::Invalid { field: f, problem: e };
        let crate::config::TopologyConfig::HybridRacks { racks, hosts_per_rack, .. } = net.topology else {
            if net.circuit.is_some() || net.voq.is_some() {
                return Err(invalid("network.circuit".into(), "[network.circuit] and [network.voq] need topology.kind = \"hybrid_racks\"".into()));
            }
            return Ok(None);
        };
        let cfg = net.circuit.clone().unwrap_or_default();
        let voq_cfg = net.voq.clone().unwrap_or_default();
        voq_cfg.check().map_err(|(f, e)| invalid(format!("network.voq.{f}"), e))?;
        let sched = cfg.schedule(racks).map_err(|(f, e)| invalid(format!("network.circuit.{f}"), e))?;
        let (ps_node, cs_node) = (graph.hosts + racks, graph.hosts + racks + 1);
        let mut uplink = vec![None; nports];
        let (mut packet_port, mut circuit_port) = (Vec::new(), Vec::new());
        for r in 0..racks {
            let find = |node: u32| ports_of[r as usize].iter().copied().find(|&p| peer_of(p) == node).expect("a ToR has both uplinks");
            let (p, c) = (find(ps_node), find(cs_node));
            uplink[p as usize] = Some((r, Uplink::Packet));
            uplink[c as usize] = Some((r, Uplink::Circuit));
            packet_port.push(p);
            circuit_port.push(c);
        }
        let pairs = (racks * racks) as usize;
        Ok(Some(Hybrid {
            sched,
            hosts_per_rack,
            racks,
            circuit_switch: racks + 1,
            packet_port,
            circuit_port,
            uplink,
            voq: vec![PktList::default(); pairs],
            voq_len: vec![0; pairs],
            turn: vec![0; racks as usize],
            ticking: false,
            stats_from: SimTime(cfg.stats_from.0),
            stats: CircuitCounters {
                circuit_payload_bytes: vec![0; pairs],
                circuit_wire_bytes: vec![0; pairs],
                packet_payload_bytes: vec![0; pairs],
                ..Default::default()
            },
            hist_all: vec![0; BINS],
            hist_circuit: vec![0; BINS],
            hist_packet: vec![0; BINS],
            cfg,
            voq_cfg,
        }))
    }

    #[inline]
    fn rack_of(&self, host: u32) -> u32 {
        host / self.hosts_per_rack
    }

    /// Frames in VOQ (src → dst) now.
    pub(crate) fn voq_len(&self, src: u32, dst: u32) -> u32 {
        self.voq_len[(src * self.racks + dst) as usize]
    }
}

impl Simulation {
    /// First boundary of the schedule (called once the simulation is built).
    pub(super) fn start_circuits(&mut self) {
        if let Some(h) = &mut self.hybrid {
            h.ticking = true;
            self.events.push(SimTime::ZERO, Ev::Circuit(0));
        }
    }

    /// A day started or ended: every ToR's uplinks look at their VOQs again.
    #[inline(never)]
    pub(super) fn on_circuit_boundary(&mut self) {
        let h = self.hybrid.as_mut().expect("circuit event without circuits");
        let live = self.arena.live() > 0 || self.live_msgs > 0 || self.sources_active > 0 || !self.persistent.is_empty() || self.apps.active > 0;
        h.ticking = false;
        if live {
            if let Some(t) = h.sched.next_boundary(self.now) {
                h.ticking = true;
                self.events.push(t, Ev::Circuit(0));
            }
        }
        if h.voq_cfg.resize.is_some_and(|r| r.shrink == ShrinkPolicy::Drop) {
            self.drop_beyond_capacity();
        }
        let h = self.hybrid.as_ref().expect("on");
        for r in 0..h.racks as usize {
            let (p, c) = (self.hybrid.as_ref().expect("on").packet_port[r], self.hybrid.as_ref().expect("on").circuit_port[r]);
            self.kick_port(c);
            self.kick_port(p);
        }
    }

    /// `resize.shrink = "drop"`: every VOQ holding more frames than its capacity now (one
    /// whose day has just ended) drops the newest of them down to it, as a Click queue
    /// given a smaller capacity does (`SimpleQueue::live_reconfigure`). Capacities shrink
    /// only at day ends, which are boundaries.
    fn drop_beyond_capacity(&mut self) {
        let now = self.now;
        let racks = self.hybrid.as_ref().expect("on").racks;
        for tor in 0..racks {
            for d in (0..racks).filter(|&d| d != tor) {
                let q = (tor * racks + d) as usize;
                loop {
                    let h = self.hybrid.as_mut().expect("on");
                    if h.voq_len[q] <= h.voq_cfg.capacity(&h.sched, tor, d, now) {
                        break;
                    }
                    let pkt = h.voq[q].pop_back(&mut self.arena).expect("a VOQ as long as its count");
                    h.voq_len[q] -= 1;
                    h.stats.voq_drops += 1;
                    h.stats.voq_shrink_drops += 1;
                    let node = self.switches[tor as usize].node;
                    self.drop_packet(pkt, DropReason::QueueLimit, node, u32::MAX);
                }
            }
        }
    }

    /// Switch `index` received `pkt`: a ToR queues frames for other racks in their VOQ
    /// (returns true) and signals circuit state on acknowledgements for its hosts; the
    /// circuit switch drops frames whose circuit is down if so configured.
    #[inline]
    pub(super) fn hybrid_receive(&mut self, index: u32, pkt: PktId, ingress: u32) -> bool {
        let Some(h) = self.hybrid.as_mut() else { return false };
        let now = self.now;
        let pk = self.arena.get_mut(pkt);
        let (src_rack, dst_rack) = (h.rack_of(pk.src), h.rack_of(pk.dst));
        if index == h.circuit_switch {
            if h.cfg.in_flight_at_night == InFlightAtNight::Drop && !h.sched.up(src_rack, dst_rack, now) {
                h.stats.night_drops += 1;
                let node = self.switches[index as usize].node;
                self.drop_packet(pkt, DropReason::LinkDown, node, u32::MAX);
                return true;
            }
            return false;
        }
        if index >= h.racks {
            return false;
        }
        if dst_rack == index {
            if let (Some(lead), PktKind::Ack) = (h.cfg.signal_lead, pk.kind) {
                if src_rack != index {
                    if h.sched.signal(index, src_rack, now, lead, h.cfg.signal_timing) {
                        pk.flags |= flags::CE;
                        h.stats.signal_set += 1;
                    } else {
                        pk.flags &= !flags::CE;
                        h.stats.signal_clear += 1;
                    }
                }
            }
            return false;
        }
        // A frame for another rack: its VOQ, if there is room for it now.
        let q = (index * h.racks + dst_rack) as usize;
        let len = h.voq_len[q];
        if len >= h.voq_cfg.capacity(&h.sched, index, dst_rack, now) {
            h.stats.voq_drops += 1;
            let node = self.switches[index as usize].node;
            self.drop_packet(pkt, DropReason::QueueLimit, node, u32::MAX);
            return true;
        }
        if pk.has(flags::ECT) && len + 1 > h.voq_cfg.mark_threshold(&h.sched, index, dst_rack, now) {
            pk.flags |= flags::CE;
            h.stats.voq_marks += 1;
        }
        // While queued, `next_port` holds the ingress port (local index) for accounting.
        pk.next_port = ingress;
        h.voq[q].push_back(pkt, &mut self.arena);
        h.voq_len[q] += 1;
        if !h.ticking && !h.sched.is_fixed() {
            if let Some(t) = h.sched.next_boundary(now) {
                h.ticking = true;
                self.events.push(t, Ev::Circuit(0));
            }
        }
        let (c, p) = (h.circuit_port[index as usize], h.packet_port[index as usize]);
        self.kick_port(c);
        self.kick_port(p);
        true
    }

    /// Whether `port` is a ToR uplink fed by VOQs.
    #[inline]
    pub(super) fn is_voq_uplink(&self, port: u32) -> bool {
        self.hybrid.as_ref().is_some_and(|h| h.uplink[port as usize].is_some())
    }

    /// An idle ToR uplink takes the next frame its VOQs offer it now, if any.
    pub(super) fn kick_voq_uplink(&mut self, port: u32) {
        let now = self.now;
        let h = self.hybrid.as_mut().expect("hybrid on");
        let (tor, kind) = h.uplink[port as usize].expect("an uplink");
        let racks = h.racks;
        let rate = self.ports[port as usize].rate;
        let d = match kind {
            Uplink::Circuit => {
                let Some(d) = h.sched.dst_of(tor, now) else { return };
                let Some(head) = h.voq[(tor * racks + d) as usize].front() else { return };
                let ser = rate.tx_time(u64::from(self.arena.get(head).wire));
                if now + ser > h.sched.day_end(now) {
                    return;
                }
                d
            }
            Uplink::Packet => {
                let closed = h.cfg.night_packet_path == NightPacketPath::Closed;
                let start = h.turn[tor as usize];
                let mut pick = None;
                for i in 0..racks {
                    let d = (start + i) % racks;
                    if d == tor || h.voq_len[(tor * racks + d) as usize] == 0 || h.sched.up(tor, d, now) || (closed && h.sched.night_before(tor, d, now)) {
                        continue;
                    }
                    pick = Some(d);
                    break;
                }
                let Some(d) = pick else { return };
                h.turn[tor as usize] = (d + 1) % racks;
                d
            }
        };
        let q = (tor * racks + d) as usize;
        let pkt = h.voq[q].pop_front(&self.arena).expect("non-empty VOQ");
        h.voq_len[q] -= 1;
        let pk = self.arena.get(pkt);
        let (ingress, prio, wire, payload) = (pk.next_port, pk.prio() as usize, u64::from(pk.wire), pk.payload);
        if now >= h.stats_from {
            let (pay, data) = (u64::from(payload), pk.kind == PktKind::Data);
            match kind {
                Uplink::Circuit => {
                    h.stats.circuit_wire_bytes[q] += wire;
                    if data {
                        h.stats.circuit_payload_bytes[q] += pay;
                    }
                }
                Uplink::Packet if data => h.stats.packet_payload_bytes[q] += pay,
                Uplink::Packet => {}
            }
            if data && payload >= MIN_LATENCY_PAYLOAD {
                // Waiting in the VOQ, then serialisation and propagation over the two
                // links of the path (both alike in hybrid_racks), the far switch's
                // pipeline (its minimum) included.
                let p = &self.ports[port as usize];
                let far = self.switches[(p.peer - self.graph.hosts) as usize].cfg.latency.min();
                let lat = (now.0 - pk.enqueued.0) + 2 * (rate.tx_time(wire).0 + p.delay.0) + far.0;
                let bin = ((lat / BIN_PS) as usize).min(BINS - 1);
                h.hist_all[bin] += 1;
                match kind {
                    Uplink::Circuit => h.hist_circuit[bin] += 1,
                    Uplink::Packet => h.hist_packet[bin] += 1,
                }
            }
        }
        let Owner::Switch { local: egress, .. } = self.ports[port as usize].owner else { unreachable!("ToR uplink") };
        self.switches[tor as usize].buffer.add(egress as usize, ingress as usize, prio, wire);
        self.port_queue_add(port, wire);
        self.start_tx(port, pkt, ingress);
    }

    /// The circuit network's counters, with up times over `[stats_from, now)`.
    pub fn circuit_stats(&self) -> Option<CircuitStats> {
        let h = self.hybrid.as_ref()?;
        let (from, until) = (h.stats_from, self.now.max(h.stats_from));
        let circuit_up_ps = (0..h.racks * h.racks).map(|q| if q / h.racks == q % h.racks { 0 } else { h.sched.up_time(q / h.racks, q % h.racks, from, until).0 }).collect();
        let frames = h.hist_all.iter().sum();
        Some(CircuitStats {
            racks: h.racks,
            from_ps: from.0,
            until_ps: until.0,
            counters: h.stats.clone(),
            circuit_up_ps,
            circuit_bps: self.ports[h.circuit_port[0] as usize].rate.0,
            latency_us: LatencyReport { all: percentiles(&h.hist_all), circuit: percentiles(&h.hist_circuit), packet: percentiles(&h.hist_packet), frames },
        })
    }

    /// Frames in VOQ (src rack → dst rack) now (tests).
    pub fn voq_frames(&self, src: u32, dst: u32) -> u32 {
        self.hybrid.as_ref().map_or(0, |h| h.voq_len(src, dst))
    }
}
