//! Exact Ethernet framing: how many bytes a payload occupies on the wire.
//!
//! A frame on the wire is preamble + SFD (8 B), Ethernet header (14 B), an optional
//! 802.1Q tag (4 B), the L3/L4 headers of the transport, the payload padded so the frame
//! (header to FCS) is at least 64 B, the FCS (4 B), then the inter-frame gap (12 B).
//! Goodput always counts payload only.

use serde::{Deserialize, Serialize};

pub const PREAMBLE_SFD: u64 = 8;
pub const IFG: u64 = 12;
pub const ETH_HEADER: u64 = 14;
pub const VLAN_TAG: u64 = 4;
pub const FCS: u64 = 4;
pub const MIN_FRAME: u64 = 64;
pub const IPV4_HEADER: u64 = 20;
pub const UDP_HEADER: u64 = 8;
pub const TCP_HEADER: u64 = 20;

/// Which headers a transport puts between the Ethernet header and the payload.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum L4Headers {
    /// Raw Ethernet: payload straight after the Ethernet header.
    None,
    /// IPv4 + UDP (28 B).
    Udp,
    /// IPv4 + TCP with `options` bytes of TCP options.
    Tcp { options: u8 },
}

impl L4Headers {
    pub fn bytes(self) -> u64 {
        match self {
            L4Headers::None => 0,
            L4Headers::Udp => IPV4_HEADER + UDP_HEADER,
            L4Headers::Tcp { options } => IPV4_HEADER + TCP_HEADER + options as u64,
        }
    }
}

/// The framing every frame of a network uses.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Framing {
    /// Whether frames carry an 802.1Q tag (needed for priorities). Default: true.
    pub vlan_tag: bool,
}

impl Default for Framing {
    fn default() -> Self {
        Framing { vlan_tag: true }
    }
}

impl Framing {
    /// Frame length from the Ethernet header to the FCS inclusive, padded to 64 B.
    pub fn frame_bytes(self, l4: L4Headers, payload: u64) -> u64 {
        let tag = if self.vlan_tag { VLAN_TAG } else { 0 };
        (ETH_HEADER + tag + l4.bytes() + payload + FCS).max(MIN_FRAME)
    }
    /// Bytes the frame occupies on the wire: frame plus preamble, SFD and IFG.
    pub fn wire_bytes(self, l4: L4Headers, payload: u64) -> u64 {
        self.frame_bytes(l4, payload) + PREAMBLE_SFD + IFG
    }
    /// Largest payload a frame can carry under `mtu` (the IP MTU, i.e. the Ethernet
    /// payload limit, 1500 B for standard Ethernet).
    pub fn max_payload(self, l4: L4Headers, mtu: u64) -> u64 {
        mtu.saturating_sub(l4.bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_frames_match_the_standard() {
        let tagged = Framing { vlan_tag: true };
        let untagged = Framing { vlan_tag: false };
        assert_eq!(untagged.wire_bytes(L4Headers::None, 1500), 1538);
        assert_eq!(tagged.wire_bytes(L4Headers::None, 1500), 1542);
        // UDP over IPv4, tagged, 1500 B IP MTU: 1472 B payload in 1542 B on the wire.
        assert_eq!(tagged.max_payload(L4Headers::Udp, 1500), 1472);
        assert_eq!(tagged.wire_bytes(L4Headers::Udp, 1472), 1542);
    }

    #[test]
    fn small_frames_are_padded_to_64_bytes() {
        let f = Framing::default();
        assert_eq!(f.frame_bytes(L4Headers::None, 1), 64);
        assert_eq!(f.wire_bytes(L4Headers::None, 0), 84);
        // W1's mean 185 B message is at least 255 B on the wire with UDP.
        assert!(f.wire_bytes(L4Headers::Udp, 185) >= 255);
    }
}
