//! Unscheduled levels and cut-offs from a workload's message-size distribution, computed
//! as the Homa simulator's estimator does (`WorkloadEstimator.cc:16-294`,
//! `PriorityResolver.cc:124-176`, with `homaTransportConfig.ini`'s
//! `unschedPrioResolutionMode = STATIC_CBF_GRADUATED`, weight 1, `cbfCapMsgSize =
//! boostTailBytesPrio = RTTbytes`, `accountForGrantTraffic = true`). The scenario layer
//! calls [`from_workload`] and passes the result in as [`super::HomaConfig`] fields.
//!
//! 1. The distribution is read as steps: each point's size carries the probability
//!    step up to it (the simulator's step sampling). pl2 samples by interpolating within
//!    steps (`workload/cdf.rs`); the cut-offs follow the simulator regardless.
//! 2. Every size is cut into packets ([`super::layout`]); each packet adds probability ×
//!    its wire bytes under "bytes of the message left before it", except packets past
//!    the first RTTbytes of wire bytes with at least RTTbytes still to come (the middle
//!    of long messages, sent at scheduled levels). Grants (one per scheduled packet)
//!    count at remaining size 0. The cumulative sum, normalised, is the CBF.
//! 3. With `P` unscheduled levels, cut-off `j` is the first remaining size whose CBF
//!    reaches `(j + 1) / P`, skipping a size equal to the previous cut-off: each level
//!    carries about the same bytes.
//!
//! The level split is the simulator's per-workload setting for W1-W5
//! (`adaptiveSchedPrioLevels`, `ini:95-262`); any other distribution gets pl2's rule:
//! unscheduled levels = 8 × the unscheduled share of the CBF's wire bytes (grants
//! included), rounded, within 1..7.
//!
//! W1: the simulator's estimator appends its own generalized-Pareto tail to the table
//! (`WorkloadEstimator.cc:104-129`), finer than pl2's sampling table, and its cut-offs
//! are computed on that; [`from_workload`] does the same for the built-in `w1`, so its
//! cut-offs equal the simulator's.

use super::config::LEVELS;
use super::layout::Layout;
use crate::workload::SizeCdf;
use std::collections::BTreeMap;

/// Levels and cut-offs for one workload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Split {
    pub unscheduled_levels: u8,
    pub scheduled_levels: u8,
    /// Bytes left to send, one per boundary between unscheduled levels.
    pub cutoffs: Vec<u64>,
}

/// The simulator's scheduled levels for the built-in W1-W5 (`ini:95-262`).
pub fn builtin_sched_levels(name: &str) -> Option<u8> {
    match name {
        "w1" => Some(1),
        "w2" => Some(3),
        "w3" => Some(4),
        "w4" | "w5" => Some(7),
        _ => None,
    }
}

/// The simulator's W1 estimator table: the file's points, then its Pareto tail in 1000
/// probability steps up to 0.999, sizes rounded, repeats merged, the last probability 1
/// (`WorkloadEstimator.cc:104-129`).
pub fn homa_w1_table(table: &[(u64, f64)]) -> Vec<(u64, f64)> {
    let (k, sigma, max_prob) = (0.348238, 214.476, 0.999);
    let mut v = table.to_vec();
    let Some(&(size_off, prob_off)) = table.last() else { return v };
    let incr = (max_prob - prob_off) / 1000.0;
    let mut prob = prob_off + incr;
    while prob <= max_prob {
        let size = (size_off as f64 + (((1.0 - prob_off) / (1.0 - prob)).powf(k) - 1.0) * sigma / k).round() as u64;
        match v.last_mut() {
            Some(last) if last.0 == size => last.1 = prob,
            _ => v.push((size, prob)),
        }
        prob += incr;
    }
    if let Some(last) = v.last_mut() {
        last.1 = 1.0;
    }
    v
}

/// The remaining-size CBF (step 2): `(bytes left, cumulative share)`, increasing.
pub fn remaining_size_cbf(points: &[(u64, f64)], l: &Layout) -> Vec<(u64, f64)> {
    let cap = l.rtt_wire;
    let grant_wire = l.framing.wire_bytes(l.l4_sched, 0);
    let mut by_left: BTreeMap<u64, f64> = BTreeMap::new();
    let (mut total, mut grants, mut prev) = (0.0, 0.0, 0.0);
    for &(size, cum) in points {
        let prob = cum - prev;
        prev = cum;
        if size == 0 || prob <= 0.0 {
            continue;
        }
        let n = l.packets(size);
        let wires: u64 = (0..n).map(|i| l.wire(l.pkt(size, i))).sum();
        let (mut sent_wire, mut to_send, mut left) = (0, wires, size);
        for i in 0..n {
            let p = l.pkt(size, i);
            let w = l.wire(p);
            if p.scheduled {
                grants += prob * grant_wire as f64;
            }
            if !(sent_wire >= cap && to_send >= cap) {
                *by_left.entry(left).or_default() += prob * w as f64;
                total += prob * w as f64;
            }
            sent_wire += w;
            to_send -= w;
            left -= p.len;
        }
    }
    total += grants;
    let mut acc = grants / total;
    let mut out = vec![(0, acc)];
    for (left, b) in by_left {
        acc += b / total;
        out.push((left, acc));
    }
    out
}

