//! TCP: framing-limited goodput, fast retransmit, SACK vs NewReno recovery of three
//! losses, a tail loss recovered by the RTO (backoff, Karn's rule), CUBIC's window
//! curve and its Reno-friendly region, DCTCP's alpha against the marked fraction and its
//! queue against the DCTCP analysis, an incast with drops, and a random workload under
//! loss (completion, determinism) for each recovery mode.

use super::common::*;
use pl2_sim::config::{EcnConfig, NetworkConfig};
use pl2_sim::metrics::Records;
use pl2_sim::sim::{FaultSpec, ProgressClock, SimSpec, Simulation, StopAt, TransportConfig};
use pl2_sim::transport::tcp::wire::flow_id;
use pl2_sim::transport::tcp::{CcKind, TcpConfig, TcpStats};
use pl2_sim::units::{BitsPerSec, Bytes, Duration, SimTime};

const END: SimTime = SimTime(u64::MAX / 2);
const MSS: u64 = 1460;
const MS: u64 = 1_000_000_000;

fn tcp(net: NetworkConfig, msgs: Vec<pl2_sim::workload::MessageSpec>, cfg: TcpConfig) -> SimSpec {
    let mut sp = spec(net, vec![list(msgs)]);
    sp.transport = TransportConfig::Tcp(cfg);
    sp
}

fn run_tcp(sp: SimSpec) -> (Simulation, Records, TcpStats) {
    let mut sim = run(sp, END);
    sim.finish();
    let recs = sim.drain_records();
    let st = sim.module_stats().tcp.unwrap_or_default();
    (sim, recs, st)
}

fn net100() -> NetworkConfig {
    two_hosts_one_switch(BitsPerSec::gbps(100), BitsPerSec::gbps(100))
}

fn finished(recs: &Records) -> u64 {
    assert_eq!(recs.messages.len(), 1);
    recs.messages[0].finish.expect("delivered").0
}

/// (time, value) of a probe, in order.
fn probe(recs: &Records, name: &str) -> Vec<(u64, f64)> {
    recs.probes.iter().filter(|p| p.name == name).map(|p| (p.time.0, p.value)).collect()
}

#[test]
fn lossless_flow_reaches_1460_over_1542_of_line_rate() {
    let completion = |n: u64| {
        let (_, recs, st) = run_tcp(tcp(net100(), vec![msg(0, 0, 1, n * MSS)], TcpConfig::default()));
        assert_eq!((st.retransmissions, st.timeouts, st.segments_sent), (0, 0, n));
        finished(&recs)
    };
    let n = 2000;
    let dt = completion(2 * n) - completion(n);
    let g = n as f64 * MSS as f64 * 8.0 / (dt as f64 * 1e-12) / 1e9;
    assert!((g / (100.0 * 1460.0 / 1542.0) - 1.0).abs() < 1e-6, "{g} Gbps");
}

fn with_drops(cfg: TcpConfig, size: u64, segs: &[u64], times: u32) -> (Records, TcpStats) {
    let mut sp = tcp(net100(), vec![msg(0, 0, 1, size)], cfg);
    sp.faults = segs.iter().map(|&k| FaultSpec::DropNth { flow: flow_id(0, 1, 0), seq: (k * MSS) as u32, times }).collect();
    let (sim, recs, st) = run_tcp(sp);
    assert_eq!(sim.counters().total_drops(), segs.len() as u64 * u64::from(times), "the faults dropped what they should");
    finished(&recs);
    (recs, st)
}

fn srtt_ps(recs: &Records) -> u64 {
    let v = probe(recs, "tcp_srtt_us");
    (v.last().expect("probes").1 * 1e6) as u64
}

#[test]
fn one_loss_is_repaired_by_fast_retransmit() {
    for sack in [true, false] {
        let cfg = TcpConfig { sack, ..TcpConfig::default() };
        let (_, st) = with_drops(cfg, 300 * MSS, &[50], 1);
        assert_eq!((st.fast_recoveries, st.retransmissions, st.timeouts), (1, 1, 0), "sack {sack}: {st:?}");
    }
}

/// Time from the first to the last of three retransmissions.
fn three_losses(sack: bool) -> (u64, u64, TcpStats) {
    let cfg = TcpConfig { sack, ..TcpConfig::default() };
    let (recs, st) = with_drops(cfg, 400 * MSS, &[60, 63, 66], 1);
    let retx = probe(&recs, "tcp_retx");
    let first = retx.iter().find(|p| p.1 >= 1.0).expect("resent").0;
    let last = retx.iter().find(|p| p.1 >= 3.0).expect("resent thrice").0;
    (last - first, srtt_ps(&recs), st)
}

