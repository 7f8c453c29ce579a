//! Application workloads whose next message depends on earlier deliveries: closed-loop
//! RPCs ([`RpcSpec`], the PL2 paper's memcached, §6.1/§6.2.1–2) and a parameter-server
//! shuffle ([`PsShuffleSpec`], its VGG16 training, §6.2.3): their resolved parameters
//! and checks (their running state is in `rpc.rs` and `shuffle.rs`). Every error names
//! the field and the fix.

use crate::workload::{WorkloadError, MAX_PRIORITY};
use crate::dist::DelayDist;
use crate::units::SimTime;

/// VGG16's gradient: 138,357,544 fp32 parameters, 553,430,176 bytes.
pub const VGG16_GRADIENT_BYTES: u64 = 138_357_544 * 4;

/// A memcached GET request for a 64 B key in the binary protocol: the 24 B request
/// header plus the key (88 B of TCP/UDP payload).
pub const MEMCACHED_GET_REQUEST_BYTES: u64 = 24 + 64;

/// A memcached binary-protocol GET response without the value: the 24 B response
/// header and the 4 B flags extra (GET, unlike GETK, does not echo the key). A 4 KiB
/// value makes a 4124 B response, a 1 KiB value 1052 B.
pub const MEMCACHED_GET_RESPONSE_HEADER_BYTES: u64 = 24 + 4;

/// Closed-loop request/response traffic. Each client host runs `concurrency`
/// connections, each on its own thread (`first_thread + c`) with at most one request
/// outstanding. Connection `c` of the `i`-th client talks to server
/// `servers[(i * concurrency + c) % servers.len()]`, whose thread `first_thread + c`
/// answers it. A request delivered at the server waits a service time drawn from
/// `service`, then the server sends the response; when the response is delivered the
/// client waits a think time drawn from `think` and sends the next request.
#[derive(Clone, Debug, PartialEq)]
pub struct RpcSpec {
    /// Index of the workload in the scenario (the `workload` column of the results).
    pub label: u32,
    pub clients: Vec<u32>,
    pub servers: Vec<u32>,
    pub concurrency: u16,
    pub first_thread: u16,
    pub request_bytes: u64,
    pub response_bytes: u64,
    pub service: DelayDist,
    pub think: DelayDist,
    /// Every connection sends its first request at `start`.
    pub start: SimTime,
    /// No request is sent at or after `stop`.
    pub stop: Option<SimTime>,
    /// RPCs per connection (none: unlimited).
    pub count: Option<u64>,
    pub priority: u8,
    /// The transport requests and responses use (see `SimSpec::transports`).
    pub transport: u8,
}

/// A synchronous parameter-server shuffle. `gradient_bytes` is split into one chunk per
/// server, byte-balanced (the first `gradient_bytes % servers` chunks one byte larger).
/// In an iteration each worker pushes chunk `j` to server `j`, for all servers at once.
/// With `pull`, a server that has every worker's push sends its chunk back to every
/// worker at once. A worker is done with the iteration when its pulls are delivered
/// (without `pull`: its pushes). With the global barrier every worker starts iteration
/// `k + 1` a compute time (drawn from `compute`) after the last worker is done with `k`;
/// with `per_worker`, each worker starts it a compute time after it is done itself.
/// Iteration `k` runs from its first worker's start to its last worker's end. A chunk travels as messages of at
/// most `message_bytes` (none: one message) spread round-robin over
/// `threads_per_flow` threads: worker thread `first_thread + j * threads_per_flow + q`
/// carries its pushes to server `j`, server thread `first_thread + w * threads_per_flow
/// + q` its pulls to worker `w`.
#[derive(Clone, Debug, PartialEq)]
pub struct PsShuffleSpec {
    pub label: u32,
    pub workers: Vec<u32>,
    pub servers: Vec<u32>,
    pub iterations: u32,
    pub gradient_bytes: u64,
    pub pull: bool,
    /// Each worker starts its next iteration when it is done (instead of when every
    /// worker is).
    pub per_worker: bool,
    pub message_bytes: Option<u64>,
    pub threads_per_flow: u16,
    pub first_thread: u16,
    pub compute: DelayDist,
    pub start: SimTime,
    pub priority: u8,
    /// The transport pushes and pulls use (see `SimSpec::transports`).
    pub transport: u8,
}

