//! The codec between pl2-protocol's messages and the simulator's 64-byte [`Packet`].
//!
//! RSV, GRT and CANCEL are 64-byte Ethernet control frames (`PktKind::Control`, payload
//! 0, padded to the minimum frame) at 802.1Q priority 7 (§4.2.1 footnote 7: they never
//! wait behind data), each its own hand-over unit (`BURST_END`). `msg_gen` holds the
//! frame type ([`RSV`], [`GRT`], [`CANCEL`]).
//!
//! | frame  | addressed to | fields |
//! |--------|--------------|--------|
//! | RSV    | the data destination (the ToR program consumes it) | `src`/`dst` = rsv.src/dst; `seq` = burst; `aux` bits 0-7 attempt, 8-15 demand (≤ K ≤ 255), bit 16 high priority, bit 17 unsolicited follows |
//! | GRT    | rsv.src (the copy: rsv.dst) | `src` = the switch node; `seq` = burst; `aux` = send slot (bits 0-31) and recv slot (bits 32-63); `flow` bits 0-7 attempt, 8-15 granted, bit 16 unsolicited admitted, bit 17 copy-to-receiver marker; `msg` = the peer (grt.dst in a GRT, grt.src in a copy) |
//! | CANCEL | the other end of the pair (the ToR program consumes it) | `aux` = packets; `seq` = cancel.src; `msg` = cancel.dst |
//! | data (raw layout) | the data destination | `msg`/`msg_gen` = message slot/generation; `seq` = packet index in the message; `aux` bits 0-47 message size in bytes, bits 56-63 index in burst; `flow` = burst id (ECMP is irrelevant inside one rack, so `flow` carries the burst rather than a hash key); flags `SCHEDULED` (always), `UNSOLICITED`, `RETX` (the scheduled resend), `BURST_END` + `NOTIFY_TX_DONE` on the burst's last frame |
//! | data (TCP layout, [`TagLayout::Tcp`]) | the data destination | the TCP segment's fields ([`crate::transport::tcp::wire`]) with the tag in `aux`: bit 1 resent, bits 8-39 burst, bits 56-63 index in burst; flags `SCHEDULED`, `UNSOLICITED`, `BURST_END` + `NOTIFY_TX_DONE` on the burst's last frame |
//!
//! Host ids are the simulator's host indices.

use crate::packet::{flags, proto, Packet, PktKind};
use crate::transport::SendSpec;
use pl2_protocol::{BurstId, Cancel, DataTag, Grt, Rsv};

/// Frame types, in `msg_gen` of control frames.
pub const RSV: u16 = 1;
pub const GRT: u16 = 2;
pub const CANCEL: u16 = 3;
/// 802.1Q priority of PL2 control frames.
pub const CONTROL_PRIO: u8 = 7;

const SIZE_MASK: u64 = (1 << 48) - 1;
const COPY_BIT: u32 = 1 << 17;

fn control(dst: u32, ty: u16, thread: u16) -> SendSpec {
    SendSpec {
        dst,
        kind: PktKind::Control,
        prio: CONTROL_PRIO,
        payload: 0,
        msg_gen: ty,
        thread,
        flags: flags::BURST_END,
        ..Default::default()
    }
}

/// What a PL2 control frame says.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Control {
    Rsv(Rsv),
    /// The grant and whether this frame is the copy to the receiver.
    Grt(Grt, bool),
    Cancel(Cancel),
}

pub fn encode_rsv(r: &Rsv, thread: u16) -> SendSpec {
    let mut s = control(r.dst, RSV, thread);
    s.seq = r.burst.0;
    s.aux = u64::from(r.attempt)
        | u64::from(r.demand_packets.min(255)) << 8
        | u64::from(r.high_priority) << 16
        | u64::from(r.unsolicited_follows) << 17;
    s
}

/// A GRT (or its copy) as the switch program emits it.
pub fn encode_grt(g: &Grt, copy: bool) -> SendSpec {
    let mut s = control(if copy { g.dst } else { g.src }, GRT, 0);
    s.seq = g.burst.0;
    s.aux = u64::from(g.send_timeslot_slots) | u64::from(g.recv_timeslot_slots) << 32;
    s.flow = u32::from(g.attempt)
        | g.granted_packets.min(255) << 8
        | u32::from(g.unsolicited_admitted) << 16
        | if copy { COPY_BIT } else { 0 };
    s.msg = if copy { g.src } else { g.dst };
    s
}

/// A CANCEL sent by host `me` (the sender or the receiver of the pair).
pub fn encode_cancel(c: &Cancel, me: u32) -> SendSpec {
    let to = if me == c.src { c.dst } else { c.src };
    let mut s = control(to, CANCEL, 0);
    s.aux = u64::from(c.packets);
    s.seq = c.src;
    s.msg = c.dst;
    s
}

