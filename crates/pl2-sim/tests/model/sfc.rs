//! Source Flow Control (802.1Qdw) against hand-worked timelines: a pause that drains the
//! queue to the target, suppression, the key of suppression, the ToR proxy's PFC PAUSE
//! and its timing, egress drops without PFC, conservation, determinism, bad settings.
//!
//! The timeline network: host 0 sends one RoCE flow (DCQCN never cuts: no switch marks)
//! at 100 Gb/s through a store-and-forward switch with no pipeline latency to host 1,
//! whose link runs at 33 Gb/s (a rate whose frame time shares no multiple with the
//! 100 Gb/s one for hundreds of frames, so no arrival coincides with a departure); links
//! have the default 100 ns delay. Every data frame is 1542 B on the wire: 123,360 ps at
//! 100 Gb/s (`SER`), ⌈12,336 bit / 33 Gb/s⌉ = 373,819 ps at 33 Gb/s (`D`). An SFC signal
//! is a 64 B frame, 84 B on the wire: 6,720 ps at 100 Gb/s.
//!
//! - The sender's pacer sends back to back: frame i starts at i × SER and reaches the
//!   switch at a_i = (i + 1) × SER + 100,000 ps; the 33 Gb/s port starts frame 0 at a_0 =
//!   223,360 ps and completes one every D, so by a_i it has completed ⌊i × SER / D⌋
//!   frames and holds (i + 1 − ⌊i × SER / D⌋) × 1542 B (the frame being sent included).
//! - i = 94: 95 − 31 = 64 frames, 98,688 B, below the 100 KB trigger; i = 95: 96 − 31 =
//!   65 frames, 100,230 B: the switch signals at a_95 = 11,942,560 ps. The pause drains
//!   100,230 − 50,000 = 50,230 B at 33 Gb/s: ⌈401,840 bit / 33 Gb/s⌉ = 12,176,970 ps.
//! - The port towards host 0 is idle: the signal's last bit reaches host 0 at
//!   11,942,560 + 6,720 + 100,000 = 12,049,280 ps, while frame 97 (started at 97 × SER =
//!   11,965,920) is on the wire. Frame 97 finishes; frame 98 starts when the pause ends,
//!   at 12,049,280 + 12,176,970 = 24,226,250 ps.
//! - Then the switch has received frames 0..=97 and completed ⌊(24,226,250 − 223,360) /
//!   D⌋ = 64: it holds 34 frames, 52,428 B — the 50,000 B target plus what arrived while
//!   the signal travelled (frames 96 and 97), less what left meanwhile, to a frame.

use super::common::*;
use pl2_sim::config::{CustomLink, LinkConfig, NetworkConfig, PfcConfig, PfcThreshold, SfcConfig, SfcPauseTime, SfcSuppressKey, TopologyConfig};
use pl2_sim::dist::DelayDist;
use pl2_sim::metrics::{DropReason, TraceEvent, TraceRecord};
use pl2_sim::packet::PktKind;
use pl2_sim::sim::{ProgressClock, SimSpec, Simulation, StopAt, TraceConfig, TransportConfig};
use pl2_sim::transport::roce::RoceConfig;
use pl2_sim::units::{BitsPerSec, Bytes, Duration, SimTime};
use pl2_sim::workload::MessageSpec;

const FRAME: u64 = 1542;
const SER: u64 = 123_360;
const D: u64 = 373_819;
const A0: u64 = SER + 100_000;
const SIGNAL_SER: u64 = 6_720;
const PROP: u64 = 100_000;
const END: SimTime = SimTime(u64::MAX / 2);

fn slow() -> BitsPerSec {
    BitsPerSec(33_000_000_000)
}

fn no_latency(mut net: NetworkConfig, sfc: SfcConfig) -> NetworkConfig {
    net.switch.latency = DelayDist::constant(Duration::ZERO);
    net.switch.cut_through = false;
    net.switch.sfc = Some(sfc);
    net
}

fn roce_spec(net: NetworkConfig, msgs: Vec<MessageSpec>) -> SimSpec {
    let mut sp = spec(net, vec![list(msgs)]);
    sp.transport = TransportConfig::Roce(RoceConfig::default());
    sp.metrics.trace = Some(TraceConfig::default());
    sp
}

