//! Typed configuration of the network model: links, hosts and NICs, switches, topology.
//! Every field has a documented default (the `Default` impls below) and a physical unit.
//! Scenario files deserialise straight into these structs; unknown keys are rejected.

use crate::dist::{deserialize_delay, DelayDist};
use crate::framing::Framing;
use crate::units::{BitsPerSec, Bytes, Duration};
use serde::{Deserialize, Serialize};

/// One direction of a link, or both directions of a symmetric one.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct LinkConfig {
    /// Line rate. Default 100 Gbps.
    pub rate: BitsPerSec,
    /// Propagation delay. Default 100 ns (about 20 m of fibre).
    pub delay: Duration,
    /// Extra receive-side latency per frame, e.g. FEC decoding (PL2 §2: up to 1–2 µs of
    /// variability at 100G). Never reorders frames. Default 0.
    #[serde(deserialize_with = "deserialize_delay")]
    pub fec_jitter: DelayDist,
}

impl Default for LinkConfig {
    fn default() -> Self {
        LinkConfig {
            rate: BitsPerSec::gbps(100),
            delay: Duration::from_ns(100),
            fec_jitter: DelayDist::default(),
        }
    }
}

/// How a NIC picks the next frame among its threads' transmit queues of one priority.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Arbitration {
    /// One frame per queue in turn.
    RoundRobin,
    /// A burst handed over as a unit goes out back to back, then the next queue's turn
    /// (PL2 needs this: its slots are reserved for whole bursts). Default.
    #[default]
    Burst,
}

/// Which CPU pays a host's send-side costs (`host.cpu`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CpuScope {
    /// One CPU per host: every thread's costs are serialised. Default.
    #[default]
    Host,
    /// One CPU per application thread (user-space stacks with a core per thread).
    Thread,
}

impl CpuScope {
    fn is_host(&self) -> bool {
        *self == CpuScope::Host
    }
}

/// A host: application threads, the send path into the NIC, the NIC, the receive path.
/// Each stage is a distribution; stages never reorder frames (a frame leaves a stage no
/// earlier than the one before it).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct HostConfig {
    /// Application threads per host. Default 1.
    pub threads: u16,
    /// Send path latency from the send call to the NIC's transmit queue: doorbell, DMA,
    /// PCIe and NIC pipeline, sampled once per hand-over (a burst shares one sample).
    /// Default 0.
    #[serde(deserialize_with = "deserialize_delay")]
    pub send_latency: DelayDist,
    /// CPU time the sending thread spends per message (serialised per host, or per
    /// thread with `cpu = "thread"`). Default 0.
    #[serde(deserialize_with = "deserialize_delay")]
    pub send_cpu_per_message: DelayDist,
    /// CPU time per packet sent (serialised per host, or per thread with `cpu =
    /// "thread"`). Default 0.
    #[serde(deserialize_with = "deserialize_delay")]
    pub send_cpu_per_packet: DelayDist,
    /// CPU time per hand-over unit sent (a burst the transport hands to the NIC as one:
    /// one doorbell, one send call), on top of the per-packet cost. Default 0.
    // Left out of the canonical form at its default (scenario hashes stay as they were).
    #[serde(deserialize_with = "deserialize_delay", skip_serializing_if = "DelayDist::is_zero")]
    #[schemars(!skip_serializing_if)]
    pub send_cpu_per_burst: DelayDist,
    /// CPU time the sending thread spends per scheduling control frame (kind `control`:
    /// PL2's RSV) it sends and per one addressed to it that it receives (PL2's GRT), on
    /// top of the per-packet costs. Default 0.
    #[serde(deserialize_with = "deserialize_delay", skip_serializing_if = "DelayDist::is_zero")]
    #[schemars(!skip_serializing_if)]
    pub cpu_per_control: DelayDist,
    /// Who pays the send-side CPU costs: `host` (one CPU per host serialises every
    /// thread's costs; default) or `thread` (each application thread has its own CPU:
    /// a thread's data and control frames wait only for that thread's earlier costs;
    /// acknowledgements and frames not sent by a local thread still go through the
    /// host's CPU). See docs/model.md "Host software costs".
    #[serde(default, skip_serializing_if = "CpuScope::is_host")]
    #[schemars(!skip_serializing_if)]
    pub cpu: CpuScope,
    /// Receive path latency from the frame's last bit at the NIC to the application:
    /// NIC pipeline, DMA, completion, wake-up. Default 0.
    #[serde(deserialize_with = "deserialize_delay")]
    pub recv_latency: DelayDist,
    /// CPU time per packet received (serialised per host). Default 0.
    #[serde(deserialize_with = "deserialize_delay")]
    pub recv_cpu_per_packet: DelayDist,
    /// NIC arbitration between threads' queues of the same priority. Default `burst`.
    pub arbitration: Arbitration,
    /// Frames a thread may have handed to the NIC and not yet transmitted (its share of
    /// the transmit ring). Transports that stream (raw Ethernet) refill as frames leave.
    /// Default 64.
    pub tx_ring_frames: u32,
    /// PFC from the NIC's receive buffer: the NIC sends PAUSE frames to its switch when
    /// the lossless bytes it holds (arrived, last bit at its MAC, and not yet at the
    /// application) reach XOFF. Off by default (pl2 hosts take every frame).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(!skip_serializing_if)]
    pub pfc: Option<HostPfcConfig>,
    /// Segmentation offload behind a rate shaper, as etalon's hosts sent (Linux TSO/GSO
    /// under a netem rate qdisc; `docs/model.md` "Hosts in the reTCP experiments"). Off by
    /// default: every frame is handed to the NIC on its own as the transport releases it.
    /// Refused in a run with PL2 (raw, or TCP over PL2), whose bursts are hand-over units
    /// timed by the ToR's grants that the offload would regroup and delay.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(!skip_serializing_if)]
    pub offload: Option<OffloadConfig>,
}

