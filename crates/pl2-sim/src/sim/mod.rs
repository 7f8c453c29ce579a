//! The simulation: explicit wiring of hosts, switches and links built from a
//! [`SimSpec`], and the event loop that drives them. One `Simulation` owns all its state
//! (no globals), so many can run in one process.
//!
//! Per hop a frame costs two events: `PortFree` when its serialisation ends and
//! `LinkHead` when it reaches the far node's output queue (the link's propagation, the
//! receiver's FEC latency and the switch pipeline are one FIFO per input, with only its
//! head in the event queue). A host's send path is one FIFO delay line (`HostTx`).
//!
//! By concern: what a run is built from (`spec`), the network's state (`network`),
//! the message table (`messages`); wiring (`build`, `faults`) and the event loop
//! (`run`); the host path (`host`) and the switch path (`switch`), the hybrid ToR and
//! circuit schedule (`hybrid`); application
//! workloads (`apps`); instrumentation: the trace (`trace`), probes (`probes`), the
//! latency breakdown (`breakdown`) and ideal completion times (`ideal`); the network's base round trip (`round_trip`). Nothing here
//! names a protocol: transports and switch programs are reached through their lists
//! ([`crate::transport`], [`crate::programs`]).

mod apps;
mod breakdown;
mod build;
mod faults;
mod host;
mod hybrid;
mod ideal;
mod layers;
mod messages;
mod network;
mod pfc;
mod sfc;
mod probes;
mod round_trip;
mod run;
mod spec;
mod switch;
mod trace;
mod trimming;

pub use crate::error::BuildError;
pub use crate::packet::MAX_TRANSPORTS;
pub use crate::transport::TransportConfig;
pub use faults::FaultSpec;
pub use pfc::{Deadlock, PfcStats};
pub use sfc::SfcStats;
pub use hybrid::{CircuitCounters, CircuitStats, LatencyReport};
pub use round_trip::base_round_trip;
pub use run::{Progress, ProgressClock, StopAt, StopReason};
pub use spec::{MetricsConfig, PersistentSpec, SimSpec, Source, StreamNext, TraceConfig};

use crate::config::NetworkConfig;
use crate::dist::DelayDist;
use crate::engine::{EventQueue, TimerSlot};
use crate::metrics::{Counters, Records};
use crate::net::egress::EgressQueues;
use crate::net::routing::RoutingTable;
use crate::net::topology::Graph;
use crate::packet::{PacketArena, PktId, SendSpec};
use crate::rng::SimRng;
use crate::transport::{Actions, HostTransport, ModuleStats};
use crate::units::SimTime;
use messages::{FrameCount, MsgSlot};
use network::{Host, Port, Switch};
use trace::Tracer;

