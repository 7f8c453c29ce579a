//! PL2 in the simulator: hand-computed unloaded latency, incast queues against a bound
//! derived from K, senders and delay spread (and raw Ethernet's drops in the same
//! buffer), the unsolicited share at low load, the ideal scheduler's one-frame queue, and
//! the testbed profile's idle RSV–GRT exchange.

use super::common::*;
use pl2_sim::config::{NetworkConfig, TopologyConfig};
use pl2_sim::dist::DelayDist;
use pl2_sim::metrics::ProbeRecord;
use pl2_sim::rng::SimRng;
use pl2_sim::sim::{PersistentSpec, SimSpec, Simulation, TransportConfig};
use pl2_sim::transport::pl2::config::Pl2SwitchMode;
use pl2_sim::transport::pl2::Pl2Config;
use pl2_sim::units::{Duration, SimTime};
use pl2_sim::workload::MessageSpec;
use std::collections::BTreeMap;

const SER: u64 = 123_360; // 1542 B at 100 Gbps
const CTL: u64 = 6_720; // a 64 B control frame on the wire (84 B) at 100 Gbps
const PROP: u64 = 100_000;
const WIRE: u64 = 1542;

fn pl2(sp: &mut SimSpec, cfg: Pl2Config) {
    sp.transport = TransportConfig::Pl2(cfg);
}

fn rack(hosts: u32) -> NetworkConfig {
    let mut net = NetworkConfig::default();
    net.topology = TopologyConfig::SingleRack { hosts, breakout: 1 };
    net
}

fn probes(recs: &[ProbeRecord], name: &str) -> Vec<(u32, u32, f64)> {
    recs.iter().filter(|p| p.name == name).map(|p| (p.host, p.flow, p.value)).collect()
}

#[test]
fn unloaded_message_is_ideal_plus_one_exchange() {
    const SEND: u64 = 700_000;
    const RECV: u64 = 900_000;
    const LAT: u64 = 350_000;
    for packets in [1u64, 4] {
        let mut net = rack(2);
        net.host.send_latency = DelayDist::constant(Duration(SEND));
        net.host.recv_latency = DelayDist::constant(Duration(RECV));
        let mut sp = spec(net, vec![list(vec![msg(5_000, 0, 1, packets * 1500)])]);
        pl2(&mut sp, Pl2Config::default());
        let mut sim = run(sp, SimTime(u64::MAX / 2));
        sim.finish();
        let recs = sim.drain_records();
        let r = &recs.messages[0];
        // RSV: send path, wire (cut-through: the pipeline starts at its first bit),
        // switch pipeline; GRT: 84 B on the downlink, wire, receive path.
        let exchange = SEND + PROP + LAT + CTL + PROP + RECV;
        // The burst (≤ K packets) is handed over at the GRT (chosen slot 0, wait 0).
        let ideal = SEND + PROP + LAT + packets * SER + PROP + RECV;
        assert_eq!(r.ideal.0, ideal);
        assert_eq!(r.finish.unwrap().0 - r.start.0, ideal + exchange, "{packets} packets");
        let ex = probes(&recs.probes, "pl2_rsv_grt_ps");
        assert_eq!(ex, vec![(0, 0, exchange as f64)]);
        assert_eq!(sim.counters().packets_consumed, 1, "the RSV");
    }
}

/// `n` senders each with `threads` persistent streams of 4 full payloads to one
/// receiver (offered load n × 100%), 2 ms, switch latency jittered as in the testbed.
fn incast(n: u32, threads: u16, cfg: Option<Pl2Config>, constant: bool) -> (Simulation, u64) {
    incast_for(n, threads, cfg, constant, SimTime(2_000_000_000))
}

fn incast_for(n: u32, threads: u16, cfg: Option<Pl2Config>, constant: bool, until: SimTime) -> (Simulation, u64) {
    let mut net = NetworkConfig::pl2_testbed();
    net.topology = TopologyConfig::SingleRack { hosts: n + 1, breakout: 1 };
    net.host.threads = threads;
    // Host stages at the testbed's minima; the switch keeps its jitter unless `constant`.
    net.host.recv_latency = DelayDist::constant(Duration(223_280));
    if constant {
        net.switch.latency = DelayDist::constant(Duration::from_ns(346));
    }
    let mut sp = spec(net, vec![]);
    sp.persistent = (0..n)
        .flat_map(|s| {
            (0..threads).map(move |t| PersistentSpec {
                host: s,
                thread: t,
                dst: n,
                size: 4 * 1500,
                prio: 0,
                start: SimTime(u64::from(s) * 10_007 + u64::from(t) * 3_001),
                transport: 0,
                workload: 0,
                next: Default::default(),
            })
        })
        .collect();
    if let Some(c) = cfg {
        pl2(&mut sp, c);
    }
    let sim = run(sp, until);
    let q = sim.port_max_queue()[sim.host_downlink(n) as usize];
    (sim, q)
}