#[test]
fn three_losses_in_a_window_sack_takes_one_rtt_newreno_three() {
    let (d_sack, rtt, st) = three_losses(true);
    assert_eq!((st.fast_recoveries, st.retransmissions, st.timeouts), (1, 3, 0), "{st:?}");
    let (d_reno, rtt2, st) = three_losses(false);
    assert_eq!((st.fast_recoveries, st.retransmissions, st.timeouts), (1, 3, 0), "{st:?}");
    assert!(d_sack < rtt, "SACK resends all three within one RTT: {d_sack} ps, RTT {rtt} ps");
    assert!(d_reno >= 3 * rtt2 / 2 && d_reno > 3 * d_sack, "NewReno needs a partial ACK per loss: {d_reno} ps vs {d_sack}, RTT {rtt2}");
}

#[test]
fn tail_loss_is_repaired_by_the_rto_with_backoff_and_karn() {
    // A 1-byte message at 20 ms keeps the run going until the last ACKs arrive.
    let run_tail = |times: u32| {
        let mut sp = tcp(net100(), vec![msg(0, 0, 1, 20 * MSS), msg(20 * MS, 0, 1, 1)], TcpConfig::default());
        if times > 0 {
            sp.faults = vec![FaultSpec::DropNth { flow: flow_id(0, 1, 0), seq: (19 * MSS) as u32, times }];
        }
        let (sim, recs, st) = run_tcp(sp);
        assert_eq!(sim.counters().total_drops(), u64::from(times));
        assert!(recs.messages.iter().all(|m| m.finish.is_some()));
        (recs, st)
    };
    let (_, st0) = run_tail(0);
    assert_eq!((st0.timeouts, st0.rtt_samples), (0, st0.acks_received), "{st0:?}");
    // The last segment is lost twice: two timeouts, 1 ms (min RTO) then 2 ms.
    let (recs, st) = run_tail(2);
    assert_eq!((st.timeouts, st.retransmissions, st.fast_recoveries), (2, 2, 0), "{st:?}");
    // Timeouts publish probes with cwnd = 1 MSS.
    let cwnd = probe(&recs, "tcp_cwnd");
    let rtos: Vec<u64> = cwnd.iter().filter(|p| p.1 == MSS as f64).map(|p| p.0).collect();
    assert_eq!(rtos.len(), 2, "{rtos:?}");
    let last_ack = cwnd.iter().filter(|p| p.0 < rtos[0]).last().expect("ACKs before").0;
    assert_eq!(rtos[0] - last_ack, MS, "first RTO: the 1 ms minimum after the last ACK of new data");
    assert_eq!(rtos[1] - rtos[0], 2 * MS, "backed off to 2 ms");
    let first = &recs.messages.iter().find(|m| m.size == 20 * MSS).expect("first message");
    let done = first.finish.expect("delivered").0;
    assert!(done > rtos[1] && done - rtos[1] < 20_000_000, "delivered one RTT after the second timeout");
    // Karn: the ACK of the resent segment gives no RTT sample (every other ACK does), so
    // the smoothed RTT it publishes is the one before.
    assert_eq!(st.rtt_samples + 1, st.acks_received, "{st:?}");
    let srtt = probe(&recs, "tcp_srtt_us");
    let before = srtt.iter().filter(|p| p.0 <= rtos[1]).last().expect("before").1;
    let after = srtt.iter().find(|p| p.0 > rtos[1]).expect("after").1;
    assert_eq!(before, after);
}

/// One flow 0 → 1 with a `size`-byte message and segment `drop` lost once.
fn cubic_run(net: NetworkConfig, cfg: TcpConfig, size: u64, drop: u64) -> Records {
    let (recs, st) = with_drops_on(net, cfg, size, &[drop]);
    assert_eq!((st.fast_recoveries, st.timeouts), (1, 0), "{st:?}");
    recs
}

fn with_drops_on(net: NetworkConfig, cfg: TcpConfig, size: u64, segs: &[u64]) -> (Records, TcpStats) {
    let mut sp = tcp(net, vec![msg(0, 0, 1, size)], cfg);
    sp.faults = segs.iter().map(|&k| FaultSpec::DropNth { flow: flow_id(0, 1, 0), seq: (k * MSS) as u32, times: 1 }).collect();
    let (_, recs, st) = run_tcp(sp);
    finished(&recs);
    (recs, st)
}

