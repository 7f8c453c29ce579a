//! Shared scenario builders and the conservation check every test runs.

use pl2_sim::config::{CustomLink, LinkConfig, NetworkConfig, TopologyConfig};
use pl2_sim::sim::{MetricsConfig, SimSpec, Simulation, Source, TransportConfig};
use pl2_sim::sim::{ProgressClock, StopAt};
use pl2_sim::units::{BitsPerSec, SimTime};
use pl2_sim::workload::MessageSpec;

pub fn spec(net: NetworkConfig, sources: Vec<Source>) -> SimSpec {
    SimSpec {
        net,
        transport: TransportConfig::default(),
        transports: vec![],
        seed: 1,
        sources,
        persistent: vec![],
        apps: vec![],
        faults: vec![],
        metrics: MetricsConfig::default(),
    }
}

pub fn msg(time_ps: u64, src: u32, dst: u32, size: u64) -> MessageSpec {
    MessageSpec { time: SimTime(time_ps), src, dst, size, thread: u16::MAX, priority: 0 }
}

pub fn list(msgs: Vec<MessageSpec>) -> Source {
    Source::List { msgs, next: 0, transport: 0, workload: 0 }
}

/// Two hosts joined by one switch; host links may have different rates.
pub fn two_hosts_one_switch(rate0: BitsPerSec, rate1: BitsPerSec) -> NetworkConfig {
    let mut net = NetworkConfig::default();
    net.topology = TopologyConfig::Custom {
        hosts: 2,
        switches: 1,
        links: vec![
            CustomLink { a: "h0".into(), b: "s0".into(), rate: Some(rate0), delay: None },
            CustomLink { a: "h1".into(), b: "s0".into(), rate: Some(rate1), delay: None },
        ],
    };
    net.link = LinkConfig::default();
    net
}

/// Runs to completion (or `end`), checks conservation, returns the simulation.
pub fn run(spec: SimSpec, end: SimTime) -> Simulation {
    let mut sim = Simulation::new(spec).expect("valid scenario");
    sim.run(
        StopAt { end, all_delivered: true, event_budget: None },
        &mut ProgressClock::new(std::time::Duration::from_secs(3600)),
        &mut |_| true,
    );
    assert_conserved(&sim);
    sim
}

/// Every packet created is delivered, consumed by a switch program, dropped, or still
/// in flight.
pub fn assert_conserved(sim: &Simulation) {
    let c = sim.counters();
    assert_eq!(
        c.packets_created,
        c.packets_delivered + c.packets_consumed + c.total_drops() + sim.packets_in_flight(),
        "packet conservation: created {} delivered {} consumed {} dropped {} in flight {}",
        c.packets_created,
        c.packets_delivered,
        c.packets_consumed,
        c.total_drops(),
        sim.packets_in_flight()
    );
}

/// Open-loop Poisson sources on hosts 0..n, each offering `load` of a 100G link with
/// sizes from the built-in distribution `sizes`, to uniformly chosen other hosts, until
/// `stop_ps`; random streams keyed by `seed`.
pub fn poisson_all_to_all(n: u32, load: f64, sizes: &str, stop_ps: u64, seed: u64) -> Vec<Source> {
    use pl2_sim::framing::{Framing, L4Headers};
    use pl2_sim::rng::SimRng;
    use pl2_sim::workload::{DestChooser, PoissonParams, PoissonSource, SizeCdf};
    (0..n)
        .map(|h| {
            let gen = PoissonSource::new(PoissonParams {
                src: h,
                load,
                nic_rate: BitsPerSec::gbps(100),
                sizes: SizeCdf::builtin(sizes).unwrap(),
                dests: DestChooser::UniformExcept { n_hosts: n, exclude_self: true },
                start: SimTime(0),
                stop: SimTime(stop_ps),
                framing: Framing::default(),
                l4: L4Headers::None,
                mtu_bytes: 1500,
                thread: u16::MAX,
                priority: 0,
            })
            .unwrap();
            Source::Poisson { gen: Box::new(gen), rng: SimRng::stream(seed, &format!("src{h}")), pending: None, transport: 0, workload: 0 }
        })
        .collect()
}

/// Every message finished, and every payload byte counted as goodput exactly once.
pub fn all_delivered_once(recs: &pl2_sim::metrics::Records, n: usize) {
    assert_eq!(recs.messages.len(), n);
    for m in &recs.messages {
        assert!(m.finish.is_some(), "message {} ({} B {}→{}) unfinished", m.id, m.size, m.src, m.dst);
    }
    let sent: u64 = recs.messages.iter().map(|m| m.size).sum();
    let got: u64 = recs.goodput.iter().map(|g| g.payload_bytes).sum();
    assert_eq!(got, sent, "goodput bytes = bytes sent: each byte delivered exactly once");
}

/// Completion time (send call to delivery) of the `i`-th message record.
pub fn took(recs: &pl2_sim::metrics::Records, i: usize) -> u64 {
    let m = &recs.messages[i];
    m.finish.unwrap().0 - m.start.0
}
