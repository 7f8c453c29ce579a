//! Result tables. Records drained from the simulation are appended to plain columns
//! (compact, no per-row objects) and handed to a [`TableSink`] as Arrow record batches
//! whenever enough rows accumulate, so a long run's memory stays bounded when the sink
//! streams to files: `messages`, `drops`, `ports`, `goodput`, `trace`, `probes`, and,
//! for runs with application workloads, `rpcs` (closed-loop RPCs) and `iterations`
//! (parameter-server shuffle iterations). Column names carry their units.

use crate::columns::Columns;
use arrow_array::RecordBatch;
use std::sync::Arc;
use pl2_sim::metrics::Records;
use pl2_sim::net::topology::Graph;
use pl2_sim::units::SimTime;
use crate::window_stats::{WindowMessage, WindowSamples};

/// Which messages count in statistics: those arriving in [from, until).
#[derive(Copy, Clone, Debug)]
pub struct Window {
    pub from: SimTime,
    pub until: SimTime,
}

#[derive(Default)]
struct MsgCols {
    id: Vec<u64>,
    src: Vec<u32>,
    dst: Vec<u32>,
    size: Vec<u64>,
    thread: Vec<u16>,
    prio: Vec<u8>,
    transport: Vec<u8>,
    workload: Vec<u16>,
    start: Vec<u64>,
    finish: Vec<Option<u64>>,
    ideal: Vec<u64>,
    breakdown: Vec<Option<[u64; 7]>>,
}

impl MsgCols {
    /// The buffered rows, leaving empty columns of the same capacity.
    fn take(&mut self) -> MsgCols {
        let MsgCols { id, src, dst, size, thread, prio, transport, workload, start, finish, ideal, breakdown } = self;
        MsgCols {
            id: take_rows(id),
            src: take_rows(src),
            dst: take_rows(dst),
            size: take_rows(size),
            thread: take_rows(thread),
            prio: take_rows(prio),
            transport: take_rows(transport),
            workload: take_rows(workload),
            start: take_rows(start),
            finish: take_rows(finish),
            ideal: take_rows(ideal),
            breakdown: take_rows(breakdown),
        }
    }
}

#[derive(Default)]
struct DropCols {
    time: Vec<u64>,
    node: Vec<u32>,
    port: Vec<u32>,
    prio: Vec<u8>,
    reason: Vec<&'static str>,
    src: Vec<u32>,
    dst: Vec<u32>,
    msg: Vec<u64>,
    seq: Vec<u32>,
    data: Vec<bool>,
}

impl DropCols {
    /// The buffered rows, leaving empty columns of the same capacity.
    fn take(&mut self) -> DropCols {
        let DropCols { time, node, port, prio, reason, src, dst, msg, seq, data } = self;
        DropCols {
            time: take_rows(time),
            node: take_rows(node),
            port: take_rows(port),
            prio: take_rows(prio),
            reason: take_rows(reason),
            src: take_rows(src),
            dst: take_rows(dst),
            msg: take_rows(msg),
            seq: take_rows(seq),
            data: take_rows(data),
        }
    }
}

/// A buffer's rows, moved out; the buffer is left empty with the capacity it had, so the
/// next rows fill it without regrowing it.
fn take_rows<T>(v: &mut Vec<T>) -> Vec<T> {
    let capacity = v.capacity();
    std::mem::replace(v, Vec::with_capacity(capacity))
}

