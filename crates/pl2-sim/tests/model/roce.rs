//! RoCE with DCQCN through the network: go-back-N and selective repeat recovering a
//! dropped packet on a hand-worked timeline at 100 Gbps, a lost tail recovered by the
//! timeout, an incast on one switch with RED marking where the senders' rates converge
//! (every byte delivered once), and determinism.

use super::common::*;
use pl2_sim::config::{EcnConfig, NetworkConfig, TopologyConfig};
use pl2_sim::metrics::Records;
use pl2_sim::sim::{FaultSpec, ProgressClock, SimSpec, Simulation, StopAt, TransportConfig};
use pl2_sim::transport::roce::{LossRecovery, RoceConfig, RocePreset, RoceStats};
use pl2_sim::units::{BitsPerSec, Bytes, Duration, SimTime};
use pl2_sim::workload::MessageSpec;

const END: SimTime = SimTime(u64::MAX / 2);
/// A full frame (1456 B payload + 44 B RoCEv2 headers + 42 B tagged Ethernet framing,
/// 1542 B) at 100 Gbps: 12,336 bit × 10 ps.
const SER: u64 = 123_360;
/// A header-only frame (44 B RoCEv2 headers + 22 B Ethernet = 66 B, + 20 B preamble and
/// gap = 86 B) at 100 Gbps.
const CTRL: u64 = 6_880;
/// Default link delay and switch pipeline latency.
const PROP: u64 = 100_000;
const LAT: u64 = 350_000;
const MP: u64 = 1456;

/// One frame from one host to the other through the store-and-forward switch.
const fn hop2(ser: u64) -> u64 {
    2 * ser + 2 * PROP + LAT
}

fn pair() -> NetworkConfig {
    let mut net = two_hosts_one_switch(BitsPerSec::gbps(100), BitsPerSec::gbps(100));
    net.switch.cut_through = false;
    net
}

fn roce(net: NetworkConfig, msgs: Vec<MessageSpec>, cfg: RoceConfig) -> SimSpec {
    let mut sp = spec(net, vec![list(msgs)]);
    sp.transport = TransportConfig::Roce(cfg);
    sp
}

fn run_roce(sp: SimSpec) -> (Simulation, Records, RoceStats) {
    let mut sim = run(sp, END);
    sim.finish();
    let recs = sim.drain_records();
    let st = sim.module_stats().roce.unwrap_or_default();
    (sim, recs, st)
}

fn ten_packets(cfg: RoceConfig, faults: Vec<FaultSpec>) -> (Records, RoceStats) {
    let mut sp = roce(pair(), vec![msg(0, 0, 1, 10 * MP)], cfg);
    sp.faults = faults;
    let (sim, recs, st) = run_roce(sp);
    assert!(faults_dropped(&sim), "the fault dropped nothing");
    all_delivered_once(&recs, 1);
    (recs, st)
}

fn faults_dropped(sim: &Simulation) -> bool {
    sim.counters().total_drops() > 0
}

#[test]
fn an_unloaded_message_goes_at_line_rate() {
    // Ten frames back to back, the last one crossing the switch alone: 9 SER + hop2(SER).
    let (_, recs, st) = run_roce(roce(pair(), vec![msg(0, 0, 1, 10 * MP)], RoceConfig::default()));
    all_delivered_once(&recs, 1);
    assert_eq!(took(&recs, 0), 9 * SER + hop2(SER));
    // The run stops at the delivery, so the last ACKs are still on their way.
    assert_eq!((st.data_sent, st.retransmissions, st.acks_sent, st.cnps_sent), (10, 0, 10, 0), "{st:?}");
}