#[test]
fn cubic_window_follows_the_cubic_curve_at_100_mbps_100_ms() {
    // 25 ms per link: RTT 100 ms; BDP 1.25 MB ≈ 856 segments.
    let mut net = two_hosts_one_switch(BitsPerSec(100_000_000), BitsPerSec(100_000_000));
    net.link.delay = Duration::from_ms(25);
    let cfg = TcpConfig { cc: Some(CcKind::Cubic), min_rto: Duration::from_ms(200), initial_rto: Duration::from_ms(1000), ..TcpConfig::default() };
    let recs = cubic_run(net, cfg, 100_000_000, 300);
    let cwnd = probe(&recs, "tcp_cwnd");
    let retx = probe(&recs, "tcp_retx");
    let t_loss = retx.iter().find(|p| p.1 >= 1.0).expect("resent").0;
    // Slow start: the window at the loss is the largest before it (the resend itself
    // may wait in the transmit ring behind an ACK that already shows the reduction).
    let w_max = cwnd.iter().filter(|p| p.0 < t_loss).map(|p| p.1).fold(0.0, f64::max) / MSS as f64;
    assert!((200.0..700.0).contains(&w_max), "W_max {w_max} segments");
    let k = (w_max * (1.0 - 0.7) / 0.4).cbrt();
    // The epoch starts at the first window increase after recovery.
    let reduced = 0.7 * w_max;
    let t0 = cwnd.iter().find(|p| p.0 > t_loss && p.1 / MSS as f64 > reduced + 0.5).expect("growth").0;
    let mut worst: f64 = 0.0;
    let mut n = 0;
    for &(t, c) in cwnd.iter().filter(|p| p.0 >= t0) {
        let dt = (t - t0) as f64 * 1e-12;
        if dt > 1.5 * k {
            break;
        }
        let w = 0.4 * (dt - k).powi(3) + w_max;
        worst = worst.max((c / MSS as f64 - w).abs() / w_max);
        n += 1;
    }
    assert!(n > 1000, "{n} samples");
    assert!(worst < 0.05, "cwnd off the cubic curve by {worst} of W_max");
    let reno: Vec<f64> = probe(&recs, "tcp_cubic_reno_friendly").iter().filter(|p| p.0 > t0).map(|p| p.1).collect();
    assert!(reno.iter().filter(|&&v| v == 0.0).count() > reno.len() * 9 / 10, "cubic region at 100 ms RTT");
}

#[test]
fn cubic_is_reno_friendly_at_microsecond_rtts() {
    let cfg = TcpConfig { cc: Some(CcKind::Cubic), ..TcpConfig::default() };
    let recs = cubic_run(net100(), cfg, 3_000 * MSS, 200);
    let retx = probe(&recs, "tcp_retx");
    let t_loss = retx.iter().find(|p| p.1 >= 1.0).expect("resent").0;
    let flags: Vec<f64> = probe(&recs, "tcp_cubic_reno_friendly").iter().filter(|p| p.0 > t_loss + 50_000_000).map(|p| p.1).collect();
    assert!(flags.len() > 100, "{} congestion-avoidance ACKs", flags.len());
    assert!(flags.iter().all(|&v| v == 1.0), "W_cubic stays below the Reno estimate at µs RTTs");
}

#[test]
fn dctcp_alpha_tracks_the_marked_fraction() {
    // Two long flows (the second 1 µs later) into one 100 Gbps port marked at 30 KB
    // (step). The marked fraction is counted at the receiver (CE on arrival) between 3
    // and 8 ms; alpha is the senders' estimate from the echoes, averaged over the same
    // span (each alpha is an EWMA over ~16 windows).
    let mut net = NetworkConfig::default();
    net.topology = pl2_sim::config::TopologyConfig::SingleRack { hosts: 3, breakout: 1 };
    net.switch.ecn = EcnConfig::Step { threshold: Bytes(30_000), at_dequeue: false };
    let cfg = TcpConfig { cc: Some(CcKind::Dctcp), ..TcpConfig::default() };
    let sp = tcp(net, vec![msg(0, 0, 2, 200_000_000), msg(1_000_000, 1, 2, 200_000_000)], cfg);
    let mut sim = Simulation::new(sp).expect("valid");
    let mut clock = ProgressClock::new(std::time::Duration::from_secs(3600));
    let t1 = SimTime(3 * MS);
    let t2 = SimTime(8 * MS);
    sim.run(StopAt { end: t1, all_delivered: true, event_budget: None }, &mut clock, &mut |_| true);
    let a = sim.module_stats().tcp.unwrap_or_default();
    sim.run(StopAt { end: t2, all_delivered: true, event_budget: None }, &mut clock, &mut |_| true);
    let b = sim.module_stats().tcp.unwrap_or_default();
    assert_conserved(&sim);
    let recs = sim.drain_records();
    let f = (b.ce_received - a.ce_received) as f64 / (b.segments_received - a.segments_received) as f64;
    for flow in [flow_id(0, 2, 0), flow_id(1, 2, 0)] {
        let al: Vec<f64> = recs.probes.iter().filter(|p| p.name == "tcp_alpha" && p.flow == flow && p.time > t1).map(|p| p.value).collect();
        let mean = al.iter().sum::<f64>() / al.len() as f64;
        assert!(f > 0.02 && f < 0.9, "marked fraction {f}");
        assert!((mean - f).abs() < 0.1 * f + 0.005, "alpha {mean} vs marked fraction {f}");
    }
    assert_eq!(b.timeouts, 0);
}

