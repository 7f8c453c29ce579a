//! RDS (the PL2 paper's receiver-driven baseline): unloaded completion against the
//! ideal time, an incast that overflows the buffer, each recovery path forced by a
//! deterministic drop, the granted-bytes cap, admission order, and determinism.

use super::common::*;
use pl2_sim::config::{NetworkConfig, TopologyConfig};
use pl2_sim::metrics::Records;
use pl2_sim::sim::{FaultSpec, SimSpec, Simulation, TransportConfig};
use pl2_sim::transport::raw::RawHeaders;
use pl2_sim::transport::rds::{RdsConfig, RdsPolicy, RdsStats};
use pl2_sim::units::{BitsPerSec, Bytes, SimTime};

const MS: u64 = 1_000_000_000;
const END: SimTime = SimTime(u64::MAX / 2);

fn rack(hosts: u32) -> NetworkConfig {
    let mut net = NetworkConfig::default();
    net.topology = TopologyConfig::SingleRack { hosts, breakout: 1 };
    net
}

fn rds(net: NetworkConfig, msgs: Vec<pl2_sim::workload::MessageSpec>, cfg: RdsConfig) -> SimSpec {
    let mut sp = spec(net, vec![list(msgs)]);
    sp.transport = TransportConfig::Rds(cfg);
    sp
}

fn run_rds(sp: SimSpec) -> (Simulation, Records, RdsStats) {
    let mut sim = run(sp, END);
    sim.finish();
    let recs = sim.drain_records();
    let st = sim.module_stats().rds.unwrap_or_default();
    (sim, recs, st)
}

fn all_finished(recs: &Records, n: usize) {
    assert_eq!(recs.messages.len(), n);
    for m in &recs.messages {
        assert!(m.finish.is_some(), "message {} ({} B {}→{}) unfinished", m.id, m.size, m.src, m.dst);
    }
}

/// One round trip between two hosts of the scenario: twice a 1-byte message's ideal.
fn rtt(net: &NetworkConfig) -> u64 {
    let (_, recs, _) = run_rds(rds(net.clone(), vec![msg(0, 0, 1, 1)], RdsConfig::default()));
    2 * recs.messages[0].ideal.0
}

#[test]
fn lossless_message_completes_within_one_rtt_of_ideal() {
    for headers in [RawHeaders::None, RawHeaders::Udp] {
        let net = two_hosts_one_switch(BitsPerSec::gbps(100), BitsPerSec::gbps(100));
        let rtt = rtt(&net);
        let cfg = RdsConfig { headers, ..RdsConfig::default() };
        let (_, recs, st) = run_rds(rds(net, vec![msg(0, 0, 1, 200_000)], cfg));
        all_finished(&recs, 1);
        let m = &recs.messages[0];
        let took = m.finish.unwrap().0 - m.start.0;
        assert!(took >= m.ideal.0, "faster than ideal: {took} < {}", m.ideal.0);
        assert!(took <= m.ideal.0 + rtt, "took {took} ps, ideal {} ps, rtt {rtt} ps", m.ideal.0);
        // Raw Ethernet: 134 packets, 42 unscheduled (the first 61 KiB), 92 granted in 23
        // grants of 4. UDP (1472 B payloads): 136 packets, 43 unscheduled, 93 in 24 grants.
        assert_eq!(st.grants, if headers == RawHeaders::None { 23 } else { 24 });
        assert_eq!((st.retransmissions, st.gap_nacks, st.receiver_timeouts, st.sender_timeouts), (0, 0, 0, 0));
        assert_eq!((st.messages_sent, st.messages_received, st.done_sent), (1, 1, 1));
    }
}

#[test]
fn invalid_configuration_is_rejected() {
    for cfg in [
        RdsConfig { overcommit: 0, ..RdsConfig::default() },
        RdsConfig { grant_packets: 0, ..RdsConfig::default() },
        RdsConfig { rtt_bytes: Bytes(1000), ..RdsConfig::default() },
        RdsConfig { data_priority: 8, ..RdsConfig::default() },
    ] {
        let sp = rds(rack(2), vec![msg(0, 0, 1, 1)], cfg.clone());
        assert!(Simulation::new(sp).is_err(), "{cfg:?} accepted");
    }
}