/// A send latency delays every frame by itself and caps nothing: with 224 ns from the
/// pacer to the NIC (the PL2 testbed's send path) ten frames start at 224,000 + k × SER
/// ps, back to back at line rate, and the message takes 224,000 ps longer than without.
/// (One frame per hand-over would start them SER + 224,000 ps apart: 35 % of the line.)
#[test]
fn a_send_latency_delays_frames_without_capping_the_rate() {
    let mut net = pair();
    net.host.send_latency = pl2_sim::dist::DelayDist::constant(Duration(224_000));
    let mut sp = roce(net, vec![msg(0, 0, 1, 10 * MP)], RoceConfig::default());
    sp.metrics.trace = Some(pl2_sim::sim::TraceConfig::default());
    let (_, recs, st) = run_roce(sp);
    all_delivered_once(&recs, 1);
    assert_eq!(took(&recs, 0), 224_000 + 9 * SER + hop2(SER));
    let starts: Vec<u64> = recs
        .trace
        .iter()
        .filter(|r| r.event == pl2_sim::metrics::TraceEvent::Tx && r.node == 0 && r.packet.kind == pl2_sim::packet::PktKind::Data)
        .map(|r| r.time.0)
        .collect();
    assert_eq!(starts, (0..10).map(|k| 224_000 + k * SER).collect::<Vec<_>>());
    assert_eq!((st.data_sent, st.retransmissions), (10, 0));
}

#[test]
fn go_back_n_resends_from_the_lost_packet_on_its_nack() {
    // Packet 3 is lost. Packet 4 starts at 4 SER = 493.44 ns and reaches h1 at
    // 4 SER + hop2(SER) = 1,290.16 ns: a gap, so h1 drops it and NACKs PSN 3; the NACK
    // reaches h0 after hop2(CTRL) = 563.76 ns, at 1,853.92 ns. By then h0 has sent all ten,
    // so it rewinds and resends 3..9 (7 frames) back to back; 9 arrives
    // 6 SER + hop2(SER) after the rewind. Packets 5..9 of the first round arrive out of
    // order too, and are dropped without another NACK (same PSN within nack_interval).
    let (recs, st) = ten_packets(RoceConfig::default(), vec![FaultSpec::DropNth { flow: 0, seq: 3, times: 1 }]);
    let rewind = 4 * SER + hop2(SER) + hop2(CTRL);
    assert_eq!(rewind, 1_853_920);
    assert_eq!(took(&recs, 0), rewind + 6 * SER + hop2(SER));
    assert_eq!(took(&recs, 0), 3_390_800);
    assert_eq!((st.nacks_sent, st.nacks_received, st.go_back_n_rewinds, st.retransmissions, st.out_of_order), (1, 1, 1, 7, 6), "{st:?}");
    assert_eq!((st.timeouts, st.duplicates), (0, 0), "{st:?}");
}

#[test]
fn selective_repeat_resends_only_the_lost_packet() {
    // Same loss: the receiver keeps 4..9, h0 resends 3 alone at 1,853.92 ns, and its arrival
    // completes the message.
    let sr = RoceConfig { loss_recovery: LossRecovery::SelectiveRepeat, ..RoceConfig::default() };
    let (recs, st) = ten_packets(sr, vec![FaultSpec::DropNth { flow: 0, seq: 3, times: 1 }]);
    assert_eq!(took(&recs, 0), 4 * SER + hop2(SER) + hop2(CTRL) + hop2(SER));
    assert_eq!((st.nacks_sent, st.retransmissions, st.go_back_n_rewinds, st.out_of_order), (1, 1, 0, 6), "{st:?}");
}

#[test]
fn a_lost_tail_is_resent_after_the_timeout() {
    // Packet 9 is lost: no gap shows. The last ACK (of PSN 8) restarts the local ACK
    // timeout (default 4.096 µs × 2^14 = 67,108,864,000 ps) when it reaches h0 at 8 SER +
    // hop2(SER) + hop2(CTRL) = 2,347.36 ns; then 9 is resent.
    const RTO: u64 = 67_108_864_000;
    assert_eq!(RoceConfig::default().rto, Duration(RTO));
    let (recs, st) = ten_packets(RoceConfig::default(), vec![FaultSpec::DropNth { flow: 0, seq: 9, times: 1 }]);
    assert_eq!(took(&recs, 0), 8 * SER + hop2(SER) + hop2(CTRL) + RTO + hop2(SER));
    assert_eq!((st.timeouts, st.retransmissions, st.nacks_sent), (1, 1, 0), "{st:?}");
    // Any other timeout, e.g. 1 ms.
    let (recs, _) = ten_packets(RoceConfig { rto: Duration::from_ms(1), ..RoceConfig::default() }, vec![FaultSpec::DropNth { flow: 0, seq: 9, times: 1 }]);
    assert_eq!(took(&recs, 0), 8 * SER + hop2(SER) + hop2(CTRL) + 1_000_000_000 + hop2(SER));
    // A lost last ACK: the timeout resends PSN 9, whose duplicate is ACKed again. The
    // run goes on past the delivery to see it.
    let mut sp = roce(pair(), vec![msg(0, 0, 1, 10 * MP)], RoceConfig::default());
    sp.faults = vec![FaultSpec::DropControl { flow: 0, seq: 10, times: 1 }];
    let mut sim = Simulation::new(sp).unwrap();
    sim.run(
        StopAt { end: SimTime(2 * RTO), all_delivered: false, event_budget: None },
        &mut ProgressClock::new(std::time::Duration::from_secs(60)),
        &mut |_| true,
    );
    assert_conserved(&sim);
    let st = sim.module_stats().roce.unwrap();
    assert_eq!((st.timeouts, st.retransmissions, st.duplicates, st.messages_acked), (1, 1, 1, 1), "{st:?}");
}

