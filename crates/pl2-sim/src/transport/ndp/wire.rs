//! How NDP's frames ride in the simulator's 64-byte [`Packet`].
//!
//! | frame | kind / prio | fields |
//! |-------|-------------|--------|
//! | data | `Data` / `data_priority`, `TRIMMABLE` | `msg`/`msg_gen` = message slot/generation; `seq` = packet index; `flow` = path number (`paths = permute/random`) or message id (switch-chosen paths); `aux` bits 0-47 = message size, bits 48-55 = message priority; `proto` bits 0-2 = transmission tag, `RETX` on a resend; `NOTIFY_TX_DONE` (the RTO clock starts when the frame starts to serialise) |
//! | header | as data, with the engine's `TRIMMED`, payload 0 | a data frame a switch trimmed: every field as sent |
//! | returned header | as header, with the engine's `RETURNED` | a header a full header queue sent back: `src`/`dst` swapped by the switch, so it reaches the sender |
//! | ACK | `Ack` / `control_priority` | `seq` = the data packet's index; `aux` bits 0-31 = pull number, 32-63 = cumulative ack (packets received in order); `proto` bits 0-2 = the data's tag (echoed), bit 6 = pull |
//! | NACK | `Ack` / `control_priority`, `proto` bit 5 | as ACK, for a header |
//! | PULL | `Control` / `control_priority` | as the ACK or NACK it was queued for: its `seq`, pull number, cumulative ack and `flow` |
//!
//! htsim's ACK echoes the data packet's send time (`ndppacket.h`, `ts`); 64 bits do not
//! fit beside the pull number and the cumulative ack, so the data frame carries a 3-bit
//! transmission tag, the ACK echoes it, and the sender keeps each packet's last send time
//! (as htsim keeps `_sent_times`): the RTT sample is exact for the ACK of the latest
//! transmission, and skipped for an ACK of an earlier one.
//!
//! Every frame is its own hand-over unit (`BURST_END`). Control frames and headers carry
//! no payload. Since `flow` carries a path number, the trace's flow column shows path
//! numbers for NDP, and `DropNth`/`DropControl` faults name a path number as their flow.

use crate::framing::L4Headers;
use crate::packet::{flags, proto, Packet, PktKind};
use crate::transport::SendSpec;

const SIZE_MASK: u64 = (1 << 48) - 1;
const PRIO_SHIFT: u32 = 48;
/// `proto` bits 0-2: the transmission tag.
const TAG_MASK: u8 = 0b111;
/// `proto` bit 5: a NACK (on kind `Ack`).
const NACK: u8 = 1 << 5;
/// `proto` bit 6: the ACK or NACK carries a pull.
const PULL: u8 = 1 << 6;

/// A message at both ends: the engine's slot and its generation.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Msg {
    pub slot: u32,
    pub gen: u16,
}

/// A data frame's (or a header's) fields.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct DataHdr {
    pub msg: Msg,
    pub index: u32,
    /// Message size in bytes (below 2⁴⁸).
    pub size: u64,
    /// The message's priority (for the pull pacer's `priority` order).
    pub prio: u8,
    /// Transmission count of this packet, modulo 8.
    pub tag: u8,
    pub resent: bool,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum CtlKind {
    Ack,
    Nack,
    Pull,
}

/// An ACK's, NACK's or PULL's fields.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct CtlHdr {
    pub kind: CtlKind,
    pub msg: Msg,
    /// The data packet acknowledged (or NACKed).
    pub index: u32,
    /// The flow's cumulative pull number (meaningful when `pull` is set, or on a PULL).
    pub pull_no: u32,
    /// Packets received in order.
    pub cum: u32,
    /// An ACK or NACK that carries a pull (always true for a PULL).
    pub pull: bool,
    /// The data packet's tag, echoed.
    pub tag: u8,
}

/// Every NDP frame.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Frame {
    Data(DataHdr),
    /// A data frame cut to its header by a trimming queue.
    Header(DataHdr),
    /// A header a trimming queue returned to its sender (return-to-sender).
    Returned(DataHdr),
    Ctl(CtlHdr),
}

/// Priorities and headers a host stamps on its frames.
#[derive(Copy, Clone, Debug)]
pub struct Stamp {
    pub l4: L4Headers,
    pub data: u8,
    pub control: u8,
}

/// A data frame of `payload` bytes on path (or ECMP key) `flow`.
pub fn encode_data(dst: u32, flow: u32, d: &DataHdr, payload: u32, s: &Stamp, thread: u16) -> SendSpec {
    debug_assert!(d.size <= SIZE_MASK);
    SendSpec {
        dst,
        kind: PktKind::Data,
        prio: s.data,
        payload,
        l4: Some(s.l4),
        msg: d.msg.slot,
        msg_gen: d.msg.gen,
        flow,
        seq: d.index,
        thread,
        flags: flags::TRIMMABLE | flags::BURST_END | flags::NOTIFY_TX_DONE,
        proto: (d.tag & TAG_MASK) | if d.resent { proto::RETX } else { 0 },
        aux: d.size | u64::from(d.prio) << PRIO_SHIFT,
    }
}

