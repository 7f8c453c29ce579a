//! What a run measures. On the hot path these are plain counters and small records
//! appended to vectors; the driver drains the vectors periodically (bounded memory) and
//! converts them to tables. Nothing here knows about Arrow or files.

use crate::units::{Duration, SimTime};

/// Why a frame was dropped.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum DropReason {
    /// The queue's dynamic threshold or the shared buffer was exceeded.
    BufferFull = 0,
    /// The output port's static limit was exceeded.
    PortLimit = 1,
    /// Random loss on the link (fault injection).
    LinkLoss = 2,
    /// The link was down.
    LinkDown = 3,
    /// The destination host had crashed, or the sending host crashed with it queued.
    HostDown = 4,
    /// A deterministic fault rule (drop the n-th packet of a flow).
    Injected = 5,
    /// A switch program decided to drop it (e.g. PL2's unsolicited-burst rule).
    Program = 6,
    /// A trimming queue's FIFO was at its limit and the frame could not be trimmed (it
    /// was not trimmable, or it was a header over the header limit), or a hybrid ToR's
    /// VOQ was full.
    QueueLimit = 7,
    /// A lossless (PFC) frame found its ingress port's headroom full: the headroom was
    /// set smaller than the bytes in flight when a PAUSE goes out.
    Headroom = 8,
    /// The ingress pool refused it (`switch.pools.ingress`).
    IngressPool = 9,
    /// A frame that is not ECN-capable found its queue over the marking threshold where
    /// the switch drops such frames (`switch.non_ect = "drop"`, as RED/WRED with ECN do).
    NonEct = 10,
}

impl DropReason {
    pub const ALL: [DropReason; 11] = [
        DropReason::BufferFull,
        DropReason::PortLimit,
        DropReason::LinkLoss,
        DropReason::LinkDown,
        DropReason::HostDown,
        DropReason::Injected,
        DropReason::Program,
        DropReason::QueueLimit,
        DropReason::Headroom,
        DropReason::IngressPool,
        DropReason::NonEct,
    ];
    /// The summary's `drop_causes` group: `buffer` (congestion: a full buffer, port, pool,
    /// trimming FIFO, headroom, or a non-ECT frame dropped at the marking threshold),
    /// `program` (a switch program's deliberate drop), `fault` (injected). The match is
    /// exhaustive, so a new reason must choose its group.
    pub fn cause(self) -> &'static str {
        match self {
            DropReason::BufferFull | DropReason::PortLimit | DropReason::QueueLimit | DropReason::Headroom | DropReason::IngressPool | DropReason::NonEct => "buffer",
            DropReason::Program => "program",
            DropReason::LinkLoss | DropReason::LinkDown | DropReason::HostDown | DropReason::Injected => "fault",
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            DropReason::BufferFull => "buffer_full",
            DropReason::PortLimit => "port_limit",
            DropReason::LinkLoss => "link_loss",
            DropReason::LinkDown => "link_down",
            DropReason::HostDown => "host_down",
            DropReason::Injected => "injected",
            DropReason::Program => "program",
            DropReason::QueueLimit => "queue_limit",
            DropReason::Headroom => "headroom",
            DropReason::IngressPool => "ingress_pool",
            DropReason::NonEct => "non_ect",
        }
    }
}

/// One application message, finished or not.
#[derive(Clone, Debug, PartialEq)]
pub struct MessageRecord {
    pub id: u64,
    pub src: u32,
    pub dst: u32,
    pub size: u64,
    pub thread: u16,
    pub prio: u8,
    /// The transport that carried it (index; 0 is the default).
    pub transport: u8,
    /// The workload it comes from (index into the scenario's `[[workload]]` list).
    pub workload: u16,
    /// Arrival at the sending application (before any wait for a free thread).
    pub start: SimTime,
    /// Delivery of its last byte to the receiving application; `None` if unfinished.
    pub finish: Option<SimTime>,
    /// Completion time of the same message alone in the network (see `ideal`).
    pub ideal: Duration,
    /// Where the latency went (see `sim::breakdown`), in ps: transport wait, send path,
    /// NIC queue, switch queues, wire, switch pipelines, receive path. `None` unless
    /// `metrics.breakdown` is on and the message finished.
    pub breakdown: Option<[u64; 7]>,
}

/// One dropped frame.
#[derive(Clone, Debug, PartialEq)]
pub struct DropRecord {
    pub time: SimTime,
    pub node: u32,
    /// Egress port where it was dropped (global id), `u32::MAX` if none.
    pub port: u32,
    pub prio: u8,
    pub reason: DropReason,
    pub src: u32,
    pub dst: u32,
    pub msg_id: u64,
    pub seq: u32,
    pub data: bool,
}

