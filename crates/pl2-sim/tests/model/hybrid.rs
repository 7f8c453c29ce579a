//! The hybrid racks of a reconfigurable network (`sim/hybrid.rs`): frames cross a
//! circuit only inside one of their rack pair's days, to the picosecond; nothing is lost
//! or duplicated across reconfigurations; nights drop what is in flight only when asked;
//! the circuit-state bit rides on acknowledgements exactly while the pair's circuit is
//! up or due (and, recomputed as etalon does, at the hand-worked times); a resized VOQ
//! grows exactly τ before its circuit's day.

use super::common::*;
use pl2_sim::config::{LinkConfig, NetworkConfig, TopologyConfig};
use pl2_sim::metrics::TraceEvent;
use pl2_sim::net::circuit::{CircuitConfig, InFlightAtNight, ResizeConfig, ShrinkPolicy, VoqConfig};
use pl2_sim::sim::{Simulation, TraceConfig};
use pl2_sim::transport::tcp::config::{CcKind, TcpConfig};
use pl2_sim::units::{BitsPerSec, Bytes, Duration, SimTime};

const HOSTS_PER_RACK: u32 = 2;

fn net(racks: u32, circuit: CircuitConfig, voq: VoqConfig) -> NetworkConfig {
    let mut n = NetworkConfig::default();
    n.topology = TopologyConfig::HybridRacks {
        racks,
        hosts_per_rack: HOSTS_PER_RACK,
        packet: LinkConfig { rate: BitsPerSec::gbps(10), delay: Duration::from_us(5), ..LinkConfig::default() },
        circuit: LinkConfig { rate: BitsPerSec::gbps(80), delay: Duration::from_us(30), ..LinkConfig::default() },
    };
    n.link = LinkConfig { rate: BitsPerSec::gbps(40), ..LinkConfig::default() };
    n.mtu = Bytes(9000);
    n.circuit = Some(circuit);
    n.voq = Some(voq);
    n
}

/// Global port of ToR `r`'s circuit uplink: host links come first, then per rack the
/// packet link and the circuit link; link i gives port 2i at its ToR end.
fn circuit_uplink(racks: u32, r: u32) -> u32 {
    2 * (racks * HOSTS_PER_RACK + 2 * r + 1)
}

/// Every host sends `size` bytes to each host of every other rack at time 0.
fn all_to_all(racks: u32, size: u64) -> Vec<pl2_sim::workload::MessageSpec> {
    let hosts = racks * HOSTS_PER_RACK;
    let mut m = Vec::new();
    for s in 0..hosts {
        for d in 0..hosts {
            if s / HOSTS_PER_RACK != d / HOSTS_PER_RACK {
                m.push(msg(0, s, d, size));
            }
        }
    }
    m
}

fn big_voqs() -> VoqConfig {
    VoqConfig { capacity_packets: 100_000, ..VoqConfig::default() }
}

/// 8 racks round robin (etalon's schedule): every frame that leaves a ToR on its circuit
/// uplink starts and ends its serialisation inside a day of exactly its own rack pair,
/// everything is delivered once, and both networks carried traffic.
#[test]
fn frames_cross_a_circuit_only_in_their_pairs_day() {
    let racks = 8;
    let ports: Vec<u32> = (0..racks).map(|r| circuit_uplink(racks, r)).collect();
    let mut sp = spec(net(racks, CircuitConfig::default(), big_voqs()), vec![list(all_to_all(racks, 400_000))]);
    sp.metrics.trace = Some(TraceConfig { ports: ports.clone(), max_records: u64::MAX, ..Default::default() });
    let mut sim = run(sp, SimTime(50_000_000_000));
    assert_eq!(sim.counters().total_drops(), 0);
    assert_eq!(sim.messages_in_flight(), 0, "all delivered");
    let sched = CircuitConfig::default().schedule(racks).unwrap();
    let trace = sim.drain_records().trace;
    let txs: Vec<_> = trace.iter().filter(|r| r.event == TraceEvent::Tx).collect();
    assert!(txs.len() > 1000, "the circuits carried {} frames", txs.len());
    let ser_per_byte_ps = 100; // 80 Gbps: 0.1 ns per byte.
    for r in txs {
        let tor = ports.iter().position(|&p| p == r.port).unwrap() as u32;
        let dst_rack = r.packet.dst / HOSTS_PER_RACK;
        let end = SimTime(r.time.0 + u64::from(r.packet.wire) * ser_per_byte_ps);
        assert!(sched.up(tor, dst_rack, r.time), "frame started on {tor}→{dst_rack} at {:?} outside its day", r.time);
        assert!(end <= sched.day_end(r.time), "frame on {tor}→{dst_rack} ends at {end:?} after its day");
    }
    let st = sim.circuit_stats().unwrap();
    let circuit: u64 = st.counters.circuit_payload_bytes.iter().sum();
    let packet: u64 = st.counters.packet_payload_bytes.iter().sum();
    assert_eq!(circuit + packet, 8 * 2 * 7 * 2 * 400_000, "every payload byte crossed exactly one network");
    assert!(circuit > 0 && packet > 0);
}

