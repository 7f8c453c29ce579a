//! PL2 features that are wired but were not exercised elsewhere: pipelined exchanges,
//! per-destination exchanges, the talk's priorities, §4.5's GRT copies and receiver
//! cancels under a host crash, §7's inter-rack share, and the two readings of equation (1).
//! Every run goes through `run`, which checks packet conservation.

use super::common::*;
use pl2_sim::config::{NetworkConfig, TopologyConfig};
use pl2_sim::dist::DelayDist;
use pl2_sim::metrics::{DropReason, ProbeRecord};
use pl2_sim::sim::{FaultSpec, PersistentSpec, SimSpec, Simulation, TransportConfig};
use pl2_sim::transport::pl2::config::{Pl2Decrement, Pl2Equation1, Pl2Exchanges, Pl2Pipeline, Pl2SwitchMode};
use pl2_sim::transport::pl2::Pl2Config;
use pl2_sim::units::{BitsPerSec, Duration, SimTime};
use pl2_sim::workload::MessageSpec;
use std::collections::BTreeMap;

const SER: u64 = 123_360; // one timeslot: 1542 B at 100 Gbps, in ps
const WIRE: u64 = 1542;

/// The testbed profile with `hosts` hosts, its host stages at their minima and the switch
/// pipeline constant (346 ns) unless `jitter`.
fn testbed(hosts: u32, threads: u16, jitter: bool) -> NetworkConfig {
    let mut net = NetworkConfig::pl2_testbed();
    net.topology = TopologyConfig::SingleRack { hosts, breakout: 1 };
    net.host.threads = threads;
    net.host.recv_latency = DelayDist::constant(Duration(223_280));
    if !jitter {
        net.switch.latency = DelayDist::constant(Duration::from_ns(346));
    }
    net
}

fn with(net: NetworkConfig, cfg: Pl2Config) -> SimSpec {
    let mut sp = spec(net, vec![]);
    sp.transport = TransportConfig::Pl2(cfg);
    sp
}

fn stream(host: u32, thread: u16, dst: u32, size: u64, prio: u8) -> PersistentSpec {
    PersistentSpec { host, thread, dst, size, prio, start: SimTime(u64::from(host) * 10_007 + u64::from(thread) * 3_001), transport: 0, workload: 0, next: Default::default() }
}

/// `senders` hosts with `threads` persistent 6000 B streams each to host `senders`.
fn incast_streams(senders: u32, threads: u16) -> Vec<PersistentSpec> {
    (0..senders).flat_map(|s| (0..threads).map(move |t| stream(s, t, senders, 6000, 0))).collect()
}

fn probes_by_burst(recs: &[ProbeRecord], host: u32, name: &str) -> BTreeMap<u32, (SimTime, f64)> {
    recs.iter().filter(|p| p.host == host && p.name == name).map(|p| (p.flow, (p.time, p.value))).collect()
}

/// Time at which the last of `msgs` (all finite) is delivered.
fn makespan(cfg: Pl2Config, net: NetworkConfig, msgs: Vec<MessageSpec>) -> (u64, Simulation) {
    let n = msgs.len() as u64;
    let mut sp = with(net, cfg);
    sp.sources = vec![list(msgs)];
    let mut sim = run(sp, SimTime(u64::MAX / 2));
    sim.finish();
    assert_eq!(sim.counters().messages_finished, n, "every message delivered");
    assert_eq!(sim.counters().total_drops(), 0);
    let recs = sim.drain_records();
    let end = recs.messages.iter().map(|m| m.finish.unwrap().0).max().unwrap();
    (end, sim)
}

