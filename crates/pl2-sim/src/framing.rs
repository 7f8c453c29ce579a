//! Exact Ethernet framing: how many bytes a payload occupies on the wire.
//!
//! A frame on the wire is preamble + SFD (8 B), Ethernet header (14 B), an optional
//! 802.1Q tag (4 B), the L3/L4 headers of the transport, the payload padded so the frame
//! (header to FCS) is at least 64 B, the FCS (4 B), then the inter-frame gap (12 B).
//! Goodput always counts payload only.
//!
//! [`LinkLayer::Ppp`] is the framing of ns-3's `PointToPointNetDevice` (a 2-byte PPP
//! header before the IP packet, nothing else on the wire): it exists so that pl2 can be
//! compared with ns-3 frame for frame (`validation/ns3/`), not as a model of Ethernet.

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
/// PPP header of ns-3's point-to-point links (protocol field only).
pub const PPP_HEADER: u64 = 2;

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
    /// L3 and L4 headers of `bytes` in all (a protocol with its own header, e.g. NDP's,
    /// or a header size matched to another simulator's).
    Bytes { bytes: u16 },
}

impl L4Headers {
    pub fn bytes(self) -> u64 {
        match self {
            L4Headers::None => 0,
            L4Headers::Udp => IPV4_HEADER + UDP_HEADER,
            L4Headers::Tcp { options } => IPV4_HEADER + TCP_HEADER + options as u64,
            L4Headers::Bytes { bytes } => bytes as u64,
        }
    }
}

/// The framing every frame of a network uses.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Framing {
    /// Whether frames carry an 802.1Q tag (needed for priorities). Default: true.
    pub vlan_tag: bool,
    /// The link layer: `ethernet` (default) or `ppp` (ns-3's point-to-point links: a
    /// 2 B header, no preamble, IFG, FCS or minimum frame; needs `vlan_tag = false`).
    /// PL2's timeslot arithmetic assumes Ethernet.
    // Left out of the serialised (canonical) form at its default, so scenarios written
    // before the key existed keep their form and hash; the schema still shows it.
    #[serde(default, skip_serializing_if = "LinkLayer::is_ethernet")]
    #[schemars(!skip_serializing_if)]
    pub link: LinkLayer,
}

/// Which link layer frames use.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LinkLayer {
    /// IEEE 802.3: header 14 B, optional 802.1Q tag, FCS 4 B, 64 B minimum frame,
    /// preamble/SFD 8 B and IFG 12 B.
    #[default]
    Ethernet,
    /// ns-3's `PointToPointNetDevice`: the IP packet behind a 2 B PPP header.
    Ppp,
}

impl LinkLayer {
    fn is_ethernet(&self) -> bool {
        *self == LinkLayer::Ethernet
    }
}

impl Default for Framing {
    fn default() -> Self {
        Framing { vlan_tag: true, link: LinkLayer::Ethernet }
    }
}

impl Framing {
    /// Ethernet framing, with or without an 802.1Q tag.
    pub const fn ethernet(vlan_tag: bool) -> Framing {
        Framing { vlan_tag, link: LinkLayer::Ethernet }
    }