/// Threads per sender for ≥ 400% offered load: a thread alone moves one 6000 B message
/// per ~1 µs (≈ 48% of the line, measured), so 8 / n + 1 threads per sender offer 480%,
/// 576%, 768% and 768% for 2, 4, 8 and 16 senders (each sender's NIC caps it at 100%).
fn threads_for_400(n: u32) -> u16 {
    (8 / n + 1) as u16
}

/// Receiver queue bound, in bytes. Decrementing at dequeue, `out[dst]` counts every
/// reserved packet not yet sent by the receiver port, so a new burst is scheduled behind
/// everything queued: with exact timing each blocking thread has at most one burst (K
/// frames) in the queue, plus one unsolicited burst admitted while the backlog was
/// below t; the switch pipeline's spread δ = 508 − 346 = 162 ns lets ceil(δ / slot) = 2
/// more frames of on-time bursts catch up.
/// Q ≤ ((senders × threads + 1) × K + ceil(δ / slot)) × 1542 B.
fn queue_bound(n: u32, threads: u16) -> u64 {
    const K: u64 = 4;
    let spread_frames = (508_000u64 - 346_000).div_ceil(SER);
    ((u64::from(n) * u64::from(threads) + 1) * K + spread_frames) * WIRE
}

/// The steady-state incast: 2–16 senders at ≥ 400% offered load for 10 ms with
/// the testbed's switch-latency jitter, PL2 decrementing at dequeue (Algorithm 1's
/// ingress decrement does not bound this queue: see the next test).
#[test]
fn incast_keeps_the_receiver_queue_bounded_where_raw_ethernet_drops() {
    use pl2_sim::transport::pl2::config::Pl2Decrement;
    let buffer = 1_500_000u64;
    let until = SimTime(10_000_000_000);
    for n in [2u32, 4, 8, 16] {
        let threads = threads_for_400(n);
        let cfg = Pl2Config { decrement_at: Pl2Decrement::Dequeue, ..Pl2Config::default() };
        let (sim, q) = incast_for(n, threads, Some(cfg), false, until);
        let c = sim.counters();
        let st = sim.module_stats().pl2.unwrap_or_default();
        let bound = queue_bound(n, threads);
        println!(
            "PL2 (dequeue) incast {n}×{threads}: max queue {q} B ({:.1} frames), bound {bound} B, drops {}, bursts {}, unsolicited {}, delivered {}",
            q as f64 / WIRE as f64,
            c.total_drops(),
            st.bursts,
            st.unsolicited_bursts,
            c.messages_finished
        );
        assert_eq!(c.total_drops(), 0, "no buffer (or program) drops");
        assert_eq!(st.switch.unsolicited_unrecovered_packets, 0, "no lost data");
        // Zero lost messages: per thread at most three unfinished (one being cut into
        // bursts, up to two handed over and still in the network).
        assert!(sim.messages_in_flight() <= 3 * u64::from(n) * u64::from(threads), "{} in flight", sim.messages_in_flight());
        // The receiver link stays busy: ≥ 90% of 10 ms of full payloads delivered.
        let delivered_bytes = c.messages_finished * 6000;
        assert!(delivered_bytes as f64 > 0.9 * 10e-3 * 100e9 / 8.0 * 1500.0 / 1542.0, "delivered {delivered_bytes} B");
        assert!(q <= bound, "incast {n}: max queue {q} > bound {bound}");
        assert!(q < buffer / 10, "incast {n}: max queue {q} ≥ 10% of the buffer");
        // Under overload the low-load optimisation stays off: a burst goes unsolicited
        // only when the last chosen slot was below t, which a backlogged port never
        // grants after the first exchanges (the issue's ≤ 1% at 400%).
        assert!(st.unsolicited_bursts * 100 <= st.bursts, "unsolicited {} of {} bursts", st.unsolicited_bursts, st.bursts);

        let (raw, rq) = incast_for(n, threads, None, false, until);
        let rd = raw.counters().total_drops();
        println!("raw incast {n}×{threads}: max queue {rq} B, drops {rd}");
        assert!(rd > 0, "raw Ethernet overflows the same 1.5 MB port limit");
        assert!(rq > buffer - WIRE, "raw fills the port limit: {rq}");
    }
}