/// The timeline network with `sfc` at the switch, host 0 sending `msgs`.
fn line(sfc: SfcConfig, msgs: Vec<MessageSpec>) -> SimSpec {
    roce_spec(no_latency(two_hosts_one_switch(BitsPerSec::gbps(100), slow()), sfc), msgs)
}

fn trace(sim: &mut Simulation) -> Vec<TraceRecord> {
    sim.drain_records().trace
}

/// (time, pause ps, flow) of each signal a switch (node ≥ 2 here) put on a wire.
fn signals_sent(t: &[TraceRecord], switch: u32) -> Vec<(u64, u64, u32)> {
    t.iter().filter(|r| r.packet.kind == PktKind::Sfc && r.event == TraceEvent::Tx && r.node == switch).map(|r| (r.time.0, r.packet.aux, r.packet.flow)).collect()
}

/// Start times of host 0's data frames.
fn data_starts(t: &[TraceRecord]) -> Vec<u64> {
    t.iter().filter(|r| r.event == TraceEvent::Tx && r.node == 0 && r.packet.kind == PktKind::Data).map(|r| r.time.0).collect()
}

#[test]
fn a_pause_drains_the_queue_to_the_target() {
    let mut sim = run(line(SfcConfig::default(), vec![msg(0, 0, 1, 300_000)]), END);
    let t = trace(&mut sim);
    let sig = signals_sent(&t, 2);
    assert_eq!(sig[0].0, 11_942_560, "the enqueue of frame 95 crosses the trigger");
    assert_eq!(sig[0].1, 12_176_970, "(100,230 − 50,000) B at 33 Gb/s");
    let arrive = t.iter().find(|r| r.packet.kind == PktKind::Sfc && r.event == TraceEvent::Arrive && r.node == 0).expect("the signal reaches host 0");
    assert_eq!(arrive.time.0, 11_942_560 + SIGNAL_SER + PROP);
    let starts = data_starts(&t);
    assert_eq!(&starts[95..98], &[95 * SER, 96 * SER, 97 * SER], "frame 97 was on the wire when the signal came");
    assert_eq!(starts[98], 24_226_250, "frame 98 waits exactly for the pause");
    let st = sim.sfc_stats().expect("SFC on");
    assert_eq!(st.signals_delivered, st.signals_sent);
    assert_eq!(sim.module_stats().roce.unwrap().sfc_pauses, st.signals_sent);

    // The same run stopped when the pause ends: the queue is at the target, to the
    // frames that arrived while the signal travelled.
    let mut sim = Simulation::new(line(SfcConfig::default(), vec![msg(0, 0, 1, 300_000)])).unwrap();
    sim.run(StopAt { end: SimTime(24_226_250), all_delivered: false, event_budget: None }, &mut ProgressClock::new(std::time::Duration::from_secs(3600)), &mut |_| true);
    let completed = (24_226_250 - A0) / D;
    assert_eq!(completed, 64);
    assert_eq!(sim.port_queued(sim.host_downlink(1)), (98 - completed) * FRAME);
    assert_eq!(sim.port_queued(sim.host_downlink(1)), 52_428);
}

