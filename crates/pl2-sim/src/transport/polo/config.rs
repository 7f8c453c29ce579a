//! `PoloConfig`: every knob of Polo, with the slides' values where they give one and our
//! documented choices where they leave it open (`docs/model.md`, "Polo").

use crate::framing::L4Headers;
use crate::transport::raw::RawHeaders;
use crate::units::{Bytes, Duration};
use serde::{Deserialize, Serialize};

/// Polo (receiver-driven congestion control over priority queues and ECN) parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct PoloConfig {
    /// Headers between Ethernet and the data payload: `none` (raw Ethernet, default) or
    /// `udp`. Adjoint and control packets are header-sized (minimum frames) either way.
    pub headers: RawHeaders,
    /// 802.1Q priority of first transmissions of data (ECN-capable). Default 0.
    pub data_priority: u8,
    /// 802.1Q priority of retransmitted data, so a recovered packet does not wait behind
    /// the queue that lost it. Default 1.
    pub retransmit_priority: u8,
    /// 802.1Q priority of adjoint, acknowledgement, driving, loss, pause and done
    /// packets (never ECN-capable). Default 7 ("high priority", Polo slides, "Overview").
    pub control_priority: u8,
    /// Packets a new flow sends at line rate before any driving packet (its first
    /// burst). Default 12, the baselines' RTTbytes / initial window in the slides'
    /// evaluation, so the designs start on equal terms.
    pub initial_window_packets: u32,
    /// Floor of D after a decrease, in packets (of each flow's D with `d_scope = "flow"`,
    /// applied at every epoch's end). Default 1: a receiver never stops driving
    /// altogether.
    pub d_min_packets: u32,
    /// Whether D bounds each active flow's driving packets (`flow`, default) or is the
    /// receiver's, shared by its active flows (`receiver`). The slides leave the sharing
    /// open; the choice was measured over the whole Polo family (`docs/model.md`, "Polo").
    pub d_scope: DScope,
    /// How D ← D − M/2 rounds an odd M: `up` (default; a single mark decreases D) or
    /// `down`.
    pub mark_rounding: MarkRounding,
    /// Recovery 3: a sender that hears nothing about a flow for this long after its last
    /// adjoint packet resends its highest packet. Default 1 ms (Polo slides).
    pub rto: Duration,
    /// Epochs with no data from any active flow before recovery 2 sends a loss packet.
    /// Default 2 (Polo slides, "Recovery mechanism 2").
    pub idle_epochs: u32,
    /// Recovery 1 (loss packet on a sequence gap). `false` is Polo^c. Default true.
    pub recovery_gap: bool,
    /// Recovery 2 (loss packet to a random active flow after idle epochs). `false` is
    /// Polo^b. Default true.
    pub recovery_idle: bool,
    /// Our design of the optimisation for wasted driving packets: a driving packet the
    /// arriving flow cannot use (it has nothing left to request) goes to another active
    /// flow, or is not sent. `false` is Polo^a. Default true.
    pub redirect_wasted_driving: bool,
    /// The pause mechanism for large incasts: flows arriving after the receiver's first
    /// ECN mark are paused until an active flow finishes (or as `pause_end` says).
    /// Default true.
    pub pause: bool,
    /// When a paused flow resumes and when new flows are paused again (the slides say
    /// only "paused temporarily" and "when an active flow is finished"):
    /// `unmarked_epoch` (default) or `flow_finish` (`docs/model.md`, "Polo").
    pub pause_end: PauseEnd,
    /// When the application's sending thread is free for its next message: `false`
    /// (default) once the flow's last packet is handed to the NIC for the first time, as
    /// a blocking send on a user-space stack returns (pl2's PL2 threads block the same
    /// way); `true` as soon as the message is handed to Polo, as pl2's Homa, NDP and
    /// pHost do (a send queue of unlimited size). The slides do not say; the evaluation
    /// gives hosts enough threads that no flow waits for one, where both readings give
    /// the same runs (`docs/model.md`, "Polo"). Default false (left out of the canonical
    /// scenario then, so older scenarios keep their keys).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    #[schemars(!skip_serializing_if)]
    pub release_thread_at_once: bool,
    /// A bound on D's growth, which the slides do not have: `none` (default, the slides'
    /// rule: +1 per unmarked epoch with a packet, however few packets D's window carried)
    /// or `validated` (RFC 7661: D grows only in an epoch that used at
    /// least half of it, i.e. 2 × the epoch's data arrivals ≥ D, the receiver's analogue of
    /// "pipeACK ≥ ½ cwnd"). Not in the slides (`docs/model.md`, "Polo"). Default `none`
    /// (left out of the canonical scenario then, so older scenarios keep their keys).
    #[serde(skip_serializing_if = "DBound::is_none")]
    #[schemars(!skip_serializing_if)]
    pub d_bound: DBound,
    /// A priority for short messages' data, which the slides do not have: first
    /// transmissions of data of a message of at most `max_bytes` go at `priority`
    /// instead of `data_priority`, as Homa's unscheduled priorities favour short
    /// messages. A diagnostic of where Polo's tail comes from (`docs/model.md`, "Polo").
    /// Default none: every first transmission at `data_priority` (left out of the
    /// canonical scenario then, so older scenarios keep their keys).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(!skip_serializing_if)]
    pub short_first: Option<ShortFirst>,
}

/// Short messages' data at a higher priority (`PoloConfig::short_first`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShortFirst {
    /// Messages of at most this size (payload bytes, e.g. "100KB") are short.
    pub max_bytes: Bytes,
    /// 802.1Q priority of their first transmissions: above `data_priority`, below
    /// `control_priority`.
    pub priority: u8,
}

