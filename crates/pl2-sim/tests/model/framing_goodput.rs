//! One flow over one path: goodput equals payload / (payload + per-frame overhead) × rate.

use super::common::*;
use pl2_sim::framing::{Framing, LinkLayer};
use pl2_sim::sim::TransportConfig;
use pl2_sim::transport::raw::{RawConfig, RawHeaders};
use pl2_sim::units::{BitsPerSec, SimTime};

/// Completion time of one message of `frames` full frames.
fn completion(frames: u64, vlan: bool, headers: RawHeaders) -> u64 {
    completion_framed(frames, Framing::ethernet(vlan), headers)
}

fn completion_framed(frames: u64, framing: Framing, headers: RawHeaders) -> u64 {
    let mut net = two_hosts_one_switch(BitsPerSec::gbps(100), BitsPerSec::gbps(100));
    net.framing = framing;
    let payload = if headers == RawHeaders::Udp { 1472 } else { 1500 };
    let mut s = spec(net, vec![list(vec![msg(0, 0, 1, frames * payload)])]);
    s.transport = TransportConfig::Raw(RawConfig { headers, ..Default::default() });
    let mut sim = run(s, SimTime(u64::MAX / 2));
    sim.finish();
    let recs = sim.drain_records().messages;
    assert_eq!(recs.len(), 1);
    recs[0].finish.expect("delivered").0
}

/// Steady-state goodput from the completion times of an n- and a 2n-frame message.
fn goodput_gbps(vlan: bool, headers: RawHeaders) -> f64 {
    let n = 2000;
    let payload = if headers == RawHeaders::Udp { 1472.0 } else { 1500.0 };
    let dt = completion(2 * n, vlan, headers) - completion(n, vlan, headers);
    n as f64 * payload * 8.0 / (dt as f64 * 1e-12) / 1e9
}

#[test]
fn raw_ethernet_untagged_reaches_1500_over_1538_of_line_rate() {
    let g = goodput_gbps(false, RawHeaders::None);
    assert!((g / (100.0 * 1500.0 / 1538.0) - 1.0).abs() < 1e-6, "{g}");
}

#[test]
fn raw_ethernet_tagged_reaches_1500_over_1542_of_line_rate() {
    let g = goodput_gbps(true, RawHeaders::None);
    assert!((g / (100.0 * 1500.0 / 1542.0) - 1.0).abs() < 1e-6, "{g}");
}

#[test]
fn udp_tagged_reaches_95_46_gbps() {
    let g = goodput_gbps(true, RawHeaders::Udp);
    assert!((g / (100.0 * 1472.0 / 1542.0) - 1.0).abs() < 1e-6, "{g}");
    assert!((g - 95.46).abs() < 0.005);
}

#[test]
fn ppp_framing_reaches_1500_over_1502_of_line_rate() {
    // ns-3's point-to-point links: 2 B of PPP header per 1500 B packet, nothing else.
    let ppp = Framing { vlan_tag: false, link: LinkLayer::Ppp };
    let n = 2000;
    let dt = completion_framed(2 * n, ppp, RawHeaders::None) - completion_framed(n, ppp, RawHeaders::None);
    let g = n as f64 * 1500.0 * 8.0 / (dt as f64 * 1e-12) / 1e9;
    assert!((g / (100.0 * 1500.0 / 1502.0) - 1.0).abs() < 1e-6, "{g}");
}
