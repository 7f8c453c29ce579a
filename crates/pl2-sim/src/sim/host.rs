//! Hosts: messages entering application threads, transport calls and their actions, the
//! send path (one FIFO delay line), the NIC queues and the receive side.

use super::Simulation;
use crate::engine::{Ev, TimerSlot};
use crate::layer::{Consumed, LAYER_TIMER};
use crate::metrics::{DropReason, GoodputWindow};
use crate::packet::{flags, PktId, PktKind};
use crate::transport::{Actions, Protocol};
use crate::units::SimTime;
use crate::workload::AppTag;
use super::spec::StreamNext;

impl Simulation {
    /// Queues message `slot` for a thread of its source host (`u16::MAX`: any thread).
    pub(crate) fn enqueue_message(&mut self, slot: u32, thread: u16) {
        let h = self.msgs[slot as usize].rec.src;
        let host = &mut self.hosts[h as usize];
        if thread == u16::MAX {
            host.shared_queue.push_back(slot);
        } else {
            host.thread_queue[thread as usize].push_back(slot);
        }
        self.dispatch_host(h);
    }

    /// Gives waiting messages to idle threads, lowest thread first.
    pub(crate) fn dispatch_host(&mut self, h: u32) {
        if !self.hosts[h as usize].up {
            return;
        }
        for t in 0..self.hosts[h as usize].thread_busy.len() {
            let host = &mut self.hosts[h as usize];
            if host.thread_busy[t] {
                continue;
            }
            let next = host.thread_queue[t].pop_front().or_else(|| host.shared_queue.pop_front());
            if let Some(slot) = next {
                host.thread_busy[t] = true;
                self.msgs[slot as usize].rec.thread = t as u16;
                let cost = self.net.host.send_cpu_per_message.sample(&mut host.rng);
                let clock = host.cpu_clock(PktKind::Data, t as u16);
                *clock = (*clock).max(self.now) + cost;
                let info = self.msg_info(slot);
                let tp = self.msgs[slot as usize].transport;
                let mut acts = self.take_actions();
                let now = self.now;
                self.layer_on_message(h, tp, &info);
                self.transport_mut(tp, h).on_message(now, &info, &mut acts);
                self.apply_actions(h, tp, acts);
            }
        }
    }

    /// An empty action buffer for a transport call, from the pool (`apply_actions` gives
    /// it back).
    #[inline]
    pub(crate) fn take_actions(&mut self) -> Box<Actions> {
        self.actions.pop().unwrap_or_default()
    }

    /// Empties an action buffer and returns it to the pool.
    #[inline(always)]
    fn recycle_actions(&mut self, mut acts: Box<Actions>) {
        acts.clear();
        self.actions.push(acts);
    }

    /// Carries out what transport `tp` of host `h` asked for, then returns the buffer for
    /// reuse. Inlined for its common case, a batch with nothing for the engine and no
    /// host layer to show it to (a transport told of a dequeued frame, say): the buffer
    /// goes straight back without a call.
    #[inline(always)]
    pub(crate) fn apply_actions(&mut self, h: u32, tp: u8, acts: Box<Actions>) {
        if self.layers.is_empty() && acts.is_idle() {
            self.recycle_actions(acts);
            return;
        }
        self.apply_some_actions(h, tp, acts);
    }

