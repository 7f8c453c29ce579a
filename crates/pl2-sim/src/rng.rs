//! Random number streams. A simulation has one master seed; every component draws from
//! its own stream keyed by (seed, stable component name), so adding a component or a
//! probe never shifts another component's samples, and the same seed gives the same
//! arrivals under every protocol (paired comparisons).

use rand_xoshiro::rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// One independent random stream.
#[derive(Clone, Debug)]
pub struct SimRng(Xoshiro256PlusPlus);

/// FNV-1a, a stable (platform- and version-independent) hash of the stream name.
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= *b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

impl SimRng {
    /// The stream named `name` under master seed `seed`.
    pub fn stream(seed: u64, name: &str) -> SimRng {
        let key = fnv1a(name.as_bytes()) ^ seed.rotate_left(17) ^ 0x9e37_79b9_7f4a_7c15;
        SimRng(Xoshiro256PlusPlus::seed_from_u64(key))
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }
    /// Uniform in [0, 1) with 53 bits of precision.
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
    /// Uniform in (0, 1]: safe to take the logarithm of.
    pub fn uniform_open0(&mut self) -> f64 {
        1.0 - self.uniform()
    }
    /// Exponential with the given mean (inverse-CDF sampling).
    pub fn exponential(&mut self, mean: f64) -> f64 {
        -mean * self.uniform_open0().ln()
    }
    /// Standard normal (Box–Muller; one of the pair is discarded to keep streams simple).
    pub fn standard_normal(&mut self) -> f64 {
        let u1 = self.uniform_open0();
        let u2 = self.uniform();
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }
    /// Bernoulli trial with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.uniform() < p
    }
    /// Uniform integer in [0, n).
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_reproducible_and_independent() {
        let a: Vec<u64> = (0..4).map({ let mut r = SimRng::stream(1, "host0"); move |_| r.next_u64() }).collect();
        let b: Vec<u64> = (0..4).map({ let mut r = SimRng::stream(1, "host0"); move |_| r.next_u64() }).collect();
        let c: Vec<u64> = (0..4).map({ let mut r = SimRng::stream(2, "host0"); move |_| r.next_u64() }).collect();
        let d: Vec<u64> = (0..4).map({ let mut r = SimRng::stream(1, "host1"); move |_| r.next_u64() }).collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_ne!(a, d);
    }

    #[test]
    fn exponential_mean_is_right() {
        let mut r = SimRng::stream(7, "exp");
        let n = 200_000;
        let m: f64 = (0..n).map(|_| r.exponential(3.0)).sum::<f64>() / n as f64;
        // Standard error of the mean is 3/sqrt(n) = 0.0067; allow 4 of them.
        assert!((m - 3.0).abs() < 0.027, "mean {m}");
    }
}
