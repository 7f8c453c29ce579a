//! Unit tests of the sender: burst cutting, Algorithm 2's unsolicited decision and its
//! boundary, both readings of equation (1), blocking vs pipelined ordering, retries,
//! stale grants, priorities, the improved resend rule and probes.

use super::*;
use crate::estimator::EstimatorKind;

const SLOT: u64 = 123_360;
const D: u64 = 1_000_000; // RSV–GRT delay used throughout: 1 µs

fn sender(cfg: SenderConfig) -> Sender {
    Sender::new(cfg).unwrap()
}

fn msg(id: u64, dst: HostId, packets: u64) -> AppMessage {
    AppMessage {
        id: MsgId(id),
        dst,
        bytes: packets * 1500,
        ctx: 0,
        high_priority: false,
    }
}

fn grt(burst: BurstId, attempt: u8, send: u32, recv: u32, granted: u32) -> Grt {
    Grt {
        src: 0,
        dst: 1,
        burst,
        attempt,
        send_timeslot_slots: send,
        recv_timeslot_slots: recv,
        granted_packets: granted,
        unsolicited_admitted: false,
    }
}

fn rsvs(out: &[SenderAction]) -> Vec<Rsv> {
    out.iter()
        .filter_map(|a| {
            if let SenderAction::SendRsv(r) = a {
                Some(*r)
            } else {
                None
            }
        })
        .collect()
}

fn sends(out: &[SenderAction]) -> Vec<BurstSend> {
    out.iter()
        .filter_map(|a| {
            if let SenderAction::SendBurst(b) = a {
                Some(*b)
            } else {
                None
            }
        })
        .collect()
}

fn probes(out: &[SenderAction]) -> Vec<BurstProbe> {
    out.iter()
        .filter_map(|a| {
            if let SenderAction::Probe(p) = a {
                Some(*p)
            } else {
                None
            }
        })
        .collect()
}

fn timers(out: &[SenderAction]) -> Vec<(TimerToken, u64)> {
    out.iter()
        .filter_map(|a| {
            if let SenderAction::SetTimer { token, at_ps } = a {
                Some((*token, *at_ps))
            } else {
                None
            }
        })
        .collect()
}

/// Runs one whole solicited exchange: the RSV just sent gets a GRT `D` later with the
/// given chosen slot; the burst is handed over and transmitted at its time. Returns the
/// time the burst finished transmitting and everything emitted.
fn complete(s: &mut Sender, rsv: Rsv, t_rsv: u64, chosen: u32) -> (u64, Vec<SenderAction>) {
    let mut out = Vec::new();
    s.on_grt(
        t_rsv + D,
        &grt(rsv.burst, rsv.attempt, chosen, 0, rsv.demand_packets),
        0,
        &mut out,
    );
    let mut t = t_rsv + D;
    for b in sends(&out) {
        t = b.at_ps;
        s.on_burst_handed_to_nic(t, b.burst, &mut out);
        t += u64::from(b.packets) * SLOT;
        s.on_burst_transmitted(t, b.burst, &mut out);
    }
    (t, out)
}

#[test]
fn messages_are_cut_into_bursts_of_at_most_k_that_never_span_messages() {
    let mut s = sender(SenderConfig {
        low_load: LowLoadConfig {
            enabled: false,
            ..Default::default()
        },
        ..Default::default()
    });
    let mut out = Vec::new();
    s.on_app_message(0, msg(1, 1, 6), &mut out).unwrap();
    s.on_app_message(0, msg(2, 1, 5), &mut out).unwrap();
    let mut demands = Vec::new();
    let mut t = 0;
    let mut r = rsvs(&out)[0];
    loop {
        demands.push((r.demand_packets, r.burst));
        let (t_end, o) = complete(&mut s, r, t, 0);
        t = t_end;
        match rsvs(&o).first() {
            Some(next) => r = *next,
            None => break,
        }
    }
    let d: Vec<u32> = demands.iter().map(|x| x.0).collect();
    assert_eq!(d, vec![4, 2, 4, 1]);
    assert_eq!(s.stats().bursts, 4);
}

#[test]
fn zero_byte_message_is_one_packet() {
    let mut s = sender(SenderConfig::default());
    let mut out = Vec::new();
    s.on_app_message(
        0,
        AppMessage {
            bytes: 0,
            ..msg(1, 1, 0)
        },
        &mut out,
    )
    .unwrap();
    assert_eq!(rsvs(&out)[0].demand_packets, 1);
    assert!(
        s.on_app_message(0, msg(1, 1, 1), &mut out).is_err(),
        "duplicate id"
    );
}