#[test]
fn suppression_holds_repeats_for_its_period_then_the_next_crossing_signals() {
    // A fixed 1 µs pause leaves the queue near the trigger: it crosses again and again.
    // Each enqueue's queue depth follows from the traced arrivals and the 33 Gb/s
    // port's departures (it never idles: completions at a_0 + k × D); the rule then
    // says which enqueues signal: at or above the trigger, the key's last signal at
    // least 6 µs before.
    let sfc = SfcConfig { pause_time: SfcPauseTime::Fixed { time: Duration::from_us(1) }, ..SfcConfig::default() };
    let mut sim = run(line(sfc, vec![msg(0, 0, 1, 1_000_000)]), END);
    let t = trace(&mut sim);
    let arrivals: Vec<u64> = t.iter().filter(|r| r.event == TraceEvent::Arrive && r.node == 2 && r.packet.kind == PktKind::Data).map(|r| r.time.0).collect();
    let (mut expect, mut suppressed, mut last) = (Vec::new(), 0, None::<u64>);
    for (k, &a) in arrivals.iter().enumerate() {
        let queued = (k as u64 + 1 - (a - A0) / D) * FRAME;
        if a > 40_000_000 || queued < 100_000 {
            continue;
        }
        match last {
            Some(l) if a - l < 6_000_000 => suppressed += 1,
            _ => {
                expect.push(a);
                last = Some(a);
            }
        }
    }
    let sig: Vec<u64> = signals_sent(&t, 2).iter().map(|s| s.0).filter(|&s| s <= 40_000_000).collect();
    assert_eq!(sig, expect);
    assert!(expect.len() >= 4 && suppressed >= 10, "{expect:?}, {suppressed} suppressed");
    assert_eq!(expect[0], 11_942_560);
    for w in expect.windows(2) {
        assert!(w[1] - w[0] >= 6_000_000 && w[1] - w[0] < 6_000_000 + 2 * SER, "{w:?}: the first crossing after the period signals");
    }
    assert!(sim.sfc_stats().unwrap().signals_suppressed >= suppressed);
}

#[test]
fn suppression_per_flow_tells_each_flow_and_per_source_one_of_them() {
    // Two flows from host 0, served in turn: per flow, the crossing signals the flow of
    // the frame that crossed and then the other flow at the next enqueue; per source the
    // second is suppressed.
    let two = || vec![msg(0, 0, 1, 300_000), msg(0, 0, 1, 300_000)];
    let mut sim = run(line(SfcConfig::default(), two()), END);
    let sig = signals_sent(&trace(&mut sim), 2);
    assert_eq!(sig[0].0, 11_942_560);
    assert_eq!(sig[1].0, 11_942_560 + SER, "the other flow's next frame");
    assert_ne!(sig[0].2, sig[1].2);
    let per_source = SfcConfig { suppress_per: SfcSuppressKey::Source, ..SfcConfig::default() };
    let mut sim = run(line(per_source, two()), END);
    let sig = signals_sent(&trace(&mut sim), 2);
    assert_eq!(sig[0].0, 11_942_560);
    assert!(sig[1].0 >= sig[0].0 + 6_000_000, "{sig:?}");
}

/// h0 —100G— s0 —100G— s1 —33G— h1: the queue builds at s1, whose signal crosses s0,
/// host 0's ToR.
fn two_switches(sfc: SfcConfig) -> SimSpec {
    let mut net = NetworkConfig::default();
    net.topology = TopologyConfig::Custom {
        hosts: 2,
        switches: 2,
        links: vec![
            CustomLink { a: "h0".into(), b: "s0".into(), rate: Some(BitsPerSec::gbps(100)), delay: None },
            CustomLink { a: "s0".into(), b: "s1".into(), rate: Some(BitsPerSec::gbps(100)), delay: None },
            CustomLink { a: "s1".into(), b: "h1".into(), rate: Some(slow()), delay: None },
        ],
    };
    net.link = LinkConfig::default();
    roce_spec(no_latency(net, sfc), vec![msg(0, 0, 1, 300_000)])
}