#[test]
fn pipelined_exchanges_raise_single_thread_goodput() {
    // One thread, 100 messages of 64 KiB (44 packets, 11 bursts) queued at once, low-load
    // optimisation off so every burst is one exchange. Blocking: the next RSV leaves once
    // the burst is granted and transmitted, so each burst costs one exchange (~1 µs) plus
    // its 4 × 123 ns. Pipelined: the next RSV leaves when the burst is handed to the NIC,
    // so up to two exchanges overlap and the bursts' waits hide the exchange.
    let size = 64 * 1024u64;
    let msgs: Vec<_> = (0..100).map(|_| MessageSpec { time: SimTime(0), src: 0, dst: 1, size, thread: 0, priority: 0 }).collect();
    let base = Pl2Config { low_load: false, ..Pl2Config::default() };
    let (tb, _) = makespan(base.clone(), testbed(2, 1, false), msgs.clone());
    let (tp, sim) = makespan(Pl2Config { pipeline: Pl2Pipeline::Pipelined, ..base }, testbed(2, 1, false), msgs);
    let gbps = |t: u64| 100.0 * size as f64 * 8.0 / (t as f64 / 1e12) / 1e9;
    println!("64 KiB × 100, one thread: blocking {:.1} µs ({:.1} Gbps), pipelined {:.1} µs ({:.1} Gbps)", tb as f64 / 1e6, gbps(tb), tp as f64 / 1e6, gbps(tp));
    assert!(gbps(tp) > 1.5 * gbps(tb), "pipelined {:.1} vs blocking {:.1} Gbps", gbps(tp), gbps(tb));
    // Pipelining must not break the schedule: one sender alone, nothing dropped or queued
    // beyond a burst plus one early one.
    let q = sim.port_max_queue()[sim.host_downlink(1) as usize];
    assert!(q <= 2 * 4 * WIRE, "pipelined single sender queued {q} B");
}

#[test]
fn per_destination_exchanges_overlap_two_destinations() {
    // One thread alternates 4-packet messages (one burst each) to hosts 1 and 2. The
    // thread is released when its message is handed to the NIC. Per thread, the RSV for
    // the other destination waits until that burst is transmitted (blocking, §5); per
    // destination (§4.2.1's NIC design) it leaves at once, so the exchange overlaps the
    // previous burst's transmission.
    let msgs: Vec<_> = (0..400).map(|i| MessageSpec { time: SimTime(0), src: 0, dst: 1 + (i % 2), size: 6000, thread: 0, priority: 0 }).collect();
    let base = Pl2Config { low_load: false, ..Pl2Config::default() };
    let (tt, _) = makespan(base.clone(), testbed(3, 1, false), msgs.clone());
    let (td, sim) = makespan(Pl2Config { exchanges: Pl2Exchanges::PerDestination, ..base.clone() }, testbed(3, 1, false), msgs.clone());
    println!("400 × 6000 B alternating 2 destinations: per thread {:.1} µs, per destination {:.1} µs ({:.3}×)", tt as f64 / 1e6, td as f64 / 1e6, tt as f64 / td as f64);
    assert!(td as f64 * 1.2 < tt as f64, "per destination {td} vs per thread {tt}");
    for d in [1, 2] {
        assert!(sim.port_max_queue()[sim.host_downlink(d) as usize] <= 2 * 4 * WIRE);
    }
    // Control: one destination only, the scope makes no difference.
    let one: Vec<_> = msgs.iter().map(|m| MessageSpec { dst: 1, ..*m }).collect();
    let (a, _) = makespan(base.clone(), testbed(3, 1, false), one.clone());
    let (b, _) = makespan(Pl2Config { exchanges: Pl2Exchanges::PerDestination, ..base }, testbed(3, 1, false), one);
    println!("one destination: per thread {a}, per destination {b}");
    assert_eq!(a, b);
}

/// The full testbed profile (host receive jitter and switch jitter on), `hosts` hosts,
/// `threads` threads.
fn testbed_jitter(hosts: u32, threads: u16) -> NetworkConfig {
    let mut net = NetworkConfig::pl2_testbed();
    net.topology = TopologyConfig::SingleRack { hosts, breakout: 1 };
    net.host.threads = threads;
    net
}

fn recv_queue(sim: &Simulation, h: u32) -> u64 {
    sim.port_max_queue()[sim.host_downlink(h) as usize]
}

