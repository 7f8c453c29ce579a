//! The trimming queue discipline at a switch's output port (NDP, Handley et al. SIGCOMM
//! 2017 §3.1; the reference is htsim's `CompositeQueue`, Broadcom/csg-htsim
//! `sim/compositequeue.cpp`). It runs before the shared buffer's admission and decides
//! what is queued where: a trimmable data frame that finds its FIFO full is cut to its
//! header and queued in the header FIFO, or, by a coin, queued while the newest frame of
//! its FIFO is cut instead; headers over the header FIFO's limit are dropped or returned
//! to their source. The frames' accounting (shared buffer, port queue) stays in the switch
//! path; this file only moves frames and counts trims.

use super::network::Owner;
use super::Simulation;
use crate::config::{HeaderOverflow, QueueLimit, TrimmingConfig};
use crate::metrics::{DropReason, TraceEvent};
use crate::packet::{flags, PktId};

/// A trimming switch's limits, resolved at build time.
#[derive(Copy, Clone, Debug)]
pub(crate) struct TrimRules {
    data: QueueLimit,
    header: QueueLimit,
    header_prio: u8,
    trim_newest_probability: f64,
    overflow: HeaderOverflow,
}

impl TrimRules {
    /// `full_frame_wire`: wire bytes of a full-size frame at the network's MTU (a frame
    /// limit's default header limit counts such frames).
    pub(crate) fn new(cfg: &TrimmingConfig, full_frame_wire: u64) -> TrimRules {
        let twice_data_bytes = match cfg.data_limit {
            QueueLimit::Bytes(b) => crate::units::Bytes(2 * b.0),
            QueueLimit::Frames(f) => crate::units::Bytes(2 * u64::from(f) * full_frame_wire),
        };
        TrimRules {
            data: cfg.data_limit,
            header: cfg.header_limit.unwrap_or(QueueLimit::Bytes(twice_data_bytes)),
            header_prio: cfg.header_prio,
            trim_newest_probability: cfg.trim_newest_probability,
            overflow: cfg.header_overflow,
        }
    }
}

/// Whether a frame of `wire` bytes would take FIFO (`bytes`, `frames`) past `limit`
/// (both counting the frame being serialised).
fn over(limit: QueueLimit, bytes: u64, frames: u32, wire: u64) -> bool {
    match limit {
        QueueLimit::Bytes(b) => bytes + wire > b.0,
        QueueLimit::Frames(f) => frames + 1 > f,
    }
}

impl Simulation {
    /// Bytes and frames in FIFO `prio` of switch port `out` (local index `egress`),
    /// counting the frame being serialised.
    /// (Frames are counted only for a frame limit: counting walks the FIFO.)
    fn fifo_fill(&self, index: u32, out: u32, egress: u32, prio: u8, limit: QueueLimit) -> (u64, u32) {
        let bytes = self.switches[index as usize].buffer.egress[egress as usize].bytes[prio as usize];
        if let QueueLimit::Bytes(_) = limit {
            return (bytes, 0);
        }
        let p = &self.ports[out as usize];
        let on_wire = u32::from(p.busy && p.cur_prio == prio);
        (bytes, self.queues[out as usize].len(prio as usize, &self.arena) + on_wire)
    }

