//! Hand-worked checks of the reaction point (every rate below worked out by hand in the
//! comments), of the pacer to the picosecond (RoCE over the DCQCN layer, which paces) and
//! of the notification point, on one host's state machines with no network.

use super::config::*;
use super::*;
use crate::layer::dcqcn::rp::{Arm, Phase, Rp};
use crate::layer::dcqcn::stack::{pacing_timer, Stack, PACING};
use crate::layer::dcqcn::DcqcnHost;
use crate::packet::{PktKind, SendSpec};
use crate::transport::MsgRef;
use crate::units::{Bytes, Duration};

const G100: BitsPerSec = BitsPerSec::gbps(100);

fn gbps_f(r: BitsPerSec) -> f64 {
    r.0 as f64 / 1e9
}

fn params(cfg: RoceConfig) -> DcqcnParams {
    cfg.resolve(G100).unwrap().dcqcn
}

/// A timer-only reaction point with round numbers: F = 1, R_AI = 1 Gbps, R_HAI = 2 Gbps,
/// cuts at each CNP, min rate 1 Gbps.
fn simple(hyper: HyperIncrease) -> DcqcnParams {
    params(RoceConfig {
        fast_recovery_steps: Some(1),
        byte_counter: Some(Bytes(0)),
        rate_ai: Some(BitsPerSec::gbps(1)),
        rate_hai: Some(BitsPerSec::gbps(2)),
        min_rate: Some(BitsPerSec::gbps(1)),
        hyper_increase: Some(hyper),
        ..RoceConfig::default()
    })
}

#[test]
fn the_first_cnp_sets_alpha_to_one_and_the_target_to_the_current_rate() {
    // HPCC's Mellanox version: the cut waits for the decrease check.
    let p = params(RoceConfig { preset: RocePreset::HpccMellanox, ..RoceConfig::default() });
    let mut rp = Rp::new(G100, &p);
    rp.alpha = 0.25;
    rp.rate = BitsPerSec::gbps(80);
    let mut a = Arm::default();
    let c = rp.on_cnp(SimTime(7_000_000), &p, &mut a);
    assert_eq!((rp.alpha, rp.target, rp.rate, c.cut), (1.0, BitsPerSec::gbps(80), BitsPerSec::gbps(80), false));
    // α ticks every 1 µs; the first check 4 µs + 1 ns later (rdma-hw.cc:648).
    assert_eq!(a, Arm { alpha: Some(SimTime(8_000_000)), decrease: Some(SimTime(11_001_000)), increase: None });
    // The paper's: the cut is at once, with α = (1 − 1/256)·1 + 1/256 = 1 exactly.
    let p = params(RoceConfig::default());
    let mut rp = Rp::new(G100, &p);
    let c = rp.on_cnp(SimTime::ZERO, &p, &mut a);
    assert_eq!((rp.alpha, rp.target, c.cut), (1.0, G100, true));
}

#[test]
fn one_cut_at_alpha_one_halves_the_rate() {
    // 100 Gbps × (1 − 1/2) = 50 Gbps; the next at α = 1 again: 25 Gbps, and the target
    // follows the rate cut from (paper eq. 1).
    let p = params(RoceConfig::default());
    let mut rp = Rp::new(G100, &p);
    let mut a = Arm::default();
    rp.on_cnp(SimTime::ZERO, &p, &mut a);
    assert_eq!((rp.rate, rp.target), (BitsPerSec::gbps(50), G100));
    assert_eq!(a.increase, Some(SimTime(55_000_000)), "T restarts at the cut");
    rp.on_cnp(SimTime(1), &p, &mut a);
    assert_eq!((rp.rate, rp.target), (BitsPerSec::gbps(25), BitsPerSec::gbps(50)));
}

#[test]
fn without_cnps_alpha_decays_by_one_minus_g_per_tick() {
    // g = 1/256: after n ticks α = (255/256)^n, exact in binary for small n.
    let p = params(RoceConfig::default());
    let mut rp = Rp::new(G100, &p);
    let mut a = Arm::default();
    rp.on_cnp(SimTime::ZERO, &p, &mut a);
    assert_eq!(a.alpha, Some(SimTime(55_000_000)), "K = 55 µs after the CNP");
    for n in 1..=6u32 {
        rp.on_alpha_timer(SimTime(u64::from(n) * 55_000_000), &p, &mut a);
        assert_eq!(rp.alpha, 255f64.powi(n as i32) / 256f64.powi(n as i32), "tick {n}");
    }
    assert_eq!(rp.alpha, 274_941_996_890_625.0 / 281_474_976_710_656.0);
}