/// The talk's priority scheme. Hosts 0-3 × 12 threads of persistent low-priority 6000 B
/// messages to host 5 (48 blocking threads: up to 192 slots asked for, so low-priority
/// RSVs reach T1 = 64 and get one slot); host 4 sends a high-priority 4-packet message
/// every 20 µs (4.9 Gbps, so high-priority reservations stay far below T2: the talk's
/// condition). Host stages constant at the testbed minima (send 224 ns, receive 223.28
/// ns), switch pipeline 346 ns, 100 ns wires; those delays and the burst's own 4 frames
/// are the message's `ideal` time, so its latency beyond `ideal` is the RSV–GRT exchange
/// + the wait + queueing at the receiver port, which the talk bounds by the exchange +
/// T2 slots. Measured: max wait 7.39 µs (≤ 15.79 µs = T2 slots), max exchange 1.00 µs;
/// decrementing at dequeue the extra latency is ≤ 8.40 µs and the receiver queue 10
/// slots; decrementing at ingress (Algorithm 1) the queue reaches 205 slots and the extra
/// latency 32.3 µs: the counters (hence T1/T2) cannot see packets already queued.
#[test]
fn high_priority_bursts_wait_at_most_t2_slots_under_low_priority_overload() {
    const T2: u64 = 128;
    for decrement in [Pl2Decrement::Dequeue, Pl2Decrement::Ingress] {
        let cfg = Pl2Config { priorities: true, decrement_at: decrement, ..Pl2Config::default() };
        assert_eq!(cfg.priority_t2, T2);
        let mut sp = with(testbed(6, 12, false), cfg);
        sp.persistent = (0..4).flat_map(|s| (0..12).map(move |t| stream(s, t, 5, 6000, 0))).collect();
        let hi: Vec<_> = (0..200u64).map(|i| MessageSpec { time: SimTime(100_000_000 + i * 20_000_000), src: 4, dst: 5, size: 6000, thread: 0, priority: 1 }).collect();
        sp.sources = vec![list(hi)];
        let mut sim = run(sp, SimTime(4_200_000_000));
        let st = sim.module_stats().pl2.unwrap_or_default();
        let q = recv_queue(&sim, 5);
        let recs = sim.drain_records();
        let fold_max = |m: BTreeMap<u32, (SimTime, f64)>| m.values().map(|v| v.1).fold(0.0, f64::max);
        let max_wait = fold_max(probes_by_burst(&recs.probes, 4, "pl2_wait_ps"));
        let max_chosen = fold_max(probes_by_burst(&recs.probes, 4, "pl2_chosen_slots"));
        let max_ex = fold_max(probes_by_burst(&recs.probes, 4, "pl2_rsv_grt_ps"));
        let hi_msgs: Vec<_> = recs.messages.iter().filter(|m| m.prio == 1).collect();
        let finished = hi_msgs.iter().filter(|m| m.finish.is_some()).count();
        let max_extra = hi_msgs.iter().filter_map(|m| m.finish.map(|f| f.0 - m.start.0 - m.ideal.0)).max().unwrap() as f64;
        println!(
            "priorities ({decrement:?}): high-priority max wait {:.2} µs, max chosen {max_chosen} slots, max exchange {:.2} µs, max extra latency {:.2} µs, finished {finished}/200; receiver max queue {q} B ({:.1} slots); rejects {}, partial {}, drops {}",
            max_wait / 1e6,
            max_ex / 1e6,
            max_extra / 1e6,
            q as f64 / WIRE as f64,
            st.switch.rejects,
            st.switch.partial_grants,
            sim.counters().total_drops()
        );
        assert_eq!(finished, 200);
        assert_eq!(sim.counters().total_drops(), 0);
        assert!(st.switch.partial_grants > 1000, "the scheme must be engaged: {} partial grants", st.switch.partial_grants);
        // The high-priority burst's chosen slot and wait stay below T2 (plus its own K).
        assert!(max_chosen < (T2 + 4) as f64, "chosen {max_chosen}");
        assert!(max_wait <= (T2 * SER) as f64, "wait {max_wait}");
        let bound = (T2 * SER) as f64 + max_ex + SER as f64;
        match decrement {
            Pl2Decrement::Dequeue => {
                assert!(max_extra <= bound, "extra latency {max_extra} > T2 slots + exchange {bound}");
                assert!(q <= T2 * WIRE, "queue {q} > T2 slots");
            }
            // Finding, pinned: Algorithm 1's ingress decrement lets the queue outgrow T2.
            Pl2Decrement::Ingress => assert!(q > T2 * WIRE && max_extra > bound, "queue {q}, extra {max_extra}"),
        }
    }
}