    /// [`Simulation::apply_actions`] past its common case.
    fn apply_some_actions(&mut self, h: u32, tp: u8, mut acts: Box<Actions>) {
        self.layer_on_actions(h, tp, &mut acts);
        if acts.is_idle() {
            self.recycle_actions(acts);
            return;
        }
        let now = self.now;
        if !acts.sends.is_empty() {
            self.hand_over(h, tp, &acts);
        }
        for &(id, at) in &acts.timers {
            // A host layer's timers have an id space of their own.
            let host = &mut self.hosts[h as usize];
            let timers = if id & LAYER_TIMER != 0 { &mut host.layer_timers[tp as usize] } else { &mut host.timers[tp as usize] };
            let id_us = (id & !LAYER_TIMER) as usize;
            if id_us >= timers.len() {
                std::hint::cold_path();
                timers.resize(id_us + 1, u32::MAX);
            }
            if timers[id_us] == u32::MAX {
                std::hint::cold_path();
                timers[id_us] = self.timers.len() as u32;
                self.timers.push((TimerSlot::default(), h, tp, id));
            }
            let g = timers[id_us];
            let slot = &mut self.timers[g as usize].0;
            match at {
                Some(t) => {
                    if let Some(push) = slot.arm(t.max(now)) {
                        self.events.push(push, Ev::Timer(g));
                    }
                }
                None => slot.cancel(),
            }
        }
        if acts.goodput_bytes > 0 {
            let window = self.metrics.window;
            let g = &mut self.hosts[h as usize].goodput;
            if let Some((idx, _, sum)) = g.roll(now, window, 0) {
                std::hint::cold_path();
                self.records.goodput.push(GoodputWindow { host: h, window_start: SimTime(idx * window.0), payload_bytes: sum });
            }
            g.sum += acts.goodput_bytes;
            g.active = true;
        }
        if self.metrics.probes {
            for &(flow, name, value) in &acts.probes {
                self.probe_grid.offer(crate::metrics::ProbeRecord { time: now, host: h, transport: tp, flow, name, value }, &mut self.records.probes);
            }
        }
        for &(slot, gen) in &acts.delivered {
            self.finish_message(slot, gen);
        }
        if acts.released.is_empty() {
            self.recycle_actions(acts);
            return;
        }
        // Releasing a thread may start its next message, which calls the transport again:
        // hand the buffer back first (its released threads swapped into a spare list).
        let mut released = std::mem::take(&mut self.released);
        std::mem::swap(&mut released, &mut acts.released);
        self.recycle_actions(acts);
        for &t in &released {
            self.release_thread(h, t);
        }
        released.clear();
        self.released = released;
    }

    fn release_thread(&mut self, h: u32, t: u16) {
        self.hosts[h as usize].thread_busy[t as usize] = false;
        match self.persistent.iter().position(|p| p.host == h && p.thread == t) {
            Some(i) if self.persistent[i].next == StreamNext::Release => self.start_stream_message(i),
            // A stream paced by delivery starts its next message when the last one is
            // delivered (`finish_message`); that message may be waiting for this thread.
            _ => self.dispatch_host(h),
        }
    }

    /// Starts the next message of persistent stream `i` on its thread.
    #[inline(never)]
    pub(crate) fn start_stream_message(&mut self, i: usize) {
        let p = self.persistent[i].clone();
        let slot = self.new_message(p.host, p.dst, p.size, p.thread, p.prio, p.transport, p.workload);
        if p.next == StreamNext::Delivery {
            self.msgs[slot as usize].tag = AppTag::Stream(i as u32);
        }
        self.enqueue_message(slot, p.thread);
    }

    /// Passes the frames in `acts.sends` into the host's send path. Frames up to and
    /// including one marked `BURST_END` form a hand-over unit that shares one latency
    /// sample and leaves the send path together. With `host.offload` the units are the
    /// offload's instead (consecutive frames of one flow and kind, up to its `max_bytes`
    /// of payload), each leaving once the shaper has timed its whole length.
    #[inline(always)]
    fn hand_over(&mut self, h: u32, tp: u8, acts: &Actions) {
        if self.send_path_free {
            self.hand_over_free(h, tp, acts);
        } else {
            self.hand_over_timed(h, tp, acts);
        }
    }

