//! TCP's optional three-way handshake (`handshake = true`, RFC 9293 §3.5) against
//! hand-computed times: the first message on a connection completes exactly one
//! handshake (SYN + SYN-ACK through the switch, plus the serialisation of the pure ACK
//! that precedes the data with `handshake_ack = "separate"`, the default) later than
//! without it, the next one pays nothing; the handshake's round trip seeds SRTT; a lost SYN or SYN-ACK costs `syn_rto`,
//! two lost SYNs `syn_rto` + 2·`syn_rto`; a SYN-ACK to a resent SYN is ignored; over PL2
//! the handshake frames never touch the ToR's counters. `common::run` checks packet
//! conservation in each run.

use super::common::*;
use pl2_sim::config::{NetworkConfig, TopologyConfig};
use pl2_sim::framing::{Framing, L4Headers};
use pl2_sim::metrics::Records;
use pl2_sim::sim::{BuildError, FaultSpec, SimSpec, Simulation, TransportConfig};
use pl2_sim::transport::tcp::wire::{flow_id, SYN_OPTION_BYTES};
use pl2_sim::transport::tcp::{HandshakeAck, TcpConfig, TcpScheduler, TcpStats};
use pl2_sim::units::{BitsPerSec, Duration, SimTime};
use pl2_sim::workload::MessageSpec;

const END: SimTime = SimTime(u64::MAX / 2);
const MSS: u64 = 1460;
const PROP: u64 = 100_000; // default link delay, ps
const LAT: u64 = 350_000; // default switch latency, ps
const US: u64 = 1_000_000;
const MS: u64 = 1_000_000_000;

/// A SYN or SYN-ACK on the wire: Ethernet 14 + 802.1Q 4 + IPv4 20 + TCP 20 + options 20
/// + FCS 4 = 82 B (above the 64 B minimum), + preamble 8 + IFG 12.
const SYN_WIRE: u64 = 14 + 4 + 20 + 20 + 20 + 4 + 8 + 12;

/// Its serialisation at 100 Gbit/s (80 ps per byte).
const SYN_SER: u64 = SYN_WIRE * 80;

/// The pure ACK of the SYN-ACK (`handshake_ack = "separate"`): a minimum frame, 84 B on
/// the wire. The data leaves the sender's NIC behind it; at the switch it never waits
/// (store-and-forward: the ACK left long before; cut-through: the ACK's last bit leaves
/// the egress as the data's first bit is forwarded), so the message completes exactly
/// this much later.
const HS_ACK_SER: u64 = 84 * 80;

/// One way through the switch: the sender's NIC, the link, the switch (store-and-forward
/// waits for the last bit and serialises again; cut-through forwards from the first bit
/// at equal rates), the link.
fn one_way(cut_through: bool) -> u64 {
    if cut_through {
        SYN_SER + PROP + LAT + PROP
    } else {
        SYN_SER + PROP + LAT + SYN_SER + PROP
    }
}

fn net(cut_through: bool) -> NetworkConfig {
    let mut n = two_hosts_one_switch(BitsPerSec::gbps(100), BitsPerSec::gbps(100));
    n.switch.cut_through = cut_through;
    n
}

fn with_handshake() -> TcpConfig {
    TcpConfig { handshake: true, ..TcpConfig::default() }
}

fn run_tcp(net: NetworkConfig, msgs: Vec<MessageSpec>, cfg: TcpConfig, faults: Vec<FaultSpec>) -> (Simulation, Records, TcpStats) {
    let mut sp: SimSpec = spec(net, vec![list(msgs)]);
    sp.transport = TransportConfig::Tcp(cfg);
    sp.faults = faults;
    let mut sim = run(sp, END);
    sim.finish();
    let recs = sim.drain_records();
    let st = sim.module_stats().tcp.unwrap_or_default();
    assert!(recs.messages.iter().all(|m| m.finish.is_some()), "every message delivered: {st:?}");
    (sim, recs, st)
}

/// Latency (finish − the application's send call) of each message, in order.
fn latencies(recs: &Records) -> Vec<u64> {
    recs.messages.iter().map(|m| m.finish.expect("delivered").0 - m.start.0).collect()
}

/// The smoothed RTT (ps) published at the first probe, the SYN-ACK's with a handshake.
fn first_srtt(recs: &Records) -> f64 {
    recs.probes.iter().find(|p| p.name == "tcp_srtt_us").expect("probes").value * 1e6
}

fn drop_syn(times: u32) -> FaultSpec {
    FaultSpec::DropControl { flow: flow_id(0, 1, 0), seq: u32::MAX, times }
}

fn drop_syn_ack(times: u32) -> FaultSpec {
    FaultSpec::DropControl { flow: flow_id(0, 1, 0), seq: 0, times }
}

#[test]
fn the_syn_frame_is_what_the_test_assumes() {
    assert_eq!(Framing::default().wire_bytes(L4Headers::Tcp { options: SYN_OPTION_BYTES }, 0), SYN_WIRE);
    assert_eq!(SYN_WIRE, 102);
}

