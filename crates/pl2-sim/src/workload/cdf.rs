//! [`SizeCdf`]: an empirical message-size distribution, given as points
//! `(size_bytes, cumulative_probability)`, and how pl2 samples it.
//!
//! # Sampling rule
//!
//! Points `(s_0, p_0) .. (s_m, p_m)` have non-decreasing sizes and probabilities and
//! `p_m = 1`. A draw takes `u` uniform in [0, 1), then:
//!
//! * if `u < p_0`, the size is `s_0` (so a first point with `p_0 > 0` is a point mass:
//!   sizes below it are `s_0` with probability `p_0`);
//! * otherwise it finds the step `p_{i-1} <= u < p_i` and interpolates linearly in size,
//!   `x = s_{i-1} + (u - p_{i-1}) / (p_i - p_{i-1}) * (s_i - s_{i-1})`, i.e. `x` is
//!   uniform on `[s_{i-1}, s_i)` within the step;
//! * the message size is `x` rounded to the nearest integer (halves up), at least 1.
//!
//! [`SizeCdf::mean_bytes`] and [`SizeCdf::mean_wire_bytes`] are exact expectations of
//! this rule (for a continuous `u`): within a step the rounded size `n` has probability
//! proportional to the length of `[n - 0.5, n + 0.5)` inside `[s_{i-1}, s_i)`, so each
//! step is one closed-form sum (`wire_sum.rs`) and the cost is O(number of points).
//!
//! Homa samples the same tables as a *step* function (every `u` in a step takes the
//! step's upper size), and the mean on a Homa file's first line is that rule's mean.
//! Interpolating moves each step's mass from its upper size to the middle of the step on
//! average, so pl2's means are lower: by 1.3 % (W3), 1.4 % (W5), 3.9 % (W2) and 4.7 %
//! (W4). W1's mean stays 185.0 B: its steps are 1 B wide and 99 % of its mean comes from
//! the Pareto tail (`cdf_parse.rs`), which Homa draws continuously, not in steps.

use super::wire_sum::{PayloadBytes, SizeFn, WireBytes};
use super::WorkloadError;
use crate::framing::{Framing, L4Headers};
use crate::rng::SimRng;

/// An empirical message-size distribution; see the module documentation for how it is
/// sampled.
#[derive(Clone, Debug, PartialEq)]
pub struct SizeCdf {
    /// Where the points came from (file path or built-in name), for messages.
    source: String,
    /// `(size_bytes, cumulative_probability)`: sizes and probabilities non-decreasing,
    /// the last probability exactly 1 and no point after the first that reaches 1.
    points: Vec<(f64, f64)>,
    /// The mean the file states (Homa formats), in bytes.
    stated_mean_bytes: Option<f64>,
}

/// Tolerance on "the last probability is 1" (files print 1, 1.0, 100 or 1.000000).
pub(crate) const LAST_PROB_TOLERANCE: f64 = 1e-9;

/// Largest size a point may have (1 TiB): keeps the exact integer sums of
/// `wire_sum.rs` far from overflowing `u128`.
const MAX_SIZE_BYTES: f64 = (1u64 << 40) as f64;

/// Why a list of points is not a CDF: which point, what is wrong, what to do.
pub(crate) struct PointProblem {
    pub index: usize,
    pub problem: String,
    pub fix: String,
}

/// Checks the shape of a CDF's points (ranges are checked by the parser, which knows
/// the file's units): non-empty, sizes and probabilities in range and non-decreasing,
/// last probability 1.
pub(crate) fn check_points(points: &[(f64, f64)]) -> Result<(), PointProblem> {
    let Some(&(_, last_p)) = points.last() else {
        return Err(PointProblem {
            index: 0,
            problem: "no (size, probability) points".into(),
            fix: "give at least one point; the last must have probability 1".into(),
        });
    };
    for (i, &(s, p)) in points.iter().enumerate() {
        let bad = |problem: String, fix: &str| {
            Err(PointProblem {
                index: i,
                problem,
                fix: fix.into(),
            })
        };
        if !(s.is_finite() && (0.0..=MAX_SIZE_BYTES).contains(&s)) {
            return bad(
                format!("size {s} is not a number of bytes in [0, 2^40]"),
                "sizes are bytes, e.g. 1500; messages above 1 TiB are not supported",
            );
        }
        if !(p.is_finite() && (0.0..=1.0).contains(&p)) {
            return bad(
                format!("probability {p} is outside [0, 1]"),
                "write cumulative probabilities in [0, 1]",
            );
        }
        if i > 0 && s < points[i - 1].0 {
            let prev = points[i - 1].0;
            return bad(
                format!("size {s} is smaller than the previous size {prev}"),
                "sort the points by size",
            );
        }
        if i > 0 && p < points[i - 1].1 {
            let prev = points[i - 1].1;
            return bad(
                format!("probability {p} is smaller than the previous {prev}"),
                "cumulative probabilities must not decrease",
            );
        }
    }
    if (last_p - 1.0).abs() > LAST_PROB_TOLERANCE {
        return Err(PointProblem {
            index: points.len() - 1,
            problem: format!("the last cumulative probability is {last_p}, not 1"),
            fix: "the CDF must cover every message: end with a point `<largest size> 1`".into(),
        });
    }
    Ok(())
}