#[test]
fn hpcc_ticks_take_in_cnps_and_the_check_cuts_with_that_alpha() {
    let p = params(RoceConfig { preset: RocePreset::HpccMellanox, ..RoceConfig::default() });
    let mut rp = Rp::new(G100, &p);
    let mut a = Arm::default();
    rp.on_cnp(SimTime::ZERO, &p, &mut a);
    // Ticks at 1..4 µs, no CNP since the first (which does not count): α = (255/256)^4.
    for us in 1..=4 {
        rp.on_alpha_timer(SimTime(us * 1_000_000), &p, &mut a);
    }
    let alpha4 = 4_228_250_625.0 / 4_294_967_296.0;
    assert_eq!(rp.alpha, alpha4);
    // The check at 4.001 µs cuts: 1e11 × (1 − α/2) = 50,776,684,272.57 → 50,776,684,272
    // bit/s. No increase since the first CNP, so the target stays at 100 Gbps.
    let c = rp.on_decrease_timer(SimTime(4_001_000), &p, &mut a);
    assert!(c.cut);
    assert_eq!((rp.rate, rp.target), (BitsPerSec(50_776_684_272), G100));
    assert_eq!(a.increase, Some(SimTime(304_001_000)), "T = 300 µs");
    // A check with no CNP since does nothing; a CNP makes the next tick α(1 − g) + g.
    let c = rp.on_decrease_timer(SimTime(8_001_000), &p, &mut a);
    assert!(!c.cut);
    rp.on_cnp(SimTime(8_500_000), &p, &mut a);
    rp.on_alpha_timer(SimTime(9_000_000), &p, &mut a);
    assert_eq!(rp.alpha, (1.0 - 1.0 / 256.0) * alpha4 + 1.0 / 256.0);
    // Fast recovery (F = 1) halves the distance: (50,776,684,272 + 1e11)/2.
    rp.on_increase_timer(SimTime(304_001_000), &p, &mut a);
    assert_eq!(rp.rate, BitsPerSec(75_388_342_136));
    // The cut at the next check follows an increase: now the target is clamped.
    let before = rp.rate;
    rp.on_decrease_timer(SimTime(308_001_000), &p, &mut a);
    assert_eq!(rp.target, before);
}

#[test]
fn fast_recovery_halves_the_distance_to_the_target_each_stage() {
    // The paper's F = 5: after a cut to 50 Gbps with target 100 Gbps, RC = (RC + RT)/2:
    // 75, 87.5, 93.75, 96.875, 98.4375 Gbps.
    let p = params(RoceConfig::default());
    let mut rp = Rp::new(G100, &p);
    let mut a = Arm::default();
    rp.on_cnp(SimTime::ZERO, &p, &mut a);
    let mut got = vec![];
    for k in 1..=5u64 {
        let c = rp.on_increase_timer(SimTime(k * 55_000_000), &p, &mut a);
        assert_eq!(c.fast_recovery, 1);
        got.push(gbps_f(rp.rate));
    }
    assert_eq!(got, [75.0, 87.5, 93.75, 96.875, 98.4375]);
    assert_eq!(rp.target, G100);
}

#[test]
fn additive_then_hyper_increase_steps() {
    // Two cuts at α = 1: RC 25, RT 50 Gbps. Timer events (F = 1, timer only):
    // 1 fast recovery: RC (25 + 50)/2 = 37.5; 2 additive: RT 51, RC (37.5 + 51)/2 = 44.25;
    // 3 hyper i = 1: RT 53, RC 48.625; 4 hyper i = 2: RT 57, RC 52.8125 (constant: RT 55,
    // RC 51.8125).
    for (hyper, last) in [(HyperIncrease::Multiplied, (57.0, 52.8125)), (HyperIncrease::Constant, (55.0, 51.8125))] {
        let p = simple(hyper);
        let mut rp = Rp::new(G100, &p);
        let mut a = Arm::default();
        rp.on_cnp(SimTime::ZERO, &p, &mut a);
        rp.on_cnp(SimTime::ZERO, &p, &mut a);
        assert_eq!((gbps_f(rp.rate), gbps_f(rp.target)), (25.0, 50.0));
        let mut seen = vec![];
        for k in 1..=4u64 {
            rp.on_increase_timer(SimTime(k), &p, &mut a);
            seen.push((gbps_f(rp.target), gbps_f(rp.rate)));
        }
        assert_eq!(&seen[..3], &[(50.0, 37.5), (51.0, 44.25), (53.0, 48.625)], "{hyper:?}");
        assert_eq!(seen[3], last, "{hyper:?}");
    }
}