/// With `in_flight_at_night = "drop"`, frames still on the ToR→circuit switch fibre
/// when the night starts are dropped and counted; conservation holds.
#[test]
fn in_flight_frames_are_dropped_at_night_only_when_asked() {
    let racks = 3;
    let cfg = CircuitConfig { in_flight_at_night: InFlightAtNight::Drop, ..CircuitConfig::default() };
    let sim = run(spec(net(racks, cfg, big_voqs()), vec![list(all_to_all(racks, 2_000_000))]), SimTime(5_000_000_000));
    let st = sim.circuit_stats().unwrap();
    assert!(st.counters.night_drops > 0);
    assert_eq!(sim.counters().total_drops(), st.counters.night_drops);
    let deliver = run(spec(net(racks, CircuitConfig::default(), big_voqs()), vec![list(all_to_all(racks, 2_000_000))]), SimTime(5_000_000_000));
    assert_eq!(deliver.circuit_stats().unwrap().counters.night_drops, 0);
    assert_eq!(deliver.counters().total_drops(), 0);
}

/// A VOQ holds at most its capacity: with 4 frames, a burst of 40 frames from one host
/// to another rack loses exactly what did not fit while the packet uplink drained.
#[test]
fn a_full_voq_refuses_frames_and_conserves_the_rest() {
    let racks = 2;
    let voq = VoqConfig { capacity_packets: 4, ..VoqConfig::default() };
    let cfg = CircuitConfig { day: Duration::from_us(1), night: Duration::from_ms(10), ..CircuitConfig::default() };
    let mut sim = Simulation::new(spec(net(racks, cfg, voq), vec![list(vec![msg(2_000_000, 0, 2, 40 * 8960)])])).unwrap();
    sim.run(pl2_sim::sim::StopAt { end: SimTime(1_000_000_000), all_delivered: false, event_budget: None }, &mut pl2_sim::sim::ProgressClock::new(std::time::Duration::from_secs(60)), &mut |_| true);
    assert_conserved(&sim);
    let st = sim.circuit_stats().unwrap();
    // Host link 40G feeds a 10G uplink: of 40 frames the VOQ takes 4 + the ones the
    // uplink drained meanwhile (one per 4 arrivals) and refuses the rest.
    assert!(st.counters.voq_drops > 20 && st.counters.voq_drops < 36, "{} refused", st.counters.voq_drops);
    assert_eq!(st.counters.voq_drops, sim.counters().total_drops());
}

