//! Turns a validated [`Scenario`] into the simulator's [`SimSpec`]: resolves host sets,
//! loads size distributions and message lists, expands patterns into message lists and
//! Poisson sources into generators with their own random streams (keyed by workload
//! index and host, so the same seed gives the same arrivals under every protocol).

use crate::error::ScenarioError;
use crate::scenario::Scenario;
use crate::workload_spec::WorkloadConfig;
use pl2_sim::net::topology::Graph;
use pl2_sim::rng::SimRng;
use pl2_sim::sim::{PersistentSpec, SimSpec, Simulation, Source, StreamNext};
use pl2_sim::units::{BitsPerSec, SimTime};
use pl2_sim::workload::{
    all_to_all, incast, outcast, permutation, poisson_incasts, AppSpec, CdfFormat, DestChooser, ListOrder, MessageList, MessageSpec,
    PoissonParams, PoissonSource, PsShuffleSpec, RpcSpec, SizeCdf, WorkloadError,
};
use std::path::Path;

fn werr(path: &str, e: WorkloadError) -> ScenarioError {
    ScenarioError::field(path, "", e.to_string(), "")
}

/// Builds the simulation input, and checks it by building the model once.
pub fn compile(sc: &Scenario, base_dir: &Path) -> Result<SimSpec, ScenarioError> {
    let spec = compile_spec(sc, base_dir)?;
    // Building the model runs its own checks (topology, distributions, hosts, threads).
    Simulation::new(spec.clone()).map_err(|e| build_error(sc, e))?;
    if sc.workloads.is_empty() {
        return Err(ScenarioError::field(
            "workload",
            "",
            "at least one [[workload]]: without one nothing is sent",
            "add e.g. [[workload]] kind = \"incast\", senders = [0, 1], receiver = 2, size = \"64KiB\" (see docs/scenario-reference.md)",
        ));
    }
    Ok(spec)
}

/// A model-building error, with the simulator's `transports[i]` named as the scenario's
/// `transports.NAME`.
pub fn build_error(sc: &Scenario, e: pl2_sim::sim::BuildError) -> ScenarioError {
    let mut err = ScenarioError::from_build(e);
    if let Some(rest) = err.path.strip_prefix("transports[") {
        if let Some((i, tail)) = rest.split_once(']') {
            if let Some(name) = i.parse::<usize>().ok().and_then(|i| sc.transports.keys().nth(i)) {
                err.path = format!("transports.{name}{tail}");
            }
        }
    }
    err
}

/// The index of the transport workload `i` names (0: the default `[transport]`; named
/// ones from 1 in name order) and its configuration.
fn workload_transport<'a>(sc: &'a Scenario, i: usize, name: Option<&str>) -> Result<(u8, &'a pl2_sim::sim::TransportConfig), ScenarioError> {
    let Some(name) = name else { return Ok((0, &sc.transport)) };
    match sc.transports.iter().position(|(k, _)| k == name) {
        Some(j) => Ok((j as u8 + 1, &sc.transports[name])),
        None => {
            let known: Vec<&str> = sc.transports.keys().map(String::as_str).collect();
            Err(ScenarioError::field(
                &format!("workload[{i}].transport"),
                format!("\"{name}\""),
                if known.is_empty() { "the name of a [transports.NAME] table, and the scenario has none".to_string() } else { format!("one of {known:?}") },
                "define it as [transports.NAME], or leave transport out to use [transport]",
            ))
        }
    }
}

