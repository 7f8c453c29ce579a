//! How TCP segments ride in the simulator's 64-byte [`Packet`].
//!
//! Sequence numbers are 64-bit byte offsets in the model; the wire carries their low 32
//! bits (as TCP does) and each end reconstructs the full value from its own state
//! (`rcv_nxt` at the receiver, `snd_una` at the sender), valid while the window is below
//! 2 GiB.
//!
//! | frame | kind / prio | fields |
//! |-------|-------------|--------|
//! | data  | `Data` / `priority` | `seq` = low 32 bits of the first byte's sequence number; `flow` = [`flow_id`]; `msg`/`msg_gen` = the message the bytes belong to (segments never span two messages); `aux` bit 0 = the segment ends its message (PSH); flags `ECT` (DCTCP), `CE` (set by switches), `RETX` |
//! | ACK   | `Ack` / `priority` | `seq` = low 32 bits of the cumulative ACK; `flow` as the data; `thread` = the data's sending thread (names the connection at the sender); `aux` = one SACK block: bits 32-63 = its start − ACK, bits 0-31 = its length (0: no block, and then `aux` = 0); flag `CE` on an ACK means ECN-Echo (ACKs are not ECT, so switches never mark them) |
//! | SYN   | `Ack` / `priority` | `seq` = [`ISN`]; `flow`, `thread` as the data; `msg`/`msg_gen` = the message that opened the connection; `aux` = [`AUX_SYN`] |
//! | SYN-ACK | `Ack` / `priority` | `seq` = [`ISN`] + 1 = 0 (the acknowledgement number); `flow`, `thread`, `msg`/`msg_gen` as the SYN; `aux` = [`AUX_SYN_ACK`] |
//! | handshake ACK | `Ack` / `priority` | the third frame of the handshake, a pure ACK of the SYN-ACK from the data's sender (`handshake_ack = "separate"`); `seq` = 1 (the SYN-ACK's own SYN is sequence number 0 of the reverse stream); other fields as the SYN; `aux` = [`AUX_HANDSHAKE_ACK`]; no options; the receiver's connection is already open (at the SYN), so it only occupies the wire |
//!
//! One SACK block per ACK (the one holding the most recently received segment, RFC
//! 2018's first block), exact to the byte; the sender's scoreboard accumulates blocks
//! over ACKs. An ACK with a block carries 12 option bytes (2 NOPs + kind, length, 8 B):
//! `L4Headers::Tcp { options: 12 }`; data and plain ACKs carry none (no timestamps).
//!
//! Handshake frames (`handshake = true`, RFC 9293 §3.5) are control frames like pure ACKs:
//! kind `Ack`, no payload, never ECT, never scheduled by PL2. They carry Linux's 20 bytes
//! of SYN options ([`SYN_OPTION_BYTES`]: MSS 4, SACK-permitted 2, timestamps 10, window
//! scale 3, one NOP), which the model only counts in the frame size: 82 B from Ethernet
//! header to FCS with an 802.1Q tag (14 + 4 + 20 + 20 + 20 + 4), 102 B on the wire,
//! against 64 B (84 B) for a pure ACK; timestamps are not used on data segments
//! afterwards. The SYN occupies sequence number [`ISN`] = 2³² − 1, so the first
//! data byte is 0 and the SYN-ACK acknowledges 0. A SYN-ACK's own SYN (the reverse stream)
//! carries no data in the model and needs no sequence number. They are told from ACKs by
//! `aux`: an ACK without a SACK block has `aux` = 0, one with a block a non-zero length in
//! bits 0-31, while the handshake markers have bits 0-31 zero and a non-zero tag above.

use crate::framing::L4Headers;
use crate::packet::{flags, proto, Packet, PktKind};
use crate::transport::SendSpec;

/// TCP option bytes of an ACK carrying one SACK block.
pub const SACK_OPTION_BYTES: u8 = 12;

/// TCP option bytes of a SYN and a SYN-ACK (Linux: MSS 4, SACK-permitted 2, timestamps
/// 10, window scale 3, NOP 1).
pub const SYN_OPTION_BYTES: u8 = 20;

/// Initial sequence number of every connection (the SYN's sequence number): the data
/// stream starts at ISN + 1 = 0 modulo 2³².
pub const ISN: u32 = u32::MAX;

/// `aux` of a SYN.
pub const AUX_SYN: u64 = 1 << 32;
/// `aux` of a SYN-ACK.
pub const AUX_SYN_ACK: u64 = 2 << 32;
/// `aux` of the ACK that completes the handshake (`handshake_ack = "separate"`).
pub const AUX_HANDSHAKE_ACK: u64 = 3 << 32;

