//! An unloaded message's completion time equals the hand-computed sum of host, NIC, wire
//! and switch delays, for store-and-forward and cut-through.

use super::common::*;
use pl2_sim::dist::DelayDist;
use pl2_sim::units::{BitsPerSec, Duration, SimTime};

const SER: u64 = 123_360; // 1542 B at 100 Gbps, in ps
const PROP: u64 = 100_000; // default link delay
const LAT: u64 = 350_000; // default switch latency
const SEND: u64 = 700_000;
const RECV: u64 = 900_000;

fn completion(frames: u64, cut_through: bool) -> (u64, u64) {
    completion_ring(frames, cut_through, 64)
}

fn completion_ring(frames: u64, cut_through: bool, ring: u32) -> (u64, u64) {
    let mut net = two_hosts_one_switch(BitsPerSec::gbps(100), BitsPerSec::gbps(100));
    net.switch.cut_through = cut_through;
    net.host.tx_ring_frames = ring;
    net.host.send_latency = DelayDist::constant(Duration(SEND));
    net.host.recv_latency = DelayDist::constant(Duration(RECV));
    let mut sim = run(spec(net, vec![list(vec![msg(5_000, 0, 1, frames * 1500)])]), SimTime(u64::MAX / 2));
    sim.finish();
    let r = &sim.drain_records().messages[0];
    (r.finish.unwrap().0 - r.start.0, r.ideal.0)
}

#[test]
fn store_and_forward_single_and_multi_frame() {
    for n in [1u64, 10] {
        // Send path, first frame on the uplink, propagation, the switch waits for the
        // last bit, pipeline, then n frames on the downlink, propagation, receive path.
        let expect = SEND + SER + PROP + LAT + n * SER + PROP + RECV;
        let (got, ideal) = completion(n, false);
        assert_eq!(got, expect, "{n} frames");
        assert_eq!(ideal, expect, "ideal time of {n} frames");
    }
}

#[test]
fn cut_through_single_and_multi_frame() {
    for n in [1u64, 10] {
        // The switch forwards from the first bit: the uplink serialisation overlaps.
        let expect = SEND + PROP + LAT + n * SER + PROP + RECV;
        let (got, ideal) = completion(n, true);
        assert_eq!(got, expect, "{n} frames");
        assert_eq!(ideal, expect);
    }
}

#[test]
fn faster_output_than_input_falls_back_to_store_and_forward() {
    let mut net = two_hosts_one_switch(BitsPerSec::gbps(25), BitsPerSec::gbps(100));
    net.switch.cut_through = true;
    let mut sim = run(spec(net, vec![list(vec![msg(0, 0, 1, 1500)])]), SimTime(u64::MAX / 2));
    sim.finish();
    let r = &sim.drain_records().messages[0];
    let ser25 = 4 * SER;
    assert_eq!(r.finish.unwrap().0, ser25 + PROP + LAT + SER + PROP);
}

#[test]
fn a_small_transmit_ring_paces_the_sender_and_the_ideal_time_knows_it() {
    // Ring of 1: each frame is handed over when the NIC starts the previous one, and
    // reaches the NIC a send path (700 ns > one frame's 123 ns) later, so frame i starts
    // at (i + 1)·SEND; the last one then crosses the switch store-and-forward alone.
    let n = 10u64;
    let expect = n * SEND + SER + PROP + LAT + SER + PROP + RECV;
    assert_eq!(completion_ring(n, false, 1), (expect, expect));
    // Ring of 2: frames leave in back-to-back pairs, pair k at (k + 1)·SEND; the last
    // frame (9) starts at 5·SEND + SER and meets the switch's output as frame 8 leaves it.
    let expect = 5 * SEND + 3 * SER + 2 * PROP + LAT + RECV;
    assert_eq!(completion_ring(n, false, 2), (expect, expect));
}