/// A VOQ marks an ECN-capable frame when, with it, it would hold more than its threshold
/// (etalon's queue, click-etalon `elements/standard/fullnotelockqueue.cc:84-91`: `size() + 1
/// > _thresh`). DCTCP's first window of 10 full frames leaves a 37 Gbps host back to back
/// into a 10 Gbps packet uplink (no circuit during the burst): frame k arrives when k − 1
/// frames came before it and ⌊10k/37⌋ of them (after the first, which the idle uplink took
/// at once) left, so the VOQ holds k − ⌊10k/37⌋ with it: 1, 1, 2, 3, 3, 4, 5, 6, 6, 7 for
/// k = 0..9. With threshold 5 frames 7, 8 and 9 are marked: 3 marks (4 if it marked at 5).
#[test]
fn a_voq_marks_frames_that_take_it_past_its_threshold() {
    let racks = 2;
    let voq = VoqConfig { capacity_packets: 100, mark_threshold_packets: Some(5), resize: None };
    let cfg = CircuitConfig { day: Duration::from_us(1), night: Duration::from_ms(10), ..CircuitConfig::default() };
    let mut n = net(racks, cfg, voq);
    n.link.rate = BitsPerSec::gbps(37);
    let mut sp = spec(n, vec![list(vec![msg(2_000_000, 0, 2, 1_000_000)])]);
    sp.transport = pl2_sim::sim::TransportConfig::Tcp(TcpConfig { cc: Some(CcKind::Dctcp), ..TcpConfig::default() });
    let mut sim = Simulation::new(sp).unwrap();
    // The window's 10 frames reach the VOQ by about 22 µs; the first ACK (for two frames,
    // through the 10 Gbps uplink twice and 5 µs each way) cannot release more before 30 µs.
    sim.run(pl2_sim::sim::StopAt { end: SimTime(26_000_000), all_delivered: false, event_budget: None }, &mut pl2_sim::sim::ProgressClock::new(std::time::Duration::from_secs(60)), &mut |_| true);
    let st = sim.circuit_stats().unwrap();
    assert_eq!((st.counters.voq_marks, st.counters.voq_drops), (3, 0));
}

/// A VOQ that shrinks at its day's end keeps the frames beyond its new capacity
/// (`keep`) or drops the newest of them at once (`drop`, etalon's Click queues). Two racks
/// (the pair's circuit up every day), a 1 Gbps circuit (72 µs a frame) for one 100 µs day,
/// then a 10 ms night; VOQs of 10 frames while up, 2 after. A burst of 40 frames arrives
/// within the day: the circuit takes the first, the VOQ holds the next 10 and refuses the
/// other 29; the circuit cannot start another before the day ends. At its end the VOQ
/// shrinks to 2: `drop` drops 8 there, `keep` none; everything else is delivered.
#[test]
fn a_shrinking_voq_drops_the_newest_frames_beyond_its_capacity_when_asked() {
    for (shrink, at_shrink) in [(ShrinkPolicy::Keep, 0), (ShrinkPolicy::Drop, 8)] {
        let voq = VoqConfig { resize: Some(ResizeConfig { tau: Duration::ZERO, small: 2, large: 10, shrink }), ..VoqConfig::default() };
        let cfg = CircuitConfig { day: Duration::from_us(100), night: Duration::from_ms(10), ..CircuitConfig::default() };
        let mut n = net(2, cfg, voq);
        if let TopologyConfig::HybridRacks { circuit, .. } = &mut n.topology {
            circuit.rate = BitsPerSec::gbps(1);
        }
        let mut sim = Simulation::new(spec(n, vec![list(vec![msg(2_000_000, 0, 2, 40 * 8960)])])).unwrap();
        sim.run(pl2_sim::sim::StopAt { end: SimTime(5_000_000_000), all_delivered: false, event_budget: None }, &mut pl2_sim::sim::ProgressClock::new(std::time::Duration::from_secs(60)), &mut |_| true);
        assert_conserved(&sim);
        let st = sim.circuit_stats().unwrap();
        assert_eq!((st.counters.voq_drops, st.counters.voq_shrink_drops), (29 + at_shrink, at_shrink), "{shrink:?}");
        assert_eq!(sim.counters().total_drops(), 29 + at_shrink);
    }
}

#[test]
fn circuit_settings_without_hybrid_racks_are_rejected() {
    let mut n = NetworkConfig::default();
    n.circuit = Some(CircuitConfig::default());
    let e = Simulation::new(spec(n, vec![])).err().expect("rejected");
    assert!(e.to_string().contains("hybrid_racks"), "{e}");
    let bad = net(2, CircuitConfig::default(), VoqConfig { capacity_packets: 0, ..VoqConfig::default() });
    let e = Simulation::new(spec(bad, vec![])).err().expect("rejected");
    assert!(e.to_string().contains("network.voq.capacity_packets"), "{e}");
}

