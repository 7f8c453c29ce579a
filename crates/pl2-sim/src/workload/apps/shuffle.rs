//! A parameter-server shuffle ([`PsShuffleSpec`]) while a run goes: workers push their
//! chunks to every server, servers (with `pull`) send them back once every push arrived,
//! and iterations follow one another after a compute time, behind a global or a
//! per-worker barrier.

use super::{AppEv, AppIo, AppMessage, AppTag, PsShuffleSpec};
use crate::metrics::IterationRecord;
use crate::rng::SimRng;
use crate::units::SimTime;
use std::collections::VecDeque;

/// An iteration some worker has started and not every worker has finished.
struct OpenIteration {
    rec: IterationRecord,
    pushes_left: u64,
    workers_done: u32,
}

/// One shuffle workload.
pub(super) struct PsApp {
    pub spec: PsShuffleSpec,
    rng: SimRng,
    /// Wake-up that starts an iteration on every worker (global barrier) or on worker `w`
    /// (`worker_events[w]`, per-worker barrier); server `j`'s pull wake-up.
    start_event: u32,
    worker_events: Vec<u32>,
    pull_events: Vec<u32>,
    /// Messages each chunk travels as (per server).
    msgs: Vec<u64>,
    /// Each worker's current iteration, and its transfers in it not yet delivered (its
    /// pushes, or with `pull` its pulls).
    worker_iter: Vec<u32>,
    worker_left: Vec<u64>,
    /// Pushes server `j` still waits for before it sends its pulls.
    server_left: Vec<u64>,
    /// Iterations started and not finished, oldest first (`open[0]` is iteration `base`).
    open: VecDeque<OpenIteration>,
    base: u32,
}

impl PsApp {
    /// Shuffle number `ps` of spec `s`: its wake-ups (in `events`), the first ones scheduled
    /// at the start (in `initial`).
    pub(super) fn new(ps: u32, s: PsShuffleSpec, rng: SimRng, events: &mut Vec<AppEv>, initial: &mut Vec<(SimTime, u32)>) -> PsApp {
        let start_event = events.len() as u32;
        events.push(AppEv::Iteration(ps));
        let mut ev = |e: AppEv| {
            events.push(e);
            events.len() as u32 - 1
        };
        let worker_events: Vec<u32> = (0..s.workers.len() as u32).map(|w| ev(AppEv::WorkerStart { ps, w })).collect();
        let pull_events = (0..s.servers.len() as u32).map(|j| ev(AppEv::Pull { ps, j })).collect();
        if s.per_worker {
            initial.extend(worker_events.iter().map(|&e| (s.start, e)));
        } else {
            initial.push((s.start, start_event));
        }
        let msgs: Vec<u64> = (0..s.servers.len()).map(|j| s.split(s.chunk_bytes(j)).0).collect();
        let w = s.workers.len() as u64;
        PsApp {
            rng,
            start_event,
            worker_events,
            pull_events,
            worker_iter: vec![0; s.workers.len()],
            worker_left: vec![0; s.workers.len()],
            server_left: msgs.iter().map(|n| w * n).collect(),
            msgs,
            open: VecDeque::new(),
            base: 0,
            spec: s,
        }
    }

    /// Worker `w` starts its next iteration: it pushes chunk `j` to every server `j`.
    pub(super) fn worker_start(&mut self, ps: u32, w: u32, io: &mut impl AppIo) {
        let now = io.now();
        let k = self.worker_iter[w as usize];
        if k - self.base == self.open.len() as u32 {
            let n = self.spec.workers.len() as u64;
            let mult = if self.spec.pull { 2 } else { 1 };
            self.open.push_back(OpenIteration {
                rec: IterationRecord {
                    workload: self.spec.label,
                    iteration: k,
                    start: now,
                    push_done: None,
                    finish: None,
                    bytes: self.spec.gradient_bytes * n * mult,
                },
                pushes_left: n * self.msgs.iter().sum::<u64>(),
                workers_done: 0,
            });
        }
        // Its pushes, or with pull the pulls it gets back: one chunk per server either way.
        self.worker_left[w as usize] = self.msgs.iter().sum();
        let spec = &self.spec;
        let worker = spec.workers[w as usize];
        let k = spec.threads_per_flow;
        for (j, &server) in spec.servers.iter().enumerate() {
            let first = spec.first_thread + j as u16 * k;
            transfer(spec, worker, server, spec.chunk_bytes(j), first, AppTag::Push { ps, j: j as u32, w }, io);
        }
    }

