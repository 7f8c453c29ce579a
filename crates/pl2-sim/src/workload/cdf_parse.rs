//! Reading [`SizeCdf`]s: the three file formats of the published distributions
//! (`data/workloads/README.md`) and the built-in copies compiled into the simulator.
//!
//! * [`CdfFormat::Homa`]: line 1 is the mean size in bytes; every further line is
//!   `size_bytes cumulative_probability` with the probability in [0, 1].
//! * [`CdfFormat::HomaPackets`] (Homa's W5): as `Homa`, but the mean and the sizes count
//!   packets; they are multiplied by [`HOMA_W5_BYTES_PER_PACKET`] = 1442 data bytes per
//!   packet, the conversion Homa used, so W5's sizes are multiples of 1442 B.
//! * [`CdfFormat::Percent`] (the HPCC files): every line is `size_bytes
//!   cumulative_percent` with the percentage in [0, 100]; no mean line.
//!
//! Fields are separated by spaces or tabs; blank lines are skipped. Parsing is strict:
//! every error names the file and line, shows the bad text and says what to write.

use super::cdf::{check_points, SizeCdf, LAST_PROB_TOLERANCE};
use super::WorkloadError;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Data bytes per packet Homa used to turn W5's packet counts into bytes.
pub const HOMA_W5_BYTES_PER_PACKET: u64 = 1442;

/// The names [`SizeCdf::builtin`] accepts.
pub const BUILTIN_NAMES: [&str; 9] = [
    "w1",
    "w2",
    "w3",
    "w4",
    "w5",
    "websearch",
    "fb_hadoop",
    "google_rpc_2008",
    "ali_storage_2019",
];

/// How a size-distribution file is written.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CdfFormat {
    /// Line 1 the mean in bytes, then `size_bytes cumulative_probability`.
    Homa,
    /// Homa's W5 layout: mean and sizes in packets of 1442 data bytes.
    HomaPackets,
    /// `size_bytes cumulative_percent`, no mean line.
    Percent,
}

impl CdfFormat {
    /// Bytes per size unit, the probability scale (1 or 100), and the size unit's name.
    fn units(self) -> (u64, f64, &'static str) {
        match self {
            CdfFormat::Homa => (1, 1.0, "bytes"),
            CdfFormat::HomaPackets => (HOMA_W5_BYTES_PER_PACKET, 1.0, "packets"),
            CdfFormat::Percent => (1, 100.0, "bytes"),
        }
    }
    fn prob_name(self) -> &'static str {
        match self {
            CdfFormat::Percent => "cumulative percent",
            _ => "cumulative probability",
        }
    }
}

/// Generalized Pareto fit of memcached value sizes above 15 B (Atikoglu et al.,
/// SIGMETRICS 2012), the tail Homa's simulator adds to the W1 table: shape `k`.
const W1_TAIL_SHAPE: f64 = 0.348238;
/// Scale `sigma` of the W1 tail, in bytes.
const W1_TAIL_SCALE_BYTES: f64 = 214.476;
/// Tail quantile points per halving of the remaining probability.
const W1_TAIL_POINTS_PER_HALVING: i32 = 8;
/// Halvings tabulated: the table lists the tail down to `(1 - p_15) * 2^-40` ≈ 5e-13.
const W1_TAIL_HALVINGS: i32 = 40;

/// Points parsed from a file, before the completeness check.
struct Parsed {
    points: Vec<(f64, f64)>,
    /// Line number of each point.
    lines: Vec<usize>,
    stated_mean_bytes: Option<f64>,
}

fn line_err(file: &str, line: usize, text: &str, problem: String, fix: &str) -> WorkloadError {
    WorkloadError::Line {
        file: file.into(),
        line,
        problem: format!("`{}`: {problem}", text.trim()),
        fix: fix.into(),
    }
}