/// Segmentation offload (TSO/GSO) behind a rate shaper in the send path. Consecutive
/// frames of one flow and kind that the transport hands over in one call form a unit of
/// at most `max_bytes` of payload (a GSO super-segment); the shaper holds each unit until
/// its last byte would have left at `rate` (after the units before it: netem's rate,
/// which times a GSO skb as one packet of its whole length), then hands all its frames to
/// the NIC at once, which sends them back to back at the host link's rate. With the link
/// faster than `rate` (etalon: its 40 Gbps NIC, time-dilated 20 times, under a 40 Gbps
/// emulated shaper) a unit reaches the switch as one burst faster than the shaper's rate.
/// Units are not autosized to the flow's pacing rate and TCP does not defer sending to
/// fill them (Linux's `tcp_tso_autosize`, `tcp_tso_should_defer`): every unit is as large
/// as what the transport releases at once allows, up to `max_bytes`.
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OffloadConfig {
    /// Largest payload of one unit. Default 65536 B (Linux's GSO limit, 64 KiB per skb:
    /// seven 8960 B segments).
    #[serde(default = "gso_max_default")]
    pub max_bytes: Bytes,
    /// The shaper's rate, on the frames' wire bytes (etalon: the 40 Gbps of its netem
    /// rate, `etc/python_config.py:17`).
    pub rate: BitsPerSec,
}

fn gso_max_default() -> Bytes {
    Bytes(65_536)
}

impl OffloadConfig {
    /// Checks values serde cannot; the error names the field below `host.offload` and the fix.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        if self.max_bytes.0 == 0 {
            return Err(("max_bytes", "0B; a unit must hold at least one segment (Linux: \"64KiB\")".into()));
        }
        if self.rate.0 == 0 {
            return Err(("rate", "0bps; the shaper needs a positive rate (e.g. \"40Gbps\")".into()));
        }
        Ok(())
    }
}

/// PAUSE frames a host NIC sends from its receive buffer (802.1Qbb at the end station):
/// per lossless priority, the bytes of that priority in the receive path — from a
/// frame's last bit at the NIC's MAC until it reaches the application (`recv_latency`,
/// `recv_cpu_per_packet` and the wait behind earlier frames) — are compared with XOFF and
/// XON; crossing XOFF sends a PAUSE to the switch, falling to XON sends an XON, and while
/// above XON the NIC refreshes the PAUSE before it expires. The NIC drops nothing: a
/// receive buffer too small for what arrives after XOFF is not modelled, so choose XOFF
/// below the NIC's buffer by the headroom (`switch.pfc.headroom`'s rule, the host's link).
/// Note that frames in the receive path count even when the host keeps up: XOFF below
/// the link rate × the receive path's latency pauses an unloaded host.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HostPfcConfig {
    /// Lossless priorities. Default [3].
    #[serde(default = "lossless_default")]
    pub priorities: Vec<u8>,
    /// XOFF on the bytes of one lossless priority in the receive path.
    pub xoff: Bytes,
    /// XON sits this far below XOFF. Default 2 full frames at the network's MTU.
    #[serde(default)]
    pub xon_gap: Option<Bytes>,
    /// Pause time a PAUSE carries, in quanta of 512 bit times (1..=65535). Default 65535.
    #[serde(default = "max_quanta")]
    pub pause_quanta: u16,
    /// Refresh the PAUSE at half its time while above XON. Default true.
    #[serde(default = "yes")]
    pub refresh: bool,
}

impl HostPfcConfig {
    /// Checks values serde cannot; the error names the field below `host.pfc` and the fix.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        if self.priorities.is_empty() || self.priorities.iter().any(|&p| p > 7) {
            return Err(("priorities", format!("{:?}; list the lossless priorities, each 0..=7 (e.g. [3])", self.priorities)));
        }
        if self.xoff.0 == 0 {
            return Err(("xoff", "0B; XOFF must leave room for at least one frame (e.g. \"64KB\")".into()));
        }
        if self.xon_gap.is_some_and(|g| g.0 >= self.xoff.0) {
            return Err(("xon_gap", format!("{}; XON = XOFF − xon_gap must stay above 0, so the gap must be below xoff ({})", self.xon_gap.unwrap_or_default(), self.xoff)));
        }
        if self.pause_quanta == 0 {
            return Err(("pause_quanta", "0 would be an XON; use 1..=65535 (65535 pauses until XON)".into()));
        }
        Ok(())
    }
}

impl Default for HostConfig {
    fn default() -> Self {
        HostConfig {
            threads: 1,
            send_latency: DelayDist::default(),
            send_cpu_per_message: DelayDist::default(),
            send_cpu_per_packet: DelayDist::default(),
            send_cpu_per_burst: DelayDist::default(),
            cpu_per_control: DelayDist::default(),
            cpu: CpuScope::Host,
            recv_latency: DelayDist::default(),
            recv_cpu_per_packet: DelayDist::default(),
            arbitration: Arbitration::Burst,
            tx_ring_frames: 64,
            pfc: None,
            offload: None,
        }
    }
}

