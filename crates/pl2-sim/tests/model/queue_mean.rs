//! The ports table's time-averaged queue (`mean_queue_bytes`), hand-worked: two
//! back-to-back frames (W = 1542 B on the wire) from a 100 Gbps host into a switch port
//! that sends at 10 Gbps.
//! The port holds the first frame W for one 10 G serialisation S₁₀, the second arrives
//! one 100 G serialisation S₁₀₀ later and waits, so the queue is W for S₁₀₀, 2W for
//! S₁₀ − S₁₀₀, then W for S₁₀: ∫q dt = W(3S₁₀ − S₁₀₀). One window holding it all gives
//! that integral over the window; 50 ns windows (the queue changes in fewer than one in
//! ten of them) give the same integral once each window without a row is filled with the
//! level the row before it ended at (`end_queue_bytes`).

use super::common::*;
use pl2_sim::units::{BitsPerSec, Duration, SimTime};

/// Rows of the switch's port toward h1 (port 3: link 1, s0 → h1) as (window start,
/// max, mean, end).
fn rows(window_ps: u64) -> Vec<(u64, u64, f64, u64)> {
    let net = two_hosts_one_switch(BitsPerSec::gbps(100), BitsPerSec::gbps(10));
    let mut sp = spec(net, vec![list(vec![msg(0, 0, 1, 2 * 1500)])]);
    sp.metrics.window = Duration(window_ps);
    let mut sim = run(sp, SimTime(u64::MAX / 2));
    sim.finish();
    let mut r: Vec<_> = sim
        .drain_records()
        .ports
        .into_iter()
        .filter(|p| p.port == 3)
        .map(|p| (p.window_start.0, p.max_queue_bytes, p.mean_queue_bytes, p.end_queue_bytes))
        .collect();
    r.sort_by_key(|x| x.0);
    r
}

#[test]
fn mean_queue_is_the_exact_time_average() {
    let one = rows(1_000_000_000);
    assert_eq!(one.len(), 1, "one window holds the whole run: {one:?}");
    let (_, max, mean, end) = one[0];
    let w = 1542;
    assert_eq!(max, 2 * w, "the two frames queue together");
    let (s10, s100) = (w * 8 * 100, w * 8 * 10);
    let area = (w * (3 * s10 - s100)) as f64;
    assert_eq!(mean, area / 1e9, "∫q dt = W(3·S10 − S100) over the 1 ms window (the run ends inside it)");
    assert_eq!(end, 0);

    // 50 ns windows: the sum of each window's mean × 50 ns, windows without a row at the
    // level the previous row ended at, is the same integral.
    let win = 50_000u64;
    let fine = rows(win);
    let mut total = 0.0;
    for (i, &(start, _, mean, end)) in fine.iter().enumerate() {
        total += mean * win as f64;
        let next = fine.get(i + 1).map_or(start + win, |x| x.0);
        total += end as f64 * (next - start - win) as f64;
    }
    assert!(fine.len() > 3 && fine.iter().any(|x| x.3 > 0), "the queue spans windows: {fine:?}");
    assert!((total - area).abs() < 1e-6 * area, "windowed integral {total} against {area}");
    assert_eq!(fine.iter().map(|x| x.1).max(), Some(2 * w));
}
