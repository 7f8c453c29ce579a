//! `[[workload]]` tables: Poisson traffic from a size distribution, one-shot patterns
//! (incast, outcast, permutation, all-to-all), persistent closed-loop streams, and
//! users' message-list files.

use pl2_sim::units::{Bytes, Duration};
use serde::{de, Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// A set of hosts: `"all"`, a range `"0..4"` (end excluded), or a list `[0, 2, 5]`.
#[derive(Clone, Debug, PartialEq, Default)]
pub enum HostSet {
    #[default]
    All,
    Range(u32, u32),
    List(Vec<u32>),
}

impl HostSet {
    /// The hosts, checked against the network's `n` hosts.
    pub fn resolve(&self, n: u32) -> Result<Vec<u32>, String> {
        let v: Vec<u32> = match self {
            HostSet::All => (0..n).collect(),
            HostSet::Range(a, b) => (*a..*b).collect(),
            HostSet::List(l) => l.clone(),
        };
        if v.is_empty() {
            return Err("the set is empty".into());
        }
        if let Some(h) = v.iter().find(|&&h| h >= n) {
            return Err(format!("host {h} does not exist (hosts are 0..{n})"));
        }
        Ok(v)
    }
}

impl schemars::JsonSchema for HostSet {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "HostSet".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "description": "\"all\", a range \"0..4\" (end excluded), or a list of host indices [0, 2, 5]" })
    }
}

impl Serialize for HostSet {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            HostSet::All => s.serialize_str("all"),
            HostSet::Range(a, b) => s.serialize_str(&format!("{a}..{b}")),
            HostSet::List(l) => l.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for HostSet {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> de::Visitor<'de> for V {
            type Value = HostSet;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("\"all\", a range \"0..4\", or a list of host indices [0, 1]")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<HostSet, E> {
                if v == "all" {
                    return Ok(HostSet::All);
                }
                let bad = || E::custom(format!("{v:?} is not a host set; write \"all\", \"0..4\" or [0, 1]"));
                let (a, b) = v.split_once("..").ok_or_else(bad)?;
                let (a, b): (u32, u32) = (a.trim().parse().map_err(|_| bad())?, b.trim().parse().map_err(|_| bad())?);
                if a >= b {
                    return Err(E::custom(format!("range {v:?} is empty; the end is excluded")));
                }
                Ok(HostSet::Range(a, b))
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<HostSet, A::Error> {
                let mut v = Vec::new();
                while let Some(x) = seq.next_element::<u32>()? {
                    v.push(x);
                }
                Ok(HostSet::List(v))
            }
        }
        d.deserialize_any(V)
    }
}

fn one() -> u32 {
    1
}
fn one16() -> u16 {
    1
}
fn all() -> HostSet {
    HostSet::All
}

/// One `[[workload]]` table: a source of traffic (`kind` and its fields) and the
/// transport its messages use.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Workload {
    /// The transport carrying this workload's messages: the name of a
    /// `[transports.NAME]` table. Default: the scenario's `[transport]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transport: Option<String>,
    #[serde(flatten)]
    pub kind: WorkloadConfig,
}