/// An application workload.
#[derive(Clone, Debug, PartialEq)]
pub enum AppSpec {
    Rpc(RpcSpec),
    PsShuffle(PsShuffleSpec),
}

fn distinct(field: &'static str, hosts: &[u32], n_hosts: u32) -> Result<(), WorkloadError> {
    if hosts.is_empty() {
        return Err(WorkloadError::param(field, "[]", "is empty", "list at least one host"));
    }
    for (i, &h) in hosts.iter().enumerate() {
        if h >= n_hosts {
            return Err(WorkloadError::param(
                field,
                h,
                format!("host {h} does not exist (hosts are 0..{n_hosts})"),
                "use existing hosts or add hosts to the topology",
            ));
        }
        if hosts[..i].contains(&h) {
            return Err(WorkloadError::param(field, h, "is listed twice", "list each host once"));
        }
    }
    Ok(())
}

fn disjoint(field: &'static str, a: &[u32], b: &[u32], other: &str) -> Result<(), WorkloadError> {
    if let Some(h) = a.iter().find(|h| b.contains(h)) {
        return Err(WorkloadError::param(
            field,
            h,
            format!("host {h} is also one of the {other}"),
            format!("use hosts that are not {other}"),
        ));
    }
    Ok(())
}

fn threads_fit(field: &'static str, first: u16, needed: u64, threads: u16) -> Result<(), WorkloadError> {
    if u64::from(first) + needed > u64::from(threads) {
        return Err(WorkloadError::param(
            field,
            needed,
            format!(
                "needs threads {first}..{} but hosts have {threads} (network.host.threads)",
                u64::from(first) + needed
            ),
            format!("raise network.host.threads to at least {}", u64::from(first) + needed),
        ));
    }
    Ok(())
}

fn check_delay(field: &'static str, d: &DelayDist) -> Result<(), WorkloadError> {
    d.validate().map_err(|e| WorkloadError::param(field, "the distribution", e.0, "fix the distribution"))
}

fn check_prio(p: u8) -> Result<(), WorkloadError> {
    if p > MAX_PRIORITY {
        return Err(WorkloadError::param("priority", p, "is not an 802.1Q priority", "use 0..=7"));
    }
    Ok(())
}

impl RpcSpec {
    /// Threads each client and server uses.
    pub fn threads(&self) -> std::ops::Range<u16> {
        self.first_thread..self.first_thread.saturating_add(self.concurrency)
    }

    pub fn validate(&self, n_hosts: u32, threads: u16) -> Result<(), WorkloadError> {
        distinct("clients", &self.clients, n_hosts)?;
        distinct("servers", &self.servers, n_hosts)?;
        disjoint("servers", &self.servers, &self.clients, "clients")?;
        if self.concurrency == 0 {
            return Err(WorkloadError::param(
                "concurrency",
                0,
                "a client needs at least one outstanding request",
                "use concurrency >= 1",
            ));
        }
        threads_fit("concurrency", self.first_thread, u64::from(self.concurrency), threads)?;
        for (f, b) in [("request_size", self.request_bytes), ("response_size", self.response_bytes)] {
            if b == 0 {
                return Err(WorkloadError::param(f, "0B", "a message carries at least 1 byte", "use a size >= 1B"));
            }
        }
        check_delay("service", &self.service)?;
        check_delay("think", &self.think)?;
        if self.count == Some(0) {
            return Err(WorkloadError::param("count", 0, "no RPC would run", "use count >= 1, or omit it for no limit"));
        }
        if let Some(stop) = self.stop {
            if stop <= self.start {
                return Err(WorkloadError::param("stop", stop, format!("is not after start = {}", self.start), "set stop later than start"));
            }
        }
        check_prio(self.priority)
    }
}