#[test]
fn the_proxy_turns_the_signal_into_a_pfc_pause_at_the_senders_tor() {
    // Frames reach s1 one hop (SER + 100 ns) later than the switch of the timeline, in
    // the same rhythm: frame 95's enqueue crosses the trigger, at a_95 + SER + PROP, with
    // the same pause. The signal crosses the s1 → s0 link (6,720 + 100,000 ps); s0 ends
    // its input pipeline then (no latency), sees that its next hop is host 0 itself and
    // sends a PAUSE for priority 3 at once (its port towards host 0 is idle) of
    // ⌈12,176,970 ps × 100 Gb/s / 512 bit⌉ = 2379 quanta (12,180,480 ps at 100 Gb/s). The
    // PAUSE (84 B) reaches host 0 6,720 + 100,000 ps later; its NIC finishes the frame on
    // the wire and sends no priority-3 frame until the pause ends.
    let mut sim = run(two_switches(SfcConfig { proxy: true, ..SfcConfig::default() }), END);
    let t = trace(&mut sim);
    let sent = 11_942_560 + SER + PROP;
    let sig = signals_sent(&t, 3);
    assert_eq!(sig[0].0, sent);
    assert_eq!(sig[0].1, 12_176_970);
    assert!(signals_sent(&t, 2).is_empty(), "s0 never forwards a signal");
    let at_tor = t.iter().find(|r| r.packet.kind == PktKind::Sfc && r.event == TraceEvent::Arrive && r.node == 2).unwrap().time.0;
    assert_eq!(at_tor, sent + SIGNAL_SER + PROP);
    let pause = t.iter().find(|r| r.packet.kind == PktKind::Pause && r.event == TraceEvent::Tx).unwrap();
    assert_eq!((pause.node, pause.time.0, pause.packet.aux, pause.packet.seq), (2, at_tor, 2379, 1 << 3));
    let paused_at = at_tor + SIGNAL_SER + PROP;
    let starts = data_starts(&t);
    let on_wire = starts.iter().rposition(|&s| s < paused_at).unwrap();
    assert_eq!(starts[on_wire + 1], paused_at + 2379 * 5120, "the next frame waits for the PAUSE");
    assert!(starts[on_wire] + SER > paused_at, "frame {on_wire} was on the wire when the PAUSE came");
    let st = sim.sfc_stats().unwrap();
    assert_eq!((st.signals_proxied, st.signals_delivered), (st.signals_sent, 0));
    let pfc = sim.pfc_stats().expect("the proxy sends PAUSE frames");
    assert_eq!((pfc.pause_frames, pfc.pauses_at_hosts, pfc.pauses_at_switches), (st.signals_sent, st.signals_sent, 0));
    assert_eq!(sim.module_stats().roce.unwrap().sfc_pauses, 0, "the transport never heard of SFC");
}

#[test]
fn without_proxy_the_signal_crosses_the_tor_to_the_transport() {
    let mut sim = run(two_switches(SfcConfig::default()), END);
    let t = trace(&mut sim);
    let sent = 11_942_560 + SER + PROP;
    assert_eq!(signals_sent(&t, 3)[0].0, sent);
    // s0 forwards it after its (zero) pipeline; host 0 has it one more link later.
    let at_host = t.iter().find(|r| r.packet.kind == PktKind::Sfc && r.event == TraceEvent::Arrive && r.node == 0).unwrap().time.0;
    assert_eq!(at_host, sent + 2 * (SIGNAL_SER + PROP));
    assert!(t.iter().all(|r| r.packet.kind != PktKind::Pause));
    assert!(sim.pfc_stats().is_none());
    let st = sim.sfc_stats().unwrap();
    assert_eq!(st.signals_delivered, st.signals_sent);
}

#[test]
fn sfc_without_pfc_can_drop_and_every_frame_is_accounted_for() {
    // Eight RoCE senders at 100 Gb/s into one 100 Gb/s port, a 110 KB static buffer: by
    // the time the signals arrive, the frames in flight overflow the 10 KB above the
    // trigger. The drops are counted; go-back-N recovers every message; `run` checks
    // that every frame created was delivered, consumed, dropped or is still in flight,
    // and every signal either reached its transport or a proxy.
    let mut net = NetworkConfig::default();
    net.topology = TopologyConfig::SingleRack { hosts: 9, breakout: 1 };
    net.switch.dynamic_thresholds = false;
    net.switch.buffer = Bytes(110_000);
    net.switch.sfc = Some(SfcConfig::default());
    let msgs = (0..8).map(|s| msg(0, s, 8, 200_000)).collect();
    let mut sp = spec(net, vec![list(msgs)]);
    sp.transport = TransportConfig::Roce(RoceConfig::default());
    let mut sim = run(sp.clone(), END);
    let again = run(sp, END);
    assert_eq!((again.sfc_stats(), again.counters().drops, again.now()), (sim.sfc_stats(), sim.counters().drops, sim.now()), "deterministic");
    let drops = sim.counters().drops[DropReason::BufferFull as usize];
    assert!(drops > 0 && drops == sim.counters().total_drops(), "{:?}", sim.counters().drops);
    let st = sim.sfc_stats().unwrap();
    assert!(st.signals_sent >= 8, "{st:?}");
    assert_eq!(st.signals_delivered + st.signals_proxied, st.signals_sent);
    sim.finish();
    let m = sim.drain_records().messages;
    assert_eq!(m.iter().filter(|m| m.finish.is_some()).count(), 8);
}