/// One source of traffic.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum WorkloadConfig {
    /// Open-loop Poisson message arrivals at each host of `hosts`, offering `load` (a
    /// fraction of the host's link rate counted in wire bytes, ≤ 1) with sizes from
    /// `sizes`: a built-in distribution (`w1`–`w5`, `websearch`, `fb_hadoop`,
    /// `google_rpc_2008`, `ali_storage_2019`), a fixed size (`"6KiB"`), or a file path
    /// (with `sizes_format` = `homa` | `homa_packets` | `percent`). Messages go to
    /// `dests` (default: uniformly to every other host) and wait for a free thread of
    /// the sender's pool.
    Poisson {
        /// Sending hosts, each an independent Poisson source. Default `"all"`.
        #[serde(default = "all")]
        hosts: HostSet,
        /// Offered load per sending host, a fraction in (0, 1] of its link rate, counting
        /// the messages' wire bytes (headers, preamble and IFG). Required.
        load: f64,
        /// Message sizes: a built-in name, a size with a unit (`"6KiB"`), or a file path
        /// relative to the scenario file. Required.
        sizes: String,
        /// How a `sizes` file is written: `homa` (the mean on line 1, then `bytes
        /// cumulative_probability`), `homa_packets` (Homa's W5 layout in 1442 B packets)
        /// or `percent` (`bytes cumulative_percent`). Default none: `homa`; ignored for
        /// built-ins and fixed sizes.
        #[serde(default)]
        sizes_format: Option<String>,
        /// Keep only sizes ≤ this (the conditional distribution). Default none.
        #[serde(default)]
        truncate: Option<Bytes>,
        /// Destinations, each message's drawn uniformly among them except its sender;
        /// every sender needs one other than itself. Default `"all"`.
        #[serde(default = "all")]
        dests: HostSet,
        /// Message priority, 0..7 (7 highest), recorded in `messages`; read only by
        /// transports that rank messages (PL2 `priorities`, NDP `pull_order =
        /// "priority"`), not the frames' 802.1Q class. Default 0.
        #[serde(default)]
        priority: u8,
        /// Start of the arrivals, a duration: the first comes one exponential gap later.
        /// Default 0.
        #[serde(default)]
        start: Duration,
        /// Last arrival before this. Default: the run's duration.
        #[serde(default)]
        stop: Option<Duration>,
    },
    /// Every host of `senders` sends `count` messages of `size` to `receiver`, the
    /// first at `start`, then every `interval`.
    Incast {
        /// Sending hosts, each listed once, not the receiver. Required.
        senders: HostSet,
        /// The receiving host's index. Required.
        receiver: u32,
        /// Payload of each message, a size (`"64KiB"`), at least 1 B. Required.
        size: Bytes,
        /// Messages per sender, at least 1. Default 1.
        #[serde(default = "one")]
        count: u32,
        /// Time between a sender's successive messages, a duration. Default 0 (all at
        /// `start`).
        #[serde(default)]
        interval: Duration,
        /// When the first messages are submitted, a duration. Default 0.
        #[serde(default)]
        start: Duration,
        /// Message priority, 0..7 (7 highest), recorded in `messages`; read only by
        /// transports that rank messages (PL2 `priorities`, NDP `pull_order =
        /// "priority"`), not the frames' 802.1Q class. Default 0.
        #[serde(default)]
        priority: u8,
    },
    /// Recurring incasts at Poisson times (HPCC's and the SFC slides' incast traffic):
    /// each picks a receiver uniformly from `hosts` and `fan_in` distinct senders
    /// uniformly from the others; each sender sends one message of `size`. The incasts'
    /// payload offers `load` × the summed link rates of `hosts`: one incast every
    /// `fan_in × size × 8 / (load × Σ rates)` on average. From `start` until `stop`
    /// (default: the run's duration).
    PoissonIncast {
        /// The hosts receivers and senders are drawn from, each listed once. Default
        /// `"all"`.
        #[serde(default = "all")]
        hosts: HostSet,
        /// Senders per incast, from 1 to the number of `hosts` − 1. Required.
        fan_in: u32,
        /// Payload each sender sends, a size, at least 1 B. Required.
        size: Bytes,
        /// Offered payload load, a fraction in (0, 1] of the summed link rates of `hosts`.
        /// Required.
        load: f64,
        /// Incasts happen after this, a duration. Default 0.
        #[serde(default)]
        start: Duration,
        /// Incasts happen before this, a duration. Default: the run's duration.
        #[serde(default)]
        stop: Option<Duration>,
        /// Message priority, 0..7 (7 highest), recorded in `messages`; read only by
        /// transports that rank messages (PL2 `priorities`, NDP `pull_order =
        /// "priority"`), not the frames' 802.1Q class. Default 0.
        #[serde(default)]
        priority: u8,
    },
    /// `sender` sends `count` messages of `size` to every host of `receivers`.
    Outcast {
        /// The sending host's index. Required.
        sender: u32,
        /// Receiving hosts, each listed once, not the sender. Required.
        receivers: HostSet,
        /// Payload of each message, a size, at least 1 B. Required.
        size: Bytes,
        /// Messages to each receiver, at least 1. Default 1.
        #[serde(default = "one")]
        count: u32,
        /// Time between successive messages to each receiver, a duration. Default 0 (all
        /// at `start`).
        #[serde(default)]
        interval: Duration,
        /// When the first messages are submitted, a duration. Default 0.
        #[serde(default)]
        start: Duration,
        /// Message priority, 0..7 (7 highest), recorded in `messages`; read only by
        /// transports that rank messages (PL2 `priorities`, NDP `pull_order =
        /// "priority"`), not the frames' 802.1Q class. Default 0.
        #[serde(default)]
        priority: u8,
    },
    /// A random derangement of all hosts: each sends one message of `size` to another.
    Permutation {
        /// Payload of each message, a size, at least 1 B. Required.
        size: Bytes,
        /// When every message is submitted, a duration. Default 0.
        #[serde(default)]
        start: Duration,
        /// Message priority, 0..7 (7 highest), recorded in `messages`; read only by
        /// transports that rank messages (PL2 `priorities`, NDP `pull_order =
        /// "priority"`), not the frames' 802.1Q class. Default 0.
        #[serde(default)]
        priority: u8,
    },
    /// Every host of `hosts` sends one message of `size` to every other.
    AllToAll {
        /// The hosts taking part, at least 2. Default `"all"`.
        #[serde(default = "all")]
        hosts: HostSet,
        /// Payload of each message, a size, at least 1 B. Required.
        size: Bytes,
        /// When every message is submitted, a duration. Default 0.
        #[serde(default)]
        start: Duration,
        /// Message priority, 0..7 (7 highest), recorded in `messages`; read only by
        /// transports that rank messages (PL2 `priorities`, NDP `pull_order =
        /// "priority"`), not the frames' 802.1Q class. Default 0.
        #[serde(default)]
        priority: u8,
    },
    /// Closed loop: `threads` threads on each host of `senders` always have a message of
    /// `size` for `receiver`; the next starts as soon as the transport releases the
    /// thread (`next = "release"`) or the previous one is delivered (`next =
    /// "delivery"`). Needs `network.host.threads` ≥ `threads`.
    Persistent {
        /// Sending hosts, each listed once, not the receiver. Required.
        senders: HostSet,
        /// The receiving host's index. Required.
        receiver: u32,
        /// Payload of each message, a size, at least 1 B. Required.
        size: Bytes,
        /// Streams per sender, on its threads 0 .. `threads` − 1 (none of them running
        /// another persistent stream), at most `network.host.threads`. Default 1.
        #[serde(default = "one16")]
        threads: u16,
        /// When each stream submits its first message, a duration. Default 0.
        #[serde(default)]
        start: Duration,
        /// When a stream's next message starts: `"release"` (default), when the transport
        /// releases the sending thread, so the transport's own bound on what a thread may
        /// queue paces the loop (raw, pl2, rds, tcp and polo hold the thread; homa, ndp,
        /// phost and roce free it at once and are refused); `"delivery"`, when the
        /// previous message reaches the receiving application: one message outstanding
        /// per stream on every transport (an application waiting for each send's
        /// completion; a message never delivered stops its stream).
        #[serde(default, skip_serializing_if = "pl2_sim::sim::StreamNext::is_release")]
        #[schemars(!skip_serializing_if)]
        next: pl2_sim::sim::StreamNext,
        /// Message priority, 0..7 (7 highest), recorded in `messages`; read only by
        /// transports that rank messages (PL2 `priorities`, NDP `pull_order =
        /// "priority"`), not the frames' 802.1Q class. Default 0.
        #[serde(default)]
        priority: u8,
    },
    /// Messages from a CSV file `time,src,dst,size,thread,priority` (see the user guide).
    List {
        /// Path of the CSV file, relative to the scenario file. Required.
        file: String,
    },
    /// Closed-loop request/response traffic (the PL2 paper's memcached GETs, §6.1):
    /// each client keeps `concurrency` requests outstanding, one per connection and
    /// thread; a server answers after a service time. Results: the `rpcs` table and
    /// `rpcs` in the summary (two-way latency, transactions per second).
    Rpc(RpcWorkload),
    /// A synchronous parameter-server shuffle (the PL2 paper's VGG16 training, §6.2.3):
    /// every worker pushes its gradient chunk to every server at once, optionally the
    /// servers send the updated chunks back, then the next iteration starts. Results:
    /// the `iterations` table and `iterations` in the summary.
    PsShuffle(PsShuffleWorkload),
}

