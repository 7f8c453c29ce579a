//! Ports, links and switches: serialisation, the wire and the far node's input pipeline
//! as one FIFO (PAUSE frames aside: the far MAC acts on them, `pfc.rs`), output-queued
//! switching with strict priorities (and trimming, in `trimming.rs`), shared-buffer
//! admission, ECN marking, ECMP and spraying, and drops.

use super::network::{Owner, Switch};
use super::Simulation;
use crate::config::{EcmpMode, EcnConfig, NonEct};
use crate::engine::Ev;
use crate::metrics::{DropReason, DropRecord, PortWindow, TraceEvent};
use crate::net::program::{ProgramIo, Verdict};
use crate::packet::{flags, Packet, PktId, PktKind};
use crate::transport::Protocol;
use crate::units::SimTime;

impl Simulation {
    /// Brings a port's sampling window to now before its queue changes: closes the
    /// window if a later one has begun (its row, with the queue's time-average) and
    /// advances the queue's time integral.
    #[inline(always)]
    pub(crate) fn port_window_step(&mut self, port: u32) {
        let now = self.now;
        let p = &mut self.ports[port as usize];
        // Most steps fall inside the current window (three per hop against one window
        // per port every 10 µs): advance the integral inline, roll out of line.
        if p.window.contains(now) {
            p.area.advance(p.queued, now.0);
        } else {
            self.port_window_roll(port);
        }
    }

    /// [`Simulation::port_window_step`] when `now` is past the current window's end.
    #[inline(never)]
    fn port_window_roll(&mut self, port: u32) {
        let window = self.metrics.window;
        let now = self.now;
        let p = &mut self.ports[port as usize];
        let q = p.queued;
        let before = p.window.index;
        if let Some((idx, max, sum)) = p.window.roll(now, window, q) {
            let end = (idx + 1) * window.0;
            let mean = p.area.closed_mean(q, end, window.0);
            self.records.ports.push(PortWindow {
                port,
                window_start: SimTime(idx * window.0),
                max_queue_bytes: max,
                mean_queue_bytes: mean,
                end_queue_bytes: q,
                tx_bytes: sum,
            });
        }
        if p.window.index == before {
            p.area.advance(q, now.0);
        } else {
            p.area.restart(q, p.window.index * window.0, now.0);
        }
    }

    /// Adds `wire` bytes to a port's queue and tracks its maxima.
    #[inline]
    pub(crate) fn port_queue_add(&mut self, port: u32, wire: u64) {
        self.port_window_step(port);
        let p = &mut self.ports[port as usize];
        p.queued += wire;
        p.window.active = true;
        if p.queued > p.window.max {
            p.window.max = p.queued;
        }
        if p.queued > p.max_queue {
            p.max_queue = p.queued;
        }
    }

    /// Starts serialising the next frame if the port is idle and has one.
    #[inline(always)]
    pub(crate) fn kick_port(&mut self, port: u32) {
        // A frame joining a busy port's queue (most of them at a congested port) costs
        // a load and a branch, not a call.
        if !self.ports[port as usize].busy {
            self.kick_idle_port(port);
        }
    }

    /// [`Simulation::kick_port`] on a port that is not serialising a frame.
    fn kick_idle_port(&mut self, port: u32) {
        let p = &self.ports[port as usize];
        match p.owner {
            Owner::Host(h) => {
                if self.pfc.is_some() {
                    if let Some(ctrl) = self.take_mac_ctrl(port) {
                        return self.start_tx(port, ctrl, u32::MAX);
                    }
                }
                let popped = match &self.pfc {
                    None => self.hosts[h as usize].nic.pop(&self.arena),
                    Some(pfc) => {
                        let allowed = pfc.allowed(port, self.now);
                        self.hosts[h as usize].nic.pop_among(allowed, &self.arena)
                    }
                };
                let Some((pkt, thread)) = popped else { return };
                let tp = self.arena.get(pkt).transport();
                self.start_tx(port, pkt, 0);
                let mut acts = self.take_actions();
                let now = self.now;
                self.transport_mut(tp, h).on_tx_dequeue(now, thread, &mut acts);
                self.apply_actions(h, tp, acts);
            }
            Owner::Switch { index, local } => {
                if self.hybrid.is_some() && self.is_voq_uplink(port) {
                    return self.kick_voq_uplink(port);
                }
                let allowed = match &self.pfc {
                    None => 0xff,
                    Some(_) => {
                        if let Some(ctrl) = self.take_mac_ctrl(port) {
                            return self.start_tx(port, ctrl, u32::MAX);
                        }
                        self.pfc.as_ref().expect("PFC on").allowed(port, self.now)
                    }
                };
                let queue = &mut self.queues[port as usize];
                let popped = if allowed == 0xff { queue.pop_highest(&self.arena) } else { queue.pop_highest_among(allowed, &self.arena) };
                let Some(pkt) = popped else { return };
                // The frame behind it starts when this one has been serialised, thousands
                // of events from now: start loading its record so that it waits in cache.
                if let Some(next) = queue.peek_highest() {
                    self.arena.prefetch(next);
                }
                let ingress = self.arena.get(pkt).next_port;
                let program = &mut self.switches[index as usize].program;
                if program.wants_dequeue() {
                    program.on_dequeue(self.now, self.arena.get(pkt));
                }
                if let EcnConfig::Step { at_dequeue: true, .. } | EcnConfig::StepPackets { at_dequeue: true, .. } | EcnConfig::Red { at_dequeue: true, .. } =
                    self.switches[index as usize].cfg.ecn
                {
                    self.maybe_mark(index, local, pkt);
                }
                self.start_tx(port, pkt, ingress);
            }
        }
    }

