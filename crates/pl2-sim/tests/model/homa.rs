//! Homa: hand-worked timelines on an idle 10 Gbps star (exact to the picosecond): one
//! message within and one beyond RTTbytes, two competing messages (SRPT and grants), a
//! lost packet recovered by RESEND and an abort; priorities seen in the switch's queues;
//! conservation of bytes; determinism; configuration errors.

use super::common::*;
use pl2_sim::config::{CustomLink, LinkConfig, NetworkConfig, TopologyConfig};
use pl2_sim::metrics::{Records, TraceEvent};
use pl2_sim::sim::{FaultSpec, SimSpec, Simulation, TraceConfig, TransportConfig};
use pl2_sim::transport::homa::{HomaConfig, HomaHeaders, HomaStats};
use pl2_sim::units::{BitsPerSec, Bytes, Duration, SimTime};
use pl2_sim::workload::MessageSpec;

const END: SimTime = SimTime(u64::MAX / 2);
/// A full frame (1500 B payload, no headers, 802.1Q tag: 1542 B) at 10 Gbps.
const SER: u64 = 1_233_600;
/// A control frame (64 B minimum frame + 20 B preamble and gap) at 10 Gbps.
const CTRL: u64 = 67_200;
/// Link delay and switch pipeline latency (defaults).
const PROP: u64 = 100_000;
const LAT: u64 = 350_000;
const MS: u64 = 1_000_000_000;
/// One frame from host to host through the store-and-forward switch.
const fn hop2(ser: u64) -> u64 {
    2 * ser + 2 * PROP + LAT
}

/// `n` hosts on one store-and-forward switch, 10 Gbps links.
fn star(n: u32) -> NetworkConfig {
    let mut net = NetworkConfig::default();
    net.topology = TopologyConfig::Custom {
        hosts: n,
        switches: 1,
        links: (0..n).map(|h| CustomLink { a: format!("h{h}"), b: "s0".into(), rate: None, delay: None }).collect(),
    };
    net.link = LinkConfig { rate: BitsPerSec::gbps(10), ..LinkConfig::default() };
    net.switch.cut_through = false;
    net
}

fn raw() -> HomaConfig {
    HomaConfig { headers: HomaHeaders::None, ..HomaConfig::default() }
}

fn homa(net: NetworkConfig, msgs: Vec<MessageSpec>, cfg: HomaConfig) -> SimSpec {
    let mut sp = spec(net, vec![list(msgs)]);
    sp.transport = TransportConfig::Homa(cfg);
    sp
}

fn run_homa(sp: SimSpec) -> (Simulation, Records, HomaStats) {
    let mut sim = run(sp, END);
    sim.finish();
    let recs = sim.drain_records();
    let st = sim.module_stats().homa.unwrap_or_default();
    (sim, recs, st)
}

/// Completion time of the message with id `id`.
fn took_id(recs: &Records, id: u64) -> u64 {
    let m = recs.messages.iter().find(|m| m.id == id).expect("recorded");
    m.finish.expect("finished").0 - m.start.0
}

fn ideal(recs: &Records, id: u64) -> u64 {
    recs.messages.iter().find(|m| m.id == id).expect("recorded").ideal.0
}

/// The base round trip of `star`: a full frame one way (hop2(SER) = 3.0172 µs), a
/// control frame back (hop2(CTRL) = 0.6844 µs): 3.7016 µs, 4627 B at 10 Gbps (4626.999
/// rounded up). RTTbytes = 4627 wire bytes hold 3 full unscheduled frames (4626 B):
/// 4500 B of data go unscheduled.
const RTT_BYTES: u64 = 4627;

#[test]
fn rtt_bytes_come_from_the_base_round_trip() {
    let rtt = pl2_sim::sim::base_round_trip(&star(2)).unwrap();
    assert_eq!(rtt.0, hop2(SER) + hop2(CTRL));
    assert_eq!(rtt.0, 3_701_600);
    let p = raw().resolve(star(2).framing, 1500, rtt, BitsPerSec::gbps(10)).unwrap();
    assert_eq!((p.layout.rtt_wire, p.layout.unsched_bytes), (RTT_BYTES, 4500));
}

#[test]
fn one_message_within_rttbytes_completes_at_its_ideal_time() {
    // Three unscheduled packets, paced at the link rate: the last leaves h0 at 2 SER and
    // crosses the switch alone.
    let (_, recs, st) = run_homa(homa(star(2), vec![msg(0, 0, 1, 4500)], raw()));
    all_delivered_once(&recs, 1);
    assert_eq!(took_id(&recs, 0), 2 * SER + hop2(SER));
    assert_eq!(took_id(&recs, 0), 5_484_400);
    assert_eq!(took_id(&recs, 0), ideal(&recs, 0), "no overhead within RTTbytes");
    assert_eq!((st.unscheduled_packets, st.scheduled_packets, st.grants), (3, 0, 0), "{st:?}");
}