/// A finding, not a wish: with Algorithm 1's decrement at ingress (the default), a packet
/// stops counting when it enters the switch, so the receiver queue is invisible to the
/// counters. Closed-loop senders at ≥ 400% then settle where the counter an RSV sees
/// (≈ 26 slots) is below its time average, the data rate is ~0.6% above the line rate
/// and the queue grows without bound (measured ~0.08 frames/µs). With the low-load
/// optimisation on, unsolicited bursts (admitted by the T rule, which reads the same
/// counters) arrive right behind their RSVs, keep chosen < t and the port overflows.
/// This test pins that behaviour; if it starts failing, the faithful model changed.
#[test]
fn faithful_ingress_decrement_does_not_bound_the_incast_queue() {
    let n = 4;
    let threads = threads_for_400(n);
    let (sim, q) = incast(n, threads, Some(Pl2Config::default()), false);
    let st = sim.module_stats().pl2.unwrap_or_default();
    println!(
        "PL2 (faithful, ingress) incast {n}×{threads}: max queue {q} B, drops {}, unsolicited {}/{}",
        sim.counters().total_drops(),
        st.unsolicited_bursts,
        st.bursts
    );
    assert!(q > queue_bound(n, threads), "{q}");
    assert!(sim.counters().total_drops() > 0);
    assert!(st.unsolicited_bursts * 2 > st.bursts, "most bursts stay unsolicited");
    let (sim, q) = incast(n, 1, Some(Pl2Config { low_load: false, ..Pl2Config::default() }), false);
    println!("PL2 (faithful, no low-load) incast {n}×1: max queue {q} B, drops {}", sim.counters().total_drops());
    assert!(q > queue_bound(n, 1), "{q}");
}

#[test]
fn ideal_scheduler_keeps_at_most_one_frame_waiting_at_the_receiver() {
    // Reference: one back-to-back raw flow. A frame arriving the instant the previous one
    // finishes is counted with it, so "one frame" reads as 2 × 1542 B in `port_max_queue`.
    let mut net = rack(2);
    net.host.send_latency = DelayDist::constant(Duration(224_000));
    let sim = run(spec(net, vec![list(vec![msg(0, 0, 1, 10 * 1500)])]), SimTime(u64::MAX / 2));
    let one_frame = sim.port_max_queue()[sim.host_downlink(1) as usize];
    assert_eq!(one_frame, 2 * WIRE);
    for n in [2u32, 4, 8] {
        // Unsolicited bursts bypass the schedule: off.
        let cfg = Pl2Config { switch_mode: Pl2SwitchMode::Ideal, low_load: false, ..Pl2Config::default() };
        let (sim, q) = incast(n, threads_for_400(n), Some(cfg), true);
        println!("ideal incast {n}: max queue {q} B, delivered {}", sim.counters().messages_finished);
        assert_eq!(sim.counters().total_drops(), 0);
        assert!(sim.counters().messages_finished > 3000);
        // The GRT carries the chosen slot relative to the switch's current slot, which
        // drops the RSV's phase within that slot: two senders' bursts booked back to back
        // can overlap by less than one slot, so one frame may wait behind the one on the
        // wire. Beyond that (and the equal-time artefact above) nothing queues.
        assert!(q <= one_frame + WIRE, "ideal incast {n}: max queue {q} B: more than one frame waits");
        // PL2's key diagnostic: every scheduled burst reaches the switch within about a
        // slot of its slot boundary. Early by up to a slot because the GRT's relative
        // slot drops the RSV's phase within the switch's slot (as above); late by up to
        // a slot plus the few ns the RSV-GRT estimate misses by.
        let a = sim.module_stats().pl2.unwrap_or_default().arrival_error;
        assert!(a.bursts > 1000, "{a:?}");
        assert!(a.min_ps > -123_360 && a.max_ps < 2 * 123_360, "ideal incast {n}: {a:?}");
        assert!((a.sum_ps / a.bursts as i64).abs() < 123_360, "ideal incast {n}: mean error beyond a slot: {a:?}");
    }
}

