//! Application workloads driven by deliveries: closed-loop RPCs ([`rpc`]) and the
//! parameter-server shuffle ([`shuffle`]), with their parameters in [`spec`]. Each is a
//! state machine like a transport: a message an application sends carries an
//! [`AppTag`]; when its transport reports it delivered, the application reacts through
//! an [`AppIo`] (start messages, wake itself later, write records), which the simulation
//! implements. Every reaction that sends a message goes through a wake-up (at once, or
//! after a service, think or compute time), so the transport of the host that just
//! delivered is never re-entered from inside its own call.

mod rpc;
mod shuffle;
mod spec;

pub use spec::{AppSpec, PsShuffleSpec, RpcSpec, MEMCACHED_GET_REQUEST_BYTES, MEMCACHED_GET_RESPONSE_HEADER_BYTES, VGG16_GRADIENT_BYTES};

use crate::metrics::{IterationRecord, RpcRecord};
use crate::rng::SimRng;
use crate::units::{Duration, SimTime};
use rpc::Rpcs;
use shuffle::PsApp;

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
    /// A message of persistent stream `i` that starts the stream's next message when it
    /// is delivered ([`crate::sim::StreamNext::Delivery`]); handled by the simulation,
    /// not by an application.
    Stream(u32),
}

/// A message an application starts on `thread` of `src`.
#[derive(Copy, Clone, Debug)]
pub(crate) struct AppMessage {
    pub src: u32,
    pub dst: u32,
    pub size: u64,
    pub thread: u16,
    pub prio: u8,
    /// The run's transport it uses (index).
    pub transport: u8,
    /// The workload (application) it comes from (index).
    pub workload: u16,
    pub tag: AppTag,
}

/// What applications ask of the simulation that runs them.
pub(crate) trait AppIo {
    fn now(&self) -> SimTime;
    /// Starts message `m` now (queued for its thread); returns its run-wide id.
    fn start_message(&mut self, m: AppMessage) -> u64;
    /// Calls [`Apps::on_event`] with `event` at `at`.
    fn wake(&mut self, at: SimTime, event: u32);
    /// An RPC finished, or was still running at the end.
    fn rpc_record(&mut self, r: RpcRecord);
    /// A shuffle iteration finished, or was still running at the end.
    fn iteration_record(&mut self, r: IterationRecord);
}

/// What a wake-up is about.
#[derive(Copy, Clone, Debug)]
enum AppEv {
    /// RPC connection `i` ends its wait (the first start, a service or a think time).
    Conn(u32),
    /// Shuffle `ps` starts its next iteration on every worker (global barrier).
    Iteration(u32),
    /// Worker `w` of shuffle `ps` starts its next iteration (per-worker barrier).
    WorkerStart { ps: u32, w: u32 },
    /// Server `j` of shuffle `ps` sends its pulls.
    Pull { ps: u32, j: u32 },
}

/// The state of every application workload of a run.
#[derive(Default)]
pub(crate) struct Apps {
    rpcs: Rpcs,
    ps: Vec<PsApp>,
    events: Vec<AppEv>,
    /// Applications that will still send something.
    pub active: u32,
}

impl Apps {
    /// Builds the state and returns the wake-ups to schedule (time, event index).
    pub(crate) fn new(specs: Vec<AppSpec>, seed: u64) -> (Apps, Vec<(SimTime, u32)>) {
        let mut a = Apps::default();
        let mut initial = Vec::new();
        for spec in specs {
            a.active += 1;
            let rng = SimRng::stream(seed, &format!("app{}", spec.label()));
            match spec {
                AppSpec::Rpc(s) => a.rpcs.add(s, rng, &mut a.events, &mut initial),
                AppSpec::PsShuffle(s) => {
                    let ps = a.ps.len() as u32;
                    a.ps.push(PsApp::new(ps, s, rng, &mut a.events, &mut initial));
                }
            }
        }
        (a, initial)
    }

    /// Wake-up `i` is due.
    pub(crate) fn on_event(&mut self, i: u32, io: &mut impl AppIo) {
        match self.events[i as usize] {
            AppEv::Conn(c) => {
                if self.rpcs.wakes(c, io) {
                    self.active -= 1;
                }
            }
            AppEv::Iteration(ps) => {
                let p = &mut self.ps[ps as usize];
                for w in 0..p.spec.workers.len() as u32 {
                    p.worker_start(ps, w, io);
                }
            }
            AppEv::WorkerStart { ps, w } => self.ps[ps as usize].worker_start(ps, w, io),
            AppEv::Pull { ps, j } => self.ps[ps as usize].send_pulls(ps, j, io),
        }
    }

    /// A message tagged `tag` (of ideal completion time `ideal`) was delivered now.
    pub(crate) fn delivered(&mut self, tag: AppTag, ideal: Duration, io: &mut impl AppIo) {
        match tag {
            AppTag::None | AppTag::Stream(_) => {}
            AppTag::Request(c) => self.rpcs.request_delivered(c, ideal, io),
            AppTag::Response(c) => self.rpcs.response_delivered(c, ideal, io),
            AppTag::Push { ps, j, w } => {
                if self.ps[ps as usize].push_delivered(j, w, io) {
                    self.active -= 1;
                }
            }
            AppTag::Pull { ps, w } => {
                if self.ps[ps as usize].worker_progress(w, io) {
                    self.active -= 1;
                }
            }
        }
    }

    /// Reports RPCs and iterations still running (at the end of the run).
    pub(crate) fn finish(&mut self, io: &mut impl AppIo) {
        self.rpcs.finish(io);
        for p in &mut self.ps {
            p.finish(io);
        }
    }
}
