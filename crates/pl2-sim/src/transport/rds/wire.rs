//! How RDS frames ride in the simulator's 64-byte [`Packet`].
//!
//! | frame | kind / prio | fields |
//! |-------|-------------|--------|
//! | data  | `Data` / `data_priority` | `msg`/`msg_gen` = message slot/generation; `flow` = message id (low 32 bits: `DropNth` flows and ECMP key, so a message keeps one path); `seq` = packet index in the message; `aux` bits 0-47 = message size in bytes; flags `UNSOLICITED` (index within the first RTTbytes), `RETX` (a resend), `BURST_END` on the last frame of each hand-over |
//! | GRANT | `Control` / 7 | receiver → sender; `msg`/`msg_gen`/`flow` as data; `seq` = grant limit: the sender may send every packet with index below it; `aux` bits 56-63 = 1 |
//! | NACK  | `Control` / 7 | receiver → sender; `seq` = first missing packet, `aux` bits 0-31 = how many consecutive packets are missing (a resend request, and a grant up to them); `aux` bits 56-63 = 2 |
//! | DONE  | `Control` / 7 | receiver → sender; the message is complete (sent again for every duplicate of a completed message); `aux` bits 56-63 = 3 |
//!
//! Control frames carry no payload (minimum-size frames) and are each their own
//! hand-over unit.

use crate::framing::L4Headers;
use crate::packet::{flags, proto, Packet, PktKind};
use crate::transport::SendSpec;

/// 802.1Q priority of GRANT, NACK and DONE.
pub const CONTROL_PRIO: u8 = 7;
const SIZE_MASK: u64 = (1 << 48) - 1;
const TYPE_SHIFT: u32 = 56;
const GRANT: u64 = 1;
const NACK: u64 = 2;
const DONE: u64 = 3;

pub use crate::transport::MsgRef;

/// One data frame's RDS fields.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Data {
    pub msg: MsgRef,
    pub size: u64,
    pub index: u32,
    pub unscheduled: bool,
    pub resent: bool,
}

/// What an RDS control frame says.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Control {
    /// Packets below `limit` may be sent.
    Grant { msg: MsgRef, limit: u32 },
    /// Packets `first..first + count` are missing: resend them.
    Nack { msg: MsgRef, first: u32, count: u32 },
    /// The message was delivered.
    Done { msg: MsgRef },
}

/// A data frame (`thread`, `prio`, `l4` and `BURST_END` are the caller's).
pub fn encode_data(dst: u32, d: &Data, payload: u32, l4: L4Headers, prio: u8, thread: u16) -> SendSpec {
    debug_assert!(d.size <= SIZE_MASK);
    SendSpec {
        dst,
        kind: PktKind::Data,
        prio,
        payload,
        l4: Some(l4),
        msg: d.msg.slot,
        msg_gen: d.msg.gen,
        flow: d.msg.flow,
        seq: d.index,
        thread,
        flags: 0,
        proto: if d.unscheduled { proto::UNSOLICITED } else { 0 } | if d.resent { proto::RETX } else { 0 },
        aux: d.size & SIZE_MASK,
    }
}

pub fn decode_data(p: &Packet) -> Option<Data> {
    (p.kind == PktKind::Data).then(|| Data {
        msg: MsgRef { slot: p.msg, gen: p.msg_gen, flow: p.flow },
        size: p.aux & SIZE_MASK,
        index: p.seq,
        unscheduled: p.has_proto(proto::UNSOLICITED),
        resent: p.has_proto(proto::RETX),
    })
}

/// A control frame to `dst` (sent by the receiving host on `thread`).
pub fn encode_control(dst: u32, c: &Control, l4: L4Headers, thread: u16) -> SendSpec {
    let (msg, seq, aux) = match *c {
        Control::Grant { msg, limit } => (msg, limit, GRANT << TYPE_SHIFT),
        Control::Nack { msg, first, count } => (msg, first, NACK << TYPE_SHIFT | u64::from(count)),
        Control::Done { msg } => (msg, 0, DONE << TYPE_SHIFT),
    };
    SendSpec {
        dst,
        kind: PktKind::Control,
        prio: CONTROL_PRIO,
        payload: 0,
        l4: Some(l4),
        msg: msg.slot,
        msg_gen: msg.gen,
        flow: msg.flow,
        seq,
        thread,
        flags: flags::BURST_END,
        proto: 0,
        aux,
    }
}

pub fn decode_control(p: &Packet) -> Option<Control> {
    if p.kind != PktKind::Control {
        return None;
    }
    let msg = MsgRef { slot: p.msg, gen: p.msg_gen, flow: p.flow };
    match p.aux >> TYPE_SHIFT {
        GRANT => Some(Control::Grant { msg, limit: p.seq }),
        NACK => Some(Control::Nack { msg, first: p.seq, count: p.aux as u32 }),
        DONE => Some(Control::Done { msg }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(s: &SendSpec, src: u32) -> Packet {
        s.to_packet(src, crate::units::SimTime::ZERO, crate::framing::Framing::default())
    }

    const M: MsgRef = MsgRef { slot: 0xdead_beef, gen: u16::MAX, flow: u32::MAX };

    #[test]
    fn data_round_trips() {
        for (u, r) in [(true, false), (false, true), (true, true), (false, false)] {
            let d = Data { msg: M, size: SIZE_MASK, index: 1_000_000, unscheduled: u, resent: r };
            let s = encode_data(3, &d, 1500, L4Headers::Udp, 2, 5);
            assert_eq!((s.dst, s.prio, s.kind, s.payload, s.thread), (3, 2, PktKind::Data, 1500, 5));
            let p = frame(&s, 0);
            assert_eq!(decode_data(&p), Some(d));
            assert_eq!(decode_control(&p), None);
        }
    }

    #[test]
    fn control_round_trips_at_priority_7() {
        for c in [
            Control::Grant { msg: M, limit: u32::MAX },
            Control::Nack { msg: M, first: 7, count: u32::MAX },
            Control::Nack { msg: MsgRef { slot: 0, gen: 0, flow: 0 }, first: 0, count: 1 },
            Control::Done { msg: M },
        ] {
            let s = encode_control(9, &c, L4Headers::None, 0);
            assert_eq!((s.dst, s.prio, s.kind, s.payload), (9, CONTROL_PRIO, PktKind::Control, 0));
            assert!(s.flags & flags::BURST_END != 0);
            let p = frame(&s, 1);
            assert_eq!(decode_control(&p), Some(c));
            assert_eq!(decode_data(&p), None);
        }
        // Other transports' control frames (type 0) are not RDS frames.
        assert_eq!(decode_control(&Packet { kind: PktKind::Control, ..Default::default() }), None);
    }
}