/// Flow id of the connection from `src`'s `thread` to `dst`: `src · 2^20 + dst · 2^8 +
/// thread` (wrapping; unique below 4096 hosts and 256 threads). `DropNth` and ECMP use it.
pub fn flow_id(src: u32, dst: u32, thread: u16) -> u32 {
    src.wrapping_shl(20).wrapping_add(dst.wrapping_shl(8)).wrapping_add(u32::from(thread & 0xff))
}

/// One data segment's TCP fields.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    pub seq32: u32,
    pub flow: u32,
    pub msg: u32,
    pub msg_gen: u16,
    pub msg_end: bool,
    pub ect: bool,
    pub ce: bool,
    pub retx: bool,
}

/// A handshake frame's fields (SYN or SYN-ACK).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Syn {
    pub flow: u32,
    /// The data's sending thread (names the connection at both ends).
    pub thread: u16,
    /// The message that opened the connection (latency breakdown only).
    pub msg: u32,
    pub msg_gen: u16,
    /// SYN-ACK (the receiver's answer) rather than SYN.
    pub ack: bool,
}

/// One ACK's fields.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Ack {
    pub ack32: u32,
    pub flow: u32,
    /// The data's sending thread.
    pub thread: u16,
    /// SACK block as (start − ack, length); length 0: none.
    pub sack: (u32, u32),
    pub ece: bool,
}

pub fn encode_segment(dst: u32, s: &Segment, payload: u32, prio: u8, thread: u16) -> SendSpec {
    let f = if s.ect { flags::ECT } else { 0 } | if s.ce { flags::CE } else { 0 };
    SendSpec {
        dst,
        kind: PktKind::Data,
        prio,
        payload,
        l4: Some(L4Headers::Tcp { options: 0 }),
        msg: s.msg,
        msg_gen: s.msg_gen,
        flow: s.flow,
        seq: s.seq32,
        thread,
        flags: f | flags::BURST_END,
        proto: if s.retx { proto::RETX } else { 0 },
        aux: u64::from(s.msg_end),
    }
}

pub fn decode_segment(p: &Packet) -> Option<Segment> {
    (p.kind == PktKind::Data).then(|| Segment {
        seq32: p.seq,
        flow: p.flow,
        msg: p.msg,
        msg_gen: p.msg_gen,
        msg_end: p.aux & 1 == 1,
        ect: p.has(flags::ECT),
        ce: p.has(flags::CE),
        retx: p.has_proto(proto::RETX),
    })
}

/// An ACK to `dst` (`msg`/`msg_gen` name the message of the segment that triggered it,
/// for the latency breakdown only).
pub fn encode_ack(dst: u32, a: &Ack, prio: u8, msg: u32, msg_gen: u16) -> SendSpec {
    let (options, aux) = if a.sack.1 > 0 { (SACK_OPTION_BYTES, u64::from(a.sack.0) << 32 | u64::from(a.sack.1)) } else { (0, 0) };
    SendSpec {
        dst,
        kind: PktKind::Ack,
        prio,
        payload: 0,
        l4: Some(L4Headers::Tcp { options }),
        msg,
        msg_gen,
        flow: a.flow,
        seq: a.ack32,
        thread: a.thread,
        flags: flags::BURST_END | if a.ece { flags::CE } else { 0 },
        proto: 0,
        aux,
    }
}

/// Whether an `Ack`-kind frame is a SYN or SYN-ACK: no SACK length, a non-zero tag.
fn is_handshake(p: &Packet) -> bool {
    p.aux as u32 == 0 && p.aux != 0
}

pub fn decode_ack(p: &Packet) -> Option<Ack> {
    (p.kind == PktKind::Ack && !is_handshake(p)).then(|| Ack {
        ack32: p.seq,
        flow: p.flow,
        thread: p.thread,
        sack: ((p.aux >> 32) as u32, p.aux as u32),
        ece: p.has(flags::CE),
    })
}

/// A SYN (`s.ack` false, from the data's sender) or SYN-ACK (from the receiver) to `dst`.
pub fn encode_syn(dst: u32, s: &Syn, prio: u8) -> SendSpec {
    SendSpec {
        dst,
        kind: PktKind::Ack,
        prio,
        payload: 0,
        l4: Some(L4Headers::Tcp { options: SYN_OPTION_BYTES }),
        msg: s.msg,
        msg_gen: s.msg_gen,
        flow: s.flow,
        seq: if s.ack { ISN.wrapping_add(1) } else { ISN },
        thread: s.thread,
        flags: flags::BURST_END,
        proto: 0,
        aux: if s.ack { AUX_SYN_ACK } else { AUX_SYN },
    }
}

