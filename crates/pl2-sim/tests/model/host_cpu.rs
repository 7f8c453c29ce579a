//! Host software costs (`host.cpu`, `send_cpu_per_*`, `cpu_per_control`): hand-worked
//! completion times of unloaded messages. One CPU per host serialises every thread's
//! costs; one per thread lets threads pay them in parallel.

use super::common::*;
use pl2_sim::config::{CpuScope, NetworkConfig, TopologyConfig};
use pl2_sim::dist::DelayDist;
use pl2_sim::sim::TransportConfig;
use pl2_sim::transport::pl2::Pl2Config;
use pl2_sim::units::{BitsPerSec, Duration, SimTime};

const SER: u64 = 123_360; // 1542 B at 100 Gbps, in ps
const PROP: u64 = 100_000; // default link delay
const LAT: u64 = 350_000; // default switch latency
const CPU: u64 = 2_000_000; // per packet: far above a frame's serialisation

fn on_thread(mut m: pl2_sim::workload::MessageSpec, thread: u16) -> pl2_sim::workload::MessageSpec {
    m.thread = thread;
    m
}

/// Completion times of one full frame from h0 to h1 on each of two threads, both
/// arriving at time 0.
fn two_threads(scope: CpuScope) -> Vec<u64> {
    let mut net = two_hosts_one_switch(BitsPerSec::gbps(100), BitsPerSec::gbps(100));
    net.switch.cut_through = false;
    net.host.threads = 2;
    net.host.cpu = scope;
    net.host.send_cpu_per_packet = DelayDist::constant(Duration(CPU));
    let msgs = vec![on_thread(msg(0, 0, 1, 1500), 0), on_thread(msg(0, 0, 1, 1500), 1)];
    let mut sim = run(spec(net, vec![list(msgs)]), SimTime(u64::MAX / 2));
    sim.finish();
    let mut done: Vec<u64> = sim.drain_records().messages.iter().map(|r| r.finish.unwrap().0 - r.start.0).collect();
    done.sort_unstable();
    done
}

#[test]
fn one_host_cpu_serialises_threads_and_thread_cpus_do_not() {
    // Store and forward: CPU, uplink, propagation, pipeline, downlink, propagation.
    let path = SER + PROP + LAT + SER + PROP;
    assert_eq!(two_threads(CpuScope::Host), vec![CPU + path, 2 * CPU + path], "the second frame waits for the first's CPU time");
    // Both frames reach the NIC at CPU; the second waits one serialisation behind the first.
    assert_eq!(two_threads(CpuScope::Thread), vec![CPU + path, CPU + path + SER]);
}

#[test]
fn a_burst_pays_its_hand_over_cost_once() {
    let burst = 700_000;
    let mut net = two_hosts_one_switch(BitsPerSec::gbps(100), BitsPerSec::gbps(100));
    net.switch.cut_through = false;
    net.host.send_cpu_per_burst = DelayDist::constant(Duration(burst));
    let mut sim = run(spec(net, vec![list(vec![msg(0, 0, 1, 1500)])]), SimTime(u64::MAX / 2));
    sim.finish();
    let r = &sim.drain_records().messages[0];
    let expect = burst + SER + PROP + LAT + SER + PROP;
    assert_eq!((r.finish.unwrap().0 - r.start.0, r.ideal.0), (expect, expect));
}

/// Completion time of one unloaded 4-frame PL2 message (every burst reserved) with a
/// cost of `control` per control frame a thread sends or receives.
fn pl2_once(control: u64) -> u64 {
    let mut net = NetworkConfig::default();
    net.topology = TopologyConfig::SingleRack { hosts: 2, breakout: 1 };
    net.host.cpu = CpuScope::Thread;
    net.host.cpu_per_control = DelayDist::constant(Duration(control));
    let mut sp = spec(net, vec![list(vec![msg(0, 0, 1, 4 * 1500)])]);
    sp.transport = TransportConfig::Pl2(Pl2Config { low_load: false, ..Pl2Config::default() });
    let mut sim = run(sp, SimTime(u64::MAX / 2));
    sim.finish();
    let r = &sim.drain_records().messages[0];
    r.finish.unwrap().0 - r.start.0
}

#[test]
fn a_pl2_thread_pays_for_its_rsv_and_its_grt() {
    // On an idle switch the GRT grants the next slot at once and the sender sends on
    // its arrival, so the message is late by exactly the RSV's cost (before it leaves)
    // and the GRT's (before the burst can leave).
    let x = 3_000_000;
    assert_eq!(pl2_once(x) - pl2_once(0), 2 * x);
}

/// The records of a loaded 8-host rack (TCP and PL2 each carrying a Poisson workload)
/// with the given send latency.
fn loaded_rack(transport: TransportConfig, send_latency: DelayDist) -> (Vec<pl2_sim::metrics::MessageRecord>, Vec<pl2_sim::metrics::PortWindow>) {
    let mut net = NetworkConfig::default();
    net.topology = TopologyConfig::SingleRack { hosts: 8, breakout: 1 };
    net.host.send_latency = send_latency;
    let mut sp = spec(net, poisson_all_to_all(8, 0.6, "w3", 200_000_000, 7));
    sp.transport = transport;
    let mut sim = run(sp, SimTime(400_000_000));
    sim.finish();
    let recs = sim.drain_records();
    assert!(recs.messages.iter().filter(|m| m.finish.is_some()).count() > 20, "the workload loads the rack");
    (recs.messages, recs.ports)
}

#[test]
fn a_free_send_path_is_the_delay_line_at_zero_cost() {
    // With every send cost zero frames skip the send path's delay line and go straight
    // into the NIC queues. A uniform draw between 0 and 0 keeps them on the delay line
    // with the same (zero) delays: every message and port window must be the same.
    let zero_drawn = DelayDist::Uniform { min: Duration(0), max: Duration(0) };
    for transport in [TransportConfig::Tcp(Default::default()), TransportConfig::Pl2(Pl2Config::default())] {
        let free = loaded_rack(transport.clone(), DelayDist::default());
        let line = loaded_rack(transport, zero_drawn.clone());
        assert_eq!(free, line);
    }
}
