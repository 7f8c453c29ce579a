//! Application workloads driven by deliveries (see `workload/apps.rs` for their
//! parameters): closed-loop RPCs and the parameter-server shuffle. A message an
//! application sends carries an [`AppTag`]; when the transport reports it delivered, the
//! application reacts. Every reaction that sends a message goes through an `Ev::App`
//! event (at once, or after a service, think or compute time), so the transport of the
//! host that just delivered is never re-entered from inside its own call.

use super::Simulation;
use crate::engine::Ev;
use crate::rng::SimRng;
use crate::units::{Duration, SimTime};
use crate::metrics::{IterationRecord, RpcRecord};
use crate::workload::{AppSpec, PsShuffleSpec, RpcSpec};

/// What a message means to the application that sent it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub(crate) enum AppTag {
    /// Not an application message (sources, persistent streams).
    #[default]
    None,
    /// The request / response of RPC connection `i`.
    Request(u32),
    Response(u32),
    /// A push of shuffle `ps` from its `w`-th worker to its `j`-th server, a pull to its
    /// `w`-th worker.
    Push { ps: u32, j: u32, w: u32 },
    Pull { ps: u32, w: u32 },
}

/// What an `Ev::App(i)` event is about.
#[derive(Copy, Clone, Debug)]
pub(crate) enum AppEv {
    /// RPC connection `i` ends its wait (the first start, a service or a think time).
    Conn(u32),
    /// Shuffle `ps` starts its next iteration on every worker (global barrier).
    Iteration(u32),
    /// Worker `w` of shuffle `ps` starts its next iteration (per-worker barrier).
    WorkerStart { ps: u32, w: u32 },
    /// Server `j` of shuffle `ps` sends its pulls.
    Pull { ps: u32, j: u32 },
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Phase {
    /// Waiting to send the next request (start or think time).
    Idle,
    Request,
    /// The server is serving the request.
    Service,
    Response,
    Done,
}

struct Conn {
    app: u32,
    client: u32,
    server: u32,
    thread: u16,
    event: u32,
    issued: u64,
    phase: Phase,
    rec: RpcRecord,
}

struct RpcApp {
    spec: RpcSpec,
    rng: SimRng,
    conns_active: u32,
}

/// An iteration some worker has started and not every worker has finished.
struct OpenIteration {
    rec: IterationRecord,
    pushes_left: u64,
    workers_done: u32,
}

struct PsApp {
    spec: PsShuffleSpec,
    rng: SimRng,
    /// Event that starts an iteration on every worker (global barrier) or on worker `w`
    /// (`worker_events[w]`, per-worker barrier); server `j`'s pull event.
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
    open: std::collections::VecDeque<OpenIteration>,
    base: u32,
}

/// The state of every application workload.
#[derive(Default)]
pub(crate) struct Apps {
    rpc: Vec<RpcApp>,
    conns: Vec<Conn>,
    ps: Vec<PsApp>,
    events: Vec<AppEv>,
    /// Applications that will still send something.
    pub active: u32,
    next_rpc_id: u64,
}

impl Apps {
    /// Builds the state and returns the events to schedule (time, event index).
    pub(crate) fn new(specs: Vec<AppSpec>, seed: u64) -> (Apps, Vec<(SimTime, u32)>) {
        let mut a = Apps::default();
        let mut initial = Vec::new();
        for spec in specs {
            a.active += 1;
            let rng = SimRng::stream(seed, &format!("app{}", spec.label()));
            match spec {
                AppSpec::Rpc(s) => {
                    let app = a.rpc.len() as u32;
                    let mut n = 0;
                    for (i, &client) in s.clients.iter().enumerate() {
                        for c in 0..s.concurrency {
                            let server = s.servers[(i * s.concurrency as usize + c as usize) % s.servers.len()];
                            let event = a.events.len() as u32;
                            a.events.push(AppEv::Conn(a.conns.len() as u32));
                            initial.push((s.start, event));
                            a.conns.push(Conn {
                                app,
                                client,
                                server,
                                thread: s.first_thread + c,
                                event,
                                issued: 0,
                                phase: Phase::Idle,
                                rec: RpcRecord {
                                    workload: s.label,
                                    id: 0,
                                    client,
                                    server,
                                    thread: s.first_thread + c,
                                    request_id: 0,
                                    response_id: None,
                                    start: SimTime::ZERO,
                                    request_done: None,
                                    response_start: None,
                                    finish: None,
                                    ideal: Duration::ZERO,
                                },
                            });
                            n += 1;
                        }
                    }
                    a.rpc.push(RpcApp { spec: s, rng, conns_active: n });
                }
                AppSpec::PsShuffle(s) => {
                    let ps = a.ps.len() as u32;
                    let start_event = a.events.len() as u32;
                    a.events.push(AppEv::Iteration(ps));
                    let mut ev = |e: AppEv| {
                        a.events.push(e);
                        a.events.len() as u32 - 1
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
                    a.ps.push(PsApp {
                        rng,
                        start_event,
                        worker_events,
                        pull_events,
                        worker_iter: vec![0; s.workers.len()],
                        worker_left: vec![0; s.workers.len()],
                        server_left: msgs.iter().map(|n| w * n).collect(),
                        msgs,
                        open: Default::default(),
                        base: 0,
                        spec: s,
                    });
                }
            }
        }
        (a, initial)
    }
}

impl Simulation {
    /// Starts a message that application tag `tag` follows, on `thread` of `src`.
    #[allow(clippy::too_many_arguments)]
    fn app_message(&mut self, src: u32, dst: u32, size: u64, thread: u16, prio: u8, transport: u8, tag: AppTag) -> (u64, Duration) {
        let slot = self.new_message(src, dst, size, thread, prio, transport);
        let m = &mut self.msgs[slot as usize];
        m.tag = tag;
        let (id, ideal) = (m.rec.id, m.rec.ideal);
        self.enqueue_message(slot, thread);
        (id, ideal)
    }