/// §4.5. h0 runs 6 persistent threads to h2 and crashes at 500 µs with granted bursts in
/// flight and in its NIC. h1 sends one 1500 B message to h2 every 5 µs throughout; after
/// the crash it is alone, so its chosen slot is `out[h2]`: whatever h0 left behind.
/// Low-load optimisation off: an unsolicited copy that passes and is resent would
/// decrement twice (hole 1) and eat the leak we measure. Measured: without GRT copies
/// h1's chosen slot stays at 18 forever (18 leaked reservations); with copies the
/// receiver cancels 18 packets in 5 CANCELs and h1's chosen slot is 0 from 108 µs after
/// the crash (the deadline slack, `retry_timeout` = 100 µs, plus the last slot).
#[test]
fn receiver_cancels_release_a_crashed_senders_reservations() {
    let crash = 500_000_000u64;
    for copies in [false, true] {
        let cfg = Pl2Config { grt_copy_to_receiver: copies, low_load: false, ..Pl2Config::default() };
        let mut sp = with(testbed(3, 6, false), cfg);
        sp.persistent = (0..6).map(|t| stream(0, t, 2, 6000, 0)).collect();
        let probes: Vec<_> = (0..400u64).map(|i| MessageSpec { time: SimTime(2_000_000 + i * 5_000_000), src: 1, dst: 2, size: 1500, thread: 0, priority: 0 }).collect();
        sp.sources = vec![list(probes)];
        sp.faults = vec![FaultSpec::HostCrash { host: 0, at: Duration(crash) }];
        let mut sim = run(sp, SimTime(2_100_000_000));
        let st = sim.module_stats().pl2.unwrap_or_default();
        let host_down = sim.counters().drops[DropReason::HostDown as usize];
        let recs = sim.drain_records();
        let h1_done = recs.messages.iter().filter(|m| m.src == 1 && m.finish.is_some()).count();
        let chosen: Vec<(u64, f64)> = probes_by_burst(&recs.probes, 1, "pl2_chosen_slots").values().map(|(t, v)| (t.0, *v)).collect();
        let before = chosen.iter().filter(|c| c.0 < crash).map(|c| c.1).fold(0.0, f64::max);
        let late: Vec<f64> = chosen.iter().filter(|c| c.0 > crash + 300_000_000).map(|c| c.1).collect();
        let (late_min, late_max) = (late.iter().cloned().fold(f64::MAX, f64::min), late.iter().cloned().fold(0.0, f64::max));
        let recovered = chosen.iter().filter(|c| c.0 > crash).find(|c| c.1 == 0.0).map(|c| c.0 - crash);
        println!(
            "crash, GRT copies {copies}: h1 delivered {h1_done}/400, chosen before crash ≤ {before}, ≥ 300 µs after: {late_min}..{late_max}, recovered after {:?} µs, cancels {} ({} packets), copies {}, host-down drops {host_down}",
            recovered.map(|t| t as f64 / 1e6),
            st.switch.cancels,
            st.switch.cancelled_packets,
            st.switch.grt_copies,
        );
        assert_eq!(h1_done, 400, "the other flow completes");
        assert!(before > 0.0, "h1 shared the receiver with h0 before the crash");
        assert!(late.len() > 200);
        if copies {
            assert!(st.switch.cancels > 0 && st.switch.cancelled_packets > 0);
            assert_eq!(late_max, 0.0, "reservations released: out[h2] back to zero");
            let r = recovered.expect("recovers");
            assert!(r <= 100_000_000 + 20_000_000, "recovery {r} ps");
            assert!(r >= 100_000_000, "released before the deadline slack: {r} ps");
        } else {
            assert_eq!(st.switch.cancels, 0);
            assert!(late_min > 0.0 && late_min == late_max, "the leak stays: {late_min}..{late_max}");
        }
    }
}