#[test]
fn first_burst_never_goes_unsolicited_and_arms_the_timeout() {
    let mut s = sender(SenderConfig::default());
    let mut out = Vec::new();
    s.on_app_message(5, msg(1, 1, 4), &mut out).unwrap();
    assert!(sends(&out).is_empty());
    let r = rsvs(&out)[0];
    assert!(!r.unsolicited_follows);
    assert_eq!(timers(&out)[0].1, 5 + 100_000_000);
}

/// Makes `s` have a recent GRT with the given chosen slot for (ctx 0, dst 1) and returns
/// the time the last exchange finished.
fn warm_up(s: &mut Sender, chosen: u32) -> u64 {
    let mut out = Vec::new();
    s.on_app_message(0, msg(100, 1, 1), &mut out).unwrap();
    complete(s, rsvs(&out)[0], 0, chosen).0
}

#[test]
fn unsolicited_needs_last_chosen_below_t_and_a_recent_grt() {
    // After a GRT with chosen 14 < 15 at time D, a burst within 2 D goes unsolicited.
    let mut s = sender(SenderConfig::default());
    warm_up(&mut s, 14);
    let mut out = Vec::new();
    s.on_app_message(3 * D, msg(1, 1, 4), &mut out).unwrap();
    assert_eq!(out.len(), 3, "RSV, timer, burst");
    assert!(matches!(out[0], SenderAction::SendRsv(r) if r.unsolicited_follows));
    let b = sends(&out)[0];
    assert!(b.unsolicited && !b.resent && b.at_ps == 3 * D && b.packets == 4);
    // One picosecond later than 2 estimates after the GRT (at D): not recent.
    let mut s = sender(SenderConfig::default());
    warm_up(&mut s, 14);
    let mut out = Vec::new();
    s.on_app_message(D + 2 * D + 1, msg(1, 1, 4), &mut out)
        .unwrap();
    assert!(sends(&out).is_empty());
    // Chosen == t: not below t, so solicited.
    let mut s = sender(SenderConfig::default());
    warm_up(&mut s, 15);
    let mut out = Vec::new();
    s.on_app_message(2 * D, msg(1, 1, 4), &mut out).unwrap();
    assert!(sends(&out).is_empty());
    // The state is per destination.
    let mut s = sender(SenderConfig::default());
    warm_up(&mut s, 0);
    let mut out = Vec::new();
    s.on_app_message(2 * D, msg(1, 2, 4), &mut out).unwrap();
    assert!(sends(&out).is_empty());
}

#[test]
fn resend_boundary_chosen_equal_t_is_not_resent() {
    for (chosen, resend) in [(15u32, false), (16, true)] {
        let mut s = sender(SenderConfig::default());
        warm_up(&mut s, 0);
        let mut out = Vec::new();
        s.on_app_message(2 * D, msg(1, 1, 4), &mut out).unwrap();
        let r = rsvs(&out)[0];
        assert!(r.unsolicited_follows);
        out.clear();
        s.on_grt(3 * D, &grt(r.burst, 0, 0, chosen, 4), 0, &mut out);
        let b = sends(&out);
        assert_eq!(b.len(), usize::from(resend), "chosen {chosen}");
        if resend {
            assert!(b[0].resent && !b[0].unsolicited);
            // Equation (1), reading (b): chosen·slot − estimate (min of samples = D).
            assert_eq!(b[0].at_ps, 3 * D + 16 * SLOT - D);
        }
        let p = probes(&out)[0];
        assert!(p.unsolicited);
        assert_eq!(p.resent, resend);
        assert_eq!(s.stats().resent_bursts, u64::from(resend));
    }
}

#[test]
fn improved_resends_iff_not_admitted() {
    for admitted in [true, false] {
        let mut s = sender(SenderConfig {
            improved: true,
            ..Default::default()
        });
        warm_up(&mut s, 0);
        let mut out = Vec::new();
        s.on_app_message(2 * D, msg(1, 1, 4), &mut out).unwrap();
        let r = rsvs(&out)[0];
        out.clear();
        // chosen 100 > t, yet an admitted burst is not resent; chosen 0 and refused is.
        let chosen = if admitted { 100 } else { 0 };
        let g = Grt {
            unsolicited_admitted: admitted,
            ..grt(r.burst, 0, chosen, 0, 4)
        };
        s.on_grt(3 * D, &g, 0, &mut out);
        assert_eq!(sends(&out).len(), usize::from(!admitted));
    }
}

