//! PFC (802.1Qbb) against hand-worked timelines, and a pause deadlock on a ring.
//!
//! The timeline network: host 0 sends ten 1500 B frames of lossless priority 3 at
//! 10 Gb/s through a store-and-forward switch (no pipeline latency) to host 1, whose link
//! runs at 1 Gb/s; every link has the default 100 ns delay. Tagged Ethernet: 1542 B on
//! the wire (1,233,600 ps at 10 Gb/s, 12,336,000 ps at 1 Gb/s); a PAUSE is 84 B (67,200 ps
//! at 10 Gb/s). XOFF is 3 frames (4626 B) of host 0's bytes in the switch; XON the default
//! 2 frames below it (1542 B).
//!
//! - Frame i reaches the switch at a_i = (i + 1) × 1,233,600 + 100,000 ps; at a_2 =
//!   3,800,800 ps the switch holds 4626 B from host 0: XOFF. The PAUSE leaves at once
//!   (the port towards host 0 is idle), its last bit reaches host 0 at 3,800,800 + 67,200 +
//!   100,000 = 3,968,000 ps, while host 0 serialises frame 3 (3,700,800 – 4,934,400 ps):
//!   frame 3 finishes, frame 4 waits.
//! - The 1 Gb/s port sends frame 0 from a_0 = 1,333,600 ps; frames 0, 1, 2 leave by
//!   1,333,600 + 3 × 12,336,000 = 38,341,600 ps, leaving 1542 B: XON, which reaches host 0
//!   at 38,341,600 + 67,200 + 100,000 = 38,508,800 ps: frame 4 starts then.

use super::common::*;
use pl2_sim::config::{CustomLink, HostPfcConfig, LinkConfig, NetworkConfig, PfcConfig, PfcThreshold, TopologyConfig};
use pl2_sim::dist::DelayDist;
use pl2_sim::metrics::{DropReason, TraceEvent};
use pl2_sim::packet::PktKind;
use pl2_sim::sim::{Simulation, StopReason, TraceConfig, TransportConfig};
use pl2_sim::transport::raw::RawConfig;
use pl2_sim::units::{BitsPerSec, Bytes, Duration, SimTime};
use pl2_sim::workload::MessageSpec;

const FRAME: u64 = 1542;
const SER_10G: u64 = 1_233_600;

fn pfc(quanta: u16, refresh: bool, headroom: Option<u64>) -> PfcConfig {
    PfcConfig {
        priorities: vec![3],
        xoff: PfcThreshold::Bytes(Bytes(3 * FRAME)),
        xon_gap: None,
        headroom: headroom.map(Bytes),
        response_time: Duration::ZERO,
        pause_quanta: quanta,
        refresh,
        deadlock_after: Duration::from_ms(10),
    }
}

fn line(cfg: PfcConfig, frames: u64) -> Simulation {
    line_with(cfg, frames, |_| {}, vec![])
}

/// `line` with the network changed by `f` and `more` messages beside host 0's.
fn line_with(cfg: PfcConfig, frames: u64, f: impl FnOnce(&mut NetworkConfig), more: Vec<MessageSpec>) -> Simulation {
    let mut net = two_hosts_one_switch(BitsPerSec::gbps(10), BitsPerSec::gbps(1));
    net.switch.latency = DelayDist::constant(Duration::ZERO);
    net.switch.cut_through = false;
    net.switch.pfc = Some(cfg);
    f(&mut net);
    let mut msgs = vec![msg(0, 0, 1, frames * 1500)];
    msgs.extend(more);
    let mut sp = spec(net, vec![list(msgs)]);
    sp.transport = TransportConfig::Raw(RawConfig { priority: 3, ..Default::default() });
    sp.metrics.trace = Some(TraceConfig::default());
    run(sp, SimTime(u64::MAX / 2))
}

/// Start times of host 0's data frames.
fn sends(sim: &mut Simulation) -> Vec<u64> {
    let t = sim.drain_records().trace;
    t.iter().filter(|r| r.event == TraceEvent::Tx && r.node == 0 && r.packet.kind == PktKind::Data).map(|r| r.time.0).collect()
}