/// ECN marking in switch queues.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum EcnConfig {
    /// No marking. Default.
    #[default]
    Off,
    /// Mark ECT frames when the queue (of their priority at the port) holds at least
    /// `threshold` bytes (DCTCP's step marking).
    Step {
        /// Marking threshold, a size (`"30KB"`): queue bytes counted as on the wire
        /// (frame, preamble, SFD and IFG), the frame being judged included. Required.
        threshold: Bytes,
        /// Judge the frame when it leaves the queue (the queue's bytes then) rather than
        /// when it arrives. Default false (at enqueue).
        #[serde(default)]
        at_dequeue: bool,
    },
    /// As `step`, with the threshold counted in frames whatever their size: mark ECT
    /// frames when the queue (of their priority at the port) holds at least
    /// `threshold_packets` frames, the arriving one included (the Polo slides' "ECN
    /// threshold is 5", a queue length in packets as commodity switches can count it).
    StepPackets {
        /// Marking threshold in frames of the port's queue at the frame's priority, the
        /// frame being judged included (any size counts as one). Required.
        threshold_packets: u32,
        /// Judge the frame when it leaves the queue (the queue's frames then) rather than
        /// when it arrives. Default false (at enqueue).
        #[serde(default)]
        at_dequeue: bool,
    },
    /// RED-style: probability rises linearly from 0 at `min` to `p_max` at `max`, 1 above.
    Red {
        /// Queue size, a size (`"5KB"`, wire bytes as for `step`), below which no frame is
        /// marked; at most `max` (`min = max` is a step). Required.
        min: Bytes,
        /// Queue size, a size, from which every frame is marked. Required.
        max: Bytes,
        /// Where the linear rise of the marking probability ends at `max` (at and above
        /// `max` every frame is marked), a number in [0, 1]. Required.
        p_max: f64,
        /// Judge the frame when it leaves the queue (the queue's bytes then) rather than
        /// when it arrives. Default false (at enqueue).
        #[serde(default)]
        at_dequeue: bool,
    },
}

/// How traffic spreads over equal-cost next hops: a switch's setting, which a transport
/// may override for its own frames (its `paths` field), so one run can mix sprayed and
/// unsprayed traffic.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EcmpMode {
    /// Hash of (source, destination, flow) with the switch's seed. Default.
    #[default]
    PerFlow,
    /// Every packet picks a next hop at random (packet spraying).
    PerPacket,
    /// Every packet takes the switch's next equal-cost hop in turn (one counter per
    /// switch, shared by all destinations).
    RoundRobin,
    /// The sender chooses the path: it writes a path number in the frame's `flow` field,
    /// and each switch with several equal-cost next hops reads one mixed-radix digit of
    /// it (the digit of its tier; ToRs read the lowest). Path numbers 0 .. the network's
    /// path count name distinct paths between hosts whose route climbs to the top tier
    /// (htsim's source routes, as NDP's `SCATTER_PERMUTE` strategy uses them).
    Source,
}

/// An output-queued switch with 8 strict-priority queues per port and a shared buffer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct SwitchConfig {
    /// Pipeline latency from a frame becoming eligible (its first bit in cut-through,
    /// its last bit in store-and-forward) to its output queue. Never reorders frames from
    /// one input. Default 350 ns (the PL2 testbed measured 346 ns min, 347 median).
    #[serde(deserialize_with = "deserialize_delay")]
    pub latency: DelayDist,
    /// Cut through when the output rate ≤ the input rate; store-and-forward otherwise.
    /// `false`: always store-and-forward. Default true.
    pub cut_through: bool,
    /// Shared buffer size. Default 12 MiB.
    pub buffer: Bytes,
    /// Per-queue dynamic thresholds (Choudhury–Hahne) on or off. Default true.
    pub dynamic_thresholds: bool,
    /// Dynamic-threshold factor α: a queue may grow to α × the unused buffer. Default 1.0.
    pub alpha: f64,
    /// Static limit on the bytes queued at one output port (all priorities). Default none.
    pub port_limit: Option<Bytes>,
    /// ECN marking. Default off.
    pub ecn: EcnConfig,
    /// ECMP mode. Default per-flow.
    pub ecmp: EcmpMode,
    /// What a frame that is not ECN-capable meets where an ECN-capable one would be
    /// marked (`ecn`): `pass` (default: a mark-only queue; Polo's evaluation needs the
    /// baselines' frames to pass its 5-packet threshold) or `drop` (RED and WRED with ECN
    /// on real switches and in ns-3: the non-ECT frame is dropped, so TCP without ECN is
    /// held at the threshold beside DCTCP). Decided at enqueue, with the arriving frame
    /// counted, for both settings of `at_dequeue`.
    #[serde(skip_serializing_if = "NonEct::is_pass")]
    #[schemars(!skip_serializing_if)]
    pub non_ect: NonEct,
    /// How each output port queues frames. Default `strict_priority`.
    // Left out of the canonical form at its default, so scenarios written before the key
    // existed keep their form and hash; the schema still shows it.
    #[serde(skip_serializing_if = "QueueDiscipline::is_default")]
    #[schemars(!skip_serializing_if)]
    pub queue: QueueDiscipline,
    /// Admission by an ingress pool and an egress pool (each with a guaranteed minimum per
    /// port and a dynamic or static limit per (port, priority)), instead of `alpha` and
    /// `port_limit`; `buffer` stays the physical size. Default none.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(!skip_serializing_if)]
    pub pools: Option<BufferPools>,
    /// Priority flow control (802.1Qbb) on every port of the switch. Default none.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(!skip_serializing_if)]
    pub pfc: Option<PfcConfig>,
    /// Source Flow Control (IEEE 802.1Qdw) at the switch's egress queues. Default none.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(!skip_serializing_if)]
    pub sfc: Option<SfcConfig>,
}

