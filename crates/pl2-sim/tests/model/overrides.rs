//! Per-element overrides and breakout ports change exactly the elements they select.

use super::common::*;
use pl2_sim::config::{NetworkConfig, TopologyConfig};
use pl2_sim::net::overrides::Override;
use pl2_sim::sim::Simulation;
use pl2_sim::units::{BitsPerSec, Bytes, Duration, SimTime};

const SER100: u64 = 123_360;
const PROP: u64 = 100_000;
const LAT: u64 = 350_000;

fn ov(select: &str) -> Override {
    Override {
        select: select.into(),
        buffer: None,
        dynamic_thresholds: None,
        alpha: None,
        port_limit: None,
        ecn: None,
        latency: None,
        cut_through: None,
        queue: None,
        sfc: None,
        rate: None,
        delay: None,
    }
}

fn one_frame_latency(net: NetworkConfig, src: u32, dst: u32) -> u64 {
    let mut sim = run(spec(net, vec![list(vec![msg(0, src, dst, 1500)])]), SimTime(u64::MAX / 2));
    sim.finish();
    sim.drain_records().messages[0].finish.unwrap().0
}

#[test]
fn a_link_override_slows_only_that_link() {
    let mut net = NetworkConfig::default();
    net.topology = TopologyConfig::SingleRack { hosts: 3, breakout: 1 };
    let mut o = ov("s0-h1");
    o.rate = Some(BitsPerSec::gbps(25));
    o.delay = Some(Duration::from_ns(500));
    net.overrides = vec![o];
    // h0 → h1: cut-through is allowed (25G out ≤ 100G in); the downlink serialises at 25G.
    assert_eq!(one_frame_latency(net.clone(), 0, 1), PROP + LAT + 4 * SER100 + 500_000);
    // h0 → h2 is untouched.
    assert_eq!(one_frame_latency(net, 0, 2), PROP + LAT + SER100 + PROP);
}

#[test]
fn a_switch_override_changes_its_latency_and_cut_through() {
    let mut net = NetworkConfig::default();
    net.topology = TopologyConfig::SingleRack { hosts: 2, breakout: 1 };
    let mut o = ov("tier:tor");
    o.latency = Some(pl2_sim::dist::DelayDist::constant(Duration::from_ns(1000)));
    o.cut_through = Some(false);
    net.overrides = vec![o];
    assert_eq!(one_frame_latency(net, 0, 1), SER100 + PROP + 1_000_000 + SER100 + PROP);
}

#[test]
fn breakout_splits_the_port_rate_into_lanes() {
    let mut net = NetworkConfig::default();
    net.topology = TopologyConfig::SingleRack { hosts: 8, breakout: 4 };
    // Every host link is a 25G lane: 1542 B takes 4 × 123.36 ns on each side.
    assert_eq!(one_frame_latency(net, 0, 5), PROP + LAT + 4 * SER100 + PROP);
}

#[test]
fn selectors_that_match_nothing_name_the_override() {
    let mut net = NetworkConfig::default();
    let mut o = ov("s7");
    o.buffer = Some(Bytes(1 << 20));
    net.overrides = vec![ov("all"), o];
    let e = Simulation::new(spec(net, vec![])).err().unwrap().to_string();
    assert!(e.contains("override[1].select"), "{e}");
}

#[test]
fn a_scheduled_rate_change_applies_from_its_time() {
    use pl2_sim::sim::FaultSpec;
    let mut net = NetworkConfig::default();
    net.topology = TopologyConfig::SingleRack { hosts: 2, breakout: 1 };
    // Two single-frame messages, 10 µs apart; the downlink drops to 25G at 5 µs.
    let mut sp = spec(net, vec![list(vec![msg(0, 0, 1, 1500), msg(10_000_000, 0, 1, 1500)])]);
    sp.faults = vec![FaultSpec::LinkRate { a: "s0".into(), b: "h1".into(), at: Duration::from_us(5), rate: BitsPerSec::gbps(25) }];
    let mut sim = run(sp, SimTime(u64::MAX / 2));
    let mut m = sim.drain_records().messages;
    m.sort_by_key(|r| r.id);
    assert_eq!(m[0].finish.unwrap().0, PROP + LAT + SER100 + PROP);
    // After the change the uplink (also 25G now) is the slower input: cut-through holds.
    assert_eq!(m[1].finish.unwrap().0 - 10_000_000, 4 * SER100 + PROP + LAT + 4 * SER100 + PROP - 4 * SER100);
}

#[test]
fn a_scheduled_buffer_change_changes_admission() {
    use pl2_sim::sim::FaultSpec;
    let mut net = NetworkConfig::default();
    net.topology = TopologyConfig::SingleRack { hosts: 3, breakout: 1 };
    net.switch.dynamic_thresholds = false;
    let msgs = vec![msg(0, 0, 2, 300 * 1500), msg(0, 1, 2, 300 * 1500)];
    let base = run(spec(net.clone(), vec![list(msgs.clone())]), SimTime(u64::MAX / 2));
    assert_eq!(base.counters().total_drops(), 0, "12 MiB holds the whole 2-to-1 burst");
    let mut sp = spec(net, vec![list(msgs)]);
    sp.faults = vec![FaultSpec::SwitchBuffer { switch: 0, at: Duration::ZERO, buffer: None, port_limit: Some(Bytes(50 * 1542)) }];
    let limited = run(sp, SimTime(u64::MAX / 2));
    assert!(limited.counters().drops[pl2_sim::metrics::DropReason::PortLimit as usize] > 100);
}