#[test]
fn incast_beyond_the_buffer_loses_packets_and_every_message_completes() {
    // 8 senders × 200 KB: 8 × 42 unscheduled packets (504 KB) at once into a 256 KiB
    // port limit.
    let mut net = rack(9);
    net.switch.dynamic_thresholds = false;
    net.switch.port_limit = Some(Bytes(256 * 1024));
    let msgs = (0..8).map(|s| msg(0, s, 8, 200_000)).collect();
    let (sim, recs, st) = run_rds(rds(net, msgs, RdsConfig::default()));
    all_finished(&recs, 8);
    let drops = sim.counters().total_drops();
    assert!(drops > 50, "drops {drops}");
    assert!(st.retransmissions >= drops, "{st:?}, drops {drops}");
    assert!(st.gap_nacks + st.sender_timeouts + st.receiver_timeouts > 0, "{st:?}");
    assert!(st.max_outstanding_bytes <= 61 * 1024, "{st:?}");
}

fn one_message_with_drops(size: u64, drop: std::ops::Range<u32>) -> (Records, RdsStats) {
    let net = two_hosts_one_switch(BitsPerSec::gbps(100), BitsPerSec::gbps(100));
    let mut sp = rds(net, vec![msg(0, 0, 1, size)], RdsConfig::default());
    // The first message's id is 0: its data frames carry flow 0.
    sp.faults = drop.map(|seq| FaultSpec::DropNth { flow: 0, seq, times: 1 }).collect();
    let (sim, recs, st) = run_rds(sp);
    assert!(sim.counters().total_drops() > 0, "the fault dropped nothing");
    all_finished(&recs, 1);
    (recs, st)
}

#[test]
fn gap_is_nacked_at_once() {
    let (recs, st) = one_message_with_drops(200_000, 10..11);
    assert_eq!((st.gap_nacks, st.retransmissions), (1, 1), "{st:?}");
    assert_eq!((st.receiver_timeouts, st.sender_timeouts), (0, 0), "{st:?}");
    let m = &recs.messages[0];
    assert!(m.finish.unwrap().0 - m.start.0 < m.ideal.0 + 10_000_000, "recovered without a timeout");
}

#[test]
fn lost_granted_burst_is_recovered_by_the_receiver_timeout() {
    // The last grant covers packets 130..134; without them nothing reveals a gap.
    let (recs, st) = one_message_with_drops(200_000, 130..134);
    assert_eq!((st.receiver_timeouts, st.retransmissions), (1, 4), "{st:?}");
    assert_eq!((st.gap_nacks, st.sender_timeouts), (0, 0), "{st:?}");
    let m = &recs.messages[0];
    let took = m.finish.unwrap().0 - m.start.0;
    // The timer restarts at every arrival: it fires 1 ms after the last one (packet 129,
    // before the ideal finish), then a NACK–resend exchange.
    let rtt = rtt(&two_hosts_one_switch(BitsPerSec::gbps(100), BitsPerSec::gbps(100)));
    assert!((MS + m.ideal.0..MS + m.ideal.0 + rtt).contains(&took), "took {took} ps, ideal {}", m.ideal.0);
}

#[test]
fn lost_unscheduled_tail_is_recovered_by_the_sender_timeout() {
    // 20 packets, all unscheduled; the last three are lost, so no gap is visible.
    let (recs, st) = one_message_with_drops(30_000, 17..20);
    assert_eq!(st.sender_timeouts, 1, "{st:?}");
    assert_eq!((st.gap_nacks, st.receiver_timeouts, st.grants), (0, 0, 0), "{st:?}");
    // The sender cannot know which were lost: it resends all 20; 17 arrive twice.
    assert_eq!((st.retransmissions, st.duplicates), (20, 17), "{st:?}");
    let m = &recs.messages[0];
    let took = m.finish.unwrap().0 - m.start.0;
    // The timer starts when the last packet is handed over (at once: the ring holds
    // all 20); the resend of all 20 then takes the ideal time again.
    assert!((MS + m.ideal.0..MS + m.ideal.0 + 1_000_000).contains(&took), "took {took} ps, ideal {}", m.ideal.0);
}