#[test]
fn low_load_bursts_after_the_first_go_unsolicited() {
    // One thread, 64 KiB messages (44 packets: 11 bursts), Poisson at 10% of 100 Gbps:
    // mean gap 65536 × 8 / 10 Gbps = 52.4 µs. Within a message the next RSV goes as soon
    // as the previous burst is granted and transmitted (< 1 µs after its GRT, inside the
    // 2-estimate recency window ≈ 2 µs) and, alone in the rack, its chosen slot is 0 < t:
    // every burst after the first is unsolicited. The first usually is not (the last GRT
    // is ~50 µs old).
    let size = 64 * 1024u64;
    let mut rng = SimRng::stream(7, "arrivals");
    let mut t = 1_000_000.0;
    let mut msgs = Vec::new();
    for _ in 0..300 {
        t += rng.exponential(size as f64 * 8.0 / 10e9 * 1e12);
        msgs.push(MessageSpec { time: SimTime(t as u64), src: 0, dst: 1, size, thread: 0, priority: 0 });
    }
    let mut net = NetworkConfig::pl2_testbed();
    net.topology = TopologyConfig::SingleRack { hosts: 2, breakout: 1 };
    let mut sp = spec(net, vec![list(msgs)]);
    pl2(&mut sp, Pl2Config::default());
    let mut sim = run(sp, SimTime(u64::MAX / 2));
    sim.finish();
    assert_eq!(sim.counters().messages_finished, 300);
    let recs = sim.drain_records();
    let msg_of: BTreeMap<u32, u64> = probes(&recs.probes, "pl2_msg").into_iter().map(|(_, b, m)| (b, m as u64)).collect();
    let mut by_msg: BTreeMap<u64, Vec<(u32, bool)>> = BTreeMap::new();
    for (_, b, u) in probes(&recs.probes, "pl2_unsolicited") {
        by_msg.entry(msg_of[&b]).or_default().push((b, u > 0.5));
    }
    let (mut later, mut later_unsolicited, mut first_unsolicited) = (0, 0, 0);
    for bursts in by_msg.values_mut() {
        bursts.sort_unstable();
        assert_eq!(bursts.len(), 11);
        first_unsolicited += u32::from(bursts[0].1);
        later += bursts.len() - 1;
        later_unsolicited += bursts[1..].iter().filter(|b| b.1).count();
    }
    let share = later_unsolicited as f64 / later as f64;
    let st = sim.module_stats().pl2.unwrap_or_default();
    println!("unsolicited share after the first burst: {share:.4} ({later_unsolicited}/{later}); first bursts unsolicited {first_unsolicited}/300; resent {}, dropped {}, duplicates {}", st.resent_bursts, st.switch.unsolicited_dropped, st.duplicates);
    assert!(share >= 0.9, "share {share}");
    assert_eq!(st.switch.unsolicited_unrecovered_packets, 0);
}

#[test]
fn testbed_idle_rsv_grt_exchange_matches_the_paper() {
    // One host sends single-packet messages 20 µs apart: every exchange meets an idle
    // network. The paper (§5): 1.00 µs min, 1.06 µs median, 14 µs max NIC to NIC.
    let n = 30_000u64;
    let msgs = (0..n).map(|i| MessageSpec { time: SimTime(i * 20_000_000), src: 0, dst: 1, size: 1500, thread: 0, priority: 0 }).collect();
    let mut net = NetworkConfig::pl2_testbed();
    net.topology = TopologyConfig::SingleRack { hosts: 2, breakout: 1 };
    let mut sp = spec(net, vec![list(msgs)]);
    pl2(&mut sp, Pl2Config { low_load: false, ..Pl2Config::default() });
    let mut sim = run(sp, SimTime(u64::MAX / 2));
    sim.finish();
    let recs = sim.drain_records();
    let mut v: Vec<f64> = probes(&recs.probes, "pl2_rsv_grt_ps").into_iter().map(|p| p.2).collect();
    assert_eq!(v.len() as u64, n);
    v.sort_by(f64::total_cmp);
    let q = |x: f64| v[((v.len() - 1) as f64 * x).round() as usize];
    let (min, med, p9999) = (v[0], q(0.5), q(0.9999));
    println!("RSV–GRT exchange: min {:.1} ns, median {:.1} ns, p99.99 {:.1} ns, max {:.1} ns", min / 1e3, med / 1e3, p9999 / 1e3, v[v.len() - 1] / 1e3);
    assert!((min / 1e6 - 1.00).abs() <= 0.05, "min {min}");
    assert!((med / 1e6 - 1.06).abs() <= 0.05 * 1.06, "median {med}");
    assert!(p9999 <= 14e6, "p99.99 {p9999}");
}

#[test]
fn pl2_where_the_racks_are_not_given_is_refused() {
    let mut net = NetworkConfig::default();
    net.topology = TopologyConfig::FatTree { k: 4 };
    let mut sp = spec(net, vec![]);
    pl2(&mut sp, Pl2Config::default());
    let e = Simulation::new(sp).err().expect("refused").to_string();
    assert!(e.contains("leaf_spine") && e.contains("fat tree"), "{e}");
}
