//! The trimming queue (NDP's switch; htsim's `CompositeQueue`) against hand-worked
//! timelines: a 10 Gb/s sender bursts ten 1500 B frames into a switch whose port towards
//! the receiver runs at 1 Gb/s, so the port's data FIFO (3 frames, counting the one on
//! the wire) fills after the third frame and every later arrival meets a full FIFO.
//!
//! Times, with tagged Ethernet (1542 B on the wire per full frame, 84 B per trimmed
//! header: 18 B of Ethernet and tag, 4 B of FCS, padded to 64 B, plus 20 B of preamble and
//! gap), store-and-forward and a link delay d:
//! - frame i reaches the switch at a_i = (i + 1) × 1,233,600 ps + d (10 Gb/s);
//! - frame 0 is on the 1 Gb/s wire from a_0 for 12,336,000 ps; by then frames 1..9 have all
//!   arrived (a_9 − a_0 = 11,102,400 ps);
//! - the header FIFO goes first: 7 headers of 672,000 ps each, then the two full frames
//!   still queued, 12,336,000 ps each.

use super::common::*;
use pl2_sim::config::{HeaderOverflow, QueueDiscipline, QueueLimit, TrimmingConfig};
use pl2_sim::dist::DelayDist;
use pl2_sim::metrics::{DropReason, TraceEvent};
use pl2_sim::packet::flags;
use pl2_sim::sim::{Simulation, TraceConfig, TransportConfig};
use pl2_sim::transport::raw::RawConfig;
use pl2_sim::units::{BitsPerSec, Duration, SimTime};

const SER_10G: u64 = 1_233_600;
const SER_1G: u64 = 12_336_000;
const HDR_1G: u64 = 672_000;

fn burst(trim_newest: f64, header_limit: Option<QueueLimit>, overflow: HeaderOverflow) -> Simulation {
    let mut net = two_hosts_one_switch(BitsPerSec::gbps(10), BitsPerSec::gbps(1));
    net.switch.latency = DelayDist::constant(Duration::ZERO);
    net.switch.cut_through = false;
    net.switch.queue = QueueDiscipline::Trimming(TrimmingConfig {
        data_limit: QueueLimit::Frames(3),
        header_limit,
        header_prio: 7,
        trim_newest_probability: trim_newest,
        header_overflow: overflow,
    });
    let mut sp = spec(net, vec![list(vec![msg(0, 0, 1, 15_000)])]);
    sp.transport = TransportConfig::Raw(RawConfig { trimmable: true, ..Default::default() });
    sp.metrics.trace = Some(TraceConfig::default());
    run(sp, SimTime(u64::MAX / 2))
}

/// (time, seq, trimmed) of every frame reaching host `h`, in order.
fn arrivals(sim: &mut Simulation, h: u32) -> Vec<(u64, u32, bool)> {
    let t = sim.drain_records().trace;
    t.iter().filter(|r| r.event == TraceEvent::Arrive && r.node == h).map(|r| (r.time.0, r.packet.seq, r.packet.has(flags::TRIMMED))).collect()
}

fn delay() -> u64 {
    pl2_sim::config::LinkConfig::default().delay.0
}

/// The expected arrivals at the receiver: frame 0, the headers of `trimmed` in order,
/// then the full frames `full` in order.
fn timeline(trimmed: &[u32], full: &[u32]) -> Vec<(u64, u32, bool)> {
    let d = delay();
    let mut t = SER_10G + d + SER_1G;
    let mut out = vec![(t + d, 0, false)];
    for &s in trimmed {
        t += HDR_1G;
        out.push((t + d, s, true));
    }
    for &s in full {
        t += SER_1G;
        out.push((t + d, s, false));
    }
    out
}

#[test]
fn a_full_fifo_trims_the_arriving_frame_and_headers_overtake_data() {
    let mut sim = burst(0.0, None, HeaderOverflow::Drop);
    assert_eq!(sim.counters().trims, 7);
    assert_eq!(sim.counters().total_drops(), 0);
    assert_eq!(arrivals(&mut sim, 1), timeline(&[3, 4, 5, 6, 7, 8, 9], &[1, 2]));
}

