//! Same seed ⇒ identical results; different seeds ⇒ different samples.

use super::common::*;
use pl2_sim::config::{NetworkConfig, TopologyConfig};
use pl2_sim::units::SimTime;

fn poisson_run(seed: u64) -> String {
    let mut net = NetworkConfig::default();
    net.topology = TopologyConfig::LeafSpine { leaves: 2, spines: 2, hosts_per_leaf: 4, uplink: Default::default() };
    let sources = poisson_all_to_all(8, 0.5, "w3", 200_000_000, seed);
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