    /// Puts `pkt` on the wire of `port`: schedules the end of serialisation and the
    /// frame's arrival at the far node's output queue (or application).
    pub(super) fn start_tx(&mut self, port: u32, pkt: PktId, ingress: u32) {
        let now = self.now;
        if self.tracer.is_some() {
            std::hint::cold_path();
            let node = match self.ports[port as usize].owner {
                Owner::Host(h) => h,
                Owner::Switch { index, .. } => self.graph.hosts + index,
            };
            self.trace(TraceEvent::Tx, node, port, pkt);
        }
        let pk = self.arena.get_mut(pkt);
        let p = &mut self.ports[port as usize];
        if let Owner::Host(h) = p.owner {
            if pk.has(flags::NOTIFY_TX_DONE) {
                self.hosts[h as usize].tx_notify = Some(*pk);
            }
        }
        let wire = pk.wire as u64;
        let ser = p.rate.tx_time(wire);
        p.busy = true;
        p.cur_wire = u32::from(pk.wire);
        p.cur_prio = pk.prio();
        p.cur_ingress = ingress;
        p.cur_data = pk.kind == PktKind::Data && !pk.has(flags::TRIMMED);
        let (rate, delay, peer, peer_host, pipe_last) = (p.rate, p.delay, p.peer, p.peer_host(), p.pipe_last);
        self.events.push(now + ser, Ev::PortFree(port));

        // A constant (the default) reads no stream: the port's is looked up only to draw.
        let fec = match &self.link_fec {
            crate::dist::DelayDist::Const { value } => *value,
            d => d.sample(&mut self.port_rng[port as usize]),
        };
        let first = now + delay + fec;
        let last = first + ser;
        // The far MAC takes frames in wire order (FEC jitter cannot reorder them there).
        let at_mac = p.mac_last.max(last);
        p.mac_last = at_mac;
        if pk.kind == PktKind::Pause {
            std::hint::cold_path();
            // A MAC control frame: acted on by the far port's MAC at its last bit, never
            // routed. It does not wait behind the frames ahead of it in the far node's
            // input pipeline or host receive path (those are past the MAC), only behind
            // those still ahead of it on the wire.
            pk.next_port = u32::MAX;
            return self.pause_on_wire(port, pkt, at_mac);
        }
        let (arrive, base) = if let Some(h) = peer_host {
            if self.pfc.as_ref().is_some_and(|f| f.host_rx.as_ref().is_some_and(|r| r.rules.lossless & (1 << pk.prio()) != 0)) {
                let prio = pk.prio();
                self.host_rx_on_wire(h, wire, prio, at_mac);
            }
            let hc = &self.net.host;
            let host = &mut self.hosts[h as usize];
            let ready = pipe_last.max(last + hc.recv_latency.sample(&mut host.rng));
            let cpu = hc.recv_cpu_per_packet.sample(&mut host.rng);
            host.rx_cpu_free = host.rx_cpu_free.max(ready) + cpu;
            (host.rx_cpu_free, last)
        } else {
            let s = peer - self.graph.hosts;
            let sw = &mut self.switches[s as usize];
            let out = choose_hop(self.routes.next_hops(s, pk.dst), self.path_modes[pk.transport() as usize], sw, pk);
            pk.next_port = out;
            let cut = sw.cfg.cut_through && out != u32::MAX && self.ports[out as usize].rate <= rate;
            let base = if cut { first } else { last };
            (pipe_last.max(base + sw.cfg.latency.sample(&mut sw.rng)), base)
        };
        if self.breakdown.is_some() {
            self.breakdown_hop(port, pkt, base, arrive, peer_host.is_some());
        }
        self.pipe_push(port, pkt, arrive);
    }