/// Where finished tables go: kept in memory, or written to Parquet files.
pub trait TableSink {
    fn write(&mut self, name: &'static str, batch: RecordBatch) -> std::io::Result<()>;

    /// A batch still to be built from rows the collector has handed over. A sink that
    /// encodes on a thread of its own builds it there, off the simulation's thread; by
    /// default it is built here and now.
    fn write_rows(&mut self, name: &'static str, build: BuildBatch) -> std::io::Result<()> {
        self.write(name, build())
    }

    /// Before the run: table `name` will be written, with the columns of the batch `empty`
    /// builds (none of its rows). A sink that encodes as the run goes sets up the table's
    /// writer now, beside the simulation's start rather than after its end; by default
    /// nothing is done. What is written does not depend on it.
    fn prepare(&mut self, name: &'static str, empty: BuildBatch) -> std::io::Result<()> {
        let _ = (name, empty);
        Ok(())
    }
}

/// Builds one batch from rows it owns.
pub type BuildBatch = Box<dyn FnOnce() -> RecordBatch + Send>;

/// Accumulates a run's records in columns and hands them to a sink in bounded batches;
/// keeps only what the summary needs (the statistics inputs of messages in the window,
/// goodput per host inside the window).
pub struct Collector {
    window: Window,
    msgs: MsgCols,
    drops: DropCols,
    ports: Vec<PortRow>,
    goodput: Vec<(u32, u64, u64)>,
    trace: Vec<pl2_sim::metrics::TraceRecord>,
    probes: Vec<pl2_sim::metrics::ProbeRecord>,
    rpcs: Vec<pl2_sim::metrics::RpcRecord>,
    iterations: Vec<pl2_sim::metrics::IterationRecord>,
    /// Names of the run's transports by index (the `transport` column of `messages`).
    transport_names: Arc<Vec<String>>,
    /// The network's framing (the trace's `frame_bytes`).
    framing: pl2_sim::framing::Framing,
    /// Every node's name ([`node_name`]), made at the first flush: the `ports` and
    /// `trace` tables name a node on every row, and formatting it per row was a tenth of
    /// a long run's instructions.
    node_names: Arc<Vec<String>>,
    /// Every port's (owner, peer) node, made with `node_names`.
    port_nodes: Arc<Vec<(u32, u32)>>,
    /// Write the `rpcs` / `iterations` tables even when empty.
    rpc_table: bool,
    iteration_table: bool,
    /// Latency (None if unfinished) of every RPC started in the window.
    pub window_rpcs: Vec<Option<u64>>,
    /// RPCs whose response was delivered inside the window.
    pub window_rpc_completions: u64,
    /// Time (None if unfinished) of every iteration started in the window.
    pub window_iterations: Vec<Option<u64>>,
    /// Latency and ideal completion time of every message in the window, for the
    /// summary's exact statistics (in bounded memory).
    pub window_messages: WindowSamples,
    /// Payload bytes delivered per host in windows starting inside the measurement window.
    pub window_goodput: Vec<u64>,
}

/// Rows buffered before the collector hands a batch to its sink, so the buffered columns
/// and the batches built from them stay small; the sink's row groups are larger (batches
/// only arrive in pieces).
pub const FLUSH_ROWS: usize = 1 << 14;

impl Collector {
    pub fn new(window: Window, hosts: u32) -> Collector {
        Collector {
            window,
            msgs: MsgCols::default(),
            drops: DropCols::default(),
            ports: Vec::new(),
            goodput: Vec::new(),
            trace: Vec::new(),
            probes: Vec::new(),
            rpcs: Vec::new(),
            iterations: Vec::new(),
            transport_names: Arc::new(vec![DEFAULT_TRANSPORT.to_string()]),
            node_names: Arc::default(),
            port_nodes: Arc::default(),
            framing: pl2_sim::framing::Framing::default(),
            rpc_table: false,
            iteration_table: false,
            window_rpcs: Vec::new(),
            window_rpc_completions: 0,
            window_iterations: Vec::new(),
            window_messages: WindowSamples::default(),
            window_goodput: vec![0; hosts as usize],
        }
    }

    /// Always writes the `rpcs` table (the run has RPC workloads) and the `iterations`
    /// table (it has shuffles), even if they stay empty.
    pub fn with_app_tables(mut self, rpcs: bool, iterations: bool) -> Collector {
        self.rpc_table = rpcs;
        self.iteration_table = iterations;
        self
    }

    /// Names the run's transports after the default (the scenario's `[transports.NAME]`
    /// tables, in index order).
    pub fn with_transport_names<'a>(mut self, names: impl IntoIterator<Item = &'a str>) -> Collector {
        let all = std::iter::once(DEFAULT_TRANSPORT).chain(names);
        self.transport_names = Arc::new(all.map(str::to_string).collect());
        self
    }

    /// The network's framing, for the trace's frame lengths (default: Ethernet with an
    /// 802.1Q tag).
    pub fn with_framing(mut self, framing: pl2_sim::framing::Framing) -> Collector {
        self.framing = framing;
        self
    }