/// Cut-offs for `levels` unscheduled levels (step 3); fewer when the CBF has too few
/// distinct sizes.
pub fn cutoffs(cbf: &[(u64, f64)], levels: u8) -> Vec<u64> {
    let step = 1.0 / f64::from(levels);
    let (mut out, mut i, mut prev) = (Vec::new(), 0, None);
    let mut prob = step;
    while prob + 1e-6 < 1.0 {
        while i < cbf.len() {
            let (size, cum) = cbf[i];
            if Some(size) == prev {
                i += 1;
                continue;
            }
            if cum >= prob {
                out.push(size);
                prev = Some(size);
                break;
            }
            i += 1;
        }
        prob += step;
    }
    out
}

/// The step points of a distribution: sizes rounded to bytes, at least 1.
fn steps(cdf: &SizeCdf) -> Vec<(u64, f64)> {
    cdf.points().iter().map(|&(s, p)| (((s + 0.5).floor() as u64).max(1), p)).collect()
}

/// Levels and cut-offs for messages drawn from `cdf` (`builtin`: its built-in name, if
/// any), on a network with layout `l`. `levels` fixes the split (unscheduled,
/// scheduled) when the configuration sets it.
pub fn from_workload(cdf: &SizeCdf, builtin: Option<&str>, l: &Layout, levels: Option<(u8, u8)>) -> Split {
    let points = match builtin {
        Some("w1") => {
            let table: Vec<(u64, f64)> = steps(cdf).into_iter().take_while(|&(s, _)| s <= 15).collect();
            homa_w1_table(&table)
        }
        _ => steps(cdf),
    };
    let cbf = remaining_size_cbf(&points, l);
    let (u, s) = levels.unwrap_or_else(|| {
        let s = match builtin.and_then(builtin_sched_levels) {
            Some(s) => s,
            None => LEVELS - unscheduled_share_levels(&points, l),
        };
        (LEVELS - s, s)
    });
    let cutoffs = if u > 1 { cutoffs(&cbf, u) } else { Vec::new() };
    let u = if levels.is_some() { u } else { cutoffs.len() as u8 + 1 };
    Split { unscheduled_levels: u, scheduled_levels: s, cutoffs }
}

/// pl2's rule for a distribution the simulator has no setting for: 8 × the unscheduled
/// share of all wire bytes (grants included), rounded, within 1..7.
fn unscheduled_share_levels(points: &[(u64, f64)], l: &Layout) -> u8 {
    let grant_wire = l.framing.wire_bytes(l.l4_sched, 0) as f64;
    let (mut unsched, mut total, mut prev) = (0.0, 0.0, 0.0);
    for &(size, cum) in points {
        let prob = cum - prev;
        prev = cum;
        let nu = l.unsched_packets(size);
        for i in 0..l.packets(size) {
            let w = l.wire(l.pkt(size, i)) as f64;
            total += prob * w;
            if i < nu {
                unsched += prob * w;
            } else {
                total += prob * grant_wire;
            }
        }
    }
    let share = if total > 0.0 { unsched / total } else { 1.0 };
    ((f64::from(LEVELS) * share).round() as u8).clamp(1, LEVELS - 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::framing::Framing;
    use crate::transport::homa::HomaHeaders;

    /// The simulator's network: untagged Ethernet, IPv4 + UDP + Homa headers, 10,000 B.
    fn layout() -> Layout {
        Layout::new(Framing::ethernet(false), HomaHeaders::Homa, 1500, 10_000)
    }

    /// `homa_cutoffs.py`'s output for the simulator's W1-W5 (the reference notes, A4).
    #[test]
    fn builtin_workloads_give_the_simulators_levels_and_cutoffs() {
        let want: [(&str, u8, &[u64]); 5] = [
            ("w1", 7, &[11, 125, 273, 468, 764, 1275]),
            ("w2", 5, &[269, 366, 512, 1463]),
            ("w3", 4, &[433, 2339, 6756]),
            ("w4", 1, &[]),
            ("w5", 1, &[]),
        ];
        for (name, u, cuts) in want {
            let cdf = SizeCdf::builtin(name).unwrap();
            let s = from_workload(&cdf, Some(name), &layout(), None);
            assert_eq!(s, Split { unscheduled_levels: u, scheduled_levels: 8 - u, cutoffs: cuts.to_vec() }, "{name}");
        }
    }

    #[test]
    fn a_fixed_split_is_kept_and_other_distributions_get_the_share_rule() {
        let w2 = SizeCdf::builtin("w2").unwrap();
        let s = from_workload(&w2, None, &layout(), Some((2, 6)));
        assert_eq!((s.unscheduled_levels, s.scheduled_levels, s.cutoffs.len()), (2, 6, 1));
        // Sizes 100 B and 200 B, half each, all unscheduled: the share rule gives 7
        // unscheduled levels and 1 scheduled. Wire bytes 14 + 58 + 100 + 4 + 20 = 196 and
        // 296: the CBF is (0, 0) (no grants), (100, 98/246 = 0.398), (200, 1). Levels
        // 1/7, 2/7 find 100 then 200; from 3/7 on only 200 is left, a repeat: two
        // cut-offs, so 3 unscheduled levels are used and the scheduled one stays.
        let cdf = SizeCdf::from_points(vec![(100.0, 0.5), (200.0, 1.0)], "t").unwrap();
        let s = from_workload(&cdf, None, &layout(), None);
        assert_eq!((s.unscheduled_levels, s.scheduled_levels), (3, 1), "{s:?}");
        assert_eq!(s.cutoffs, vec![100, 200]);
    }
}