    /// The latency breakdown's share of a hop starting now: the frame's time queued (or
    /// its NIC departure), on the wire until `base`, and in the far node's pipeline or
    /// receive path until `arrive`. Out of line: only when the breakdown is recorded.
    #[inline(never)]
    fn breakdown_hop(&mut self, port: u32, pkt: PktId, base: SimTime, arrive: SimTime, to_host: bool) {
        let now = self.now;
        let enqueued = self.arena.get(pkt).enqueued;
        let from_host = matches!(self.ports[port as usize].owner, Owner::Host(_));
        let t = self.times(pkt).expect("breakdown on");
        if from_host {
            t.nic_tx = now.0;
        } else {
            t.queue += now.0 - enqueued.0;
        }
        t.wire += base.0 - now.0;
        if to_host {
            t.receive += arrive.0 - base.0;
        } else {
            t.pipeline += arrive.0 - base.0;
        }
    }

    /// Appends `pkt`, reaching the far node at `arrive` (the link's new `pipe_last`), to
    /// `port`'s link, a list threaded through the records on it. The frame ahead of it
    /// keeps `arrive` (in `enqueued`, unused while a frame is on a link: it was read when
    /// the frame left its queue and is set again when it enters the next), so that the
    /// arrival of one frame schedules the next from the record it has just read.
    fn pipe_push(&mut self, port: u32, pkt: PktId, arrive: SimTime) {
        let p = &mut self.ports[port as usize];
        p.pipe_last = arrive;
        match p.pipe.push_back(pkt, &mut self.arena) {
            Some(ahead) => self.arena.get_mut(ahead).enqueued = arrive,
            None => self.events.push(arrive, Ev::LinkHead(port)),
        }
    }

    /// Serialisation of the port's current frame ended.
    pub(crate) fn on_port_free(&mut self, port: u32) {
        let now = self.now;
        let p = &mut self.ports[port as usize];
        p.busy = false;
        let wire = u64::from(p.cur_wire);
        self.counters.hops += 1;
        if p.cur_data {
            self.counters.data_hops += 1;
            self.counters.data_wire_bytes += wire;
        } else {
            self.counters.control_wire_bytes += wire;
        }
        p.tx_bytes += wire;
        self.port_window_step(port);
        let p = &mut self.ports[port as usize];
        p.window.sum += wire;
        p.window.active = true;
        // A MAC control frame (PAUSE) was never queued or counted in the buffer.
        let mac_ctrl = p.cur_ingress == u32::MAX;
        if !mac_ctrl {
            p.queued -= wire;
        }
        match p.owner {
            Owner::Switch { index, local } => {
                if !mac_ctrl {
                    let (ingress, prio) = (p.cur_ingress, p.cur_prio);
                    self.switches[index as usize].buffer.remove(local as usize, ingress as usize, prio as usize, wire);
                    if self.pfc.as_ref().is_some_and(|f| f.rules[index as usize].as_ref().is_some_and(|r| r.lossless & (1 << prio) != 0)) {
                        self.pfc_after_dequeue(index, ingress, prio);
                    }
                }
            }
            Owner::Host(h) => {
                if let Some(pk) = self.hosts[h as usize].tx_notify.take() {
                    if self.hosts[h as usize].up {
                        let mut acts = self.take_actions();
                        self.transport_mut(pk.transport(), h).on_tx_done(now, &pk, &mut acts);
                        self.layer_on_tx_done(h, pk.transport(), &pk, &mut acts);
                        self.apply_actions(h, pk.transport(), acts);
                    }
                }
            }
        }
        self.kick_port(port);
    }

