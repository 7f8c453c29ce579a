//! How Homa's packets ride in the simulator's 64-byte [`Packet`].
//!
//! | packet | kind / 802.1Q prio | fields |
//! |--------|--------------------|--------|
//! | DATA (unscheduled: the simulator's REQUEST and UNSCHED_DATA) | `Data` / the cut-off level's | `msg`/`msg_gen` = message slot/generation; `flow` = message id (low 32 bits; `DropNth`'s flow); `seq` = packet index ([`super::layout`]); `aux` bits 0-47 = message size; proto `UNSOLICITED`, `RETX` on a resend |
//! | DATA (scheduled, SCHED_DATA) | `Data` / the granting level's | as above, without `UNSOLICITED` |
//! | GRANT | `Control` / 7 | receiver → sender; `seq` = packets below it may be sent; `aux` bits 48-55 = the level to send them at, bits 56-63 = 1 |
//! | RESEND | `Control` / 7 | receiver → sender; `seq` = first missing packet, `aux` bits 0-39 = message size (so a sender that has forgotten the message can resend it), bits 40-47 = how many (at most 255), bits 48-55 = the level of scheduled packets, bits 56-63 = 2 |
//! | BUSY | `Control` / 7 | sender → receiver: the message waits behind shorter ones; bits 56-63 = 3 |
//!
//! Homa's level 0 is its highest priority, 802.1Q's highest is 7: level `l` rides at
//! 802.1Q priority `7 − l` ([`super::config::prio_of`]). Control packets always go at
//! level 0 (`HomaTransport.cc:2742`), carry no payload and are their own hand-over unit.

use super::config::prio_of;
use crate::framing::L4Headers;
use crate::packet::{flags, proto, Packet, PktKind};
use crate::transport::SendSpec;

const SIZE_MASK: u64 = (1 << 48) - 1;
const TYPE_SHIFT: u32 = 56;
const LEVEL_SHIFT: u32 = 48;
/// Packets one RESEND names at most.
pub const RESEND_MAX: u32 = 255;
/// Largest message size a RESEND carries (1 TiB, the largest a size distribution has).
const RESEND_SIZE_MASK: u64 = (1 << 40) - 1;
const COUNT_SHIFT: u32 = 40;
const GRANT: u64 = 1;
const RESEND: u64 = 2;
const BUSY: u64 = 3;

pub use crate::transport::MsgRef;

/// A data packet's fields.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Data {
    pub msg: MsgRef,
    pub size: u64,
    pub index: u32,
    pub unscheduled: bool,
    pub resent: bool,
}

/// Homa's control packets.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Control {
    /// Packets below `limit` may be sent, at `level`.
    Grant { msg: MsgRef, limit: u32, level: u8 },
    /// Packets `first..first + count` of a message of `size` bytes are missing; scheduled
    /// ones go again at `level`.
    Resend { msg: MsgRef, first: u32, count: u32, size: u64, level: u8 },
    /// The sender has the message but sends shorter ones first.
    Busy { msg: MsgRef },
}

/// A data frame of `payload` bytes with headers `l4` at `level`.
pub fn encode_data(dst: u32, d: &Data, payload: u64, l4: L4Headers, level: u8) -> SendSpec {
    debug_assert!(d.size <= SIZE_MASK);
    SendSpec {
        dst,
        kind: PktKind::Data,
        prio: prio_of(level),
        payload: payload as u32,
        l4: Some(l4),
        msg: d.msg.slot,
        msg_gen: d.msg.gen,
        flow: d.msg.flow,
        seq: d.index,
        thread: 0,
        flags: flags::BURST_END,
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

/// A control frame to `dst` with headers `l4`.
pub fn encode_control(dst: u32, c: &Control, l4: L4Headers) -> SendSpec {
    let (msg, seq, aux) = match *c {
        Control::Grant { msg, limit, level } => (msg, limit, GRANT << TYPE_SHIFT | u64::from(level) << LEVEL_SHIFT),
        Control::Resend { msg, first, count, size, level } => {
            debug_assert!(count <= RESEND_MAX && size <= RESEND_SIZE_MASK);
            (msg, first, RESEND << TYPE_SHIFT | u64::from(level) << LEVEL_SHIFT | u64::from(count) << COUNT_SHIFT | size & RESEND_SIZE_MASK)
        }
        Control::Busy { msg } => (msg, 0, BUSY << TYPE_SHIFT),
    };
    SendSpec {
        dst,
        kind: PktKind::Control,
        prio: prio_of(0),
        payload: 0,
        l4: Some(l4),
        msg: msg.slot,
        msg_gen: msg.gen,
        flow: msg.flow,
        seq,
        thread: 0,
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
        GRANT => Some(Control::Grant { msg, limit: p.seq, level: (p.aux >> LEVEL_SHIFT) as u8 }),
        RESEND => Some(Control::Resend {
            msg,
            first: p.seq,
            count: (p.aux >> COUNT_SHIFT) as u32 & RESEND_MAX,
            size: p.aux & RESEND_SIZE_MASK,
            level: (p.aux >> LEVEL_SHIFT) as u8,
        }),
        BUSY => Some(Control::Busy { msg }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const M: MsgRef = MsgRef { slot: 0xdead_beef, gen: u16::MAX, flow: u32::MAX };

    fn frame(s: &SendSpec) -> Packet {
        s.to_packet(0, crate::units::SimTime::ZERO, crate::framing::Framing::default())
    }

    #[test]
    fn data_round_trips_at_its_level() {
        for (u, r, level) in [(true, false, 0), (false, true, 7), (true, true, 3), (false, false, 6)] {
            let d = Data { msg: M, size: SIZE_MASK, index: 1_000_000, unscheduled: u, resent: r };
            let s = encode_data(3, &d, 1442, L4Headers::Udp, level);
            assert_eq!((s.dst, s.prio, s.kind, s.payload), (3, 7 - level, PktKind::Data, 1442));
            assert_eq!(decode_data(&frame(&s)), Some(d));
            assert_eq!(decode_control(&frame(&s)), None);
        }
    }

    #[test]
    fn control_round_trips_at_the_highest_priority() {
        for c in [
            Control::Grant { msg: M, limit: u32::MAX, level: 7 },
            Control::Grant { msg: M, limit: 3, level: 0 },
            Control::Resend { msg: M, first: 9, count: RESEND_MAX, size: RESEND_SIZE_MASK, level: 5 },
            Control::Resend { msg: M, first: 0, count: 1, size: 1, level: 0 },
            Control::Busy { msg: M },
        ] {
            let s = encode_control(1, &c, L4Headers::None);
            assert_eq!((s.prio, s.kind, s.payload), (7, PktKind::Control, 0));
            assert_eq!(decode_control(&frame(&s)), Some(c));
            assert_eq!(decode_data(&frame(&s)), None);
        }
        assert_eq!(decode_control(&Packet { kind: PktKind::Control, ..Default::default() }), None);
    }
}
