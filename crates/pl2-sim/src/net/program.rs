//! Switch programs: per-packet logic in a switch's ingress pipeline, run when a frame
//! leaves the input pipeline and before buffer admission. A program sees the frame and its
//! ports, and can let it through, rewrite or mark it, drop it, consume it, or emit control
//! frames of its own; emitted frames go to the highest-priority queue of their egress
//! port without dynamic-threshold admission (they still occupy buffer). A program may also
//! ask to see every frame leave an output queue ([`SwitchLogic::ON_DEQUEUE`]).
//!
//! This is the interface the switch path calls; the programs themselves and their closed
//! enum live with the modules that install them (`crate::programs`).

use crate::packet::{Packet, SendSpec};
use crate::units::SimTime;

/// What happens to the frame a program looked at.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Continue to buffer admission and the output queue (possibly rewritten).
    Forward,
    /// Drop it (counted as a program drop, separately from buffer drops).
    Drop,
    /// The program absorbed it (e.g. a reservation request answered by the switch).
    Consume,
}

/// The context of one program call.
pub struct ProgramIo<'a> {
    pub now: SimTime,
    /// Switch index (0-based among switches).
    pub switch: u32,
    /// Global id of the port the frame arrived through (the far end's egress port).
    pub in_port: u32,
    /// Global id of the egress port routing chose (`u32::MAX` if unroutable).
    pub out_port: u32,
    /// Frames the program emits: each is routed from this switch to `spec.dst`.
    pub emit: &'a mut Vec<SendSpec>,
    /// Values for the probe table: (host, flow, name, value), keyed like the sending
    /// host's own probes of the frame's flow.
    pub probes: &'a mut Vec<(u32, u32, &'static str, f64)>,
}

/// Logic a switch program implements.
pub trait SwitchLogic {
    /// Whether the switch calls [`SwitchLogic::on_dequeue`] for every frame leaving one of
    /// its output queues (a call per frame and hop, so only programs that need it ask).
    const ON_DEQUEUE: bool = false;
    /// A frame left the input pipeline; `pkt` may be rewritten.
    fn on_ingress(&mut self, io: &mut ProgramIo<'_>, pkt: &mut Packet) -> Verdict;
    /// A frame starts leaving one of the switch's output queues (only with
    /// [`SwitchLogic::ON_DEQUEUE`]). Default: nothing.
    fn on_dequeue(&mut self, _now: SimTime, _pkt: &Packet) {}
}