/// A delay distribution, a duration or a table, checked later by the application's
/// validation (so the error names the field: serde loses the path inside workloads).
fn delay_unchecked<'de, D: Deserializer<'de>>(d: D) -> Result<pl2_sim::dist::DelayDist, D::Error> {
    struct V;
    impl<'de> de::Visitor<'de> for V {
        type Value = pl2_sim::dist::DelayDist;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a duration such as \"1us\" or a table {kind = \"uniform\", min = ..., max = ...}")
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
            use serde::de::IntoDeserializer;
            Ok(pl2_sim::dist::DelayDist::Const { value: Duration::deserialize(v.into_deserializer())? })
        }
        fn visit_map<A: de::MapAccess<'de>>(self, m: A) -> Result<Self::Value, A::Error> {
            pl2_sim::dist::DelayDist::deserialize(de::value::MapAccessDeserializer::new(m))
        }
    }
    d.deserialize_any(V)
}

fn d_concurrency() -> u16 {
    1
}
fn d_request() -> Bytes {
    Bytes(pl2_sim::workload::MEMCACHED_GET_REQUEST_BYTES)
}
fn d_response() -> Bytes {
    Bytes(4096 + pl2_sim::workload::MEMCACHED_GET_RESPONSE_HEADER_BYTES)
}
fn d_iterations() -> u32 {
    100
}
fn d_gradient() -> Bytes {
    Bytes(pl2_sim::workload::VGG16_GRADIENT_BYTES)
}
fn d_workers() -> HostSet {
    HostSet::Range(0, 4)
}
fn d_ps_servers() -> HostSet {
    HostSet::Range(4, 6)
}