/// Source Flow Control (IEEE 802.1Qdw, the seed `003_eda4436261382f03`): when a frame of
/// an SFC priority joins an egress queue and that (port, priority)'s bytes (frames waiting
/// and the one being serialised, as the shared buffer counts them) reach `trigger`, the
/// switch sends a signal frame straight to the frame's source host, carrying a pause
/// duration (`pause_time`); the source's transport pauses the flow (or, with `proxy`,
/// the source's ToR turns the signal into a PFC PAUSE of the data's priority towards the
/// source NIC). One signal per (switch, `suppress_per` key) per `suppression`; once that
/// has run out the next frame enqueued at or above the trigger sends a new one. See
/// `docs/model.md`, "SFC".
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SfcConfig {
    /// Egress (port, priority) bytes at or above which an enqueue signals. Default 100KB.
    #[serde(default = "sfc_trigger")]
    pub trigger: Bytes,
    /// Queue depth the pause aims to drain to (`pause_time = drain_to_target`). Default
    /// 50KB (64KB in the seed's fairness runs).
    #[serde(default = "sfc_target")]
    pub target: Bytes,
    /// No second signal for the same key from this switch within this time. Default 6 µs.
    #[serde(default = "sfc_suppression")]
    pub suppression: Duration,
    /// What a suppression entry is keyed by, besides the switch. Default `flow`.
    #[serde(default)]
    pub suppress_per: SfcSuppressKey,
    /// Priorities whose queues trigger signals. Default [3] (RoCE's data class).
    #[serde(default = "sfc_priorities")]
    pub priorities: Vec<u8>,
    /// Priority the signal travels in (a class PFC never pauses). Default 7.
    #[serde(default = "sfc_signal_priority")]
    pub signal_priority: u8,
    /// How long the signal tells the source to pause. Default `drain_to_target`.
    #[serde(default)]
    pub pause_time: SfcPauseTime,
    /// The switch attached to the signal's destination host converts it into a PFC
    /// PAUSE towards that host's NIC (for NICs that only speak PFC). Default false.
    #[serde(default)]
    pub proxy: bool,
}

/// The pause a signal carries.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum SfcPauseTime {
    /// (queue bytes − `target`) × 8 / the egress port's rate, rounded up to the
    /// picosecond: the time the port needs to bring the queue down to the target if
    /// nothing more arrives. Default.
    #[default]
    DrainToTarget,
    /// The same `time` for every signal.
    Fixed {
        /// The pause every signal carries (e.g. "4us").
        time: Duration,
    },
}

/// Key of SFC's suppression entries (each switch keeps its own).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SfcSuppressKey {
    /// The triggering frame's (source host, `flow`): every flow is told once. Default.
    #[default]
    Flow,
    /// The triggering frame's source host: one signal per host per period, whichever of
    /// its flows triggers it.
    Source,
}

fn sfc_trigger() -> Bytes {
    Bytes(100_000)
}
fn sfc_target() -> Bytes {
    Bytes(50_000)
}
fn sfc_suppression() -> Duration {
    Duration::from_us(6)
}
fn sfc_priorities() -> Vec<u8> {
    vec![3]
}
fn sfc_signal_priority() -> u8 {
    7
}

impl Default for SfcConfig {
    fn default() -> Self {
        SfcConfig {
            trigger: sfc_trigger(),
            target: sfc_target(),
            suppression: sfc_suppression(),
            suppress_per: SfcSuppressKey::default(),
            priorities: sfc_priorities(),
            signal_priority: sfc_signal_priority(),
            pause_time: SfcPauseTime::default(),
            proxy: false,
        }
    }
}

impl SfcConfig {
    /// Checks values serde cannot; the error names the field below `sfc` and the fix.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        if self.trigger.0 == 0 {
            return Err(("trigger", "0B; the trigger must be a positive queue depth (the seed's is \"100KB\")".into()));
        }
        if self.target.0 >= self.trigger.0 {
            return Err(("target", format!("{} is not below the trigger {}; the pause drains the queue from the trigger down to the target (the seed: 50KB under 100KB)", self.target, self.trigger)));
        }
        if self.priorities.is_empty() || self.priorities.iter().any(|&p| p > 7) {
            return Err(("priorities", format!("{:?}; list the priorities whose queues signal, each 0..=7 (e.g. [3])", self.priorities)));
        }
        if self.signal_priority > 7 {
            return Err(("signal_priority", format!("{}; priorities are 0..=7 (7, never paused, is the default)", self.signal_priority)));
        }
        if self.priorities.contains(&self.signal_priority) {
            return Err(("signal_priority", format!("{} is one of the SFC priorities {:?}; signals must travel in a class that neither triggers signals nor is paused", self.signal_priority, self.priorities)));
        }
        if let SfcPauseTime::Fixed { time } = self.pause_time {
            if time.0 == 0 {
                return Err(("pause_time", "a fixed time of 0 pauses nothing; give a duration such as \"4us\"".into()));
            }
        }
        Ok(())
    }

    /// Checks SFC against the same switch's PFC: signals must not ride in a lossless
    /// class (a PAUSE would hold up the signal meant to relieve it).
    pub fn check_with(&self, pfc: Option<&PfcConfig>) -> Result<(), (&'static str, String)> {
        self.check()?;
        if let Some(p) = pfc.filter(|p| p.priorities.contains(&self.signal_priority)) {
            return Err(("signal_priority", format!("{} is lossless under pfc.priorities {:?}; signals must travel in a class PFC never pauses (7 by default)", self.signal_priority, p.priorities)));
        }
        Ok(())
    }
}

/// Ingress and egress buffer pools. A side left out is not accounted for admission
/// ("disabled", as the SFC seed's runs disable ingress accounting; the bytes are still
/// counted per ingress port for PFC).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BufferPools {
    /// The ingress pool: admission by (ingress port, priority). Default none.
    #[serde(default)]
    pub ingress: Option<PoolConfig>,
    /// The egress pool: admission by (egress port, priority). Default none. Lossless
    /// (PFC) priorities are never refused here.
    #[serde(default)]
    pub egress: Option<PoolConfig>,
}

/// One side's pool.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PoolConfig {
    /// The shared part's size (beyond the ports' guarantees).
    pub size: Bytes,
    /// Bytes every port may hold whatever the pool's state (all priorities together).
    /// Default 0.
    #[serde(default)]
    pub guaranteed: Bytes,
    /// What one (port, priority) may hold beyond its port's guarantee: `{ alpha = 1.0 }`
    /// (α × the pool's free shared space, Choudhury–Hahne: one queue alone reaches the
    /// guarantee + α/(1 + α) of the pool) or `{ bytes = "800KB" }`.
    pub limit: PoolLimit,
}