#[test]
fn equation_1_readings_on_a_worked_example() {
    // chosen 10 → timeslotWait = 10 × 123.36 ns = 1233.6 ns; rsvGrtDelay = 1 µs;
    // pendingDataDelay = 150 ns. (a) waits 1233.6 − 1000 − 150 = 83.6 ns;
    // (b) waits 233.6 ns and lets the NIC backlog delay the burst.
    for (rule, wait) in [
        (WaitRule::Literal, 83_600u64),
        (WaitRule::AtHandoff, 233_600),
    ] {
        let mut s = sender(SenderConfig {
            wait_rule: rule,
            ..Default::default()
        });
        let mut out = Vec::new();
        s.on_app_message(0, msg(1, 1, 4), &mut out).unwrap();
        let r = rsvs(&out)[0];
        out.clear();
        s.on_grt(D, &grt(r.burst, 0, 3, 10, 4), 150_000, &mut out);
        assert_eq!(sends(&out)[0].at_ps, D + wait, "{rule:?}");
        assert_eq!(probes(&out)[0].wait_ps, wait);
        assert_eq!(probes(&out)[0].chosen_slots, 10);
    }
    // Both clamp at zero.
    let mut s = sender(SenderConfig {
        wait_rule: WaitRule::Literal,
        ..Default::default()
    });
    let mut out = Vec::new();
    s.on_app_message(0, msg(1, 1, 4), &mut out).unwrap();
    let r = rsvs(&out)[0];
    s.on_grt(D, &grt(r.burst, 0, 2, 0, 4), 10 * D, &mut out);
    assert_eq!(sends(&out)[0].at_ps, D);
}

#[test]
fn estimator_samples_rsv_to_grt_per_destination() {
    let mut s = sender(SenderConfig {
        estimator: EstimatorKind::Ewma { initial_ps: 2 * D },
        ..Default::default()
    });
    assert_eq!(
        s.rsv_grt_estimate_ps(0, 1),
        None,
        "no state before the first exchange"
    );
    let mut out = Vec::new();
    s.on_app_message(7, msg(1, 1, 1), &mut out).unwrap();
    let r = rsvs(&out)[0];
    s.on_grt(7 + 6 * D, &grt(r.burst, 0, 0, 0, 1), 0, &mut out);
    // 2 µs + (6 µs − 2 µs) / 8 = 2.5 µs.
    assert_eq!(s.rsv_grt_estimate_ps(0, 1), Some(2_500_000));
}

#[test]
fn blocking_waits_for_transmission_and_pipelined_for_hand_off() {
    let no_ll = LowLoadConfig {
        enabled: false,
        ..Default::default()
    };
    for mode in [PipelineMode::Blocking, PipelineMode::Pipelined] {
        let mut s = sender(SenderConfig {
            pipeline: mode,
            low_load: no_ll,
            ..Default::default()
        });
        let mut out = Vec::new();
        s.on_app_message(0, msg(1, 1, 8), &mut out).unwrap();
        let r = rsvs(&out)[0];
        out.clear();
        s.on_grt(D, &grt(r.burst, 0, 0, 0, 4), 0, &mut out);
        assert!(
            rsvs(&out).is_empty(),
            "no next RSV before the burst is handed over"
        );
        out.clear();
        s.on_burst_handed_to_nic(D, r.burst, &mut out);
        let at_handoff = rsvs(&out).len();
        out.clear();
        s.on_burst_transmitted(D + 4 * SLOT, r.burst, &mut out);
        let at_tx = rsvs(&out).len();
        match mode {
            PipelineMode::Blocking => assert_eq!((at_handoff, at_tx), (0, 1)),
            PipelineMode::Pipelined => assert_eq!((at_handoff, at_tx), (1, 0)),
        }
    }
}

