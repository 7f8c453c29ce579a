//! The DCQCN layer on one host: a reaction point and a rate limiter per flow, and the
//! NIC's scheduler that picks the next frame (moved here from RoCE's sender, unchanged).
//!
//! - HPCC's NIC pulls one packet per transmit opportunity (`qbb-net-device.cc:95-130`);
//!   here the pacer picks the next frame — from the first flow in round-robin order that
//!   the transport says may send and whose next send time has come — once the line would
//!   be free had the last one gone straight to the wire (its pick + its wire bytes at the
//!   link rate), while fewer than `tx_pipeline_frames` of the host's data frames are
//!   between the pacer and the wire (the host's send path, then the NIC queue). With no
//!   send path that is one frame, picked when the last one has left, as HPCC's; with a
//!   send latency the NIC pipelines: every frame is late by it and the rate holds.
//! - A flow's next send time is when its last frame was picked plus that frame's wire
//!   bytes × 8 / its current rate, rounded up to the picosecond (HPCC `UpdateNextAvail`,
//!   `rdma-hw.cc:591-598`, whose pick is the frame's start on the wire); a rate change
//!   recomputes it with the new rate (`ChangeRate`, `:600-612`). A frame that starts
//!   later than its pick + the send path's shortest delay (the NIC was busy or paused)
//!   moves its flow's pacing to that start, so a held-up flow does not burst to catch up
//!   (and the line's next pick likewise). Every flow starts at line rate.
//! - A flow opens with its message ([`HostLayer::on_message`]) and closes when the
//!   transport reports its sender state gone (`Actions::finished`).
//!
//! Timer ids (the layer's own): 0 the pacing timer, `1 + 3i + k` flow `i`'s α (k = 0),
//! rate-decrease check (1) and rate-increase (2) timers (flow indices are recycled).

use super::rp::{Arm, Change, Rp};
use super::{wire, DcqcnLayerConfig, DcqcnStats};
use crate::layer::{Consumed, HostLayer, LayerOut};
use crate::packet::Packet;
use crate::slab::Slab;
use crate::transport::{Actions, MsgInfo, Protocol};
use crate::units::{BitsPerSec, Duration, SimTime};
use rustc_hash::FxHashMap;

/// The layer's pacing timer.
pub const PACING_TIMER: u32 = 0;
const PER_FLOW: u32 = 3;
const ALPHA: u32 = 0;
const DECREASE: u32 = 1;
const INCREASE: u32 = 2;

fn timer_id(idx: u32, which: u32) -> u32 {
    1 + idx * PER_FLOW + which
}

struct Flow {
    /// The message's (slot, generation) and its id's low 32 bits (the probes' flow).
    key: (u32, u16),
    id: u32,
    rp: Rp,
    next_avail: SimTime,
    /// When the flow's last frame was picked (or, held up, started less the send path's
    /// shortest delay), its wire bytes and sequence number.
    last_start: SimTime,
    last_wire: u64,
    last_seq: u32,
}

/// DCQCN on one host.
pub struct DcqcnHost {
    cfg: DcqcnLayerConfig,
    link_rate: BitsPerSec,
    /// The send path's shortest delay and the data frames the NIC holds between the pacer
    /// and the wire.
    path_min: Duration,
    pipeline: u32,
    flows: Slab<Flow>,
    index: FxHashMap<(u32, u16), u32>,
    /// Live flows in start order (round robin).
    order: Vec<u32>,
    cursor: usize,
    /// This host's paced frames between the pacer and the wire.
    in_nic: u32,
    /// When the line would be free had the last frame gone straight to the wire: the
    /// earliest next pick.
    line_free: SimTime,
    /// A CNP flag on the acknowledgement being handed to the transport: its flow.
    cnp_on_ack: Option<(u32, u16)>,
    /// Something the pacer depends on changed: pick again after the current call.
    wake: bool,
    stats: DcqcnStats,
}

impl DcqcnHost {
    /// A host at `link_rate` with no send path (one frame in the pipeline).
    pub fn new(cfg: DcqcnLayerConfig, link_rate: BitsPerSec) -> DcqcnHost {
        DcqcnHost {
            cfg,
            link_rate,
            path_min: Duration::ZERO,
            pipeline: 1,
            flows: Slab::default(),
            index: FxHashMap::default(),
            order: Vec::new(),
            cursor: 0,
            in_nic: 0,
            line_free: SimTime::ZERO,
            cnp_on_ack: None,
            wake: false,
            stats: DcqcnStats::default(),
        }
    }