    /// [`Simulation::hand_over`] through a send path that takes time: out of line, so
    /// that the free path's code stays compact.
    #[inline(never)]
    fn hand_over_timed(&mut self, h: u32, tp: u8, acts: &Actions) {
        let now = self.now;
        let framing = self.net.framing;
        let hc = &self.net.host;
        let offload = hc.offload;
        let host = &mut self.hosts[h as usize];
        if !host.up {
            return;
        }
        let was_empty = host.txline.is_empty();
        let mut group_ready = now;
        let mut group_start = true;
        let (mut unit_payload, mut unit_wire) = (0u64, 0u64);
        for (i, s) in acts.sends.iter().enumerate() {
            let mut cpu = hc.send_cpu_per_packet.sample(&mut host.rng);
            if group_start {
                cpu += hc.send_cpu_per_burst.sample(&mut host.rng);
                group_start = false;
            }
            if s.kind == PktKind::Control {
                cpu += hc.cpu_per_control.sample(&mut host.rng);
            }
            let clock = host.cpu_clock(s.kind, s.thread);
            *clock = (*clock).max(now) + cpu;
            group_ready = group_ready.max(*clock);
            let mut p = s.to_packet(h, now, framing);
            p.set_transport(tp);
            unit_payload += u64::from(s.payload);
            unit_wire += u64::from(p.wire);
            let id = new_frame(&mut self.arena, &mut self.counters.packets_created, &mut self.breakdown, p);
            self.group.push(id);
            let unit_end = match offload {
                None => s.flags & flags::BURST_END != 0,
                Some(o) => acts.sends.get(i + 1).is_none_or(|n| {
                    n.flow != s.flow || n.kind != s.kind || n.dst != s.dst || unit_payload + u64::from(n.payload) > o.max_bytes.0
                }),
            };
            if unit_end {
                let ready = group_ready + hc.send_latency.sample(&mut host.rng);
                let exit = match offload {
                    None => host.txline_last.max(ready),
                    // netem's rate: a unit's time to send is the later of now and the
                    // previous unit's, plus its whole length at the rate.
                    Some(o) => host.txline_last.max(ready) + o.rate.tx_time(unit_wire),
                };
                host.txline_last = exit;
                host.txline.extend(self.group.drain(..).map(|p| (exit, p)));
                group_ready = now;
                group_start = true;
                (unit_payload, unit_wire) = (0, 0);
            }
        }
        if !self.group.is_empty() {
            let exit = host.txline_last.max(group_ready + hc.send_latency.sample(&mut host.rng));
            host.txline_last = exit;
            host.txline.extend(self.group.drain(..).map(|p| (exit, p)));
        }
        if was_empty {
            match host.txline.front() {
                // Nothing delays the hand-over: skip the event (the common case with
                // zero send latency, e.g. refilling the transmit ring).
                Some(&(t, _)) if t <= now => self.on_host_tx(h),
                Some(&(t, _)) => self.events.push(t, Ev::HostTx(h)),
                None => {}
            }
        }
    }

    /// [`Simulation::hand_over`] when the send path costs nothing: every unit's exit time
    /// is now, so the delay line would stay empty and pass each frame on at once; the
    /// frames go into the NIC queues here instead, in the same order, and the port is
    /// kicked once, as `on_host_tx` does.
    fn hand_over_free(&mut self, h: u32, tp: u8, acts: &Actions) {
        if !self.hosts[h as usize].up {
            return;
        }
        debug_assert!(self.hosts[h as usize].txline.is_empty(), "a free send path never holds frames");
        let now = self.now;
        let framing = self.net.framing;
        let port = self.hosts[h as usize].port;
        for s in &acts.sends {
            let mut p = s.to_packet(h, now, framing);
            p.set_transport(tp);
            let (prio, thread, wire) = (p.prio(), p.thread, p.wire as u64);
            let id = new_frame(&mut self.arena, &mut self.counters.packets_created, &mut self.breakdown, p);
            if let Some(t) = self.times(id) {
                t.nic_enq = now.0;
            }
            self.hosts[h as usize].nic.push(id, prio, thread, &mut self.arena);
            self.port_queue_add(port, wire);
        }
        self.kick_port(port);
    }