/// Builds the simulation input without building the model.
pub fn compile_spec(sc: &Scenario, base_dir: &Path) -> Result<SimSpec, ScenarioError> {
    let net = &sc.network;
    let graph = Graph::build(&net.topology, &net.link).map_err(|t| ScenarioError::from_build(t.into()))?;
    let n = graph.hosts;
    let host_rate = |h: u32| -> BitsPerSec {
        graph.links.iter().find(|l| l.a == h || l.b == h).map(|l| l.rate).unwrap_or(net.link.rate)
    };
    if sc.transports.len() >= pl2_sim::sim::MAX_TRANSPORTS {
        return Err(ScenarioError::field("transports", sc.transports.len(), format!("at most {} named transports", pl2_sim::sim::MAX_TRANSPORTS - 1), "merge workloads that can share a transport"));
    }
    if let Some(name) = sc.transports.keys().find(|k| k.as_str() == crate::tables::DEFAULT_TRANSPORT) {
        return Err(ScenarioError::field(&format!("transports.{name}"), name, "a name other than \"default\", which names [transport]", "rename the table"));
    }
    let end = SimTime(sc.run.duration.0);
    let mut sources = Vec::new();
    let mut persistent = Vec::new();
    let mut apps = Vec::new();
    for (i, wl) in sc.workloads.iter().enumerate() {
        let (transport, tcfg) = workload_transport(sc, i, wl.transport.as_deref())?;
        let workload = i as u16;
        let l4 = tcfg.l4();
        let w = &wl.kind;
        let at = |f: &str| format!("workload[{i}].{f}");
        let hosts = |set: &crate::workload_spec::HostSet, f: &str| {
            set.resolve(n).map_err(|e| ScenarioError::field(&at(f), "", e, "hosts are numbered from 0"))
        };
        let prio = |p: u8| {
            if p > 7 {
                Err(ScenarioError::field(&at("priority"), p, "an 802.1Q priority 0..7", ""))
            } else {
                Ok(p)
            }
        };
        let one_shot = |pairs: Vec<(u32, u32)>, size: u64, count: u32, start: SimTime, interval: u64, priority: u8| {
            let mut msgs = Vec::new();
            for c in 0..count as u64 {
                for &(s, d) in &pairs {
                    msgs.push(MessageSpec { time: SimTime(start.0 + c * interval), src: s, dst: d, size, thread: u16::MAX, priority });
                }
            }
            Source::List { msgs, next: 0, transport, workload }
        };
        match w {
            WorkloadConfig::Poisson { hosts: hs, load, sizes, sizes_format, truncate, dests, priority, start, stop } => {
                let senders = hosts(hs, "hosts")?;
                let dset = hosts(dests, "dests")?;
                let cdf = load_sizes(sizes, sizes_format.as_deref(), base_dir).map_err(|e| werr(&at("sizes"), e))?;
                let cdf = match truncate {
                    Some(t) => cdf.truncated(t.0).map_err(|e| werr(&at("truncate"), e))?,
                    None => cdf,
                };
                let stop = stop.map(|s| SimTime(s.0)).unwrap_or(end);
                for &h in &senders {
                    let others: Vec<u32> = dset.iter().copied().filter(|&d| d != h).collect();
                    if others.is_empty() {
                        return Err(ScenarioError::field(&at("dests"), format!("{dests:?}"), format!("a destination other than host {h}"), "add hosts to dests"));
                    }
                    let gen = PoissonSource::new(PoissonParams {
                        src: h,
                        load: *load,
                        nic_rate: host_rate(h),
                        sizes: cdf.clone(),
                        dests: DestChooser::List { hosts: others, order: ListOrder::Uniform },
                        start: SimTime(start.0),
                        stop,
                        framing: net.framing,
                        l4,
                        mtu_bytes: net.mtu.0,
                        thread: u16::MAX,
                        priority: prio(*priority)?,
                    })
                    .map_err(|e| werr(&at("load"), e))?;
                    let rng = SimRng::stream(sc.seed, &format!("workload{i}/host{h}"));
                    sources.push(Source::Poisson { gen: Box::new(gen), rng, pending: None, transport, workload });
                }
            }
            WorkloadConfig::Incast { senders, receiver, size, count, interval, start, priority } => {
                check_count(*count, &at("count"))?;
                let s = hosts(senders, "senders")?;
                let pairs = incast(&s, *receiver, n).map_err(|e| werr(&at("receiver"), e))?;
                check_size(size.0, &at("size"))?;
                sources.push(one_shot(pairs, size.0, *count, SimTime(start.0), interval.0, prio(*priority)?));
            }
            WorkloadConfig::PoissonIncast { hosts: hs, fan_in, size, load, start, stop, priority } => {
                let set = hosts(hs, "hosts")?;
                check_size(size.0, &at("size"))?;
                if !(load.is_finite() && *load > 0.0 && *load <= 1.0) {
                    return Err(ScenarioError::field(&at("load"), load, "a fraction of the hosts' summed link rate in (0, 1]", "e.g. 0.08"));
                }
                let capacity_bps: f64 = set.iter().map(|&h| host_rate(h).0 as f64).sum();
                let mean_gap_ps = *fan_in as f64 * size.0 as f64 * 8.0 / (load * capacity_bps) * 1e12;
                let stop = stop.map(|s| s.0).unwrap_or(end.0);
                let mut rng = SimRng::stream(sc.seed, &format!("workload{i}/poisson_incast"));
                let events = poisson_incasts(&set, *fan_in, mean_gap_ps, start.0, stop, &mut rng).map_err(|e| werr(&at("fan_in"), e))?;
                let p = prio(*priority)?;
                let msgs = events
                    .iter()
                    .flat_map(|e| e.senders.iter().map(move |&s| MessageSpec { time: SimTime(e.time_ps), src: s, dst: e.receiver, size: size.0, thread: u16::MAX, priority: p }))
                    .collect();
                sources.push(Source::List { msgs, next: 0, transport, workload });
            }
            WorkloadConfig::Outcast { sender, receivers, size, count, interval, start, priority } => {
                check_count(*count, &at("count"))?;
                let r = hosts(receivers, "receivers")?;
                let pairs = outcast(*sender, &r, n).map_err(|e| werr(&at("sender"), e))?;
                check_size(size.0, &at("size"))?;
                sources.push(one_shot(pairs, size.0, *count, SimTime(start.0), interval.0, prio(*priority)?));
            }
            WorkloadConfig::Permutation { size, start, priority } => {
                let mut rng = SimRng::stream(sc.seed, &format!("workload{i}/permutation"));
                let pairs = permutation(n, &mut rng).map_err(|e| werr(&at("kind"), e))?;
                check_size(size.0, &at("size"))?;
                sources.push(one_shot(pairs, size.0, 1, SimTime(start.0), 0, prio(*priority)?));
            }
            WorkloadConfig::AllToAll { hosts: hs, size, start, priority } => {
                let set = hosts(hs, "hosts")?;
                let pairs: Vec<(u32, u32)> = all_to_all(set.len() as u32)
                    .map_err(|e| werr(&at("hosts"), e))?
                    .into_iter()
                    .map(|(a, b)| (set[a as usize], set[b as usize]))
                    .collect();
                check_size(size.0, &at("size"))?;
                sources.push(one_shot(pairs, size.0, 1, SimTime(start.0), 0, prio(*priority)?));
            }
            WorkloadConfig::Persistent { senders, receiver, size, threads, start, priority, next } => {
                if *next == StreamNext::Release && !tcfg.holds_thread() {
                    return Err(ScenarioError::field(
                        &at("kind"),
                        "persistent",
                        "a transport that holds a sending thread until what it queued is sent (raw, pl2, rds, tcp, polo); this one takes every message whole and frees the thread at once, so a closed loop would start messages without end",
                        "set next = \"delivery\" (one message outstanding per stream), or use kind = \"list\" with a backlog released at once",
                    ));
                }
                let s = hosts(senders, "senders")?;
                incast(&s, *receiver, n).map_err(|e| werr(&at("receiver"), e))?;
                check_size(size.0, &at("size"))?;
                if *threads > net.host.threads {
                    return Err(ScenarioError::field(
                        &at("threads"),
                        threads,
                        format!("at most network.host.threads ({})", net.host.threads),
                        "raise network.host.threads",
                    ));
                }
                for &h in &s {
                    for t in 0..*threads {
                        if persistent.iter().any(|p: &PersistentSpec| p.host == h && p.thread == t) {
                            return Err(ScenarioError::field(&at("senders"), h, "a thread not already running another persistent stream", "use different senders or threads"));
                        }
                        persistent.push(PersistentSpec { host: h, thread: t, dst: *receiver, size: size.0, prio: prio(*priority)?, start: SimTime(start.0), transport, workload, next: *next });
                    }
                }
            }
            WorkloadConfig::Rpc(r) => {
                let spec = RpcSpec {
                    label: i as u32,
                    clients: hosts(&r.clients, "clients")?,
                    servers: hosts(&r.servers, "servers")?,
                    concurrency: r.concurrency,
                    first_thread: r.first_thread,
                    request_bytes: r.request_size.0,
                    response_bytes: r.response_size.0,
                    service: r.service.clone(),
                    think: r.think.clone(),
                    start: SimTime(r.start.0),
                    stop: r.stop.map(|s| SimTime(s.0)),
                    count: r.count,
                    priority: r.priority,
                    transport,
                };
                spec.validate(n, net.host.threads).map_err(|e| app_err(i, e))?;
                apps.push(AppSpec::Rpc(spec));
            }
            WorkloadConfig::PsShuffle(p) => {
                let spec = PsShuffleSpec {
                    label: i as u32,
                    workers: hosts(&p.workers, "workers")?,
                    servers: hosts(&p.servers, "servers")?,
                    iterations: p.iterations,
                    gradient_bytes: p.gradient_size.0,
                    pull: p.pull,
                    per_worker: p.barrier == crate::workload_spec::Barrier::Worker,
                    message_bytes: p.message_size.map(|b| b.0),
                    threads_per_flow: p.threads_per_flow,
                    first_thread: p.first_thread,
                    compute: p.compute.clone(),
                    start: SimTime(p.start.0),
                    priority: p.priority,
                    transport,
                };
                spec.validate(n, net.host.threads).map_err(|e| app_err(i, e))?;
                apps.push(AppSpec::PsShuffle(spec));
            }
            WorkloadConfig::List { file } => {
                let path = base_dir.join(file);
                let list = MessageList::from_file(&path).map_err(|e| werr(&at("file"), e))?;
                list.validate_hosts(n).map_err(|e| werr(&at("file"), e))?;
                sources.push(Source::List { msgs: list.into_messages(), next: 0, transport, workload });
            }
        }
    }
    Ok(SimSpec {
        net: net.clone(),
        transport: sc.transport.clone(),
        transports: sc.transports.values().cloned().collect(),
        seed: sc.seed,
        sources,
        persistent,
        apps,
        faults: sc.faults.clone(),
        metrics: sc.metrics.clone(),
    })
}