#[test]
fn one_message_beyond_rttbytes_pays_only_the_unfilled_part_of_rttbytes() {
    // 20 packets, 3 unscheduled. The first grant leaves h1 when packet 0 arrives
    // (hop2(SER)) and reaches h0 at hop2(SER) + hop2(CTRL) = 3.7016 µs, 0.8 ns after h0's
    // link went idle (3 SER = 3.7008 µs): RTTbytes (4627 B) is 1 B more than the three
    // frames. From then on grants come one per SER (paced, and one per arrival), so
    // packet i ≥ 3 leaves at 3.7016 µs + (i − 3) SER; the last at + 16 SER.
    let (_, recs, st) = run_homa(homa(star(2), vec![msg(0, 0, 1, 30_000)], raw()));
    all_delivered_once(&recs, 1);
    assert_eq!(took_id(&recs, 0), hop2(SER) + hop2(CTRL) + 16 * SER + hop2(SER));
    assert_eq!(took_id(&recs, 0), 26_456_400);
    assert_eq!(took_id(&recs, 0), ideal(&recs, 0) + 800);
    assert_eq!((st.unscheduled_packets, st.scheduled_packets, st.grants, st.grants_received), (3, 17, 17, 17), "{st:?}");
    assert!(st.max_in_flight_bytes <= RTT_BYTES + 1542, "{st:?}");
}

/// A (h0 → h2, 30 000 B) at 0 and B (h1 → h2, 7500 B) at 10 µs, overcommitment 1;
/// unscheduled levels 2 with a cut-off at 5000 B, 6 scheduled levels.
fn two_messages(trace: bool) -> (Simulation, Records, HomaStats) {
    let cfg = HomaConfig { overcommit: Some(1), unscheduled_levels: Some(2), unscheduled_cutoffs: Some(vec![Bytes(5000)]), ..raw() };
    let mut sp = homa(star(3), vec![msg(0, 0, 2, 30_000), msg(10 * 1_000_000, 1, 2, 7500)], cfg);
    if trace {
        sp.metrics.trace = Some(TraceConfig::default());
    }
    run_homa(sp)
}

#[test]
fn two_competing_messages_the_shorter_is_granted_first() {
    // A's packet i ≥ 3 leaves h0 at 3.7016 µs + (i − 3) SER (as alone) and reaches the
    // switch's port to h2 SER + PROP + LAT later; A8 is sent there from 11.5532 µs.
    // B0 (sent at 10 µs) is queued at 11.6836 µs at a higher level than A's scheduled
    // packets, so it follows A8 at 12.7868 µs, then B1 and B2 (queued at 12.9172 and
    // 14.1508 µs) go before A9: B2 ends at 16.4876 µs.
    // B0 reaches h2 at 14.1204 µs: B has 3000 B to grant, A more, and overcommitment 1
    // gives every grant to B. Grant 1 reaches h1 at 14.1204 + hop2(CTRL) = 14.8048 µs
    // (B3 sent); grant 2 leaves h2 at B1's arrival (15.354 µs), reaches h1 at 16.0384 µs
    // as B3's serialisation ends (B4 sent). B3 reaches the switch at 16.4884 µs, behind
    // A9 (from 16.4876 µs), so B3 goes at 17.7212 µs and B4 at 18.9548 µs, reaching h2 at
    // 20.2884 µs. The port to h2 is busy from A9 on: A9-A19 and B3-B4, 13 frames.
    let (_, recs, st) = two_messages(false);
    all_delivered_once(&recs, 2);
    let a9 = 5_385_200 + 6 * SER + 2 * SER + SER;
    assert_eq!(a9, 16_487_600);
    assert_eq!(took_id(&recs, 1), a9 + 3 * SER + PROP - 10_000_000);
    assert_eq!(took_id(&recs, 1), 10_288_400);
    assert_eq!(took_id(&recs, 0), a9 + 13 * SER + PROP);
    assert_eq!(took_id(&recs, 0), 32_624_400);
    assert_eq!((st.grants, st.unscheduled_packets, st.scheduled_packets), (17 + 2, 6, 19), "{st:?}");
}

