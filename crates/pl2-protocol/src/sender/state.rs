//! Internal state of the sender: messages being cut into bursts, the per-queue FIFO of
//! messages, the per-(context, destination) Algorithm 2 state, bursts in flight, and the
//! timer token encoding.

use std::collections::VecDeque;

use crate::estimator::{DelayEstimator, EstimatorKind};
use crate::msg::{BurstId, HostId, MsgId, TimerToken};

/// A queue of messages served one exchange at a time: (context, destination if the
/// scope is per destination).
pub type QueueKey = (u32, Option<HostId>);

/// An application message being cut into bursts.
#[derive(Clone, Debug)]
pub struct Message {
    pub dst: HostId,
    pub ctx: u32,
    pub high_priority: bool,
    pub total_packets: u32,
    /// First packet not yet in a burst.
    pub next_packet: u32,
    /// Packets whose burst has been handed to the NIC at least once.
    pub handed_packets: u32,
}

/// A FIFO of messages and the bursts it has started and not finished, in start order.
#[derive(Clone, Debug, Default)]
pub struct Queue {
    pub messages: VecDeque<MsgId>,
    pub active: Vec<BurstId>,
}

/// Algorithm 2's state for one (context, destination), plus its delay estimator.
#[derive(Clone, Debug)]
pub struct DestState {
    /// `lastChosenTimeslot`; `None` before any GRT (Algorithm 2 initialises it to −1,
    /// but with `lastResponseTime = 0` that could let the very first burst go
    /// unsolicited; we start with "none" so nobody starts unsolicited).
    pub last_chosen_slots: Option<u64>,
    /// `lastResponseTime`; `None` is −∞.
    pub last_response_ps: Option<u64>,
    pub estimator: DelayEstimator,
}

impl DestState {
    pub fn new(kind: EstimatorKind) -> Self {
        DestState {
            last_chosen_slots: None,
            last_response_ps: None,
            estimator: DelayEstimator::new(kind),
        }
    }
}

/// Where a burst is in its exchange.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Phase {
    /// RSV sent, GRT not yet processed.
    AwaitingGrt,
    /// Rejected (priority scheme), waiting to ask again.
    Backoff,
    /// GRT processed; every copy to send has been emitted.
    Granted,
}

/// One burst in flight.
#[derive(Clone, Debug)]
pub struct Burst {
    pub queue: QueueKey,
    pub msg: MsgId,
    pub dst: HostId,
    pub ctx: u32,
    pub high_priority: bool,
    pub first_packet: u32,
    pub packets: u32,
    pub attempt: u8,
    /// When the current attempt's RSV was sent.
    pub rsv_sent_ps: u64,
    pub unsolicited: bool,
    pub resent: bool,
    pub phase: Phase,
    pub copies_emitted: u8,
    pub copies_handed: u8,
    pub copies_transmitted: u8,
}

/// What a timer is for.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum TimerKind {
    RsvTimeout = 1,
    RejectBackoff = 2,
}

/// Token layout: kind in bits 40.., attempt in bits 32..40, burst id in bits 0..32. A
/// timer whose attempt no longer matches its burst is stale.
pub fn encode_token(kind: TimerKind, burst: BurstId, attempt: u8) -> TimerToken {
    TimerToken(((kind as u64) << 40) | (u64::from(attempt) << 32) | u64::from(burst.0))
}

pub fn decode_token(t: TimerToken) -> Option<(TimerKind, BurstId, u8)> {
    let kind = match t.0 >> 40 {
        1 => TimerKind::RsvTimeout,
        2 => TimerKind::RejectBackoff,
        _ => return None,
    };
    Some((kind, BurstId(t.0 as u32), (t.0 >> 32) as u8))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_round_trip() {
        for kind in [TimerKind::RsvTimeout, TimerKind::RejectBackoff] {
            let t = encode_token(kind, BurstId(u32::MAX), 255);
            assert_eq!(decode_token(t), Some((kind, BurstId(u32::MAX), 255)));
        }
        assert_eq!(decode_token(TimerToken(7)), None);
    }
}