/// When a parameter-server shuffle's worker starts its next iteration.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Barrier {
    /// When every worker is done with the iteration.
    #[default]
    Global,
    /// When this worker is done with it.
    Worker,
}

/// `kind = "rpc"`. Connection `c` (0 ≤ c < `concurrency`) of the `i`-th client runs on
/// client thread `first_thread + c`, talks to server `servers[(i · concurrency + c) mod
/// len(servers)]` and is answered by that server's thread `first_thread + c` (clients
/// sharing a server share its threads: their responses queue there). A request is sent,
/// delivered to the server application, served for `service`, answered; when the
/// response is delivered the client thinks for `think` and sends the next request. An
/// RPC's latency runs from the request's send call to the response's delivery. Needs
/// `network.host.threads` ≥ `first_thread + concurrency`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RpcWorkload {
    /// Client hosts. Required.
    pub clients: HostSet,
    /// Server hosts (none of them a client). Required.
    pub servers: HostSet,
    /// Outstanding requests (connections, threads) per client. Default 1.
    #[serde(default = "d_concurrency")]
    pub concurrency: u16,
    /// First thread the connections use on clients and servers. Default 0.
    #[serde(default)]
    pub first_thread: u16,
    /// Request payload. Default 88 B: a memcached binary-protocol GET, 24 B header and a
    /// 64 B key.
    #[serde(default = "d_request")]
    pub request_size: Bytes,
    /// Response payload. Default 4124 B: a 4 KiB value behind the 24 B header and 4 B
    /// flags of a binary GET response (1 KiB values: "1052B").
    #[serde(default = "d_response")]
    pub response_size: Bytes,
    /// Server time from the request's delivery to the response's send call: a duration
    /// or a distribution table. Default 0.
    #[serde(default, deserialize_with = "delay_unchecked")]
    pub service: pl2_sim::dist::DelayDist,
    /// Client time from a response's delivery to the next request. Default 0.
    #[serde(default, deserialize_with = "delay_unchecked")]
    pub think: pl2_sim::dist::DelayDist,
    /// When every connection sends its first request. Default 0.
    #[serde(default)]
    pub start: Duration,
    /// No request is sent at or after this. Default: none (until the run ends).
    #[serde(default)]
    pub stop: Option<Duration>,
    /// RPCs per connection. Default: no limit.
    #[serde(default)]
    pub count: Option<u64>,
    /// 802.1Q priority of requests and responses. Default 0.
    #[serde(default)]
    pub priority: u8,
}