fn parse_points(text: &str, format: CdfFormat, file: &str) -> Result<Parsed, WorkloadError> {
    let (unit_bytes, prob_scale, unit) = format.units();
    let prob_name = format.prob_name();
    let mut parsed = Parsed {
        points: vec![],
        lines: vec![],
        stated_mean_bytes: None,
    };
    let mut expect_mean = format != CdfFormat::Percent;
    let mut prev: Option<(f64, f64)> = None;
    for (idx, raw) in text.lines().enumerate() {
        let line = idx + 1;
        let fields: Vec<&str> = raw.split_whitespace().collect();
        if fields.is_empty() {
            continue;
        }
        let err = |problem: String, fix: &str| line_err(file, line, raw, problem, fix);
        if expect_mean {
            expect_mean = false;
            let mean = fields[0]
                .parse::<f64>()
                .ok()
                .filter(|m| m.is_finite() && *m > 0.0);
            match (fields.len(), mean) {
                (1, Some(m)) => parsed.stated_mean_bytes = Some(m * unit_bytes as f64),
                _ => {
                    return Err(err(
                        format!("expected the mean size in {unit} alone on the first line"),
                        "Homa files start with the mean (e.g. `185.0`); \
                         for files without one use format `percent`",
                    ))
                }
            }
            continue;
        }
        if fields.len() != 2 {
            return Err(err(
                format!(
                    "expected 2 fields (size in {unit}, {prob_name}), found {}",
                    fields.len()
                ),
                "write one `size probability` pair per line",
            ));
        }
        let size = fields[0]
            .parse::<f64>()
            .ok()
            .filter(|s| s.is_finite() && *s >= 0.0)
            .ok_or_else(|| {
                err(
                    format!("size {:?} is not a number of {unit} >= 0", fields[0]),
                    "write the size as a plain number, e.g. 1500",
                )
            })?;
        let prob = fields[1]
            .parse::<f64>()
            .ok()
            .filter(|p| (0.0..=prob_scale).contains(p))
            .ok_or_else(|| {
                err(
                    format!(
                        "{prob_name} {:?} is not a number in [0, {prob_scale}]",
                        fields[1]
                    ),
                    if prob_scale == 1.0 {
                        "write probabilities in [0, 1]; for percentages use format `percent`"
                    } else {
                        "write percentages in [0, 100]"
                    },
                )
            })?;
        if let Some((ps, pp)) = prev {
            if size < ps {
                return Err(err(
                    format!("size {size} is smaller than the previous size {ps}"),
                    "sort the lines by size",
                ));
            }
            if prob < pp {
                return Err(err(
                    format!("{prob_name} {prob} is smaller than the previous {pp}"),
                    "a CDF must not decrease; fix or sort the lines",
                ));
            }
        }
        prev = Some((size, prob));
        parsed
            .points
            .push((size * unit_bytes as f64, prob / prob_scale));
        parsed.lines.push(line);
    }
    if parsed.points.is_empty() {
        return Err(WorkloadError::File {
            file: file.into(),
            problem: "no `size probability` lines".into(),
            fix: "check the path and the format (homa, homa_packets or percent)".into(),
        });
    }
    Ok(parsed)
}

impl SizeCdf {
    /// Parses a distribution written in `format`; `source_name` (e.g. the path) names it
    /// in errors.
    pub fn parse(
        text: &str,
        format: CdfFormat,
        source_name: &str,
    ) -> Result<SizeCdf, WorkloadError> {
        let parsed = parse_points(text, format, source_name)?;
        let at_line = |index: usize, problem: String, fix: &str| {
            let line = parsed.lines[index];
            line_err(
                source_name,
                line,
                text.lines().nth(line - 1).unwrap_or(""),
                problem,
                fix,
            )
        };
        let last = parsed.points.len() - 1;
        let (_, scale, _) = format.units();
        let last_prob = parsed.points[last].1 * scale;
        if (last_prob - scale).abs() > LAST_PROB_TOLERANCE * scale {
            let problem = format!(
                "the last {} is {last_prob}, not {scale}",
                format.prob_name()
            );
            let fix = format!(
                "the CDF must cover every message: end with a line `<largest size> {scale}`"
            );
            return Err(at_line(last, problem, &fix));
        }
        check_points(&parsed.points).map_err(|e| at_line(e.index, e.problem, &e.fix))?;
        Ok(SizeCdf::from_checked(
            parsed.points,
            source_name,
            parsed.stated_mean_bytes,
        ))
    }

    /// Reads and parses a distribution file.
    pub fn from_file(path: impl AsRef<Path>, format: CdfFormat) -> Result<SizeCdf, WorkloadError> {
        let path = path.as_ref();
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| WorkloadError::Io {
            file: name.clone(),
            reason: e.to_string(),
        })?;
        SizeCdf::parse(&text, format, &name)
    }

    /// One of the distributions compiled into pl2 (see [`BUILTIN_NAMES`] and
    /// `data/workloads/README.md`). W1's file covers only sizes up to 15 B (47 %); the
    /// rest is completed with the generalized Pareto tail Homa uses (see
    /// `w1_with_pareto_tail` in this file).
    pub fn builtin(name: &str) -> Result<SizeCdf, WorkloadError> {
        macro_rules! data {
            ($f:literal) => {
                include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/data/workloads/", $f))
            };
        }
        let (text, format) = match name {
            "w1" => return w1_with_pareto_tail(data!("w1_facebook_memcached.txt")),
            "w2" => (data!("w2_google_search_rpc.txt"), CdfFormat::Homa),
            "w3" => (data!("w3_google_all_rpc.txt"), CdfFormat::Homa),
            "w4" => (data!("w4_facebook_hadoop.txt"), CdfFormat::Homa),
            "w5" => (data!("w5_dctcp_websearch_pkts.txt"), CdfFormat::HomaPackets),
            "websearch" => (data!("websearch_bytes_percent.txt"), CdfFormat::Percent),
            "fb_hadoop" => (data!("fb_hadoop_bytes_percent.txt"), CdfFormat::Percent),
            "google_rpc_2008" => (
                data!("google_rpc_2008_bytes_percent.txt"),
                CdfFormat::Percent,
            ),
            "ali_storage_2019" => (
                data!("ali_storage_2019_bytes_percent.txt"),
                CdfFormat::Percent,
            ),
            _ => {
                return Err(WorkloadError::UnknownBuiltin {
                    name: name.into(),
                    known: BUILTIN_NAMES.join(", "),
                })
            }
        };
        SizeCdf::parse(text, format, name)
    }
}