/// §4.5's deadlines must not fire on a loaded but healthy network. 4 senders × 3
/// threads (≥ 400% offered) with GRT copies: decrementing at dequeue (the bounded
/// configuration, zero drops) there is not a single CANCEL. Finding, pinned: with
/// Algorithm 1's ingress decrement the receiver queue fills the 1.5 MB port limit (≈ 120
/// µs of queueing, longer than the 100 µs deadline slack), so receivers cancel bursts that
/// are merely late as well as dropped ones (measured: 90,089 packets cancelled vs 70,437
/// dropped), and every false cancel lowers the counters further.
#[test]
fn no_false_cancels_at_400_percent() {
    for dec in [Pl2Decrement::Dequeue, Pl2Decrement::Ingress] {
        let cfg = Pl2Config { grt_copy_to_receiver: true, decrement_at: dec, ..Pl2Config::default() };
        let mut sp = with(testbed_jitter(5, 3), cfg);
        sp.persistent = incast_streams(4, 3);
        let sim = run(sp, SimTime(3_000_000_000));
        let st = sim.module_stats().pl2.unwrap_or_default();
        let drops = sim.counters().total_drops();
        println!("400% with GRT copies ({dec:?}): cancels {} ({} packets), copies {}, retries {}, drops {drops}, max queue {} B, delivered {}", st.switch.cancels, st.switch.cancelled_packets, st.switch.grt_copies, st.rsv_retries, recv_queue(&sim, 4), sim.counters().messages_finished);
        assert!(st.switch.grt_copies > 5000);
        match dec {
            Pl2Decrement::Dequeue => {
                assert_eq!(drops, 0);
                assert_eq!(st.rsv_retries, 0);
                assert_eq!(st.switch.cancels, 0, "false cancels");
            }
            _ => assert!(st.switch.cancelled_packets > drops, "pinned finding: late bursts cancelled"),
        }
    }
}

/// §7's inter-rack share, as what external traffic does to the receiver's downlink: it
/// takes that rate away (a `link_rate` fault from time 0; the timeslot is still derived
/// from 100G). The packet-level version is the next test. Ideal switch (absolute slots,
/// so a downlink slower than the schedule shows as a growing queue; the faithful counters
/// decremented at ingress drift on their own, see `pl2.rs`), low-load optimisation off.
/// 2 senders × 4 threads to h2 for 3 ms. Measured: no share 97.20 Gbps; share 10% 87.47
/// Gbps (= 0.9 × 97.2: each packet reserves 1/0.9 slot); external traffic at the share
/// (downlink 90G): no drops, max queue 4 frames; at twice the share (80G): 1460 drops,
/// queue at the 1.5 MB port limit.
#[test]
fn inter_rack_share_absorbs_external_traffic_at_the_share() {
    let one = |share: u32, rate_g: u64| {
        let cfg = Pl2Config { switch_mode: Pl2SwitchMode::Ideal, low_load: false, external_share_ppm: Some(share), ..Pl2Config::default() };
        let mut sp = with(testbed(3, 4, false), cfg);
        sp.persistent = incast_streams(2, 4);
        if rate_g != 100 {
            sp.faults = vec![FaultSpec::LinkRate { a: "h2".into(), b: "s0".into(), at: Duration(0), rate: BitsPerSec::gbps(rate_g) }];
        }
        let sim = run(sp, SimTime(3_000_000_000));
        let c = sim.counters();
        let gbps = c.messages_finished as f64 * 6000.0 * 8.0 / 3e-3 / 1e9;
        println!("share {share} ppm, downlink {rate_g}G: {:.2} Gbps delivered, drops {}, max queue {} B", gbps, c.total_drops(), recv_queue(&sim, 2));
        (gbps, c.total_drops(), recv_queue(&sim, 2))
    };
    let (g0, d0, _) = one(0, 100);
    let (g1, d1, q1) = one(100_000, 100);
    assert_eq!(d0 + d1, 0);
    // The share's arithmetic: PL2 uses 1 − r of the port.
    assert!((g1 / g0 - 0.9).abs() < 0.01, "{g1} / {g0}");
    assert!(q1 <= 3 * WIRE);
    let (_, d, q) = one(100_000, 90);
    assert_eq!(d, 0, "external traffic at the share: no drops");
    assert!(q <= 4 * WIRE, "external traffic at the share: queue {q}");
    let (_, d, q) = one(100_000, 80);
    assert!(d > 0 && q > 1_000_000, "twice the share must show: drops {d}, queue {q}");
}