    /// Application event `i` is due.
    pub(crate) fn on_app_event(&mut self, i: u32) {
        match self.apps.events[i as usize] {
            AppEv::Conn(c) => self.conn_wakes(c),
            AppEv::Iteration(ps) => {
                for w in 0..self.apps.ps[ps as usize].spec.workers.len() as u32 {
                    self.ps_worker_start(ps, w);
                }
            }
            AppEv::WorkerStart { ps, w } => self.ps_worker_start(ps, w),
            AppEv::Pull { ps, j } => self.ps_send_pulls(ps, j),
        }
    }

    /// A message tagged `tag` (id `id`, ideal time `ideal`) was delivered now.
    pub(crate) fn app_delivered(&mut self, tag: AppTag, ideal: Duration) {
        let now = self.now;
        match tag {
            AppTag::None => {}
            AppTag::Request(c) => {
                let conn = &mut self.apps.conns[c as usize];
                let app = &mut self.apps.rpc[conn.app as usize];
                let service = app.spec.service.sample(&mut app.rng);
                conn.rec.request_done = Some(now);
                conn.rec.ideal = ideal + service;
                conn.phase = Phase::Service;
                let ev = conn.event;
                self.events.push(now + service, Ev::App(ev));
            }
            AppTag::Response(c) => {
                let conn = &mut self.apps.conns[c as usize];
                let app = &mut self.apps.rpc[conn.app as usize];
                conn.rec.finish = Some(now);
                conn.rec.ideal += ideal;
                self.records.rpcs.push(conn.rec.clone());
                let think = app.spec.think.sample(&mut app.rng);
                conn.phase = Phase::Idle;
                let ev = conn.event;
                self.events.push(now + think, Ev::App(ev));
            }
            AppTag::Push { ps, j, w } => {
                let p = &mut self.apps.ps[ps as usize];
                // A worker's pushes of iteration k all arrive before it starts k + 1.
                let k = p.worker_iter[w as usize];
                let it = &mut p.open[(k - p.base) as usize];
                it.pushes_left -= 1;
                if it.pushes_left == 0 {
                    it.rec.push_done = Some(now);
                }
                if p.spec.pull {
                    // Server j gets every push of iteration k before any of k + 1 (a
                    // worker starts k + 1 only after every server's pull of k).
                    let left = &mut p.server_left[j as usize];
                    *left -= 1;
                    if *left == 0 {
                        *left = p.spec.workers.len() as u64 * p.msgs[j as usize];
                        let ev = p.pull_events[j as usize];
                        self.events.push(now, Ev::App(ev));
                    }
                } else {
                    self.ps_worker_progress(ps, w);
                }
            }
            AppTag::Pull { ps, w } => self.ps_worker_progress(ps, w),
        }
    }

    /// RPC connection `c`'s wait ended: send the response (after a service time) or the
    /// next request (at the start, after a think time).
    fn conn_wakes(&mut self, c: u32) {
        let now = self.now;
        let conn = &self.apps.conns[c as usize];
        let app = &self.apps.rpc[conn.app as usize];
        let (client, server, thread, prio, transport) = (conn.client, conn.server, conn.thread, app.spec.priority, app.spec.transport);
        match conn.phase {
            Phase::Service => {
                let size = app.spec.response_bytes;
                let (id, _) = self.app_message(server, client, size, thread, prio, transport, AppTag::Response(c));
                let conn = &mut self.apps.conns[c as usize];
                conn.rec.response_id = Some(id);
                conn.rec.response_start = Some(now);
                conn.phase = Phase::Response;
            }
            Phase::Idle => {
                let stopped = app.spec.stop.is_some_and(|s| now >= s) || app.spec.count.is_some_and(|n| conn.issued >= n);
                if stopped {
                    let app_i = conn.app as usize;
                    self.apps.conns[c as usize].phase = Phase::Done;
                    let app = &mut self.apps.rpc[app_i];
                    app.conns_active -= 1;
                    if app.conns_active == 0 {
                        self.apps.active -= 1;
                    }
                    return;
                }
                let size = app.spec.request_bytes;
                let id = self.apps.next_rpc_id;
                self.apps.next_rpc_id += 1;
                let (msg, _) = self.app_message(client, server, size, thread, prio, transport, AppTag::Request(c));
                let conn = &mut self.apps.conns[c as usize];
                conn.issued += 1;
                conn.phase = Phase::Request;
                let r = &mut conn.rec;
                r.id = id;
                r.request_id = msg;
                r.response_id = None;
                r.start = now;
                r.request_done = None;
                r.response_start = None;
                r.finish = None;
                r.ideal = Duration::ZERO;
            }
            Phase::Request | Phase::Response | Phase::Done => unreachable!("connection {c} woken in {:?}", conn.phase),
        }
    }

