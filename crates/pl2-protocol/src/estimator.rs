//! RSV–GRT delay estimators (the `rsvGrtDelay` of equation (1), §4.2.1). §5 says PL2
//! "continuously measures RSV-GRT delays" but not how it aggregates them; we offer two:
//!
//! - EWMA with gain 1/8 (as TCP's SRTT), from an initial value;
//! - the minimum of the last N samples (default N = 16).
//!
//! The default is the windowed minimum: a sample is the propagation and processing delay
//! plus whatever queueing the RSV and GRT met, and queueing only inflates samples, so the
//! minimum of recent samples is the best estimate of the delay the data packets' timing
//! needs, and it follows path changes within N samples. (§5 measured 1 µs minimum but a
//! 14 µs maximum on an idle network: a mean would be dragged far off by such tails.)
//! Measured across the figures with host jitter (experiments/estimator/results.md): the
//! minimum underestimates jittered delays and bursts arrive late (up to 1.8 Gbps of incast
//! goodput at 300 ns per host leg), but the last sample or the EWMA make half of them
//! arrive early, which Algorithm 1's ingress decrement cannot see, and the incast queue
//! grows without bound; N = 16 keeps every measured cell bounded.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

/// Which estimator, and its parameter.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EstimatorKind {
    /// `est += (sample - est) / 8`, starting from `initial_ps`.
    Ewma { initial_ps: u64 },
    /// Minimum of the last `samples` samples; no estimate before the first sample.
    WindowMin { samples: usize },
}

impl Default for EstimatorKind {
    fn default() -> Self {
        EstimatorKind::WindowMin { samples: 16 }
    }
}

/// One estimator instance (one per sender context and destination).
#[derive(Clone, Debug)]
pub struct DelayEstimator {
    kind: EstimatorKind,
    ewma_ps: u64,
    window: VecDeque<u64>,
}

impl DelayEstimator {
    pub fn new(kind: EstimatorKind) -> Self {
        let ewma_ps = match kind {
            EstimatorKind::Ewma { initial_ps } => initial_ps,
            EstimatorKind::WindowMin { .. } => 0,
        };
        DelayEstimator {
            kind,
            ewma_ps,
            window: VecDeque::new(),
        }
    }

    /// Adds one measured RSV→GRT delay.
    pub fn add_sample(&mut self, sample_ps: u64) {
        match self.kind {
            EstimatorKind::Ewma { .. } => {
                let est = u128::from(self.ewma_ps);
                // (7 est + sample) / 8, rounded to nearest.
                self.ewma_ps = ((7 * est + u128::from(sample_ps) + 4) / 8) as u64;
            }
            EstimatorKind::WindowMin { samples } => {
                if self.window.len() == samples.max(1) {
                    self.window.pop_front();
                }
                self.window.push_back(sample_ps);
            }
        }
    }

    /// The current estimate, if there is one.
    pub fn estimate_ps(&self) -> Option<u64> {
        match self.kind {
            EstimatorKind::Ewma { .. } => Some(self.ewma_ps),
            EstimatorKind::WindowMin { .. } => self.window.iter().copied().min(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ewma_moves_an_eighth_of_the_way() {
        let mut e = DelayEstimator::new(EstimatorKind::Ewma {
            initial_ps: 1_000_000,
        });
        assert_eq!(e.estimate_ps(), Some(1_000_000));
        e.add_sample(1_800_000);
        assert_eq!(e.estimate_ps(), Some(1_100_000));
        e.add_sample(300_000);
        assert_eq!(e.estimate_ps(), Some(1_000_000));
        // Converges on a constant input.
        for _ in 0..200 {
            e.add_sample(2_000_000);
        }
        assert!(e.estimate_ps().unwrap().abs_diff(2_000_000) <= 4);
    }

    #[test]
    fn window_min_ignores_inflated_samples_and_forgets_old_minima() {
        let mut e = DelayEstimator::new(EstimatorKind::WindowMin { samples: 4 });
        assert_eq!(e.estimate_ps(), None);
        e.add_sample(1_000_000);
        e.add_sample(14_000_000);
        e.add_sample(1_200_000);
        assert_eq!(e.estimate_ps(), Some(1_000_000));
        e.add_sample(1_300_000);
        // The 1.0 µs sample is now the oldest of four; one more pushes it out.
        e.add_sample(1_500_000);
        assert_eq!(e.estimate_ps(), Some(1_200_000));
    }

    #[test]
    fn default_is_window_of_16() {
        assert_eq!(
            EstimatorKind::default(),
            EstimatorKind::WindowMin { samples: 16 }
        );
    }
}