#[test]
fn granted_but_not_received_bytes_never_exceed_the_cap() {
    // rtt_bytes 20,000: 14 unscheduled packets; grants of 4 × 1500 B, so at most three
    // grants (18,000 B) can be outstanding per sender.
    let cfg = RdsConfig { rtt_bytes: Bytes(20_000), overcommit: 2, ..RdsConfig::default() };
    let msgs = vec![msg(0, 0, 3, 1_000_000), msg(0, 0, 3, 300_000), msg(0, 1, 3, 500_000), msg(0, 2, 3, 400_000)];
    let mut net = rack(4);
    net.host.threads = 2;
    let (_, recs, st) = run_rds(rds(net, msgs, cfg));
    all_finished(&recs, 4);
    // Three full grants (18,000 B), or fewer packets plus a message's short last one.
    assert!((18_000..=20_000).contains(&st.max_outstanding_bytes), "{st:?}");
    let outstanding: Vec<f64> = recs.probes.iter().filter(|p| p.name == "rds_outstanding").map(|p| p.value).collect();
    assert!(!outstanding.is_empty());
    assert!(outstanding.iter().all(|&v| v <= 20_000.0));
}

/// Senders whose grants the receiver sent, in order, collapsed into runs.
fn grant_runs(recs: &Records) -> Vec<u32> {
    let mut runs: Vec<u32> = Vec::new();
    for p in recs.probes.iter().filter(|p| p.name == "rds_outstanding") {
        if runs.last() != Some(&p.flow) {
            runs.push(p.flow);
        }
    }
    runs
}

#[test]
fn overcommit_one_grants_one_sender_at_a_time_and_srpt_picks_the_smallest() {
    // Three senders start together; sender 0's first packet arrives first.
    let msgs = vec![msg(0, 0, 3, 600_000), msg(1_000, 1, 3, 400_000), msg(1_000, 2, 3, 200_000)];
    let (_, rr, _) = run_rds(rds(rack(4), msgs.clone(), RdsConfig::default()));
    all_finished(&rr, 3);
    assert_eq!(grant_runs(&rr), vec![0, 1, 2], "round robin: one sender at a time, in host order");
    let srpt = RdsConfig { policy: RdsPolicy::Srpt, ..RdsConfig::default() };
    let (_, sr, _) = run_rds(rds(rack(4), msgs.clone(), srpt));
    all_finished(&sr, 3);
    assert_eq!(grant_runs(&sr), vec![0, 2, 1], "SRPT: the smaller waiting message first");
    let three = RdsConfig { overcommit: 3, ..RdsConfig::default() };
    let (_, oc, _) = run_rds(rds(rack(4), msgs, three));
    assert!(grant_runs(&oc).len() > 3, "overcommit 3 interleaves grants");
}

fn poisson_run(seed: u64) -> (String, RdsStats) {
    // Any topology and host pair: two racks behind two spines.
    let mut net = NetworkConfig::default();
    net.topology = TopologyConfig::LeafSpine { leaves: 2, spines: 2, hosts_per_leaf: 4, uplink: Default::default() };
    net.switch.dynamic_thresholds = false;
    net.switch.port_limit = Some(Bytes(60_000));
    let sources = poisson_all_to_all(8, 0.5, "w3", 100_000_000, seed);
    let mut sp = spec(net, sources);
    sp.transport = TransportConfig::Rds(RdsConfig::default());
    sp.seed = seed;
    let (sim, r, st) = run_rds(sp);
    assert!(r.messages.len() > 50);
    all_finished(&r, r.messages.len());
    (format!("{:?}{:?}{:?}{:?}{:?}", r.messages, r.drops, r.probes, sim.counters(), st), st)
}

#[test]
fn same_seed_same_results_under_loss() {
    let (a, st) = poisson_run(7);
    assert!(st.retransmissions > 0, "the scenario should lose packets: {st:?}");
    assert_eq!(a, poisson_run(7).0);
    assert_ne!(a, poisson_run(8).0);
}