    /// The head of host `h`'s send path reached the NIC queues.
    pub(crate) fn on_host_tx(&mut self, h: u32) {
        let now = self.now;
        let port = self.hosts[h as usize].port;
        while let Some(&(t, pkt)) = self.hosts[h as usize].txline.front() {
            if t > now {
                self.events.push(t, Ev::HostTx(h));
                break;
            }
            self.hosts[h as usize].txline.pop_front();
            let p = self.arena.get_mut(pkt);
            p.enqueued = now;
            let (prio, thread, wire) = (p.prio(), p.thread, p.wire as u64);
            self.hosts[h as usize].nic.push(pkt, prio, thread, &mut self.arena);
            if let Some(t) = self.times(pkt) {
                t.nic_enq = now.0;
            }
            self.port_queue_add(port, wire);
        }
        self.kick_port(port);
    }

    /// A frame reached host `h`'s application side.
    pub(crate) fn host_receive(&mut self, h: u32, pkt: PktId) {
        if !self.hosts[h as usize].up {
            std::hint::cold_path();
            self.drop_packet(pkt, DropReason::HostDown, self.graph.hosts.min(h), u32::MAX);
            return;
        }
        self.counters.packets_delivered += 1;
        let p = *self.arena.get(pkt);
        if p.kind == PktKind::Sfc {
            self.sfc_delivered();
        }
        if let Some(t) = self.times(pkt).copied() {
            self.critical = Some((p.msg, p.msg_gen, p.created, t));
        }
        self.arena.free(pkt);
        if p.kind == PktKind::Control {
            // A scheduling control frame for one of this host's threads (PL2's GRT): its
            // thread pays for handling it before it can send again.
            let host = &mut self.hosts[h as usize];
            let cost = self.net.host.cpu_per_control.sample(&mut host.rng);
            let clock = host.cpu_clock(PktKind::Control, p.thread);
            *clock = (*clock).max(self.now) + cost;
        }
        let port = &self.ports[self.hosts[h as usize].port as usize];
        let view = crate::transport::HostView { queued_bytes: port.queued, rate: port.rate };
        let mut acts = self.take_actions();
        let now = self.now;
        if self.layer_on_packet(h, p.transport(), &p, &mut acts) == Consumed::No {
            self.transport_mut(p.transport(), h).on_packet(now, &p, &view, &mut acts);
        }
        self.apply_actions(h, p.transport(), acts);
        self.critical = None;
        if p.kind == PktKind::Data {
            // A trimmed frame's payload never arrived.
            self.settle_frame(p.msg, p.msg_gen, p.has(crate::packet::flags::TRIMMED));
        }
    }

    /// A transport's (or its host layer's) timer fired.
    #[inline(never)]
    pub(crate) fn on_timer(&mut self, g: u32) {
        use crate::engine::TimerFire;
        let (slot, h, tp, id) = &mut self.timers[g as usize];
        let (h, tp, id) = (*h, *tp, *id);
        match slot.on_pop(self.now) {
            TimerFire::Stale => {}
            TimerFire::Requeue(t) => self.events.push(t, Ev::Timer(g)),
            TimerFire::Fire => {
                if !self.hosts[h as usize].up {
                    return;
                }
                let mut acts = self.take_actions();
                let now = self.now;
                if id & LAYER_TIMER != 0 {
                    self.layer_on_timer(h, tp, id & !LAYER_TIMER, &mut acts);
                } else {
                    self.transport_mut(tp, h).on_timer(now, id, &mut acts);
                }
                self.apply_actions(h, tp, acts);
            }
        }
    }
}

/// Allocates a frame a host's transport created: counted, and with fresh latency
/// breakdown times if the run records them. (Free of `Simulation` so that the send path
/// can call it while it holds its host.)
#[inline(always)]
fn new_frame(arena: &mut crate::packet::PacketArena, created: &mut u64, breakdown: &mut Option<Vec<super::breakdown::PktTimes>>, p: crate::packet::Packet) -> PktId {
    let id = arena.alloc(p);
    *created += 1;
    if let Some(bd) = breakdown.as_mut() {
        let i = id.0 as usize;
        if i >= bd.len() {
            bd.resize(i + 1, Default::default());
        }
        bd[i] = Default::default();
    }
    id
}