/// A per-(port, priority) limit on a pool.
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum PoolLimit {
    /// `{ bytes = "800KB" }`
    Bytes(Bytes),
    /// `{ alpha = 1.0 }`
    Alpha(f64),
}

impl BufferPools {
    /// Checks values serde cannot; the error names the field below `pools` and the fix.
    pub fn check(&self) -> Result<(), (String, String)> {
        for (side, p) in [("ingress", &self.ingress), ("egress", &self.egress)] {
            let Some(p) = p else { continue };
            if p.size.0 == 0 {
                return Err((format!("{side}.size"), "0B; a pool needs room for at least one frame (e.g. \"16MB\")".into()));
            }
            if let PoolLimit::Alpha(a) = p.limit {
                if !(a.is_finite() && a > 0.0) {
                    return Err((format!("{side}.limit"), format!("alpha {a}; a positive factor of the pool's free space (e.g. {{ alpha = 1.0 }})")));
                }
            }
        }
        Ok(())
    }
}

/// Priority flow control (IEEE 802.1Qbb) at a switch: per (ingress port, lossless
/// priority), the bytes that came in through that port and are still in the switch are
/// compared with XOFF and XON thresholds; crossing XOFF sends a PAUSE frame to the
/// upstream neighbour, which stops serving that priority towards this switch until the
/// pause expires or an XON (a PAUSE with time 0) arrives. Frames of lossless priorities
/// are admitted by these ingress counters alone (the egress dynamic thresholds and port
/// limit never drop them); frames beyond XOFF fill the headroom, and a frame that would
/// overflow it is dropped (`headroom`) — with the default headroom that cannot happen.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PfcConfig {
    /// Lossless priorities (PFC-enabled classes). Default [3] (RoCE's usual class). Every
    /// other priority is never paused: acknowledgements, CNPs and control frames belong
    /// there.
    #[serde(default = "lossless_default")]
    pub priorities: Vec<u8>,
    /// The XOFF threshold on an (ingress port, lossless priority)'s bytes: bytes, or α ×
    /// the free part of the ingress pool (`pools.ingress`; without one, of the shared
    /// buffer). Lossless frames are admitted up to XOFF + headroom whatever the pools say.
    pub xoff: PfcThreshold,
    /// XON sits this far below XOFF: a paused upstream resumes when the bytes fall to
    /// XOFF − `xon_gap`. Default 2 full frames at the network's MTU.
    #[serde(default)]
    pub xon_gap: Option<Bytes>,
    /// Room per (ingress port, lossless priority) above XOFF for the bytes already on
    /// their way when the PAUSE is sent. Default: the link's rate × (2 × (its delay + the
    /// link FEC jitter's bound) + the switch's pipeline latency bound (frames still in
    /// this switch's input pipeline are not counted yet; the bound is the latency
    /// distribution's maximum, or mean + 6σ, or min + 10 × mean extra) + 2 full frames'
    /// time (the frame holding up the PAUSE here and the one the upstream port finishes) +
    /// the PAUSE frame's own time + `response_time`). The upstream MAC acts on a PAUSE at
    /// its last bit, not behind the frames in its node's input pipeline or a host's
    /// receive path, so neither counts.
    #[serde(default)]
    pub headroom: Option<Bytes>,
    /// How long an upstream port takes to act on a PAUSE beyond finishing its current
    /// frame (802.1Qbb bounds it; pl2's ports act on arrival). Counted in the default
    /// headroom only. Default 0.
    #[serde(default)]
    pub response_time: Duration,
    /// Pause time a PAUSE frame carries, in quanta of 512 bit times of the link
    /// (802.1Qbb: 0..=65535). Default 65535 (the maximum: the pause lasts until XON or a
    /// refresh).
    #[serde(default = "max_quanta")]
    pub pause_quanta: u16,
    /// Whether a switch still above XON resends the PAUSE before it expires (at half its
    /// time). Default true.
    #[serde(default = "yes")]
    pub refresh: bool,
    /// Report a pause deadlock and stop the run when a cycle of ports, each paused by the
    /// next, has stayed paused this long with no frame leaving any of them. Default 10 ms.
    #[serde(default = "deadlock_default")]
    pub deadlock_after: Duration,
}

/// A PFC threshold: a fixed number of bytes, or dynamic, α × the shared buffer left free.
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum PfcThreshold {
    /// `{ bytes = "650KB" }`
    Bytes(Bytes),
    /// `{ alpha = 1.0 }`
    Alpha(f64),
}

fn lossless_default() -> Vec<u8> {
    vec![3]
}
fn max_quanta() -> u16 {
    u16::MAX
}
fn yes() -> bool {
    true
}
fn deadlock_default() -> Duration {
    Duration::from_ms(10)
}

impl PfcConfig {
    /// Checks values serde cannot; the error names the field below `pfc` and the fix.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        if self.priorities.is_empty() || self.priorities.iter().any(|&p| p > 7) {
            return Err(("priorities", format!("{:?}; list the lossless priorities, each 0..=7 (e.g. [3])", self.priorities)));
        }
        match self.xoff {
            PfcThreshold::Bytes(b) if b.0 == 0 => return Err(("xoff", "0B; XOFF must leave room for at least one frame (e.g. { bytes = \"650KB\" })".into())),
            PfcThreshold::Alpha(a) if !(a.is_finite() && a > 0.0) => return Err(("xoff", format!("alpha {a}; a positive factor of the free shared buffer (e.g. {{ alpha = 1.0 }})"))),
            _ => {}
        }
        if self.pause_quanta == 0 {
            return Err(("pause_quanta", "0 would be an XON; use 1..=65535 (65535 pauses until XON)".into()));
        }
        if self.deadlock_after.0 == 0 {
            return Err(("deadlock_after", "0; give a duration such as \"10ms\"".into()));
        }
        Ok(())
    }
}