    /// The send path's shortest delay and the NIC's transmit pipeline depth.
    pub fn with_tx_path(mut self, path_min: Duration, frames: u32) -> DcqcnHost {
        self.path_min = path_min;
        self.pipeline = frames.max(1);
        self
    }

    pub fn stats(&self) -> &DcqcnStats {
        &self.stats
    }

    /// (rate in bit/s, target in bit/s, α) of the flow sending message (`slot`, `gen`).
    pub fn rate_of(&self, slot: u32, gen: u16) -> Option<(u64, u64, f64)> {
        let f = self.flows.get(*self.index.get(&(slot, gen))?)?;
        Some((f.rp.rate.0, f.rp.target.0, f.rp.alpha))
    }

    /// Flows open (messages whose sender state the transport still holds).
    pub fn live(&self) -> usize {
        self.order.len()
    }

    /// Hands the transport's next frame to the send path if the pipeline has room, the
    /// line is free and a flow may send; otherwise arms the pacing timer for the earliest
    /// time a flow will be allowed (a full pipeline waits for a frame to leave).
    fn pump<P: Protocol>(&mut self, now: SimTime, src: &mut P, out: &mut Actions) {
        while self.in_nic < self.pipeline {
            let n = self.order.len();
            let mut earliest: Option<SimTime> = None;
            let mut picked = false;
            for k in 0..n {
                let pos = (self.cursor + k) % n;
                let idx = self.order[pos];
                let f = self.flows.get(idx).expect("ordered flows are live");
                let Some(allowed) = src.sendable(f.key, f.rp.rate) else {
                    continue;
                };
                let ready = f.next_avail.max(allowed).max(self.line_free);
                if ready > now {
                    earliest = Some(earliest.map_or(ready, |e| e.min(ready)));
                    continue;
                }
                self.cursor = pos + 1;
                let f = self.flows.get_mut(idx).expect("live");
                let p = src.pull(now, f.key, out).expect("a sendable flow has a frame");
                f.last_start = now;
                f.last_wire = p.wire;
                f.last_seq = p.seq;
                f.next_avail = now + f.rp.rate.tx_time(p.wire);
                self.in_nic += 1;
                self.line_free = now + self.link_rate.tx_time(p.wire);
                picked = true;
                break;
            }
            if !picked {
                if let Some(t) = earliest {
                    LayerOut(out).set_timer(PACING_TIMER, t);
                }
                return;
            }
        }
    }

    /// The flow's rate or target changed: counters, probes and its next send time.
    fn moved(&mut self, idx: u32, c: Change, out: &mut LayerOut<'_>) {
        if !c.moved() {
            return;
        }
        let st = &mut self.stats;
        st.rate_decreases += u64::from(c.cut);
        st.min_rate_reached += u64::from(c.floor);
        st.fast_recovery_steps += u64::from(c.fast_recovery);
        st.additive_increases += u64::from(c.additive);
        st.hyper_increases += u64::from(c.hyper);
        let f = self.flows.get_mut(idx).expect("live");
        if f.last_wire > 0 {
            f.next_avail = f.last_start + f.rp.rate.tx_time(f.last_wire);
        }
        if self.cfg.probes {
            out.probe(f.id, "roce_rate_bps", f.rp.rate.0 as f64);
            out.probe(f.id, "roce_target_bps", f.rp.target.0 as f64);
            out.probe(f.id, "roce_alpha", f.rp.alpha);
        }
    }

    fn arm(idx: u32, a: Arm, out: &mut LayerOut<'_>) {
        for (which, at) in [(ALPHA, a.alpha), (DECREASE, a.decrease), (INCREASE, a.increase)] {
            if let Some(t) = at {
                out.set_timer(timer_id(idx, which), t);
            }
        }
    }

    /// A CNP for a live flow: the reaction point reacts.
    fn on_cnp(&mut self, now: SimTime, idx: u32, out: &mut LayerOut<'_>) {
        self.stats.cnps_received += 1;
        let mut a = Arm::default();
        let f = self.flows.get_mut(idx).expect("live");
        let c = f.rp.on_cnp(now, &self.cfg.params, &mut a);
        Self::arm(idx, a, out);
        self.moved(idx, c, out);
    }