#[test]
fn bad_sfc_settings_name_the_field() {
    let err = |sfc: SfcConfig| {
        let mut net = NetworkConfig::default();
        net.switch.sfc = Some(sfc);
        match Simulation::new(spec(net, vec![])) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("expected an error"),
        }
    };
    let e = err(SfcConfig { target: Bytes(100_000), ..SfcConfig::default() });
    assert!(e.contains("switch.sfc.target") && e.contains("below the trigger"), "{e}");
    let e = err(SfcConfig { trigger: Bytes(0), ..SfcConfig::default() });
    assert!(e.contains("switch.sfc.trigger"), "{e}");
    let e = err(SfcConfig { signal_priority: 3, ..SfcConfig::default() });
    assert!(e.contains("switch.sfc.signal_priority"), "{e}");
    let e = err(SfcConfig { priorities: vec![8], ..SfcConfig::default() });
    assert!(e.contains("switch.sfc.priorities"), "{e}");
    let e = err(SfcConfig { pause_time: SfcPauseTime::Fixed { time: Duration::ZERO }, ..SfcConfig::default() });
    assert!(e.contains("switch.sfc.pause_time"), "{e}");
    let mut net = NetworkConfig::default();
    net.switch.sfc = Some(SfcConfig::default());
    net.switch.pfc = Some(PfcConfig {
        priorities: vec![3, 7],
        xoff: PfcThreshold::Bytes(Bytes(650_000)),
        xon_gap: None,
        headroom: None,
        response_time: Duration::ZERO,
        pause_quanta: u16::MAX,
        refresh: true,
        deadlock_after: Duration::from_ms(10),
    });
    let e = Simulation::new(spec(net, vec![])).err().expect("signals in a lossless class").to_string();
    assert!(e.contains("switch.sfc.signal_priority") && e.contains("lossless"), "{e}");
}

/// Per-switch SFC (`[[network.override]]` `sfc`): with SFC off at the congested switch s1
/// nothing signals; with the proxy on at s0 alone (s1 plain SFC), s1's signal becomes
/// s0's PAUSE at exactly the time of the all-proxy run above.
#[test]
fn sfc_is_set_per_switch_by_overrides() {
    use pl2_sim::net::overrides::{Override, SfcOverride};
    let ov = |select: &str, sfc: SfcOverride| Override {
        select: select.into(),
        buffer: None,
        dynamic_thresholds: None,
        alpha: None,
        port_limit: None,
        ecn: None,
        latency: None,
        cut_through: None,
        queue: None,
        sfc: Some(sfc),
        rate: None,
        delay: None,
    };
    let mut off = two_switches(SfcConfig::default());
    off.net.overrides = vec![ov("s1", SfcOverride::Enabled(false))];
    let sim = run(off, END);
    assert!(sim.sfc_stats().is_none_or(|s| s.signals_sent == 0), "{:?}", sim.sfc_stats());

    let mut tor_proxy = two_switches(SfcConfig::default());
    tor_proxy.net.overrides = vec![ov("s0", SfcOverride::Config(SfcConfig { proxy: true, ..SfcConfig::default() }))];
    let mut sim = run(tor_proxy, END);
    let t = trace(&mut sim);
    let sent = 11_942_560 + SER + PROP;
    assert_eq!(signals_sent(&t, 3)[0].0, sent);
    let pause = t.iter().find(|r| r.packet.kind == PktKind::Pause && r.event == TraceEvent::Tx).unwrap();
    assert_eq!((pause.node, pause.time.0, pause.packet.aux), (2, sent + SIGNAL_SER + PROP, 2379));
    let st = sim.sfc_stats().unwrap();
    assert_eq!((st.signals_proxied, st.signals_delivered), (st.signals_sent, 0));
}