    /// Applies switch `index`'s trimming rules to `pkt`, arriving for port `out`. Returns
    /// whether the frame (now perhaps trimmed, at the header priority) goes on to the
    /// shared buffer's admission; `false`: it was dropped or returned here.
    pub(super) fn trim_admit(&mut self, index: u32, out: u32, pkt: PktId, ingress: u32) -> bool {
        let rules = self.switches[index as usize].trim.expect("a trimming switch");
        let Owner::Switch { local: egress, .. } = self.ports[out as usize].owner else { unreachable!("a switch port") };
        let p = self.arena.get(pkt);
        let (prio, wire) = (p.prio(), u64::from(p.wire));
        let trimmable = p.has(flags::TRIMMABLE) && !p.has(flags::TRIMMED);
        if prio == rules.header_prio {
            return self.admit_header(index, out, egress, pkt, ingress, rules);
        }
        let (bytes, frames) = self.fifo_fill(index, out, egress, prio, rules.data);
        if !over(rules.data, bytes, frames, wire) {
            return true;
        }
        if !trimmable {
            let node = self.switches[index as usize].node;
            self.drop_packet(pkt, DropReason::QueueLimit, node, out);
            return false;
        }
        // compositequeue.cpp:142-213: the coin is drawn only when the FIFO is full.
        let newest = self.queues[out as usize].back(prio as usize).filter(|&q| {
            let q = self.arena.get(q);
            q.has(flags::TRIMMABLE) && !q.has(flags::TRIMMED)
        });
        let trim_newest = newest.is_some() && self.switches[index as usize].rng.chance(rules.trim_newest_probability);
        if !trim_newest {
            self.trim(index, out, pkt, rules.header_prio);
            return self.admit_header(index, out, egress, pkt, ingress, rules);
        }
        let victim = self.queues[out as usize].pop_back(prio as usize, &mut self.arena).expect("the newest frame");
        let (v_wire, v_ingress) = {
            let v = self.arena.get(victim);
            (u64::from(v.wire), v.next_port)
        };
        self.switches[index as usize].buffer.remove(egress as usize, v_ingress as usize, prio as usize, v_wire);
        self.port_window_step(out);
        self.ports[out as usize].queued -= v_wire;
        self.trim(index, out, victim, rules.header_prio);
        if self.admit_header(index, out, egress, victim, v_ingress, rules) {
            self.place(index, out, victim, v_ingress, true);
        }
        true
    }

    /// A header (or any frame at the header priority) against the header FIFO's limit:
    /// `true` if it may be queued; otherwise it is dropped or returned to its source.
    fn admit_header(&mut self, index: u32, out: u32, egress: u32, pkt: PktId, ingress: u32, rules: TrimRules) -> bool {
        let wire = u64::from(self.arena.get(pkt).wire);
        let (bytes, frames) = self.fifo_fill(index, out, egress, rules.header_prio, rules.header);
        if !over(rules.header, bytes, frames, wire) {
            return true;
        }
        let p = self.arena.get(pkt);
        let returnable = rules.overflow == HeaderOverflow::ReturnToSender && p.has(flags::TRIMMED) && !p.has(flags::RETURNED);
        if returnable {
            self.return_to_sender(index, pkt, ingress);
        } else {
            let node = self.switches[index as usize].node;
            self.drop_packet(pkt, DropReason::QueueLimit, node, out);
        }
        false
    }

    /// Cuts `pkt`'s payload: it keeps its headers and every field, moves to the header
    /// priority, and is flagged `TRIMMED` (compositequeue.cpp `strip_payload`).
    fn trim(&mut self, index: u32, out: u32, pkt: PktId, header_prio: u8) {
        let framing = self.net.framing;
        let p = self.arena.get_mut(pkt);
        p.wire = framing.trimmed_wire(u64::from(p.wire), u64::from(p.payload)) as u16;
        p.payload = 0;
        p.flags |= flags::TRIMMED;
        p.prio_transport = (p.prio_transport & !7) | header_prio;
        self.counters.trims += 1;
        self.ports[out as usize].trims += 1;
        let node = self.switches[index as usize].node;
        self.trace(TraceEvent::Trim, node, out, pkt);
    }

    /// Sends a trimmed header back towards its source from switch `index` (htsim's
    /// `bounce()`): source and destination swap, and it is flagged so it is never
    /// returned twice.
    fn return_to_sender(&mut self, index: u32, pkt: PktId, ingress: u32) {
        let p = self.arena.get_mut(pkt);
        std::mem::swap(&mut p.src, &mut p.dst);
        p.flags |= flags::RETURNED;
        self.counters.headers_returned += 1;
        let node = self.switches[index as usize].node;
        let back = self.next_hop(index, pkt);
        self.trace(TraceEvent::Return, node, back, pkt);
        if back == u32::MAX {
            return self.drop_packet(pkt, DropReason::QueueLimit, node, u32::MAX);
        }
        self.enqueue_at_switch(index, back, pkt, ingress, true);
    }
}