    /// The head of `port`'s link reached the far node.
    pub(crate) fn on_link_head(&mut self, port: u32) {
        let now = self.now;
        let p = &mut self.ports[port as usize];
        let pkt = p.pipe.pop_front(&self.arena).expect("link head event without a frame");
        if let Some(next) = p.pipe.front() {
            self.events.push(self.arena.get(pkt).enqueued, Ev::LinkHead(port));
            // It arrives at least a serialisation time later; load its record meanwhile.
            self.arena.prefetch(next);
        }
        let (up, loss, peer_host, peer, peer_local) = (p.up, p.loss, p.peer_host(), p.peer, p.peer_local);
        if let Some(h) = peer_host {
            self.host_rx_leave(h, pkt);
        }
        if !up {
            std::hint::cold_path();
            return self.drop_packet(pkt, DropReason::LinkDown, peer, port);
        }
        if loss > 0.0 && self.port_rng[port as usize].chance(loss) {
            std::hint::cold_path();
            return self.drop_packet(pkt, DropReason::LinkLoss, peer, port);
        }
        if self.injected_drop(pkt) {
            std::hint::cold_path();
            return self.drop_packet(pkt, DropReason::Injected, peer, port);
        }
        self.arena.get_mut(pkt).enqueued = now;
        self.trace(TraceEvent::Arrive, peer, port, pkt);
        match peer_host {
            Some(h) => self.host_receive(h, pkt),
            None => self.switch_receive(port, peer - self.graph.hosts, peer_local, pkt),
        }
    }

    /// A frame leaves the input pipeline of switch `index` (it came over `in_port`'s link,
    /// whose reverse port is the switch's local port `ingress`).
    fn switch_receive(&mut self, in_port: u32, index: u32, ingress: u32, pkt: PktId) {
        debug_assert_eq!(self.ports[(in_port ^ 1) as usize].owner, Owner::Switch { index, local: ingress });
        let p = self.arena.get(pkt);
        let (out, tp) = (p.next_port, p.transport());
        if p.kind == PktKind::Sfc && self.sfc_intercept(index, out, pkt) {
            return;
        }
        let sw = &mut self.switches[index as usize];
        let node = sw.node;
        // Plain forwarding (no program) has nothing to run, emit or publish.
        let verdict = if sw.program.is_forward() { Verdict::Forward } else { self.run_ingress_program(index, in_port, out, tp, pkt) };
        match verdict {
            Verdict::Forward => {}
            Verdict::Drop => return self.drop_packet(pkt, DropReason::Program, node, out),
            Verdict::Consume => {
                self.counters.packets_consumed += 1;
                // A data frame a program keeps never reaches its application.
                return self.free_undelivered(pkt);
            }
        }
        if self.hybrid.is_some() && self.hybrid_receive(index, pkt, ingress) {
            return;
        }
        if out == u32::MAX {
            return self.drop_packet(pkt, DropReason::Program, node, u32::MAX);
        }
        self.enqueue_at_switch(index, out, pkt, ingress, true);
    }

    /// Switch `index`'s program sees `pkt` (from `in_port`, routed to `out`) leave the
    /// input pipeline; the frames it emits are sent and its probes kept.
    fn run_ingress_program(&mut self, index: u32, in_port: u32, out: u32, tp: u8, pkt: PktId) -> Verdict {
        let sw = &mut self.switches[index as usize];
        let mut io = ProgramIo { now: self.now, switch: index, in_port, out_port: out, emit: &mut self.emit, probes: &mut self.program_probes };
        let verdict = sw.program.on_ingress(&mut io, self.arena.get_mut(pkt));
        if !self.emit.is_empty() {
            // Replies go to the same transport as the frame that caused them.
            self.emit_from_switch(index, tp);
        }
        if !self.program_probes.is_empty() {
            let now = self.now;
            let keep = self.metrics.probes;
            for (host, flow, name, value) in self.program_probes.drain(..) {
                if keep {
                    self.probe_grid.offer(crate::metrics::ProbeRecord { time: now, host, transport: tp, flow, name, value }, &mut self.records.probes);
                }
            }
        }
        verdict
    }

    /// The egress port switch `index` forwards `pkt` on now (`u32::MAX`: no route).
    pub(super) fn next_hop(&mut self, index: u32, pkt: PktId) -> u32 {
        let pk = self.arena.get(pkt);
        let mode = self.path_modes[pk.transport() as usize];
        choose_hop(self.routes.next_hops(index, pk.dst), mode, &mut self.switches[index as usize], pk)
    }