/// The circuit-state signal end to end: every acknowledgement rack 0's ToR hands to the
/// sender carries ECE exactly while the 0 → 1 circuit is up or due within the lead (the
/// ToR decides when the ACK arrives; it leaves at most a microsecond later), and a reTCP
/// flow sees both values.
#[test]
fn acks_carry_the_circuit_state_while_the_circuit_is_up_or_due() {
    use pl2_sim::packet::{flags, PktKind};
    let racks = 3;
    let lead = Duration::from_us(150);
    let cfg = CircuitConfig { signal_lead: Some(lead), ..CircuitConfig::default() };
    let mut sp = spec(net(racks, cfg.clone(), VoqConfig::default()), vec![list(vec![msg(0, 0, 2, 20_000_000)])]);
    sp.transport = pl2_sim::sim::TransportConfig::Tcp(TcpConfig { cc: Some(CcKind::Retcp), ..TcpConfig::default() });
    // Port 1: switch s0's end of host 0's link (its downlink).
    sp.metrics.trace = Some(TraceConfig { ports: vec![1], max_records: u64::MAX, ..Default::default() });
    let mut sim = run(sp, SimTime(20_000_000_000));
    let sched = cfg.schedule(racks).unwrap();
    let acks: Vec<_> = sim.drain_records().trace.into_iter().filter(|r| r.event == TraceEvent::Tx && r.packet.kind == PktKind::Ack).collect();
    assert!(acks.len() > 100);
    let (mut on, mut off) = (0, 0);
    for r in &acks {
        let ece = r.packet.flags & flags::CE != 0;
        let at = |t: SimTime| sched.up_or_due(0, 1, t, lead);
        assert!(ece == at(r.time) || ece == at(SimTime(r.time.0.saturating_sub(1_000_000))), "ACK at {:?}: ECE {ece}", r.time);
        if ece { on += 1 } else { off += 1 }
    }
    assert!(on > 0 && off > 0, "{on} ACKs with ECE, {off} without");
    let st = sim.circuit_stats().unwrap();
    assert_eq!(st.counters.signal_set + st.counters.signal_clear, acks.len() as u64, "every ACK to rack 0 was signalled");
}

/// `night_packet_path = "closed"`: during the night before its circuit, a rack pair's
/// VOQ gets nothing from the packet uplink (etalon's behaviour); with `"open"` it does.
#[test]
fn a_closed_night_keeps_the_next_pairs_packet_path_idle() {
    use pl2_sim::net::circuit::NightPacketPath;
    let racks = 3;
    // Global port of ToR r's packet uplink: the link before its circuit link.
    let packet_uplink = |r: u32| 2 * (racks * HOSTS_PER_RACK + 2 * r);
    let count = |path: NightPacketPath| {
        let cfg = CircuitConfig { night_packet_path: path, ..CircuitConfig::default() };
        let mut sp = spec(net(racks, cfg.clone(), big_voqs()), vec![list(all_to_all(racks, 1_000_000))]);
        sp.metrics.trace = Some(TraceConfig { ports: (0..racks).map(packet_uplink).collect(), max_records: u64::MAX, ..Default::default() });
        let mut sim = run(sp, SimTime(20_000_000_000));
        let sched = cfg.schedule(racks).unwrap();
        let tx: Vec<_> = sim.drain_records().trace.into_iter().filter(|r| r.event == TraceEvent::Tx).collect();
        assert!(!tx.is_empty());
        tx.iter()
            .filter(|r| {
                let tor = (0..racks).find(|&t| packet_uplink(t) == r.port).unwrap();
                sched.night_before(tor, r.packet.dst / HOSTS_PER_RACK, r.time)
            })
            .count()
    };
    assert_eq!(count(NightPacketPath::Closed), 0);
    assert!(count(NightPacketPath::Open) > 0);
}