impl PsShuffleSpec {
    /// Bytes of server `j`'s chunk.
    pub fn chunk_bytes(&self, j: usize) -> u64 {
        let s = self.servers.len() as u64;
        self.gradient_bytes / s + u64::from((j as u64) < self.gradient_bytes % s)
    }

    /// Messages a chunk travels as, and the size of each but the last.
    pub fn split(&self, chunk: u64) -> (u64, u64) {
        match self.message_bytes {
            Some(m) => (chunk.div_ceil(m), m),
            None => (1, chunk),
        }
    }

    pub fn validate(&self, n_hosts: u32, threads: u16) -> Result<(), WorkloadError> {
        distinct("workers", &self.workers, n_hosts)?;
        distinct("servers", &self.servers, n_hosts)?;
        disjoint("servers", &self.servers, &self.workers, "workers")?;
        if self.iterations == 0 {
            return Err(WorkloadError::param("iterations", 0, "nothing would run", "use iterations >= 1"));
        }
        if self.gradient_bytes < self.servers.len() as u64 {
            return Err(WorkloadError::param(
                "gradient_size",
                format!("{}B", self.gradient_bytes),
                format!("is smaller than the number of servers ({})", self.servers.len()),
                "give every server at least one byte",
            ));
        }
        if self.message_bytes == Some(0) {
            return Err(WorkloadError::param("message_size", "0B", "a message carries at least 1 byte", "use e.g. \"1MiB\", or omit it"));
        }
        if self.threads_per_flow == 0 {
            return Err(WorkloadError::param("threads_per_flow", 0, "each flow needs a thread", "use threads_per_flow >= 1"));
        }
        let k = u64::from(self.threads_per_flow);
        threads_fit("threads_per_flow", self.first_thread, self.servers.len() as u64 * k, threads)
            .map_err(|e| rename(e, "servers × threads_per_flow threads on each worker"))?;
        if self.pull {
            threads_fit("threads_per_flow", self.first_thread, self.workers.len() as u64 * k, threads)
                .map_err(|e| rename(e, "workers × threads_per_flow threads on each server"))?;
        }
        check_delay("compute", &self.compute)?;
        check_prio(self.priority)
    }
}

fn rename(e: WorkloadError, what: &str) -> WorkloadError {
    match e {
        WorkloadError::Param { field, value, problem, fix } => {
            WorkloadError::Param { field, value, problem: format!("{what}: {problem}"), fix }
        }
        other => other,
    }
}

impl AppSpec {
    pub fn label(&self) -> u32 {
        match self {
            AppSpec::Rpc(r) => r.label,
            AppSpec::PsShuffle(p) => p.label,
        }
    }

    /// The transport its messages use.
    pub fn transport(&self) -> u8 {
        match self {
            AppSpec::Rpc(r) => r.transport,
            AppSpec::PsShuffle(p) => p.transport,
        }
    }

    pub fn validate(&self, n_hosts: u32, threads: u16) -> Result<(), WorkloadError> {
        match self {
            AppSpec::Rpc(r) => r.validate(n_hosts, threads),
            AppSpec::PsShuffle(p) => p.validate(n_hosts, threads),
        }
    }

