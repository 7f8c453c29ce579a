//! Path choice over equal-cost paths: source-chosen path numbers name each path of a
//! fat tree once, round-robin spraying takes the next hop in turn, and a transport's own
//! setting overrides the switches' for its frames only.

use super::common::*;
use pl2_sim::config::{EcmpMode, NetworkConfig, TopologyConfig};
use pl2_sim::metrics::TraceEvent;
use pl2_sim::sim::{Simulation, TraceConfig};
use pl2_sim::units::SimTime;

/// k = 4: hosts 0..16, then 8 edge, 8 aggregation and 4 core switches (nodes 32..36).
const FIRST_CORE: u32 = 16 + 16;

/// One single-frame message per entry, host 0 → host 15 (another pod), 1 µs apart; raw
/// Ethernet writes the message id (0, 1, ...) in the frame's flow field.
fn sim(ecmp: EcmpMode, n: u64) -> Simulation {
    let mut net = NetworkConfig::default();
    net.topology = TopologyConfig::FatTree { k: 4 };
    net.switch.ecmp = ecmp;
    let msgs = (0..n).map(|i| msg(i * 1_000_000, 0, 15, 1000)).collect();
    let mut sp = spec(net, vec![list(msgs)]);
    sp.metrics.trace = Some(TraceConfig::default());
    run(sp, SimTime(u64::MAX / 2))
}

/// The core switch each frame crossed, by flow.
fn cores(sim: &mut Simulation) -> Vec<(u32, u32)> {
    let mut v: Vec<(u32, u32)> = sim.drain_records().trace.iter().filter(|r| r.event == TraceEvent::Arrive && r.node >= FIRST_CORE).map(|r| (r.packet.flow, r.node)).collect();
    v.sort();
    v
}

#[test]
fn source_path_numbers_name_each_inter_pod_path_once_and_repeat_with_period_four() {
    let mut s = sim(EcmpMode::Source, 8);
    let c = cores(&mut s);
    let first: Vec<u32> = c[..4].iter().map(|x| x.1).collect();
    let mut distinct = first.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), 4, "paths 0..4 cross the four cores: {c:?}");
    // Path p + 4 is path p.
    assert_eq!(c[4..].iter().map(|x| x.1).collect::<Vec<_>>(), first);
    // Path numbers differing in the ToR digit (p mod 2) leave by different aggregation
    // switches, so they reach different halves of the cores: core = agg_index × 2 + digit.
    assert_ne!(first[0] - FIRST_CORE < 2, first[1] - FIRST_CORE < 2);
}

#[test]
fn round_robin_spraying_alternates_the_uplinks() {
    let mut s = sim(EcmpMode::RoundRobin, 4);
    let c = cores(&mut s);
    // Both tiers turn: the ToR alternates aggregation switches and each aggregation
    // switch alternates its cores, so four frames take four distinct cores.
    let mut nodes: Vec<u32> = c.iter().map(|x| x.1).collect();
    nodes.sort();
    nodes.dedup();
    assert_eq!(nodes.len(), 4, "{c:?}");
}

#[test]
fn per_flow_hashing_keeps_a_flow_on_one_path() {
    let mut net = NetworkConfig::default();
    net.topology = TopologyConfig::FatTree { k: 4 };
    let mut sp = spec(net, vec![list(vec![msg(0, 0, 15, 20_000)])]);
    sp.metrics.trace = Some(TraceConfig::default());
    let mut s = run(sp, SimTime(u64::MAX / 2));
    let c = cores(&mut s);
    assert!(c.len() > 5 && c.iter().all(|x| x.1 == c[0].1), "{c:?}");
}
