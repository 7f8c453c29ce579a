//! Unit tests of the switch scheduler: Algorithm 1, the T rule, priorities, the ideal
//! mode, the dequeue ablation, cancels, GRT copies, the inter-rack share and the
//! improved variant. The randomised comparison against a reference model is in
//! `tests/switch_model.rs`.

use super::*;
use crate::msg::BurstId;

const SLOT: u64 = 123_360;

fn sched(cfg: SchedulerConfig, hosts: u32) -> Scheduler {
    Scheduler::new(cfg, (0..hosts).collect(), hosts).unwrap()
}

fn rsv(src: HostId, dst: HostId, burst: u32, demand: u32) -> Rsv {
    Rsv {
        src,
        dst,
        burst: BurstId(burst),
        attempt: 0,
        demand_packets: demand,
        high_priority: false,
        unsolicited_follows: false,
    }
}

fn data(src: HostId, dst: HostId, burst: u32, unsolicited: bool) -> DataTag {
    DataTag {
        src,
        dst,
        burst: BurstId(burst),
        index_in_burst: 0,
        unsolicited,
        resent: false,
    }
}

fn grant(s: &mut Scheduler, now: u64, r: &Rsv) -> Grt {
    let mut out = Vec::new();
    s.on_rsv(now, r, &mut out).unwrap();
    match out[0] {
        SwitchAction::SendGrt(g) => g,
        other => panic!("expected a GRT, got {other:?}"),
    }
}

#[test]
fn grt_carries_counters_before_increment_and_increments_both() {
    let mut s = sched(SchedulerConfig::default(), 3);
    let g1 = grant(&mut s, 0, &rsv(0, 1, 0, 4));
    assert_eq!(
        (
            g1.send_timeslot_slots,
            g1.recv_timeslot_slots,
            g1.granted_packets
        ),
        (0, 0, 4)
    );
    let g2 = grant(&mut s, 0, &rsv(0, 2, 1, 3));
    assert_eq!((g2.send_timeslot_slots, g2.recv_timeslot_slots), (4, 0));
    assert_eq!(s.in_backlog_slots(0, 0), 7);
    assert_eq!(s.out_backlog_slots(0, 1), 4);
    assert_eq!(s.out_backlog_slots(0, 2), 3);
}

#[test]
fn demand_is_capped_at_k() {
    let mut s = sched(SchedulerConfig::default(), 2);
    let g = grant(&mut s, 0, &rsv(0, 1, 0, 9));
    assert_eq!(g.granted_packets, 4);
    assert_eq!(s.in_backlog_slots(0, 0), 4);
}

#[test]
fn arrivals_decrement_one_per_packet_and_saturate() {
    let mut s = sched(SchedulerConfig::default(), 3);
    grant(&mut s, 0, &rsv(0, 1, 0, 2));
    for _ in 0..2 {
        assert_eq!(
            s.on_data_ingress(0, &data(0, 1, 0, false)).unwrap(),
            Verdict::Forward
        );
    }
    assert_eq!(
        (s.in_backlog_slots(0, 0), s.out_backlog_slots(0, 1)),
        (0, 0)
    );
    assert_eq!(s.stats().counter_drift_packets, 0);
    // A third packet of the same burst is drift, and the counters saturate.
    s.on_data_ingress(0, &data(0, 1, 0, false)).unwrap();
    assert_eq!(
        (s.in_backlog_slots(0, 0), s.out_backlog_slots(0, 1)),
        (0, 0)
    );
    assert_eq!(s.stats().counter_drift_packets, 1);
    assert_eq!(s.stats().decrement_saturations, 2);
}

#[test]
fn breakout_hosts_share_their_port_counters() {
    // Hosts 0 and 1 on port 0 (a split 100G port), host 2 on port 1.
    let mut s = Scheduler::new(SchedulerConfig::default(), vec![0, 0, 1], 2).unwrap();
    grant(&mut s, 0, &rsv(0, 2, 0, 4));
    let g = grant(&mut s, 0, &rsv(1, 2, 0, 4));
    assert_eq!((g.send_timeslot_slots, g.recv_timeslot_slots), (4, 4));
}

