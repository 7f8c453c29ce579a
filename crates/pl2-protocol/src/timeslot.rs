//! Timeslot length. §4.1 defines a timeslot as "the time it takes to transmit an MTU sized
//! packet out of a buffer" and footnote 4 leaves the exact value to the system. Our default
//! is the wire time of a full frame, so back-to-back full frames fill the slots exactly:
//! MTU + Ethernet header (14 B) + 802.1Q tag (4 B) + FCS (4 B) + preamble/SFD (8 B) +
//! inter-frame gap (12 B); with a 1500 B MTU that is 1542 B, 123.36 ns at 100 Gbps. The
//! literal reading, `timeslotWait = chosenTimeslot * MTU / linerate` (§4.2.1), is the
//! option [`SlotBasis::MtuOverLineRate`] (120 ns at 100 Gbps).

use serde::{Deserialize, Serialize};

/// Bytes a full frame adds on the wire beyond its MTU-sized payload:
/// header 14 + 802.1Q 4 + FCS 4 + preamble/SFD 8 + IFG 12.
pub const FULL_FRAME_OVERHEAD_BYTES: u64 = 14 + 4 + 4 + 8 + 12;

/// What one timeslot is the transmission time of.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SlotBasis {
    /// A full MTU frame with all its wire overhead (default).
    #[default]
    FullFrameWire,
    /// MTU bytes only, as written in equation (1).
    MtuOverLineRate,
}

/// Timeslot length in picoseconds for an MTU (bytes) at a line rate (bits per second),
/// rounded up to a whole picosecond (a slot never undercounts a frame).
pub fn timeslot_ps(mtu_bytes: u64, line_rate_bps: u64, basis: SlotBasis) -> u64 {
    assert!(line_rate_bps > 0, "line rate must be positive");
    let bytes = match basis {
        SlotBasis::FullFrameWire => mtu_bytes + FULL_FRAME_OVERHEAD_BYTES,
        SlotBasis::MtuOverLineRate => mtu_bytes,
    };
    let bits = u128::from(bytes) * 8 * 1_000_000_000_000;
    bits.div_ceil(u128::from(line_rate_bps)) as u64
}

/// `ceil(lead_ps / slot_ps)`: converts the minimum lead time of the ideal scheduler
/// (RSV processed → its data at the switch) into whole slots.
pub fn lead_slots(lead_ps: u64, slot_ps: u64) -> u64 {
    assert!(slot_ps > 0, "slot length must be positive");
    lead_ps.div_ceil(slot_ps)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_frame_at_100g_is_123_36_ns() {
        assert_eq!(
            timeslot_ps(1500, 100_000_000_000, SlotBasis::FullFrameWire),
            123_360
        );
    }

    #[test]
    fn mtu_over_line_rate_at_100g_is_120_ns() {
        assert_eq!(
            timeslot_ps(1500, 100_000_000_000, SlotBasis::MtuOverLineRate),
            120_000
        );
    }

    #[test]
    fn rounds_up_to_whole_picoseconds() {
        // 1542 B at 25 Gbps = 493.44 ns exactly; at 40 Gbps = 308.4 ns exactly; at 3 bps
        // it is not an integer and must round up.
        assert_eq!(
            timeslot_ps(1500, 25_000_000_000, SlotBasis::FullFrameWire),
            493_440
        );
        assert_eq!(
            timeslot_ps(1, 3, SlotBasis::MtuOverLineRate),
            2_666_666_666_667
        );
    }

    #[test]
    fn lead_rounds_up() {
        assert_eq!(lead_slots(1_000_000, 123_360), 9);
        assert_eq!(lead_slots(123_360, 123_360), 1);
        assert_eq!(lead_slots(0, 123_360), 0);
    }
}