#[test]
fn xoff_stops_the_sender_after_its_frame_on_the_wire_and_xon_restarts_it() {
    let mut sim = line(pfc(u16::MAX, true, None), 5);
    let st = sim.pfc_stats().expect("PFC on");
    assert_eq!((st.pause_frames, st.xon_frames, st.pauses_at_hosts), (1, 1, 2));
    assert_eq!(sim.counters().total_drops(), 0);
    let t = sends(&mut sim);
    assert_eq!(&t[..4], &[0, SER_10G, 2 * SER_10G, 3 * SER_10G]);
    assert_eq!(t[4], 38_508_800);
    // Host 0's priority 3 was paused from the PAUSE's arrival to the XON's.
    assert_eq!(st.paused_ps, 38_508_800 - 3_968_000);
}

/// A PAUSE is acted on by the host's MAC at its last bit, not behind the host's receive
/// path. Every host takes 10 µs from a frame's last bit to its application; host 1 sends
/// host 0 one 100 B frame at t = 0 (142 B on the wire: 1,136,000 ps at 1 Gb/s, at the
/// switch at 1,236,000 ps, on host 0's link for 113,600 ps + 100 ns: its last bit at
/// 1,449,600 ps), so it is in host 0's receive path until 11,449,600 ps. The XOFF of the
/// timeline above still reaches host 0's MAC at 3,968,000 ps and frame 4 waits for the
/// XON at 38,508,800 ps: the timeline is unchanged and nothing is lost. (Queued behind
/// the receive path, the PAUSE would act at 11,449,600 ps, after six more frames: over
/// the headroom.)
#[test]
fn a_pause_reaches_a_hosts_mac_ahead_of_its_receive_path() {
    let slow_rx = |net: &mut NetworkConfig| net.host.recv_latency = DelayDist::constant(Duration::from_us(10));
    let mut sim = line_with(pfc(u16::MAX, true, None), 10, slow_rx, vec![msg(0, 1, 0, 100)]);
    assert_eq!(sim.counters().total_drops(), 0);
    let t = sim.drain_records().trace;
    let pause_at: Vec<u64> = t.iter().filter(|r| r.event == TraceEvent::Arrive && r.node == 0 && r.packet.kind == PktKind::Pause).map(|r| r.time.0).collect();
    assert_eq!(&pause_at[..2], &[3_968_000, 38_508_800]);
    let sent: Vec<u64> = t.iter().filter(|r| r.event == TraceEvent::Tx && r.node == 0 && r.packet.kind == PktKind::Data).map(|r| r.time.0).collect();
    assert_eq!(&sent[..5], &[0, SER_10G, 2 * SER_10G, 3 * SER_10G, 38_508_800]);
    let got: Vec<u64> = t.iter().filter(|r| r.event == TraceEvent::Arrive && r.node == 0 && r.packet.kind == PktKind::Data).map(|r| r.time.0).collect();
    assert_eq!(got, vec![11_449_600], "host 1's frame still takes the receive path");
}

/// A PAUSE reaches a switch's MAC ahead of the frames in that switch's input pipeline.
/// Host 0 –10 Gb/s– s0 –10 Gb/s– s1 –1 Gb/s– host 1, store-and-forward, s0's pipeline 5 µs,
/// s1's none; XOFF 3 frames. Host 0's frame i reaches s0's queue at (i + 1) × 1,233,600 +
/// 5,100,000 ps and s1's at (i + 2) × 1,233,600 + 5,200,000: frame 2 at 10,134,400 ps,
/// XOFF (frame 0 is still on the 1 Gb/s link). Its PAUSE reaches s0 at 10,134,400 +
/// 67,200 + 100,000 = 10,301,600 ps, while host 1's 100 B frame, sent at 5 µs (its last
/// bit at s0 at 5,000,000 + 1,136,000 + 100,000 + 113,600 + 100,000 = 6,449,600 ps), is
/// still in s0's pipeline until 11,449,600 ps.
#[test]
fn a_pause_reaches_a_switchs_mac_ahead_of_its_input_pipeline() {
    let mut net = NetworkConfig::default();
    net.topology = TopologyConfig::Custom {
        hosts: 2,
        switches: 2,
        links: vec![
            CustomLink { a: "h0".into(), b: "s0".into(), rate: Some(BitsPerSec::gbps(10)), delay: None },
            CustomLink { a: "s0".into(), b: "s1".into(), rate: Some(BitsPerSec::gbps(10)), delay: None },
            CustomLink { a: "s1".into(), b: "h1".into(), rate: Some(BitsPerSec::gbps(1)), delay: None },
        ],
    };
    net.link = LinkConfig::default();
    net.switch.latency = DelayDist::constant(Duration::ZERO);
    net.switch.cut_through = false;
    net.switch.pfc = Some(pfc(u16::MAX, true, None));
    net.overrides = vec![pl2_sim::net::overrides::Override { latency: Some(DelayDist::constant(Duration::from_us(5))), ..override_of("s0") }];
    let mut sp = spec(net, vec![list(vec![msg(0, 0, 1, 10 * 1500), msg(5_000_000, 1, 0, 100)])]);
    sp.transport = TransportConfig::Raw(RawConfig { priority: 3, ..Default::default() });
    sp.metrics.trace = Some(TraceConfig::default());
    let mut sim = run(sp, SimTime(u64::MAX / 2));
    assert_eq!(sim.counters().total_drops(), 0);
    let t = sim.drain_records().trace;
    let s0 = 2;
    let pause_at: Vec<u64> = t.iter().filter(|r| r.event == TraceEvent::Arrive && r.node == s0 && r.packet.kind == PktKind::Pause).map(|r| r.time.0).collect();
    assert_eq!(pause_at[0], 10_301_600);
    let from_h1: Vec<u64> = t.iter().filter(|r| r.event == TraceEvent::Tx && r.node == s0 && r.packet.kind == PktKind::Data && r.packet.src == 1).map(|r| r.time.0).collect();
    assert_eq!(from_h1, vec![11_449_600], "host 1's frame leaves s0's pipeline after the PAUSE arrived");
}

