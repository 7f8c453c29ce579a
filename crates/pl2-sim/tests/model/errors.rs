//! Bad input to the model gets a typed error naming the field, never a panic.

use super::common::*;
use pl2_sim::config::{NetworkConfig, TopologyConfig};
use pl2_sim::framing::{Framing, L4Headers};
use pl2_sim::sim::{BuildError, Simulation};
use pl2_sim::units::{BitsPerSec, SimTime};
use pl2_sim::workload::{CdfFormat, DestChooser, PoissonParams, PoissonSource, SizeCdf};

fn build_err(net: NetworkConfig) -> String {
    match Simulation::new(spec(net, vec![])) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("expected an error"),
    }
}

#[test]
fn ppp_framing_with_a_vlan_tag_is_refused() {
    let mut net = NetworkConfig::default();
    net.framing.link = pl2_sim::framing::LinkLayer::Ppp;
    let e = build_err(net);
    assert!(e.contains("framing.vlan_tag") && e.contains("vlan_tag = false"), "{e}");
}

#[test]
fn zero_hosts() {
    let mut net = NetworkConfig::default();
    net.topology = TopologyConfig::SingleRack { hosts: 0, breakout: 1 };
    assert!(build_err(net).contains("topology.hosts"));
}

#[test]
fn negative_and_zero_rates_do_not_parse() {
    let e = "-100Gbps".parse::<BitsPerSec>().unwrap_err().to_string();
    assert!(e.contains("non-negative"), "{e}");
    assert!("0Gbps".parse::<BitsPerSec>().is_err());
}

#[test]
fn malformed_cdf_names_the_line() {
    let e = SizeCdf::parse("100\n10 0.5\n5 0.4\n", CdfFormat::Homa, "mine.txt").unwrap_err().to_string();
    assert!(e.contains("mine.txt") && e.contains("line 3"), "{e}");
}

#[test]
fn overloaded_source_is_refused() {
    let e = PoissonSource::new(PoissonParams {
        src: 0,
        load: 1.2,
        nic_rate: BitsPerSec::gbps(100),
        sizes: SizeCdf::constant(1000),
        dests: DestChooser::Fixed(1),
        start: SimTime(0),
        stop: SimTime(1),
        framing: Framing::default(),
        l4: L4Headers::None,
        mtu_bytes: 1500,
        thread: 0,
        priority: 0,
    })
    .unwrap_err()
    .to_string();
    assert!(e.contains("load"), "{e}");
}

#[test]
fn messages_to_missing_hosts_and_threads() {
    let net = NetworkConfig::default();
    let e = Simulation::new(spec(net.clone(), vec![list(vec![msg(0, 0, 9, 10)])])).err().unwrap();
    assert!(matches!(e, BuildError::Invalid { ref field, .. } if field.starts_with("sources[0]")));
    let mut m = msg(0, 0, 1, 10);
    m.thread = 3;
    let e = Simulation::new(spec(net, vec![list(vec![m])])).err().unwrap().to_string();
    assert!(e.contains("host.threads"), "{e}");
}

#[test]
fn bad_alpha_and_buffer() {
    let mut net = NetworkConfig::default();
    net.switch.alpha = -1.0;
    assert!(build_err(net).contains("switch.alpha"));
    let mut net = NetworkConfig::default();
    net.switch.buffer = pl2_sim::units::Bytes(100);
    assert!(build_err(net).contains("switch.buffer"));
}