/// What happens to a frame that is not ECN-capable over the marking threshold.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum NonEct {
    /// It passes unmarked (a mark-only queue). Default.
    #[default]
    Pass,
    /// It is dropped (RED/WRED with ECN).
    Drop,
}

impl NonEct {
    fn is_pass(&self) -> bool {
        *self == NonEct::Pass
    }
}

/// How a switch's output ports queue frames (every port of the switch alike; per-switch
/// overrides choose it per switch).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum QueueDiscipline {
    /// Eight FIFOs served in strict priority, limited only by the shared buffer. Default.
    #[default]
    StrictPriority,
    /// NDP's trimming queue (htsim's `CompositeQueue`, Broadcom/csg-htsim
    /// `sim/compositequeue.cpp`): the eight strict-priority FIFOs, each data FIFO limited
    /// to `data_limit` and the header FIFO (`header_prio`) to `header_limit`. A trimmable
    /// data frame (flag set by its transport) that finds its FIFO full is cut to its
    /// header and queued in the header FIFO, or, with probability
    /// `trim_newest_probability`, is queued and the newest frame of the FIFO is cut
    /// instead. Other frames over a limit are dropped. A header over the header limit is
    /// dropped, or returned to its sender (`header_overflow`). The shared buffer still
    /// applies to whatever is queued.
    Trimming(TrimmingConfig),
}

/// A limit on one FIFO: bytes on the wire, or frames (both counting the frame being
/// serialised, as htsim's queues do).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum QueueLimit {
    /// `{ bytes = "72000B" }`
    Bytes(Bytes),
    /// `{ frames = 8 }`
    Frames(u32),
}

/// What a trimming queue does with a header its header FIFO has no room for.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HeaderOverflow {
    /// Drop it (Broadcom htsim: `_return_to_sender` is false). Default.
    #[default]
    Drop,
    /// Send it back to its source, once (the NDP paper's return-to-sender, §3.2; htsim's
    /// `bounce()`): the frame's source and destination are swapped and it is flagged
    /// `RETURNED`. A returned header that overflows again is dropped.
    ReturnToSender,
}

/// The trimming queue's settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TrimmingConfig {
    /// Limit of each data FIFO. htsim's `-q 8` is `{ bytes = "72000B" }` (8 × the 9000 B
    /// MTU), which holds 7 frames of 9064 B.
    pub data_limit: QueueLimit,
    /// Limit of the header FIFO. Default: twice the data limit in bytes (Broadcom htsim,
    /// `compositequeue.cpp:168,225`; a frame limit counts full frames at the network's MTU).
    #[serde(default)]
    pub header_limit: Option<QueueLimit>,
    /// Priority of the header FIFO, served before the data FIFOs below it. Default 7.
    #[serde(default = "seven")]
    pub header_prio: u8,
    /// Probability that a trimmable frame finding its FIFO full is queued and the newest
    /// frame of the FIFO trimmed instead (htsim draws ½, `compositequeue.cpp:142`).
    /// Default 0.5. With an empty FIFO (only the frame on the wire) the arriving frame is
    /// trimmed.
    #[serde(default = "half")]
    pub trim_newest_probability: f64,
    /// What happens to a header over the header limit. Default `drop`.
    #[serde(default)]
    pub header_overflow: HeaderOverflow,
}

impl QueueDiscipline {
    fn is_default(&self) -> bool {
        *self == QueueDiscipline::StrictPriority
    }

    /// Checks values serde cannot; the error names the field below the discipline's table
    /// and the fix.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        let QueueDiscipline::Trimming(t) = self else { return Ok(()) };
        let limit = |l: QueueLimit, f: &'static str| match l {
            QueueLimit::Bytes(b) if b.0 == 0 => Err((f, "0B; a FIFO must hold at least one frame (htsim's -q 8 is { bytes = \"72000B\" })".to_string())),
            QueueLimit::Frames(0) => Err((f, "0 frames; a FIFO must hold at least one frame (e.g. { frames = 8 })".to_string())),
            _ => Ok(()),
        };
        limit(t.data_limit, "data_limit")?;
        if let Some(h) = t.header_limit {
            limit(h, "header_limit")?;
        }
        if t.header_prio > 7 {
            return Err(("header_prio", format!("{}; priorities are 0..=7 (7, the highest, is the default)", t.header_prio)));
        }
        let p = t.trim_newest_probability;
        if !(0.0..=1.0).contains(&p) {
            return Err(("trim_newest_probability", format!("{p}; a probability from 0 (always trim the arriving frame) to 1 (always the newest queued one); htsim uses 0.5")));
        }
        Ok(())
    }
}

fn seven() -> u8 {
    7
}
fn half() -> f64 {
    0.5
}

impl Default for SwitchConfig {
    fn default() -> Self {
        SwitchConfig {
            latency: DelayDist::constant(Duration::from_ns(350)),
            cut_through: true,
            buffer: Bytes(12 << 20),
            dynamic_thresholds: true,
            alpha: 1.0,
            port_limit: None,
            ecn: EcnConfig::Off,
            ecmp: EcmpMode::PerFlow,
            non_ect: NonEct::Pass,
            queue: QueueDiscipline::StrictPriority,
            pfc: None,
            pools: None,
            sfc: None,
        }
    }
}