    /// Takes a slice's records. Fails only if the window's latencies cannot be spilled to
    /// a temporary file.
    pub fn ingest(&mut self, r: Records) -> std::io::Result<()> {
        let w = self.window;
        let inside = |t: SimTime| t >= w.from && t < w.until;
        for x in &r.rpcs {
            if inside(x.start) {
                self.window_rpcs.push(x.finish.map(|f| f.0 - x.start.0));
            }
            if x.finish.is_some_and(inside) {
                self.window_rpc_completions += 1;
            }
        }
        self.rpcs.extend(r.rpcs);
        for x in &r.iterations {
            if inside(x.start) {
                self.window_iterations.push(x.finish.map(|f| f.0 - x.start.0));
            }
        }
        self.iterations.extend(r.iterations);
        let m = &mut self.msgs;
        for x in r.messages {
            if x.start >= w.from && x.start < w.until {
                let latency_ps = x.finish.map_or(WindowMessage::UNFINISHED, |f| f.0 - x.start.0);
                self.window_messages.push(WindowMessage { latency_ps, ideal_ps: x.ideal.0 })?;
            }
            m.id.push(x.id);
            m.src.push(x.src);
            m.dst.push(x.dst);
            m.size.push(x.size);
            m.thread.push(x.thread);
            m.prio.push(x.prio);
            m.transport.push(x.transport);
            m.workload.push(x.workload);
            m.start.push(x.start.0);
            m.finish.push(x.finish.map(|f| f.0));
            m.ideal.push(x.ideal.0);
            m.breakdown.push(x.breakdown);
        }
        let d = &mut self.drops;
        for x in r.drops {
            d.time.push(x.time.0);
            d.node.push(x.node);
            d.port.push(x.port);
            d.prio.push(x.prio);
            d.reason.push(x.reason.name());
            d.src.push(x.src);
            d.dst.push(x.dst);
            d.msg.push(x.msg_id);
            d.seq.push(x.seq);
            d.data.push(x.data);
        }
        self.ports.extend(r.ports.into_iter().map(|p| (p.port, p.window_start.0, p.max_queue_bytes, p.tx_bytes, p.mean_queue_bytes, p.end_queue_bytes)));
        for g in r.goodput {
            if g.window_start >= w.from && g.window_start < w.until {
                self.window_goodput[g.host as usize] += g.payload_bytes;
            }
            self.goodput.push((g.host, g.window_start.0, g.payload_bytes));
        }
        self.trace.extend(r.trace);
        self.probes.extend(r.probes);
        Ok(())
    }

    fn rows(&self) -> usize {
        self.msgs.id.len() + self.rpcs.len() + self.iterations.len() + self.drops.time.len() + self.ports.len() + self.goodput.len() + self.trace.len() + self.probes.len()
    }

    /// Hands the buffered rows to `sink` if there are many of them (or `force`).
    pub fn flush(&mut self, graph: &Graph, sink: &mut dyn TableSink, force: bool) -> std::io::Result<()> {
        if !force && self.rows() < FLUSH_ROWS {
            return Ok(());
        }
        for (name, rows, always, build) in self.take_batches(graph) {
            if (force && always) || rows > 0 {
                sink.write_rows(name, build)?;
            }
        }
        Ok(())
    }

    /// Tells `sink` every table the run will write, each with a batch of none of its rows
    /// ([`TableSink::prepare`]). Call before the first records are ingested.
    pub fn prepare(&mut self, graph: &Graph, sink: &mut dyn TableSink) -> std::io::Result<()> {
        assert_eq!(self.rows(), 0, "Collector::prepare after records were ingested");
        for (name, _, always, build) in self.take_batches(graph) {
            if always {
                sink.prepare(name, build)?;
            }
        }
        Ok(())
    }

