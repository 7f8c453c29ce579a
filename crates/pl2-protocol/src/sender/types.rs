//! The sender's inputs and outputs: the application message, the actions it asks its
//! driver to perform (RSVs, bursts with their hand-off time, cancels, timers, probes,
//! message completion) and its counters.

use serde::{Deserialize, Serialize};

use crate::msg::{BurstId, Cancel, HostId, MsgId, Rsv, TimerToken};

/// A message the application hands to PL2.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AppMessage {
    pub id: MsgId,
    pub dst: HostId,
    pub bytes: u64,
    /// Sending context: the application thread (prototype) or the NIC.
    pub ctx: u32,
    /// The RSV priority bit of the talk's scheme.
    pub high_priority: bool,
}

/// A burst to hand to the NIC at `at_ps`, back to back, packets
/// `first_packet .. first_packet + packets` of message `msg`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BurstSend {
    pub burst: BurstId,
    pub msg: MsgId,
    pub dst: HostId,
    pub ctx: u32,
    pub first_packet: u32,
    pub packets: u32,
    /// Mark the packets unsolicited (§4.4).
    pub unsolicited: bool,
    /// The scheduled resend of an unsolicited burst.
    pub resent: bool,
    pub at_ps: u64,
}

/// What happened to one burst at its GRT.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BurstProbe {
    pub burst: BurstId,
    pub msg: MsgId,
    pub ctx: u32,
    pub dst: HostId,
    pub attempt: u8,
    /// When this attempt's RSV was sent.
    pub rsv_time_ps: u64,
    pub grt_time_ps: u64,
    pub send_slot: u32,
    pub recv_slot: u32,
    pub chosen_slots: u64,
    pub granted_packets: u32,
    /// Time from the GRT to handing the burst over (0 if nothing is sent).
    pub wait_ps: u64,
    pub unsolicited: bool,
    pub resent: bool,
}

/// What the sender asks its driver to do.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum SenderAction {
    /// Send this RSV to the switch now (at high priority, §4.2.1 footnote 7).
    SendRsv(Rsv),
    /// Hand this burst to the NIC at `at_ps`, then call `on_burst_handed_to_nic`.
    SendBurst(BurstSend),
    /// Send this CANCEL to the switch now.
    SendCancel(Cancel),
    /// Call `on_timer(token)` at `at_ps`.
    SetTimer {
        token: TimerToken,
        at_ps: u64,
    },
    Probe(BurstProbe),
    /// Every packet of the message has been handed to the NIC at least once.
    MessageHandedOver {
        msg: MsgId,
    },
}

/// Counters of the sender.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SenderStats {
    pub messages: u64,
    pub bursts: u64,
    pub rsvs: u64,
    pub rsv_retries: u64,
    pub rejects: u64,
    pub partial_grants: u64,
    pub unsolicited_bursts: u64,
    pub resent_bursts: u64,
    pub stale_grts: u64,
    pub cancels_sent: u64,
    /// GRTs granting other than the demand of an unsolicited burst, which has already
    /// gone out whole: the sender and switch disagree on K or on the priority scheme.
    pub grant_mismatches: u64,
}
