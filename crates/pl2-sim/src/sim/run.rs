//! The event loop, stop conditions and progress reporting.

use super::spec::Source;
use super::Simulation;
use crate::engine::Ev;
use crate::units::SimTime;
use std::time::Instant;

/// Why a run stopped.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// Simulated time reached the end time.
    EndTime,
    /// Every message from finite sources was delivered or lost for good (a transport that
    /// never resends dropped one of its frames: counter `messages_lost`), and no source
    /// has more.
    AllDelivered,
    /// The event budget was used up.
    EventBudget,
    /// Nothing left to do.
    Idle,
    /// The progress callback asked to stop (e.g. Ctrl-C).
    Interrupted,
    /// PFC pauses deadlocked: a cycle of ports each paused by the next never resumes
    /// (`Simulation::pause_deadlock` says where).
    PauseDeadlock,
}

/// What the progress callback is told.
#[derive(Copy, Clone, Debug)]
pub struct Progress {
    pub now: SimTime,
    pub end: SimTime,
    pub events: u64,
    pub wall: std::time::Duration,
}

/// Wall-clock pacing of progress reports, owned by the caller so that a run made of
/// several `run` calls (slices) reports at a steady rate with a continuous wall time.
#[derive(Copy, Clone, Debug)]
pub struct ProgressClock {
    pub start: Instant,
    pub last: Instant,
    /// Report about this often.
    pub every: std::time::Duration,
}

impl ProgressClock {
    pub fn new(every: std::time::Duration) -> ProgressClock {
        let now = Instant::now();
        ProgressClock { start: now, last: now, every }
    }
}

/// When to stop.
#[derive(Copy, Clone, Debug)]
pub struct StopAt {
    pub end: SimTime,
    pub all_delivered: bool,
    pub event_budget: Option<u64>,
}

impl Simulation {
    /// Runs until a stop condition holds. `progress` is called about every
    /// `clock.every` of wall time; returning `false` interrupts the run (state stays
    /// consistent: it can be resumed or finished).
    pub fn run(&mut self, stop: StopAt, clock: &mut ProgressClock, progress: &mut dyn FnMut(&Progress) -> bool) -> StopReason {
        let start_events = self.events.executed();
        loop {
            if stop.all_delivered && self.live_msgs == 0 && self.sources_active == 0 && self.persistent.is_empty() && self.apps.active == 0 {
                return StopReason::AllDelivered;
            }
            // Pop first and put the event back if the run stops before it: the radix heap
            // finds its minimum by popping.
            let Some((t, ev)) = self.events.pop() else { return StopReason::Idle };
            if t > stop.end {
                self.events.unpop();
                self.now = stop.end;
                return StopReason::EndTime;
            }
            if let Some(b) = stop.event_budget {
                if self.events.executed() - 1 - start_events >= b {
                    self.events.unpop();
                    return StopReason::EventBudget;
                }
            }
            self.now = t;
            self.counters.events += 1;
            if self.arena.outgrows_cache() {
                self.prefetch_for_next();
            }
            self.dispatch(ev);
            if matches!(ev, Ev::PauseRefresh(_)) && self.pfc.as_ref().is_some_and(|p| p.deadlock.is_some()) {
                return StopReason::PauseDeadlock;
            }
            if self.counters.events & 0xffff == 0 {
                let w = Instant::now();
                if w.duration_since(clock.last) >= clock.every {
                    clock.last = w;
                    let p = Progress { now: self.now, end: stop.end, events: self.counters.events, wall: w - clock.start };
                    if !progress(&p) {
                        return StopReason::Interrupted;
                    }
                }
            }
        }
    }

    /// Starts loading what the next event will work on (its port and the frame it will
    /// move), so that those cache misses overlap with this event's work instead of
    /// following it.
    #[inline]
    fn prefetch_for_next(&self) {
        match self.events.peek_event() {
            Some(Ev::LinkHead(p)) => {
                if let Some(port) = self.ports.get(p as usize) {
                    crate::prefetch::prefetch_all(port);
                    if let Some(pkt) = port.pipe.front() {
                        self.arena.prefetch(pkt);
                    }
                }
            }
            Some(Ev::PortFree(p)) => {
                if let Some(port) = self.ports.get(p as usize) {
                    crate::prefetch::prefetch_all(port);
                }
                if let Some(pkt) = self.queues.get(p as usize).and_then(|q| q.peek_highest()) {
                    self.arena.prefetch(pkt);
                }
            }
            _ => {}
        }
    }

