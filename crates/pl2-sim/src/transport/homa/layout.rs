//! How a message is cut into packets, and their wire bytes: the unscheduled part first,
//! in packets of the unscheduled payload, holding the data that fits in RTTbytes of wire
//! bytes; then the scheduled part in packets of the scheduled payload, one per grant.
//!
//! This is the simulator's packetization (`UnschedByteAllocator.cc:43-95`,
//! `HomaTransport.cc:142-148`): with its 10,000 wire bytes, 1442 B unscheduled and
//! 1456 B scheduled payloads, the unscheduled part is 6 × 1442 + 676 = 9328 data bytes
//! (6 × 1538 + 772 wire bytes). Every packet's index, offset and length follow from the
//! message size, so frames carry only their index.

use super::config::HomaHeaders;
use crate::framing::{Framing, L4Headers};

/// The packet layout of every message on one network.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    pub framing: Framing,
    pub l4_unsched: L4Headers,
    pub l4_sched: L4Headers,
    /// Payload of a full unscheduled / scheduled packet.
    pub unsched_payload: u64,
    pub sched_payload: u64,
    /// RTTbytes, in wire bytes: the in-flight cap per message.
    pub rtt_wire: u64,
    /// Data bytes of the unscheduled part of a message at least this long.
    pub unsched_bytes: u64,
}

/// One packet of a message.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Pkt {
    pub offset: u64,
    pub len: u64,
    pub scheduled: bool,
}

impl Layout {
    pub fn new(framing: Framing, headers: HomaHeaders, mtu: u64, rtt_wire: u64) -> Layout {
        let (l4_unsched, l4_sched) = (headers.unscheduled(), headers.scheduled());
        let unsched_payload = framing.max_payload(l4_unsched, mtu);
        let sched_payload = framing.max_payload(l4_sched, mtu);
        let full_wire = framing.wire_bytes(l4_unsched, unsched_payload);
        let full = rtt_wire / full_wire;
        let rest = rtt_wire - full * full_wire;
        // The largest partial packet whose wire bytes fit in what is left (none if even
        // an empty frame does not fit).
        let overhead = full_wire - unsched_payload;
        let partial = rest.saturating_sub(overhead);
        let partial = if partial > 0 && framing.wire_bytes(l4_unsched, partial) <= rest { partial } else { 0 };
        Layout { framing, l4_unsched, l4_sched, unsched_payload, sched_payload, rtt_wire, unsched_bytes: full * unsched_payload + partial }
    }

    /// Unscheduled data bytes of a message of `size` bytes.
    pub fn unsched_of(&self, size: u64) -> u64 {
        size.min(self.unsched_bytes)
    }

    /// Unscheduled packets of a message of `size` bytes (at least one).
    pub fn unsched_packets(&self, size: u64) -> u32 {
        self.unsched_of(size).div_ceil(self.unsched_payload).max(1) as u32
    }

    /// Packets of a message of `size` bytes.
    pub fn packets(&self, size: u64) -> u32 {
        let sched = size - self.unsched_of(size);
        self.unsched_packets(size) + sched.div_ceil(self.sched_payload) as u32
    }

    /// Packet `i` of a message of `size` bytes.
    pub fn pkt(&self, size: u64, i: u32) -> Pkt {
        let nu = self.unsched_packets(size);
        let u = self.unsched_of(size);
        if i < nu {
            let offset = u64::from(i) * self.unsched_payload;
            Pkt { offset, len: (u - offset).min(self.unsched_payload), scheduled: false }
        } else {
            let offset = u + u64::from(i - nu) * self.sched_payload;
            Pkt { offset, len: (size - offset).min(self.sched_payload), scheduled: true }
        }
    }

    /// Wire bytes of a packet.
    pub fn wire(&self, p: Pkt) -> u64 {
        self.framing.wire_bytes(if p.scheduled { self.l4_sched } else { self.l4_unsched }, p.len)
    }

    /// Wire bytes of the unscheduled part of a message of `size` bytes.
    pub fn unsched_wire(&self, size: u64) -> u64 {
        (0..self.unsched_packets(size)).map(|i| self.wire(self.pkt(size, i))).sum()
    }

    /// Wire bytes of `bytes` of scheduled data cut into scheduled packets
    /// (`HomaPkt::getBytesOnWire`, `HomaPkt.cc:207-251`).
    pub fn sched_wire(&self, bytes: u64) -> u64 {
        let full = bytes / self.sched_payload;
        let rest = bytes % self.sched_payload;
        let w = full * self.framing.wire_bytes(self.l4_sched, self.sched_payload);
        if rest > 0 {
            w + self.framing.wire_bytes(self.l4_sched, rest)
        } else {
            w
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The simulator's network: no 802.1Q tag, 1500 B MTU, 10,000 wire bytes.
    fn reference() -> Layout {
        Layout::new(Framing::ethernet(false), HomaHeaders::Homa, 1500, 10_000)
    }

    #[test]
    fn the_simulators_unscheduled_part_is_9328_bytes_in_10000_wire_bytes() {
        let l = reference();
        assert_eq!((l.unsched_payload, l.sched_payload), (1442, 1456));
        assert_eq!(l.unsched_bytes, 9328, "6 × 1442 + 676 (ini:47-48, 1442 + 7886)");
        assert_eq!(l.unsched_wire(1_000_000), 10_000, "6 × 1538 + 772");
        assert_eq!(l.unsched_packets(9328), 7);
        assert_eq!(l.packets(9329), 8);
        assert_eq!(l.pkt(9329, 7), Pkt { offset: 9328, len: 1, scheduled: true });
        // A 1-byte scheduled packet is padded: 1 + 44 + 18 < 64 → 64 + 20.
        assert_eq!(l.wire(l.pkt(9329, 7)), 84);
        assert_eq!(l.sched_wire(1456 * 2 + 100), 2 * 1538 + (100 + 44 + 18 + 20));
        // A grant: 16 B Homa header, padded to the 64 B minimum frame: 84 B on the wire.
        assert_eq!(l.framing.wire_bytes(l.l4_sched, 0), 84);
    }

    #[test]
    fn packets_tile_the_message() {
        let l = reference();
        for size in [1, 1441, 1442, 1443, 9327, 9328, 9329, 10_785, 100_000] {
            let mut at = 0;
            for i in 0..l.packets(size) {
                let p = l.pkt(size, i);
                assert_eq!(p.offset, at, "size {size} packet {i}");
                assert!(p.len > 0 && p.len <= if p.scheduled { 1456 } else { 1442 });
                at += p.len;
            }
            assert_eq!(at, size);
        }
    }
}