/// Which network to build.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum TopologyConfig {
    /// `hosts` hosts on one top-of-rack switch (PL2's testbed: 6). With `breakout` = n
    /// (1, 2, 4 or 8), each physical switch port of `link.rate` is split into n lanes of
    /// `link.rate / n`, one host each (100G as 4×25G, PL2 §4.2.1).
    SingleRack {
        /// Hosts on the switch, 2 to 131072 (hosts `h0..`, the switch `s0`). Required.
        hosts: u32,
        /// Lanes per physical switch port: 1, 2, 4 or 8, dividing `link.rate` evenly.
        /// Default 1 (no breakout).
        #[serde(default = "one")]
        breakout: u32,
    },
    /// `hosts_per_side` hosts on each of two switches joined by one `bottleneck` link.
    Dumbbell {
        /// Hosts on each switch, 1 to 65536: the first half of the hosts on `s0`, the
        /// second on `s1`. Required.
        hosts_per_side: u32,
        /// The link between the two switches. Default: 100 Gbps, 100 ns (a link table's
        /// own defaults, not `[network.link]`).
        #[serde(default)]
        bottleneck: LinkConfig,
    },
    /// `leaves` ToRs with `hosts_per_leaf` hosts each, every leaf joined to every one of
    /// `spines` spines by an `uplink`. Oversubscription = hosts_per_leaf × host rate /
    /// (spines × uplink rate).
    LeafSpine {
        /// Leaf (ToR) switches, at least 1: switches `s0..` are the leaves, then the
        /// spines. Required.
        leaves: u32,
        /// Spine switches, at least 1. Required.
        spines: u32,
        /// Hosts per leaf, at least 1 (leaf i holds hosts i × hosts_per_leaf ..); at most
        /// 131072 hosts in all. Required.
        hosts_per_leaf: u32,
        /// Each leaf–spine link. Default: 100 Gbps, 100 ns (a link table's own defaults,
        /// not `[network.link]`).
        #[serde(default)]
        uplink: LinkConfig,
    },
    /// A k-ary 3-tier fat tree (k³/4 hosts, k pods of k/2 edge and k/2 aggregation
    /// switches, (k/2)² core switches), all links alike.
    FatTree {
        /// Switch radix: an even number from 2 to 64. Required.
        k: u32,
    },
    /// A 3-tier Clos of `pods` pods, each of `tors_per_pod` ToRs and `aggs_per_pod`
    /// aggregation switches, over `cores` core switches. Each ToR has `hosts_per_tor`
    /// hosts on `[network.link]` and one `tor_uplink` to every aggregation switch of its
    /// pod; every aggregation switch has one `agg_uplink` to every core. The SFC slides'
    /// network is `pods = 5, tors_per_pod = 4,
    /// aggs_per_pod = 4, cores = 16, hosts_per_tor = 16` with 400G uplinks (320 hosts, 56
    /// switches of radix 20).
    ThreeTier {
        /// Pods, at least 1. Switches are numbered ToRs first (pod by pod), then
        /// aggregation switches, then cores. Required.
        pods: u32,
        /// ToRs per pod, at least 1. Required.
        tors_per_pod: u32,
        /// Aggregation switches per pod, at least 1. Required.
        aggs_per_pod: u32,
        /// Core switches, at least 1. Required.
        cores: u32,
        /// Hosts per ToR, at least 1 (ToR i holds hosts i × hosts_per_tor ..); at most
        /// 131072 hosts and 131072 switches in all. Required.
        hosts_per_tor: u32,
        /// ToR–aggregation links. Default: `[network.link]`.
        #[serde(default)]
        tor_uplink: Option<LinkConfig>,
        /// Aggregation–core links. Default: `tor_uplink`.
        #[serde(default)]
        agg_uplink: Option<LinkConfig>,
    },
    /// Any graph: `switches` switches, `hosts` hosts, and links between named nodes
    /// `"h3"` / `"s0"`, each with optional rate and delay (defaults from `[link]`).
    Custom {
        /// Hosts, `"h0"` .. `"h<hosts − 1>"`: 2 to 131072. Required.
        hosts: u32,
        /// Switches, `"s0"` .. `"s<switches − 1>"`: at most 131072. Required.
        switches: u32,
        /// The links: every host on exactly one link, to a switch; no link from a node to
        /// itself; every host reachable from `h0`. Required.
        links: Vec<CustomLink>,
    },
    /// A reconfigurable datacenter network (reTCP, Mukerjee et al. NSDI 2020, slide 2):
    /// `racks` ToRs of `hosts_per_rack` hosts (host links: `[network.link]`), every ToR
    /// joined to one packet switch by `packet` links and to one circuit switch by
    /// `circuit` links. `packet.delay` and `circuit.delay` are the one-way latencies
    /// between two ToRs over each network, split evenly between the two links of the
    /// path. The circuit switch follows `[network.circuit]`'s schedule and each ToR keeps
    /// one virtual output queue per destination rack (`[network.voq]`, see
    /// `sim/hybrid.rs`). Switches: ToRs `s0..s<racks>`, then the packet switch, then the
    /// circuit switch.
    HybridRacks {
        /// Racks (ToRs), at least 2. Required.
        racks: u32,
        /// Hosts per rack, at least 1 (rack i holds hosts i × hosts_per_rack ..); at
        /// most 131072 hosts in all. Required.
        hosts_per_rack: u32,
        /// Default 10 Gbps, 5 µs (etalon).
        #[serde(default = "packet_network")]
        packet: LinkConfig,
        /// Default 80 Gbps, 30 µs (etalon).
        #[serde(default = "circuit_network")]
        circuit: LinkConfig,
    },
}

fn packet_network() -> LinkConfig {
    LinkConfig { rate: BitsPerSec::gbps(10), delay: Duration::from_us(5), ..LinkConfig::default() }
}

fn circuit_network() -> LinkConfig {
    LinkConfig { rate: BitsPerSec::gbps(80), delay: Duration::from_us(30), ..LinkConfig::default() }
}

impl Default for TopologyConfig {
    fn default() -> Self {
        TopologyConfig::SingleRack { hosts: 6, breakout: 1 }
    }
}