#[test]
fn blocking_unsolicited_still_waits_for_the_grt() {
    let mut s = sender(SenderConfig::default());
    let t0 = warm_up(&mut s, 0);
    let mut out = Vec::new();
    s.on_app_message(t0, msg(1, 1, 8), &mut out).unwrap();
    let b = sends(&out)[0];
    assert!(b.unsolicited);
    out.clear();
    s.on_burst_handed_to_nic(t0, b.burst, &mut out);
    s.on_burst_transmitted(t0 + 4 * SLOT, b.burst, &mut out);
    assert!(rsvs(&out).is_empty());
    s.on_grt(t0 + D, &grt(b.burst, 0, 0, 0, 4), 0, &mut out);
    let next = rsvs(&out);
    assert_eq!(next.len(), 1);
    assert!(next[0].unsolicited_follows);
    assert_eq!(sends(&out)[0].first_packet, 4);
    assert!(!out.contains(&SenderAction::MessageHandedOver { msg: MsgId(1) }));
}

#[test]
fn pipelined_keeps_at_most_two_exchanges_awaiting_grts() {
    let mut s = sender(SenderConfig {
        pipeline: PipelineMode::Pipelined,
        ..Default::default()
    });
    let t0 = warm_up(&mut s, 0);
    let mut out = Vec::new();
    s.on_app_message(t0, msg(1, 1, 12), &mut out).unwrap();
    let b1 = sends(&out)[0];
    out.clear();
    s.on_burst_handed_to_nic(t0, b1.burst, &mut out);
    // The next RSV and its unsolicited burst go right away...
    let b2 = sends(&out)[0];
    assert!(b2.unsolicited && b2.first_packet == 4);
    out.clear();
    s.on_burst_handed_to_nic(t0, b2.burst, &mut out);
    // ...but a third waits for the first GRT.
    assert!(rsvs(&out).is_empty());
    s.on_grt(t0 + D, &grt(b1.burst, 0, 0, 0, 4), 0, &mut out);
    assert_eq!(rsvs(&out).len(), 1);
}

#[test]
fn message_handed_over_after_its_last_burst() {
    let no_ll = LowLoadConfig {
        enabled: false,
        ..Default::default()
    };
    let mut s = sender(SenderConfig {
        low_load: no_ll,
        ..Default::default()
    });
    let mut out = Vec::new();
    s.on_app_message(0, msg(1, 1, 5), &mut out).unwrap();
    let (t, o) = complete(&mut s, rsvs(&out)[0], 0, 0);
    assert!(!o.contains(&SenderAction::MessageHandedOver { msg: MsgId(1) }));
    let (_, o) = complete(&mut s, rsvs(&o)[0], t, 0);
    assert!(o.contains(&SenderAction::MessageHandedOver { msg: MsgId(1) }));
}

#[test]
fn lost_rsv_is_retried_and_a_late_grant_is_cancelled() {
    let mut s = sender(SenderConfig::default());
    let mut out = Vec::new();
    s.on_app_message(0, msg(1, 1, 4), &mut out).unwrap();
    let r0 = rsvs(&out)[0];
    let (tok0, at0) = timers(&out)[0];
    out.clear();
    s.on_timer(at0, tok0, &mut out);
    let r1 = rsvs(&out)[0];
    let (tok1, at1) = timers(&out)[0];
    assert_eq!((r1.burst, r1.attempt, r1.demand_packets), (r0.burst, 1, 4));
    assert_eq!(at1, at0 + 100_000_000);
    assert_eq!(s.stats().rsv_retries, 1);
    // The old timer again: stale, nothing happens.
    out.clear();
    s.on_timer(at0 + 1, tok0, &mut out);
    assert!(out.is_empty());
    // The first attempt's GRT turns up late: its reservation is released.
    s.on_grt(at0 + 2, &grt(r0.burst, 0, 0, 0, 4), 0, &mut out);
    assert_eq!(
        out,
        vec![SenderAction::SendCancel(Cancel {
            src: 0,
            dst: 1,
            packets: 4
        })]
    );
    // The retry's GRT is used; the sample is measured from the retry.
    out.clear();
    s.on_grt(at0 + 3 * D, &grt(r0.burst, 1, 0, 0, 4), 0, &mut out);
    assert_eq!(sends(&out)[0].at_ps, at0 + 3 * D);
    assert_eq!(s.rsv_grt_estimate_ps(0, 1), Some(3 * D));
    // The timeout of the answered attempt is stale too.
    out.clear();
    s.on_timer(at1, tok1, &mut out);
    assert!(out.is_empty());
}