/// The sizes a step `[a, b)` can round to: `lo ..= hi`. A point mass (`a == b`) gives
/// `round(a)` only.
fn step_range(a: f64, b: f64) -> (u64, u64) {
    let lo = (a + 0.5).floor() as u64;
    let hi = if b > a {
        ((b + 0.5).ceil() as u64 - 1).max(lo)
    } else {
        lo
    };
    (lo, hi)
}

/// `(b - a) * E[f(round(X))]` for `X` uniform on `[a, b)`, `a < b`: each integer `n`
/// weighs the length of `[n - 0.5, n + 0.5)` inside `[a, b)`.
fn step_integral(a: f64, b: f64, f: &impl SizeFn) -> f64 {
    let (lo, hi) = step_range(a, b);
    if lo == hi {
        return f.at(lo) as f64 * (b - a);
    }
    let w_lo = lo as f64 + 0.5 - a;
    let w_hi = b - (hi as f64 - 0.5);
    let interior = (f.prefix(hi - 1) - f.prefix(lo)) as f64;
    f.at(lo) as f64 * w_lo + f.at(hi) as f64 * w_hi + interior
}

impl SizeCdf {
    /// A distribution from `(size_bytes, cumulative_probability)` points. Errors name
    /// `source_name` and the point (counted from 1).
    pub fn from_points(
        points: Vec<(f64, f64)>,
        source_name: &str,
    ) -> Result<SizeCdf, WorkloadError> {
        check_points(&points).map_err(|e| WorkloadError::File {
            file: source_name.into(),
            problem: format!("point {}: {}", e.index + 1, e.problem),
            fix: e.fix,
        })?;
        Ok(SizeCdf::from_checked(points, source_name, None))
    }

    /// Every message is `bytes` long (at least 1).
    pub fn constant(bytes: u64) -> SizeCdf {
        let name = format!("constant {bytes} B");
        SizeCdf::from_checked(vec![(bytes.max(1) as f64, 1.0)], &name, None)
    }

    /// Builds from points that passed [`check_points`]: snaps the last probability to 1
    /// and drops points after the first that reaches 1 (they carry no probability).
    pub(crate) fn from_checked(
        mut points: Vec<(f64, f64)>,
        source_name: &str,
        stated_mean_bytes: Option<f64>,
    ) -> SizeCdf {
        if let Some(last) = points.last_mut() {
            last.1 = 1.0;
        }
        let first_full = points
            .iter()
            .position(|&(_, p)| p >= 1.0)
            .unwrap_or(points.len() - 1);
        points.truncate(first_full + 1);
        points[first_full].1 = 1.0;
        SizeCdf {
            source: source_name.into(),
            points,
            stated_mean_bytes,
        }
    }

    /// File path or built-in name the distribution came from.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The points `(size_bytes, cumulative_probability)`.
    pub fn points(&self) -> &[(f64, f64)] {
        &self.points
    }

    /// The mean written on a Homa file's first line (bytes), if any. It is the mean of
    /// Homa's step sampling, not of pl2's rule; use [`SizeCdf::mean_bytes`] for loads.
    pub fn stated_mean_bytes(&self) -> Option<f64> {
        self.stated_mean_bytes
    }

    /// One message size in bytes (at least 1), by the rule in the module documentation.
    pub fn sample(&self, rng: &mut SimRng) -> u64 {
        let u = rng.uniform();
        let i = self.points.partition_point(|&(_, p)| p <= u);
        if i == 0 {
            return step_range(self.points[0].0, self.points[0].0).0.max(1);
        }
        // The last probability is 1 > u, so `i` indexes a point and p_{i-1} <= u < p_i.
        let (a, pa) = self.points[i - 1];
        let (b, pb) = self.points[i];
        let x = a + (u - pa) / (pb - pa) * (b - a);
        let (lo, hi) = step_range(a, b);
        ((x + 0.5).floor() as u64).clamp(lo, hi).max(1)
    }