#[test]
fn unsolicited_t_rule_is_strictly_greater_and_drops_do_not_decrement() {
    let cfg = SchedulerConfig {
        t_unsolicited_slots: 8,
        ..Default::default()
    };
    let mut s = sched(cfg, 3);
    grant(&mut s, 0, &rsv(0, 1, 0, 4));
    grant(&mut s, 0, &rsv(0, 1, 1, 4));
    // Backlog 8 == T: passes (and decrements to 7).
    assert_eq!(
        s.on_data_ingress(0, &data(0, 1, 1, true)).unwrap(),
        Verdict::Forward
    );
    assert_eq!(s.in_backlog_slots(0, 0), 7);
    grant(&mut s, 0, &rsv(2, 1, 0, 2));
    // out[1] = 9 > T: dropped, counters untouched.
    assert_eq!(
        s.on_data_ingress(0, &data(0, 1, 1, true)).unwrap(),
        Verdict::Drop
    );
    assert_eq!(
        (s.in_backlog_slots(0, 0), s.out_backlog_slots(0, 1)),
        (7, 9)
    );
    assert_eq!(s.stats().unsolicited_dropped, 1);
    assert_eq!(s.stats().unsolicited_passed, 1);
}

#[test]
fn faithful_counts_unrecovered_drop_when_grt_said_chosen_at_most_t() {
    let cfg = SchedulerConfig {
        t_unsolicited_slots: 8,
        t_sender_slots: 3,
        ..Default::default()
    };
    let mut s = sched(cfg, 4);
    let mut r = rsv(0, 1, 7, 4);
    r.unsolicited_follows = true;
    let g = grant(&mut s, 0, &r); // chosen 0 <= t: the sender will not resend
    assert_eq!(g.chosen_slots(), 0);
    assert!(!g.unsolicited_admitted);
    // Others fill port 1's output before the unsolicited packets arrive.
    grant(&mut s, 0, &rsv(2, 1, 0, 4));
    grant(&mut s, 0, &rsv(3, 1, 0, 4));
    for _ in 0..2 {
        assert_eq!(
            s.on_data_ingress(0, &data(0, 1, 7, true)).unwrap(),
            Verdict::Drop
        );
    }
    assert_eq!(s.stats().unsolicited_unrecovered_packets, 2);
    assert_eq!(s.stats().unsolicited_unrecovered_bursts, 1);
}

#[test]
fn faithful_counts_drift_when_a_passed_unsolicited_burst_is_resent() {
    let mut s = sched(SchedulerConfig::default(), 3);
    grant(&mut s, 0, &rsv(2, 1, 0, 16)); // out[1] = 4 (capped at K)
    grant(&mut s, 0, &rsv(2, 1, 1, 4));
    grant(&mut s, 0, &rsv(2, 1, 2, 4));
    grant(&mut s, 0, &rsv(2, 1, 3, 4)); // out[1] = 16 > t = 15: the sender will resend
    let mut r = rsv(0, 1, 9, 1);
    r.unsolicited_follows = true;
    let g = grant(&mut s, 0, &r);
    assert_eq!(g.chosen_slots(), 16);
    assert_eq!(
        s.on_data_ingress(0, &data(0, 1, 9, true)).unwrap(),
        Verdict::Forward
    );
    let mut resent = data(0, 1, 9, false);
    resent.resent = true;
    s.on_data_ingress(0, &resent).unwrap();
    assert_eq!(s.stats().counter_drift_packets, 1);
    // in[0] had 1 reserved and saw 2 decrements: saturation is what hardware sees.
    assert_eq!(s.in_backlog_slots(0, 0), 0);
    assert_eq!(s.out_backlog_slots(0, 1), 15);
    assert_eq!(s.stats().decrement_saturations, 1);
}