#[test]
fn with_a_byte_counter_the_phase_needs_both_stages() {
    // QCN: fast recovery while both stages ≤ F, additive while one is, hyper when both
    // exceed F, the i-th with i = min − F. F = 1, B = 1000 B.
    let p = params(RoceConfig { fast_recovery_steps: Some(1), byte_counter: Some(Bytes(1000)), ..RoceConfig::default() });
    let mut rp = Rp::new(G100, &p);
    let mut a = Arm::default();
    rp.on_cnp(SimTime::ZERO, &p, &mut a);
    let mut phases = vec![];
    for ev in ["b", "b", "t", "t", "b", "b", "t"] {
        if ev == "b" {
            rp.on_sent(1000, &p);
        } else {
            rp.on_increase_timer(SimTime(1), &p, &mut a);
        }
        phases.push(rp.phase(&p));
    }
    use Phase::*;
    assert_eq!(phases, [FastRecovery, Additive, Additive, Hyper(1), Hyper(1), Hyper(1), Hyper(2)]);
    // Bytes before the first CNP count for nothing.
    let mut fresh = Rp::new(G100, &p);
    fresh.on_sent(5000, &p);
    assert_eq!(fresh.byte_stage, 0);
}

#[test]
fn cuts_stop_at_the_minimum_rate() {
    // α = 1 halves: 50, 25, 12.5, 6.25, 3.125, 1.5625, then 0.78125 < 1 Gbps → 1 Gbps.
    let p = simple(HyperIncrease::Multiplied);
    let mut rp = Rp::new(G100, &p);
    let mut a = Arm::default();
    let floors: Vec<bool> = (0..8).map(|_| rp.on_cnp(SimTime::ZERO, &p, &mut a).floor).collect();
    assert_eq!(floors, [false, false, false, false, false, false, true, true]);
    assert_eq!(rp.rate, BitsPerSec::gbps(1));
}

// --- One host's state machine: pacing and the notification point. ---

const MP: u64 = 1456;
/// A full frame: 1456 B payload + 44 B RoCEv2 headers + 42 B Ethernet (tagged) framing.
const WIRE: u64 = 1542;
/// Its serialisation at 100 Gbps: 12,336 bit × 10 ps = 123,360 ps.
const SER: u64 = 123_360;

/// RoCE over the DCQCN layer, as the simulation builds it (no send path: one frame in
/// the pipeline).
fn host(cfg: RoceConfig) -> Stack<RoceHost> {
    let s = cfg.resolve(G100).unwrap();
    Stack { l: DcqcnHost::new(s.layer(), G100), t: RoceHost::new(s, MP) }
}

fn msg(size: u64) -> MsgInfo {
    MsgInfo { slot: 3, gen: 1, id: 42, src: 0, dst: 1, size, thread: 0, prio: 0, start: SimTime::ZERO }
}

fn packet(s: &SendSpec) -> Packet {
    let mut p = s.to_packet(0, SimTime::ZERO, crate::framing::Framing::default());
    p.src = s.dst ^ 1;
    p
}

fn data_psns(out: &Actions) -> Vec<u32> {
    out.sends.iter().filter(|s| s.kind == PktKind::Data).map(|s| s.seq).collect()
}