#[test]
fn with_no_timeout_a_lost_tail_is_never_resent() {
    // rto = 0 (HPCC's simulator, InfiniBand's timeout 0): only NACKs recover, and a lost
    // last packet leaves no gap to NACK.
    let mut sp = roce(pair(), vec![msg(0, 0, 1, 10 * MP)], RoceConfig { rto: Duration(0), ..RoceConfig::default() });
    sp.faults = vec![FaultSpec::DropNth { flow: 0, seq: 9, times: 1 }];
    let mut sim = Simulation::new(sp).unwrap();
    sim.run(
        StopAt { end: SimTime(1_000_000_000_000), all_delivered: true, event_budget: None },
        &mut ProgressClock::new(std::time::Duration::from_secs(60)),
        &mut |_| true,
    );
    assert_conserved(&sim);
    let st = sim.module_stats().roce.unwrap();
    assert_eq!((st.timeouts, st.retransmissions, st.messages_received, st.messages_acked), (0, 0, 0, 0), "{st:?}");
}

/// `n` senders each send `size` bytes to host `n` at once, through one switch at
/// 100 Gbps with RED marking at dequeue (the paper's Kmin 5 KB, Kmax 200 KB, Pmax 1%).
fn incast(n: u32, size: u64, cfg: RoceConfig, seed: u64) -> (Simulation, Records, RoceStats) {
    let mut net = NetworkConfig { topology: TopologyConfig::SingleRack { hosts: n + 1, breakout: 1 }, ..NetworkConfig::default() };
    net.link.rate = BitsPerSec::gbps(100);
    net.link.delay = Duration::from_ns(1000);
    net.switch.ecn = EcnConfig::Red { min: Bytes(5_000), max: Bytes(200_000), p_max: 0.01, at_dequeue: true };
    let msgs = (0..n).map(|s| msg(0, s, n, size)).collect();
    let mut sp = roce(net, msgs, cfg);
    sp.seed = seed;
    run_roce(sp)
}

/// The mean of flow `f`'s rate probes (Gbps) between `from` and `to`.
fn mean_rate(recs: &Records, f: u32, from: u64, to: u64) -> f64 {
    let v: Vec<f64> =
        recs.probes.iter().filter(|p| p.name == "roce_rate_bps" && p.flow == f && (from..to).contains(&p.time.0)).map(|p| p.value / 1e9).collect();
    assert!(!v.is_empty(), "flow {f} changed its rate between {from} and {to} ps");
    v.iter().sum::<f64>() / v.len() as f64
}