#[test]
fn improved_decides_admission_at_rsv_and_suppresses_double_decrements() {
    let cfg = SchedulerConfig {
        improved: true,
        t_unsolicited_slots: 4,
        ..Default::default()
    };
    let mut s = sched(cfg, 3);
    let mut r = rsv(0, 1, 0, 4);
    r.unsolicited_follows = true;
    let g = grant(&mut s, 0, &r);
    assert!(g.unsolicited_admitted);
    // Another burst fills the port; the admitted one still passes.
    grant(&mut s, 0, &rsv(2, 1, 0, 4));
    grant(&mut s, 0, &rsv(2, 1, 1, 4));
    assert_eq!(
        s.on_data_ingress(0, &data(0, 1, 0, true)).unwrap(),
        Verdict::Forward
    );
    // Backlog now 11 > T: the next unsolicited burst is refused at its RSV...
    let mut r2 = rsv(0, 1, 1, 2);
    r2.unsolicited_follows = true;
    let g2 = grant(&mut s, 0, &r2);
    assert!(!g2.unsolicited_admitted);
    // ...and its unsolicited packets are dropped without counting a hole.
    assert_eq!(
        s.on_data_ingress(0, &data(0, 1, 1, true)).unwrap(),
        Verdict::Drop
    );
    assert_eq!(s.stats().unsolicited_unrecovered_packets, 0);
    // An unsolicited packet of a burst whose RSV was never seen is dropped.
    assert_eq!(
        s.on_data_ingress(0, &data(0, 1, 99, true)).unwrap(),
        Verdict::Drop
    );
    // Arrivals beyond a burst's reservation do not decrement.
    for _ in 0..4 {
        s.on_data_ingress(0, &data(0, 1, 0, false)).unwrap();
    }
    assert_eq!(s.stats().suppressed_decrements, 1);
    assert_eq!(s.stats().counter_drift_packets, 0);
    assert_eq!(s.out_backlog_slots(0, 1), 8 + 2);
}

#[test]
fn priority_thresholds() {
    let cfg = SchedulerConfig {
        priority: Some(PriorityThresholds::default()),
        ..Default::default()
    };
    // Bring out[1] to `backlog` with high-priority RSVs from host 2, then ask low.
    for (backlog, expect) in [(0, 4), (63, 4), (64, 1), (127, 1), (128, 0), (200, 0)] {
        let mut s = sched(cfg.clone(), 3);
        let mut left = backlog;
        while left > 0 {
            let mut h = rsv(2, 1, 0, left.min(4));
            h.high_priority = true;
            grant(&mut s, 0, &h);
            left -= left.min(4);
        }
        let g = grant(&mut s, 0, &rsv(0, 1, 1, 4));
        assert_eq!(g.granted_packets, expect, "backlog {backlog}");
        assert_eq!(g.recv_timeslot_slots, backlog);
        assert_eq!(
            s.in_backlog_slots(0, 0),
            u64::from(expect),
            "a reject reserves nothing"
        );
        let mut h = rsv(0, 1, 2, 4);
        h.high_priority = true;
        assert_eq!(
            grant(&mut s, 0, &h).granted_packets,
            4,
            "high always gets its demand"
        );
    }
}

#[test]
fn priority_uses_the_max_of_both_counters() {
    let cfg = SchedulerConfig {
        priority: Some(PriorityThresholds::default()),
        ..Default::default()
    };
    let mut s = sched(cfg, 3);
    for b in 0..16 {
        let mut h = rsv(0, 2, b, 4);
        h.high_priority = true;
        grant(&mut s, 0, &h); // in[0] = 64, out[1] = 0
    }
    assert_eq!(grant(&mut s, 0, &rsv(0, 1, 99, 4)).granted_packets, 1);
}

#[test]
fn ideal_mode_uses_absolute_slots_and_lead() {
    let cfg = SchedulerConfig {
        mode: SwitchMode::Ideal { lead_slots: 8 },
        ..Default::default()
    };
    let mut s = sched(cfg, 3);
    let now = 100 * SLOT + 5;
    let g = grant(&mut s, now, &rsv(0, 1, 0, 4));
    // chosen = now_slot + L = 108, carried relative: 8 in both fields.
    assert_eq!((g.send_timeslot_slots, g.recv_timeslot_slots), (8, 8));
    // Next from another source to the same destination: out[1] next free = 112.
    let g = grant(&mut s, now, &rsv(2, 1, 0, 2));
    assert_eq!(g.chosen_slots(), 12);
    // Arrivals do not decrement; time does.
    s.on_data_ingress(now, &data(0, 1, 0, false)).unwrap();
    assert_eq!(s.out_backlog_slots(now, 1), 14);
    assert_eq!(s.out_backlog_slots(110 * SLOT, 1), 4);
    assert_eq!(s.out_backlog_slots(200 * SLOT, 1), 0);
    // Long after, the lead dominates again.
    assert_eq!(
        grant(&mut s, 200 * SLOT, &rsv(0, 1, 1, 1)).chosen_slots(),
        8
    );
    assert_eq!(s.stats().counter_drift_packets, 0);
}