/// Per-port figures over one sampling window.
#[derive(Clone, Debug, PartialEq)]
pub struct PortWindow {
    pub port: u32,
    pub window_start: SimTime,
    /// Exact maximum bytes queued at the port (all priorities, including the frame being
    /// serialised) during the window.
    pub max_queue_bytes: u64,
    /// Exact time-average of the bytes queued (same count) over the window: the integral
    /// of the queue over time, advanced at every change, divided by the window's length
    /// (a window the run ends in counts as empty after the end).
    pub mean_queue_bytes: f64,
    /// Bytes queued when the window ended; the queue stays at this level through the
    /// windows without a row that follow (a paused port holds its queue without events).
    pub end_queue_bytes: u64,
    /// Wire bytes whose serialisation finished during the window.
    pub tx_bytes: u64,
}

/// Payload delivered to one host's applications during one window.
#[derive(Clone, Debug, PartialEq)]
pub struct GoodputWindow {
    pub host: u32,
    pub window_start: SimTime,
    pub payload_bytes: u64,
}

/// Run-wide counters.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Counters {
    pub events: u64,
    /// Frames fully serialised onto a link (all kinds / data only).
    pub hops: u64,
    pub data_hops: u64,
    pub packets_created: u64,
    pub packets_delivered: u64,
    /// Frames absorbed by switch programs (e.g. reservation requests).
    pub packets_consumed: u64,
    pub drops: [u64; DropReason::ALL.len()],
    /// Data frames a trimming queue cut to their header (not drops: the header goes on).
    pub trims: u64,
    /// Trimmed headers a trimming queue returned to their sender.
    pub headers_returned: u64,
    /// Wire bytes of control and ACK frames serialised, summed over links.
    pub control_wire_bytes: u64,
    pub data_wire_bytes: u64,
    pub messages_created: u64,
    pub messages_finished: u64,
    /// Messages reported unfinished during the run: a frame was dropped and their transport
    /// never resends (`Protocol::frames_if_never_resent`).
    pub messages_lost: u64,
}

impl Counters {
    pub fn total_drops(&self) -> u64 {
        self.drops.iter().sum()
    }
}

/// What happened to a traced frame.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum TraceEvent {
    /// Serialisation started at `port` of `node`.
    Tx,
    /// Reached `node` (a switch's output queue, or a host's application side).
    Arrive,
    /// Dropped at `node`.
    Drop,
    /// Cut to its header by a trimming queue at `node` (port: the output port).
    Trim,
    /// A trimmed header sent back towards its source by `node`.
    Return,
}

impl TraceEvent {
    pub fn name(self) -> &'static str {
        match self {
            TraceEvent::Tx => "tx",
            TraceEvent::Arrive => "arrive",
            TraceEvent::Drop => "drop",
            TraceEvent::Trim => "trim",
            TraceEvent::Return => "return",
        }
    }
}

/// One traced frame event.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceRecord {
    pub time: SimTime,
    pub event: TraceEvent,
    pub node: u32,
    pub port: u32,
    pub packet: crate::packet::Packet,
}

/// A value a protocol published for one of its flows (cwnd, bytes in flight, slots...).
#[derive(Clone, Debug, PartialEq)]
pub struct ProbeRecord {
    pub time: SimTime,
    pub host: u32,
    /// The transport that published it (flow ids are per transport).
    pub transport: u8,
    pub flow: u32,
    pub name: &'static str,
    pub value: f64,
}

/// One RPC of a closed-loop RPC workload (request and response), finished or not.
#[derive(Clone, Debug, PartialEq)]
pub struct RpcRecord {
    /// Index of the workload in the scenario.
    pub workload: u32,
    /// Run-wide RPC id, in issue order.
    pub id: u64,
    pub client: u32,
    pub server: u32,
    /// Client connection (its thread; the server answers on the same thread).
    pub thread: u16,
    /// Message ids of the request and the response (`None` until it is sent).
    pub request_id: u64,
    pub response_id: Option<u64>,
    /// The client sends the request.
    pub start: SimTime,
    /// The request's last byte reaches the server application.
    pub request_done: Option<SimTime>,
    /// The server sends the response (after the service time).
    pub response_start: Option<SimTime>,
    /// The response's last byte reaches the client application: `None` if unfinished.
    pub finish: Option<SimTime>,
    /// Ideal request time + service time + ideal response time (0 until known).
    pub ideal: Duration,
}

