//! The sender's RTT and RTO estimate, htsim's `processAck` (`ndp.cpp:621-646`): Jacobson's
//! estimator in integer picoseconds (every division truncates), and a floor that is
//! redrawn uniformly in [0.75, 1.25] × `rto_min` on every ACK while the estimate is below
//! it (so the timeout is randomised, never backed off).

use crate::rng::SimRng;
use crate::units::Duration;

#[derive(Clone, Debug)]
pub(super) struct RttEstimate {
    /// Smoothed RTT and mean deviation, ps (0: no sample yet).
    pub srtt: u64,
    pub mdev: u64,
    /// The current RTO, ps.
    pub rto: u64,
    min: u64,
}

impl RttEstimate {
    pub fn new(initial: Duration, min: Duration) -> RttEstimate {
        RttEstimate { srtt: 0, mdev: 0, rto: initial.0, min: min.0 }
    }

    /// One ACK: `sample` is its RTT (`None` when the ACK does not tell which transmission
    /// it answers); the floor is checked on every ACK all the same.
    pub fn on_ack(&mut self, sample: Option<u64>, rng: &mut SimRng) {
        if let Some(m) = sample.filter(|&m| m != 0) {
            if self.srtt > 0 {
                let abs = m.abs_diff(self.srtt);
                self.mdev = 3 * self.mdev / 4 + abs / 4;
                self.srtt = 7 * self.srtt / 8 + m / 8;
            } else {
                self.srtt = m;
                self.mdev = m / 2;
            }
            self.rto = self.srtt + 4 * self.mdev;
        }
        if self.rto < self.min {
            self.rto = (self.min as f64 * (rng.uniform() * 0.5 + 0.75)) as u64;
        }
    }

    pub fn rto(&self) -> Duration {
        Duration(self.rto)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jacobson_in_integer_picoseconds() {
        // Floor 1 ps: the estimate always stands. First sample 55,814,400 ps (htsim's
        // inter-pod data + ACK RTT at 10 Gb/s): srtt = m, mdev = m/2 = 27,907,200,
        // rto = m + 4·mdev = 167,443,200.
        let mut rng = SimRng::stream(1, "t");
        let mut e = RttEstimate::new(Duration::from_ms(20), Duration(1));
        e.on_ack(Some(55_814_400), &mut rng);
        assert_eq!((e.srtt, e.mdev, e.rto), (55_814_400, 27_907_200, 167_443_200));
        // Second sample 60,000,003: |m − srtt| = 4,185,603; mdev = 3·27,907,200/4 +
        // 4,185,603/4 = 20,930,400 + 1,046,400 (truncated) = 21,976,800; srtt =
        // 7·55,814,400/8 + 60,000,003/8 = 48,837,600 + 7,500,000 = 56,337,600;
        // rto = 56,337,600 + 87,907,200 = 144,244,800.
        e.on_ack(Some(60_000_003), &mut rng);
        assert_eq!((e.srtt, e.mdev, e.rto), (56_337_600, 21_976_800, 144_244_800));
        // A zero sample and an unknown one change nothing.
        e.on_ack(Some(0), &mut rng);
        e.on_ack(None, &mut rng);
        assert_eq!(e.rto, 144_244_800);
    }

    #[test]
    fn below_the_floor_the_rto_is_redrawn_in_three_quarters_to_five_quarters_on_every_ack() {
        let min = Duration::from_ms(5);
        let mut rng = SimRng::stream(9, "t");
        let mut e = RttEstimate::new(Duration::from_ms(20), min);
        assert_eq!(e.rto, 20_000_000_000, "20 ms until the first ACK");
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..2000 {
            e.on_ack(Some(10_000_000), &mut rng);
            assert!((3_750_000_000..=6_250_000_000).contains(&e.rto), "{}", e.rto);
            seen.insert(e.rto);
        }
        assert!(seen.len() > 1900, "redrawn on every ACK: {} distinct", seen.len());
        assert!(seen.iter().next().unwrap() < &4_000_000_000 && seen.iter().last().unwrap() > &6_000_000_000, "spread over the range");
    }
}
