//! What a simulation is built from, as the scenario layer hands it over: the
//! [`SimSpec`], its message sources and persistent streams, and the measurement settings.

use super::faults::FaultSpec;
use crate::config::NetworkConfig;
use crate::rng::SimRng;
use crate::transport::TransportConfig;
use crate::units::{Duration, SimTime};
use crate::workload::MessageSpec;
use serde::{Deserialize, Serialize};

/// Where messages come from. `transport` is the index of the transport its messages use
/// (see [`SimSpec::transports`]).
#[derive(Clone)]
pub enum Source {
    /// A fixed list, sorted by time (a message-list file, or a one-shot pattern).
    List { msgs: Vec<MessageSpec>, next: usize, transport: u8, workload: u16 },
    /// Open-loop Poisson arrivals at one host.
    Poisson { gen: Box<crate::workload::PoissonSource>, rng: SimRng, pending: Option<MessageSpec>, transport: u8, workload: u16 },
}

impl Source {
    /// The transport its messages use.
    pub fn transport(&self) -> u8 {
        match self {
            Source::List { transport, .. } | Source::Poisson { transport, .. } => *transport,
        }
    }
}

/// When a persistent stream's next message starts.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StreamNext {
    /// When the transport releases the sending thread (a blocking send returns): the
    /// transport's own bound on what a thread may queue paces the loop. Needs a transport
    /// that holds the thread (raw, pl2, rds, tcp, polo by default).
    #[default]
    Release,
    /// When the previous message is delivered to the receiving application: one message
    /// outstanding per stream whatever the transport does with the thread (an application
    /// that waits for each send's completion, or a send buffer of one message freed when
    /// the receiver has it), so every transport can run it. A message that is never
    /// delivered stops its stream, as it would stop such an application.
    Delivery,
}

impl StreamNext {
    /// Whether it is the default, [`StreamNext::Release`] (left out of canonical forms, so
    /// scenarios written before the setting keep their identity).
    pub fn is_release(&self) -> bool {
        *self == StreamNext::Release
    }
}

/// A thread that always has another message to send (closed loop): when its transport
/// releases it (or, with [`StreamNext::Delivery`], when its last message is delivered),
/// the next message of `size` bytes to `dst` starts at once.
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
    /// The workload it belongs to (the `workload` column of the message records).
    pub workload: u16,
    /// When its next message starts.
    pub next: StreamNext,
}

/// Measurement settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct MetricsConfig {
    /// Window of the per-port queue series (each window's maximum, exact time-averaged and end occupancy) and per-host goodput series. Default 10 µs.
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
    /// Trace events at or after this simulated time, a duration (`"10us"`). Default 0.
    pub from: Duration,
    /// Trace events before this simulated time, a duration. Default none (until the run
    /// ends).
    pub until: Option<Duration>,
    /// Stop tracing after this many records. Default 1,000,000.
    pub max_records: u64,
}

impl Default for TraceConfig {
    fn default() -> Self {
        TraceConfig { flows: vec![], nodes: vec![], ports: vec![], from: Duration::ZERO, until: None, max_records: 1_000_000 }
    }
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
    /// that sent it. At most [`crate::packet::MAX_TRANSPORTS`] in all.
    pub transports: Vec<TransportConfig>,
    pub seed: u64,
    pub sources: Vec<Source>,
    pub persistent: Vec<PersistentSpec>,
    /// Application workloads (closed-loop RPCs, parameter-server shuffles).
    pub apps: Vec<crate::workload::AppSpec>,
    pub faults: Vec<FaultSpec>,
    pub metrics: MetricsConfig,
}

