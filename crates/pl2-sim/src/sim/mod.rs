//! The simulation: explicit wiring of hosts, switches and links built from a
//! [`SimSpec`], and the event loop that drives them. One `Simulation` owns all its state
//! (no globals), so many can run in one process.
//!
//! Per hop a frame costs two events: `PortFree` when its serialisation ends and
//! `LinkHead` when it reaches the far node's output queue (the link's propagation, the
//! receiver's FEC latency and the switch pipeline are one FIFO per input, with only its
//! head in the event queue). A host's send path is one FIFO delay line (`HostTx`).

mod apps;
mod breakdown;
mod build;
mod faults;
mod host;
mod ideal;
mod probes;
mod run;
mod switch;
mod trace;

pub use crate::error::BuildError;
pub use faults::FaultSpec;
pub use crate::packet::MAX_TRANSPORTS;
pub use run::{Progress, ProgressClock, StopAt, StopReason};

use crate::config::NetworkConfig;
use crate::dist::DelayDist;
use crate::engine::{EventQueue, TimerSlot};
use crate::metrics::{Counters, LazyWindow, MessageRecord, Records};
use crate::net::buffer::SharedBuffer;
use crate::net::nic::NicQueues;
use crate::net::routing::RoutingTable;
use crate::net::topology::Graph;
use crate::packet::{PacketArena, PktId};
use crate::rng::SimRng;
use crate::transport::{Actions, HostTransport, ModuleStats};
pub use crate::transport::TransportConfig;
use crate::units::{BitsPerSec, Duration, SimTime};
use crate::workload::MessageSpec;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Where messages come from. `transport` is the index of the transport its messages use
/// (see [`SimSpec::transports`]).
#[derive(Clone)]
pub enum Source {
    /// A fixed list, sorted by time (a message-list file, or a one-shot pattern).
    List { msgs: Vec<MessageSpec>, next: usize, transport: u8 },
    /// Open-loop Poisson arrivals at one host.
    Poisson { gen: Box<crate::workload::PoissonSource>, rng: SimRng, pending: Option<MessageSpec>, transport: u8 },
}

impl Source {
    /// The transport its messages use.
    pub fn transport(&self) -> u8 {
        match self {
            Source::List { transport, .. } | Source::Poisson { transport, .. } => *transport,
        }
    }
}

/// A thread that always has another message to send (closed loop): when its transport
/// releases it, the next message of `size` bytes to `dst` starts at once.
#[derive(Clone, Debug, PartialEq)]
pub struct PersistentSpec {
    pub host: u32,
    pub thread: u16,
    pub dst: u32,
    pub size: u64,
    pub prio: u8,
    pub start: SimTime,
    /// The transport its messages use (see [`SimSpec::transports`]).
    pub transport: u8,
}

/// Measurement settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct MetricsConfig {
    /// Window of the per-port queue maxima and per-host goodput series. Default 10 µs.
    pub window: Duration,
    /// Keep one record per dropped frame (counts are always kept). Default true.
    pub drop_records: bool,
    /// Per-frame trace (off by default; costs nothing when off).
    pub trace: Option<TraceConfig>,
    /// Keep the values protocols publish about their flows. Default true.
    pub probes: bool,
    /// Keep, of each (host, flow, name) probe series, only the last value published in
    /// each window of this length (at the time it was published): a sample-and-hold
    /// reading at every window's end is unchanged, and long runs write at most one row
    /// per series and window. Default 0: every published value.
    // Left out of the canonical form at its default, so existing scenarios keep their
    // hash; the schema (and so the reference) still shows it.
    #[serde(skip_serializing_if = "Duration::is_zero")]
    #[schemars(!skip_serializing_if)]
    pub probe_interval: Duration,
    /// Record where each message's latency went (seven parts that add up to it). Default
    /// false.
    pub breakdown: bool,
}

impl Default for MetricsConfig {
    fn default() -> Self {
        MetricsConfig { window: Duration::from_us(10), drop_records: true, trace: None, probes: true, probe_interval: Duration::ZERO, breakdown: false }
    }
}

/// Which frames to trace: all filters must match (an empty list matches everything).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct TraceConfig {
    /// Flow ids (for raw Ethernet, message ids).
    pub flows: Vec<u32>,
    /// Nodes where events happen, `"h3"` or `"s0"`.
    pub nodes: Vec<String>,
    /// Global port ids.
    pub ports: Vec<u32>,
    pub from: Duration,
    pub until: Option<Duration>,
    /// Stop tracing after this many records. Default 1,000,000.
    pub max_records: u64,
}

impl Default for TraceConfig {
    fn default() -> Self {
        TraceConfig { flows: vec![], nodes: vec![], ports: vec![], from: Duration::ZERO, until: None, max_records: 1_000_000 }
    }
}

/// A trace filter with node names resolved.
pub(crate) struct Tracer {
    pub cfg: TraceConfig,
    pub nodes: Vec<u32>,
    pub written: u64,
}

/// Everything needed to build a simulation.
#[derive(Clone)]
pub struct SimSpec {
    pub net: NetworkConfig,
    /// The transport of messages that name no other (index 0).
    pub transport: TransportConfig,
    /// Further transports (indices 1, 2, ...) that sources, streams and applications can
    /// select, so one run can mix, say, TCP RPCs with UDP background. Every host runs
    /// every transport; a frame is handed to the receiver's instance of the transport
    /// that sent it. At most [`MAX_TRANSPORTS`] in all.
    pub transports: Vec<TransportConfig>,
    pub seed: u64,
    pub sources: Vec<Source>,
    pub persistent: Vec<PersistentSpec>,
    /// Application workloads (closed-loop RPCs, parameter-server shuffles).
    pub apps: Vec<crate::workload::AppSpec>,
    pub faults: Vec<FaultSpec>,
    pub metrics: MetricsConfig,
}