/// Dynamic resizing inside a whole simulation, to the picosecond: a VOQ grows exactly τ
/// before its circuit's day. Two racks, a 100 µs day from t = 0 and a 1 ms night, so the
/// 0 → 1 circuit's next day starts at 1100 µs and, with τ = 300 µs, the VOQ holds
/// 2 frames until T = 800 µs and 6 from then on. Host 0 sends raw 8960 B frames to
/// rack 1 from after the first day at 40 Gbps into the 10 Gbps packet uplink: the VOQ is
/// full and refuses three frames of four, each refusal a drop record at the frame's
/// arrival. Before T nothing depends on absolute time (the circuit is down), so starting
/// the message δ later moves every arrival before T by exactly δ. A first run gives a
/// refused arrival d shortly before T; started T − d later, that arrival falls exactly at
/// T and is taken (the VOQ is large from T on), started 1 ps earlier still, it falls at
/// T − 1 ps and is refused (still small). Everything else is conserved.
#[test]
fn a_voq_grows_exactly_tau_before_its_circuit_to_the_picosecond() {
    use pl2_sim::metrics::DropReason;
    let (small, large) = (2, 6);
    let tau = Duration::from_us(300);
    let cfg = CircuitConfig { day: Duration::from_us(100), night: Duration::from_ms(1), ..CircuitConfig::default() };
    let t_grow = SimTime(Duration::from_us(1100).0 - tau.0);
    let voq = VoqConfig { capacity_packets: small, resize: Some(ResizeConfig { tau, small, large, shrink: ShrinkPolicy::Keep }), ..VoqConfig::default() };
    // Drop times at the VOQ of a run whose message starts at `start` ps.
    let refused = |start: u64| -> Vec<u64> {
        let mut sp = spec(net(2, cfg.clone(), voq.clone()), vec![list(vec![msg(start, 0, 2, 500 * 8960)])]);
        sp.metrics.drop_records = true;
        let mut sim = Simulation::new(sp).unwrap();
        sim.run(pl2_sim::sim::StopAt { end: SimTime(1_000_000_000), all_delivered: false, event_budget: None }, &mut pl2_sim::sim::ProgressClock::new(std::time::Duration::from_secs(60)), &mut |_| true);
        assert_conserved(&sim);
        let drops = sim.drain_records().drops;
        assert!(drops.iter().all(|d| d.reason == DropReason::QueueLimit && d.dst == 2), "only the VOQ drops");
        drops.iter().map(|d| d.time.0).collect()
    };
    let start = Duration::from_us(150).0;
    let base = refused(start);
    let before: Vec<u64> = base.iter().copied().filter(|&t| t < t_grow.0).collect();
    assert!(before.len() > 100, "the small VOQ refuses most frames before T: {}", before.len());
    let d = *before.iter().rfind(|&&t| t + 20_000_000 < t_grow.0).expect("a refusal 20 µs before T");
    let delta = t_grow.0 - d;
    // The refused arrival moved onto T: taken.
    let at = refused(start + delta);
    let shifted: Vec<u64> = before.iter().filter(|&&t| t < d).map(|&t| t + delta).collect();
    assert_eq!(at.iter().copied().filter(|&t| t < t_grow.0).collect::<Vec<_>>()[..shifted.len()], shifted[..], "arrivals before T move by δ");
    assert!(!at.contains(&t_grow.0), "the frame arriving at T = day start − τ is taken");
    // Moved 1 ps earlier: refused, at T − 1 ps.
    let early = refused(start + delta - 1);
    assert!(early.contains(&(t_grow.0 - 1)), "the frame arriving 1 ps before T is refused");
    // From T the VOQ takes frames up to `large`: the next refusals come only after the
    // 4 extra frames arrived (one every 1.8 µs, while one left every 7.2 µs).
    let next = *at.iter().find(|&&t| t > t_grow.0).expect("refusals after T");
    assert!(next - t_grow.0 > 4 * 1_800_000, "after T the VOQ took {large} − {small} frames more before refusing again");
}

