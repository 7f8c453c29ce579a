//! Result tables. Records drained from the simulation are appended to plain columns
//! (compact, no per-row objects) and handed to a [`TableSink`] as Arrow record batches
//! whenever enough rows accumulate, so a long run's memory stays bounded when the sink
//! streams to files: `messages`, `drops`, `ports`, `goodput`, `trace`, `probes`, and,
//! for runs with application workloads, `rpcs` (closed-loop RPCs) and `iterations`
//! (parameter-server shuffle iterations). Column names carry their units.

use arrow_array::builder::{BooleanBuilder, Float64Builder, StringBuilder, UInt16Builder, UInt32Builder, UInt64Builder, UInt8Builder};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use pl2_sim::metrics::Records;
use pl2_sim::net::topology::Graph;
use pl2_sim::units::SimTime;
use std::sync::Arc;
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
    start: Vec<u64>,
    finish: Vec<Option<u64>>,
    ideal: Vec<u64>,
    breakdown: Vec<Option<[u64; 7]>>,
}

impl MsgCols {
    fn clear(&mut self) {
        let MsgCols { id, src, dst, size, thread, prio, transport, start, finish, ideal, breakdown } = self;
        id.clear();
        src.clear();
        dst.clear();
        size.clear();
        thread.clear();
        prio.clear();
        transport.clear();
        start.clear();
        finish.clear();
        ideal.clear();
        breakdown.clear();
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
    fn clear(&mut self) {
        let DropCols { time, node, port, prio, reason, src, dst, msg, seq, data } = self;
        time.clear();
        node.clear();
        port.clear();
        prio.clear();
        reason.clear();
        src.clear();
        dst.clear();
        msg.clear();
        seq.clear();
        data.clear();
    }
}

/// Where finished tables go: kept in memory, or written to Parquet files.
pub trait TableSink {
    fn write(&mut self, name: &'static str, batch: RecordBatch) -> std::io::Result<()>;
}

/// Accumulates a run's records in columns and hands them to a sink in bounded batches;
/// keeps only what the summary needs (the statistics inputs of messages in the window,
/// goodput per host inside the window).
pub struct Collector {
    window: Window,
    msgs: MsgCols,
    drops: DropCols,
    ports: Vec<(u32, u64, u64, u64)>,
    goodput: Vec<(u32, u64, u64)>,
    trace: Vec<pl2_sim::metrics::TraceRecord>,
    probes: Vec<pl2_sim::metrics::ProbeRecord>,
    rpcs: Vec<pl2_sim::metrics::RpcRecord>,
    iterations: Vec<pl2_sim::metrics::IterationRecord>,
    /// Names of the run's transports by index (the `transport` column of `messages`).
    transport_names: Vec<String>,
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
            transport_names: vec![DEFAULT_TRANSPORT.to_string()],
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
        self.transport_names.truncate(1);
        self.transport_names.extend(names.into_iter().map(str::to_string));
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
        self.ports.extend(r.ports.into_iter().map(|p| (p.port, p.window_start.0, p.max_queue_bytes, p.tx_bytes)));
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
        let w = self.window;
        // Batches copy the buffered columns; the buffers are cleared, not replaced, so
        // their capacity is reused by the next rows instead of being regrown (and the
        // allocator's heap fragmented) every flush.
        let batches = [
            ("messages", messages_batch(&self.msgs, w, &self.transport_names)),
            ("drops", drops_batch(&self.drops)),
            ("ports", ports_batch(&self.ports, graph)),
            ("goodput", goodput_batch(&self.goodput)),
            ("trace", trace_batch(&self.trace, graph)),
            ("probes", probes_batch(&self.probes, &self.transport_names)),
        ];
        self.msgs.clear();
        self.drops.clear();
        self.ports.clear();
        self.goodput.clear();
        self.trace.clear();
        self.probes.clear();
        for (name, b) in batches {
            if force || b.num_rows() > 0 {
                sink.write(name, b)?;
            }
        }
        let apps = [
            ("rpcs", rpcs_batch(&self.rpcs, w), self.rpc_table),
            ("iterations", iterations_batch(&self.iterations, w), self.iteration_table),
        ];
        self.rpcs.clear();
        self.iterations.clear();
        for (name, b, always) in apps {
            if (force && always) || b.num_rows() > 0 {
                sink.write(name, b)?;
            }
        }
        Ok(())
    }
}

pub(crate) fn slowdown(latency: u64, ideal: u64) -> f64 {
    if ideal == 0 {
        1.0
    } else {
        latency as f64 / ideal as f64
    }
}

fn batch(fields: Vec<(&str, DataType, bool)>, cols: Vec<ArrayRef>) -> RecordBatch {
    let schema = Schema::new(fields.into_iter().map(|(n, t, null)| Field::new(n, t, null)).collect::<Vec<_>>());
    RecordBatch::try_new(Arc::new(schema), cols).expect("columns match the schema")
}

fn u64s(v: impl Iterator<Item = u64>) -> ArrayRef {
    let mut b = UInt64Builder::new();
    v.for_each(|x| b.append_value(x));
    Arc::new(b.finish())
}
fn u32s(v: impl Iterator<Item = u32>) -> ArrayRef {
    let mut b = UInt32Builder::new();
    v.for_each(|x| b.append_value(x));
    Arc::new(b.finish())
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
    let order: Vec<usize> = (0..m.id.len()).collect();
    let (mut fin, mut lat, mut sd) = (UInt64Builder::new(), UInt64Builder::new(), Float64Builder::new());
    let (mut thread, mut prio, mut inw) = (UInt16Builder::new(), UInt8Builder::new(), BooleanBuilder::new());
    for &i in &order {
        fin.append_option(m.finish[i]);
        let l = m.finish[i].map(|f| f - m.start[i]);
        lat.append_option(l);
        sd.append_option(l.map(|l| slowdown(l, m.ideal[i])));
        thread.append_value(m.thread[i]);
        prio.append_value(m.prio[i]);
        inw.append_value(m.start[i] >= w.from.0 && m.start[i] < w.until.0);
    }
    batch(
        vec![
            ("id", DataType::UInt64, false),
            ("src", DataType::UInt32, false),
            ("dst", DataType::UInt32, false),
            ("size_bytes", DataType::UInt64, false),
            ("thread", DataType::UInt16, false),
            ("priority", DataType::UInt8, false),
            ("transport", DataType::Utf8, false),
            ("start_ps", DataType::UInt64, false),
            ("finish_ps", DataType::UInt64, true),
            ("latency_ps", DataType::UInt64, true),
            ("ideal_ps", DataType::UInt64, false),
            ("slowdown", DataType::Float64, true),
            ("in_window", DataType::Boolean, false),
        ]
        .into_iter()
        .chain(BREAKDOWN_COLUMNS.iter().map(|c| (*c, DataType::UInt64, true)))
        .collect(),
        vec![
            u64s(order.iter().map(|&i| m.id[i])),
            u32s(order.iter().map(|&i| m.src[i])),
            u32s(order.iter().map(|&i| m.dst[i])),
            u64s(order.iter().map(|&i| m.size[i])),
            Arc::new(thread.finish()),
            Arc::new(prio.finish()),
            {
                let mut b = StringBuilder::new();
                order.iter().for_each(|&i| b.append_value(&transport_names[m.transport[i] as usize]));
                Arc::new(b.finish()) as ArrayRef
            },
            u64s(order.iter().map(|&i| m.start[i])),
            Arc::new(fin.finish()),
            Arc::new(lat.finish()),
            u64s(order.iter().map(|&i| m.ideal[i])),
            Arc::new(sd.finish()),
            Arc::new(inw.finish()),
        ]
        .into_iter()
        .chain((0..7).map(|k| {
            let mut b = UInt64Builder::new();
            order.iter().for_each(|&i| b.append_option(m.breakdown[i].map(|p| p[k])));
            Arc::new(b.finish()) as ArrayRef
        }))
        .collect(),
    )
}

fn opt_u64s(v: impl Iterator<Item = Option<u64>>) -> ArrayRef {
    let mut b = UInt64Builder::new();
    v.for_each(|x| b.append_option(x));
    Arc::new(b.finish())
}

fn bools(v: impl Iterator<Item = bool>) -> ArrayRef {
    let mut b = BooleanBuilder::new();
    v.for_each(|x| b.append_value(x));
    Arc::new(b.finish())
}

fn in_window(t: SimTime, w: Window) -> bool {
    t >= w.from && t < w.until
}

/// One row per RPC (in completion order, unfinished ones last): its two messages, the
/// times of its four steps and its two-way latency.
fn rpcs_batch(rows: &[pl2_sim::metrics::RpcRecord], w: Window) -> RecordBatch {
    let mut thread = UInt16Builder::new();
    rows.iter().for_each(|r| thread.append_value(r.thread));
    let lat = |r: &pl2_sim::metrics::RpcRecord| r.finish.map(|f| f.0 - r.start.0);
    let mut sd = Float64Builder::new();
    rows.iter().for_each(|r| sd.append_option(lat(r).map(|l| slowdown(l, r.ideal.0))));
    batch(
        vec![
            ("workload", DataType::UInt32, false),
            ("id", DataType::UInt64, false),
            ("client", DataType::UInt32, false),
            ("server", DataType::UInt32, false),
            ("thread", DataType::UInt16, false),
            ("request_id", DataType::UInt64, false),
            ("response_id", DataType::UInt64, true),
            ("start_ps", DataType::UInt64, false),
            ("request_done_ps", DataType::UInt64, true),
            ("response_start_ps", DataType::UInt64, true),
            ("finish_ps", DataType::UInt64, true),
            ("latency_ps", DataType::UInt64, true),
            ("ideal_ps", DataType::UInt64, false),
            ("slowdown", DataType::Float64, true),
            ("in_window", DataType::Boolean, false),
        ],
        vec![
            u32s(rows.iter().map(|r| r.workload)),
            u64s(rows.iter().map(|r| r.id)),
            u32s(rows.iter().map(|r| r.client)),
            u32s(rows.iter().map(|r| r.server)),
            Arc::new(thread.finish()),
            u64s(rows.iter().map(|r| r.request_id)),
            opt_u64s(rows.iter().map(|r| r.response_id)),
            u64s(rows.iter().map(|r| r.start.0)),
            opt_u64s(rows.iter().map(|r| r.request_done.map(|t| t.0))),
            opt_u64s(rows.iter().map(|r| r.response_start.map(|t| t.0))),
            opt_u64s(rows.iter().map(|r| r.finish.map(|t| t.0))),
            opt_u64s(rows.iter().map(lat)),
            u64s(rows.iter().map(|r| r.ideal.0)),
            Arc::new(sd.finish()),
            bools(rows.iter().map(|r| in_window(r.start, w))),
        ],
    )
}

/// One row per shuffle iteration: start, end of the push phase, end, and the times.
fn iterations_batch(rows: &[pl2_sim::metrics::IterationRecord], w: Window) -> RecordBatch {
    batch(
        vec![
            ("workload", DataType::UInt32, false),
            ("iteration", DataType::UInt32, false),
            ("start_ps", DataType::UInt64, false),
            ("push_done_ps", DataType::UInt64, true),
            ("finish_ps", DataType::UInt64, true),
            ("push_time_ps", DataType::UInt64, true),
            ("time_ps", DataType::UInt64, true),
            ("bytes", DataType::UInt64, false),
            ("in_window", DataType::Boolean, false),
        ],
        vec![
            u32s(rows.iter().map(|r| r.workload)),
            u32s(rows.iter().map(|r| r.iteration)),
            u64s(rows.iter().map(|r| r.start.0)),
            opt_u64s(rows.iter().map(|r| r.push_done.map(|t| t.0))),
            opt_u64s(rows.iter().map(|r| r.finish.map(|t| t.0))),
            opt_u64s(rows.iter().map(|r| r.push_done.map(|t| t.0 - r.start.0))),
            opt_u64s(rows.iter().map(|r| r.finish.map(|t| t.0 - r.start.0))),
            u64s(rows.iter().map(|r| r.bytes)),
            bools(rows.iter().map(|r| in_window(r.start, w))),
        ],
    )
}

fn drops_batch(d: &DropCols) -> RecordBatch {
    let mut reason = StringBuilder::new();
    d.reason.iter().for_each(|r| reason.append_value(r));
    let mut port = UInt32Builder::new();
    d.port.iter().for_each(|&p| port.append_option((p != u32::MAX).then_some(p)));
    let mut msg = UInt64Builder::new();
    d.msg.iter().for_each(|&m| msg.append_option((m != u64::MAX).then_some(m)));
    let mut prio = UInt8Builder::new();
    d.prio.iter().for_each(|&p| prio.append_value(p));
    let mut data = BooleanBuilder::new();
    d.data.iter().for_each(|&x| data.append_value(x));
    batch(
        vec![
            ("time_ps", DataType::UInt64, false),
            ("node", DataType::UInt32, false),
            ("port", DataType::UInt32, true),
            ("priority", DataType::UInt8, false),
            ("reason", DataType::Utf8, false),
            ("src", DataType::UInt32, false),
            ("dst", DataType::UInt32, false),
            ("msg_id", DataType::UInt64, true),
            ("seq", DataType::UInt32, false),
            ("data", DataType::Boolean, false),
        ],
        vec![
            u64s(d.time.iter().copied()),
            u32s(d.node.iter().copied()),
            Arc::new(port.finish()),
            Arc::new(prio.finish()),
            Arc::new(reason.finish()),
            u32s(d.src.iter().copied()),
            u32s(d.dst.iter().copied()),
            Arc::new(msg.finish()),
            u32s(d.seq.iter().copied()),
            Arc::new(data.finish()),
        ],
    )
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

fn ports_batch(rows: &[(u32, u64, u64, u64)], graph: &Graph) -> RecordBatch {
    let (mut node, mut peer) = (StringBuilder::new(), StringBuilder::new());
    for r in rows {
        let (a, b) = port_ends(graph, r.0);
        node.append_value(node_name(graph, a));
        peer.append_value(node_name(graph, b));
    }
    batch(
        vec![
            ("port", DataType::UInt32, false),
            ("node", DataType::Utf8, false),
            ("peer", DataType::Utf8, false),
            ("window_start_ps", DataType::UInt64, false),
            ("max_queue_bytes", DataType::UInt64, false),
            ("tx_bytes", DataType::UInt64, false),
        ],
        vec![
            u32s(rows.iter().map(|r| r.0)),
            Arc::new(node.finish()),
            Arc::new(peer.finish()),
            u64s(rows.iter().map(|r| r.1)),
            u64s(rows.iter().map(|r| r.2)),
            u64s(rows.iter().map(|r| r.3)),
        ],
    )
}

fn goodput_batch(rows: &[(u32, u64, u64)]) -> RecordBatch {
    batch(
        vec![
            ("host", DataType::UInt32, false),
            ("window_start_ps", DataType::UInt64, false),
            ("payload_bytes", DataType::UInt64, false),
        ],
        vec![u32s(rows.iter().map(|r| r.0)), u64s(rows.iter().map(|r| r.1)), u64s(rows.iter().map(|r| r.2))],
    )
}

fn trace_batch(rows: &[pl2_sim::metrics::TraceRecord], graph: &Graph) -> RecordBatch {
    let (mut event, mut node, mut kind) = (StringBuilder::new(), StringBuilder::new(), StringBuilder::new());
    let (mut prio, mut flags) = (UInt8Builder::new(), UInt8Builder::new());
    for r in rows {
        event.append_value(r.event.name());
        node.append_value(node_name(graph, r.node));
        kind.append_value(match r.packet.kind {
            pl2_sim::packet::PktKind::Data => "data",
            pl2_sim::packet::PktKind::Ack => "ack",
            pl2_sim::packet::PktKind::Control => "control",
        });
        prio.append_value(r.packet.prio());
        // Engine and protocol flags in one column: their bits in use do not overlap.
        flags.append_value(r.packet.flags | r.packet.proto);
    }
    batch(
        vec![
            ("time_ps", DataType::UInt64, false),
            ("event", DataType::Utf8, false),
            ("node", DataType::Utf8, false),
            ("port", DataType::UInt32, false),
            ("src", DataType::UInt32, false),
            ("dst", DataType::UInt32, false),
            ("flow", DataType::UInt32, false),
            ("seq", DataType::UInt32, false),
            ("kind", DataType::Utf8, false),
            ("priority", DataType::UInt8, false),
            ("flags", DataType::UInt8, false),
            ("wire_bytes", DataType::UInt32, false),
            ("payload_bytes", DataType::UInt32, false),
        ],
        vec![
            u64s(rows.iter().map(|r| r.time.0)),
            Arc::new(event.finish()),
            Arc::new(node.finish()),
            u32s(rows.iter().map(|r| r.port)),
            u32s(rows.iter().map(|r| r.packet.src)),
            u32s(rows.iter().map(|r| r.packet.dst)),
            u32s(rows.iter().map(|r| r.packet.flow)),
            u32s(rows.iter().map(|r| r.packet.seq)),
            Arc::new(kind.finish()),
            Arc::new(prio.finish()),
            Arc::new(flags.finish()),
            u32s(rows.iter().map(|r| u32::from(r.packet.wire))),
            u32s(rows.iter().map(|r| u32::from(r.packet.payload))),
        ],
    )
}

fn probes_batch(rows: &[pl2_sim::metrics::ProbeRecord], transport_names: &[String]) -> RecordBatch {
    let mut name = StringBuilder::new();
    let mut value = Float64Builder::new();
    let mut transport = StringBuilder::new();
    for r in rows {
        name.append_value(r.name);
        value.append_value(r.value);
        transport.append_value(&transport_names[r.transport as usize]);
    }
    batch(
        vec![
            ("time_ps", DataType::UInt64, false),
            ("host", DataType::UInt32, false),
            ("transport", DataType::Utf8, false),
            ("flow", DataType::UInt32, false),
            ("name", DataType::Utf8, false),
            ("value", DataType::Float64, false),
        ],
        vec![
            u64s(rows.iter().map(|r| r.time.0)),
            u32s(rows.iter().map(|r| r.host)),
            Arc::new(transport.finish()),
            u32s(rows.iter().map(|r| r.flow)),
            Arc::new(name.finish()),
            Arc::new(value.finish()),
        ],
    )
}
