//! The latency breakdown: its seven parts add up to each message's latency exactly, and
//! on an idle network they are the hand-computed delays.

use super::common::*;
use pl2_sim::config::{NetworkConfig, TopologyConfig};
use pl2_sim::dist::DelayDist;
use pl2_sim::units::{BitsPerSec, Duration, SimTime};

#[test]
fn parts_add_up_to_the_latency_of_every_message_under_load() {
    let mut net = NetworkConfig::default();
    net.topology = TopologyConfig::LeafSpine { leaves: 2, spines: 2, hosts_per_leaf: 4, uplink: Default::default() };
    net.switch.cut_through = false;
    net.host.send_latency = DelayDist::Uniform { min: Duration::from_ns(200), max: Duration::from_ns(900) };
    net.host.recv_latency = DelayDist::Uniform { min: Duration::from_ns(300), max: Duration::from_ns(700) };
    net.host.threads = 2;
    let sources = poisson_all_to_all(8, 0.6, "w3", 300_000_000, 3);
    let mut sp = spec(net, sources);
    sp.metrics.breakdown = true;
    let mut sim = run(sp, SimTime(u64::MAX / 2));
    let recs = sim.drain_records().messages;
    let finished: Vec<_> = recs.iter().filter(|r| r.finish.is_some()).collect();
    assert!(finished.len() > 200);
    let mut queued = 0;
    for r in &finished {
        let parts = r.breakdown.expect("breakdown on");
        assert_eq!(parts.iter().sum::<u64>(), r.finish.unwrap().0 - r.start.0, "message {}", r.id);
        queued += (parts[0] + parts[2] + parts[3] > 0) as usize;
    }
    assert!(queued > 10, "at 60% load some messages must wait somewhere");
}

#[test]
fn an_idle_message_splits_into_the_hand_computed_delays() {
    let mut net = two_hosts_one_switch(BitsPerSec::gbps(100), BitsPerSec::gbps(100));
    net.switch.cut_through = true;
    net.host.send_latency = DelayDist::constant(Duration::from_ns(700));
    net.host.recv_latency = DelayDist::constant(Duration::from_ns(900));
    let mut sp = spec(net, vec![list(vec![msg(0, 0, 1, 1500)])]);
    sp.metrics.breakdown = true;
    let mut sim = run(sp, SimTime(u64::MAX / 2));
    let r = &sim.drain_records().messages[0];
    // Cut-through: the first hop's wire part ends at the first bit (propagation only);
    // the last hop's ends at the last bit (serialisation + propagation).
    let ser = 123_360;
    assert_eq!(r.breakdown, Some([0, 700_000, 0, 0, 100_000 + ser + 100_000, 350_000, 900_000]));
}