#[test]
fn pacing_holds_the_rate_to_the_picosecond() {
    let mut h = host(RoceConfig { increase_timer: Some(Duration::from_ms(100)), ..RoceConfig::default() });
    let mut out = Actions::default();
    h.on_message(SimTime::ZERO, &msg(20 * MP), &mut out);
    assert_eq!(data_psns(&out), [0], "one frame in the NIC at a time");
    let first = out.sends[0];
    assert_eq!(packet(&first).wire as u64, WIRE);
    // At line rate the next frame goes the moment the last one's last bit leaves.
    out.clear();
    h.on_tx_done(SimTime(SER), &packet(&first), &mut out);
    assert_eq!(data_psns(&out), [1]);
    let second = out.sends[0];
    // A CNP halves the rate (paper: α = 1). Frame 1 started at 123,360 ps; at 50 Gbps its
    // 12,336 bits take 246,720 ps, so frame 2 may start at 370,080 ps, not when frame 1
    // ends at 246,720 ps.
    out.clear();
    let cnp = wire::encode(0, &Frame::Cnp { msg: MsgRef::from(&msg(0)), psn: 0 }, 0, &h.t.ctx.stamp, 0);
    h.on_packet(SimTime(200_000), &Packet { msg: 3, msg_gen: 1, flow: 42, ..packet(&cnp) }, &mut out);
    assert_eq!(h.l.rate_of(3, 1).unwrap().0, 50_000_000_000);
    out.clear();
    h.on_tx_done(SimTime(2 * SER), &packet(&second), &mut out);
    assert!(data_psns(&out).is_empty());
    assert_eq!(pacing_timer(&out), Some(SimTime(370_080)));
    out.clear();
    h.on_timer(SimTime(370_080), PACING, &mut out);
    assert_eq!(data_psns(&out), [2]);
    // And so on: 370,080 + 246,720 = 616,800 ps.
    let third = out.sends[0];
    out.clear();
    h.on_tx_done(SimTime(370_080 + SER), &packet(&third), &mut out);
    assert_eq!(pacing_timer(&out), Some(SimTime(616_800)));
    // A rate that does not divide: 30 Gbps → 12,336 / 3e10 s = 411,200 ps; 7 Gbps →
    // 1,762,285.7 ps, rounded up (never faster than the rate).
    assert_eq!(BitsPerSec::gbps(30).tx_time(WIRE), Duration(411_200));
    assert_eq!(BitsPerSec::gbps(7).tx_time(WIRE), Duration(1_762_286));
}

/// With a send path of 224 ns and three frames in the pipeline, the pacer picks frames
/// on its own clock — one full frame's time apart at line rate, a frame's time at the
/// flow's rate after a cut — not when the previous frame leaves the wire.
#[test]
fn a_pipelined_pacer_picks_on_its_own_clock() {
    let mut h = host(RoceConfig { increase_timer: Some(Duration::from_ms(100)), ..RoceConfig::default() });
    h.l = h.l.with_tx_path(Duration(224_000), 3);
    let mut out = Actions::default();
    h.on_message(SimTime::ZERO, &msg(20 * MP), &mut out);
    assert_eq!(data_psns(&out), [0]);
    assert_eq!(pacing_timer(&out), Some(SimTime(SER)), "the next pick when the line would be free");
    let mut sent = vec![out.sends[0]];
    for k in 1..3 {
        out.clear();
        h.on_timer(SimTime(k * SER), PACING, &mut out);
        assert_eq!(data_psns(&out), [k as u32]);
        sent.push(out.sends[0]);
    }
    assert_eq!(pacing_timer(&out), None, "three frames in the pipeline: wait for one to leave");
    // Frame 0 reached the wire 224 ns after its pick and left at 347,360 ps: not held up,
    // and the line's next pick is still 3 × SER = 370,080 ps.
    out.clear();
    h.on_tx_done(SimTime(224_000 + SER), &packet(&sent[0]), &mut out);
    assert!(data_psns(&out).is_empty());
    assert_eq!(pacing_timer(&out), Some(SimTime(3 * SER)));
    out.clear();
    h.on_timer(SimTime(3 * SER), PACING, &mut out);
    assert_eq!(data_psns(&out), [3]);
    // A CNP halves the rate at 400 ns; frame 3 was picked at 370,080 ps, so the next pick
    // is 370,080 + 246,720 = 616,800 ps, whenever frames leave the wire.
    out.clear();
    let cnp = wire::encode(0, &Frame::Cnp { msg: MsgRef::from(&msg(0)), psn: 0 }, 0, &h.t.ctx.stamp, 0);
    h.on_packet(SimTime(400_000), &Packet { msg: 3, msg_gen: 1, flow: 42, ..packet(&cnp) }, &mut out);
    assert_eq!(h.l.rate_of(3, 1).unwrap().0, 50_000_000_000);
    out.clear();
    h.on_tx_done(SimTime(224_000 + 2 * SER), &packet(&sent[1]), &mut out);
    assert!(data_psns(&out).is_empty());
    assert_eq!(pacing_timer(&out), Some(SimTime(616_800)));
}

