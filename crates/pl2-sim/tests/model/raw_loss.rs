//! Raw Ethernet never resends, so a message that lost a frame is over once its other
//! frames have landed: it is reported unfinished at that moment (not held to the end of
//! the run), and its slot serves the next message.

use super::common::*;
use pl2_sim::dist::DelayDist;
use pl2_sim::sim::FaultSpec;
use pl2_sim::units::{BitsPerSec, Duration, SimTime};

const SER: u64 = 123_360; // 1542 B at 100 Gbps, in ps
const PROP: u64 = 100_000; // default link delay
const LAT: u64 = 350_000; // default switch latency
const SEND: u64 = 700_000;
const RECV: u64 = 900_000;

#[test]
fn a_message_that_lost_a_frame_is_reported_when_its_last_frame_lands() {
    let mut net = two_hosts_one_switch(BitsPerSec::gbps(100), BitsPerSec::gbps(100));
    net.switch.cut_through = false;
    net.host.send_latency = DelayDist::constant(Duration(SEND));
    net.host.recv_latency = DelayDist::constant(Duration(RECV));
    // A: 10 frames at 5 ns, its 4th frame lost on the wire. B: one frame from the same
    // sender to the same receiver, long after A is over.
    let (a_start, b_start) = (5_000, 100_000_000);
    let mut sp = spec(net, vec![list(vec![msg(a_start, 0, 1, 10 * 1500), msg(b_start, 0, 1, 1500)])]);
    sp.faults = vec![FaultSpec::DropNth { flow: 0, seq: 3, times: 1 }];
    let mut sim = run(sp, SimTime(u64::MAX / 2));
    assert_eq!(sim.counters().total_drops(), 1);
    assert_eq!(sim.counters().messages_lost, 1);
    assert_eq!(sim.counters().messages_finished, 1);
    assert_eq!(sim.messages_in_flight(), 0, "the lost message still holds its slot");
    // Reported during the run, before `finish` reports what is left.
    let during = sim.drain_records().messages;
    assert_eq!(during.len(), 2, "{during:?}");
    let (a, b) = (&during[0], &during[1]);
    assert_eq!((a.id, a.finish), (0, None));
    // B took A's slot while the receiver still held A's partial count under it: B's
    // generation starts a fresh count, so B completes in exactly its unloaded time
    // (store-and-forward: send path, uplink, propagation, switch, downlink, propagation,
    // receive path).
    let one_frame = SEND + SER + PROP + LAT + SER + PROP + RECV;
    assert_eq!((b.id, b.start.0, b.finish.map(|f| f.0 - b.start.0)), (1, b_start, Some(one_frame)));
    sim.finish();
    assert!(sim.drain_records().messages.is_empty(), "nothing was left for the end");
}

#[test]
fn without_a_drop_nothing_is_reported_lost() {
    let net = two_hosts_one_switch(BitsPerSec::gbps(100), BitsPerSec::gbps(100));
    let sim = run(spec(net, vec![list(vec![msg(0, 0, 1, 10 * 1500), msg(0, 1, 0, 1)])]), SimTime(u64::MAX / 2));
    assert_eq!((sim.counters().messages_finished, sim.counters().messages_lost), (2, 0));
}