/// A host NIC pauses its switch from its receive buffer. Host 0 sends ten frames of
/// priority 3 at 10 Gb/s through the store-and-forward switch (no pipeline, no PFC) to
/// host 1 over 10 Gb/s; host 1 takes 10 µs from a frame's last bit to its application;
/// its NIC's XOFF is 3 frames (4626 B), XON the default 2 frames below. Frame i's last
/// bit reaches host 1's MAC at m_i = (i + 2) × 1,233,600 + 200,000 ps and leaves the
/// receive buffer at m_i + 10 µs. At m_2 = 5,134,400 ps it holds 3 frames: the PAUSE
/// leaves host 1 then (its port is idle) and reaches the switch at 5,134,400 + 67,200 +
/// 100,000 = 5,301,600 ps, while the switch sends frame 3 (from 5,034,400 ps): frame 3
/// arrives, frame 4 (at the switch at 6,268,000 ps) waits. Frames 0, 1, 2 leave at m_i +
/// 10 µs; at m_2 + 10 µs = 15,134,400 ps one frame is left (1542 B = XON): the XON
/// reaches the switch at 15,301,600 ps and frame 4 goes then.
#[test]
fn a_host_nic_pauses_its_switch_from_its_receive_buffer() {
    let mut net = two_hosts_one_switch(BitsPerSec::gbps(10), BitsPerSec::gbps(10));
    net.switch.latency = DelayDist::constant(Duration::ZERO);
    net.switch.cut_through = false;
    net.host.recv_latency = DelayDist::constant(Duration::from_us(10));
    net.host.pfc = Some(HostPfcConfig { priorities: vec![3], xoff: Bytes(3 * FRAME), xon_gap: None, pause_quanta: u16::MAX, refresh: true });
    let mut sp = spec(net, vec![list(vec![msg(0, 0, 1, 10 * 1500)])]);
    sp.transport = TransportConfig::Raw(RawConfig { priority: 3, ..Default::default() });
    sp.metrics.trace = Some(TraceConfig::default());
    let mut sim = run(sp, SimTime(u64::MAX / 2));
    assert_eq!(sim.counters().total_drops(), 0);
    let st = sim.pfc_stats().unwrap();
    assert_eq!(st.pauses_at_hosts, 0);
    assert!(st.pause_frames >= 1 && st.xon_frames >= 1, "{st:?}");
    let t = sim.drain_records().trace;
    let s0 = 2;
    let pauses: Vec<(u64, u64)> = t.iter().filter(|r| r.event == TraceEvent::Tx && r.node == 1 && r.packet.kind == PktKind::Pause).map(|r| (r.time.0, r.packet.aux)).collect();
    assert_eq!(&pauses[..2], &[(5_134_400, u64::from(u16::MAX)), (15_134_400, 0)]);
    let at_switch: Vec<u64> = t.iter().filter(|r| r.event == TraceEvent::Arrive && r.node == s0 && r.packet.kind == PktKind::Pause).map(|r| r.time.0).collect();
    assert_eq!(&at_switch[..2], &[5_301_600, 15_301_600]);
    let to_h1: Vec<u64> = t.iter().filter(|r| r.event == TraceEvent::Tx && r.node == s0 && r.packet.kind == PktKind::Data).map(|r| r.time.0).collect();
    assert_eq!(&to_h1[..5], &[SER_10G + 100_000, 2 * SER_10G + 100_000, 3 * SER_10G + 100_000, 4 * SER_10G + 100_000, 15_301_600]);
}