#[test]
fn dequeue_ablation_moves_the_decrement() {
    let cfg = SchedulerConfig {
        decrement_at: DecrementPoint::Dequeue,
        ..Default::default()
    };
    let mut s = sched(cfg, 2);
    grant(&mut s, 0, &rsv(0, 1, 0, 1));
    s.on_data_ingress(0, &data(0, 1, 0, false)).unwrap();
    assert_eq!(s.in_backlog_slots(0, 0), 1);
    s.on_data_dequeued(0, &data(0, 1, 0, false)).unwrap();
    assert_eq!(s.in_backlog_slots(0, 0), 0);
    // Under the default, dequeues do nothing.
    let mut s = sched(SchedulerConfig::default(), 2);
    grant(&mut s, 0, &rsv(0, 1, 0, 1));
    s.on_data_dequeued(0, &data(0, 1, 0, false)).unwrap();
    assert_eq!(s.in_backlog_slots(0, 0), 1);
}

#[test]
fn grt_copy_goes_to_the_receiver_and_cancel_releases_saturating() {
    let cfg = SchedulerConfig {
        grt_copy_to_receiver: true,
        ..Default::default()
    };
    let mut s = sched(cfg, 2);
    let mut out = Vec::new();
    s.on_rsv(0, &rsv(0, 1, 0, 3), &mut out).unwrap();
    assert_eq!(out.len(), 2);
    assert!(matches!(out[1], SwitchAction::SendGrtCopy(g) if g.dst == 1 && g.granted_packets == 3));
    s.on_cancel(
        0,
        &Cancel {
            src: 0,
            dst: 1,
            packets: 2,
        },
    )
    .unwrap();
    assert_eq!(
        (s.in_backlog_slots(0, 0), s.out_backlog_slots(0, 1)),
        (1, 1)
    );
    s.on_cancel(
        0,
        &Cancel {
            src: 0,
            dst: 1,
            packets: 5,
        },
    )
    .unwrap();
    assert_eq!(
        (s.in_backlog_slots(0, 0), s.out_backlog_slots(0, 1)),
        (0, 0)
    );
}

#[test]
fn external_share_inflates_reservations_and_drains_exactly() {
    let cfg = SchedulerConfig {
        external_share_ppm: 100_000,
        ..Default::default()
    };
    let mut s = sched(cfg, 2);
    for b in 0..3 {
        grant(&mut s, 0, &rsv(0, 1, b, 3));
    }
    // 9 packets at r = 0.1 are 10 slots.
    assert_eq!(s.in_backlog_slots(0, 0), 10);
    let g = grant(&mut s, 0, &rsv(0, 1, 3, 1));
    assert_eq!(g.send_timeslot_slots, 10);
    for b in 0..4 {
        for _ in 0..if b < 3 { 3 } else { 1 } {
            s.on_data_ingress(0, &data(0, 1, b, false)).unwrap();
        }
    }
    assert_eq!(
        (s.in_backlog_slots(0, 0), s.out_backlog_slots(0, 1)),
        (0, 0)
    );
    assert_eq!(s.stats().decrement_saturations, 0);
}

#[test]
fn rejects_bad_configs_and_unknown_hosts() {
    assert!(Scheduler::new(SchedulerConfig::default(), vec![0, 5], 2).is_err());
    let bad = SchedulerConfig {
        external_share_ppm: 1_000_000,
        ..Default::default()
    };
    assert!(Scheduler::new(bad, vec![0], 1).is_err());
    let bad = SchedulerConfig {
        priority: Some(PriorityThresholds {
            t1_slots: 10,
            t2_slots: 5,
        }),
        ..Default::default()
    };
    assert!(Scheduler::new(bad, vec![0], 1).is_err());
    let mut s = sched(SchedulerConfig::default(), 2);
    let mut out = Vec::new();
    assert_eq!(
        s.on_rsv(0, &rsv(0, 7, 0, 1), &mut out),
        Err(ProtocolError::UnknownHost(7))
    );
}