/// §7's inter-rack share with external traffic as packets: h3 stands for the ToR's
/// uplink from the rest of the datacenter and sends unscheduled raw Ethernet frames (a
/// second transport, no PL2) to h2 at a constant rate, while h0 and h1 send to h2 over
/// PL2 with 10% of every port reserved (ideal switch, low-load optimisation off, 2 × 4
/// threads, 3 ms). Measured: external frames at the share (10% of the downlink's wire
/// time): no drops, max queue 4 frames; at twice the share: 1460 drops, the queue at the
/// 1.5 MB port limit.
#[test]
fn inter_rack_share_absorbs_packet_level_external_traffic_at_the_share() {
    use pl2_sim::transport::raw::RawConfig;
    let one = |share_of_wire: f64| {
        let cfg = Pl2Config { switch_mode: Pl2SwitchMode::Ideal, low_load: false, external_share_ppm: Some(100_000), ..Pl2Config::default() };
        let mut sp = with(testbed(4, 4, false), cfg);
        sp.transports = vec![TransportConfig::Raw(RawConfig::default())];
        sp.persistent = incast_streams(2, 4);
        for p in &mut sp.persistent {
            p.dst = 2;
        }
        // One full frame (1500 B payload, WIRE bytes on the wire) every WIRE / share byte
        // times: `share_of_wire` of the downlink.
        let gap = (SER as f64 / share_of_wire) as u64;
        let msgs = (0..3_000_000_000 / gap)
            .map(|i| MessageSpec { time: SimTime(i * gap), src: 3, dst: 2, size: 1500, thread: u16::MAX, priority: 0 })
            .collect();
        sp.sources = vec![pl2_sim::sim::Source::List { msgs, next: 0, transport: 1, workload: 0 }];
        let sim = run(sp, SimTime(3_000_000_000));
        assert_conserved(&sim);
        let c = sim.counters();
        println!("external at {share_of_wire} of the wire: drops {}, max queue {} B", c.total_drops(), recv_queue(&sim, 2));
        (c.total_drops(), recv_queue(&sim, 2), c.messages_finished)
    };
    let (d, q, n) = one(0.1);
    assert_eq!(d, 0, "external traffic at the share: no drops");
    assert!(q <= 6 * WIRE, "external traffic at the share: queue {q}");
    // 2432 external frames, and 6000 B PL2 messages at ~87 Gbps for 3 ms (~5470).
    assert!(n > 7_800, "{n} messages: the external frames and the PL2 messages were delivered");
    let (d, q, _) = one(0.2);
    assert!(d > 0 && q > 1_000_000, "twice the share must show: drops {d}, queue {q}");
}