/// The pure ACK that completes the handshake (`handshake_ack = "separate"`), to `dst`.
pub fn encode_handshake_ack(dst: u32, s: &Syn, prio: u8) -> SendSpec {
    SendSpec { l4: Some(L4Headers::Tcp { options: 0 }), seq: 1, aux: AUX_HANDSHAKE_ACK, ..encode_syn(dst, s, prio) }
}

pub fn decode_syn(p: &Packet) -> Option<Syn> {
    if p.kind != PktKind::Ack || !is_handshake(p) {
        return None;
    }
    let ack = match p.aux {
        AUX_SYN => false,
        AUX_SYN_ACK => true,
        _ => return None,
    };
    Some(Syn { flow: p.flow, thread: p.thread, msg: p.msg, msg_gen: p.msg_gen, ack })
}

/// The 64-bit value nearest `reference` whose low 32 bits are `low` (RFC 1982 style).
pub fn unwrap_seq(low: u32, reference: u64) -> u64 {
    let d = low.wrapping_sub(reference as u32) as i32 as i64;
    (reference as i64 + d).max(0) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(s: &SendSpec, src: u32) -> Packet {
        s.to_packet(src, crate::units::SimTime::ZERO, crate::framing::Framing::default())
    }

    #[test]
    fn segment_round_trips() {
        for bits in 0..16u8 {
            let s = Segment {
                seq32: u32::MAX - u32::from(bits),
                flow: flow_id(3, 4, 5),
                msg: 0xdead_beef,
                msg_gen: u16::MAX,
                msg_end: bits & 1 != 0,
                ect: bits & 2 != 0,
                ce: bits & 4 != 0,
                retx: bits & 8 != 0,
            };
            let sp = encode_segment(4, &s, 1460, 3, 5);
            assert_eq!((sp.kind, sp.payload, sp.prio, sp.thread), (PktKind::Data, 1460, 3, 5));
            assert_eq!(sp.l4, Some(L4Headers::Tcp { options: 0 }));
            let p = frame(&sp, 3);
            assert_eq!(decode_segment(&p), Some(s));
            assert_eq!(decode_ack(&p), None);
        }
    }

    #[test]
    fn ack_round_trips_and_counts_sack_option_bytes() {
        for (sack, ece) in [((0, 0), false), ((1460, 2920), true), ((u32::MAX, u32::MAX), false)] {
            let a = Ack { ack32: 123_456, flow: 77, thread: 2, sack, ece };
            let sp = encode_ack(0, &a, 1, 9, 1);
            let opts = if sack.1 > 0 { SACK_OPTION_BYTES } else { 0 };
            assert_eq!(sp.l4, Some(L4Headers::Tcp { options: opts }));
            assert_eq!((sp.kind, sp.payload), (PktKind::Ack, 0));
            let p = frame(&sp, 1);
            assert_eq!(decode_ack(&p), Some(a));
            assert_eq!(decode_segment(&p), None);
        }
    }

    #[test]
    fn syn_and_syn_ack_round_trip_and_are_not_acks() {
        for ack in [false, true] {
            let s = Syn { flow: flow_id(2, 5, 3), thread: 3, msg: 42, msg_gen: 7, ack };
            let sp = encode_syn(5, &s, 2);
            assert_eq!(sp.l4, Some(L4Headers::Tcp { options: SYN_OPTION_BYTES }));
            assert_eq!((sp.kind, sp.payload, sp.proto & proto::SCHEDULED), (PktKind::Ack, 0, 0));
            assert_eq!(sp.seq, if ack { 0 } else { u32::MAX });
            let p = frame(&sp, 2);
            assert_eq!(decode_syn(&p), Some(s));
            assert_eq!((decode_ack(&p), decode_segment(&p)), (None, None));
        }
        // Plain ACKs, with and without a SACK block, are not handshake frames.
        for sack in [(0, 0), (0, 1460), (1460, 2920)] {
            let a = Ack { ack32: 0, flow: 77, thread: 2, sack, ece: false };
            assert_eq!(decode_syn(&frame(&encode_ack(0, &a, 0, 0, 0), 1)), None);
        }
    }

    #[test]
    fn sequence_numbers_unwrap_across_2_to_32() {
        let r = (5u64 << 32) - 100;
        assert_eq!(unwrap_seq(50, r), (5u64 << 32) + 50);
        assert_eq!(unwrap_seq((r - 10) as u32, r), r - 10);
        assert_eq!(unwrap_seq(7, 0), 7);
        assert_eq!(flow_id(0, 1, 0), 256);
    }
}