    /// `E[f(size)]` under the sampling rule, exactly.
    fn expect(&self, f: &impl SizeFn) -> f64 {
        let (s0, p0) = self.points[0];
        let mut total = p0 * f.at(step_range(s0, s0).0) as f64;
        for w in self.points.windows(2) {
            let ((a, pa), (b, pb)) = (w[0], w[1]);
            if pb > pa {
                total += if b > a {
                    (pb - pa) / (b - a) * step_integral(a, b, f)
                } else {
                    (pb - pa) * f.at(step_range(a, a).0) as f64
                };
            }
        }
        total
    }

    /// The exact mean message size in bytes under the sampling rule (not the mean a file
    /// states on its first line).
    pub fn mean_bytes(&self) -> f64 {
        self.expect(&PayloadBytes)
    }

    /// The exact mean bytes a message occupies on the wire: a message of `s` bytes is
    /// `ceil(s / P)` frames (`P = framing.max_payload(l4, mtu_bytes)`), all full but the
    /// last, each costing `framing.wire_bytes` (headers, padding, preamble, IFG).
    pub fn mean_wire_bytes(
        &self,
        framing: Framing,
        l4: L4Headers,
        mtu_bytes: u64,
    ) -> Result<f64, WorkloadError> {
        let wire = WireBytes::new(framing, l4, mtu_bytes).ok_or_else(|| {
            WorkloadError::param(
                "mtu",
                format!("{mtu_bytes} B"),
                format!(
                    "leaves no payload after the {} B of L3/L4 headers",
                    l4.bytes()
                ),
                "use the IP MTU of the network, e.g. 1500",
            )
        })?;
        Ok(self.expect(&wire))
    }

    /// The largest size the sampler can return, in bytes.
    pub fn max_bytes(&self) -> u64 {
        let n = self.points.len();
        let top = self.points[n - 1].0;
        let below = if n == 1 { top } else { self.points[n - 2].0 };
        step_range(below, top).1.max(1)
    }

