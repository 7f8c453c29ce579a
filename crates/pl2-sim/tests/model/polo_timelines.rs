//! Polo's recovery paths and its pause hand-over, each worked out by hand packet by packet
//! on idle 1 Gbps links and asserted to the picosecond from the per-frame trace: recovery 1
//! (a sequence gap), recovery 2 (two epochs without data) and the hand-over from a
//! finished active flow to a paused one (Polo slides, "Recovering the lost packet
//! quickly", "Optimization for highly concurrent flows"; the rules as `docs/model.md`,
//! "Polo", states them). Recovery 3 is asserted exactly in `polo.rs`.
//!
//! Units: SER is a 1542 B frame and CTRL a header-sized one at 1 Gbps; hop2(x) is a frame
//! of serialisation x from one host to another through the store-and-forward switch
//! (x on each link, two link delays, the switch's latency); hop2(CTRL) = 1.894 µs,
//! hop2(SER) = 25.222 µs. Host NICs and switch ports send higher priorities first (control
//! packets, 7, before data, 0), first come first served within a priority, and never
//! interrupt a frame.

use super::common::*;
use super::polo::{drop_data, hop2, pair, polo, rack, run_polo, w, CTRL, SER};
use pl2_sim::config::EcnConfig;
use pl2_sim::metrics::{Records, TraceEvent};
use pl2_sim::sim::{SimSpec, TraceConfig};
use pl2_sim::transport::polo::wire::{self, Frame};
use pl2_sim::transport::polo::PoloConfig;
use pl2_sim::units::{BitsPerSec, Bytes};

/// One data packet and its adjoint at line rate.
const P: u64 = SER + CTRL;

/// Runs `sp` with every frame sent or received by the hosts traced.
fn traced(mut sp: SimSpec, hosts: &[&str]) -> Records {
    sp.metrics.trace = Some(TraceConfig { nodes: hosts.iter().map(|h| h.to_string()).collect(), ..TraceConfig::default() });
    run_polo(sp).1
}

/// The Polo frames `event` saw at host `node`, in time order.
fn frames(recs: &Records, node: u32, event: TraceEvent) -> Vec<(u64, Frame)> {
    recs.trace.iter().filter(|r| r.node == node && r.event == event).filter_map(|r| Some((r.time.0, wire::decode(&r.packet)?))).collect()
}

/// When the first frame matching `pick` did `event` at `node`.
fn when(recs: &Records, node: u32, event: TraceEvent, pick: impl Fn(&Frame) -> bool) -> u64 {
    let all = frames(recs, node, event);
    all.iter().find(|(_, f)| pick(f)).map(|p| p.0).unwrap_or_else(|| panic!("no such frame at node {node}: {all:?}"))
}

fn data(f: &Frame, index: u32, resent: bool) -> bool {
    matches!(f, Frame::Data { d, resent: r } if d.index == index && *r == resent)
}

fn losses(recs: &Records, node: u32) -> Vec<(u64, u32, u32)> {
    frames(recs, node, TraceEvent::Tx).into_iter().filter_map(|(t, f)| if let Frame::Loss { first, count, .. } = f { Some((t, first, count)) } else { None }).collect()
}

/// Where data packet k (k ≥ 1) of a 12-packet first burst starts at h0 when nothing
/// holds it: k data packets and adjoints before it, and one epoch echo per two packets.
/// Induction: adjoint 0 reaches h1 behind data 0 at hop2(SER) + CTRL and opens epoch 1;
/// its acknowledgement reaches h0 2 CTRL + 4 PROP + 2 LAT (1.1 µs) into data 2, so the
/// echo leaves after data 2, before adjoint 2 (it was queued first). Echo n leaves right
/// after data 2n and reaches h1 one CTRL behind it; it closes epoch n and the ack of epoch
/// n + 1 reaches h0 hop2(SER) + 2 CTRL + hop2(CTRL) = 2 SER + 3 CTRL + 4 PROP + 2 LAT
/// after data 2n started, that is 1.1 µs into data 2n + 2 (which starts 2 P + CTRL after
/// data 2n): echo n + 1 leaves after data 2n + 2. So echoes 1, 2, … sit behind data 2, 4,
/// …, and ⌊(k − 1)/2⌋ of them are before data k.
const fn burst_start(k: u64) -> u64 {
    k * P + (k - 1) / 2 * CTRL
}

/// One 12-packet message (18,000 B) h0 → h1 on the pair, data packet `index` lost once.
fn twelve_packets_losing(index: u32) -> Records {
    let mut sp = polo(pair(EcnConfig::Off), vec![msg(0, 0, 1, 18_000)], PoloConfig::default());
    sp.faults = vec![drop_data(index)];
    let recs = traced(sp, &["h0", "h1"]);
    all_delivered_once(&recs, 1);
    recs
}