/// An application's parameter error, at the path of the field it names.
fn app_err(i: usize, e: WorkloadError) -> ScenarioError {
    match e {
        WorkloadError::Param { field, value, problem, fix } => {
            ScenarioError::field(&format!("workload[{i}].{field}"), value, problem, fix)
        }
        other => werr(&format!("workload[{i}]"), other),
    }
}

fn check_count(count: u32, path: &str) -> Result<(), ScenarioError> {
    if count == 0 {
        return Err(ScenarioError::field(path, 0, "at least 1 message per sender", "omit count for one message each"));
    }
    Ok(())
}

fn check_size(size: u64, path: &str) -> Result<(), ScenarioError> {
    if size == 0 {
        return Err(ScenarioError::field(path, "0B", "a message of at least 1 byte", ""));
    }
    Ok(())
}

/// A size distribution: built-in name, fixed size with a unit, or a file.
pub(crate) fn load_sizes(spec: &str, format: Option<&str>, base_dir: &Path) -> Result<SizeCdf, WorkloadError> {
    if let Ok(b) = spec.parse::<pl2_sim::units::Bytes>() {
        return Ok(SizeCdf::constant(b.0.max(1)));
    }
    if pl2_sim::workload::BUILTIN_NAMES.contains(&spec) {
        return SizeCdf::builtin(spec);
    }
    let fmt = match format.unwrap_or("homa") {
        "homa" => CdfFormat::Homa,
        "homa_packets" => CdfFormat::HomaPackets,
        "percent" => CdfFormat::Percent,
        other => {
            return Err(WorkloadError::param(
                "sizes_format",
                other,
                "is not a distribution file format",
                "use homa, homa_packets or percent",
            ))
        }
    };
    let path = base_dir.join(spec);
    if !path.exists() {
        return Err(WorkloadError::param(
            "sizes",
            spec,
            "is neither a built-in distribution, a size with a unit, nor an existing file",
            format!("use one of {:?}, a size like \"6KiB\", or a path", pl2_sim::workload::BUILTIN_NAMES),
        ));
    }
    SizeCdf::from_file(&path, fmt)
}