    /// The egress port switch `index` would forward frame `pk` (not yet allocated) on
    /// now (`u32::MAX`: no route).
    pub(super) fn next_hop_of(&mut self, index: u32, pk: &Packet) -> u32 {
        let mode = self.path_modes[pk.transport() as usize];
        choose_hop(self.routes.next_hops(index, pk.dst), mode, &mut self.switches[index as usize], pk)
    }

    /// Puts a frame in an output queue of switch `index`, after the port's queue
    /// discipline and buffer admission unless `admit` is false (frames the switch
    /// generates).
    #[inline(always)]
    pub(super) fn enqueue_at_switch(&mut self, index: u32, out: u32, pkt: PktId, ingress: u32, admit: bool) {
        if admit && self.switches[index as usize].trim.is_some() && !self.trim_admit(index, out, pkt, ingress) {
            return;
        }
        self.place(index, out, pkt, ingress, admit);
    }

    /// Buffer admission (if `admit`), ECN marking at enqueue, and the frame joins its FIFO.
    #[inline]
    pub(super) fn place(&mut self, index: u32, out: u32, pkt: PktId, ingress: u32, admit: bool) {
        let pk = self.arena.get(pkt);
        let (prio, wire) = (pk.prio() as usize, pk.wire as u64);
        let Owner::Switch { local: egress, .. } = self.ports[out as usize].owner else { unreachable!() };
        let lossless = self.pfc.as_ref().is_some_and(|f| f.rules[index as usize].as_ref().is_some_and(|r| r.lossless & (1 << prio) != 0));
        if admit && lossless {
            if !self.pfc_admit(index, ingress, prio as u8, wire) {
                std::hint::cold_path();
                let node = self.switches[index as usize].node;
                return self.drop_packet(pkt, DropReason::Headroom, node, out);
            }
        } else if admit {
            let sw = &self.switches[index as usize];
            let verdict = if sw.buffer.has_pools() { sw.buffer.admit_pools(egress as usize, ingress as usize, prio, wire, true) } else { sw.buffer.admit(egress as usize, prio, wire) };
            if let Err(reason) = verdict {
                std::hint::cold_path();
                let node = sw.node;
                return self.drop_packet(pkt, reason, node, out);
            }
        }
        let sw = &mut self.switches[index as usize];
        if admit && sw.cfg.non_ect == NonEct::Drop && !self.arena.get(pkt).has(flags::ECT) && over_marking(sw, sw.buffer.egress[egress as usize].bytes[prio] + wire, sw.buffer.egress[egress as usize].frames[prio] + 1) {
            std::hint::cold_path();
            // RED/WRED with ECN: a packet that cannot be marked is dropped instead.
            let node = sw.node;
            return self.drop_packet(pkt, DropReason::NonEct, node, out);
        }
        sw.buffer.add(egress as usize, ingress as usize, prio, wire);
        if matches!(sw.cfg.ecn, EcnConfig::Step { at_dequeue: false, .. } | EcnConfig::StepPackets { at_dequeue: false, .. } | EcnConfig::Red { at_dequeue: false, .. }) {
            self.maybe_mark(index, egress, pkt);
        }
        // While queued, `next_port` holds the ingress port (local index) for accounting.
        self.arena.get_mut(pkt).next_port = ingress;
        self.queues[out as usize].push(prio, pkt, &mut self.arena);
        self.port_queue_add(out, wire);
        if lossless {
            self.pfc_after_enqueue(index, ingress, prio as u8);
        }
        if self.sfc.as_ref().is_some_and(|s| s.watches(index, prio)) {
            self.sfc_after_enqueue(index, out, pkt);
        }
        self.kick_port(out);
    }

    /// Sends the frames a switch program emitted, each routed from the switch.
    fn emit_from_switch(&mut self, index: u32, tp: u8) {
        let mut emit = std::mem::take(&mut self.emit);
        let node = self.switches[index as usize].node;
        let cpu_row = self.switches[index as usize].buffer.ingress.len() as u32 - 1;
        for s in emit.drain(..) {
            let hops = self.routes.next_hops(index, s.dst);
            let Some(&out) = hops.first() else { continue };
            let mut p = s.to_packet(node, self.now, self.net.framing);
            p.flags |= flags::FROM_SWITCH;
            p.set_transport(tp);
            let pkt = self.arena.alloc(p);
            self.counters.packets_created += 1;
            self.enqueue_at_switch(index, out, pkt, cpu_row, false);
        }
        self.emit = emit;
    }

