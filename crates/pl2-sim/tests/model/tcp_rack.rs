//! RACK-TLP (RFC 8985, `rack_tlp = true`), hand-worked to the picosecond from the
//! connection's own observable times: a tail loss is repaired by the loss probe exactly
//! one PTO (§7.2: 2·SRTT, plus the delayed-ACK timer with one segment out) after the
//! last ACK, where RFC 6675 alone waits for the RTO, and the ACK beyond the resent probe
//! counts the repaired loss (§7.4.2); a loss too close to the tail for three duplicate
//! ACKs is marked by RACK's reordering timer exactly min_RTT / 4 after the SACK that
//! shows a later segment arrived (§6.2 steps 4-5); under random loss every message is
//! delivered, nothing is created or lost (conservation, `common::run`) and runs repeat.

use super::common::*;
use pl2_sim::config::NetworkConfig;
use pl2_sim::metrics::Records;
use pl2_sim::sim::{FaultSpec, SimSpec, Simulation, TransportConfig};
use pl2_sim::transport::tcp::wire::flow_id;
use pl2_sim::transport::tcp::{TcpConfig, TcpStats};
use pl2_sim::units::{BitsPerSec, Bytes, SimTime};

const END: SimTime = SimTime(u64::MAX / 2);
const MSS: u64 = 1460;
const US: u64 = 1_000_000;
const MS: u64 = 1_000_000_000;

fn rack() -> TcpConfig {
    TcpConfig { rack_tlp: true, ..TcpConfig::default() }
}

/// One flow 0 → 1 over a 100 Gbps switch carrying `msgs`, with segment `drop` lost once.
fn run_flow(cfg: TcpConfig, msgs: Vec<pl2_sim::workload::MessageSpec>, drop: u64) -> (Records, TcpStats) {
    let mut sp: SimSpec = spec(two_hosts_one_switch(BitsPerSec::gbps(100), BitsPerSec::gbps(100)), vec![list(msgs)]);
    sp.transport = TransportConfig::Tcp(cfg);
    sp.faults = vec![FaultSpec::DropNth { flow: flow_id(0, 1, 0), seq: (drop * MSS) as u32, times: 1 }];
    let mut sim: Simulation = run(sp, END);
    assert_eq!(sim.counters().total_drops(), 1, "the fault dropped one segment");
    sim.finish();
    let recs = sim.drain_records();
    assert!(recs.messages.iter().all(|m| m.finish.is_some()), "every message delivered");
    let st = sim.module_stats().tcp.unwrap_or_default();
    (recs, st)
}

/// (time, value) of a probe, in order.
fn probe(recs: &Records, name: &str) -> Vec<(u64, f64)> {
    recs.probes.iter().filter(|p| p.name == name).map(|p| (p.time.0, p.value)).collect()
}

/// When the first retransmission left (the `tcp_retx` probe is published at once).
fn first_retx(recs: &Records) -> u64 {
    probe(recs, "tcp_retx").iter().find(|p| p.1 >= 1.0).expect("a retransmission").0
}

/// The last ACK before `t` (every ACK publishes `tcp_cwnd`) and the SRTT it left, in ps.
fn last_ack_before(recs: &Records, t: u64) -> (u64, u64) {
    let at = probe(recs, "tcp_cwnd").iter().filter(|p| p.0 < t).last().expect("ACKs before").0;
    let srtt = probe(recs, "tcp_srtt_us").iter().rfind(|p| p.0 == at).expect("srtt published with it").1;
    (at, (srtt * 1e6).round() as u64)
}