/// Who owns an egress port.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Owner {
    Host(u32),
    Switch { index: u32, local: u32 },
}

/// One direction of a link: the egress queue at `node` and the wire to `peer`.
pub(crate) struct Port {
    pub owner: Owner,
    pub peer: u32,
    /// Host index of the peer, if the peer is a host.
    pub peer_host: Option<u32>,
    pub rate: BitsPerSec,
    pub delay: Duration,
    pub busy: bool,
    pub cur_wire: u64,
    pub cur_prio: u8,
    pub cur_ingress: u32,
    pub cur_data: bool,
    /// Bytes queued including the frame being serialised.
    pub queued: u64,
    /// Frames on the wire or in the far node's input pipeline, oldest first, each
    /// carrying the time the frame behind it reaches the far node (see
    /// `Simulation::pipe_push`); the head's time is its `LinkHead` event's.
    pub pipe: crate::packet::PktList,
    pub pipe_last: SimTime,
    pub up: bool,
    pub loss: f64,
    pub max_queue: u64,
    pub tx_bytes: u64,
    pub window: LazyWindow,
}

pub(crate) struct Host {
    pub port: u32,
    pub nic: NicQueues,
    pub txline: VecDeque<(SimTime, PktId)>,
    pub txline_last: SimTime,
    pub tx_cpu_free: SimTime,
    pub rx_cpu_free: SimTime,
    pub rng: SimRng,
    pub thread_busy: Vec<bool>,
    pub thread_queue: Vec<VecDeque<u32>>,
    pub shared_queue: VecDeque<u32>,
    /// Global timer index of each transport's timer ids, by transport then id
    /// (`u32::MAX`: none yet).
    pub timers: Vec<Vec<u32>>,
    pub up: bool,
    pub goodput: LazyWindow,
    /// The frame being serialised, if its transport asked to hear when it is done
    /// (`flags::NOTIFY_TX_DONE`).
    pub tx_notify: Option<crate::packet::Packet>,
}

pub(crate) struct Switch {
    pub node: u32,
    pub cfg: crate::config::SwitchConfig,
    pub program: crate::programs::SwitchProgram,
    pub buffer: SharedBuffer,
    pub rng: SimRng,
    pub ecmp_seed: u64,
}

pub(crate) struct MsgSlot {
    pub gen: u16,
    pub live: bool,
    /// The transport carrying it.
    pub transport: u8,
    pub tag: apps::AppTag,
    pub rec: MessageRecord,
}

/// The data frames of the message in a slot that are neither delivered nor dropped yet,
/// for a transport that never resends (`Protocol::frames_if_never_resent`). Kept apart
/// from [`MsgSlot`], in 8 bytes a slot, because every delivered frame updates it.
#[derive(Copy, Clone, Default)]
pub(crate) struct FrameCount {
    pub gen: u16,
    /// A data frame of the message was dropped.
    pub lost: bool,
    /// [`UNCOUNTED`] for a transport that may resend frames.
    pub left: u32,
}

/// `FrameCount::left` of a message whose transport may resend frames.
pub(crate) const UNCOUNTED: u32 = u32::MAX;

/// A built simulation.
pub struct Simulation {
    pub(crate) now: SimTime,
    pub(crate) events: EventQueue,
    pub(crate) net: NetworkConfig,
    pub(crate) graph: Graph,
    pub(crate) ports: Vec<Port>,
    /// Switch egress queues by priority, per global port id (hosts use their NIC
    /// queues). Kept apart from `ports` so the per-frame port state stays compact.
    pub(crate) queues: Vec<crate::net::egress::EgressQueues>,
    pub(crate) hosts: Vec<Host>,
    pub(crate) switches: Vec<Switch>,
    pub(crate) routes: RoutingTable,
    /// Every host's instance of every transport: transport `t` of host `h` is at
    /// `t * hosts + h`.
    pub(crate) transports: Vec<HostTransport>,
    /// The run's transports: index 0 is the default.
    pub(crate) transport_cfgs: Vec<TransportConfig>,
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
    pub(crate) apps: apps::Apps,
    pub(crate) faults: Vec<FaultSpec>,
    pub(crate) metrics: MetricsConfig,
    pub(crate) counters: Counters,
    pub(crate) records: Records,
    pub(crate) actions: Actions,
    pub(crate) group: Vec<PktId>,
    pub(crate) emit: Vec<crate::transport::SendSpec>,
    pub(crate) program_probes: Vec<(u32, u32, &'static str, f64)>,
    /// Thins probes onto `metrics.probe_interval`'s grid.
    pub(crate) probe_grid: probes::ProbeGrid,
    /// Memo of ideal completion times (see `ideal.rs`); looked up, never iterated.
    pub(crate) ideal_cache: ideal::IdealCache,
    pub(crate) link_fec: Vec<DelayDist>,
    pub(crate) tracer: Option<Box<Tracer>>,
    /// Whether any `DropNth` rule exists: frames are matched against the rules only then
    /// (other faults must not cost a scan per frame).
    pub(crate) drop_rules: bool,
    /// Per-frame times for the latency breakdown (`metrics.breakdown`).
    pub(crate) breakdown: Option<Vec<breakdown::PktTimes>>,
    pub(crate) critical: Option<breakdown::Critical>,
    /// Every transport timer: its slot, host, transport and the transport's own id.
    pub(crate) timers: Vec<(TimerSlot, u32, u8, u32)>,
    pub(crate) port_rng: Vec<SimRng>,
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
        st
    }
}