#[test]
fn incast_with_drops_completes_and_dctcp_drops_less() {
    // 8 senders × 1 MB into one port limited to 100 KB.
    let mut out = Vec::new();
    for cc in [CcKind::Cubic, CcKind::NewReno, CcKind::Dctcp] {
        let mut net = NetworkConfig::default();
        net.topology = pl2_sim::config::TopologyConfig::SingleRack { hosts: 9, breakout: 1 };
        net.switch.dynamic_thresholds = false;
        net.switch.port_limit = Some(Bytes(100_000));
        net.switch.ecn = EcnConfig::Step { threshold: Bytes(30_000), at_dequeue: false };
        let msgs = (0..8).map(|s| msg(0, s, 8, 1_000_000)).collect();
        let (sim, recs, st) = run_tcp(tcp(net, msgs, TcpConfig { cc: Some(cc), ..TcpConfig::default() }));
        assert_eq!(recs.messages.len(), 8);
        assert!(recs.messages.iter().all(|m| m.finish.is_some()), "{cc:?}: unfinished");
        let drops = sim.counters().total_drops();
        assert!(st.retransmissions >= drops, "{cc:?}: {st:?}, drops {drops}");
        out.push((cc, drops, st));
    }
    assert!(out[0].1 > 0 && out[1].1 > 0, "loss-based control fills the buffer: {out:?}");
    assert!(out[2].1 * 4 < out[0].1, "DCTCP keeps the queue near 30 KB: {out:?}");
}

fn poisson_run(seed: u64, cfg: TcpConfig) -> (String, TcpStats) {
    use pl2_sim::config::TopologyConfig;
    use pl2_sim::framing::{Framing, L4Headers};
    use pl2_sim::rng::SimRng;
    use pl2_sim::sim::Source;
    use pl2_sim::workload::{DestChooser, PoissonParams, PoissonSource, SizeCdf};
    let mut net = NetworkConfig::default();
    net.topology = TopologyConfig::LeafSpine { leaves: 2, spines: 2, hosts_per_leaf: 4, uplink: Default::default() };
    net.switch.dynamic_thresholds = false;
    net.switch.port_limit = Some(Bytes(60_000));
    net.host.threads = 2;
    let sources = (0..8)
        .map(|h| {
            let gen = PoissonSource::new(PoissonParams {
                src: h,
                load: 0.6,
                nic_rate: BitsPerSec::gbps(100),
                sizes: SizeCdf::builtin("w3").unwrap(),
                dests: DestChooser::UniformExcept { n_hosts: 8, exclude_self: true },
                start: SimTime(0),
                stop: SimTime(200_000_000),
                framing: Framing::default(),
                l4: L4Headers::Tcp { options: 0 },
                mtu_bytes: 1500,
                thread: u16::MAX,
                priority: 0,
            })
            .unwrap();
            Source::Poisson { gen: Box::new(gen), rng: SimRng::stream(seed, &format!("src{h}")), pending: None, transport: 0, workload: 0 }
        })
        .collect();
    let mut sp = spec(net, sources);
    sp.transport = TransportConfig::Tcp(cfg);
    sp.seed = seed;
    let (sim, r, st) = run_tcp(sp);
    assert!(r.messages.len() > 50);
    let unfinished = r.messages.iter().filter(|m| m.finish.is_none()).count();
    assert_eq!(unfinished, 0, "{st:?}");
    // Every message's bytes were sent at least once and delivered in order.
    assert!(r.messages.iter().all(|m| m.finish.unwrap() >= SimTime(m.start.0 + m.ideal.0)), "faster than ideal");
    (format!("{:?}{:?}{:?}{:?}{:?}", r.messages, r.drops, r.probes, sim.counters(), st), st)
}

#[test]
fn random_workload_under_loss_completes_and_is_deterministic() {
    for cfg in [
        TcpConfig::default(),
        TcpConfig { sack: false, cc: Some(CcKind::NewReno), ..TcpConfig::default() },
        TcpConfig { delayed_ack: false, cc: Some(CcKind::None), ..TcpConfig::default() },
        TcpConfig { rack_tlp: true, ..TcpConfig::default() },
        TcpConfig { rack_tlp: true, prr: true, ..TcpConfig::default() },
    ] {
        let (a, st) = poisson_run(7, cfg.clone());
        assert!(st.retransmissions > 0, "the scenario should lose packets: {st:?}");
        assert_eq!(a, poisson_run(7, cfg.clone()).0);
        assert_ne!(a, poisson_run(8, cfg).0);
    }
    // PRR takes part: the same losses are recovered at other times.
    let rack = TcpConfig { rack_tlp: true, ..TcpConfig::default() };
    assert_ne!(poisson_run(7, rack.clone()).0, poisson_run(7, TcpConfig { prr: true, ..rack }).0);
}

