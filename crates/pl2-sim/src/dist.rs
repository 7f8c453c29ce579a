//! Delay distributions: how long a host stage, NIC pipeline or switch pipeline takes.
//!
//! In a scenario file a distribution is either a plain duration (`"346ns"`, a constant)
//! or a table with a `kind`: `uniform {min, max}`, `normal {mean, std, min}` (truncated
//! below at `min`), `exponential {min, mean_extra}` (a constant plus an exponential), or
//! `quantiles {points = [[q, "t"], ...]}`, an empirical quantile function interpolated
//! linearly between points (how the PL2 paper reports its measurements: min, median,
//! p99.99).

use crate::rng::SimRng;
use crate::units::Duration;
use serde::de::{self, IntoDeserializer};
use serde::{Deserialize, Deserializer, Serialize};
use std::fmt;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum DelayDist {
    /// Always `value`.
    Const {
        /// The delay, a duration (`"346ns"`); 0 or more. Required.
        value: Duration,
    },
    /// Uniform between `min` and `max`.
    Uniform {
        /// Smallest delay, a duration; at most `max`. Required.
        min: Duration,
        /// Largest delay, a duration, included (draws are whole picoseconds from `min` to
        /// `max`). Required.
        max: Duration,
    },
    /// Normal with `mean` and `std`, truncated below at `min` (resampled never: clamped).
    Normal {
        /// Mean of the untruncated normal, a duration. Required.
        mean: Duration,
        /// Standard deviation, a duration. Required.
        std: Duration,
        /// Floor, a duration: a draw below it takes `min`; at most `mean`. Required.
        min: Duration,
    },
    /// `min` plus an exponential with mean `mean_extra`.
    Exponential {
        /// The constant part, a duration: the smallest delay. Required.
        min: Duration,
        /// Mean of the exponential part added to `min`, a duration. Required.
        mean_extra: Duration,
    },
    /// Empirical quantile function: `points` are (quantile in [0, 1], delay), quantiles
    /// strictly increasing from 0 to 1, delays non-decreasing.
    Quantiles {
        /// `[[q, "delay"], ...]`: at least two pairs of a quantile (a number) and a
        /// duration, the first quantile 0.0 and the last 1.0; a draw interpolates
        /// linearly between neighbouring points. Required.
        points: Vec<(f64, Duration)>,
    },
}

impl Default for DelayDist {
    fn default() -> Self {
        DelayDist::Const { value: Duration::ZERO }
    }
}

/// A distribution whose parameters cannot describe a delay.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct DistError(pub String);

impl DelayDist {
    pub fn constant(d: Duration) -> DelayDist {
        DelayDist::Const { value: d }
    }