/// Host 0's unsolicited burst of 4 to host 1 passes, then its resent copy arrives, while
/// host 2 holds 4 reserved slots on host 1's port: the true backlog on `out[1]` after
/// both copies is host 2's 4. Returns `out[1]` and the stats.
fn unsolicited_then_resent(cfg: SchedulerConfig) -> (u64, SwitchStats) {
    let mut s = sched(cfg, 3);
    let mut r = rsv(0, 1, 0, 4);
    r.unsolicited_follows = true;
    grant(&mut s, 0, &r);
    grant(&mut s, 0, &rsv(2, 1, 0, 4));
    for _ in 0..4 {
        assert_eq!(
            s.on_data_ingress(0, &data(0, 1, 0, true)).unwrap(),
            Verdict::Forward
        );
    }
    for _ in 0..4 {
        s.on_data_ingress(0, &data(0, 1, 0, false)).unwrap();
    }
    (s.out_backlog_slots(0, 1), *s.stats())
}

#[test]
fn faithful_counts_a_passed_and_resent_burst_twice() {
    let (out, st) = unsolicited_then_resent(SchedulerConfig::default());
    assert_eq!(out, 0, "4 packets of drift: host 2's reservation is gone");
    assert_eq!(st.counter_drift_packets, 4);
}

#[test]
fn suppressing_excess_decrements_keeps_the_true_backlog() {
    let cfg = SchedulerConfig {
        suppress_excess_decrements: true,
        ..Default::default()
    };
    let (out, st) = unsolicited_then_resent(cfg);
    assert_eq!(out, 4);
    assert_eq!((st.counter_drift_packets, st.suppressed_decrements), (0, 4));
    // The T rule is still Algorithm 1's, per packet: with T = 3 an unsolicited packet
    // meeting 4 reserved slots is dropped (the improved variant would decide at the RSV).
    let mut s = sched(
        SchedulerConfig {
            suppress_excess_decrements: true,
            t_unsolicited_slots: 3,
            ..Default::default()
        },
        3,
    );
    let mut r = rsv(0, 1, 0, 4);
    r.unsolicited_follows = true;
    let g = grant(&mut s, 0, &r);
    assert!(!g.unsolicited_admitted);
    assert_eq!(
        s.on_data_ingress(0, &data(0, 1, 0, true)).unwrap(),
        Verdict::Drop
    );
}

#[test]
fn bypassing_unsolicited_packets_releases_only_at_the_resend() {
    let cfg = SchedulerConfig {
        unsolicited_bypass: true,
        ..Default::default()
    };
    let (out, st) = unsolicited_then_resent(cfg.clone());
    assert_eq!(out, 4);
    assert_eq!(
        (st.counter_drift_packets, st.bypassed_unsolicited_packets),
        (0, 4)
    );
    // A burst that is not resent keeps its reservation: 4 + host 2's 4.
    let mut s = sched(cfg, 3);
    let mut r = rsv(0, 1, 0, 4);
    r.unsolicited_follows = true;
    grant(&mut s, 0, &r);
    grant(&mut s, 0, &rsv(2, 1, 0, 4));
    for _ in 0..4 {
        s.on_data_ingress(0, &data(0, 1, 0, true)).unwrap();
    }
    assert_eq!(s.out_backlog_slots(0, 1), 8);
    assert_eq!(s.in_backlog_slots(0, 0), 4);
}

/// §7 on a ToR of 2 hosts (ports 0, 1) whose uplinks, 8 × 100G, are port 2, where hosts
/// 2 and 3 of another rack map: slots are 100G packets, so a packet reserves 1/8 slot
/// on the uplink.
fn rack_with_uplink(cfg: SchedulerConfig) -> Scheduler {
    let mut s = Scheduler::new(cfg, vec![0, 1, 2, 2], 3).unwrap();
    s.set_port_rate(2, 800_000_000_000, 100_000_000_000)
        .unwrap();
    s
}

