//! The receiving side: in-order delivery with go-back-N or selective repeat, cumulative
//! ACKs every `ack_every_packets`, NACKs on gaps, and DCQCN's notification point.
//!
//! - In order (PSN = expected): delivered; an ACK when the expected PSN passes a multiple
//!   of `ack_every_packets` and always for the message's last packet (HPCC
//!   `ReceiverCheckSeq`, `rdma-hw.cc:453-464`).
//! - A gap (PSN > expected): go-back-N drops the packet, selective repeat keeps it; either
//!   way a NACK names the expected PSN, once per expected PSN, or again after
//!   `nack_interval` (`rdma-hw.cc:465-475`). With selective repeat, a resend that fills a
//!   gap while later packets are held NACKs the next gap at once.
//! - A duplicate (PSN below expected, or a message already delivered) is answered with
//!   an ACK of the expected PSN, so a lost ACK is repaired after the sender's timeout
//!   (HPCC answers nothing, `:476-479`, and has no timeout).
//! - Notification point (paper §3.1): a marked (CE) data packet makes a CNP for its flow
//!   unless one went less than `cnp_interval` ago (0: every marked packet). With
//!   `cnp_on_ack` the CNP is a flag on the ACK or NACK the marked packet triggers (HPCC,
//!   `rdma-hw.cc:321-322`), and a marked packet that triggers neither notifies nothing.

use super::wire::{self, Frame, MsgRef};
use super::{Ctx, RoceStats};
use crate::transport::Actions;
use crate::units::SimTime;
use rustc_hash::FxHashMap;

/// The receiver's packets ride on thread 0's NIC queue.
const CONTROL_THREAD: u16 = 0;

struct RxFlow {
    gen: u16,
    msg: MsgRef,
    size: u64,
    n_pkts: u32,
    /// The next PSN in order: every packet below it has been delivered.
    expected: u32,
    done: bool,
    last_cnp: Option<SimTime>,
    /// The PSN last NACKed and when.
    nack: Option<(u32, SimTime)>,
    /// Selective repeat: packets held above `expected` (one bit each), and the highest
    /// PSN seen + 1.
    held: Vec<u64>,
    seen: u32,
}

impl RxFlow {
    fn has(&self, i: u32) -> bool {
        self.held.get((i / 64) as usize).is_some_and(|w| w >> (i % 64) & 1 == 1)
    }
}

pub(super) struct Receiver {
    /// Per engine message slot: the message using it last (an entry stays after delivery
    /// so that duplicates are answered, until the slot's next message replaces it).
    rx: FxHashMap<u32, RxFlow>,
}

/// Payload bytes of packet `psn` of a `size`-byte message cut at `max_payload`.
pub(super) fn payload_of(size: u64, psn: u32, max_payload: u64) -> u64 {
    size.saturating_sub(u64::from(psn) * max_payload).min(max_payload)
}

/// Packets of a `size`-byte message (an empty message takes one).
pub(super) fn packets_of(size: u64, max_payload: u64) -> u32 {
    size.div_ceil(max_payload).max(1) as u32
}

impl Receiver {
    pub fn new() -> Receiver {
        Receiver { rx: FxHashMap::default() }
    }

    fn send(ctx: &Ctx, dst: u32, f: Frame, out: &mut Actions) {
        out.sends.push(wire::encode(dst, &f, 0, &ctx.stamp, CONTROL_THREAD));
    }

