//! How Polo's packets ride in the simulator's 64-byte [`Packet`].
//!
//! | packet | kind / prio | fields |
//! |--------|-------------|--------|
//! | data | `Data` / `data_priority` (`retransmit_priority` with `RETX`), ECT | `msg`/`msg_gen` = message slot/generation; `flow` = message id (low 32 bits: the ECMP key and `DropNth`'s flow); `seq` = packet index; `aux` bits 0-47 = message size; `NOTIFY_TX_DONE` (the adjoint follows when its last bit has left) |
//! | adjoint | `Ack` / `control_priority` | sender → receiver, header-sized, after each data packet; `seq` = the index of that data packet (`DropControl`'s seq); `aux` bits 0-47 = message size, bits 56-63 = 1 |
//! | epoch ack | `Control` / `control_priority` | receiver → sender, acknowledges an adjoint and opens an epoch; `seq` = epoch number; type 2 |
//! | epoch echo | `Control` / `control_priority` | sender → receiver, the answer to an epoch ack, which closes the epoch; `seq` = epoch number; type 3 |
//! | driving | `Control` / `control_priority` | receiver → sender; `seq` = cumulative limit: every packet below it may be sent; type 4 |
//! | loss | `Control` / `control_priority` | receiver → sender; `seq` = first missing packet, `aux` bits 0-31 = how many; type 5 |
//! | pause | `Control` / `control_priority` | receiver → sender: send nothing new until a driving packet; type 6 |
//! | done | `Control` / `control_priority` | receiver → sender: the message is delivered; type 7 |
//!
//! Every packet but data carries no payload (a minimum-size frame) and is its own
//! hand-over unit. Control packets are never ECN-capable.

use crate::framing::L4Headers;
use crate::packet::{flags, proto, Packet, PktKind};
use crate::transport::SendSpec;

const SIZE_MASK: u64 = (1 << 48) - 1;
const TYPE_SHIFT: u32 = 56;
const ADJOINT: u64 = 1;
const EPOCH_ACK: u64 = 2;
const EPOCH_ECHO: u64 = 3;
const DRIVING: u64 = 4;
const LOSS: u64 = 5;
const PAUSE: u64 = 6;
const DONE: u64 = 7;

pub use crate::transport::MsgRef;

/// A data or adjoint packet's fields.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Data {
    pub msg: MsgRef,
    pub size: u64,
    pub index: u32,
}

/// Every Polo packet.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Frame {
    Data { d: Data, resent: bool },
    Adjoint(Data),
    EpochAck { msg: MsgRef, epoch: u32 },
    EpochEcho { msg: MsgRef, epoch: u32 },
    Driving { msg: MsgRef, limit: u32 },
    Loss { msg: MsgRef, first: u32, count: u32 },
    Pause { msg: MsgRef },
    Done { msg: MsgRef },
}

/// Priorities and headers a host stamps on its packets.
#[derive(Copy, Clone, Debug)]
pub struct Stamp {
    pub l4: L4Headers,
    pub data: u8,
    pub retransmit: u8,
    pub control: u8,
    /// First transmissions of data of messages of at most this many bytes go at
    /// `short` (`short_first`; 0: none do).
    pub short_max_bytes: u64,
    pub short: u8,
}

pub fn encode(dst: u32, f: &Frame, s: &Stamp, thread: u16) -> SendSpec {
    let (msg, kind, prio, payload, seq, aux, fl, pr) = match *f {
        Frame::Data { d, resent } => {
            debug_assert!(d.size <= SIZE_MASK);
            let (prio, pr) = if resent {
                (s.retransmit, proto::RETX)
            } else if d.size <= s.short_max_bytes {
                (s.short, 0)
            } else {
                (s.data, 0)
            };
            (d.msg, PktKind::Data, prio, 0, d.index, d.size, flags::ECT | flags::NOTIFY_TX_DONE, pr)
        }
        Frame::Adjoint(d) => (d.msg, PktKind::Ack, s.control, 0, d.index, d.size | ADJOINT << TYPE_SHIFT, flags::BURST_END, 0),
        Frame::EpochAck { msg, epoch } => (msg, PktKind::Control, s.control, 0, epoch, EPOCH_ACK << TYPE_SHIFT, flags::BURST_END, 0),
        Frame::EpochEcho { msg, epoch } => (msg, PktKind::Control, s.control, 0, epoch, EPOCH_ECHO << TYPE_SHIFT, flags::BURST_END, 0),
        Frame::Driving { msg, limit } => (msg, PktKind::Control, s.control, 0, limit, DRIVING << TYPE_SHIFT, flags::BURST_END, 0),
        Frame::Loss { msg, first, count } => {
            (msg, PktKind::Control, s.control, 0, first, LOSS << TYPE_SHIFT | u64::from(count), flags::BURST_END, 0)
        }
        Frame::Pause { msg } => (msg, PktKind::Control, s.control, 0, 0, PAUSE << TYPE_SHIFT, flags::BURST_END, 0),
        Frame::Done { msg } => (msg, PktKind::Control, s.control, 0, 0, DONE << TYPE_SHIFT, flags::BURST_END, 0),
    };
    SendSpec {
        dst,
        kind,
        prio,
        payload,
        l4: Some(s.l4),
        msg: msg.slot,
        msg_gen: msg.gen,
        flow: msg.flow,
        seq,
        thread,
        flags: fl,
        proto: pr,
        aux,
    }
}