/// A built simulation.
pub struct Simulation {
    pub(crate) now: SimTime,
    pub(crate) events: EventQueue,
    pub(crate) net: NetworkConfig,
    pub(crate) graph: Graph,
    pub(crate) ports: Vec<Port>,
    /// Switch egress queues by priority, per global port id (hosts use their NIC
    /// queues). Kept apart from `ports` so the per-frame port state stays compact.
    pub(crate) queues: Vec<EgressQueues>,
    pub(crate) hosts: Vec<Host>,
    pub(crate) switches: Vec<Switch>,
    pub(crate) routes: RoutingTable,
    /// Every host's instance of every transport: transport `t` of host `h` is at
    /// `t * hosts + h`.
    pub(crate) transports: Vec<HostTransport>,
    /// The host layer under each transport instance, if it runs over one (same index);
    /// empty when none does.
    pub(crate) layers: Vec<Option<crate::layer::HostLayers>>,
    /// The run's transports: index 0 is the default.
    pub(crate) transport_cfgs: Vec<TransportConfig>,
    /// Per transport index: how its frames spread over equal-cost next hops (`None`: each
    /// switch's `ecmp` setting).
    pub(crate) path_modes: [Option<crate::config::EcmpMode>; MAX_TRANSPORTS],
    pub(crate) arena: PacketArena,
    pub(crate) msgs: Vec<MsgSlot>,
    pub(crate) free_msgs: Vec<u32>,
    /// Per message slot.
    pub(crate) frame_counts: Vec<FrameCount>,
    pub(crate) live_msgs: u64,
    pub(crate) next_msg_id: u64,
    pub(crate) sources: Vec<Source>,
    pub(crate) sources_active: u32,
    pub(crate) persistent: Vec<PersistentSpec>,
    pub(crate) apps: crate::workload::Apps,
    pub(crate) faults: Vec<FaultSpec>,
    pub(crate) metrics: MetricsConfig,
    pub(crate) counters: Counters,
    pub(crate) records: Records,
    /// Spare action buffers, boxed so that lending one to a transport moves a pointer,
    /// not the buffer's vectors; a pool, so that a transport called while another's
    /// actions are being carried out gets a buffer with its capacity kept.
    pub(crate) actions: Vec<Box<Actions>>,
    /// Spare list for the threads an action batch releases (`apply_actions`).
    pub(crate) released: Vec<u16>,
    pub(crate) group: Vec<PktId>,
    pub(crate) emit: Vec<SendSpec>,
    pub(crate) program_probes: Vec<(u32, u32, &'static str, f64)>,
    /// Thins probes onto `metrics.probe_interval`'s grid.
    pub(crate) probe_grid: probes::ProbeGrid,
    /// Memo of ideal completion times (see `ideal.rs`); looked up, never iterated.
    pub(crate) ideal_cache: ideal::IdealCache,
    /// Every link's FEC latency (`link.fec_jitter`), drawn from the sending port's stream.
    pub(crate) link_fec: DelayDist,
    pub(crate) tracer: Option<Box<Tracer>>,
    /// Whether any `DropNth` rule exists: frames are matched against the rules only then
    /// (other faults must not cost a scan per frame).
    pub(crate) drop_rules: bool,
    /// The send path costs nothing (the send latency and every send-side CPU cost are
    /// zero, no offload): frames go from their transport straight into the NIC queues,
    /// as the delay line would pass them on at once (`host.rs`).
    pub(crate) send_path_free: bool,
    /// Per-frame times for the latency breakdown (`metrics.breakdown`).
    pub(crate) breakdown: Option<Vec<breakdown::PktTimes>>,
    pub(crate) critical: Option<breakdown::Critical>,
    /// Every transport timer: its slot, host, transport and the transport's own id.
    pub(crate) timers: Vec<(TimerSlot, u32, u8, u32)>,
    pub(crate) port_rng: Vec<SimRng>,
    /// PFC's state, if any switch runs it.
    pub(crate) pfc: Option<Box<pfc::Pfc>>,
    /// SFC's state, if any switch runs it.
    pub(crate) sfc: Option<Box<sfc::Sfc>>,
    /// The hybrid racks' VOQs and circuit schedule, if the topology is `hybrid_racks`.
    pub(crate) hybrid: Option<Box<hybrid::Hybrid>>,
}

impl Simulation {
    pub fn now(&self) -> SimTime {
        self.now
    }
    pub fn counters(&self) -> &Counters {
        &self.counters
    }
    /// The default transport (the one messages use unless their source names another).
    pub fn transport_config(&self) -> &TransportConfig {
        &self.transport_cfgs[0]
    }
    /// Every transport of the run, the default first.
    pub fn transport_configs(&self) -> &[TransportConfig] {
        &self.transport_cfgs
    }
    /// Host `h`'s instance of transport `t`.
    pub(crate) fn transport_mut(&mut self, t: u8, h: u32) -> &mut HostTransport {
        let i = t as usize * self.graph.hosts as usize + h as usize;
        &mut self.transports[i]
    }
    pub fn host_count(&self) -> u32 {
        self.graph.hosts
    }
    pub fn graph(&self) -> &Graph {
        &self.graph
    }
    /// Takes the records accumulated since the last call (bounded memory on long runs).
    pub fn drain_records(&mut self) -> Records {
        std::mem::take(&mut self.records)
    }
    /// Frames created and neither delivered nor dropped: on a wire, in a queue, in a
    /// host's send path.
    pub fn packets_in_flight(&self) -> u64 {
        self.arena.live()
    }
    /// Most frames alive at once during the run (the packet arena's high-water mark; each
    /// takes 64 bytes).
    pub fn packets_peak(&self) -> u64 {
        self.arena.capacity_used() as u64
    }
    /// Messages started and not yet delivered.
    pub fn messages_in_flight(&self) -> u64 {
        self.live_msgs
    }
    /// Largest number of frames alive at once (arena high-water mark).
    pub fn packet_high_water(&self) -> usize {
        self.arena.capacity_used()
    }
    /// Exact maximum bytes ever queued at each egress port (global port order: link i
    /// has port 2i at its `a` end and 2i+1 at its `b` end).
    pub fn port_max_queue(&self) -> Vec<u64> {
        self.ports.iter().map(|p| p.max_queue).collect()
    }
    /// PFC's counters (`None`: no switch runs PFC), with the paused time up to now.
    pub fn pfc_stats(&self) -> Option<PfcStats> {
        let pfc = self.pfc.as_ref()?;
        Some(PfcStats { paused_ps: self.pfc_paused_ps(), ..pfc.stats.clone() })
    }
    /// SFC's counters (`None`: no switch runs SFC).
    pub fn sfc_stats(&self) -> Option<SfcStats> {
        Some(self.sfc.as_ref()?.stats.clone())
    }
    /// The pause deadlock that stopped the run, if one did.
    pub fn pause_deadlock(&self) -> Option<&Deadlock> {
        self.pfc.as_ref()?.deadlock.as_ref()
    }
    /// Frames each egress port's trimming queue cut to their header (global port order).
    pub fn port_trims(&self) -> Vec<u64> {
        self.ports.iter().map(|p| p.trims).collect()
    }
    /// Wire bytes serialised by each egress port.
    pub fn port_tx_bytes(&self) -> Vec<u64> {
        self.ports.iter().map(|p| p.tx_bytes).collect()
    }
    /// Egress port of host `h` (its uplink).
    pub fn host_port(&self, h: u32) -> u32 {
        self.hosts[h as usize].port
    }
    /// The egress port of a switch towards host `h` (the host's downlink).
    pub fn host_downlink(&self, h: u32) -> u32 {
        self.hosts[h as usize].port ^ 1
    }
    /// Bytes queued now at a port.
    pub fn port_queued(&self, port: u32) -> u64 {
        self.ports[port as usize].queued
    }
    /// Every module's counters summed over the run, by module (`None`: the run does not
    /// use it): each switch program's, then each host instance's.
    pub fn module_stats(&self) -> ModuleStats {
        let mut st = ModuleStats::default();
        for sw in &self.switches {
            sw.program.report(&mut st, &self.counters);
        }
        for t in &self.transports {
            t.report(&mut st);
        }
        for l in self.layers.iter().flatten() {
            l.report(&mut st.layers);
        }
        st
    }
}