    /// Sends `bytes` from `src` to `dst` as the shuffle's messages, round-robin over
    /// threads `first..first + k`.
    fn ps_transfer(&mut self, spec: &PsShuffleSpec, src: u32, dst: u32, bytes: u64, first: u16, tag: AppTag) {
        let (n, m) = spec.split(bytes);
        let k = u64::from(spec.threads_per_flow);
        for q in 0..n {
            let size = if q + 1 == n { bytes - m * (n - 1) } else { m };
            self.app_message(src, dst, size, first + (q % k) as u16, spec.priority, spec.transport, tag);
        }
    }

    /// Worker `w` starts its next iteration: it pushes chunk `j` to every server `j`.
    fn ps_worker_start(&mut self, ps: u32, w: u32) {
        let now = self.now;
        let p = &mut self.apps.ps[ps as usize];
        let k = p.worker_iter[w as usize];
        if k - p.base == p.open.len() as u32 {
            let n = p.spec.workers.len() as u64;
            let mult = if p.spec.pull { 2 } else { 1 };
            p.open.push_back(OpenIteration {
                rec: IterationRecord {
                    workload: p.spec.label,
                    iteration: k,
                    start: now,
                    push_done: None,
                    finish: None,
                    bytes: p.spec.gradient_bytes * n * mult,
                },
                pushes_left: n * p.msgs.iter().sum::<u64>(),
                workers_done: 0,
            });
        }
        // Its pushes, or with pull the pulls it gets back: one chunk per server either way.
        p.worker_left[w as usize] = p.msgs.iter().sum();
        // The spec is cloned once per worker and iteration (not per message or frame).
        let spec = p.spec.clone();
        let worker = spec.workers[w as usize];
        let k = spec.threads_per_flow;
        for (j, &server) in spec.servers.iter().enumerate() {
            let first = spec.first_thread + j as u16 * k;
            self.ps_transfer(&spec, worker, server, spec.chunk_bytes(j), first, AppTag::Push { ps, j: j as u32, w });
        }
    }

    fn ps_send_pulls(&mut self, ps: u32, j: u32) {
        let spec = self.apps.ps[ps as usize].spec.clone();
        let server = spec.servers[j as usize];
        let k = spec.threads_per_flow;
        for (w, &worker) in spec.workers.iter().enumerate() {
            let first = spec.first_thread + w as u16 * k;
            self.ps_transfer(&spec, server, worker, spec.chunk_bytes(j as usize), first, AppTag::Pull { ps, w: w as u32 });
        }
    }

    /// One of worker `w`'s transfers of its current iteration was delivered.
    fn ps_worker_progress(&mut self, ps: u32, w: u32) {
        let now = self.now;
        let p = &mut self.apps.ps[ps as usize];
        let wi = w as usize;
        p.worker_left[wi] -= 1;
        if p.worker_left[wi] > 0 {
            return;
        }
        // Worker w finished iteration k.
        let k = p.worker_iter[wi];
        p.worker_iter[wi] += 1;
        let it = &mut p.open[(k - p.base) as usize];
        it.workers_done += 1;
        let all_done = it.workers_done == p.spec.workers.len() as u32;
        let more = k + 1 < p.spec.iterations;
        if p.spec.per_worker && more {
            let gap = p.spec.compute.sample(&mut p.rng);
            let ev = p.worker_events[wi];
            self.events.push(now + gap, Ev::App(ev));
        }
        if all_done {
            // Iterations finish in order: a worker finishes k before it starts k + 1.
            debug_assert_eq!(k, p.base);
            let mut done = p.open.pop_front().expect("iteration k is open");
            p.base += 1;
            done.rec.finish = Some(now);
            self.records.iterations.push(done.rec);
            if !more {
                self.apps.active -= 1;
            } else if !p.spec.per_worker {
                let gap = p.spec.compute.sample(&mut p.rng);
                let ev = p.start_event;
                self.events.push(now + gap, Ev::App(ev));
            }
        }
    }

    /// Reports RPCs and iterations still running (at the end of the run).
    pub(crate) fn finish_apps(&mut self) {
        for c in &self.apps.conns {
            if matches!(c.phase, Phase::Request | Phase::Service | Phase::Response) {
                self.records.rpcs.push(c.rec.clone());
            }
        }
        for p in &mut self.apps.ps {
            self.records.iterations.extend(p.open.drain(..).map(|o| o.rec));
        }
    }
}