    /// Server `j` has every worker's push: it sends its chunk back to every worker.
    pub(super) fn send_pulls(&mut self, ps: u32, j: u32, io: &mut impl AppIo) {
        let spec = &self.spec;
        let server = spec.servers[j as usize];
        let k = spec.threads_per_flow;
        for (w, &worker) in spec.workers.iter().enumerate() {
            let first = spec.first_thread + w as u16 * k;
            transfer(spec, server, worker, spec.chunk_bytes(j as usize), first, AppTag::Pull { ps, w: w as u32 }, io);
        }
    }

    /// A push from worker `w` to server `j` was delivered. Returns whether the shuffle
    /// just ran its last iteration.
    pub(super) fn push_delivered(&mut self, j: u32, w: u32, io: &mut impl AppIo) -> bool {
        let now = io.now();
        // A worker's pushes of iteration k all arrive before it starts k + 1.
        let k = self.worker_iter[w as usize];
        let it = &mut self.open[(k - self.base) as usize];
        it.pushes_left -= 1;
        if it.pushes_left == 0 {
            it.rec.push_done = Some(now);
        }
        if !self.spec.pull {
            return self.worker_progress(w, io);
        }
        // Server j gets every push of iteration k before any of k + 1 (a worker starts
        // k + 1 only after every server's pull of k).
        let left = &mut self.server_left[j as usize];
        *left -= 1;
        if *left == 0 {
            *left = self.spec.workers.len() as u64 * self.msgs[j as usize];
            io.wake(now, self.pull_events[j as usize]);
        }
        false
    }

    /// One of worker `w`'s transfers of its current iteration was delivered. Returns
    /// whether the shuffle just ran its last iteration.
    pub(super) fn worker_progress(&mut self, w: u32, io: &mut impl AppIo) -> bool {
        let now = io.now();
        let wi = w as usize;
        self.worker_left[wi] -= 1;
        if self.worker_left[wi] > 0 {
            return false;
        }
        // Worker w finished iteration k.
        let k = self.worker_iter[wi];
        self.worker_iter[wi] += 1;
        let it = &mut self.open[(k - self.base) as usize];
        it.workers_done += 1;
        let all_done = it.workers_done == self.spec.workers.len() as u32;
        let more = k + 1 < self.spec.iterations;
        if self.spec.per_worker && more {
            let gap = self.spec.compute.sample(&mut self.rng);
            io.wake(now + gap, self.worker_events[wi]);
        }
        if !all_done {
            return false;
        }
        // Iterations finish in order: a worker finishes k before it starts k + 1.
        debug_assert_eq!(k, self.base);
        let mut done = self.open.pop_front().expect("iteration k is open");
        self.base += 1;
        done.rec.finish = Some(now);
        io.iteration_record(done.rec);
        if !more {
            return true;
        }
        if !self.spec.per_worker {
            let gap = self.spec.compute.sample(&mut self.rng);
            io.wake(now + gap, self.start_event);
        }
        false
    }

    /// Records the iterations still running (at the end of the run).
    pub(super) fn finish(&mut self, io: &mut impl AppIo) {
        for o in self.open.drain(..) {
            io.iteration_record(o.rec);
        }
    }
}

/// Sends `bytes` from `src` to `dst` as the shuffle's messages, round-robin over threads
/// `first..first + k`.
fn transfer(spec: &PsShuffleSpec, src: u32, dst: u32, bytes: u64, first: u16, tag: AppTag, io: &mut impl AppIo) {
    let (n, m) = spec.split(bytes);
    let k = u64::from(spec.threads_per_flow);
    for q in 0..n {
        let size = if q + 1 == n { bytes - m * (n - 1) } else { m };
        io.start_message(AppMessage { src, dst, size, thread: first + (q % k) as u16, prio: spec.priority, transport: spec.transport, workload: spec.label as u16, tag });
    }
}