    /// Inlined into the loop: a call's register saves and a second jump on the event's
    /// kind (after `Ev::decode`'s) cost about ten instructions an event (callgrind, A).
    /// The handlers of rare events (arrivals, streams, timers, faults, applications, the
    /// circuit schedule, PFC) are kept out of line, so that the loop's code fits the
    /// instruction cache better: out of line, `run` shrank from 32.8 to 23.3 KiB and A's
    /// modelled L1i misses from 11.9 to 9.3 M (callgrind `--cache-sim=yes`).
    #[inline(always)]
    fn dispatch(&mut self, ev: Ev) {
        match ev {
            Ev::PortFree(p) => self.on_port_free(p),
            Ev::LinkHead(p) => self.on_link_head(p),
            Ev::HostTx(h) => self.on_host_tx(h),
            Ev::Timer(g) => self.on_timer(g),
            Ev::Arrival(i) => self.on_arrival(i),
            Ev::Stream(i) => self.start_stream_message(i as usize),
            Ev::Fault(i) => self.on_fault(i),
            Ev::Sample => {}
            Ev::App(i) => self.on_app_event(i),
            Ev::PauseEnd(p) => self.on_pause_end(p),
            Ev::PauseRefresh(p) => self.on_pause_refresh(p),
            Ev::PauseArrive(p) => self.on_pause_arrive(p),
            Ev::HostRxArrive(h) => self.on_host_rx_arrive(h),
            Ev::Circuit(_) => self.on_circuit_boundary(),
        }
    }

    /// Source `i` produces its next message now.
    #[inline(never)]
    fn on_arrival(&mut self, i: u32) {
        let (spec, transport, workload) = match &mut self.sources[i as usize] {
            Source::List { msgs, next, transport, workload } => {
                let m = msgs[*next];
                *next += 1;
                (m, *transport, *workload)
            }
            Source::Poisson { pending, transport, workload, .. } => {
                (pending.take().expect("arrival scheduled with a pending message"), *transport, *workload)
            }
        };
        let slot = self.new_message(spec.src, spec.dst, spec.size, spec.thread, spec.priority, transport, workload);
        self.enqueue_message(slot, spec.thread);
        self.schedule_next_arrival(i);
    }

    pub(crate) fn schedule_next_arrival(&mut self, i: u32) {
        let next = match &mut self.sources[i as usize] {
            Source::List { msgs, next, .. } => msgs.get(*next).map(|m| m.time),
            Source::Poisson { gen, rng, pending, .. } => {
                *pending = gen.next(rng);
                pending.as_ref().map(|m| m.time)
            }
        };
        match next {
            Some(t) => self.events.push(t.max(self.now), Ev::Arrival(i)),
            None => self.sources_active -= 1,
        }
    }

    /// Ends the run's bookkeeping: messages still in flight are reported unfinished and
    /// open windows are closed. Call once, after the last `run`.
    pub fn finish(&mut self) {
        self.finish_apps();
        self.probe_grid.flush(&mut self.records.probes);
        for m in &self.msgs {
            if m.live {
                self.records.messages.push(m.rec.clone());
            }
        }
        let window = self.metrics.window;
        let now = self.now.0;
        for (i, p) in self.ports.iter_mut().enumerate() {
            if p.window.active {
                // A window the run ends in counts as empty after the run's end, so that
                // the means times the window are the queue's integral.
                let start = p.window.index * window.0;
                let end = (start + window.0).min(now.max(start));
                self.records.ports.push(crate::metrics::PortWindow {
                    port: i as u32,
                    window_start: SimTime(start),
                    max_queue_bytes: p.window.max,
                    mean_queue_bytes: p.area.closed_mean(p.queued, end, window.0),
                    end_queue_bytes: p.queued,
                    tx_bytes: p.window.sum,
                });
                p.window.active = false;
            }
        }
        for (h, host) in self.hosts.iter_mut().enumerate() {
            if host.goodput.active {
                self.records.goodput.push(crate::metrics::GoodputWindow {
                    host: h as u32,
                    window_start: SimTime(host.goodput.index * window.0),
                    payload_bytes: host.goodput.sum,
                });
                host.goodput.active = false;
            }
        }
    }
}