#[test]
fn priorities_reach_the_switch_queues() {
    // Homa levels → 802.1Q: 2 unscheduled levels (prio 7, 6), 6 scheduled (5..0); with
    // one granted sender it sits on the lowest, prio 0.
    // Unscheduled packets are graduated by the bytes left before them: A0-A2 (30 000,
    // 28 500, 27 000 B left) and B0, B1 (7500, 6000) are above the 5000 B cut-off: prio 6;
    // B2 (4500 left) prio 7. Scheduled packets go at prio 0, except the tail boost: a
    // grant issued with ≤ 4500 B left to grant (3 frames, 4626 wire bytes < RTTbytes)
    // goes at the unscheduled level of those bytes, prio 7: A17-A19, B3, B4.
    let (_, recs, _) = two_messages(true);
    let want = |flow: u32, seq: u32| match (flow, seq) {
        (0, 0..=2) | (1, 0..=1) => 6,
        (1, _) | (0, 17..) => 7,
        _ => 0,
    };
    let sw = 3;
    let mut seen = 0;
    for r in recs.trace.iter().filter(|r| r.node == sw && r.event == TraceEvent::Tx && r.packet.kind == pl2_sim::packet::PktKind::Data) {
        assert_eq!(r.packet.prio(), want(r.packet.flow, r.packet.seq), "flow {} seq {}", r.packet.flow, r.packet.seq);
        seen += 1;
    }
    assert_eq!(seen, 25, "every data frame crossed the switch");
    // The queue a frame waits in decides when it leaves: a lower-priority frame that
    // reached the port first leaves after a higher-priority one that came later.
    let at = |ev: TraceEvent, flow: u32, seq: u32| {
        recs.trace.iter().find(|r| r.node == sw && r.event == ev && r.packet.flow == flow && r.packet.seq == seq && r.packet.kind == pl2_sim::packet::PktKind::Data).unwrap().time.0
    };
    assert!(at(TraceEvent::Arrive, 0, 9) < at(TraceEvent::Arrive, 1, 2), "A9 was queued before B2");
    assert!(at(TraceEvent::Tx, 1, 2) < at(TraceEvent::Tx, 0, 9), "B2 (prio 7) left before A9 (prio 0)");
    assert_eq!(at(TraceEvent::Tx, 0, 9), 16_487_600);
}

fn one_loss(size: u64, seq: u32, times: u32, cfg: HomaConfig) -> (Simulation, Records, HomaStats) {
    let mut sp = homa(star(2), vec![msg(0, 0, 1, size)], cfg);
    sp.faults = vec![FaultSpec::DropNth { flow: 0, seq, times }];
    let (sim, recs, st) = run_homa(sp);
    assert_eq!(sim.counters().total_drops(), u64::from(times));
    (sim, recs, st)
}

#[test]
fn a_lost_packet_is_resent_after_the_timeout() {
    // Packet 1 of 3 is lost. Packet 2 arrives at 2 SER + hop2(SER) and re-arms the
    // RESEND timer; 1 ms later the RESEND crosses (hop2(CTRL)); the sender, done with the
    // message, resends packet 1 from the RESEND's fields at once.
    let cfg = HomaConfig { resend_timeout: Some(Duration::from_ms(1)), ..raw() };
    let (_, recs, st) = one_loss(4500, 1, 1, cfg);
    all_delivered_once(&recs, 1);
    assert_eq!(took_id(&recs, 0), 2 * SER + hop2(SER) + MS + hop2(CTRL) + hop2(SER));
    assert_eq!(took_id(&recs, 0), 1_009_186_000);
    assert_eq!((st.resend_timeouts, st.resends, st.resends_received, st.retransmissions), (1, 1, 1, 1), "{st:?}");
    assert_eq!((st.busy_sent, st.aborted), (0, 0), "{st:?}");
}

#[test]
fn a_lost_scheduled_packet_is_resent_at_its_grants_level() {
    // Packet 10 of 20 (scheduled) is lost: the grants go on (each arrival frees its
    // bytes), the RESEND comes 1 ms after the last arrival, and the resend carries the
    // level of the last grant (the tail boost's highest, prio 7 with one unscheduled
    // level).
    let cfg = HomaConfig { resend_timeout: Some(Duration::from_ms(1)), ..raw() };
    let mut sp = homa(star(2), vec![msg(0, 0, 1, 30_000)], cfg);
    sp.faults = vec![FaultSpec::DropNth { flow: 0, seq: 10, times: 1 }];
    sp.metrics.trace = Some(TraceConfig::default());
    let (_, recs, st) = run_homa(sp);
    all_delivered_once(&recs, 1);
    assert_eq!((st.resends, st.retransmissions, st.aborted), (1, 1, 0), "{st:?}");
    let resent = recs.trace.iter().find(|r| r.node == 0 && r.event == TraceEvent::Tx && r.packet.seq == 10 && r.packet.has_proto(pl2_sim::packet::proto::RETX)).unwrap();
    assert_eq!(resent.packet.prio(), 7);
    // The RESEND leaves 1 ms after the last first-time arrival at h1, crosses to h0
    // (hop2(CTRL)), and the resend crosses back (hop2(SER)).
    let last = recs.trace.iter().filter(|r| r.node == 1 && r.event == TraceEvent::Arrive && r.packet.kind == pl2_sim::packet::PktKind::Data && r.packet.seq != 10).map(|r| r.time.0).max().unwrap();
    assert_eq!(took_id(&recs, 0), last + MS + hop2(CTRL) + hop2(SER));
    // Packet 10's bytes stay counted in flight until its resend arrives, leaving room
    // for one frame fewer: the tail comes at most a few nanoseconds later than without
    // the loss (26.4564 µs).
    assert!((26_456_400..26_456_400 + 2 * SER).contains(&last), "{last}");
}

