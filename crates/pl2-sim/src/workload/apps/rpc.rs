//! Closed-loop RPCs ([`RpcSpec`]) while a run goes: each connection waits (start or think
//! time), sends its request, waits for the server's service time once the request is
//! delivered, gets the response, and records the RPC.

use super::{AppEv, AppIo, AppMessage, AppTag, RpcSpec};
use crate::metrics::RpcRecord;
use crate::rng::SimRng;
use crate::units::{Duration, SimTime};

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

/// Every RPC workload of a run and their connections.
#[derive(Default)]
pub(super) struct Rpcs {
    apps: Vec<RpcApp>,
    conns: Vec<Conn>,
    next_rpc_id: u64,
}

impl Rpcs {
    /// Adds workload `s`: its connections, each with a wake-up (in `events`) scheduled at
    /// the start (in `initial`).
    pub(super) fn add(&mut self, s: RpcSpec, rng: SimRng, events: &mut Vec<AppEv>, initial: &mut Vec<(SimTime, u32)>) {
        let app = self.apps.len() as u32;
        let mut n = 0;
        for (i, &client) in s.clients.iter().enumerate() {
            for c in 0..s.concurrency {
                let server = s.servers[(i * s.concurrency as usize + c as usize) % s.servers.len()];
                let event = events.len() as u32;
                events.push(AppEv::Conn(self.conns.len() as u32));
                initial.push((s.start, event));
                self.conns.push(Conn {
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
        self.apps.push(RpcApp { spec: s, rng, conns_active: n });
    }

    /// Connection `c`'s wait ended: send the response (after a service time) or the next
    /// request (at the start, after a think time). Returns whether its workload just
    /// stopped for good (its last connection is done).
    pub(super) fn wakes(&mut self, c: u32, io: &mut impl AppIo) -> bool {
        let now = io.now();
        let conn = &mut self.conns[c as usize];
        let app = &mut self.apps[conn.app as usize];
        let (client, server, thread, prio, transport) = (conn.client, conn.server, conn.thread, app.spec.priority, app.spec.transport);
        let workload = app.spec.label as u16;
        match conn.phase {
            Phase::Service => {
                let size = app.spec.response_bytes;
                let id = io.start_message(AppMessage { src: server, dst: client, size, thread, prio, transport, workload, tag: AppTag::Response(c) });
                conn.rec.response_id = Some(id);
                conn.rec.response_start = Some(now);
                conn.phase = Phase::Response;
                false
            }
            Phase::Idle => {
                let stopped = app.spec.stop.is_some_and(|s| now >= s) || app.spec.count.is_some_and(|n| conn.issued >= n);
                if stopped {
                    conn.phase = Phase::Done;
                    app.conns_active -= 1;
                    return app.conns_active == 0;
                }
                let size = app.spec.request_bytes;
                let id = self.next_rpc_id;
                self.next_rpc_id += 1;
                let msg = io.start_message(AppMessage { src: client, dst: server, size, thread, prio, transport, workload, tag: AppTag::Request(c) });
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
                false
            }
            Phase::Request | Phase::Response | Phase::Done => unreachable!("connection {c} woken in {:?}", conn.phase),
        }
    }

    /// Connection `c`'s request was delivered: the server serves it for a service time.
    pub(super) fn request_delivered(&mut self, c: u32, ideal: Duration, io: &mut impl AppIo) {
        let now = io.now();
        let conn = &mut self.conns[c as usize];
        let app = &mut self.apps[conn.app as usize];
        let service = app.spec.service.sample(&mut app.rng);
        conn.rec.request_done = Some(now);
        conn.rec.ideal = ideal + service;
        conn.phase = Phase::Service;
        io.wake(now + service, conn.event);
    }

    /// Connection `c`'s response was delivered: the RPC is done; the next one starts after
    /// a think time.
    pub(super) fn response_delivered(&mut self, c: u32, ideal: Duration, io: &mut impl AppIo) {
        let now = io.now();
        let conn = &mut self.conns[c as usize];
        let app = &mut self.apps[conn.app as usize];
        conn.rec.finish = Some(now);
        conn.rec.ideal += ideal;
        io.rpc_record(conn.rec.clone());
        let think = app.spec.think.sample(&mut app.rng);
        conn.phase = Phase::Idle;
        io.wake(now + think, conn.event);
    }

    /// Records the RPCs still running (at the end of the run).
    pub(super) fn finish(&self, io: &mut impl AppIo) {
        for c in &self.conns {
            if matches!(c.phase, Phase::Request | Phase::Service | Phase::Response) {
                io.rpc_record(c.rec.clone());
            }
        }
    }
}