/// Without `host.pfc` a host sends no PAUSE, however full its receive path.
#[test]
fn hosts_send_no_pause_by_default() {
    let mut net = two_hosts_one_switch(BitsPerSec::gbps(10), BitsPerSec::gbps(10));
    net.host.recv_latency = DelayDist::constant(Duration::from_us(10));
    net.switch.pfc = Some(pfc(u16::MAX, true, None));
    let mut sp = spec(net, vec![list(vec![msg(0, 0, 1, 10 * 1500)])]);
    sp.transport = TransportConfig::Raw(RawConfig { priority: 3, ..Default::default() });
    let sim = run(sp, SimTime(u64::MAX / 2));
    let st = sim.pfc_stats().unwrap();
    assert_eq!((st.pause_frames, st.pauses_at_switches), (0, 0), "{st:?}");
}

/// An override of nothing but its selector.
fn override_of(select: &str) -> pl2_sim::net::overrides::Override {
    pl2_sim::net::overrides::Override {
        select: select.into(),
        buffer: None,
        dynamic_thresholds: None,
        alpha: None,
        port_limit: None,
        ecn: None,
        latency: None,
        cut_through: None,
        queue: None,
        sfc: None,
        rate: None,
        delay: None,
    }
}

#[test]
fn a_pause_without_refresh_expires_and_the_sender_resumes() {
    // 100 quanta × 512 bit times at 10 Gb/s = 5,120,000 ps after the PAUSE arrives.
    let mut sim = line(pfc(100, false, None), 5);
    let t = sends(&mut sim);
    assert_eq!(t[4], 3_968_000 + 5_120_000);
    assert_eq!(sim.counters().total_drops(), 0);
}

#[test]
fn the_headroom_absorbs_exactly_the_bytes_in_flight() {
    // After XOFF, only frame 3 (already on host 0's wire) still arrives: 1542 B.
    let sim = line(pfc(u16::MAX, true, Some(FRAME)), 5);
    assert_eq!(sim.counters().total_drops(), 0);
    let sim = line(pfc(u16::MAX, true, Some(FRAME - 1)), 5);
    assert_eq!(sim.counters().drops[DropReason::Headroom as usize], 1);
    assert_eq!(sim.pfc_stats().unwrap().headroom_drops, 1);
}

#[test]
fn the_default_headroom_covers_two_delays_two_frames_and_the_pause() {
    // 10 Gb/s × (2 × 100 ns + 2 × 1233.6 ns + 67.2 ns) = 27,344 bits = 3418 B: with
    // XOFF at 3 frames a long burst never overflows it.
    let sim = line(pfc(u16::MAX, true, None), 200);
    assert_eq!(sim.counters().total_drops(), 0);
    let st = sim.pfc_stats().unwrap();
    assert!(st.pause_frames >= 10 && st.xon_frames >= 10, "{st:?}");
}

#[test]
fn an_incast_into_pfc_switches_loses_nothing() {
    let mut net = NetworkConfig::default();
    net.topology = TopologyConfig::SingleRack { hosts: 17, breakout: 1 };
    net.switch.pfc = Some(PfcConfig { xoff: PfcThreshold::Bytes(Bytes(20_000)), ..pfc(u16::MAX, true, None) });
    net.switch.buffer = Bytes(1 << 20);
    let msgs = (0..16).map(|s| msg(0, s, 16, 200_000)).collect();
    let mut sp = spec(net, vec![list(msgs)]);
    sp.transport = TransportConfig::Raw(RawConfig { priority: 3, ..Default::default() });
    let mut sim = run(sp, SimTime(u64::MAX / 2));
    assert_eq!(sim.counters().total_drops(), 0);
    assert!(sim.pfc_stats().unwrap().pause_frames > 16);
    sim.finish();
    let m = sim.drain_records().messages;
    assert_eq!(m.iter().filter(|m| m.finish.is_some()).count(), 16);
}

