//! How the RoCE transport's frames ride in the simulator's 64-byte [`Packet`].
//!
//! | frame | kind / prio | fields |
//! |-------|-------------|--------|
//! | data (an RDMA write's packet) | `Data` / `data_priority`, ECT | `msg`/`msg_gen` = message slot/generation; `flow` = message id (low 32 bits: the ECMP key and `DropNth`'s flow); `seq` = packet sequence number (PSN, from 0 per message); `aux` bits 0-47 = message size; `RETX` on a resend; `NOTIFY_TX_DONE` (the pacer reads when it left) |
//! | ACK | `Ack` / `control_priority` | receiver → sender; `seq` = the next PSN expected (every packet below it arrived); `aux` type 1; bit 48 = a CNP rides on it |
//! | NACK | `Ack` / `control_priority` | receiver → sender: a gap; `seq` = the PSN expected (also acknowledges those below it); `aux` type 2; bit 48 as the ACK's |
//! | CNP | `Control` / `control_priority` | receiver → sender: congestion notification for the flow; `seq` = the PSN of the marked packet; `aux` type 3 |
//! | SFC signal | `Sfc` / the switch's signal priority | a switch → the sender (never sent by RoCE): `msg`/`msg_gen`/`flow` of the data frame that triggered it; `aux` = pause in ps ([`sfc_pause`]) |
//!
//! Type is `aux` bits 56-63. The CNP's type and the ACK's CNP bit are the DCQCN layer's
//! (`layer/dcqcn/wire.rs`), which consumes them. Every frame but data carries no payload (a minimum-size
//! frame) and is its own hand-over unit; only data is ECN-capable. `DropControl` names an
//! ACK or NACK by its flow and `seq`.

use crate::framing::L4Headers;
use crate::packet::{flags, proto, Packet, PktKind};
use crate::transport::SendSpec;

pub use crate::transport::MsgRef;

const SIZE_MASK: u64 = (1 << 48) - 1;
use crate::layer::dcqcn::wire::{CNP_FLAG, CNP_TYPE as CNP, TYPE_SHIFT};
const ACK: u64 = 1;
const NACK: u64 = 2;

/// Every RoCE frame.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Frame {
    Data { msg: MsgRef, size: u64, psn: u32, resent: bool },
    Ack { msg: MsgRef, next: u32, cnp: bool },
    Nack { msg: MsgRef, next: u32, cnp: bool },
    Cnp { msg: MsgRef, psn: u32 },
}

/// Priorities and headers a host stamps on its frames.
#[derive(Copy, Clone, Debug)]
pub struct Stamp {
    pub l4: L4Headers,
    pub data: u8,
    pub control: u8,
}

/// The frame `f` to `dst`, with `payload` bytes if it is data.
pub fn encode(dst: u32, f: &Frame, payload: u32, s: &Stamp, thread: u16) -> SendSpec {
    let ctl = |msg: MsgRef, kind, seq, aux| (msg, kind, s.control, 0, seq, aux, flags::BURST_END, 0);
    let cnp_bit = |cnp: bool| if cnp { CNP_FLAG } else { 0 };
    let (msg, kind, prio, payload, seq, aux, fl, pr) = match *f {
        Frame::Data { msg, size, psn, resent } => {
            debug_assert!(size <= SIZE_MASK);
            let fl = flags::ECT | flags::NOTIFY_TX_DONE | flags::BURST_END;
            (msg, PktKind::Data, s.data, payload, psn, size, fl, if resent { proto::RETX } else { 0 })
        }
        Frame::Ack { msg, next, cnp } => ctl(msg, PktKind::Ack, next, ACK << TYPE_SHIFT | cnp_bit(cnp)),
        Frame::Nack { msg, next, cnp } => ctl(msg, PktKind::Ack, next, NACK << TYPE_SHIFT | cnp_bit(cnp)),
        Frame::Cnp { msg, psn } => ctl(msg, PktKind::Control, psn, CNP << TYPE_SHIFT),
    };
    SendSpec { dst, kind, prio, payload, l4: Some(s.l4), msg: msg.slot, msg_gen: msg.gen, flow: msg.flow, seq, thread, flags: fl, proto: pr, aux }
}

/// The frame `p` carries, if it is one of ours.
pub fn decode(p: &Packet) -> Option<Frame> {
    let msg = MsgRef { slot: p.msg, gen: p.msg_gen, flow: p.flow };
    let cnp = p.aux & CNP_FLAG != 0;
    match (p.kind, p.aux >> TYPE_SHIFT) {
        (PktKind::Data, _) => Some(Frame::Data { msg, size: p.aux & SIZE_MASK, psn: p.seq, resent: p.has_proto(proto::RETX) }),
        (PktKind::Ack, ACK) => Some(Frame::Ack { msg, next: p.seq, cnp }),
        (PktKind::Ack, NACK) => Some(Frame::Nack { msg, next: p.seq, cnp }),
        (PktKind::Control, CNP) => Some(Frame::Cnp { msg, psn: p.seq }),
        _ => None,
    }
}

/// The flow and the pause (ps) an SFC signal (sent by a switch, not by RoCE) carries.
pub fn sfc_pause(p: &Packet) -> Option<(MsgRef, u64)> {
    (p.kind == PktKind::Sfc).then_some((MsgRef { slot: p.msg, gen: p.msg_gen, flow: p.flow }, p.aux))
}

#[cfg(test)]
mod tests {
    use super::*;

    const M: MsgRef = MsgRef { slot: 0xdead_beef, gen: u16::MAX, flow: u32::MAX };
    const S: Stamp = Stamp { l4: L4Headers::Bytes { bytes: 44 }, data: 3, control: 7 };

    #[test]
    fn every_frame_round_trips_and_only_data_is_ect() {
        for f in [
            Frame::Data { msg: M, size: SIZE_MASK, psn: u32::MAX, resent: false },
            Frame::Data { msg: M, size: 1, psn: 0, resent: true },
            Frame::Ack { msg: M, next: 7, cnp: false },
            Frame::Ack { msg: M, next: 7, cnp: true },
            Frame::Nack { msg: M, next: u32::MAX, cnp: true },
            Frame::Cnp { msg: M, psn: 9 },
        ] {
            let s = encode(4, &f, 1000, &S, 2);
            let p = s.to_packet(0, crate::units::SimTime::ZERO, crate::framing::Framing::default());
            assert_eq!(decode(&p), Some(f));
            let data = matches!(f, Frame::Data { .. });
            assert_eq!(s.flags & flags::ECT != 0, data, "{f:?}");
            assert_eq!(s.prio, if data { 3 } else { 7 });
            assert_eq!(s.payload, if data { 1000 } else { 0 });
        }
        // Another transport's control frame (type 0) is not ours.
        assert_eq!(decode(&Packet { kind: PktKind::Control, ..Default::default() }), None);
        // An SFC signal is no RoCE frame, but names the flow and the pause.
        let sig = Packet { kind: PktKind::Sfc, msg: 5, msg_gen: 2, flow: 9, aux: 4_000_000, ..Default::default() };
        assert_eq!(decode(&sig), None);
        assert_eq!(sfc_pause(&sig), Some((MsgRef { slot: 5, gen: 2, flow: 9 }, 4_000_000)));
        assert_eq!(sfc_pause(&Packet::default()), None);
    }
}