#[test]
fn recovery_1_a_gap_asks_for_the_missing_packet_at_once() {
    // One 12-packet message (18,000 B), all in the first burst, so no driving packet;
    // data 10 is lost on its way. Data 11 starts at h0 at burst_start(11) = 11 P + 5 CTRL
    // = 146.448 µs (echo 5 still went behind the lost data 10, adjoint 10 after it) and
    // reaches h1 at + hop2(SER) = 171.670 µs with nothing queued before it anywhere.
    // Recovery 1: index 11 is beyond the highest seen + 1 (10), so h1 sends at once one
    // loss packet naming [10, 11) (h1's NIC is idle: its last frame, ack 6, left at
    // 146.998 µs). It crosses in hop2(CTRL) = 1.894 µs, reaching h0 at 173.564 µs; h0's NIC
    // is idle (adjoint 11 ended at 11 P + 5 CTRL + SER + 2 CTRL = 160.128 µs, behind echo
    // 6), so data 10 is resent at once and reaches h1 hop2(SER) later, at 198.786 µs,
    // alone on both links (ack 7 crosses the other way): the message is complete.
    let recs = twelve_packets_losing(10);
    let d11 = when(&recs, 0, TraceEvent::Tx, |f| data(f, 11, false));
    assert_eq!(d11, burst_start(11));
    assert_eq!(d11, 146_448_000);
    let loss = d11 + hop2(SER);
    assert_eq!(losses(&recs, 1), vec![(loss, 10, 1)], "one loss packet, for data 10 only, when data 11 arrives");
    assert_eq!(loss, 171_670_000);
    assert_eq!(when(&recs, 0, TraceEvent::Tx, |f| data(f, 10, true)), loss + hop2(CTRL));
    let resent = when(&recs, 1, TraceEvent::Arrive, |f| data(f, 10, true));
    assert_eq!(resent, loss + hop2(CTRL) + hop2(SER));
    assert_eq!(resent, 198_786_000);
    assert_eq!(took(&recs, 0), resent);
}

#[test]
fn recovery_2_two_epochs_without_data_ask_for_the_lowest_missing_packet() {
    // The same message, its last packet (data 11) lost: no later packet shows a gap. Data
    // 10 starts at h0 at burst_start(10) = 10 P + 4 CTRL = 132.768 µs and reaches h1 at
    // 157.990 µs; echo 5 follows it and closes epoch 5 (which had data 9 and 10) at
    // 158.662 µs, when h1 sends ack 6. h0's NIC is idle by then (data 11 and adjoint 11
    // ended at burst_start(11) + P = 159.456 µs), and from here on the acknowledgements
    // and echoes ping-pong alone on idle links, hop2(CTRL) each way: ack 6 reaches h0 at
    // 160.556 µs, echo 6 closes epoch 6 at 162.450 µs (no data: first idle epoch), ack 7
    // and echo 7 close epoch 7 at 166.238 µs (no data: second idle epoch). Recovery 2
    // sends the only active flow a loss packet for its lowest missing packet, data 11, at
    // that instant, before ack 8 (which leaves CTRL later). It reaches h0 at 168.132 µs,
    // h0's NIC is idle, data 11 is resent and reaches h1 at 193.354 µs.
    let recs = twelve_packets_losing(11);
    let d10 = when(&recs, 1, TraceEvent::Arrive, |f| data(f, 10, false));
    assert_eq!(d10, burst_start(10) + hop2(SER));
    let closes = |n: u32| when(&recs, 1, TraceEvent::Arrive, |f| matches!(f, Frame::EpochEcho { epoch, .. } if *epoch == n));
    assert_eq!(closes(5), d10 + CTRL);
    assert_eq!((closes(6), closes(7)), (closes(5) + 2 * hop2(CTRL), closes(5) + 4 * hop2(CTRL)));
    let loss = closes(7);
    assert_eq!(losses(&recs, 1), vec![(loss, 11, 1)], "one loss packet, for data 11, at the second idle epoch's end");
    assert_eq!(loss, 166_238_000);
    let resent = when(&recs, 1, TraceEvent::Arrive, |f| data(f, 11, true));
    assert_eq!(resent, loss + hop2(CTRL) + hop2(SER));
    assert_eq!(resent, 193_354_000);
    assert_eq!(took(&recs, 0), resent);
}