/// Decodes a PL2 control frame; `None` for anything else.
pub fn decode_control(p: &Packet) -> Option<Control> {
    if p.kind != PktKind::Control {
        return None;
    }
    match p.msg_gen {
        RSV => Some(Control::Rsv(Rsv {
            src: p.src,
            dst: p.dst,
            burst: BurstId(p.seq),
            attempt: p.aux as u8,
            demand_packets: (p.aux >> 8) as u8 as u32,
            high_priority: p.aux >> 16 & 1 == 1,
            unsolicited_follows: p.aux >> 17 & 1 == 1,
        })),
        GRT => {
            let copy = p.flow & COPY_BIT != 0;
            let (src, dst) = if copy { (p.msg, p.dst) } else { (p.dst, p.msg) };
            Some(Control::Grt(
                Grt {
                    src,
                    dst,
                    burst: BurstId(p.seq),
                    attempt: p.flow as u8,
                    send_timeslot_slots: p.aux as u32,
                    recv_timeslot_slots: (p.aux >> 32) as u32,
                    granted_packets: (p.flow >> 8) as u8 as u32,
                    unsolicited_admitted: p.flow >> 16 & 1 == 1,
                },
                copy,
            ))
        }
        CANCEL => Some(Control::Cancel(Cancel { src: p.seq, dst: p.msg, packets: p.aux as u32 })),
        _ => None,
    }
}

/// Header fields of one PL2 data frame beyond the tag: which message, its size, and the
/// packet's index in it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct DataFields {
    pub msg_slot: u32,
    pub msg_gen: u16,
    pub msg_size: u64,
    pub packet_index: u32,
    pub last_of_burst: bool,
}

/// Fills the PL2 fields of a data frame (`dst`, `payload`, `prio`, `l4`, `thread` are the
/// caller's).
pub fn encode_data(s: &mut SendSpec, tag: &DataTag, d: &DataFields) {
    debug_assert!(d.msg_size <= SIZE_MASK && tag.index_in_burst < 256);
    s.kind = PktKind::Data;
    s.dst = tag.dst;
    s.msg = d.msg_slot;
    s.msg_gen = d.msg_gen;
    s.seq = d.packet_index;
    s.aux = (d.msg_size & SIZE_MASK) | u64::from(tag.index_in_burst) << 56;
    s.flow = tag.burst.0;
    s.flags = if d.last_of_burst { flags::BURST_END | flags::NOTIFY_TX_DONE } else { 0 };
    s.proto = proto::SCHEDULED | if tag.unsolicited { proto::UNSOLICITED } else { 0 } | if tag.resent { proto::RETX } else { 0 };
}

/// The tag of a PL2-scheduled data frame (raw layout); `None` for any other frame.
pub fn decode_tag(p: &Packet) -> Option<DataTag> {
    decode_tag_in(TagLayout::Raw, p)
}

/// Where scheduled data frames carry their PL2 tag. Every host of a run uses one layout
/// and the ToR's program is built knowing it.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum TagLayout {
    /// PL2's own data frames: `flow` = burst id, flag `RETX` = the scheduled resend.
    #[default]
    Raw,
    /// TCP segments scheduled by PL2: the TCP fields stay where [`crate::transport::tcp::wire`]
    /// puts them (`flow` = the connection, `seq`, flags `RETX`/`ECT`/`CE`, `aux` bit 0 =
    /// end of message); the tag rides in `aux`: bit 1 = the scheduled resend of an
    /// unsolicited burst, bits 8-39 = burst id, bits 56-63 = index in burst; flag
    /// `UNSOLICITED` as in the raw layout.
    Tcp,
}

const TCP_RESENT_BIT: u64 = 1 << 1;

/// The tag of a PL2-scheduled data frame under `layout`; `None` for any other frame.
pub fn decode_tag_in(layout: TagLayout, p: &Packet) -> Option<DataTag> {
    if p.kind != PktKind::Data || !p.has_proto(proto::SCHEDULED) {
        return None;
    }
    let (burst, resent) = match layout {
        TagLayout::Raw => (p.flow, p.has_proto(proto::RETX)),
        TagLayout::Tcp => ((p.aux >> 8) as u32, p.aux & TCP_RESENT_BIT != 0),
    };
    Some(DataTag {
        src: p.src,
        dst: p.dst,
        burst: BurstId(burst),
        index_in_burst: (p.aux >> 56) as u32,
        unsolicited: p.has_proto(proto::UNSOLICITED),
        resent,
    })
}

/// Adds the PL2 tag (TCP layout) to a TCP data segment's spec; `last`: the burst's last
/// frame (`BURST_END | NOTIFY_TX_DONE`; the others lose the segment's own `BURST_END` so
/// the burst is one hand-over unit).
pub fn encode_tcp_tag(s: &mut SendSpec, tag: &DataTag, last: bool) {
    debug_assert!(tag.index_in_burst < 256);
    s.aux = (s.aux & 1)
        | if tag.resent { TCP_RESENT_BIT } else { 0 }
        | u64::from(tag.burst.0) << 8
        | u64::from(tag.index_in_burst) << 56;
    s.flags = (s.flags & !(flags::BURST_END | flags::NOTIFY_TX_DONE)) | if last { flags::BURST_END | flags::NOTIFY_TX_DONE } else { 0 };
    s.proto = (s.proto & !proto::UNSOLICITED) | proto::SCHEDULED | if tag.unsolicited { proto::UNSOLICITED } else { 0 };
}