#[test]
fn a_retried_unsolicited_burst_does_not_announce_its_copy_again() {
    let mut s = sender(SenderConfig::default());
    warm_up(&mut s, 0);
    let mut out = Vec::new();
    s.on_app_message(2 * D, msg(1, 1, 4), &mut out).unwrap();
    assert!(rsvs(&out)[0].unsolicited_follows);
    let (tok, at) = timers(&out)[0];
    out.clear();
    s.on_timer(at, tok, &mut out);
    assert!(!rsvs(&out)[0].unsolicited_follows);
}

#[test]
fn priority_grant_one_sends_one_and_asks_again_for_the_rest() {
    let cfg = SenderConfig {
        priority_scheme: true,
        ..Default::default()
    };
    let mut s = sender(cfg);
    let t0 = warm_up(&mut s, 0);
    let mut out = Vec::new();
    s.on_app_message(t0, msg(1, 1, 4), &mut out).unwrap();
    // Low priority never goes unsolicited under the priority scheme.
    assert!(sends(&out).is_empty());
    let r = rsvs(&out)[0];
    let (t, o) = complete(
        &mut s,
        Rsv {
            demand_packets: 1,
            ..r
        },
        t0,
        70,
    );
    let b = sends(&o)[0];
    assert_eq!((b.first_packet, b.packets), (0, 1));
    assert_eq!(s.stats().partial_grants, 1);
    let next = rsvs(&o)[0];
    assert_eq!(next.demand_packets, 3);
    let (_, o) = complete(&mut s, next, t, 0);
    assert_eq!(sends(&o)[0].first_packet, 1);
    assert!(o.contains(&SenderAction::MessageHandedOver { msg: MsgId(1) }));
}

#[test]
fn priority_reject_backs_off_then_asks_again() {
    let cfg = SenderConfig {
        priority_scheme: true,
        ..Default::default()
    };
    let mut s = sender(cfg);
    let mut out = Vec::new();
    s.on_app_message(0, msg(1, 1, 4), &mut out).unwrap();
    let r = rsvs(&out)[0];
    out.clear();
    s.on_grt(D, &grt(r.burst, 0, 0, 130, 0), 0, &mut out);
    assert!(sends(&out).is_empty());
    let (tok, at) = timers(&out)[0];
    assert_eq!(at, D + 64 * SLOT);
    assert_eq!(probes(&out)[0].granted_packets, 0);
    out.clear();
    // The RSV timeout of the rejected attempt does nothing.
    s.on_timer(
        100_000_000,
        encode_token(TimerKind::RsvTimeout, r.burst, 0),
        &mut out,
    );
    assert!(out.is_empty());
    s.on_timer(at, tok, &mut out);
    let again = rsvs(&out)[0];
    assert_eq!((again.attempt, again.demand_packets), (1, 4));
    assert_eq!(s.stats().rejects, 1);
}

#[test]
fn high_priority_may_go_unsolicited_under_the_priority_scheme() {
    let mut s = sender(SenderConfig {
        priority_scheme: true,
        ..Default::default()
    });
    let mut out = Vec::new();
    let m = AppMessage {
        high_priority: true,
        ..msg(100, 1, 1)
    };
    s.on_app_message(0, m, &mut out).unwrap();
    let r = rsvs(&out)[0];
    assert!(r.high_priority);
    let (t, _) = complete(&mut s, r, 0, 0);
    let mut out = Vec::new();
    s.on_app_message(
        t,
        AppMessage {
            high_priority: true,
            ..msg(1, 1, 4)
        },
        &mut out,
    )
    .unwrap();
    assert!(sends(&out)[0].unsolicited);
}

#[test]
fn scope_per_destination_runs_destinations_in_parallel() {
    for (scope, parallel) in [
        (ExchangeScope::PerContext, 1),
        (ExchangeScope::PerDestination, 2),
    ] {
        let mut s = sender(SenderConfig {
            scope,
            ..Default::default()
        });
        let mut out = Vec::new();
        s.on_app_message(0, msg(1, 1, 4), &mut out).unwrap();
        s.on_app_message(0, msg(2, 2, 4), &mut out).unwrap();
        assert_eq!(rsvs(&out).len(), parallel, "{scope:?}");
    }
}

#[test]
fn grts_for_other_hosts_are_ignored() {
    let mut s = sender(SenderConfig::default());
    let mut out = Vec::new();
    s.on_grt(
        0,
        &Grt {
            src: 9,
            ..grt(BurstId(0), 0, 0, 0, 4)
        },
        0,
        &mut out,
    );
    assert!(out.is_empty());
}