#[test]
fn first_message_pays_one_handshake_the_second_none() {
    // Two 5-segment messages (within the initial window) on one connection, the second
    // long after the first completed; no host delays, constant switch latency.
    let size = 5 * MSS;
    let msgs = || vec![msg(0, 0, 1, size), msg(200 * US, 0, 1, size)];
    for (ct, ack) in [(false, HandshakeAck::Separate), (true, HandshakeAck::Separate), (false, HandshakeAck::WithData), (true, HandshakeAck::WithData)] {
        let hs = 2 * one_way(ct) + if ack == HandshakeAck::Separate { HS_ACK_SER } else { 0 };
        let (_, base, st0) = run_tcp(net(ct), msgs(), TcpConfig::default(), vec![]);
        let (_, recs, st) = run_tcp(net(ct), msgs(), TcpConfig { handshake_ack: ack, ..with_handshake() }, vec![]);
        let (l0, l) = (latencies(&base), latencies(&recs));
        println!("cut-through {ct}, {ack:?}: handshake {hs} ps; latencies without {l0:?}, with {l:?}");
        assert_eq!(l0[0], l0[1], "without a handshake both messages take the same time");
        assert_eq!(l[0], l0[0] + hs, "the first message waits exactly one SYN/SYN-ACK exchange (and the pure ACK's serialisation)");
        assert_eq!(l[1], l0[1], "the second message rides the established connection");
        // The ideal completion time leaves the handshake out: it shows in the slowdown.
        assert_eq!(recs.messages[0].ideal, base.messages[0].ideal);
        // RFC 6298 §2.2: the handshake's round trip is the first RTT sample.
        assert_eq!(first_srtt(&recs).round() as u64, 2 * one_way(ct));
        assert_eq!((st.syns_sent, st.syn_acks_sent, st.syn_acks_received, st.syn_timeouts), (1, 1, 1, 0), "{st:?}");
        assert_eq!(st.rtt_samples, st0.rtt_samples + 1, "one more sample: the SYN's");
        assert_eq!((st0.syns_sent, st0.syn_acks_sent), (0, 0));
        assert_eq!((st.segments_sent, st.retransmissions), (st0.segments_sent, 0));
    }
}

#[test]
fn a_lost_syn_or_syn_ack_costs_the_syn_rto_and_backoff_doubles_it() {
    let size = 5 * MSS;
    let hs = 2 * one_way(true) + HS_ACK_SER;
    let (_, base, _) = run_tcp(net(true), vec![msg(0, 0, 1, size)], TcpConfig::default(), vec![]);
    let l0 = latencies(&base)[0];
    // Default SYN RTO (1 ms): the SYN, or the SYN-ACK, lost once.
    for (what, fault) in [("SYN", drop_syn(1)), ("SYN-ACK", drop_syn_ack(1))] {
        let (sim, recs, st) = run_tcp(net(true), vec![msg(0, 0, 1, size)], with_handshake(), vec![fault]);
        let l = latencies(&recs)[0];
        println!("{what} lost once: latency {l} ps = {} ms + {} ps", (l - l0 - hs) / MS, l - l0 - MS);
        assert_eq!(sim.counters().total_drops(), 1, "the fault dropped the {what}");
        assert_eq!(l, MS + hs + l0, "{what} lost: resent after 1 ms, then one handshake");
        assert_eq!((st.syns_sent, st.syn_timeouts), (2, 1), "{st:?}");
        assert_eq!(st.syn_acks_sent, if what == "SYN" { 1 } else { 2 }, "a repeated SYN gets another SYN-ACK");
        assert_eq!(st.syn_acks_received, 1);
        // Karn: the SYN was resent, so the SYN-ACK gives no RTT sample.
        assert!(first_srtt(&recs).is_nan(), "no sample from a resent SYN");
        assert_eq!((st.retransmissions, st.timeouts), (0, 0));
    }
    // A configured SYN RTO of 50 µs, the SYN lost twice: resent at 50 µs, then 100 µs later.
    let cfg = TcpConfig { syn_rto: Duration::from_us(50), ..with_handshake() };
    let (sim, recs, st) = run_tcp(net(true), vec![msg(0, 0, 1, size)], cfg, vec![drop_syn(2)]);
    let l = latencies(&recs)[0];
    println!("SYN lost twice, syn_rto 50 us: latency {l} ps");
    assert_eq!(sim.counters().total_drops(), 2);
    assert_eq!(l, 50 * US + 100 * US + hs + l0, "backoff: 50 µs, then 100 µs");
    assert_eq!((st.syns_sent, st.syn_timeouts, st.syn_acks_sent), (3, 2, 1), "{st:?}");
}

