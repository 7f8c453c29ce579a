//! The per-frame trace follows a frame hop by hop, and tracing changes no result.

use super::common::*;
use pl2_sim::config::{NetworkConfig, TopologyConfig};
use pl2_sim::metrics::TraceEvent;
use pl2_sim::sim::TraceConfig;
use pl2_sim::units::SimTime;

fn scenario(trace: Option<TraceConfig>) -> pl2_sim::sim::SimSpec {
    let mut net = NetworkConfig::default();
    net.topology = TopologyConfig::SingleRack { hosts: 3, breakout: 1 };
    let mut sp = spec(net, vec![list(vec![msg(0, 0, 2, 3000), msg(0, 1, 2, 1500)])]);
    sp.metrics.trace = trace;
    sp
}

#[test]
fn a_traced_flow_shows_tx_and_arrival_at_every_hop_in_time_order() {
    let mut sim = run(scenario(Some(TraceConfig { flows: vec![0], ..Default::default() })), SimTime(u64::MAX / 2));
    let t = sim.drain_records().trace;
    // Message 0 has two frames; each: tx at h0, arrive at s0, tx at s0, arrive at h2.
    assert_eq!(t.len(), 8);
    assert!(t.iter().all(|r| r.packet.flow == 0));
    for seq in 0..2 {
        let ev: Vec<(TraceEvent, u32)> = t.iter().filter(|r| r.packet.seq == seq).map(|r| (r.event, r.node)).collect();
        assert_eq!(ev, vec![(TraceEvent::Tx, 0), (TraceEvent::Arrive, 3), (TraceEvent::Tx, 3), (TraceEvent::Arrive, 2)]);
    }
    assert!(t.windows(2).all(|w| w[0].time <= w[1].time));
}

#[test]
fn tracing_changes_no_result() {
    let mut a = run(scenario(None), SimTime(u64::MAX / 2));
    let mut b = run(scenario(Some(TraceConfig::default())), SimTime(u64::MAX / 2));
    assert_eq!(a.drain_records().messages, b.drain_records().messages);
    assert_eq!(a.counters(), b.counters());
}