/// The bottleneck queue (in 1542 B frames) of `n` DCTCP flows marked at `k` frames,
/// sampled every 50 ns from 2 to 6 ms: (1st percentile, maximum).
fn dctcp_queue(n: u32, k: u64) -> (f64, f64) {
    let mut net = NetworkConfig::default();
    net.topology = pl2_sim::config::TopologyConfig::SingleRack { hosts: n + 1, breakout: 1 };
    net.switch.ecn = EcnConfig::Step { threshold: Bytes(k * 1542), at_dequeue: false };
    // One ACK per segment, as the analysis assumes.
    let cfg = TcpConfig { cc: Some(CcKind::Dctcp), delayed_ack: false, ..TcpConfig::default() };
    let msgs = (0..n).map(|s| msg(u64::from(s) * 1_000_000, s, n, 500_000_000)).collect();
    let mut sp = tcp(net, msgs, cfg);
    sp.metrics.probes = false;
    let mut sim = Simulation::new(sp).expect("valid");
    let mut clock = ProgressClock::new(std::time::Duration::from_secs(3600));
    let port = sim.host_downlink(n);
    let mut t = 2 * MS;
    let mut q = Vec::new();
    while t <= 6 * MS {
        sim.run(StopAt { end: SimTime(t), all_delivered: true, event_budget: None }, &mut clock, &mut |_| true);
        q.push(sim.port_queued(port) as f64 / 1542.0);
        t += 50_000;
    }
    assert_conserved(&sim);
    assert_eq!((sim.counters().total_drops(), sim.module_stats().tcp.unwrap_or_default().timeouts), (0, 0));
    q.sort_by(|a, b| a.partial_cmp(b).expect("finite"));
    (q[(q.len() - 1) / 100], q[q.len() - 1])
}

#[test]
fn dctcp_queue_peaks_at_k_plus_n_with_the_predicted_amplitude() {
    // DCTCP analysis (Alizadeh et al. 2010, §3.3), in packets: Q_max = K + N, amplitude
    // A = ½·√(2N(C·RTT + K)). Here K = 20 and C·RTT ≈ 11 (100 Gbps, ≈ 1.36 µs base RTT:
    // 1542 B and 84 B serialisations, 4 × 100 ns of wire, 2 × 350 ns of switch).
    for n in [2u32, 4, 8] {
        let (q1, qmax) = dctcp_queue(n, 20);
        let a = 0.5 * (2.0 * f64::from(n) * (11.0 + 20.0)).sqrt();
        assert!((qmax - (20.0 + f64::from(n))).abs() <= 1.0, "N {n}: Q_max {qmax}, K + N = {}", 20 + n);
        // The fluid model's amplitude is a lower bound in packets: 8, 11, 17 measured
        // against 5.6, 7.9, 11.1 predicted (the sawtooth quantised to whole segments,
        // alpha a lagging EWMA).
        let amp = qmax - q1;
        assert!(amp >= a && amp <= 1.6 * a, "N {n}: amplitude {amp} frames, predicted {a:.1}");
    }
}

/// The values the ssthresh probe takes, each with the time it took it.
fn ssthresh_changes(recs: &Records) -> Vec<(u64, f64)> {
    let mut out: Vec<(u64, f64)> = Vec::new();
    for (t, v) in probe(recs, "tcp_ssthresh") {
        if out.last().is_none_or(|l| l.1 != v) {
            out.push((t, v));
        }
    }
    out
}

#[test]
fn dctcp_loss_in_a_window_the_ecn_response_cut_does_not_cut_again() {
    // One DCTCP flow, 100 Gbps into a 10 Gbps port marked at 5 KB: the initial window
    // queues and is marked, so the first ECE (one RTT later) cuts cwnd to
    // cwnd·(1 − α/2) with α = 1 (half) and ssthresh with it. Segment 12 goes out on the
    // first ACKs, before that ECE, and is dropped; its loss is detected after the cut.
    // RFC 3168 §6.1.2: one reduction per window of data for drops and CE marks together,
    // so entering recovery must leave ssthresh at the ECN value (it used to halve the
    // pipe a second time, which stalled the incast's recoveries with pipe > cwnd).
    let mut net = two_hosts_one_switch(BitsPerSec::gbps(100), BitsPerSec::gbps(10));
    net.switch.ecn = EcnConfig::Step { threshold: Bytes(5_000), at_dequeue: false };
    let cfg = TcpConfig { cc: Some(CcKind::Dctcp), ..TcpConfig::default() };
    let mut sp = tcp(net, vec![msg(0, 0, 1, 400 * MSS)], cfg);
    sp.faults = vec![FaultSpec::DropNth { flow: flow_id(0, 1, 0), seq: (12 * MSS) as u32, times: 1 }];
    let (_, recs, st) = run_tcp(sp);
    finished(&recs);
    assert_eq!((st.fast_recoveries, st.retransmissions, st.timeouts), (1, 1, 0), "{st:?}");
    let retx_at = probe(&recs, "tcp_retx").iter().find(|p| p.1 >= 1.0).expect("resent").0;
    let ss = ssthresh_changes(&recs);
    let before: Vec<_> = ss.iter().filter(|p| p.0 < retx_at).collect();
    let at = ss.iter().rfind(|p| p.0 <= retx_at).expect("a value at the retransmission");
    assert!(before.len() == 2 && before[1].1 < 1e15, "one cut before the loss, the ECE's: {ss:?}");
    assert_eq!(before[1].1, at.1, "recovery kept the ECN cut's ssthresh: {ss:?}");
    // The ECN cut halves (α₀ = 1) a slow-start window of 13 to 20 segments.
    assert!(before[1].1 >= 6.0 * MSS as f64 && before[1].1 <= 10.0 * MSS as f64, "{ss:?}");
}