/// Five switches in a ring, one host each; host i sends to host i + 2, whose only
/// shortest path runs clockwise through switch i + 1. Every ring link carries two flows
/// at once, so each switch's ingress from its counter-clockwise neighbour fills with
/// frames waiting for the next clockwise link: a cyclic buffer dependency, the textbook
/// PFC deadlock (up-down routing in a fat tree cannot form one).
#[test]
fn a_cycle_of_pauses_is_reported_as_a_deadlock_and_stops_the_run() {
    let mut links = Vec::new();
    for i in 0..5 {
        links.push(CustomLink { a: format!("h{i}"), b: format!("s{i}"), rate: None, delay: None });
        links.push(CustomLink { a: format!("s{i}"), b: format!("s{}", (i + 1) % 5), rate: None, delay: None });
    }
    let mut net = NetworkConfig::default();
    net.topology = TopologyConfig::Custom { hosts: 5, switches: 5, links };
    net.link = LinkConfig::default();
    net.switch.pfc = Some(PfcConfig { xoff: PfcThreshold::Bytes(Bytes(30_000)), deadlock_after: Duration::from_us(500), ..pfc(u16::MAX, true, None) });
    let msgs = (0..5).map(|i| msg(0, i, (i + 2) % 5, 50_000_000)).collect();
    let mut sp = spec(net, vec![list(msgs)]);
    sp.transport = TransportConfig::Raw(RawConfig { priority: 3, ..Default::default() });
    let mut sim = Simulation::new(sp).expect("valid");
    let stop = sim.run(
        pl2_sim::sim::StopAt { end: SimTime(50_000_000_000), all_delivered: true, event_budget: None },
        &mut pl2_sim::sim::ProgressClock::new(std::time::Duration::from_secs(3600)),
        &mut |_| true,
    );
    assert_eq!(stop, StopReason::PauseDeadlock);
    let d = sim.pause_deadlock().expect("a deadlock");
    assert_eq!(d.prio, 3);
    assert_eq!(d.ports.len(), 5, "the five clockwise ring ports: {d:?}");
    assert!(d.at.0 < 10_000_000_000, "found within 10 ms: {d:?}");
    assert_eq!(sim.counters().total_drops(), 0);
}

#[test]
fn bad_pfc_settings_name_the_field_and_the_fix() {
    let bad = |c: PfcConfig| {
        let mut net = two_hosts_one_switch(BitsPerSec::gbps(10), BitsPerSec::gbps(1));
        net.switch.pfc = Some(c);
        Simulation::new(spec(net, vec![list(vec![msg(0, 0, 1, 1500)])])).err().expect("rejected").to_string()
    };
    let e = bad(PfcConfig { priorities: vec![9], ..pfc(1, true, None) });
    assert!(e.contains("switch.pfc.priorities") && e.contains("0..=7"), "{e}");
    let e = bad(PfcConfig { pause_quanta: 0, ..pfc(1, true, None) });
    assert!(e.contains("switch.pfc.pause_quanta") && e.contains("XON"), "{e}");
    let e = bad(PfcConfig { xoff: PfcThreshold::Alpha(-1.0), ..pfc(1, true, None) });
    assert!(e.contains("switch.pfc.xoff") && e.contains("alpha"), "{e}");
    let host_bad = |c: HostPfcConfig| {
        let mut net = two_hosts_one_switch(BitsPerSec::gbps(10), BitsPerSec::gbps(1));
        net.host.pfc = Some(c);
        Simulation::new(spec(net, vec![list(vec![msg(0, 0, 1, 1500)])])).err().expect("rejected").to_string()
    };
    let ok = HostPfcConfig { priorities: vec![3], xoff: Bytes(10_000), xon_gap: None, pause_quanta: 1, refresh: true };
    let e = host_bad(HostPfcConfig { xoff: Bytes(0), ..ok.clone() });
    assert!(e.contains("host.pfc.xoff"), "{e}");
    let e = host_bad(HostPfcConfig { xon_gap: Some(Bytes(10_000)), ..ok.clone() });
    assert!(e.contains("host.pfc.xon_gap") && e.contains("below xoff"), "{e}");
    let e = host_bad(HostPfcConfig { priorities: vec![8], ..ok });
    assert!(e.contains("host.pfc.priorities"), "{e}");
}