    /// A data packet arrived (`ce`: marked by a switch).
    #[allow(clippy::too_many_arguments)]
    pub fn on_data(&mut self, now: SimTime, ctx: &Ctx, src: u32, msg: MsgRef, size: u64, psn: u32, ce: bool, st: &mut RoceStats, out: &mut Actions) {
        let s = &ctx.settings;
        let mp = ctx.max_payload;
        let fresh = || RxFlow {
            gen: msg.gen,
            msg,
            size,
            n_pkts: packets_of(size, mp),
            expected: 0,
            done: false,
            last_cnp: None,
            nack: None,
            held: Vec::new(),
            seen: 0,
        };
        let f = self.rx.entry(msg.slot).or_insert_with(fresh);
        if f.gen != msg.gen {
            // Generations grow (wrapping): a newer one is the slot's next message, an
            // older one a late copy of a message delivered long ago.
            if (msg.gen.wrapping_sub(f.gen) as i16) < 0 {
                st.duplicates += 1;
                Self::send(ctx, src, Frame::Ack { msg, next: packets_of(size, mp), cnp: false }, out);
                return;
            }
            *f = fresh();
        }
        // Notification point.
        let mut piggy = false;
        if ce {
            st.marked_packets += 1;
            let d = &s.dcqcn;
            if d.cnp_on_ack {
                piggy = true;
            } else if d.cnp_interval.0 == 0 || f.last_cnp.is_none_or(|t| now >= t + d.cnp_interval) {
                f.last_cnp = Some(now);
                st.cnps_sent += 1;
                Self::send(ctx, src, Frame::Cnp { msg, psn }, out);
            }
        }
        let reply = if f.done || psn < f.expected || (psn > f.expected && f.has(psn)) {
            st.duplicates += 1;
            Some(Frame::Ack { msg, next: if f.done { f.n_pkts } else { f.expected }, cnp: piggy })
        } else if psn == f.expected {
            Self::accept(f, ctx, now, piggy, st, out)
        } else {
            st.out_of_order += 1;
            if ctx.settings.loss_recovery == super::LossRecovery::SelectiveRepeat {
                let w = (psn / 64) as usize;
                if f.held.len() <= w {
                    f.held.resize(w + 1, 0);
                }
                f.held[w] |= 1 << (psn % 64);
                f.seen = f.seen.max(psn + 1);
            }
            Self::nack(f, ctx, now, piggy)
        };
        if let Some(r) = reply {
            match r {
                Frame::Nack { .. } => st.nacks_sent += 1,
                _ => st.acks_sent += 1,
            }
            if piggy {
                st.cnps_sent += 1;
            }
            Self::send(ctx, src, r, out);
        }
    }

    /// The NACK of a gap at `f.expected`, unless that PSN was NACKed less than
    /// `nack_interval` ago.
    fn nack(f: &mut RxFlow, ctx: &Ctx, now: SimTime, cnp: bool) -> Option<Frame> {
        let due = match f.nack {
            Some((p, t)) => p != f.expected || now >= t + ctx.settings.nack_interval,
            None => true,
        };
        due.then(|| {
            f.nack = Some((f.expected, now));
            Frame::Nack { msg: f.msg, next: f.expected, cnp }
        })
    }

    /// The expected packet arrived: deliver it and any held packets behind it.
    fn accept(f: &mut RxFlow, ctx: &Ctx, now: SimTime, cnp: bool, st: &mut RoceStats, out: &mut Actions) -> Option<Frame> {
        let before = f.expected;
        loop {
            out.goodput_bytes += payload_of(f.size, f.expected, ctx.max_payload);
            let i = f.expected;
            if let Some(w) = f.held.get_mut((i / 64) as usize) {
                *w &= !(1 << (i % 64));
            }
            f.expected += 1;
            if !f.has(f.expected) {
                break;
            }
        }
        if f.expected >= f.n_pkts {
            f.done = true;
            f.held = Vec::new();
            st.messages_received += 1;
            out.delivered.push((f.msg.slot, f.gen));
            return Some(Frame::Ack { msg: f.msg, next: f.n_pkts, cnp });
        }
        if f.seen > f.expected {
            return Self::nack(f, ctx, now, cnp);
        }
        let n = ctx.settings.ack_every_packets;
        (n > 0 && before / n != f.expected / n).then_some(Frame::Ack { msg: f.msg, next: f.expected, cnp })
    }
}