/// W1: the file's table up to its last size `s` (probability `p`), then Homa's tail
/// `size = s + sigma/k * (t^-k - 1)` where `t = (1 - u) / (1 - p)`. The tail's quantile
/// function is tabulated at `t = 2^(-j/8)`, `j = 1..=320`, and interpolated linearly like
/// any table (the chords overstate the tail's mean by under 0.1 %). The final step, from
/// `t = 2^-40` to probability 1, ends at `x + 2 e(x)`, where `e(x) = (sigma + k (x - s)) /
/// (1 - k)` is the Pareto mean excess beyond its start `x`, so that step keeps the
/// Pareto's conditional mean; the largest W1 message is about 20 MB.
fn w1_with_pareto_tail(text: &str) -> Result<SizeCdf, WorkloadError> {
    let parsed = parse_points(text, CdfFormat::Homa, "w1")?;
    let mut points = parsed.points;
    let (s, p) = *points
        .last()
        .expect("parse_points returns at least one point");
    let (k, sigma) = (W1_TAIL_SHAPE, W1_TAIL_SCALE_BYTES);
    let quantile = |t: f64| s + sigma / k * (t.powf(-k) - 1.0);
    for j in 1..=W1_TAIL_POINTS_PER_HALVING * W1_TAIL_HALVINGS {
        let t = 2f64.powf(-f64::from(j) / f64::from(W1_TAIL_POINTS_PER_HALVING));
        points.push((quantile(t), 1.0 - (1.0 - p) * t));
    }
    let x = points.last().expect("tail points were pushed").0;
    points.push((x + 2.0 * (sigma + k * (x - s)) / (1.0 - k), 1.0));
    check_points(&points).map_err(|e| WorkloadError::File {
        file: "w1".into(),
        problem: e.problem,
        fix: e.fix,
    })?;
    Ok(SizeCdf::from_checked(
        points,
        "w1",
        parsed.stated_mean_bytes,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::framing::{Framing, L4Headers};
    use crate::rng::SimRng;

    #[test]
    fn every_builtin_parses() {
        for name in BUILTIN_NAMES {
            let cdf = SizeCdf::builtin(name).unwrap();
            assert!(cdf.mean_bytes() >= 1.0 && cdf.max_bytes() >= 1, "{name}");
        }
        assert_eq!(SizeCdf::builtin("w5").unwrap().max_bytes(), 20_000 * 1442);
        assert_eq!(
            SizeCdf::builtin("websearch").unwrap().max_bytes(),
            30_000_000
        );
        let err = SizeCdf::builtin("w9").unwrap_err().to_string();
        assert!(
            err.contains("\"w9\"") && err.contains("google_rpc_2008"),
            "{err}"
        );
    }

    /// Homa's step rule: every draw in a step takes the step's upper size.
    fn step_rule_mean(cdf: &SizeCdf) -> f64 {
        let p = cdf.points();
        p[0].0 * p[0].1
            + p.windows(2)
                .map(|w| w[1].0 * (w[1].1 - w[0].1))
                .sum::<f64>()
    }

    #[test]
    fn means_agree_with_the_homa_files() {
        for name in ["w2", "w3", "w4", "w5"] {
            let cdf = SizeCdf::builtin(name).unwrap();
            let stated = cdf.stated_mean_bytes().unwrap();
            let ours = cdf.mean_bytes();
            // Interpolation puts each step's mass mid-step instead of at its top, so our
            // mean is lower than Homa's, by at most 5 % (W4, whose large steps are coarse).
            assert!(
                ours < stated && ours > 0.95 * stated,
                "{name}: {ours} vs stated {stated}"
            );
        }
        // The stated mean is the step rule's mean (W5's first line is rounded to 0.01
        // packet). W1 is left out: Homa draws its tail from the continuous Pareto.
        for name in ["w2", "w3", "w4", "w5"] {
            let cdf = SizeCdf::builtin(name).unwrap();
            let (step, stated) = (step_rule_mean(&cdf), cdf.stated_mean_bytes().unwrap());
            assert!(
                (step - stated).abs() < 1e-5 * stated,
                "{name}: step mean {step} vs stated {stated}"
            );
        }
        // Homa's W1: 2.73 B from the table plus 0.53 * (15 + sigma / (1 - k)) from the tail.
        let w1 = SizeCdf::builtin("w1").unwrap();
        assert!((w1.mean_bytes() - 185.0).abs() < 0.5, "{}", w1.mean_bytes());
    }

    #[test]
    fn sample_means_converge_to_the_exact_means() {
        for name in BUILTIN_NAMES {
            let cdf = SizeCdf::builtin(name).unwrap();
            let mut rng = SimRng::stream(42, name);
            let n = 200_000;
            let xs: Vec<f64> = (0..n).map(|_| cdf.sample(&mut rng) as f64).collect();
            let mean = xs.iter().sum::<f64>() / n as f64;
            let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
            let se = (var / n as f64).sqrt();
            let exact = cdf.mean_bytes();
            assert!(
                (mean - exact).abs() < 4.0 * se,
                "{name}: sample {mean} exact {exact} se {se}"
            );
        }
    }

    #[test]
    fn w1_on_the_wire() {
        let w1 = SizeCdf::builtin("w1").unwrap();
        let wire = w1
            .mean_wire_bytes(Framing::default(), L4Headers::Udp, 1500)
            .unwrap();
        assert!(wire >= 255.0, "{wire}");
        // W1 has a 20 MB tail; the wire mean is computed in closed form, instantly.
        assert!(
            w1.max_bytes() > 10_000_000 && w1.max_bytes() < 40_000_000,
            "{}",
            w1.max_bytes()
        );
    }

    #[test]
    fn w1_file_alone_is_incomplete() {
        let text = include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/data/workloads/w1_facebook_memcached.txt"
        ));
        let err = SizeCdf::parse(text, CdfFormat::Homa, "w1.txt")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("w1.txt line 16") && err.contains("0.47") && err.contains("not 1"),
            "{err}"
        );
    }

    fn parse_err(text: &str, format: CdfFormat) -> String {
        SizeCdf::parse(text, format, "f.txt")
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn malformed_files_name_the_line() {
        let cases: [(&str, CdfFormat, &str); 10] = [
            ("", CdfFormat::Percent, "f.txt: no `size probability` lines"),
            (
                "10.0\n",
                CdfFormat::Homa,
                "f.txt: no `size probability` lines",
            ),
            ("abc\n1 1\n", CdfFormat::Homa, "line 1"),
            (
                "0 0\n\n10 x\n",
                CdfFormat::Percent,
                "line 3: `10 x`: cumulative percent \"x\"",
            ),
            ("5\n1 0.5\n2 1.5\n", CdfFormat::Homa, "line 3: `2 1.5`"),
            (
                "0 0\n10 50\n5 100\n",
                CdfFormat::Percent,
                "line 3: `5 100`: size 5 is smaller",
            ),
            (
                "0 0\n10 50\n20 40\n30 100\n",
                CdfFormat::Percent,
                "line 3: `20 40`: cumulative percent 40 is smaller",
            ),
            (
                "0 0\n10 50\n20 99\n",
                CdfFormat::Percent,
                "line 3: `20 99`: the last cumulative percent is 99, not 100",
            ),
            (
                "0 0\n10 50 7\n",
                CdfFormat::Percent,
                "line 2: `10 50 7`: expected 2 fields",
            ),
            (
                "0 0\n-10 50\n",
                CdfFormat::Percent,
                "line 2: `-10 50`: size \"-10\"",
            ),
        ];
        for (text, format, want) in cases {
            let err = parse_err(text, format);
            assert!(err.contains(want), "{text:?}: got {err:?}, want {want:?}");
        }
    }

    #[test]
    fn homa_packets_are_1442_bytes() {
        let cdf = SizeCdf::parse("1.5\n1 0.5\n2 1\n", CdfFormat::HomaPackets, "p").unwrap();
        assert_eq!(cdf.points(), &[(1442.0, 0.5), (2884.0, 1.0)]);
        assert_eq!(cdf.stated_mean_bytes(), Some(1.5 * 1442.0));
        let missing = SizeCdf::from_file("/nonexistent/cdf.txt", CdfFormat::Homa).unwrap_err();
        assert!(
            missing.to_string().contains("/nonexistent/cdf.txt"),
            "{missing}"
        );
    }
}