#[test]
fn a_lost_handshake_ack_costs_nothing() {
    // The data follows the pure ACK and the receiver opened the connection at the SYN, so
    // losing the ACK on the first link changes no time (cut-through: the data's first bit
    // reaches the switch as the ACK's last bit would have left it).
    let size = 5 * MSS;
    let (_, ok, _) = run_tcp(net(true), vec![msg(0, 0, 1, size)], with_handshake(), vec![]);
    let fault = FaultSpec::DropControl { flow: flow_id(0, 1, 0), seq: 1, times: 1 };
    let (sim, lost, st) = run_tcp(net(true), vec![msg(0, 0, 1, size)], with_handshake(), vec![fault]);
    assert_eq!(sim.counters().total_drops(), 1, "the fault dropped the handshake's ACK");
    assert_eq!(latencies(&lost), latencies(&ok));
    assert_eq!((st.syns_sent, st.syn_timeouts, st.retransmissions, st.timeouts), (1, 0, 0, 0), "{st:?}");
}

#[test]
fn a_syn_ack_to_a_resent_syn_is_ignored() {
    // A SYN RTO (1 µs) below the handshake's round trip (1.13 µs): the SYN is resent
    // before its SYN-ACK is back, both get answered, the first SYN-ACK establishes the
    // connection (no RTT sample: Karn) and the second is ignored. The data is not held up.
    let size = 5 * MSS;
    let hs = 2 * one_way(true) + HS_ACK_SER;
    assert!(2 * one_way(true) > US);
    let (_, base, _) = run_tcp(net(true), vec![msg(0, 0, 1, size)], TcpConfig::default(), vec![]);
    let cfg = TcpConfig { syn_rto: Duration::from_us(1), ..with_handshake() };
    let (sim, recs, st) = run_tcp(net(true), vec![msg(0, 0, 1, size)], cfg, vec![]);
    assert_eq!(latencies(&recs)[0], latencies(&base)[0] + hs);
    assert_eq!((st.syns_sent, st.syn_timeouts, st.syn_acks_sent, st.syn_acks_received), (2, 1, 2, 2), "{st:?}");
    assert_eq!((sim.counters().total_drops(), st.retransmissions, st.stale_acks), (0, 0, 0));
    assert!(first_srtt(&recs).is_nan());
}

fn testbed(threads: u16) -> NetworkConfig {
    let mut n = NetworkConfig::pl2_testbed();
    n.topology = TopologyConfig::SingleRack { hosts: 2, breakout: 1 };
    n.host.threads = threads;
    n
}

#[test]
fn over_pl2_the_handshake_frames_are_not_scheduled() {
    // Four connections (one per thread) of 100 segments each: with and without the
    // handshake, the ToR grants and releases exactly one reservation per data segment
    // (the SYNs and SYN-ACKs, like pure ACKs, are forwarded without touching its
    // counters), nothing drifts and every message completes.
    let threads = 4u16;
    let segs = 100u64;
    let msgs = || (0..threads).map(|t| MessageSpec { time: SimTime(0), src: 0, dst: 1, size: segs * MSS, thread: t, priority: 0 }).collect::<Vec<_>>();
    let over_pl2 = TcpConfig { scheduler: TcpScheduler::Pl2, ..TcpConfig::default() };
    let total = u64::from(threads) * segs;
    let (sim0, _, st0) = run_tcp(testbed(threads), msgs(), over_pl2.clone(), vec![]);
    assert_eq!((st0.syns_sent, st0.segments_sent), (0, total));
    let (sim, _, st) = run_tcp(testbed(threads), msgs(), TcpConfig { handshake: true, ..over_pl2 }, vec![]);
    let (p0, p) = (sim0.module_stats().pl2.unwrap_or_default(), sim.module_stats().pl2.unwrap_or_default());
    println!("TCP over PL2: rsvs {} / {}, granted {} / {}, data {} / {}", p0.rsvs, p.rsvs, p0.switch.granted_packets, p.switch.granted_packets, p0.switch.data_packets, p.switch.data_packets);
    assert_eq!((st.syns_sent, st.syn_acks_sent, st.syn_acks_received), (4, 4, 4), "{st:?}");
    assert_eq!((st.segments_sent, st.retransmissions, st.timeouts), (total, 0, 0), "{st:?}");
    for q in [&p0, &p] {
        assert_eq!((q.switch.granted_packets, q.switch.data_packets), (total, total), "{q:?}");
        assert_eq!((q.switch.counter_drift_packets, q.switch.decrement_saturations), (0, 0), "{q:?}");
    }
    assert_eq!((p.rsvs, p.bursts), (p0.rsvs, p0.bursts), "the handshake adds no reservation");
    assert_eq!(sim.counters().total_drops(), 0);
}

#[test]
fn a_zero_syn_rto_is_rejected_naming_the_field() {
    let mut sp = spec(net(true), vec![]);
    sp.transport = TransportConfig::Tcp(TcpConfig { syn_rto: Duration(0), ..with_handshake() });
    match Simulation::new(sp) {
        Err(BuildError::Invalid { problem, .. }) => assert!(problem.contains("syn_rto"), "{problem}"),
        Err(e) => panic!("unexpected error {e}"),
        Ok(_) => panic!("accepted"),
    }
}