/// Equation (1)'s two readings on 2–5 sender incasts (12 threads each, testbed profile
/// with its jitter, 5 ms). Measured max receiver queue (KiB), ingress a / b, dequeue a / b:
/// n=2: 1464 / 1464 (both drop) · 55.7 / 55.7; n=3: 376 / 73.8 · 57.2 / 57.2;
/// n=4: 232 / 69.3 · 39.2 / 48.2; n=5: 134 / 48.2 · 39.2 / 33.1. Reading (a) subtracts
/// the NIC backlog from the wait although the burst will also sit behind it, so bursts
/// arrive early by that backlog; the counters, decremented at ingress, never see the
/// queue that builds, and it grows for the whole run (~75 KiB/ms at n=3, 40 ms in
/// results.md). Reading (b) (our default) keeps it bounded for 3–5 senders; with 2
/// senders × 12 threads neither reading is bounded under the ingress decrement. At
/// dequeue the counters include the queue and both readings are bounded.
#[test]
fn equation1_reading_b_keeps_the_queue_bounded() {
    assert_eq!(Pl2Config::default().equation1, Pl2Equation1::B);
    let q = |n: u32, eq: Pl2Equation1, dec: Pl2Decrement| {
        let cfg = Pl2Config { equation1: eq, decrement_at: dec, ..Pl2Config::default() };
        let mut sp = with(testbed_jitter(n + 1, 12), cfg);
        sp.persistent = incast_streams(n, 12);
        let sim = run(sp, SimTime(5_000_000_000));
        let c = sim.counters();
        let buffer_drops = c.drops[DropReason::BufferFull as usize] + c.drops[DropReason::PortLimit as usize];
        println!("equation (1) {eq:?}, decrement {dec:?}, {n} senders: max queue {} B, buffer drops {buffer_drops}", recv_queue(&sim, n));
        (recv_queue(&sim, n), buffer_drops)
    };
    for n in 2..=5u32 {
        for eq in [Pl2Equation1::A, Pl2Equation1::B] {
            let (qd, dd) = q(n, eq, Pl2Decrement::Dequeue);
            assert_eq!(dd, 0);
            assert!(qd <= 48 * WIRE, "dequeue, {eq:?}, {n}: {qd}");
        }
        let (qa, da) = q(n, Pl2Equation1::A, Pl2Decrement::Ingress);
        let (qb, db) = q(n, Pl2Equation1::B, Pl2Decrement::Ingress);
        if n == 2 {
            // Pinned finding: neither reading is bounded here.
            assert!(da > 0 && db > 0);
        } else {
            assert_eq!(db, 0);
            assert!(qb <= 64 * WIRE, "reading (b), {n} senders: {qb}");
            assert!(qa > 2 * qb, "reading (a) grows: {qa} vs {qb}");
        }
    }
}

/// Issue 24, item 4: the ToR's table of bursts awaiting their first scheduled packet
/// gained an entry per grant and lost it only when a scheduled first packet came, so
/// every unsolicited burst that passed (and is never resent) stayed for the whole run
/// (20,000 such bursts left 19,999 entries). One 1500 B message every 2 µs from host 0
/// goes unsolicited (the last GRT is recent), so nearly every grant is never matched;
/// the table has 1024 rows per source host (burst id mod 1024), so with one sender it
/// fills to exactly 1024 and stays there: the same peak after 10,000 and after 20,000
/// such bursts.
#[test]
fn the_tors_awaited_bursts_stay_bounded_over_a_long_unsolicited_run() {
    let peak_after = |n: u64| {
        let mut sp = with(testbed(2, 1, false), Pl2Config::default());
        let msgs: Vec<_> = (0..n).map(|i| MessageSpec { time: SimTime(i * 2_000_000), src: 0, dst: 1, size: 1500, thread: 0, priority: 0 }).collect();
        sp.sources = vec![list(msgs)];
        let sim = run(sp, SimTime(u64::MAX / 2));
        let st = sim.module_stats().pl2.unwrap_or_default();
        assert!(st.switch.unsolicited_passed + 10 > n, "the run is unsolicited: {:?}", st.switch);
        let unmatched = st.switch.grants - st.arrival_error.bursts;
        assert!(unmatched + 10 > n, "grants never matched by a scheduled first packet: {unmatched} of {n}");
        st.arrival_pending_peak
    };
    assert_eq!(peak_after(10_000), 1024);
    assert_eq!(peak_after(20_000), 1024);
}
