//! Fixed-point reservation units carrying the inter-rack reserved share (§7).
//!
//! §7: "static bandwidth reservations will be required to ensure that traffic entering a
//! PL2 rack will not disrupt PL2 guarantees ... PL2 can reflect such reservations either
//! in the length of timeslot or the reservation increments." We inflate the increments
//! (our choice): with a share `r` of every port kept for external traffic, each reserved
//! packet counts `1 / (1 - r)` slots, so PL2 bursts on a port are spread out to use at
//! most `1 - r` of its time.
//!
//! To avoid rounding drift the counters are kept in exact fixed point: with
//! `r = ppm / 1e6`, one slot is `1e6 - ppm` units and one packet is `1e6` units. Every
//! increment and decrement is an exact integer, so a counter returns to exactly zero when
//! everything reserved has arrived, whatever `r`. The fraction is kept per counter (per
//! port), in the low-order part of the same register, so this still costs one
//! read-modify-write. Slots are reported rounded up (a burst is never told it may go
//! earlier than the inflated schedule). With `r = 0` units are packets × 1e6 and slots
//! are packets, exactly Algorithm 1.
//!
//! A port faster than the slot's rate (§7's uplink: the ToR's links towards the rest of
//! the datacenter, taken together, as one output port) drains several packets per slot:
//! a packet reserves `1e6 × slot rate / port rate` units there (rounded up, so a port
//! is never told it drains faster than it does; exact for 8 × 100G over 100G slots,
//! 125,000 units).

/// Parts per million.
pub const PPM: u64 = 1_000_000;

/// Conversion between packets, slots and units for one reserved share.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct SlotUnits {
    per_packet: u64,
    per_slot: u64,
}

impl SlotUnits {
    /// `external_share_ppm` must be below 1e6 (checked by the scheduler's config).
    pub fn new(external_share_ppm: u32) -> Self {
        SlotUnits {
            per_packet: PPM,
            per_slot: PPM - u64::from(external_share_ppm),
        }
    }
    /// Units `n` packets reserve (or release) on a port at the slot's rate.
    pub fn packets(self, n: u64) -> u64 {
        n * self.per_packet
    }
    /// Units one packet reserves on a port of `port_bps` when a slot is one packet at
    /// `slot_bps`: `per_packet × slot_bps / port_bps`, rounded up, at least 1.
    pub fn packet_at_rate(self, port_bps: u64, slot_bps: u64) -> u64 {
        let u = (u128::from(self.per_packet) * u128::from(slot_bps))
            .div_ceil(u128::from(port_bps.max(1)));
        (u as u64).max(1)
    }
    /// Units of `n` whole slots.
    pub fn slots(self, n: u64) -> u64 {
        n * self.per_slot
    }
    /// Slots `units` amount to, rounded up.
    pub fn to_slots_ceil(self, units: u64) -> u64 {
        units.div_ceil(self.per_slot)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_share_is_one_slot_per_packet() {
        let u = SlotUnits::new(0);
        assert_eq!(u.to_slots_ceil(u.packets(7)), 7);
    }

    #[test]
    fn ten_percent_share_inflates_without_drift() {
        let u = SlotUnits::new(100_000);
        // 9 packets take 10 slots at r = 0.1.
        assert_eq!(u.to_slots_ceil(u.packets(9)), 10);
        // 1 packet is 1.11 slots, reported as 2.
        assert_eq!(u.to_slots_ceil(u.packets(1)), 2);
        // A thousand increments and decrements of one packet come back to exactly zero.
        let mut c = 0u64;
        for _ in 0..1000 {
            c += u.packets(1);
        }
        for _ in 0..1000 {
            c -= u.packets(1);
        }
        assert_eq!(c, 0);
    }

    #[test]
    fn a_port_eight_times_the_slot_rate_takes_an_eighth_per_packet() {
        let u = SlotUnits::new(0);
        assert_eq!(u.packet_at_rate(800_000_000_000, 100_000_000_000), 125_000);
        // 8 packets on it are one slot; 9 are two (rounded up).
        assert_eq!(u.to_slots_ceil(8 * 125_000), 1);
        assert_eq!(u.to_slots_ceil(9 * 125_000), 2);
        // A port slower than the slot (1 Gbps under 10 Gbps slots) takes 10 slots a packet.
        assert_eq!(u.packet_at_rate(1_000_000_000, 10_000_000_000), 10 * PPM);
        // 3 × 100G over 100G slots: 333,334 units a packet (rounded up, never faster).
        assert_eq!(u.packet_at_rate(300_000_000_000, 100_000_000_000), 333_334);
    }
}