#[test]
fn after_a_timeout_the_window_grows_by_data_newly_delivered_not_by_the_sacked_bytes_the_ack_covers() {
    // NewReno, 150 segments at 100 Gbps (all sent within a few RTTs); segment 140 is lost, and so
    // is its fast retransmission. Recovery then has nothing left to send: 141-149 are
    // SACKed, the RTO fires with the resent 140 the only segment in flight. Hand-worked:
    // - ssthresh = max(pipe / 2, 2 SMSS) = 2 SMSS (pipe = the resent 140, 1 SMSS), as ns-3
    //   halves BytesInFlight; RFC 5681's FlightSize (snd_nxt − snd_una = 10 SMSS) gave 5.
    // - the ACK of the timeout's retransmission covers 140-149 but delivers only 140
    //   (141-149 were SACKed before): slow start grows cwnd from 1 to 2 SMSS (it used to
    //   jump to ssthresh, counting the SACKed nine again).
    let cfg = TcpConfig { cc: Some(CcKind::NewReno), ..TcpConfig::default() };
    let mut sp = tcp(net100(), vec![msg(0, 0, 1, 150 * MSS), msg(20 * MS, 0, 1, 1)], cfg);
    sp.faults = vec![FaultSpec::DropNth { flow: flow_id(0, 1, 0), seq: (140 * MSS) as u32, times: 2 }];
    let (sim, recs, st) = run_tcp(sp);
    assert_eq!(sim.counters().total_drops(), 2);
    assert!(recs.messages.iter().all(|m| m.finish.is_some()));
    assert_eq!((st.fast_recoveries, st.timeouts, st.retransmissions), (1, 1, 2), "{st:?}");
    let cwnd = probe(&recs, "tcp_cwnd");
    let rto = cwnd.iter().find(|p| p.1 == MSS as f64).expect("the timeout's probe").0;
    let ss = probe(&recs, "tcp_ssthresh");
    assert_eq!(ss.iter().find(|p| p.0 >= rto).expect("ssthresh at the timeout").1, (2 * MSS) as f64);
    let next = cwnd.iter().find(|p| p.0 > rto).expect("the ACK after the timeout").1;
    assert_eq!(next, (2 * MSS) as f64, "one segment delivered, one SMSS of growth");
}

/// `metrics.probe_interval`: a CUBIC flow through a loss at 100 Mbps / 100 ms RTT, with
/// every published value and on a 10 ms grid. On the grid each series has at most one
/// row per window, and reading either table with sample-and-hold at every window's end
/// gives the same values.
#[test]
fn probes_on_a_grid_keep_the_last_value_of_every_window() {
    let mut net = two_hosts_one_switch(BitsPerSec(100_000_000), BitsPerSec(100_000_000));
    net.link.delay = Duration::from_ms(25);
    let cfg = TcpConfig { cc: Some(CcKind::Cubic), min_rto: Duration::from_ms(200), initial_rto: Duration::from_ms(1000), ..TcpConfig::default() };
    let grid = 10 * MS;
    let thinned = |interval: u64| {
        let mut sp = tcp(net.clone(), vec![msg(0, 0, 1, 20_000_000)], cfg.clone());
        sp.faults = vec![FaultSpec::DropNth { flow: flow_id(0, 1, 0), seq: (400 * MSS) as u32, times: 1 }];
        sp.metrics.probe_interval = Duration(interval);
        run_tcp(sp).1
    };
    let (all, thin) = (thinned(0), thinned(grid));
    for name in ["tcp_cwnd", "tcp_srtt_us", "tcp_inflight", "tcp_ssthresh"] {
        let (a, b) = (probe(&all, name), probe(&thin, name));
        assert!(b.len() >= 2 && a.len() > 5 * b.len(), "{name}: {} rows, {} on the grid", a.len(), b.len());
        let windows: Vec<u64> = b.iter().map(|p| p.0 / grid).collect();
        assert!(windows.windows(2).all(|w| w[0] < w[1]), "{name}: one row per window, in time order");
        let hold = |s: &[(u64, f64)], t: u64| s.iter().take_while(|p| p.0 <= t).last().map(|p| p.1);
        for k in 0..=a.last().unwrap().0 / grid {
            let t = (k + 1) * grid - 1;
            assert_eq!(hold(&a, t), hold(&b, t), "{name} at {t} ps");
        }
    }
}