/// 120 senders into one port (a case a public PFC model failed): every byte arrives,
/// nothing is dropped, and no port ever starts a frame before its previous one ended
/// (a resume acted on in the middle of an event must not start a second transmission).
#[test]
fn a_hundred_and_twenty_senders_into_one_port_lose_nothing_and_never_overlap_frames() {
    let mut net = NetworkConfig::default();
    net.topology = TopologyConfig::SingleRack { hosts: 121, breakout: 1 };
    net.switch.pfc = Some(PfcConfig { xoff: PfcThreshold::Bytes(Bytes(4 * FRAME)), ..pfc(u16::MAX, true, None) });
    net.switch.buffer = Bytes(4 << 20);
    let msgs = (0..120).map(|s| msg(0, s, 120, 30_000)).collect();
    let mut sp = spec(net, vec![list(msgs)]);
    sp.transport = TransportConfig::Raw(RawConfig { priority: 3, ..Default::default() });
    sp.metrics.trace = Some(TraceConfig { max_records: 10_000_000, ..Default::default() });
    let mut sim = run(sp, SimTime(u64::MAX / 2));
    assert_eq!(sim.counters().total_drops(), 0);
    let st = sim.pfc_stats().unwrap();
    assert!(st.pause_frames >= 120 && st.xon_frames >= 120, "{st:?}");
    sim.finish();
    let rec = sim.drain_records();
    assert_eq!(rec.messages.iter().filter(|m| m.finish.is_some()).count(), 120);
    // Per port, each transmission starts no earlier than the previous one's end.
    let rate = BitsPerSec::gbps(100);
    let mut last: std::collections::BTreeMap<u32, u64> = Default::default();
    for r in rec.trace.iter().filter(|r| r.event == TraceEvent::Tx) {
        let end = r.time.0 + rate.tx_time(u64::from(r.packet.wire)).0;
        if let Some(&prev_end) = last.get(&r.port) {
            assert!(r.time.0 >= prev_end, "port {} starts at {} before {}", r.port, r.time.0, prev_end);
        }
        last.insert(r.port, end);
    }
}

/// The SFC seed's two buffer settings on one incast (16 senders × 200 KB, 100 Gb/s):
/// PFC runs (a static ingress limit of 800 KB per port and priority, XOFF at 650 KB, no
/// egress pool) lose nothing; the egress-pool setting without PFC (16 MB pool, 50 KB
/// guaranteed per port, α = 1, ingress accounting disabled) drops at the egress.
#[test]
fn the_sfc_seeds_buffer_settings_are_lossless_with_pfc_and_drop_at_the_egress_without() {
    use pl2_sim::config::{BufferPools, PoolConfig, PoolLimit};
    let incast = |pools: BufferPools, pfc_on: bool| {
        let mut net = NetworkConfig::default();
        net.topology = TopologyConfig::SingleRack { hosts: 17, breakout: 1 };
        net.switch.buffer = Bytes(16_000_000);
        net.switch.pools = Some(pools);
        if pfc_on {
            net.switch.pfc = Some(PfcConfig { xoff: PfcThreshold::Bytes(Bytes(650_000)), ..pfc(u16::MAX, true, None) });
        }
        let msgs = (0..16).map(|s| msg(0, s, 16, 2_000_000)).collect();
        let mut sp = spec(net, vec![list(msgs)]);
        sp.transport = TransportConfig::Raw(RawConfig { priority: 3, ..Default::default() });
        run(sp, SimTime(u64::MAX / 2))
    };
    let pool = |size: u64, g: u64, limit: PoolLimit| PoolConfig { size: Bytes(size), guaranteed: Bytes(g), limit };
    let lossless = incast(BufferPools { ingress: Some(pool(16_000_000, 0, PoolLimit::Bytes(Bytes(800_000)))), egress: None }, true);
    assert_eq!(lossless.counters().total_drops(), 0);
    let lossy = incast(BufferPools { ingress: None, egress: Some(pool(16_000_000, 50_000, PoolLimit::Alpha(1.0))) }, false);
    let c = lossy.counters();
    assert!(c.drops[DropReason::BufferFull as usize] > 0 && c.drops[DropReason::IngressPool as usize] == 0, "{c:?}");
    // One egress queue alone holds at most its 50 KB guarantee + half the 16 MB pool.
    let peak = lossy.port_max_queue().into_iter().max().unwrap();
    assert!(peak <= 50_000 + 8_000_000 + 1542, "{peak}");
    assert!(peak >= 8_000_000, "{peak}");
}