    /// Checks the parameters; the message says what to change.
    pub fn validate(&self) -> Result<(), DistError> {
        match self {
            DelayDist::Const { .. } | DelayDist::Exponential { .. } => Ok(()),
            DelayDist::Uniform { min, max } if min > max => {
                Err(DistError(format!("uniform: min {min} exceeds max {max}; swap them")))
            }
            DelayDist::Normal { mean, min, .. } if min > mean => {
                Err(DistError(format!("normal: min {min} exceeds mean {mean}; lower min")))
            }
            DelayDist::Quantiles { points } => {
                if points.len() < 2 {
                    return Err(DistError("quantiles: give at least two points, [[0.0, \"1us\"], [1.0, \"2us\"]]".into()));
                }
                if points[0].0 != 0.0 || points[points.len() - 1].0 != 1.0 {
                    return Err(DistError("quantiles: the first quantile must be 0.0 and the last 1.0".into()));
                }
                for w in points.windows(2) {
                    if w[1].0 <= w[0].0 || w[1].1 < w[0].1 {
                        return Err(DistError(format!(
                            "quantiles: points must increase (found {:?} then {:?})",
                            w[0], w[1]
                        )));
                    }
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// The smallest value the distribution can take (used for ideal completion times).
    pub fn min(&self) -> Duration {
        match self {
            DelayDist::Const { value } => *value,
            DelayDist::Uniform { min, .. }
            | DelayDist::Normal { min, .. }
            | DelayDist::Exponential { min, .. } => *min,
            DelayDist::Quantiles { points } => points[0].1,
        }
    }

    /// A bound the distribution stays below: its maximum where it has one; for the
    /// unbounded ones mean + 6 standard deviations (normal) or min + 10 × the mean extra
    /// (exponential: exceeded with probability e⁻¹⁰). Used to size PFC headroom.
    pub fn bound(&self) -> Duration {
        match self {
            DelayDist::Const { value } => *value,
            DelayDist::Uniform { max, .. } => *max,
            DelayDist::Normal { mean, std, min } => Duration((mean.0 + 6 * std.0).max(min.0)),
            DelayDist::Exponential { min, mean_extra } => Duration(min.0 + 10 * mean_extra.0),
            DelayDist::Quantiles { points } => points[points.len() - 1].1,
        }
    }

    /// Whether it is the constant 0 (the default of every optional cost).
    pub fn is_zero(&self) -> bool {
        *self == DelayDist::default()
    }

    pub fn is_constant(&self) -> bool {
        matches!(self, DelayDist::Const { .. })
    }

    /// Draws one delay. Constants draw nothing, so they never consume random numbers.
    #[inline]
    pub fn sample(&self, rng: &mut SimRng) -> Duration {
        match self {
            DelayDist::Const { value } => *value,
            _ => self.sample_random(rng),
        }
    }

    /// `sample` of the distributions that draw from `rng`: kept out of line, so that a
    /// constant delay (most of them, on the per-hop path) costs a load, not a call.
    #[inline(never)]
    fn sample_random(&self, rng: &mut SimRng) -> Duration {
        match self {
            DelayDist::Const { value } => *value,
            DelayDist::Uniform { min, max } => {
                Duration(min.0 + rng.below(max.0 - min.0 + 1))
            }
            DelayDist::Normal { mean, std, min } => {
                let x = mean.0 as f64 + std.0 as f64 * rng.standard_normal();
                Duration((x.round().max(min.0 as f64)) as u64)
            }
            DelayDist::Exponential { min, mean_extra } => {
                Duration(min.0 + rng.exponential(mean_extra.0 as f64).round() as u64)
            }
            DelayDist::Quantiles { points } => {
                let u = rng.uniform();
                let i = points.partition_point(|p| p.0 <= u).clamp(1, points.len() - 1);
                let (q0, t0) = points[i - 1];
                let (q1, t1) = points[i];
                let f = (u - q0) / (q1 - q0);
                Duration(t0.0 + ((t1.0 - t0.0) as f64 * f).round() as u64)
            }
        }
    }
}

/// A distribution is written either as a plain duration (a constant) or as a table.
pub fn deserialize_delay<'de, D: Deserializer<'de>>(d: D) -> Result<DelayDist, D::Error> {
    struct V;
    impl<'de> de::Visitor<'de> for V {
        type Value = DelayDist;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a duration such as \"1us\" or a table {kind = \"uniform\", min = ..., max = ...}")
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<DelayDist, E> {
            Ok(DelayDist::Const { value: Duration::deserialize(v.into_deserializer())? })
        }
        fn visit_map<A: de::MapAccess<'de>>(self, m: A) -> Result<DelayDist, A::Error> {
            let dist = DelayDist::deserialize(de::value::MapAccessDeserializer::new(m))?;
            dist.validate().map_err(de::Error::custom)?;
            Ok(dist)
        }
    }
    d.deserialize_any(V)
}

/// An optional distribution (for overrides): absent, a duration, or a table.
pub fn deserialize_opt_delay<'de, D: Deserializer<'de>>(d: D) -> Result<Option<DelayDist>, D::Error> {
    deserialize_delay(d).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantile_distribution_hits_its_points() {
        // The PL2 switch: 346 ns min, 347 ns median, 508 ns at p99.99.
        let d = DelayDist::Quantiles {
            points: vec![
                (0.0, Duration::from_ns(346)),
                (0.5, Duration::from_ns(347)),
                (0.9999, Duration::from_ns(508)),
                (1.0, Duration::from_ns(508)),
            ],
        };
        d.validate().unwrap();
        let mut r = SimRng::stream(3, "q");
        let mut v: Vec<u64> = (0..100_000).map(|_| d.sample(&mut r).0).collect();
        v.sort_unstable();
        assert!(v[0] >= 346_000);
        let med = v[50_000] as f64;
        assert!((med - 347_000.0).abs() < 50.0, "median {med}");
        assert!(*v.last().unwrap() <= 508_000);
    }

    #[test]
    fn invalid_parameters_are_explained() {
        let d = DelayDist::Uniform { min: Duration(5), max: Duration(1) };
        assert!(d.validate().unwrap_err().0.contains("swap"));
        let q = DelayDist::Quantiles { points: vec![(0.1, Duration(1)), (1.0, Duration(2))] };
        assert!(q.validate().is_err());
    }
}