#[test]
fn trimming_the_newest_queued_frame_keeps_the_arrival() {
    // Frame 3 meets [1, 2] queued behind frame 0: frame 2 (the newest) is cut and 3
    // queued; frame 4 cuts 3, ... frame 9 cuts 8 and stays.
    let mut sim = burst(1.0, None, HeaderOverflow::Drop);
    assert_eq!(sim.counters().trims, 7);
    assert_eq!(arrivals(&mut sim, 1), timeline(&[2, 3, 4, 5, 6, 7, 8], &[1, 9]));
}

#[test]
fn headers_over_the_header_limit_are_dropped_or_returned_once() {
    // Room for 2 headers: 3 and 4 are queued, 5..9 trimmed and then over the limit.
    let mut sim = burst(0.0, Some(QueueLimit::Frames(2)), HeaderOverflow::Drop);
    assert_eq!(sim.counters().trims, 7);
    assert_eq!(sim.counters().drops[DropReason::QueueLimit as usize], 5);
    assert_eq!(arrivals(&mut sim, 1), timeline(&[3, 4], &[1, 2]));

    let mut sim = burst(0.0, Some(QueueLimit::Frames(2)), HeaderOverflow::ReturnToSender);
    assert_eq!(sim.counters().headers_returned, 5);
    assert_eq!(sim.counters().total_drops(), 0);
    // Returned headers go back over the idle 10 Gb/s link at once: the header of frame i
    // leaves the switch at a_i and takes 84 B × 0.8 ns = 67,200 ps.
    let back = arrivals(&mut sim, 0);
    assert_eq!(back.iter().map(|a| (a.1, a.2)).collect::<Vec<_>>(), (5..10).map(|s| (s, true)).collect::<Vec<_>>());
    let d = delay();
    for (i, &(t, seq, _)) in back.iter().enumerate() {
        let a = (u64::from(seq) + 1) * SER_10G + d;
        assert_eq!(t, a + 67_200 + d, "returned header {i}");
    }
}

#[test]
fn untrimmable_frames_over_the_limit_are_dropped() {
    let mut net = two_hosts_one_switch(BitsPerSec::gbps(10), BitsPerSec::gbps(1));
    net.switch.queue = QueueDiscipline::Trimming(TrimmingConfig {
        data_limit: QueueLimit::Bytes(pl2_sim::units::Bytes(3 * 1542)),
        header_limit: None,
        header_prio: 7,
        trim_newest_probability: 0.5,
        header_overflow: HeaderOverflow::Drop,
    });
    net.switch.latency = DelayDist::constant(Duration::ZERO);
    net.switch.cut_through = false;
    let sim = run(spec(net, vec![list(vec![msg(0, 0, 1, 15_000)])]), SimTime(u64::MAX / 2));
    assert_eq!(sim.counters().trims, 0);
    assert_eq!(sim.counters().drops[DropReason::QueueLimit as usize], 7);
}

#[test]
fn bad_trimming_settings_name_the_field_and_the_fix() {
    let bad = |t: TrimmingConfig| {
        let mut net = two_hosts_one_switch(BitsPerSec::gbps(10), BitsPerSec::gbps(1));
        net.switch.queue = QueueDiscipline::Trimming(t);
        Simulation::new(spec(net, vec![list(vec![msg(0, 0, 1, 1500)])])).err().expect("rejected").to_string()
    };
    let ok = TrimmingConfig { data_limit: QueueLimit::Frames(8), header_limit: None, header_prio: 7, trim_newest_probability: 0.5, header_overflow: HeaderOverflow::Drop };
    let e = bad(TrimmingConfig { trim_newest_probability: 1.5, ..ok.clone() });
    assert!(e.contains("switch.queue.trim_newest_probability") && e.contains("0.5"), "{e}");
    let e = bad(TrimmingConfig { data_limit: QueueLimit::Frames(0), ..ok.clone() });
    assert!(e.contains("switch.queue.data_limit") && e.contains("frames = 8"), "{e}");
    let e = bad(TrimmingConfig { header_prio: 9, ..ok });
    assert!(e.contains("switch.queue.header_prio") && e.contains("0..=7"), "{e}");
}