/// What limits D's growth in an unmarked epoch.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DBound {
    /// The slides' rule: D grows by one in every later epoch with data and no mark, with
    /// no upper bound. Default.
    #[default]
    None,
    /// Congestion-window validation (RFC 7661; the receiver's D in the role of
    /// cwnd, the data packets that arrived in the epoch in that of pipeACK): an unmarked
    /// epoch grows D only if at least half of D arrived in it (2 × arrivals ≥ D), so D
    /// stays within about twice what one epoch of the path carries. Each flow's D is
    /// tested against its own arrivals with `d_scope = "flow"`; the receiver's D against
    /// all its arrivals.
    Validated,
}

impl DBound {
    /// Whether this is the slides' rule (no bound).
    pub fn is_none(&self) -> bool {
        *self == DBound::None
    }

    /// Whether an unmarked epoch with `arrivals` data packets may grow `d` by one.
    pub fn allows_growth(self, d: u32, arrivals: u32) -> bool {
        match self {
            DBound::None => true,
            DBound::Validated => 2 * u64::from(arrivals) >= u64::from(d),
        }
    }
}

/// How long the pause mechanism holds a flow.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PauseEnd {
    /// A paused flow resumes only when an active flow finishes (the oldest paused flow
    /// first), and once the receiver has seen a mark every new flow is paused while any
    /// flow is active, until the receiver has no flow left.
    FlowFinish,
    /// Also: an epoch that ends with data packets and no mark (the bottleneck queue
    /// stayed under the threshold) ends the receiver's marked state, so a new flow is
    /// active again unless older flows are still paused or a later mark comes first; and
    /// if the receiver's D (its AIMD count, kept with either `d_scope`) is above its
    /// number of active flows, so that D has room for one more flow's packet per epoch,
    /// it resumes the oldest paused flow. Default.
    #[default]
    UnmarkedEpoch,
}

/// Whose D bounds the driving packets.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DScope {
    /// One D per active flow, each with its own marks, growth, decrease and floor over
    /// the receiver's epochs: a flow's arrivals drive it whatever the other flows have
    /// outstanding. Default.
    #[default]
    Flow,
    /// One D per receiver: the packets asked of all its active flows and not yet received
    /// stay at most D; an arrival's freed place drives the arriving flow.
    Receiver,
}

/// Rounding of M/2 in the decrease.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MarkRounding {
    /// ⌈M/2⌉.
    #[default]
    Up,
    /// ⌊M/2⌋.
    Down,
}

impl MarkRounding {
    /// Half of `marks`, rounded this way.
    pub fn half(self, marks: u32) -> u32 {
        match self {
            MarkRounding::Up => marks.div_ceil(2),
            MarkRounding::Down => marks / 2,
        }
    }
}

impl Default for PoloConfig {
    fn default() -> Self {
        PoloConfig {
            headers: RawHeaders::None,
            data_priority: 0,
            retransmit_priority: 1,
            control_priority: 7,
            initial_window_packets: 12,
            d_min_packets: 1,
            d_scope: DScope::Flow,
            mark_rounding: MarkRounding::Up,
            rto: Duration::from_ms(1),
            idle_epochs: 2,
            recovery_gap: true,
            recovery_idle: true,
            redirect_wasted_driving: true,
            pause: true,
            pause_end: PauseEnd::UnmarkedEpoch,
            release_thread_at_once: false,
            d_bound: DBound::None,
            short_first: None,
        }
    }
}

/// A Polo setting out of range: the field and how to fix it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PoloConfigError {
    #[error("{field} = {value}; 802.1Q priorities are 0..7")]
    Priority { field: &'static str, value: u8 },
    #[error("control_priority = {0}; must be above data_priority and retransmit_priority so adjoint and driving packets overtake data")]
    ControlNotHighest(u8),
    #[error("initial_window_packets = 0; a new flow must send at least one packet (set 1 or more)")]
    NoFirstBurst,
    #[error("d_min_packets = 0; D must stay at least 1 or the receiver stops driving (set 1 or more)")]
    ZeroFloor,
    #[error("rto = 0; the retransmission timeout must be positive, e.g. \"1ms\"")]
    ZeroRto,
    #[error("idle_epochs = 0; recovery 2 needs at least one idle epoch (the slides use 2)")]
    ZeroIdleEpochs,
    #[error("short_first.priority = {0}; must be above data_priority and below control_priority")]
    ShortPriority(u8),
}

impl PoloConfig {
    pub fn l4(&self) -> L4Headers {
        match self.headers {
            RawHeaders::None => L4Headers::None,
            RawHeaders::Udp => L4Headers::Udp,
        }
    }

    /// Checks what serde cannot.
    pub fn validate(&self) -> Result<(), PoloConfigError> {
        for (field, value) in [
            ("data_priority", self.data_priority),
            ("retransmit_priority", self.retransmit_priority),
            ("control_priority", self.control_priority),
        ] {
            if value > 7 {
                return Err(PoloConfigError::Priority { field, value });
            }
        }
        if self.control_priority <= self.data_priority.max(self.retransmit_priority) {
            return Err(PoloConfigError::ControlNotHighest(self.control_priority));
        }
        if self.initial_window_packets == 0 {
            return Err(PoloConfigError::NoFirstBurst);
        }
        if self.d_min_packets == 0 {
            return Err(PoloConfigError::ZeroFloor);
        }
        if self.rto.0 == 0 {
            return Err(PoloConfigError::ZeroRto);
        }
        if self.idle_epochs == 0 {
            return Err(PoloConfigError::ZeroIdleEpochs);
        }
        if let Some(sf) = self.short_first {
            if sf.priority <= self.data_priority || sf.priority >= self.control_priority {
                return Err(PoloConfigError::ShortPriority(sf.priority));
            }
        }
        Ok(())
    }
}