#[test]
fn the_notification_point_sends_at_most_one_cnp_per_interval() {
    // Paper: N = 50 µs. Marked packets at 0, 10 µs and 60 µs → CNPs at 0 and 60 µs.
    let mut h = host(RoceConfig::default());
    let mut out = Actions::default();
    let mut cnps = vec![];
    for (psn, us) in [(0u32, 0u64), (1, 10), (2, 60)] {
        let d = wire::encode(1, &Frame::Data { msg: MsgRef::from(&msg(10 * MP)), size: 10 * MP, psn, resent: false }, MP as u32, &h.t.ctx.stamp, 0);
        let mut p = packet(&d);
        p.flags |= flags::CE;
        out.clear();
        h.on_packet(SimTime(us * 1_000_000), &p, &mut out);
        cnps.extend(out.sends.iter().filter(|s| s.kind == PktKind::Control).map(|_| us));
        assert_eq!(out.sends.iter().filter(|s| s.kind == PktKind::Ack).count(), 1, "an ACK per packet");
    }
    assert_eq!(cnps, [0, 60]);
    // HPCC: no CNP frames; the CNP is a flag on each marked packet's ACK.
    let mut h = host(RoceConfig { preset: RocePreset::HpccMellanox, ..RoceConfig::default() });
    for psn in 0..3 {
        let d = wire::encode(1, &Frame::Data { msg: MsgRef::from(&msg(10 * MP)), size: 10 * MP, psn, resent: false }, MP as u32, &h.t.ctx.stamp, 0);
        let mut p = packet(&d);
        p.flags |= flags::CE;
        out.clear();
        h.on_packet(SimTime(u64::from(psn)), &p, &mut out);
        assert_eq!(out.sends.len(), 1);
        assert_eq!(wire::decode(&packet(&out.sends[0])), Some(Frame::Ack { msg: MsgRef::from(&msg(0)), next: psn + 1, cnp: true }));
    }
    assert_eq!(h.t.stats().cnps_sent, 3);
}

#[test]
fn presets_fill_only_unset_fields_and_bad_values_name_the_field() {
    let d = params(RoceConfig::default());
    assert_eq!((d.fast_recovery_steps, d.cnp_interval, d.byte_counter), (5, Duration::from_us(50), Some(Bytes(10_000_000))));
    let h = params(RoceConfig { preset: RocePreset::HpccMellanox, ..RoceConfig::default() });
    // 5 and 50 Mbps per 25 Gbps at 100 Gbps: 20 and 200 Mbps (run.py:100-101).
    assert_eq!((h.rate_ai, h.rate_hai, h.byte_counter, h.cnp_on_ack), (BitsPerSec(20_000_000), BitsPerSec(200_000_000), None, true));
    let s = params(RoceConfig { preset: RocePreset::SfcSeed, ..RoceConfig::default() });
    // The window: 15 µs at 100 Gbps = 187,500 B.
    assert_eq!(
        (s.window, s.increase_timer, s.decrease_interval, s.rate_ai),
        (Some(Bytes(187_500)), Duration::from_us(4), Duration::ZERO, BitsPerSec(12_500_000))
    );
    let other = SeedReading { timer: SeedTimer::DecreaseInterval, ai: SeedAiUnit::LineRateFraction };
    let s = params(RoceConfig { preset: RocePreset::SfcSeed, seed_reading: other, ..RoceConfig::default() });
    assert_eq!(
        (s.increase_timer, s.decrease_interval, s.rate_ai, s.rate_hai),
        (Duration::from_us(300), Duration::from_us(4), BitsPerSec(1_250_000_000), BitsPerSec(2_500_000_000))
    );
    assert_eq!(params(RoceConfig { g: Some(0.5), ..RoceConfig::default() }).g, 0.5, "an explicit field beats the preset");
    let bad = |c: RoceConfig| c.resolve(G100).unwrap_err().to_string();
    assert!(bad(RoceConfig { data_priority: 8, ..RoceConfig::default() }).starts_with("data_priority = 8"));
    assert!(bad(RoceConfig { control_priority: 3, ..RoceConfig::default() }).starts_with("control_priority = 3"));
    assert!(bad(RoceConfig { g: Some(0.0), ..RoceConfig::default() }).starts_with("g = 0"));
    assert!(bad(RoceConfig { alpha_timer: Some(Duration(0)), ..RoceConfig::default() }).starts_with("alpha_timer = 0"));
    assert!(bad(RoceConfig { min_rate: Some(BitsPerSec::gbps(200)), ..RoceConfig::default() }).starts_with("min_rate = 200Gbps"));
    assert!(bad(RoceConfig { preset: RocePreset::HpccMellanoxWin, ..RoceConfig::default() }).contains("needs `window`"));
    assert!(bad(RoceConfig { seed_reading: other, ..RoceConfig::default() }).starts_with("seed_reading"));
    let win = RoceConfig { preset: RocePreset::HpccMellanoxWin, window: Some(Duration::from_us(12)), ..RoceConfig::default() };
    assert_eq!(params(win).window, Some(Bytes(150_000)));
}