    /// The distribution of a message given that its size is at most `max_bytes`: the
    /// points below `max_bytes + 0.5` (the sizes that round to at most `max_bytes`), a
    /// point cut by interpolation there, and probabilities rescaled to end at 1. Errors
    /// when no message is that small.
    pub fn truncated(&self, max_bytes: u64) -> Result<SizeCdf, WorkloadError> {
        let name = format!("{} truncated to {max_bytes} B", self.source);
        let nothing_left = || {
            WorkloadError::param(
                "max_bytes",
                max_bytes,
                format!("no message of {} is that small", self.source),
                format!(
                    "use a maximum of at least {} B",
                    step_range(self.points[0].0, self.points[0].0).0.max(1)
                ),
            )
        };
        if max_bytes == 0 {
            return Err(nothing_left());
        }
        if max_bytes >= self.max_bytes() {
            return Ok(SizeCdf {
                source: name,
                ..self.clone()
            });
        }
        let cut = max_bytes as f64 + 0.5;
        let keep = self.points.partition_point(|&(s, _)| s < cut);
        if keep == 0 {
            return Err(nothing_left());
        }
        let mut points = self.points[..keep].to_vec();
        let (a, pa) = self.points[keep - 1];
        if let Some(&(b, pb)) = self.points.get(keep) {
            points.push((cut, pa + (cut - a) / (b - a) * (pb - pa)));
        }
        let mass = points.last().map_or(0.0, |p| p.1);
        if mass <= 0.0 {
            return Err(nothing_left());
        }
        for p in &mut points {
            p.1 = (p.1 / mass).min(1.0);
        }
        Ok(SizeCdf::from_checked(points, &name, None))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `E[f(size)]` by visiting every integer size of every step (slow, independent).
    fn brute_expect(cdf: &SizeCdf, f: impl Fn(u64) -> f64) -> f64 {
        let (s0, p0) = cdf.points()[0];
        let mut total = p0 * f(((s0 + 0.5).floor() as u64).max(1));
        for w in cdf.points().windows(2) {
            let ((a, pa), (b, pb)) = (w[0], w[1]);
            if pb <= pa {
                continue;
            }
            if b == a {
                total += (pb - pa) * f(((a + 0.5).floor() as u64).max(1));
                continue;
            }
            let mut n = (a + 0.5).floor() as u64;
            while (n as f64) - 0.5 < b {
                let overlap = ((n as f64 + 0.5).min(b) - (n as f64 - 0.5).max(a)).max(0.0);
                total += (pb - pa) * overlap / (b - a) * f(n.max(1));
                n += 1;
            }
        }
        total
    }

    fn table() -> SizeCdf {
        let pts = vec![
            (0.0, 0.0),
            (3.0, 0.1),
            (3.0, 0.2),
            (10.5, 0.2),
            (40.2, 0.7),
            (3000.0, 1.0),
        ];
        SizeCdf::from_points(pts, "test").unwrap()
    }

    #[test]
    fn constant_wire_bytes_match_a_hand_count() {
        let udp = L4Headers::Udp;
        let f = Framing::ethernet(true);
        // 14 Ethernet + 4 tag + 28 IPv4/UDP + 185 payload + 4 FCS = 235, + 8 preamble + 12 IFG.
        assert_eq!(
            SizeCdf::constant(185)
                .mean_wire_bytes(f, udp, 1500)
                .unwrap(),
            255.0
        );
        // 3000 B = 1472 + 1472 + 56: two 1542 B frames and one of 56 + 70 = 126 B.
        assert_eq!(
            SizeCdf::constant(3000)
                .mean_wire_bytes(f, udp, 1500)
                .unwrap(),
            3210.0
        );
        // 1 B pads to a 64 B frame: 84 B on the wire.
        assert_eq!(
            SizeCdf::constant(1).mean_wire_bytes(f, udp, 1500).unwrap(),
            84.0
        );
        assert_eq!(SizeCdf::constant(185).mean_bytes(), 185.0);
        assert!(SizeCdf::constant(1).mean_wire_bytes(f, udp, 20).is_err());
    }

    #[test]
    fn exact_means_match_summation_over_every_size() {
        let cdf = table();
        let wire = WireBytes::new(Framing::default(), L4Headers::Udp, 1500).unwrap();
        let want = brute_expect(&cdf, |n| n as f64);
        assert!(
            (cdf.mean_bytes() - want).abs() < 1e-9 * want,
            "{} vs {want}",
            cdf.mean_bytes()
        );
        let want = brute_expect(&cdf, |n| wire.at(n) as f64);
        let got = cdf
            .mean_wire_bytes(Framing::default(), L4Headers::Udp, 1500)
            .unwrap();
        assert!((got - want).abs() < 1e-9 * want, "{got} vs {want}");
    }

    #[test]
    fn sampling_stays_in_range_and_hits_point_masses() {
        let cdf = table();
        let mut rng = SimRng::stream(1, "cdf");
        let n = 100_000;
        let samples: Vec<u64> = (0..n).map(|_| cdf.sample(&mut rng)).collect();
        assert!(samples.iter().all(|&s| (1..=3000).contains(&s)));
        let threes = samples.iter().filter(|&&s| s == 3).count() as f64 / n as f64;
        // Mass at 3: the point mass 0.1 plus a sixth of the first step's 0.1 ([2.5, 3)).
        assert!((threes - (0.1 + 0.1 / 6.0)).abs() < 0.005, "{threes}");
        assert!(
            !samples.iter().any(|&s| (4..=10).contains(&s)),
            "the step 3..10.5 has no mass"
        );
    }

    #[test]
    fn truncation_is_the_conditional_distribution() {
        let cdf = table();
        let t = cdf.truncated(100).unwrap();
        assert_eq!(t.max_bytes(), 100);
        let mut rng = SimRng::stream(2, "trunc");
        assert!((0..50_000).all(|_| t.sample(&mut rng) <= 100));
        // Exactly: E[size | size <= 100] from the untruncated rule.
        let mass = brute_expect(&cdf, |n| if n <= 100 { 1.0 } else { 0.0 });
        let sum = brute_expect(&cdf, |n| if n <= 100 { n as f64 } else { 0.0 });
        assert!((t.mean_bytes() - sum / mass).abs() < 1e-9 * t.mean_bytes());
        assert_eq!(cdf.truncated(5000).unwrap().mean_bytes(), cdf.mean_bytes());
        assert!(cdf.truncated(0).is_err());
        let big = SizeCdf::from_points(vec![(500.0, 0.0), (900.0, 1.0)], "big").unwrap();
        let err = big.truncated(100).unwrap_err().to_string();
        assert!(
            err.contains("max_bytes = 100") && err.contains("at least 500"),
            "{err}"
        );
    }

    #[test]
    fn from_points_rejects_non_cdfs() {
        let bad = [
            vec![],
            vec![(10.0, 0.5), (5.0, 1.0)],
            vec![(10.0, 0.5), (20.0, 0.4), (30.0, 1.0)],
            vec![(10.0, 0.5), (20.0, 0.9)],
            vec![(10.0, -0.1), (20.0, 1.0)],
            vec![(f64::NAN, 0.1), (20.0, 1.0)],
            vec![(10.0, 0.1), (2e12, 1.0)],
        ];
        for pts in bad {
            assert!(SizeCdf::from_points(pts.clone(), "x").is_err(), "{pts:?}");
        }
        let trailing = SizeCdf::from_points(vec![(10.0, 1.0), (20.0, 1.0)], "x").unwrap();
        assert_eq!(trailing.max_bytes(), 10);
    }
}