/// `signal_timing` in a whole simulation, against windows worked by hand. Three racks
/// round robin, 180 µs days and 20 µs nights: the 0 → 1 circuit is up in [0, 180) µs of
/// every 400 µs week (0 → 2 in [200, 380)). With a 150 µs lead the exact signal is off
/// from the day's end (180) until 150 µs before the next day (250): ECE is off in [180,
/// 250) of each week. etalon's recomputed map (`run_schedule.cc:439-481`) changes only
/// 150 µs before each day start or end: at 30, 50, 230 and 250 of each week; at 230 the
/// 0 → 1 circuit is down and 170 µs away (off), at 250 it is due (on), so ECE is off in
/// [230, 250) only, 50 µs shorter. reTCP flows from hosts 0 and 1 to rack 1 and switches
/// without pipeline latency: each ACK leaves rack 0's ToR for its host the instant the ToR
/// decides its ECE (ACKs for every segment, two flows, so that ACKs are dense). Every ACK
/// must match its window, and the ACKs nearest each edge (by time in the week, over 40
/// weeks) pin where the edge is: within 1 µs after it, within 30 µs before it (the pure
/// function's test, `recomputed_signal_lingers_after_the_day_as_etalons`, pins the edges
/// to the picosecond).
#[test]
fn ack_echo_starts_and_stops_at_the_hand_worked_times_exact_and_recomputed() {
    use pl2_sim::dist::DelayDist;
    use pl2_sim::net::circuit::SignalTiming;
    use pl2_sim::packet::{flags, PktKind};
    const WEEK_PS: u64 = 400_000_000;
    let us = |u: u64| u * 1_000_000;
    let weeks = 40;
    let run_acks = |timing: SignalTiming| -> Vec<(u64, bool)> {
        let cfg = CircuitConfig { signal_lead: Some(Duration::from_us(150)), signal_timing: timing, ..CircuitConfig::default() };
        let mut n = net(3, cfg, VoqConfig::default());
        n.switch.latency = DelayDist::default();
        let mut sp = spec(n, vec![list(vec![msg(0, 0, 2, 1_000_000_000), msg(0, 1, 3, 1_000_000_000)])]);
        sp.transport = pl2_sim::sim::TransportConfig::Tcp(TcpConfig { cc: Some(CcKind::Retcp), delayed_ack: false, ..TcpConfig::default() });
        // Ports 1 and 3: rack 0's ToR's ends of hosts 0 and 1's links (their downlinks).
        sp.metrics.trace = Some(TraceConfig { ports: vec![1, 3], max_records: u64::MAX, ..Default::default() });
        let mut sim = run(sp, SimTime(weeks * WEEK_PS));
        sim.drain_records()
            .trace
            .into_iter()
            .filter(|r| r.event == TraceEvent::Tx && r.packet.kind == PktKind::Ack)
            .map(|r| (r.time.0, r.packet.flags & flags::CE != 0))
            .collect()
    };
    for (timing, off_from, off_to) in [(SignalTiming::Exact, us(180), us(250)), (SignalTiming::Recompute, us(230), us(250))] {
        let acks = run_acks(timing);
        assert!(acks.len() > 1000, "{timing:?}: {} ACKs", acks.len());
        for &(t, ece) in &acks {
            let in_week = t % WEEK_PS;
            assert_eq!(ece, !(off_from..off_to).contains(&in_week), "{timing:?}: ACK at {t} ps ({in_week} ps into its week)");
        }
        // The nearest ACKs on both sides of each edge, by time in the week over all weeks:
        // an ACK within 1 µs after every edge, and within 30 µs before it (the flows
        // pause after a day; 30 µs still tells 180 from 230 µs).
        for edge in [off_from, off_to] {
            let before = acks.iter().map(|&(t, _)| t % WEEK_PS).filter(|&x| x < edge).max().unwrap();
            let after = acks.iter().map(|&(t, _)| t % WEEK_PS).filter(|&x| x >= edge).min().unwrap();
            assert!(edge - before < us(30) && after - edge < us(1), "{timing:?}: nearest ACKs {before} and {after} ps around the edge at {edge} ps");
        }
    }
}