    /// Frame length from the Ethernet header to the FCS inclusive, padded to 64 B (PPP:
    /// header and packet).
    pub fn frame_bytes(self, l4: L4Headers, payload: u64) -> u64 {
        match self.link {
            LinkLayer::Ethernet => {
                let tag = if self.vlan_tag { VLAN_TAG } else { 0 };
                (ETH_HEADER + tag + l4.bytes() + payload + FCS).max(MIN_FRAME)
            }
            LinkLayer::Ppp => PPP_HEADER + l4.bytes() + payload,
        }
    }
    /// Bytes the frame occupies on the wire: frame plus preamble, SFD and IFG (PPP: the
    /// frame alone).
    pub fn wire_bytes(self, l4: L4Headers, payload: u64) -> u64 {
        match self.link {
            LinkLayer::Ethernet => self.frame_bytes(l4, payload) + PREAMBLE_SFD + IFG,
            LinkLayer::Ppp => self.frame_bytes(l4, payload),
        }
    }
    /// The frame (Ethernet header to FCS; PPP: header and packet) of a frame occupying
    /// `wire` bytes on the wire.
    pub fn frame_of_wire(self, wire: u64) -> u64 {
        match self.link {
            LinkLayer::Ethernet => wire.saturating_sub(PREAMBLE_SFD + IFG),
            LinkLayer::Ppp => wire,
        }
    }
    /// Wire bytes of a frame of `wire` bytes carrying `payload` once its payload is cut
    /// (a trimming queue keeps its headers, padded to the 64 B minimum on Ethernet).
    pub fn trimmed_wire(self, wire: u64, payload: u64) -> u64 {
        match self.link {
            LinkLayer::Ethernet => (wire - PREAMBLE_SFD - IFG - payload).max(MIN_FRAME) + PREAMBLE_SFD + IFG,
            LinkLayer::Ppp => wire - payload,
        }
    }
    /// Wire bytes of a MAC control frame (an 802.1Qbb PAUSE): the 64 B minimum frame,
    /// untagged, plus preamble and gap on Ethernet; 64 B on PPP.
    pub fn mac_control_wire(self) -> u64 {
        match self.link {
            LinkLayer::Ethernet => MIN_FRAME + PREAMBLE_SFD + IFG,
            LinkLayer::Ppp => MIN_FRAME,
        }
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
        let tagged = Framing::ethernet(true);
        let untagged = Framing::ethernet(false);
        assert_eq!(untagged.wire_bytes(L4Headers::None, 1500), 1538);
        assert_eq!(tagged.wire_bytes(L4Headers::None, 1500), 1542);
        // UDP over IPv4, tagged, 1500 B IP MTU: 1472 B payload in 1542 B on the wire.
        assert_eq!(tagged.max_payload(L4Headers::Udp, 1500), 1472);
        assert_eq!(tagged.wire_bytes(L4Headers::Udp, 1472), 1542);
    }

    #[test]
    fn a_trimmed_frame_keeps_its_headers_padded_to_the_minimum() {
        let tagged = Framing::ethernet(true);
        // 18 B Ethernet + tag, 28 B IPv4/UDP, 4 B FCS = 50 B of headers, padded to 64.
        assert_eq!(tagged.trimmed_wire(tagged.wire_bytes(L4Headers::Udp, 8972), 8972), 84);
        let big = L4Headers::Bytes { bytes: 100 };
        assert_eq!(tagged.trimmed_wire(tagged.wire_bytes(big, 1000), 1000), 14 + 4 + 100 + 4 + 20);
        let ppp = Framing { vlan_tag: false, link: LinkLayer::Ppp };
        // htsim's sizes: 9064 B data frames, 64 B headers.
        assert_eq!(ppp.trimmed_wire(ppp.wire_bytes(L4Headers::Bytes { bytes: 62 }, 9000), 9000), 64);
    }

    #[test]
    fn small_frames_are_padded_to_64_bytes() {
        let f = Framing::default();
        assert_eq!(f.frame_bytes(L4Headers::None, 1), 64);
        assert_eq!(f.wire_bytes(L4Headers::None, 0), 84);
        // W1's mean 185 B message is at least 255 B on the wire with UDP.
        assert!(f.wire_bytes(L4Headers::Udp, 185) >= 255);
    }

    #[test]
    fn ppp_frames_are_the_ip_packet_and_two_bytes() {
        let f = Framing { vlan_tag: false, link: LinkLayer::Ppp };
        // ns-3: a full 1460 B TCP segment is a 1500 B IP packet, 1502 B on the link; a
        // pure ACK 40 + 2 B, with no padding.
        let tcp = L4Headers::Tcp { options: 0 };
        assert_eq!(f.wire_bytes(tcp, 1460), 1502);
        assert_eq!(f.wire_bytes(tcp, 0), 42);
        assert_eq!(f.max_payload(tcp, 1500), 1460);
    }
}