/// Four 4 MB flows into one 100 Gbps port. Every byte arrives once, nothing is dropped
/// (the 12 MiB buffer holds the first burst), equal flows started together finish
/// within 20% of each other, and (`converge`) in the second half of the time before the
/// first finishes, each flow's mean rate is within 25% of every other's. Returns the
/// sum of those means (Gbps) and the last completion (ps).
fn incast_shares(cfg: RoceConfig, label: &str, converge: bool) -> (f64, u64) {
    let (sim, recs, st) = incast(4, 4_000_000, cfg.clone(), 1);
    all_delivered_once(&recs, 4);
    let dcqcn = sim.module_stats().layers.dcqcn.expect("RoCE runs over the DCQCN layer");
    assert!(st.cnps_sent > 0 && dcqcn.cnps_received > 0 && dcqcn.rate_decreases > 0, "{label}: {st:?} {dcqcn:?}");
    if !cfg.resolve(BitsPerSec::gbps(100)).unwrap().dcqcn.cnp_on_ack {
        // CNP frames are conserved: every one the receivers sent reached the senders'
        // layer (nothing is lost), which took it in or found its flow finished, and none
        // reached RoCE (whose stale count would have taken it).
        assert_eq!(st.cnps_sent, dcqcn.cnps_received + dcqcn.stale_cnps, "{label}");
        assert_eq!(st.stale_control, 0, "{label}");
    }
    assert_eq!(sim.counters().total_drops(), 0, "{label}");
    let fct: Vec<u64> = (0..4).map(|i| took(&recs, i)).collect();
    let (lo, hi) = (*fct.iter().min().unwrap(), *fct.iter().max().unwrap());
    assert!(lo * 10 > hi * 8, "{label}: completion times {fct:?} differ by more than 20%");
    let means: Vec<f64> = (0..4).map(|f| mean_rate(&recs, f, lo / 2, lo)).collect();
    let (a, b) = (means.iter().cloned().fold(f64::MAX, f64::min), means.iter().cloned().fold(0.0, f64::max));
    assert!(!converge || b < 1.25 * a, "{label}: mean rates {means:?} Gbps");
    (means.iter().sum(), hi)
}

#[test]
fn an_incast_with_red_marking_converges_and_delivers_every_byte_once() {
    // 16 MB at line rate is 10,992 frames × SER = 1.356 ms of frames.
    let ideal = 4 * 4_000_000u64.div_ceil(MP) * SER;
    // The paper's parameters: α stays near 1 (g = 1/256, K = 55 µs), so the four flows
    // cut together at each CNP (every 50 µs) down to 3.125 Gbps before the queue drains;
    // with B = 10 MB the byte counter never completes a stage on a 4 MB flow, so after
    // five fast-recovery steps they climb by R_AI = 40 Mbps per 55 µs: equal, and slow.
    let (sum, hi) = incast_shares(RoceConfig::default(), "dcqcn_paper", true);
    assert!(sum < 50.0 && hi > 2 * ideal, "sum {sum} Gbps, last {hi} ps");
    // HPCC's: cut every 4 µs while marked ACKs arrive (to the 1 Gbps floor), recover
    // after 300 µs by fast recovery to half-way to the 100 Gbps target, then hyper
    // increase: the flows share the port about evenly and nearly fill it.
    let (sum, hi) = incast_shares(RoceConfig { preset: RocePreset::HpccMellanox, ..RoceConfig::default() }, "hpcc_mellanox", true);
    assert!(sum > 80.0 && hi < 3 * ideal / 2, "sum {sum} Gbps, last {hi} ps");
    // With an 8 µs window (≈ the base RTT, 100 KB) the window, not the rate, bounds a flow.
    let win = RoceConfig { preset: RocePreset::HpccMellanoxWin, window: Some(Duration::from_us(8)), ..RoceConfig::default() };
    let (_, hi) = incast_shares(win, "hpcc_mellanox_win", false);
    assert!(hi < 3 * ideal / 2, "last {hi} ps");
    incast_shares(RoceConfig { preset: RocePreset::SfcSeed, ..RoceConfig::default() }, "sfc_seed", true);
}

#[test]
fn same_seed_same_results() {
    let text = |seed| {
        let (sim, r, st) = incast(4, 1_000_000, RoceConfig::default(), seed);
        format!("{:?}{:?}{:?}{:?}{:?}", r.messages, r.drops, r.probes, sim.counters(), st)
    };
    assert_eq!(text(7), text(7));
}

#[test]
fn invalid_configuration_is_rejected_naming_the_field() {
    for (cfg, field) in [
        (RoceConfig { data_priority: 8, ..RoceConfig::default() }, "data_priority"),
        (RoceConfig { control_priority: 3, ..RoceConfig::default() }, "control_priority"),
        (RoceConfig { preset: RocePreset::HpccMellanoxWin, ..RoceConfig::default() }, "window"),
        (RoceConfig { tx_pipeline_frames: Some(0), ..RoceConfig::default() }, "tx_pipeline_frames"),
    ] {
        let err = Simulation::new(roce(pair(), vec![msg(0, 0, 1, 1)], cfg.clone())).err().map(|e| e.to_string());
        assert!(err.as_deref().is_some_and(|e| e.contains(field)), "{cfg:?}: {err:?}");
    }
}
