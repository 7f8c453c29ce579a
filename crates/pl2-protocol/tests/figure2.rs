//! Figure 2 of the paper, worked end to end: "It reserves the earliest available timeslots
//! on H1's input port (T = 4) and H2's output port (T = 5) ... H1 then transmits at the
//! maximum of the two timeslots indicated in the GRT, which is T = 5."

use pl2_protocol::sender::{AppMessage, Sender, SenderAction, SenderConfig};
use pl2_protocol::switch::{Scheduler, SchedulerConfig, SwitchAction};
use pl2_protocol::{BurstId, MsgId, Rsv};

const H1: u32 = 1;
const H2: u32 = 2;
const H3: u32 = 3;
const H4: u32 = 4;

fn rsv(src: u32, dst: u32, burst: u32, demand: u32) -> Rsv {
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

#[test]
fn h1_to_h2_gets_slots_4_and_5_and_transmits_at_5() {
    // Hosts 0..=4 on ports 0..=4.
    let mut sw = Scheduler::new(SchedulerConfig::default(), (0..5).collect(), 5).unwrap();
    let mut out = Vec::new();
    // Set the counters as in the figure: H1's input has 4 slots reserved (to H3), H2's
    // output has 5 (from H3 and H4).
    sw.on_rsv(0, &rsv(H1, H3, 0, 4), &mut out).unwrap();
    sw.on_rsv(0, &rsv(H3, H2, 0, 4), &mut out).unwrap();
    sw.on_rsv(0, &rsv(H4, H2, 0, 1), &mut out).unwrap();
    assert_eq!(sw.in_backlog_slots(0, H1), 4);
    assert_eq!(sw.out_backlog_slots(0, H2), 5);

    // H1's sender asks for a burst to H2.
    let cfg = SenderConfig {
        host: H1,
        ..Default::default()
    };
    let mut h1 = Sender::new(cfg).unwrap();
    let mut acts = Vec::new();
    let m = AppMessage {
        id: MsgId(1),
        dst: H2,
        bytes: 2 * 1500,
        ctx: 0,
        high_priority: false,
    };
    h1.on_app_message(0, m, &mut acts).unwrap();
    let SenderAction::SendRsv(r) = acts[0] else {
        panic!("{:?}", acts[0])
    };
    out.clear();
    sw.on_rsv(150_000, &r, &mut out).unwrap();
    let SwitchAction::SendGrt(g) = out[0] else {
        panic!("{:?}", out[0])
    };
    assert_eq!((g.send_timeslot_slots, g.recv_timeslot_slots), (4, 5));
    assert_eq!(g.chosen_slots(), 5);
    // Both counters now include the new burst.
    assert_eq!(sw.in_backlog_slots(0, H1), 6);
    assert_eq!(sw.out_backlog_slots(0, H2), 7);

    // The sender transmits at slot 5: the GRT arrives 300 ns after the RSV left, and it
    // waits 5 slots minus that delay, so the burst is handed over 5 slots after the RSV
    // was sent (and reaches the switch 5 slots after the switch processed the RSV).
    acts.clear();
    h1.on_grt(300_000, &g, 0, &mut acts);
    let probe = acts.iter().find_map(|a| {
        if let SenderAction::Probe(p) = a {
            Some(*p)
        } else {
            None
        }
    });
    let send = acts.iter().find_map(|a| {
        if let SenderAction::SendBurst(b) = a {
            Some(*b)
        } else {
            None
        }
    });
    assert_eq!(probe.unwrap().chosen_slots, 5);
    assert_eq!(send.unwrap().at_ps, 300_000 + 5 * 123_360 - 300_000);
}
