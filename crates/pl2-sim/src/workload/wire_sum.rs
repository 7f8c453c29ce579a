//! Closed-form sums over integer message sizes, used to take exact expectations of a
//! [`SizeCdf`](super::SizeCdf): the payload itself, and the bytes a message occupies on
//! the wire once cut into frames.
//!
//! A message of `n` payload bytes is cut into `ceil(n / P)` frames of at most `P` bytes
//! (`P` = `Framing::max_payload`), all full but the last. Its wire bytes are
//! `(ceil(n/P) - 1) * wire(P) + wire(r)` with `r = n - (ceil(n/P) - 1) * P` in `1..=P`,
//! where `wire` is `Framing::wire_bytes`. Summing that over `n = 1..=N` splits into whole
//! blocks of `P` sizes plus one partial block, each summed in closed form, so a prefix sum
//! costs O(1) whatever `N` is. Sums are exact integers (`u128`).

use crate::framing::{Framing, L4Headers};

/// An integer function of the message size `n` with an O(1) prefix sum. Sizes below 1
/// count as 1 (the sampler never produces an empty message).
pub(crate) trait SizeFn {
    /// The value at size `max(n, 1)`.
    fn at(&self, n: u64) -> u128;
    /// `at(0) + at(1) + ... + at(n)`.
    fn prefix(&self, n: u64) -> u128;
}

/// The payload size itself.
pub(crate) struct PayloadBytes;

impl SizeFn for PayloadBytes {
    fn at(&self, n: u64) -> u128 {
        n.max(1) as u128
    }
    fn prefix(&self, n: u64) -> u128 {
        let n = n as u128;
        1 + n * (n + 1) / 2
    }
}

/// Wire bytes of a whole message: all its frames with headers, padding, preamble and IFG.
pub(crate) struct WireBytes {
    /// Largest payload per frame (`P`), at least 1.
    max_payload: u64,
    /// Wire bytes of a frame minus its payload when the frame needs no padding.
    overhead: u64,
    /// Wire bytes of the smallest (padded) frame.
    min_wire: u64,
    framing: Framing,
    l4: L4Headers,
}

impl WireBytes {
    /// `None` when `mtu` leaves no room for payload after the L4 headers.
    pub(crate) fn new(framing: Framing, l4: L4Headers, mtu: u64) -> Option<WireBytes> {
        let max_payload = framing.max_payload(l4, mtu);
        if max_payload == 0 {
            return None;
        }
        // A 64-byte payload always fills the 64-byte minimum frame, so no padding.
        let overhead = framing.wire_bytes(l4, 64) - 64;
        let min_wire = framing.wire_bytes(l4, 0);
        Some(WireBytes {
            max_payload,
            overhead,
            min_wire,
            framing,
            l4,
        })
    }

    /// Wire bytes of one frame carrying `r` payload bytes: `max(r + overhead, min_wire)`.
    fn frame(&self, r: u64) -> u128 {
        self.framing.wire_bytes(self.l4, r) as u128
    }

    /// Sum of `frame(r)` for `r = 1..=count`, in closed form.
    fn frames_prefix(&self, count: u64) -> u128 {
        let r = count as u128;
        let unpadded = r * (r + 1) / 2 + r * self.overhead as u128;
        // Padding adds `min_wire - overhead - r` for the payloads `r` below that gap.
        let gap = self.min_wire.saturating_sub(self.overhead) as u128;
        let m = r.min(gap.saturating_sub(1));
        unpadded + m * gap - m * (m + 1) / 2
    }
}

impl SizeFn for WireBytes {
    fn at(&self, n: u64) -> u128 {
        let n = n.max(1);
        let full = (n - 1) / self.max_payload;
        full as u128 * self.frame(self.max_payload) + self.frame(n - full * self.max_payload)
    }
    fn prefix(&self, n: u64) -> u128 {
        let p = self.max_payload as u128;
        let blocks = (n / self.max_payload) as u128;
        let rest = n % self.max_payload;
        let full_wire = self.frame(self.max_payload);
        // Block j holds sizes jP+1 ..= (j+1)P: j full frames plus a last frame of 1..=P.
        let whole = full_wire * p * blocks * blocks.saturating_sub(1) / 2
            + blocks * self.frames_prefix(self.max_payload);
        let partial = rest as u128 * blocks * full_wire + self.frames_prefix(rest);
        self.at(0) + whole + partial
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn brute_prefix(f: &impl SizeFn, n: u64) -> u128 {
        (0..=n).map(|k| f.at(k)).sum()
    }

    #[test]
    fn wire_prefix_matches_brute_force() {
        let tagged = Framing::ethernet(true);
        let untagged = Framing::ethernet(false);
        let cases = [
            (tagged, L4Headers::Udp, 1500),
            (untagged, L4Headers::None, 1500),
            (tagged, L4Headers::Tcp { options: 12 }, 1500),
            (tagged, L4Headers::Tcp { options: 255 }, 400),
            (untagged, L4Headers::None, 7),
            (tagged, L4Headers::Udp, 29),
        ];
        for (framing, l4, mtu) in cases {
            let w = WireBytes::new(framing, l4, mtu).unwrap();
            for n in [0, 1, 2, 30, 45, 46, 47, 100, 1471, 1472, 1473, 2944, 5000] {
                assert_eq!(
                    w.prefix(n),
                    brute_prefix(&w, n),
                    "{framing:?} {l4:?} {mtu} n={n}"
                );
            }
        }
    }

    #[test]
    fn wire_at_counts_every_frame() {
        let w = WireBytes::new(Framing::default(), L4Headers::Udp, 1500).unwrap();
        assert_eq!(w.at(185), 255);
        assert_eq!(w.at(1472), 1542);
        assert_eq!(w.at(1473), 1542 + 84);
        assert_eq!(w.at(0), w.at(1));
        assert!(WireBytes::new(Framing::default(), L4Headers::Udp, 28).is_none());
    }

    #[test]
    fn payload_prefix_matches_brute_force() {
        for n in [0, 1, 2, 10, 999] {
            assert_eq!(PayloadBytes.prefix(n), brute_prefix(&PayloadBytes, n));
        }
    }
}