#[test]
fn a_remote_burst_reserves_its_input_port_and_the_uplink() {
    let mut s = rack_with_uplink(SchedulerConfig::default());
    // h0 → h2 (other rack), 4 packets: in[0] gets 4 slots, the uplink half a slot.
    let g = grant(&mut s, 0, &rsv(0, 2, 0, 4));
    assert_eq!(
        (
            g.send_timeslot_slots,
            g.recv_timeslot_slots,
            g.granted_packets
        ),
        (0, 0, 4)
    );
    assert_eq!(
        (s.in_backlog_slots(0, 0), s.out_backlog_slots(0, 2)),
        (4, 1)
    );
    // h1 → h3: its input port is free; the uplink's half slot rounds up to one.
    let g = grant(&mut s, 0, &rsv(1, 3, 0, 4));
    assert_eq!((g.send_timeslot_slots, g.recv_timeslot_slots), (0, 1));
    // Eight bursts of 4 from the two hosts fill exactly 4 uplink slots (32 / 8)...
    for b in 1..4 {
        grant(&mut s, 0, &rsv(0, 2, b, 4));
        grant(&mut s, 0, &rsv(1, 3, b, 4));
    }
    assert_eq!(s.out_backlog_slots(0, 2), 4);
    // ... and the same input ports' 16 packets each.
    assert_eq!(
        (s.in_backlog_slots(0, 0), s.in_backlog_slots(0, 1)),
        (16, 16)
    );
    // A local burst h1 → h0 does not see the uplink: out[0] is empty, in[1] is 16.
    let g = grant(&mut s, 0, &rsv(1, 0, 9, 1));
    assert_eq!((g.send_timeslot_slots, g.recv_timeslot_slots), (16, 0));
    // Every packet's arrival drains the counters to exactly zero, without saturation.
    for b in 0..4 {
        for _ in 0..4 {
            s.on_data_ingress(0, &data(0, 2, b, false)).unwrap();
            s.on_data_ingress(0, &data(1, 3, b, false)).unwrap();
        }
    }
    s.on_data_ingress(0, &data(1, 0, 9, false)).unwrap();
    for port in 0..3 {
        assert_eq!(
            (s.in_backlog_slots(0, port), s.out_backlog_slots(0, port)),
            (0, 0),
            "port {port}"
        );
    }
    assert_eq!(s.stats().decrement_saturations, 0);
    // A cancel releases the uplink at its own rate too.
    grant(&mut s, 0, &rsv(0, 2, 10, 4));
    s.on_cancel(
        0,
        &Cancel {
            src: 0,
            dst: 2,
            packets: 4,
        },
    )
    .unwrap();
    assert_eq!(
        (s.in_backlog_slots(0, 0), s.out_backlog_slots(0, 2)),
        (0, 0)
    );
    assert_eq!(
        s.set_port_rate(3, 1, 1),
        Err(ConfigError::NoSuchPort { port: 3, ports: 3 })
    );
}

/// The share inflates the uplink's reservations as every port's: 72 packets on an 8 ×
/// 100G uplink are 9 slots without a share and exactly 10 with 10% kept.
#[test]
fn the_external_share_inflates_the_uplink_too() {
    for (share, slots) in [(0, 9), (100_000, 10)] {
        let mut s = rack_with_uplink(SchedulerConfig {
            external_share_ppm: share,
            ..Default::default()
        });
        for b in 0..18 {
            grant(&mut s, 0, &rsv(b % 2, 2 + b % 2, b, 4));
        }
        assert_eq!(s.out_backlog_slots(0, 2), slots, "share {share}");
    }
}

/// The ideal mode books the uplink's next free slot at its own rate: two bursts of 4 on
/// an 8 × 100G uplink share one slot.
#[test]
fn the_ideal_mode_books_the_uplink_at_its_rate() {
    let mut s = rack_with_uplink(SchedulerConfig {
        mode: SwitchMode::Ideal { lead_slots: 2 },
        ..Default::default()
    });
    let a = grant(&mut s, 0, &rsv(0, 2, 0, 4));
    let b = grant(&mut s, 0, &rsv(1, 3, 0, 4));
    // Both at the lead: the uplink's next free point after the first is 2.5 slots, and
    // h1's input is free at 2, so the second is chosen at 2.5, reported as 3 (rounded up).
    assert_eq!((a.send_timeslot_slots, b.send_timeslot_slots), (2, 3));
    assert_eq!(s.out_backlog_slots(0, 2), 3);
}