/// `quick_acks`: the first N in-order segments are each ACKed at once, then every second
/// one (ns-3 ACKs the first data segment after its handshake at once: N = 1). A 10-segment
/// message (one initial window; the run stops when it is delivered, before a lone last
/// segment's delayed ACK): N = 0 gives 5 ACKs of 2 segments each, so slow start first
/// grows by 2 SMSS; N = 1 a lone first ACK (growth 1 SMSS) and 4 pairs, the 10th segment
/// waiting; N = 3 three single ACKs and 3 pairs.
#[test]
fn quick_acks_acknowledge_the_first_segments_one_by_one() {
    let run = |quick_acks: u32| {
        let cfg = TcpConfig { cc: Some(CcKind::Dctcp), quick_acks, ..TcpConfig::default() };
        // Marking on (DCTCP needs it), at a threshold ten segments never reach.
        let mut net = net100();
        net.switch.ecn = EcnConfig::Step { threshold: Bytes(1 << 20), at_dequeue: false };
        let (_, recs, st) = run_tcp(tcp(net, vec![msg(0, 0, 1, 10 * MSS)], cfg));
        let cwnd = probe(&recs, "tcp_cwnd");
        let first_growth = cwnd.iter().map(|p| p.1).find(|&c| c > (10 * MSS) as f64).unwrap() - (10 * MSS) as f64;
        (st.acks_sent, first_growth / MSS as f64)
    };
    assert_eq!(run(0), (5, 2.0));
    assert_eq!(run(1), (5, 1.0));
    assert_eq!(run(3), (6, 1.0));
}

/// Issue 24: one DCTCP flow and one CUBIC flow (no ECN) share a 100 Gb/s port marked at
/// 30 KB. With a mark-only queue (`non_ect = "pass"`, the default) CUBIC's frames are never
/// held back and it fills the buffer while DCTCP backs off: DCTCP gets a small share. With
/// RED/WRED's rule (`non_ect = "drop"`, as ns-3's RED queue with ECN) CUBIC's frames over
/// the threshold are dropped, CUBIC is held near it, and DCTCP gets most of the link
/// (ns-3: 98%).
#[test]
fn non_ect_frames_over_the_marking_threshold_pass_or_are_dropped() {
    use pl2_sim::config::NonEct;
    use pl2_sim::sim::Source;
    let share = |non_ect: NonEct| {
        let mut net = NetworkConfig::default();
        net.topology = pl2_sim::config::TopologyConfig::SingleRack { hosts: 3, breakout: 1 };
        net.switch.ecn = EcnConfig::Step { threshold: Bytes(30_000), at_dequeue: false };
        net.switch.non_ect = non_ect;
        let mut sp = spec(net, vec![]);
        sp.transport = TransportConfig::Tcp(TcpConfig { cc: Some(CcKind::Dctcp), ..TcpConfig::default() });
        sp.transports = vec![TransportConfig::Tcp(TcpConfig { cc: Some(CcKind::Cubic), ..TcpConfig::default() })];
        sp.sources = vec![
            Source::List { msgs: vec![msg(0, 0, 2, 400_000_000)], next: 0, transport: 0, workload: 0 },
            Source::List { msgs: vec![msg(0, 1, 2, 400_000_000)], next: 0, transport: 1, workload: 1 },
        ];
        let mut sim = Simulation::new(sp).expect("valid");
        let mut clock = ProgressClock::new(std::time::Duration::from_secs(3600));
        sim.run(StopAt { end: SimTime(10 * MS), all_delivered: true, event_budget: None }, &mut clock, &mut |_| true);
        assert_conserved(&sim);
        let drops = sim.counters().drops[pl2_sim::metrics::DropReason::NonEct as usize];
        let tx = sim.port_tx_bytes();
        let (d, c) = (tx[sim.host_port(0) as usize] as f64, tx[sim.host_port(1) as usize] as f64);
        (d / (d + c), drops)
    };
    let (pass, pass_drops) = share(NonEct::Pass);
    let (drop, drop_drops) = share(NonEct::Drop);
    println!("DCTCP's share: mark-only {pass:.3}, RED with ECN {drop:.3} ({drop_drops} non-ECT drops)");
    assert_eq!(pass_drops, 0);
    assert!(drop_drops > 0);
    assert!(pass < 0.2, "mark-only: DCTCP's share {pass}");
    assert!(drop > 0.7, "RED with ECN: DCTCP's share {drop}");
}