/// An ACK, NACK or PULL on path (or ECMP key) `flow`.
pub fn encode_ctl(dst: u32, flow: u32, c: &CtlHdr, s: &Stamp, thread: u16) -> SendSpec {
    let (kind, bits) = match c.kind {
        CtlKind::Ack => (PktKind::Ack, 0),
        CtlKind::Nack => (PktKind::Ack, NACK),
        CtlKind::Pull => (PktKind::Control, 0),
    };
    let pull = if c.pull && c.kind != CtlKind::Pull { PULL } else { 0 };
    SendSpec {
        dst,
        kind,
        prio: s.control,
        payload: 0,
        l4: Some(s.l4),
        msg: c.msg.slot,
        msg_gen: c.msg.gen,
        flow,
        seq: c.index,
        thread,
        flags: flags::BURST_END,
        proto: bits | pull | (c.tag & TAG_MASK),
        aux: u64::from(c.pull_no) | u64::from(c.cum) << 32,
    }
}

/// The transmission tag a data frame carries (or an ACK echoes).
pub fn tag_of(p: &Packet) -> u8 {
    p.proto & TAG_MASK
}

/// The frame `p` carries; `None` for frames that are not NDP's (an SFC signal: NDP does
/// not act on them).
pub fn decode(p: &Packet) -> Option<Frame> {
    let msg = Msg { slot: p.msg, gen: p.msg_gen };
    let tag = p.proto & TAG_MASK;
    match p.kind {
        PktKind::Data => {
            let d = DataHdr {
                msg,
                index: p.seq,
                size: p.aux & SIZE_MASK,
                prio: (p.aux >> PRIO_SHIFT) as u8,
                tag,
                resent: p.has_proto(proto::RETX),
            };
            Some(if p.has(flags::RETURNED) {
                Frame::Returned(d)
            } else if p.has(flags::TRIMMED) {
                Frame::Header(d)
            } else {
                Frame::Data(d)
            })
        }
        PktKind::Ack | PktKind::Control => {
            let kind = match (p.kind, p.has_proto(NACK)) {
                (PktKind::Control, _) => CtlKind::Pull,
                (_, true) => CtlKind::Nack,
                _ => CtlKind::Ack,
            };
            Some(Frame::Ctl(CtlHdr {
                kind,
                msg,
                index: p.seq,
                pull_no: p.aux as u32,
                cum: (p.aux >> 32) as u32,
                pull: kind == CtlKind::Pull || p.has_proto(PULL),
                tag,
            }))
        }
        PktKind::Pause => unreachable!("PAUSE frames are link-local: the network consumes them"),
        PktKind::Sfc => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::framing::{Framing, LinkLayer};
    use crate::units::SimTime;

    const M: Msg = Msg { slot: 0xdead_beef, gen: u16::MAX };
    const S: Stamp = Stamp { l4: L4Headers::Bytes { bytes: 62 }, data: 0, control: 7 };
    const PPP: Framing = Framing { vlan_tag: false, link: LinkLayer::Ppp };

    #[test]
    fn every_frame_round_trips_with_htsims_sizes() {
        let d = DataHdr { msg: M, index: 1_000_000, size: SIZE_MASK, prio: 7, tag: 5, resent: true };
        let s = encode_data(3, 255, &d, 9000, &S, 2);
        let p = s.to_packet(0, SimTime::ZERO, PPP);
        assert_eq!(decode(&p), Some(Frame::Data(d)));
        assert_eq!((p.wire, p.flow, p.prio()), (9064, 255, 0), "htsim's 9064 B data frame");
        assert!(p.has(flags::TRIMMABLE));
        // What a trimming queue leaves: the same fields, no payload, the TRIMMED flag.
        let h = Packet { payload: 0, flags: p.flags | flags::TRIMMED, ..p };
        assert_eq!(decode(&h), Some(Frame::Header(d)));
        let r = Packet { flags: h.flags | flags::RETURNED, ..h };
        assert_eq!(decode(&r), Some(Frame::Returned(d)));
        for kind in [CtlKind::Ack, CtlKind::Nack, CtlKind::Pull] {
            for pull in [false, true] {
                let c = CtlHdr { kind, msg: M, index: 7, pull_no: u32::MAX, cum: u32::MAX - 1, pull: pull || kind == CtlKind::Pull, tag: 3 };
                let p = encode_ctl(1, 9, &c, &S, 0).to_packet(0, SimTime::ZERO, PPP);
                assert_eq!(decode(&p), Some(Frame::Ctl(c)));
                assert_eq!((p.wire, p.prio(), p.flow), (64, 7, 9), "htsim's 64 B control frame");
            }
        }
        assert_eq!(decode(&Packet { kind: PktKind::Sfc, ..Default::default() }), None);
    }
}