    /// The (host, thread) pairs the application sends from.
    pub fn host_threads(&self) -> Vec<(u32, u16)> {
        let mut v = Vec::new();
        match self {
            AppSpec::Rpc(r) => {
                for &h in r.clients.iter().chain(&r.servers) {
                    v.extend(r.threads().map(|t| (h, t)));
                }
            }
            AppSpec::PsShuffle(p) => {
                let k = p.threads_per_flow;
                let w = p.first_thread..p.first_thread + p.servers.len() as u16 * k;
                for &h in &p.workers {
                    v.extend(w.clone().map(|t| (h, t)));
                }
                if p.pull {
                    let s = p.first_thread..p.first_thread + p.workers.len() as u16 * k;
                    for &h in &p.servers {
                        v.extend(s.clone().map(|t| (h, t)));
                    }
                }
            }
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rpc() -> RpcSpec {
        RpcSpec {
            label: 0,
            clients: vec![0],
            servers: vec![1],
            concurrency: 4,
            first_thread: 0,
            request_bytes: MEMCACHED_GET_REQUEST_BYTES,
            response_bytes: 4096 + MEMCACHED_GET_RESPONSE_HEADER_BYTES,
            service: DelayDist::default(),
            think: DelayDist::default(),
            start: SimTime::ZERO,
            stop: None,
            count: None,
            priority: 0,
            transport: 0,
        }
    }

    fn ps() -> PsShuffleSpec {
        PsShuffleSpec {
            label: 0,
            workers: vec![0, 1, 2, 3],
            servers: vec![4, 5],
            iterations: 3,
            gradient_bytes: VGG16_GRADIENT_BYTES,
            pull: false,
            per_worker: false,
            message_bytes: None,
            threads_per_flow: 1,
            first_thread: 0,
            compute: DelayDist::default(),
            start: SimTime::ZERO,
            priority: 0,
            transport: 0,
        }
    }

    #[test]
    fn rpc_errors_name_the_field() {
        assert!(rpc().validate(2, 4).is_ok());
        let cases: Vec<(RpcSpec, &str)> = vec![
            (RpcSpec { concurrency: 0, ..rpc() }, "concurrency = 0"),
            (RpcSpec { concurrency: 5, ..rpc() }, "concurrency = 5: needs threads 0..5 but hosts have 4"),
            (RpcSpec { servers: vec![0], ..rpc() }, "servers = 0: host 0 is also one of the clients"),
            (RpcSpec { servers: vec![2], ..rpc() }, "servers = 2: host 2 does not exist"),
            (RpcSpec { clients: vec![], ..rpc() }, "clients = []"),
            (RpcSpec { request_bytes: 0, ..rpc() }, "request_size = 0B"),
            (RpcSpec { count: Some(0), ..rpc() }, "count = 0"),
            (RpcSpec { priority: 9, ..rpc() }, "priority = 9"),
        ];
        for (s, want) in cases {
            let e = s.validate(2, 4).unwrap_err().to_string();
            assert!(e.starts_with(want), "{e} (want {want})");
        }
    }

    #[test]
    fn ps_chunks_are_byte_balanced_and_errors_name_the_field() {
        let p = PsShuffleSpec { gradient_bytes: 11, servers: vec![4, 5, 6], ..ps() };
        assert_eq!((0..3).map(|j| p.chunk_bytes(j)).collect::<Vec<_>>(), [4, 4, 3]);
        let p = ps();
        assert_eq!(p.chunk_bytes(0) + p.chunk_bytes(1), VGG16_GRADIENT_BYTES);
        assert_eq!(PsShuffleSpec { message_bytes: Some(1 << 20), ..ps() }.split(3 << 20 | 1), (4, 1 << 20));
        assert!(p.validate(6, 2).is_ok());
        let e = p.validate(5, 2).unwrap_err().to_string();
        assert!(e.starts_with("servers = 5: host 5 does not exist"), "{e}");
        let e = PsShuffleSpec { pull: true, ..ps() }.validate(6, 2).unwrap_err().to_string();
        assert!(e.starts_with("threads_per_flow = 4: workers × threads_per_flow"), "{e}");
        let e = PsShuffleSpec { servers: vec![3, 4], ..ps() }.validate(6, 2).unwrap_err().to_string();
        assert!(e.contains("host 3 is also one of the workers"), "{e}");
        let e = PsShuffleSpec { iterations: 0, ..ps() }.validate(6, 2).unwrap_err().to_string();
        assert!(e.starts_with("iterations = 0"), "{e}");
        let e = PsShuffleSpec { message_bytes: Some(0), ..ps() }.validate(6, 2).unwrap_err().to_string();
        assert!(e.starts_with("message_size = 0B"), "{e}");
    }
}