/// A data frame of `payload` bytes (its kind, prio and flags from [`encode`]).
pub fn encode_data(dst: u32, d: Data, resent: bool, payload: u32, s: &Stamp, thread: u16) -> SendSpec {
    SendSpec { payload, flags: flags::ECT | flags::NOTIFY_TX_DONE | flags::BURST_END, ..encode(dst, &Frame::Data { d, resent }, s, thread) }
}

pub fn decode(p: &Packet) -> Option<Frame> {
    let msg = MsgRef { slot: p.msg, gen: p.msg_gen, flow: p.flow };
    let data = Data { msg, size: p.aux & SIZE_MASK, index: p.seq };
    match p.kind {
        PktKind::Data => Some(Frame::Data { d: data, resent: p.has_proto(proto::RETX) }),
        PktKind::Ack => (p.aux >> TYPE_SHIFT == ADJOINT).then_some(Frame::Adjoint(data)),
        PktKind::Control => match p.aux >> TYPE_SHIFT {
            EPOCH_ACK => Some(Frame::EpochAck { msg, epoch: p.seq }),
            EPOCH_ECHO => Some(Frame::EpochEcho { msg, epoch: p.seq }),
            DRIVING => Some(Frame::Driving { msg, limit: p.seq }),
            LOSS => Some(Frame::Loss { msg, first: p.seq, count: p.aux as u32 }),
            PAUSE => Some(Frame::Pause { msg }),
            DONE => Some(Frame::Done { msg }),
            _ => None,
        },
        PktKind::Pause | PktKind::Sfc => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const M: MsgRef = MsgRef { slot: 0xdead_beef, gen: u16::MAX, flow: u32::MAX };
    const S: Stamp = Stamp { l4: L4Headers::None, data: 0, retransmit: 1, control: 7, short_max_bytes: 0, short: 0 };

    fn frame(s: &SendSpec) -> Packet {
        s.to_packet(0, crate::units::SimTime::ZERO, crate::framing::Framing::default())
    }

    #[test]
    fn every_frame_round_trips() {
        let d = Data { msg: M, size: SIZE_MASK, index: 1_000_000 };
        for f in [
            Frame::Data { d, resent: false },
            Frame::Data { d, resent: true },
            Frame::Adjoint(d),
            Frame::EpochAck { msg: M, epoch: 9 },
            Frame::EpochEcho { msg: M, epoch: u32::MAX },
            Frame::Driving { msg: M, limit: 77 },
            Frame::Loss { msg: M, first: 3, count: u32::MAX },
            Frame::Pause { msg: M },
            Frame::Done { msg: M },
        ] {
            let s = encode(4, &f, &S, 2);
            assert_eq!(decode(&frame(&s)), Some(f));
            let data = matches!(f, Frame::Data { .. });
            assert_eq!(s.flags & flags::ECT != 0, data, "only data is ECN-capable: {f:?}");
            let want = match f {
                Frame::Data { resent: false, .. } => 0,
                Frame::Data { resent: true, .. } => 1,
                _ => 7,
            };
            assert_eq!(s.prio, want);
        }
        let s = encode_data(4, d, false, 1500, &S, 0);
        assert_eq!((s.payload, s.kind), (1500, PktKind::Data));
        // `short_first`: a message of at most 100 KB sends its first transmissions at 3,
        // one byte more goes at `data`, and a resend at `retransmit` whatever its size.
        let short = Stamp { short_max_bytes: 100_000, short: 3, ..S };
        let at = |size: u64, resent: bool| encode(4, &Frame::Data { d: Data { size, ..d }, resent }, &short, 0).prio;
        assert_eq!((at(100_000, false), at(100_001, false), at(1, true)), (3, 0, 1));
        // Other transports' control frames (type 0) are not Polo's.
        assert_eq!(decode(&Packet { kind: PktKind::Control, ..Default::default() }), None);
    }
}