    /// The transport's sender state for message `key` is gone: so is the flow.
    fn close(&mut self, key: (u32, u16), out: &mut LayerOut<'_>) {
        let Some(idx) = self.index.remove(&key) else {
            return;
        };
        self.flows.remove(idx);
        if let Some(pos) = self.order.iter().position(|&i| i == idx) {
            self.order.remove(pos);
            if self.cursor > pos {
                self.cursor -= 1;
            }
        }
        for which in [ALPHA, DECREASE, INCREASE] {
            out.cancel_timer(timer_id(idx, which));
        }
    }
}

impl HostLayer for DcqcnHost {
    fn on_message(&mut self, now: SimTime, msg: &MsgInfo) {
        let p = &self.cfg.params;
        let f = Flow {
            key: (msg.slot, msg.gen),
            id: msg.id as u32,
            rp: Rp::new(p.line_rate, p),
            next_avail: now,
            last_start: now,
            last_wire: 0,
            last_seq: u32::MAX,
        };
        let idx = self.flows.insert(f);
        self.index.insert((msg.slot, msg.gen), idx);
        self.order.push(idx);
    }

    fn on_packet(&mut self, now: SimTime, pkt: &Packet, out: &mut LayerOut<'_>) -> Consumed {
        let key = (pkt.msg, pkt.msg_gen);
        if wire::is_cnp_frame(pkt) {
            match self.index.get(&key) {
                Some(&idx) => {
                    self.on_cnp(now, idx, out);
                    self.wake = true;
                }
                None => self.stats.stale_cnps += 1,
            }
            return Consumed::Yes;
        }
        if wire::carries_cnp(pkt) {
            // Taken in after the transport has read the acknowledgement (which may finish
            // the flow: a CNP for a finished flow changes nothing).
            self.cnp_on_ack = Some(key);
        }
        Consumed::No
    }

    fn on_timer(&mut self, now: SimTime, id: u32, out: &mut LayerOut<'_>) {
        if id == PACING_TIMER {
            self.wake = true;
            return;
        }
        let (idx, which) = ((id - 1) / PER_FLOW, (id - 1) % PER_FLOW);
        let Some(f) = self.flows.get_mut(idx) else {
            return;
        };
        let p = &self.cfg.params;
        let mut a = Arm::default();
        let c = match which {
            ALPHA => {
                f.rp.on_alpha_timer(now, p, &mut a);
                Change::default()
            }
            DECREASE => f.rp.on_decrease_timer(now, p, &mut a),
            _ => f.rp.on_increase_timer(now, p, &mut a),
        };
        Self::arm(idx, a, out);
        self.moved(idx, c, out);
        self.wake = true;
    }

    /// A paced frame's last bit left: its byte counter, the pacing of a frame that was
    /// held up, and the next pick.
    fn on_tx_done(&mut self, now: SimTime, pkt: &Packet, out: &mut LayerOut<'_>) {
        self.in_nic -= 1;
        let wire = u64::from(pkt.wire);
        let line = self.link_rate.tx_time(wire).0;
        // Where its pick would have been had it met no wait beyond the send path's shortest.
        let unheld = SimTime((now.0 - line).saturating_sub(self.path_min.0));
        self.line_free = self.line_free.max(unheld + Duration(line));
        if let Some(&idx) = self.index.get(&(pkt.msg, pkt.msg_gen)) {
            let f = self.flows.get_mut(idx).expect("indexed flows are live");
            debug_assert!(pkt.seq != f.last_seq || wire == f.last_wire, "the pacer's wire bytes are the frame's");
            if pkt.seq == f.last_seq && unheld > f.last_start {
                f.last_start = unheld;
                f.next_avail = unheld + f.rp.rate.tx_time(wire);
            }
            let c = f.rp.on_sent(wire, &self.cfg.params);
            self.moved(idx, c, out);
        }
        self.wake = true;
    }

    fn on_actions<P: Protocol>(&mut self, now: SimTime, src: &mut P, out: &mut Actions) {
        if !out.finished.is_empty() {
            let finished = std::mem::take(&mut out.finished);
            for &key in &finished {
                self.close(key, &mut LayerOut(out));
            }
            out.finished = finished;
        }
        if let Some(key) = self.cnp_on_ack.take() {
            if let Some(&idx) = self.index.get(&key) {
                self.on_cnp(now, idx, &mut LayerOut(out));
            }
        }
        if std::mem::take(&mut self.wake) | out.wake {
            self.pump(now, src, out);
        }
    }
}
