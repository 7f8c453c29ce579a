//! Path choice per frame, as htsim's NDP source and sink make it (`ndp.cpp:750-843`
//! source, `:1671-1683` and `:1741-1753` sink, `permute_paths` `:132-144`).
//!
//! - `permute` (`SCATTER_PERMUTE`): a random permutation of every path number, walked
//!   one packet per path and reshuffled (Fisher–Yates, htsim's loop) when the walk wraps.
//!   The source *pre*-increments its index, so its first packet uses slot 1 of the first
//!   permutation; the sink and the source's timeout resends use the slot, then increment.
//! - `random` (`SCATTER_RANDOM`): a uniform draw per packet (the source draws, then uses;
//!   the sink and timeout resends use, then draw).
//! - switch-chosen paths: the frame carries the message id, for the switches to hash or
//!   ignore.

use super::config::NdpPaths;
use crate::rng::SimRng;

/// One flow's path state (one per sender flow and one per receiver flow).
pub(super) struct Paths {
    mode: NdpPaths,
    /// `permute`: the permutation; empty otherwise.
    perm: Vec<u32>,
    /// Index into `perm` (`permute`) or the current path number (`random`).
    crt: u32,
    /// Path numbers (at least 1).
    n: u32,
    /// What switch-chosen paths carry in `flow`: the message id's low 32 bits.
    key: u32,
}

impl Paths {
    pub fn new(mode: NdpPaths, n: u32, key: u32, rng: &mut SimRng) -> Paths {
        let n = n.max(1);
        let perm = if mode == NdpPaths::Permute { (0..n).collect() } else { Vec::new() };
        let mut p = Paths { mode, perm, crt: 0, n, key };
        p.permute(rng);
        p
    }

    /// htsim's `permute_paths`: for i in 0..n, swap slot `random() % (n - i)` with slot
    /// `n - 1 - i`.
    fn permute(&mut self, rng: &mut SimRng) {
        let len = self.perm.len();
        for i in 0..len {
            let ix = rng.below((len - i) as u64) as usize;
            self.perm.swap(ix, len - 1 - i);
        }
    }

    /// The source's choice for a new packet, a pull-clocked resend, or the slot a NACK
    /// consumes (`choose_route`: pre-increment).
    pub fn next_pre(&mut self, rng: &mut SimRng) -> u32 {
        match self.mode {
            NdpPaths::Permute => {
                self.crt += 1;
                if self.crt == self.n {
                    self.permute(rng);
                    self.crt = 0;
                }
                self.perm[self.crt as usize]
            }
            NdpPaths::Random => {
                self.crt = rng.below(u64::from(self.n)) as u32;
                self.crt
            }
            _ => self.key,
        }
    }

    /// The sink's choice for an ACK or NACK, and the source's for a timeout resend: the
    /// current slot, then advance.
    pub fn next_post(&mut self, rng: &mut SimRng) -> u32 {
        match self.mode {
            NdpPaths::Permute => {
                let p = self.perm[self.crt as usize];
                self.crt += 1;
                if self.crt == self.n {
                    self.permute(rng);
                    self.crt = 0;
                }
                p
            }
            NdpPaths::Random => {
                let p = self.crt;
                self.crt = rng.below(u64::from(self.n)) as u32;
                p
            }
            _ => self.key,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permute_covers_every_path_once_per_cycle_starting_at_slot_1() {
        let mut rng = SimRng::stream(3, "t");
        let n = 16;
        let mut p = Paths::new(NdpPaths::Permute, n, 0, &mut rng);
        let first = p.perm.clone();
        // Pre-increment: the first packet uses slot 1, and slot 0 of the first permutation
        // is not used in the first cycle, which is n - 1 packets long.
        let cycle: Vec<u32> = (0..n - 1).map(|_| p.next_pre(&mut rng)).collect();
        assert_eq!(cycle, first[1..].to_vec());
        // Every later cycle is n packets, each path once.
        for _ in 0..5 {
            let mut c: Vec<u32> = (0..n).map(|_| p.next_pre(&mut rng)).collect();
            c.sort_unstable();
            assert_eq!(c, (0..n).collect::<Vec<_>>());
        }
        // The sink's post-increment walk starts at slot 0.
        let mut s = Paths::new(NdpPaths::Permute, n, 0, &mut rng);
        let first = s.perm.clone();
        assert_eq!((0..n).map(|_| s.next_post(&mut rng)).collect::<Vec<_>>(), first);
    }

    #[test]
    fn permutations_differ_between_cycles_and_single_paths_stay_at_zero() {
        let mut rng = SimRng::stream(1, "t");
        let mut p = Paths::new(NdpPaths::Permute, 8, 0, &mut rng);
        let cycles: Vec<Vec<u32>> = (0..4).map(|_| (0..8).map(|_| p.next_post(&mut rng)).collect()).collect();
        assert!(cycles.windows(2).any(|w| w[0] != w[1]), "reshuffled: {cycles:?}");
        let mut one = Paths::new(NdpPaths::Permute, 1, 0, &mut rng);
        assert!((0..5).all(|_| one.next_pre(&mut rng) == 0 && one.next_post(&mut rng) == 0));
        let mut r = Paths::new(NdpPaths::Random, 4, 0, &mut rng);
        assert!((0..100).all(|_| r.next_pre(&mut rng) < 4));
        let mut sw = Paths::new(NdpPaths::PerFlow, 4, 77, &mut rng);
        assert_eq!((sw.next_pre(&mut rng), sw.next_post(&mut rng)), (77, 77));
    }
}
