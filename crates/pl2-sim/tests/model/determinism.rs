//! Same seed ⇒ identical results; different seeds ⇒ different samples.

use super::common::*;
use pl2_sim::config::{NetworkConfig, TopologyConfig};
use pl2_sim::framing::{Framing, L4Headers};
use pl2_sim::rng::SimRng;
use pl2_sim::sim::Source;
use pl2_sim::units::{BitsPerSec, SimTime};
use pl2_sim::workload::{DestChooser, PoissonParams, PoissonSource, SizeCdf};

fn poisson_run(seed: u64) -> String {
    let mut net = NetworkConfig::default();
    net.topology = TopologyConfig::LeafSpine { leaves: 2, spines: 2, hosts_per_leaf: 4, uplink: Default::default() };
    let sources = (0..8)
        .map(|h| {
            let gen = PoissonSource::new(PoissonParams {
                src: h,
                load: 0.5,
                nic_rate: BitsPerSec::gbps(100),
                sizes: SizeCdf::builtin("w3").unwrap(),
                dests: DestChooser::UniformExcept { n_hosts: 8, exclude_self: true },
                start: SimTime(0),
                stop: SimTime(200_000_000),
                framing: Framing::default(),
                l4: L4Headers::None,
                mtu_bytes: 1500,
                thread: u16::MAX,
                priority: 0,
            })
            .unwrap();
            Source::Poisson { gen: Box::new(gen), rng: SimRng::stream(seed, &format!("src{h}")), pending: None }
        })
        .collect();
    let mut sp = spec(net, sources);
    sp.seed = seed;
    let mut sim = run(sp, SimTime(u64::MAX / 2));
    sim.finish();
    let r = sim.drain_records();
    assert!(r.messages.len() > 100);
    format!("{:?}{:?}{:?}{:?}", r.messages, r.drops, r.ports, sim.counters())
}

#[test]
fn same_seed_same_results_different_seed_different_results() {
    let a = poisson_run(7);
    assert_eq!(a, poisson_run(7));
    assert_ne!(a, poisson_run(8));
}