    /// Marks `pkt` CE if it is ECN-capable and switch `index`'s queue at its local
    /// egress port `local` is over the marking threshold.
    #[inline]
    fn maybe_mark(&mut self, index: u32, local: u32, pkt: PktId) {
        let pk = self.arena.get(pkt);
        if !pk.has(flags::ECT) {
            return;
        }
        let sw = &mut self.switches[index as usize];
        let e = &sw.buffer.egress[local as usize];
        let (q, frames) = (e.bytes[pk.prio() as usize], e.frames[pk.prio() as usize]);
        if over_marking(sw, q, frames) {
            self.arena.get_mut(pkt).flags |= flags::CE;
        }
    }

    /// Drops a frame, recording where and why.
    pub(crate) fn drop_packet(&mut self, pkt: PktId, reason: DropReason, node: u32, port: u32) {
        self.counters.drops[reason as usize] += 1;
        self.trace(TraceEvent::Drop, node, port, pkt);
        if self.metrics.drop_records {
            let p = self.arena.get(pkt);
            let m = &self.msgs.get(p.msg as usize);
            let msg_id = match m {
                Some(m) if m.live && m.gen == p.msg_gen && p.kind == PktKind::Data => m.rec.id,
                _ => u64::MAX,
            };
            self.records.drops.push(DropRecord {
                time: self.now,
                node,
                port,
                prio: p.prio(),
                reason,
                src: p.src,
                dst: p.dst,
                msg_id,
                seq: p.seq,
                data: p.kind == PktKind::Data,
            });
        }
        self.free_undelivered(pkt);
    }

    /// Frees a frame that will not reach its application, settling its message's frame
    /// count as a drop.
    fn free_undelivered(&mut self, pkt: PktId) {
        let p = self.arena.get(pkt);
        let (data, slot, gen) = (p.kind == PktKind::Data, p.msg, p.msg_gen);
        self.arena.free(pkt);
        if data {
            self.settle_frame(slot, gen, true);
        }
    }
}

/// Whether a queue of `q` bytes in `frames` frames (the arriving frame included) is over
/// switch `sw`'s marking threshold: the step, or RED's probability drawn now.
fn over_marking(sw: &mut Switch, q: u64, frames: u32) -> bool {
    match sw.cfg.ecn {
        EcnConfig::Off => false,
        EcnConfig::Step { threshold, .. } => q >= threshold.0,
        EcnConfig::StepPackets { threshold_packets, .. } => frames >= threshold_packets,
        EcnConfig::Red { min, max, p_max, .. } => {
            if q < min.0 {
                false
            } else if q >= max.0 {
                true
            } else {
                let f = (q - min.0) as f64 / (max.0 - min.0).max(1) as f64;
                sw.rng.chance(f * p_max)
            }
        }
    }
}

/// The egress port switch `sw` forwards `pk` on, among the equal-cost `hops` towards its
/// destination, by the sending transport's path mode (`mode`) or else the switch's ECMP
/// setting; `u32::MAX` if there is none.
#[inline]
fn choose_hop(hops: &[u32], mode: Option<EcmpMode>, sw: &mut Switch, pk: &Packet) -> u32 {
    match hops.len() {
        0 => u32::MAX,
        1 => hops[0],
        n => {
            let i = match mode.unwrap_or(sw.cfg.ecmp) {
                EcmpMode::PerFlow => reduce(ecmp_hash(sw.ecmp_seed, pk.src, pk.dst, pk.flow), n),
                EcmpMode::PerPacket => sw.rng.below(n as u64),
                EcmpMode::RoundRobin => {
                    sw.next_hop_turn = sw.next_hop_turn.wrapping_add(1);
                    u64::from(sw.next_hop_turn) % n as u64
                }
                EcmpMode::Source => u64::from(pk.flow / sw.path_divisor) % n as u64,
            };
            hops[i as usize]
        }
    }
}

/// Maps a uniform 64-bit hash onto `0..n` by multiply-shift (Lemire), which is as
/// uniform as `% n` for small `n` and avoids a 64-bit division per forwarded frame.
#[inline]
fn reduce(hash: u64, n: usize) -> u64 {
    ((hash as u128 * n as u128) >> 64) as u64
}

/// ECMP hash of a flow (a 64-bit mix; stable across platforms and versions).
#[inline]
fn ecmp_hash(seed: u64, src: u32, dst: u32, flow: u32) -> u64 {
    let mut x = seed ^ ((src as u64) << 32 | dst as u64) ^ (flow as u64).rotate_left(17);
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}
