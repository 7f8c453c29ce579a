//! The messages PL2 exchanges (RSV, GRT, CANCEL), the tag every PL2-scheduled data
//! packet carries, and the identifiers they use. These are plain values: how they are
//! laid out in a frame is the driver's business (see the crate docs for field widths).

use serde::{Deserialize, Serialize};

/// A host (end point) of the rack. Hosts map to switch ports through a table given to the
/// [`crate::switch::Scheduler`]; several hosts may share a port (breakout, §4.2.1).
pub type HostId = u32;

/// A burst, unique per sending host (a [`crate::sender::Sender`] numbers its bursts from 0
/// and wraps). Data packets carry it so the switch and the receiver can tell copies apart.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct BurstId(pub u32);

/// An application message, named by the driver.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct MsgId(pub u64);

/// An opaque timer handle: the state machine asks for a wake-up with it and the driver
/// hands it back through `on_timer`. Stale tokens are recognised and ignored.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct TimerToken(pub u64);

/// A reservation request (RSV), sender → switch.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rsv {
    pub src: HostId,
    pub dst: HostId,
    pub burst: BurstId,
    /// Retry number of this exchange (wraps); echoed in the GRT so the sender can tell a
    /// late GRT of an earlier attempt from the current one.
    pub attempt: u8,
    /// Packets asked for (at most K; the switch caps it at its K).
    pub demand_packets: u32,
    /// Priority bit of the talk's low-latency scheme (ignored unless the switch runs it).
    pub high_priority: bool,
    /// The sender sends this burst unsolicited right behind the RSV (§4.4). The faithful
    /// switch only uses it for accounting; the improved switch decides admission on it.
    pub unsolicited_follows: bool,
}

/// A grant (GRT), switch → sender (and optionally a copy to the receiver, §4.5).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grt {
    pub src: HostId,
    pub dst: HostId,
    pub burst: BurstId,
    pub attempt: u8,
    /// `inReservation[src]` before this reservation (Algorithm 1 line 8), in timeslots.
    /// 32 bits, as the prototype's registers (§5).
    pub send_timeslot_slots: u32,
    /// `outReservation[dst]` before this reservation (Algorithm 1 line 10), in timeslots.
    pub recv_timeslot_slots: u32,
    /// Packets granted: the demand, or fewer under the priority scheme (0 = rejected,
    /// nothing reserved).
    pub granted_packets: u32,
    /// Improved variant only: the unsolicited copy of this burst will pass the switch, so
    /// the sender must not resend it. Always false from the faithful switch.
    pub unsolicited_admitted: bool,
}

impl Grt {
    /// `chosenTimeslot = max(sendTimeslot, recvTimeslot)` (§4.2.1).
    pub fn chosen_slots(&self) -> u64 {
        u64::from(self.send_timeslot_slots.max(self.recv_timeslot_slots))
    }
}

/// Releases reservations that will never be used (§4.5): sent by a receiver that tracks
/// pending bursts, or by a sender that abandons a grant (a late GRT of a retried RSV).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cancel {
    pub src: HostId,
    pub dst: HostId,
    pub packets: u32,
}

/// What the switch and receiver need to know about one PL2-scheduled data packet.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DataTag {
    pub src: HostId,
    pub dst: HostId,
    pub burst: BurstId,
    /// Position in the burst (0..K), for duplicate detection at the receiver.
    pub index_in_burst: u32,
    /// Sent without waiting for the GRT (§4.4: "marked by using a spare header field").
    pub unsolicited: bool,
    /// The scheduled resend of a burst that first went unsolicited (Algorithm 2 line 18).
    pub resent: bool,
}