    /// Every table's buffered rows, moved into the function that builds their batch: (the
    /// table, its rows, whether the run writes it even without rows, the function).
    fn take_batches(&mut self, graph: &Graph) -> [(&'static str, usize, bool, BuildBatch); 8] {
        let w = self.window;
        if self.node_names.is_empty() {
            self.node_names = Arc::new((0..graph.nodes()).map(|n| node_name(graph, n)).collect());
            self.port_nodes = Arc::new((0..graph.links.len() as u32 * 2).map(|p| port_ends(graph, p)).collect());
        }
        // Each table's rows move into the function that builds its batch, which the sink
        // may run on its own thread; the buffers keep their capacity for the next rows.
        let (names, ends, tn) = (&self.node_names, &self.port_nodes, &self.transport_names);
        let framing = self.framing;
        [
            ("messages", self.msgs.id.len(), true, {
                let (m, tn) = (self.msgs.take(), tn.clone());
                Box::new(move || messages_batch(&m, w, &tn))
            }),
            ("drops", self.drops.time.len(), true, {
                let d = self.drops.take();
                Box::new(move || drops_batch(&d))
            }),
            ("ports", self.ports.len(), true, {
                let (rows, ends, names) = (take_rows(&mut self.ports), ends.clone(), names.clone());
                Box::new(move || ports_batch(&rows, &ends, &names))
            }),
            ("goodput", self.goodput.len(), true, {
                let rows = take_rows(&mut self.goodput);
                Box::new(move || goodput_batch(&rows))
            }),
            ("trace", self.trace.len(), true, {
                let (rows, names, tn) = (take_rows(&mut self.trace), names.clone(), tn.clone());
                Box::new(move || trace_batch(&rows, &names, &tn, framing))
            }),
            ("probes", self.probes.len(), true, {
                let (rows, tn) = (take_rows(&mut self.probes), tn.clone());
                Box::new(move || probes_batch(&rows, &tn))
            }),
            ("rpcs", self.rpcs.len(), self.rpc_table, {
                let rows = take_rows(&mut self.rpcs);
                Box::new(move || rpcs_batch(&rows, w))
            }),
            ("iterations", self.iterations.len(), self.iteration_table, {
                let rows = take_rows(&mut self.iterations);
                Box::new(move || iterations_batch(&rows, w))
            }),
        ]
    }
}

pub(crate) fn slowdown(latency: u64, ideal: u64) -> f64 {
    if ideal == 0 {
        1.0
    } else {
        latency as f64 / ideal as f64
    }
}


/// Column names of the latency breakdown parts, in `MessageRecord::breakdown` order.
pub const BREAKDOWN_COLUMNS: [&str; 7] = [
    "transport_wait_ps",
    "send_path_ps",
    "nic_queue_ps",
    "switch_queue_ps",
    "wire_ps",
    "switch_pipeline_ps",
    "receive_ps",
];

/// The `transport` column's value for messages of the scenario's `[transport]`.
pub const DEFAULT_TRANSPORT: &str = "default";

fn messages_batch(m: &MsgCols, w: Window, transport_names: &[String]) -> RecordBatch {
    // Rows in completion order (unfinished messages last): the same in memory and in
    // files.
    let n = m.id.len();
    let latency = |i: usize| m.finish[i].map(|f| f - m.start[i]);
    let cols = Columns::default()
        .u64("id", m.id.iter().copied())
        .u32("src", m.src.iter().copied())
        .u32("dst", m.dst.iter().copied())
        .u64("size_bytes", m.size.iter().copied())
        .u16("thread", m.thread.iter().copied())
        .u8("priority", m.prio.iter().copied())
        .str("transport", m.transport.iter().map(|&t| &transport_names[t as usize]))
        .u32("workload", m.workload.iter().map(|&w| u32::from(w)))
        .u64("start_ps", m.start.iter().copied())
        .opt_u64("finish_ps", m.finish.iter().copied())
        .opt_u64("latency_ps", (0..n).map(latency))
        .u64("ideal_ps", m.ideal.iter().copied())
        .opt_f64("slowdown", (0..n).map(|i| latency(i).map(|l| slowdown(l, m.ideal[i]))))
        .bool("in_window", m.start.iter().map(|&s| s >= w.from.0 && s < w.until.0));
    BREAKDOWN_COLUMNS.iter().enumerate().fold(cols, |c, (k, name)| c.opt_u64(name, m.breakdown.iter().map(|b| b.map(|p| p[k])))).finish()
}

fn in_window(t: SimTime, w: Window) -> bool {
    t >= w.from && t < w.until
}

/// One row per RPC (in completion order, unfinished ones last): its two messages, the
/// times of its four steps and its two-way latency.
fn rpcs_batch(rows: &[pl2_sim::metrics::RpcRecord], w: Window) -> RecordBatch {
    let lat = |r: &pl2_sim::metrics::RpcRecord| r.finish.map(|f| f.0 - r.start.0);
    Columns::default()
        .u32("workload", rows.iter().map(|r| r.workload))
        .u64("id", rows.iter().map(|r| r.id))
        .u32("client", rows.iter().map(|r| r.client))
        .u32("server", rows.iter().map(|r| r.server))
        .u16("thread", rows.iter().map(|r| r.thread))
        .u64("request_id", rows.iter().map(|r| r.request_id))
        .opt_u64("response_id", rows.iter().map(|r| r.response_id))
        .u64("start_ps", rows.iter().map(|r| r.start.0))
        .opt_u64("request_done_ps", rows.iter().map(|r| r.request_done.map(|t| t.0)))
        .opt_u64("response_start_ps", rows.iter().map(|r| r.response_start.map(|t| t.0)))
        .opt_u64("finish_ps", rows.iter().map(|r| r.finish.map(|t| t.0)))
        .opt_u64("latency_ps", rows.iter().map(lat))
        .u64("ideal_ps", rows.iter().map(|r| r.ideal.0))
        .opt_f64("slowdown", rows.iter().map(|r| lat(r).map(|l| slowdown(l, r.ideal.0))))
        .bool("in_window", rows.iter().map(|r| in_window(r.start, w)))
        .finish()
}

/// One row per shuffle iteration: start, end of the push phase, end, and the times.
fn iterations_batch(rows: &[pl2_sim::metrics::IterationRecord], w: Window) -> RecordBatch {
    Columns::default()
        .u32("workload", rows.iter().map(|r| r.workload))
        .u32("iteration", rows.iter().map(|r| r.iteration))
        .u64("start_ps", rows.iter().map(|r| r.start.0))
        .opt_u64("push_done_ps", rows.iter().map(|r| r.push_done.map(|t| t.0)))
        .opt_u64("finish_ps", rows.iter().map(|r| r.finish.map(|t| t.0)))
        .opt_u64("push_time_ps", rows.iter().map(|r| r.push_done.map(|t| t.0 - r.start.0)))
        .opt_u64("time_ps", rows.iter().map(|r| r.finish.map(|t| t.0 - r.start.0)))
        .u64("bytes", rows.iter().map(|r| r.bytes))
        .bool("in_window", rows.iter().map(|r| in_window(r.start, w)))
        .finish()
}

fn drops_batch(d: &DropCols) -> RecordBatch {
    Columns::default()
        .u64("time_ps", d.time.iter().copied())
        .u32("node", d.node.iter().copied())
        .opt_u32("port", d.port.iter().map(|&p| (p != u32::MAX).then_some(p)))
        .u8("priority", d.prio.iter().copied())
        .str("reason", d.reason.iter())
        .u32("src", d.src.iter().copied())
        .u32("dst", d.dst.iter().copied())
        .opt_u64("msg_id", d.msg.iter().map(|&m| (m != u64::MAX).then_some(m)))
        .u32("seq", d.seq.iter().copied())
        .bool("data", d.data.iter().copied())
        .finish()
}

/// Name of a node: `h<i>` for hosts, `s<i>` for switches.
pub fn node_name(graph: &Graph, node: u32) -> String {
    if node < graph.hosts {
        format!("h{node}")
    } else {
        format!("s{}", node - graph.hosts)
    }
}

/// (owner node, peer node) of a global port id.
pub fn port_ends(graph: &Graph, port: u32) -> (u32, u32) {
    let l = &graph.links[(port / 2) as usize];
    if port.is_multiple_of(2) {
        (l.a, l.b)
    } else {
        (l.b, l.a)
    }
}

/// One `ports` row: port, window start (ps), max queue, tx bytes, mean queue, end queue.
type PortRow = (u32, u64, u64, u64, f64, u64);

/// `ports` rows; `ends` holds every port's (owner, peer) node ([`port_ends`]).
fn ports_batch(rows: &[PortRow], ends: &[(u32, u32)], names: &[String]) -> RecordBatch {
    Columns::default()
        .u32("port", rows.iter().map(|r| r.0))
        .str("node", rows.iter().map(|r| &names[ends[r.0 as usize].0 as usize]))
        .str("peer", rows.iter().map(|r| &names[ends[r.0 as usize].1 as usize]))
        .u64("window_start_ps", rows.iter().map(|r| r.1))
        .u64("max_queue_bytes", rows.iter().map(|r| r.2))
        .u64("tx_bytes", rows.iter().map(|r| r.3))
        .f64("mean_queue_bytes", rows.iter().map(|r| r.4))
        .u64("end_queue_bytes", rows.iter().map(|r| r.5))
        .finish()
}

fn goodput_batch(rows: &[(u32, u64, u64)]) -> RecordBatch {
    Columns::default()
        .u32("host", rows.iter().map(|r| r.0))
        .u64("window_start_ps", rows.iter().map(|r| r.1))
        .u64("payload_bytes", rows.iter().map(|r| r.2))
        .finish()
}

fn trace_batch(rows: &[pl2_sim::metrics::TraceRecord], names: &[String], transport_names: &[String], framing: pl2_sim::framing::Framing) -> RecordBatch {
    let kind = |k: pl2_sim::packet::PktKind| match k {
        pl2_sim::packet::PktKind::Data => "data",
        pl2_sim::packet::PktKind::Ack => "ack",
        pl2_sim::packet::PktKind::Control => "control",
        pl2_sim::packet::PktKind::Pause => "pause",
        pl2_sim::packet::PktKind::Sfc => "sfc",
    };
    Columns::default()
        .u64("time_ps", rows.iter().map(|r| r.time.0))
        .str("event", rows.iter().map(|r| r.event.name()))
        .str("node", rows.iter().map(|r| &names[r.node as usize]))
        .u32("port", rows.iter().map(|r| r.port))
        .u32("src", rows.iter().map(|r| r.packet.src))
        .u32("dst", rows.iter().map(|r| r.packet.dst))
        .u32("flow", rows.iter().map(|r| r.packet.flow))
        .u32("seq", rows.iter().map(|r| r.packet.seq))
        .str("kind", rows.iter().map(|r| kind(r.packet.kind)))
        .u8("priority", rows.iter().map(|r| r.packet.prio()))
        // Engine and protocol flags in one column: their bits in use do not overlap.
        .u8("flags", rows.iter().map(|r| r.packet.flags | r.packet.proto))
        .u32("wire_bytes", rows.iter().map(|r| u32::from(r.packet.wire)))
        .u32("payload_bytes", rows.iter().map(|r| u32::from(r.packet.payload)))
        // What `pl2 pcap` needs to write the frame's headers: which transport sent it,
        // its message slot, the protocol's `aux` field, and the frame from Ethernet
        // header to FCS.
        .str("transport", rows.iter().map(|r| &transport_names[r.packet.transport() as usize]))
        .u32("msg", rows.iter().map(|r| r.packet.msg))
        .u64("aux", rows.iter().map(|r| r.packet.aux))
        .u32("frame_bytes", rows.iter().map(|r| framing.frame_of_wire(u64::from(r.packet.wire)) as u32))
        // `flags` split: a transport's private bits may reuse the engine's positions.
        .u8("engine_flags", rows.iter().map(|r| r.packet.flags))
        .u8("proto_flags", rows.iter().map(|r| r.packet.proto))
        .finish()
}

fn probes_batch(rows: &[pl2_sim::metrics::ProbeRecord], transport_names: &[String]) -> RecordBatch {
    Columns::default()
        .u64("time_ps", rows.iter().map(|r| r.time.0))
        .u32("host", rows.iter().map(|r| r.host))
        .str("transport", rows.iter().map(|r| &transport_names[r.transport as usize]))
        .u32("flow", rows.iter().map(|r| r.flow))
        .str("name", rows.iter().map(|r| r.name))
        .f64("value", rows.iter().map(|r| r.value))
        .finish()
}