/// Issue 24: a frame that is not ECN-capable is dropped exactly where an ECN-capable one
/// would be marked. One 10-segment message (the initial window) leaves at 100 Gb/s into
/// a 10 Gb/s port. The i-th frame finds i − 1 frames at the port (the first needs
/// 1233.6 ns to serialise, the tenth arrives 9 × 123.36 ns after it, so none has left),
/// and the step rule counts the arriving frame: with the threshold at t bytes, frames
/// i ≥ ⌈t / 1542⌉ are over it, 11 − ⌈t / 1542⌉ of the ten. DCTCP's frames (ECT) are
/// marked there; CUBIC's (not ECT) pass with `non_ect = "pass"` and are dropped with
/// `"drop"`, the same number, and nothing else is dropped (the resends after the
/// timeout find at most three frames ahead).
#[test]
fn a_non_ect_frame_is_dropped_where_an_ect_frame_is_marked() {
    use pl2_sim::config::NonEct;
    use pl2_sim::metrics::DropReason;
    let run = |cc: CcKind, non_ect: NonEct, threshold: u64| {
        let mut net = two_hosts_one_switch(BitsPerSec::gbps(100), BitsPerSec::gbps(10));
        net.switch.ecn = EcnConfig::Step { threshold: Bytes(threshold), at_dequeue: false };
        net.switch.non_ect = non_ect;
        let cfg = TcpConfig { cc: Some(cc), initial_window: 10, ..TcpConfig::default() };
        let (sim, recs, st) = run_tcp(tcp(net, vec![msg(0, 0, 1, 10 * MSS)], cfg));
        finished(&recs);
        let c = sim.counters();
        assert_eq!(c.total_drops(), c.drops[DropReason::NonEct as usize], "only the non-ECT rule drops here");
        (st.ce_received, c.drops[DropReason::NonEct as usize])
    };
    for (threshold, over) in [(5 * 1542, 6), (5 * 1542 + 1, 5), (10 * 1542, 1), (10 * 1542 + 1, 0)] {
        assert_eq!(run(CcKind::Dctcp, NonEct::Drop, threshold), (over, 0), "ECT, threshold {threshold} B");
        assert_eq!(run(CcKind::Dctcp, NonEct::Pass, threshold), (over, 0), "ECT, threshold {threshold} B");
        assert_eq!(run(CcKind::Cubic, NonEct::Drop, threshold), (0, over), "non-ECT dropped, threshold {threshold} B");
        assert_eq!(run(CcKind::Cubic, NonEct::Pass, threshold), (0, 0), "non-ECT passes, threshold {threshold} B");
    }
}

/// BBR (Linux 4.15) on one flow through a 10 Gbps bottleneck with 25 µs links: its
/// bandwidth estimate converges to the bottleneck's payload rate (10 Gbps × 1460/1542),
/// it keeps the link busy after STARTUP (goodput within 3 % of that rate), and it keeps
/// in flight at most its window, 2 × BDP plus three sending units (64 KiB each at this
/// rate: 44 segments), so the bottleneck queue stays below one BDP plus three units,
/// where a loss-based window fills whatever buffer there is.
#[test]
fn bbr_finds_the_bottleneck_rate_and_bounds_its_queue() {
    let mut net = two_hosts_one_switch(BitsPerSec::gbps(100), BitsPerSec::gbps(10));
    net.link.delay = Duration::from_us(25);
    let rate = 10e9 / 8.0 * MSS as f64 / 1542.0;
    let run_size = |bytes: u64| {
        let cfg = TcpConfig { cc: Some(CcKind::Bbr), ..TcpConfig::default() };
        run_tcp(tcp(net.clone(), vec![msg(0, 0, 1, bytes)], cfg))
    };
    let (_, recs, st) = run_size(40_000_000);
    assert_eq!((st.retransmissions, st.timeouts), (0, 0));
    let t_end = finished(&recs);
    let bw = probe(&recs, "tcp_bbr_bw_gbps");
    let last_bw = bw.last().expect("probes").1 * 1e9 / 8.0;
    assert!((last_bw / rate - 1.0).abs() < 0.01, "bandwidth estimate {last_bw} B/s against {rate} B/s");
    let min_rtt_s = probe(&recs, "tcp_bbr_min_rtt_us").last().expect("probes").1 * 1e-6;
    assert!(min_rtt_s > 100e-6 && min_rtt_s < 105e-6, "min RTT {min_rtt_s} s: 4 × 25 µs plus serialisation");
    let modes = probe(&recs, "tcp_bbr_mode");
    let t_probe_bw = modes.iter().find(|p| p.1 == 2.0).expect("reaches PROBE_BW").0;
    // STARTUP ends three rounds after the estimate stops growing, rounds lengthened by
    // STARTUP's own queue (about 4 RTTs each here): a few milliseconds.
    assert!(t_probe_bw < 3 * MS, "STARTUP and DRAIN took {t_probe_bw} ps");
    // Goodput after STARTUP: the second 20 MB against the first.
    let (_, recs_half, _) = run_size(20_000_000);
    let dt = (t_end - finished(&recs_half)) as f64 * 1e-12;
    let goodput = 20e6 / dt;
    assert!(goodput > 0.97 * rate && goodput < 1.001 * rate, "goodput {goodput} B/s against {rate} B/s");
    // The window in segments as `bbr_target_cwnd` rounds it (up, then to even), less the
    // BDP on the path (measured: at most 438,000 B in flight, 82 segments of BDP), plus
    // the frame being serialised and 3 segments: queue = flight − BDP holds on average,
    // and a unit arrives at ten times the drain rate (measured peak 1.6 segments over).
    let bdp = rate * min_rtt_s;
    let segs = ((2.0 * bdp / MSS as f64).ceil() as u64 + 3 * (65_536 / MSS) + 1) & !1;
    let bound = (segs * MSS - bdp as u64 + 4 * MSS) * 1542 / MSS;
    let q = recs.ports.iter().filter(|w| w.window_start.0 > t_probe_bw + MS).map(|w| w.max_queue_bytes).max().expect("windows");
    assert!(q <= bound, "queue {q} B above the window less one BDP ({bound} B)");
    assert!(q > bound / 4, "queue {q} B: the three units of the window's budget do queue");
}