/// `kind = "ps_shuffle"`. `gradient_size` is split into one byte-balanced chunk per
/// server. Each iteration every worker pushes chunk `j` to server `j`, all at once;
/// with `pull`, server `j`, once it holds every worker's push, sends chunk `j` back to
/// every worker at once. A worker is done when its pulls (without `pull`, its pushes)
/// are delivered; with `barrier = "global"` every worker starts the next iteration
/// `compute` after the last one is done, with `"worker"` each starts it `compute` after
/// it is done itself. An iteration runs from its first worker's start to its last
/// worker's end. A chunk travels as
/// messages of at most `message_size`, round-robin over `threads_per_flow` threads per
/// (worker, server) pair: a worker needs `first_thread + servers · threads_per_flow`
/// threads, a server with `pull` `first_thread + workers · threads_per_flow`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PsShuffleWorkload {
    /// Worker hosts. Default "0..4" (the paper's 4 workers).
    #[serde(default = "d_workers")]
    pub workers: HostSet,
    /// Parameter-server hosts (none of them a worker). Default "4..6" (2 servers).
    #[serde(default = "d_ps_servers")]
    pub servers: HostSet,
    /// Iterations to run. Default 100 (the paper's).
    #[serde(default = "d_iterations")]
    pub iterations: u32,
    /// Gradient bytes every worker pushes per iteration. Default 553430176 B: VGG16's
    /// 138,357,544 fp32 parameters.
    #[serde(default = "d_gradient")]
    pub gradient_size: Bytes,
    /// Servers send the updated chunks back (pull phase) before the next iteration.
    /// Default false: the paper's iteration time is the transfer of the gradient set to
    /// the servers (§6.2.3).
    #[serde(default)]
    pub pull: bool,
    /// When a worker starts its next iteration: `global` (default), `compute` after the
    /// last worker is done with the iteration; `worker`, `compute` after it is done
    /// itself (its pulls delivered, or its pushes without `pull`).
    #[serde(default)]
    pub barrier: Barrier,
    /// Largest message a chunk is cut into. Default: none (one message per chunk).
    #[serde(default)]
    pub message_size: Option<Bytes>,
    /// Threads (connections) per (worker, server) pair the messages of a chunk are
    /// spread over. Default 1.
    #[serde(default = "d_concurrency")]
    pub threads_per_flow: u16,
    /// First thread the shuffle uses on workers and servers. Default 0.
    #[serde(default)]
    pub first_thread: u16,
    /// Time between the end of an iteration and the start of the next (the workers'
    /// computation). Default 0.
    #[serde(default, deserialize_with = "delay_unchecked")]
    pub compute: pl2_sim::dist::DelayDist,
    /// Start of the first iteration. Default 0.
    #[serde(default)]
    pub start: Duration,
    /// 802.1Q priority. Default 0.
    #[serde(default)]
    pub priority: u8,
}