/// One iteration of a parameter-server shuffle, finished or not.
#[derive(Clone, Debug, PartialEq)]
pub struct IterationRecord {
    pub workload: u32,
    /// 0-based iteration number.
    pub iteration: u32,
    /// Every worker starts pushing.
    pub start: SimTime,
    /// The last push is delivered (`None` if not yet).
    pub push_done: Option<SimTime>,
    /// The last transfer of the iteration is delivered (`None` if unfinished).
    pub finish: Option<SimTime>,
    /// Payload bytes the iteration moves (pushes and pulls).
    pub bytes: u64,
}

/// Records accumulated since the driver last drained them.
#[derive(Default)]
pub struct Records {
    pub messages: Vec<MessageRecord>,
    pub rpcs: Vec<RpcRecord>,
    pub iterations: Vec<IterationRecord>,
    pub drops: Vec<DropRecord>,
    pub ports: Vec<PortWindow>,
    pub goodput: Vec<GoodputWindow>,
    pub trace: Vec<TraceRecord>,
    pub probes: Vec<ProbeRecord>,
}

impl Records {
    pub fn len(&self) -> usize {
        self.messages.len() + self.rpcs.len() + self.iterations.len() + self.drops.len() + self.ports.len() + self.goodput.len() + self.trace.len() + self.probes.len()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The time integral of a port's queue within its current sampling window (byte·ps),
/// advanced before every change of the queue: exact, one multiply-add per change.
#[derive(Clone, Debug, Default)]
pub struct QueueIntegral {
    /// When the integral was last advanced (ps).
    since_ps: u64,
    byte_ps: u128,
}

impl QueueIntegral {
    /// Adds `queued` bytes held from the last advance until `now_ps`.
    #[inline]
    pub fn advance(&mut self, queued: u64, now_ps: u64) {
        self.byte_ps += u128::from(queued) * u128::from(now_ps - self.since_ps);
        self.since_ps = now_ps;
    }

    /// The integral of a window that ends at `end_ps`, the queue having held `queued`
    /// since the last advance.
    #[inline]
    pub fn closed(&self, queued: u64, end_ps: u64) -> u128 {
        self.byte_ps + u128::from(queued) * u128::from(end_ps - self.since_ps)
    }

    /// [`QueueIntegral::closed`] over `window_ps`: the window's time-averaged queue in
    /// bytes. A window's integral nearly always fits 64 bits, whose conversion to `f64` is
    /// a few instructions where a 128-bit one is a library call; both round to nearest,
    /// so the result is the same.
    #[inline]
    pub fn closed_mean(&self, queued: u64, end_ps: u64, window_ps: u64) -> f64 {
        let area = self.closed(queued, end_ps);
        let area = match u64::try_from(area) {
            Ok(a) => a as f64,
            Err(_) => wide_to_f64(area),
        };
        area / window_ps as f64
    }

    /// Starts a window at `start_ps` in which the queue has held `queued` until `now_ps`.
    #[inline]
    pub fn restart(&mut self, queued: u64, start_ps: u64, now_ps: u64) {
        self.byte_ps = u128::from(queued) * u128::from(now_ps - start_ps);
        self.since_ps = now_ps;
    }
}

/// `x as f64` out of line. Inlined, the compiler sees that both arms of
/// [`QueueIntegral::closed_mean`] give the same value and keeps only this one, the library
/// call, for every window.
#[cold]
#[inline(never)]
fn wide_to_f64(x: u128) -> f64 {
    x as f64
}

/// A windowed maximum/sum that closes its window lazily, when the next update falls in a
/// later window: no timer events, and windows without activity produce no row.
#[derive(Clone, Debug, Default)]
pub struct LazyWindow {
    pub index: u64,
    pub max: u64,
    pub sum: u64,
    pub active: bool,
    /// End of window `index` (ps): updates before it skip the division.
    until: u64,
}

impl LazyWindow {
    /// Whether `now` (never before the last update) falls in the current window, so that
    /// [`LazyWindow::roll`] would leave it as it is.
    #[inline(always)]
    pub fn contains(&self, now: SimTime) -> bool {
        now.0 < self.until
    }

    /// Moves to the window containing `now`; returns the closed window if one ended.
    #[inline]
    pub fn roll(&mut self, now: SimTime, window: Duration, carry_max: u64) -> Option<(u64, u64, u64)> {
        // Time never goes back, so `now` before the current window's end is inside it.
        if now.0 < self.until {
            return None;
        }
        let idx = now.0 / window.0;
        self.until = (idx + 1).saturating_mul(window.0);
        if idx == self.index {
            return None;
        }
        let closed = if self.active { Some((self.index, self.max, self.sum)) } else { None };
        self.index = idx;
        self.max = carry_max;
        self.sum = 0;
        self.active = carry_max > 0;
        closed
    }
}