#[test]
fn an_sfc_signal_pauses_its_flow_alone_and_a_later_one_extends_the_pause() {
    // Two flows (messages 3/1 and 4/1) take the NIC in turn at line rate. A signal for
    // message 3 at 100 ns with a 1 µs pause: the frame of message 3 in the NIC goes; then
    // message 4 alone sends, back to back. A second signal at 500 ns for 2 µs extends
    // the pause to 2,500,000 ps (the overlap counted once: 2.4 µs paused). Message 3
    // takes its turn again at the first transmit opportunity after that: when message
    // 4's frame started at 20 × SER ends, 21 × SER = 2,590,560 ps.
    let mut h = host(RoceConfig { increase_timer: Some(Duration::from_ms(100)), ..RoceConfig::default() });
    let mut out = Actions::default();
    let m4 = MsgInfo { slot: 4, id: 43, ..msg(40 * MP) };
    h.on_message(SimTime::ZERO, &msg(40 * MP), &mut out);
    h.on_message(SimTime::ZERO, &m4, &mut out);
    assert_eq!(out.sends.iter().map(|s| s.msg).collect::<Vec<_>>(), [3], "one frame in the NIC");
    let signal = |pause_ps: u64| Packet { kind: PktKind::Sfc, msg: 3, msg_gen: 1, flow: 42, aux: pause_ps, prio_transport: 7, ..Packet::default() };
    let mut in_nic = out.sends[0];
    out.clear();
    h.on_packet(SimTime(100_000), &signal(1_000_000), &mut out);
    assert!(out.sends.is_empty(), "the NIC still holds message 3's frame");
    let mut sent = vec![];
    let mut now = SER;
    while now < 3_000_000 {
        if now >= 500_000 && h.t.stats().sfc_pauses == 1 {
            h.on_packet(SimTime(500_000), &signal(2_000_000), &mut out);
        }
        h.on_tx_done(SimTime(now), &packet(&in_nic), &mut out);
        in_nic = out.sends[0];
        sent.push((now, in_nic.msg));
        out.clear();
        now += SER;
    }
    let first_3 = sent.iter().find(|(_, m)| *m == 3).unwrap().0;
    assert_eq!(first_3, 21 * SER);
    assert_eq!(sent.iter().take_while(|(_, m)| *m == 4).count(), 20, "{sent:?}");
    assert_eq!(sent[21].1, 4, "then the two alternate again");
    let st = h.t.stats();
    assert_eq!((st.sfc_pauses, st.sfc_stale, st.sfc_paused_ps), (2, 0, 2_400_000));
    // A signal for a message the host no longer has is stale.
    h.on_packet(SimTime(3_000_000), &Packet { msg: 9, ..signal(1) }, &mut out);
    assert_eq!(h.t.stats().sfc_stale, 1);
}
