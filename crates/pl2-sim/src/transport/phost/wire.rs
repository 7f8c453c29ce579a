//! How pHost's packets ride in the simulator's 64-byte [`Packet`].
//!
//! | packet | kind / prio | fields |
//! |--------|-------------|--------|
//! | RTS | `Ack` / `control_priority` | sender → receiver at the flow's start; `seq` = 0 (`DropControl`'s seq); `aux` bits 0-47 = message size, type 1 in bits 56-63 |
//! | token | `Control` / `control_priority` | receiver → sender; `seq` = the packet index it grants (`data_seq`); `aux` bits 0-31 = token number, bits 32-55 = packets the receiver still misses (saturated), type 2 |
//! | data | `Data` / `data_priority` | `seq` = packet index; `aux` bits 0-39 = message size, bits 40-63 = low 24 bits of the token number it answers; `UNSOLICITED` when sent on a free token |
//! | ACK | `Ack` / `control_priority` | receiver → sender: every packet arrived; `seq` = the flow's packet count (`DropControl`'s seq); type 3 |
//!
//! Every packet names its message by `msg`/`msg_gen` (engine slot and generation) and
//! `flow` (message id, low 32 bits: the ECMP key and `DropNth`'s flow). Every packet but
//! data carries no payload (YAPS: 40 B, `hdr_size`, `coresim/packet.cpp:47-75`) and is its
//! own hand-over unit.

use crate::framing::L4Headers;
use crate::packet::{flags, proto, Packet, PktKind};
use crate::transport::{MsgRef, SendSpec};

const SIZE48: u64 = (1 << 48) - 1;
const SIZE40: u64 = (1 << 40) - 1;
/// Token numbers in data frames are carried modulo 2²⁴.
pub const TOKEN_SEQ_BITS: u32 = 24;
const TOKEN_SEQ_MASK: u64 = (1 << TOKEN_SEQ_BITS) - 1;
const REMAINING_MAX: u64 = (1 << 24) - 1;
const TYPE_SHIFT: u32 = 56;
const RTS: u64 = 1;
const TOKEN: u64 = 2;
const ACK: u64 = 3;

/// Every pHost packet.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Frame {
    Rts {
        msg: MsgRef,
        size: u64,
    },
    Token {
        msg: MsgRef,
        data_seq: u32,
        token_seq: u32,
        remaining: u32,
    },
    /// `token_seq` is the low [`TOKEN_SEQ_BITS`] bits of the token number.
    Data {
        msg: MsgRef,
        size: u64,
        index: u32,
        token_seq: u32,
        free: bool,
    },
    Ack {
        msg: MsgRef,
        n_pkts: u32,
    },
}

/// Priorities and headers a host stamps on its packets.
#[derive(Copy, Clone, Debug)]
pub struct Stamp {
    pub l4: L4Headers,
    pub data: u8,
    pub control: u8,
}

/// The frame `f` to `dst`; a data frame carries `payload` bytes (others none).
pub fn encode(dst: u32, f: &Frame, payload: u32, s: &Stamp, thread: u16) -> SendSpec {
    let (msg, kind, prio, seq, aux, pr) = match *f {
        Frame::Rts { msg, size } => {
            debug_assert!(size <= SIZE48);
            (msg, PktKind::Ack, s.control, 0, size | RTS << TYPE_SHIFT, 0)
        }
        Frame::Token { msg, data_seq, token_seq, remaining } => {
            let rem = u64::from(remaining).min(REMAINING_MAX);
            (msg, PktKind::Control, s.control, data_seq, u64::from(token_seq) | rem << 32 | TOKEN << TYPE_SHIFT, 0)
        }
        Frame::Data { msg, size, index, token_seq, free } => {
            debug_assert!(size <= SIZE40);
            let aux = size | (u64::from(token_seq) & TOKEN_SEQ_MASK) << 40;
            (msg, PktKind::Data, s.data, index, aux, if free { proto::UNSOLICITED } else { 0 })
        }
        Frame::Ack { msg, n_pkts } => (msg, PktKind::Ack, s.control, n_pkts, ACK << TYPE_SHIFT, 0),
    };
    let fl = if kind == PktKind::Data { flags::BURST_END | flags::NOTIFY_TX_DONE } else { flags::BURST_END };
    SendSpec {
        dst,
        kind,
        prio,
        payload: if kind == PktKind::Data { payload } else { 0 },
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

pub fn decode(p: &Packet) -> Option<Frame> {
    let msg = MsgRef { slot: p.msg, gen: p.msg_gen, flow: p.flow };
    let ty = p.aux >> TYPE_SHIFT;
    match p.kind {
        PktKind::Data => Some(Frame::Data {
            msg,
            size: p.aux & SIZE40,
            index: p.seq,
            token_seq: (p.aux >> 40 & TOKEN_SEQ_MASK) as u32,
            free: p.has_proto(proto::UNSOLICITED),
        }),
        PktKind::Ack if ty == RTS => Some(Frame::Rts { msg, size: p.aux & SIZE48 }),
        PktKind::Ack if ty == ACK => Some(Frame::Ack { msg, n_pkts: p.seq }),
        PktKind::Control if ty == TOKEN => {
            Some(Frame::Token { msg, data_seq: p.seq, token_seq: p.aux as u32, remaining: (p.aux >> 32 & REMAINING_MAX) as u32 })
        }
        _ => None,
    }
}

/// The full token number whose low bits are `low`, the largest not above `latest` (the
/// receiver's last token number): exact while fewer than 2²⁴ tokens are outstanding.
pub fn widen_token_seq(low: u32, latest: u64) -> u64 {
    let back = (latest.wrapping_sub(u64::from(low))) & TOKEN_SEQ_MASK;
    latest.saturating_sub(back)
}

#[cfg(test)]
mod tests {
    use super::*;

    const M: MsgRef = MsgRef { slot: 0xdead_beef, gen: u16::MAX, flow: u32::MAX };
    const S: Stamp = Stamp { l4: L4Headers::None, data: 0, control: 7 };

    #[test]
    fn every_frame_round_trips() {
        for (f, payload) in [
            (Frame::Rts { msg: M, size: SIZE48 }, 0),
            (Frame::Token { msg: M, data_seq: 77, token_seq: u32::MAX, remaining: (1 << 24) - 1 }, 0),
            (Frame::Data { msg: M, size: SIZE40, index: 1_000_000, token_seq: (1 << 24) - 1, free: true }, 1460),
            (Frame::Data { msg: M, size: 3, index: 0, token_seq: 0, free: false }, 3),
            (Frame::Ack { msg: M, n_pkts: 9 }, 0),
        ] {
            let s = encode(4, &f, payload, &S, 2);
            let p = s.to_packet(0, crate::units::SimTime::ZERO, crate::framing::Framing::default());
            assert_eq!(decode(&p), Some(f));
            assert_eq!(s.prio, if matches!(f, Frame::Data { .. }) { 0 } else { 7 });
            assert_eq!(p.payload as u32, payload);
        }
        assert_eq!(decode(&Packet { kind: PktKind::Control, ..Default::default() }), None);
    }

    #[test]
    fn token_numbers_widen_to_the_latest_match() {
        assert_eq!(widen_token_seq(5, 9), 5);
        assert_eq!(widen_token_seq(5, 5), 5);
        let big = (1u64 << 24) * 3 + 10;
        assert_eq!(widen_token_seq(4, big), big - 6);
        assert_eq!(widen_token_seq(((1u64 << 24) - 2) as u32, big), big - 12);
    }
}
