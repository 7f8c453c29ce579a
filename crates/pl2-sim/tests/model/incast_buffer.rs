//! Incast into a static per-port buffer limit (drops follow the arithmetic), and the
//! dynamic-threshold fixed points αB/(1+α) and αB/(1+2α).

use super::common::*;
use pl2_sim::config::TopologyConfig;
use pl2_sim::config::NetworkConfig;
use pl2_sim::units::{Bytes, Duration, SimTime};

const SER: u64 = 123_360;
const WIRE: u64 = 1542;

#[test]
fn incast_drops_follow_offered_minus_drained_minus_buffered() {
    let n_senders = 4u64;
    let frames = 2000u64;
    let limit = 200 * WIRE + 700;
    let mut net = NetworkConfig::default();
    net.topology = TopologyConfig::SingleRack { hosts: n_senders as u32 + 1, breakout: 1 };
    net.switch.dynamic_thresholds = false;
    net.switch.port_limit = Some(Bytes(limit));
    let rx = n_senders as u32;
    let msgs = (0..n_senders as u32).map(|s| msg(0, s, rx, frames * 1500)).collect();
    let mut sp = spec(net, vec![list(msgs)]);
    sp.metrics.window = Duration(100 * SER);
    let mut sim = run(sp, SimTime(u64::MAX / 2));
    sim.finish();
    let c = sim.counters().clone();
    let offered = n_senders * frames;
    let drained = frames; // the receiver link carries one frame per slot while they arrive
    let buffered = limit / WIRE;
    let expect = offered - drained - buffered;
    let drops = c.total_drops();
    assert!(drops.abs_diff(expect) <= n_senders, "drops {drops}, arithmetic {expect}");
    assert_eq!(c.drops[pl2_sim::metrics::DropReason::PortLimit as usize], drops);
    // Every frame that got through was delivered, back to back: the receiver link was
    // 100% busy and goodput was 1500/1542 of line rate in every full window.
    let delivered = c.packets_delivered;
    assert_eq!(delivered, offered - drops);
    let recs = sim.drain_records();
    let full: Vec<u64> = recs.goodput.iter().map(|g| g.payload_bytes).collect();
    assert!(full.len() > 10);
    for &b in &full[1..full.len() - 1] {
        assert_eq!(b, 100 * 1500, "a window of 100 slots carries 100 full payloads");
    }
}

/// `pairs` independent 2→1 incasts on one switch; returns the settled queue of each.
fn dt_settled(pairs: u32, alpha: f64, buffer: u64) -> Vec<u64> {
    let mut net = NetworkConfig::default();
    net.topology = TopologyConfig::SingleRack { hosts: 3 * pairs, breakout: 1 };
    net.switch.alpha = alpha;
    net.switch.buffer = Bytes(buffer);
    let mut msgs = Vec::new();
    for p in 0..pairs {
        let rx = 3 * p + 2;
        msgs.push(msg(0, 3 * p, rx, 20_000 * 1500));
        msgs.push(msg(0, 3 * p + 1, rx, 20_000 * 1500));
    }
    let mut sim = run(spec(net, vec![list(msgs)]), SimTime(1_000_000_000)); // 1 ms
    (0..pairs).map(|p| sim_downlink_queue(&mut sim, 3 * p + 2)).collect()
}

fn sim_downlink_queue(sim: &mut pl2_sim::sim::Simulation, host: u32) -> u64 {
    sim.port_queued(sim.host_downlink(host))
}

#[test]
fn one_congested_queue_settles_at_alpha_b_over_1_plus_alpha() {
    let b = 2_000_000u64;
    for alpha in [0.5, 1.0, 2.0] {
        let q = dt_settled(1, alpha, b)[0];
        let expect = alpha * b as f64 / (1.0 + alpha);
        assert!((q as f64 - expect).abs() <= 1542.0, "α={alpha}: {q} vs {expect}");
    }
}

#[test]
fn two_congested_queues_settle_at_alpha_b_over_1_plus_2alpha() {
    let b = 2_000_000u64;
    let alpha = 1.0;
    let expect = alpha * b as f64 / (1.0 + 2.0 * alpha);
    for q in dt_settled(2, alpha, b) {
        assert!((q as f64 - expect).abs() <= 1542.0, "{q} vs {expect}");
    }
}