/// The burst a scheduled frame (TCP layout) belongs to.
pub fn tcp_burst_of(p: &Packet) -> Option<BurstId> {
    decode_tag_in(TagLayout::Tcp, p).map(|t| t.burst)
}

pub fn decode_data(p: &Packet) -> DataFields {
    DataFields {
        msg_slot: p.msg,
        msg_gen: p.msg_gen,
        msg_size: p.aux & SIZE_MASK,
        packet_index: p.seq,
        last_of_burst: p.has(flags::BURST_END),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the engine does with a spec: the frame as it arrives.
    fn frame(s: &SendSpec, src: u32) -> Packet {
        s.to_packet(src, crate::units::SimTime::ZERO, crate::framing::Framing::default())
    }

    #[test]
    fn rsv_round_trips() {
        for (a, d, h, u) in [(0u8, 4u32, false, true), (255, 1, true, false), (7, 255, true, true)] {
            let r = Rsv { src: 3, dst: 5, burst: BurstId(0xdead_beef), attempt: a, demand_packets: d, high_priority: h, unsolicited_follows: u };
            let s = encode_rsv(&r, 2);
            assert_eq!((s.dst, s.prio, s.kind, s.payload, s.thread), (5, 7, PktKind::Control, 0, 2));
            assert_eq!(decode_control(&frame(&s, 3)), Some(Control::Rsv(r)));
        }
    }

    #[test]
    fn grt_and_its_copy_round_trip() {
        let g = Grt {
            src: 1,
            dst: 4,
            burst: BurstId(77),
            attempt: 3,
            send_timeslot_slots: u32::MAX,
            recv_timeslot_slots: 12345,
            granted_packets: 4,
            unsolicited_admitted: true,
        };
        let s = encode_grt(&g, false);
        assert_eq!(s.dst, 1);
        assert_eq!(decode_control(&frame(&s, 99)), Some(Control::Grt(g, false)));
        let c = encode_grt(&g, true);
        assert_eq!(c.dst, 4);
        assert_eq!(decode_control(&frame(&c, 99)), Some(Control::Grt(g, true)));
    }

    #[test]
    fn cancel_round_trips_from_either_end() {
        let c = Cancel { src: 2, dst: 0, packets: 9 };
        let from_sender = encode_cancel(&c, 2);
        assert_eq!(from_sender.dst, 0);
        assert_eq!(decode_control(&frame(&from_sender, 2)), Some(Control::Cancel(c)));
        let from_receiver = encode_cancel(&c, 0);
        assert_eq!(from_receiver.dst, 2);
        assert_eq!(decode_control(&frame(&from_receiver, 0)), Some(Control::Cancel(c)));
    }

    #[test]
    fn data_round_trips_and_is_not_control() {
        let tag = DataTag { src: 0, dst: 3, burst: BurstId(u32::MAX), index_in_burst: 3, unsolicited: true, resent: false };
        let d = DataFields { msg_slot: 17, msg_gen: 65535, msg_size: (1 << 48) - 1, packet_index: 1_000_000, last_of_burst: true };
        let mut s = SendSpec { payload: 1500, ..Default::default() };
        encode_data(&mut s, &tag, &d);
        let p = frame(&s, 0);
        assert_eq!(decode_tag(&p), Some(tag));
        assert_eq!(decode_data(&p), d);
        assert!(p.has(flags::NOTIFY_TX_DONE));
        assert_eq!(decode_control(&p), None);
        let resent = DataTag { unsolicited: false, resent: true, index_in_burst: 0, ..tag };
        let d2 = DataFields { last_of_burst: false, ..d };
        encode_data(&mut s, &resent, &d2);
        let p = frame(&s, 0);
        assert_eq!(decode_tag(&p), Some(resent));
        assert!(!p.has(flags::BURST_END) && !p.has(flags::NOTIFY_TX_DONE));
        // The same tag in a TCP segment keeps the segment's own fields.
        let seg = crate::transport::tcp::wire::Segment { seq32: 77, flow: 5, msg: 3, msg_gen: 2, msg_end: true, ect: true, ce: false, retx: true };
        let mut t = crate::transport::tcp::wire::encode_segment(3, &seg, 1460, 0, 1);
        encode_tcp_tag(&mut t, &tag, false);
        let p = frame(&t, 0);
        assert_eq!(decode_tag_in(TagLayout::Tcp, &p), Some(tag));
        assert_eq!(crate::transport::tcp::wire::decode_segment(&p), Some(seg));
        assert!(!p.has(flags::BURST_END));
        encode_tcp_tag(&mut t, &resent, true);
        let p = frame(&t, 0);
        assert_eq!(decode_tag_in(TagLayout::Tcp, &p), Some(resent));
        assert_eq!(tcp_burst_of(&p), Some(resent.burst));
        assert!(p.has(flags::BURST_END) && p.has(flags::NOTIFY_TX_DONE) && p.has_proto(proto::RETX));
        // Data without the SCHEDULED flag (e.g. another transport's) carries no tag.
        let raw = Packet { kind: PktKind::Data, ..Default::default() };
        assert_eq!(decode_tag(&raw), None);
    }
}