#[test]
fn pause_hand_over_a_finished_active_flow_drives_the_paused_one() {
    // h0 → h2 (A) and h1 → h2 (B), two packets each, first bursts of one packet, every
    // data packet marked (threshold 0), store-and-forward switch; A starts at 0, B at 17 µs.
    // Every epoch with data has a mark, so the default `pause_end = "unmarked_epoch"` never
    // resumes B: only the hand-over can.
    // A: data A0 reaches h2 at hop2(SER) = 25.222 µs, marked: the receiver has seen a mark.
    // Its D stays 0 (a marked packet adds nothing), so A0 earns no driving packet. Adjoint
    // A0 follows at 25.894 µs and opens epoch 1; ack 1 and echo 1 take 2 hop2(CTRL): the
    // epoch closes at 29.682 µs with one mark (A's D ← max(0 − 1, floor 1) = 1); h2 sends
    // ack 2, then the driving packet that D = 1 allows (limit 2) at 30.354 µs, which
    // reaches h0 at 32.248 µs: A1 leaves then (behind echo 2, which ends at that instant)
    // and, with the port to h2 idle when it gets there (45.034 µs), reaches h2 at
    // 32.248 + 25.222 = 57.470 µs.
    // B: B0 leaves h1 at 17 µs and is ready at the switch at 17 + SER + PROP + LAT =
    // 29.786 µs, when the port to h2 is idle (echo 1 left it at 29.582 µs): it reaches h2
    // at 17 + hop2(SER) = 42.222 µs, marked, while A is active: B is paused, and the pause
    // packet leaves h2 then. B's adjoint and echo 2 queue behind B0 at the switch, so
    // epoch 2 closes at 43.566 µs with B0's mark and no active flow's data: B's D (paused
    // flows keep theirs) ← max(0 − 1, 1) = 1, A's stays 1, and A1 is already asked for:
    // no driving packet.
    // The hand-over: A1 completes A at 57.470 µs. h2 sends A's done packet, and B, the
    // oldest paused flow, becomes active: B0 is its only packet asked for and it has
    // arrived, so D = 1 has room for one: a driving packet with limit 2 leaves behind the
    // done packet at 57.470 + CTRL = 58.142 µs, reaches h1 at + hop2(CTRL) = 60.036 µs, and
    // B1 leaves at once (h1's NIC has been idle since B's adjoint). The port to h2 is idle
    // when B1 is ready there (72.822 µs; echo 3 and adjoint A1 left by 58.714 µs): B1
    // reaches h2 at 60.036 + 25.222 = 85.258 µs.
    let mut net = rack(3, BitsPerSec::gbps(1));
    net.switch.cut_through = false;
    net.switch.ecn = EcnConfig::Step { threshold: Bytes(0), at_dequeue: false };
    let b_start = 17_000_000;
    let recs = traced(polo(net, vec![msg(0, 0, 2, 3000), msg(b_start, 1, 2, 3000)], w(1)), &["h0", "h1", "h2"]);
    all_delivered_once(&recs, 2);
    let (a, b) = (0, 1);
    let of = |f: &Frame, flow: u32| match f {
        Frame::Data { d, .. } | Frame::Adjoint(d) => d.msg.flow == flow,
        Frame::Driving { msg, .. } | Frame::Pause { msg } | Frame::Done { msg } | Frame::Loss { msg, .. } => msg.flow == flow,
        Frame::EpochAck { msg, .. } | Frame::EpochEcho { msg, .. } => msg.flow == flow,
    };
    let a1_sent = hop2(SER) + CTRL + 2 * hop2(CTRL) + CTRL + hop2(CTRL);
    assert_eq!(a1_sent, 32_248_000);
    assert_eq!(when(&recs, 0, TraceEvent::Tx, |f| data(f, 1, false)), a1_sent);
    let pause = when(&recs, 2, TraceEvent::Tx, |f| matches!(f, Frame::Pause { .. }) && of(f, b));
    assert_eq!(pause, b_start + hop2(SER));
    let a_done = when(&recs, 2, TraceEvent::Arrive, |f| data(f, 1, false) && of(f, a));
    assert_eq!(a_done, a1_sent + hop2(SER));
    assert_eq!(a_done, 57_470_000);
    // Before the hand-over B got nothing but the pause packet.
    let to_b: Vec<(u64, Frame)> = frames(&recs, 2, TraceEvent::Tx).into_iter().filter(|(t, f)| of(f, b) && *t <= a_done).collect();
    assert_eq!(to_b.len(), 1, "{to_b:?}");
    let resume = when(&recs, 2, TraceEvent::Tx, |f| matches!(f, Frame::Driving { limit: 2, .. }) && of(f, b));
    assert_eq!(resume, a_done + CTRL);
    assert_eq!(resume, 58_142_000);
    assert_eq!(when(&recs, 1, TraceEvent::Tx, |f| data(f, 1, false)), resume + hop2(CTRL));
    let b1 = when(&recs, 2, TraceEvent::Arrive, |f| data(f, 1, false) && of(f, b));
    assert_eq!(b1, resume + hop2(CTRL) + hop2(SER));
    assert_eq!(b1, 85_258_000);
}