#[test]
fn a_tail_loss_is_repaired_by_the_probe_exactly_one_pto_after_the_last_ack() {
    // `n` segments, the last one lost; a 1-byte message at 20 ms carries new data past
    // the probe, whose ACK then shows the probe repaired a loss (and one at 40 ms keeps
    // the run going until that ACK is back: a run ends when every message is delivered).
    let msgs = |n: u64| vec![msg(0, 0, 1, n * MSS), msg(20 * MS, 0, 1, 1), msg(40 * MS, 0, 1, 1)];
    let (recs, st) = run_flow(TcpConfig::default(), msgs(21), 20);
    let rto_at = first_retx(&recs);
    let (ack, _) = last_ack_before(&recs, rto_at);
    assert_eq!((st.timeouts, rto_at - ack), (1, MS), "without RACK-TLP: the 1 ms RTO after the last ACK");
    // (segments, delayed ACKs, segments out after the last ACK before the probe):
    // 21 with delayed ACKs: segments 0-19 are ACKed in pairs, the lost 20th alone is out;
    // 21 without: each segment is ACKed, again only the 20th is out; 20 with delayed
    // ACKs: the ACK of segment 18 waits for the receiver's 40 µs timer, so the last ACK
    // before the probe covers 0-17 and two segments are out.
    for (n, delayed_ack, out) in [(21, true, 1), (21, false, 1), (20, true, 2)] {
        let cfg = TcpConfig { delayed_ack, ..rack() };
        let (recs, st) = run_flow(cfg.clone(), msgs(n), n - 1);
        assert_eq!((st.timeouts, st.loss_probes, st.retransmissions, st.fast_recoveries), (0, 1, 1, 0), "{n} {delayed_ack}: {st:?}");
        let probe_at = first_retx(&recs);
        let (ack, srtt) = last_ack_before(&recs, probe_at);
        // PTO = 2·SRTT, plus WCDelAckT (the receiver's 40 µs delayed-ACK timer) when one
        // segment is out and the receiver delays ACKs (§7.2).
        let wc_del_ack = if delayed_ack && out == 1 { cfg.delayed_ack_timeout.0 } else { 0 };
        assert_eq!(probe_at - ack, 2 * srtt + wc_del_ack, "{n} {delayed_ack}: last ACK at {ack} ps, SRTT {srtt} ps");
        assert!(2 * srtt + wc_del_ack < MS / 10, "well before the RTO");
        // The probe resent the last segment (no new data was waiting); its ACK covers
        // exactly TLP.end_seq, which is ambiguous, and the next message's ACK goes beyond:
        // one repaired loss (§7.4.2), answered by a window cut.
        assert_eq!(st.loss_probe_recoveries, 1, "{st:?}");
        let ssthresh = probe(&recs, "tcp_ssthresh");
        assert!(ssthresh.iter().any(|p| p.0 > 20 * MS && p.1 < 1e12), "the congestion control reacted after 20 ms: {ssthresh:?}");
    }
}

#[test]
fn a_loss_below_three_dupacks_is_marked_by_the_reordering_timer_a_quarter_min_rtt_after_the_sack() {
    // 8 segments, all sent at t = 0 (initial window 10); segment 6 is lost and only
    // segment 7 is SACKed above it: one duplicate ACK, too few for RFC 6675.
    let msgs = || vec![msg(0, 0, 1, 8 * MSS)];
    let (_, st) = run_flow(TcpConfig::default(), msgs(), 6);
    assert_eq!((st.timeouts, st.fast_recoveries), (1, 0), "without RACK: the RTO repairs it");
    let (recs, st) = run_flow(rack(), msgs(), 6);
    assert_eq!(
        (st.timeouts, st.fast_recoveries, st.rack_reorder_timeouts, st.rack_marked_lost, st.retransmissions, st.loss_probes),
        (0, 1, 1, 1, 1, 0),
        "{st:?}"
    );
    let acks: Vec<u64> = probe(&recs, "tcp_cwnd").iter().map(|p| p.0).collect();
    // Every segment left at 0, so each RTT sample is its ACK's arrival time and min_RTT
    // is the first ACK's. The SACK of segment 7 is the 4th ACK (after those of segments
    // 1, 3 and 5): RACK.rtt is its arrival time, and segment 6, sent at the same time
    // with a lower sequence, is lost at 0 + RACK.rtt + reo_wnd. No reordering has been
    // seen, the connection is not recovering and one segment is SACKed (fewer than
    // DupThresh = 3), so reo_wnd = min_RTT / 4 (§6.2 step 4), below SRTT.
    let (min_rtt, sack) = (acks[0], acks[3]);
    assert_eq!(first_retx(&recs), sack + min_rtt / 4, "ACKs at {acks:?}");
    assert!(min_rtt / 4 > 0 && min_rtt < 20 * US);
}

#[test]
fn incast_with_drops_completes_conserves_and_repeats_with_rack_tlp() {
    // 8 senders × 1 MB into one port limited to 100 KB: many losses, some at tails.
    let run_incast = || {
        let mut net = NetworkConfig::default();
        net.topology = pl2_sim::config::TopologyConfig::SingleRack { hosts: 9, breakout: 1 };
        net.switch.dynamic_thresholds = false;
        net.switch.port_limit = Some(Bytes(100_000));
        let msgs = (0..8).map(|s| msg(0, s, 8, 1_000_000)).collect();
        let mut sp = spec(net, vec![list(msgs)]);
        sp.transport = TransportConfig::Tcp(rack());
        let mut sim = run(sp, END);
        sim.finish();
        let r = sim.drain_records();
        let st = sim.module_stats().tcp.unwrap_or_default();
        let drops = sim.counters().total_drops();
        assert_eq!(r.messages.len(), 8);
        assert!(r.messages.iter().all(|m| m.finish.is_some()), "unfinished: {st:?}");
        assert!(drops > 0 && st.retransmissions >= drops, "{st:?}, drops {drops}");
        assert!(st.rack_marked_lost > 0, "RACK marked losses: {st:?}");
        format!("{:?}{:?}{:?}", r.messages, sim.counters(), st)
    };
    assert_eq!(run_incast(), run_incast());
}
