//! M/D/1: Poisson arrivals of fixed-size frames into one output port. The mean wait is
//! ρS/(2(1−ρ)) and P(wait = 0) = 1 − ρ; both are checked with batch means (waits are
//! autocorrelated), 10⁶ frames after a 10⁴-frame warm-up.
//!
//! The sender's link runs at 1 Pbps so that its own queue is negligible (a frame takes
//! 12 ps there against 123 ns at the 100 Gbps bottleneck) and arrivals at the switch
//! are Poisson. The wait of a frame is its completion time minus its ideal time.

use super::common::*;
use pl2_sim::framing::{Framing, L4Headers};
use pl2_sim::rng::SimRng;
use pl2_sim::sim::Source;
use pl2_sim::units::{BitsPerSec, SimTime};
use pl2_sim::workload::{DestChooser, PoissonParams, PoissonSource, SizeCdf};

const S_PS: f64 = 123_360.0;

fn batch_stats(x: &[f64], batches: usize) -> (f64, f64) {
    let n = x.len() / batches;
    let means: Vec<f64> = (0..batches).map(|b| x[b * n..(b + 1) * n].iter().sum::<f64>() / n as f64).collect();
    let m = means.iter().sum::<f64>() / batches as f64;
    let var = means.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (batches - 1) as f64;
    (m, (var / batches as f64).sqrt())
}

fn check(rho: f64) {
    let warm = 10_000usize;
    let n = 1_000_000usize;
    let fast = BitsPerSec(1_000_000_000_000_000);
    let net = two_hosts_one_switch(fast, BitsPerSec::gbps(100));
    let gen = PoissonSource::new(PoissonParams {
        src: 0,
        load: rho * 1e-4,
        nic_rate: fast,
        sizes: SizeCdf::constant(1500),
        dests: DestChooser::Fixed(1),
        start: SimTime(0),
        stop: SimTime((((warm + n) as f64 + 2000.0) * S_PS / rho) as u64),
        framing: Framing::default(),
        l4: L4Headers::None,
        mtu_bytes: 1500,
        thread: u16::MAX,
        priority: 0,
    })
    .unwrap();
    let src = Source::Poisson { gen: Box::new(gen), rng: SimRng::stream(42, "md1"), pending: None, transport: 0, workload: 0 };
    let mut sp = spec(net, vec![src]);
    sp.net.host.tx_ring_frames = 1;
    let mut sim = run(sp, SimTime(u64::MAX / 2));
    let mut recs = sim.drain_records().messages;
    recs.sort_by_key(|r| r.id);
    assert!(recs.len() >= warm + n, "only {} frames", recs.len());
    let waits: Vec<f64> = recs[warm..warm + n]
        .iter()
        .map(|r| (r.finish.unwrap().0 - r.start.0 - r.ideal.0) as f64)
        .collect();
    let (mean, se) = batch_stats(&waits, 100);
    let expect = rho * S_PS / (2.0 * (1.0 - rho));
    eprintln!("M/D/1 ρ={rho}: mean wait {mean:.0} ps (theory {expect:.0}, SE {se:.0})");
    assert!((mean - expect).abs() < 3.0 * se, "ρ={rho}: mean wait {mean:.0} ps, M/D/1 {expect:.0} ± 3×{se:.0}");
    let zeros: Vec<f64> = waits.iter().map(|&w| if w == 0.0 { 1.0 } else { 0.0 }).collect();
    let (p0, se0) = batch_stats(&zeros, 100);
    eprintln!("M/D/1 ρ={rho}: P(wait=0) {p0:.4} (theory {:.4}, SE {se0:.4})", 1.0 - rho);
    assert!((p0 - (1.0 - rho)).abs() < 3.0 * se0, "ρ={rho}: P(wait=0) {p0:.4}, expected {:.4} ± 3×{se0:.4}", 1.0 - rho);
}

#[test]
fn md1_load_0_3() {
    check(0.3);
}

#[test]
fn md1_load_0_6() {
    check(0.6);
}

#[test]
fn md1_load_0_9() {
    check(0.9);
}