#[test]
fn repeated_timeouts_abort_the_message() {
    // Every copy of packet 1 is lost: RESENDs at 1, 2 ms after the last arrival, the
    // third timeout aborts (abort_after_timeouts = 2). The message stays unfinished and
    // the receiver keeps no state.
    let cfg = HomaConfig { resend_timeout: Some(Duration::from_ms(1)), abort_after_timeouts: 2, ..raw() };
    let (_, recs, st) = one_loss(4500, 1, 3, cfg);
    assert!(recs.messages[0].finish.is_none());
    assert_eq!((st.resend_timeouts, st.resends, st.retransmissions, st.aborted), (3, 2, 2, 1), "{st:?}");
}

fn poisson(seed: u64) -> (Simulation, Records, HomaStats) {
    let mut net = NetworkConfig::default();
    net.topology = TopologyConfig::LeafSpine { leaves: 2, spines: 2, hosts_per_leaf: 4, uplink: Default::default() };
    let sources = poisson_all_to_all(8, 0.6, "w3", 200_000_000, seed);
    let mut sp = spec(net, sources);
    sp.seed = seed;
    sp.transport = TransportConfig::Homa(HomaConfig { unscheduled_levels: Some(4), unscheduled_cutoffs: Some(vec![Bytes(433), Bytes(2339), Bytes(6756)]), ..HomaConfig::default() });
    run_homa(sp)
}

#[test]
fn poisson_load_delivers_every_byte_once_and_repeats_exactly() {
    let (sim, recs, st) = poisson(3);
    let n = recs.messages.len();
    assert!(n > 100, "{n}");
    all_delivered_once(&recs, n);
    assert_eq!(st.messages_sent, n as u64);
    assert_eq!(st.messages_received, n as u64);
    assert_eq!((st.retransmissions, st.aborted, st.duplicates), (0, 0, 0), "{st:?}");
    assert!(st.scheduled_packets > 0 && st.grants == st.grants_received, "{st:?}");
    // W3's four unscheduled levels and four scheduled ones are all used.
    assert!(st.data_packets_by_prio.iter().all(|&c| c > 0), "{st:?}");
    assert_eq!(sim.counters().total_drops(), 0);
    let text = |(sim, r, st): (Simulation, Records, HomaStats)| format!("{:?}{:?}{:?}{:?}", r.messages, r.ports, sim.counters(), st);
    assert_eq!(text(poisson(3)), text(poisson(3)));
    assert_ne!(text(poisson(3)), text(poisson(4)));
}

#[test]
fn invalid_configuration_is_rejected() {
    for cfg in [
        HomaConfig { rtt_bytes: Some(Bytes(100)), ..raw() },
        HomaConfig { rtt_bytes: Some(Bytes(10_000)), rtt_packets: Some(3), ..raw() },
        HomaConfig { rtt_packets: Some(0), ..raw() },
        HomaConfig { unscheduled_levels: Some(0), ..raw() },
        HomaConfig { unscheduled_levels: Some(8), ..raw() },
        HomaConfig { unscheduled_levels: Some(4), scheduled_levels: Some(5), ..raw() },
        HomaConfig { unscheduled_levels: Some(3), ..raw() },
        HomaConfig { unscheduled_levels: Some(3), unscheduled_cutoffs: Some(vec![Bytes(10), Bytes(10)]), ..raw() },
        HomaConfig { overcommit: Some(0), ..raw() },
        HomaConfig { resend_timeout: Some(Duration(0)), ..raw() },
        HomaConfig { abort_after_timeouts: 0, ..raw() },
    ] {
        let err = Simulation::new(homa(star(2), vec![msg(0, 0, 1, 1)], cfg.clone())).err();
        let Some(e) = err else { panic!("{cfg:?} accepted") };
        assert!(e.to_string().starts_with("transport:"), "{e}");
    }
}