fn one() -> u32 {
    1
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CustomLink {
    /// One end: `"h<index>"` (host) or `"s<index>"` (switch).
    pub a: String,
    /// The other end.
    pub b: String,
    /// Rate; default `[network.link].rate`.
    pub rate: Option<BitsPerSec>,
    /// Propagation delay; default `[network.link].delay`.
    pub delay: Option<Duration>,
}

/// Everything about the network: topology, default link, host and switch models, framing.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct NetworkConfig {
    /// Which network to build, selected by `kind`. Default: a single rack of 6 hosts.
    pub topology: TopologyConfig,
    /// Host links (and every link the topology does not configure itself).
    pub link: LinkConfig,
    /// Every host's model.
    pub host: HostConfig,
    /// Every switch's model (see `override` for per-switch changes).
    pub switch: SwitchConfig,
    /// Ethernet framing.
    pub framing: Framing,
    /// IP MTU (largest Ethernet payload). Default 1500 B.
    pub mtu: Bytes,
    /// Per-element changes to switches and links: `[[network.override]]` tables.
    #[serde(rename = "override")]
    pub overrides: Vec<crate::net::overrides::Override>,
    /// The circuit switch's schedule (`topology.kind = "hybrid_racks"` only; default
    /// etalon's: round robin, 180 µs days, 20 µs nights).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub circuit: Option<crate::net::circuit::CircuitConfig>,
    /// The hybrid ToRs' virtual output queues (`hybrid_racks` only; default 16 frames).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub voq: Option<crate::net::circuit::VoqConfig>,
}

impl Default for NetworkConfig {
    fn default() -> Self {
        NetworkConfig {
            topology: TopologyConfig::default(),
            link: LinkConfig::default(),
            host: HostConfig::default(),
            switch: SwitchConfig::default(),
            framing: Framing::default(),
            mtu: Bytes(1500),
            overrides: Vec::new(),
            circuit: None,
            voq: None,
        }
    }
}

impl NetworkConfig {
    /// Whether any switch marks ECN: the default switch model, one switch's override, or
    /// the hybrid ToRs' VOQs.
    pub fn marks_ecn(&self) -> bool {
        self.switch.ecn != EcnConfig::Off
            || self.overrides.iter().any(|o| o.ecn.as_ref().is_some_and(|e| *e != EcnConfig::Off))
            || self.voq.as_ref().is_some_and(|v| v.mark_threshold_packets.is_some())
    }

    /// The PL2 paper's testbed (§5, §6): 6 hosts on one ToR, 100 Gbps, MTU 1500 B.
    ///
    /// - Switch pipeline: the measured 346 ns min, 347 ns median, 508 ns p99.99 (std
    ///   3 ns) as a quantile function. Points between the median and p99.99 are ours,
    ///   chosen to keep the spread near the reported 3 ns: 349 ns at p90, 352 ns at p99,
    ///   356 ns at p99.9 (std ≈ 4.5 ns; with only the three reported points the linear
    ///   interpolation would put p75 at 427 ns).
    /// - Buffer: about 1.5 MB per port: a 9 MB (6 × 1.5 MB) shared buffer with a static
    ///   1.5 MB limit per output port and no dynamic thresholds.
    /// - Links: 100 ns propagation (the default; about 20 m of fibre and cable).
    /// - Host delays, derived from the RSV–GRT exchange measured NIC to NIC with hardware
    ///   timestamps (§5: 1.00 µs min, 1.06 µs median, 14 µs max). Here the NIC pipelines
    ///   are the send and receive latencies, so the exchange the sender measures is
    ///   `send + wire + switch + GRT serialisation (84 B: 6.72 ns) + wire + recv`. The
    ///   fixed part is 100 + 346 + 6.72 + 100 = 552.72 ns at the switch minimum, so the
    ///   two host stages must add 447.28 ns at their minimum: send 224 ns (constant),
    ///   receive 223.28 ns minimum. The median (1.06 µs) puts the receive median 59 ns
    ///   above its minimum (the switch median adds 1 ns); the tail puts the receive
    ///   p99.99 at 13 µs − 776.72 ns (exchange p99.99 ≈ 13 µs) and its maximum at
    ///   14 µs − 776.72 ns (the reported maximum). The shape in between is ours (+80 ns
    ///   at p90, +200 ns at p99, +1 µs at p99.9). All jitter sits on the receive side, so
    ///   the send path stays FIFO-exact.
    pub fn pl2_testbed() -> NetworkConfig {
        let ns = Duration::from_ns;
        let ps = Duration;
        let r0 = 223_280u64;
        NetworkConfig {
            topology: TopologyConfig::SingleRack { hosts: 6, breakout: 1 },
            link: LinkConfig::default(),
            host: HostConfig {
                send_latency: DelayDist::constant(ns(224)),
                recv_latency: DelayDist::Quantiles {
                    points: vec![
                        (0.0, ps(r0)),
                        (0.5, ps(r0 + 59_000)),
                        (0.9, ps(r0 + 80_000)),
                        (0.99, ps(r0 + 200_000)),
                        (0.999, ps(r0 + 1_000_000)),
                        (0.9999, ps(13_000_000 - 776_720)),
                        (1.0, ps(14_000_000 - 776_720)),
                    ],
                },
                ..HostConfig::default()
            },
            switch: SwitchConfig {
                latency: DelayDist::Quantiles {
                    points: vec![
                        (0.0, ns(346)),
                        (0.5, ns(347)),
                        (0.9, ns(349)),
                        (0.99, ns(352)),
                        (0.999, ns(356)),
                        (0.9999, ns(508)),
                        (1.0, ns(508)),
                    ],
                },
                cut_through: true,
                buffer: Bytes(6 * 1_500_000),
                dynamic_thresholds: false,
                port_limit: Some(Bytes(1_500_000)),
                ..SwitchConfig::default()
            },
            mtu: Bytes(1500),
            ..NetworkConfig::default()
        }
    }
}
