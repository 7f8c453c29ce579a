//! Switch programs: per-packet logic in a switch's ingress pipeline, run when a frame
//! leaves the input pipeline and before buffer admission (PL2's scheduler is the first;
//! packet trimming, PFC and SFC come later). A program sees the frame and its ports,
//! and can let it through, rewrite or mark it, drop it, consume it, or emit control
//! frames of its own; emitted frames go to the highest-priority queue of their egress
//! port without dynamic-threshold admission (they still occupy buffer).
//!
//! Programs form a closed enum ([`SwitchProgram`]), dispatched statically.

use crate::packet::Packet;
use crate::transport::SendSpec;
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
    /// Values for the probe table: (host, flow, name, value), e.g. PL2's arrival error
    /// of a burst, keyed like the sending host's own probes of that burst.
    pub probes: &'a mut Vec<(u32, u32, &'static str, f64)>,
}

/// Logic a switch program implements.
pub trait SwitchLogic {
    fn on_ingress(&mut self, io: &mut ProgramIo<'_>, pkt: &mut Packet) -> Verdict;
    /// A frame starts leaving one of the switch's output queues (PL2's dequeue
    /// ablation). Default: nothing.
    fn on_dequeue(&mut self, _now: SimTime, _pkt: &Packet) {}
}

/// Every switch program pl2 has.
#[derive(Default)]
pub enum SwitchProgram {
    /// Plain forwarding.
    #[default]
    Forward,
    /// PL2's ToR scheduler ([`crate::transport::pl2::Pl2Switch`]).
    Pl2(Box<crate::transport::pl2::Pl2Switch>),
}

impl SwitchLogic for SwitchProgram {
    #[inline]
    fn on_ingress(&mut self, io: &mut ProgramIo<'_>, pkt: &mut Packet) -> Verdict {
        match self {
            SwitchProgram::Forward => Verdict::Forward,
            SwitchProgram::Pl2(p) => p.on_ingress(io, pkt),
        }
    }
    #[inline]
    fn on_dequeue(&mut self, now: SimTime, pkt: &Packet) {
        match self {
            SwitchProgram::Forward => {}
            SwitchProgram::Pl2(p) => p.on_dequeue(now, pkt),
        }
    }
}
