//! The measured messages' latencies and slowdowns, and their exact statistics (nearest-rank
//! percentiles, mean, maximum) in bounded memory.
//!
//! The summary's percentiles are exact, so every finished message in the measurement
//! window counts. The first [`IN_MEMORY`] are held in memory (16 bytes each) and sorted
//! when the run ends, as before; a run with more appends them to an unnamed temporary file
//! and finds each percentile by radix selection over it: a pass counts the keys under the
//! current prefix by their next 16 bits, which fixes 16 more bits of the wanted key, until
//! few enough keys are left to collect and sort (at most four passes per statistic, each a
//! sequential read). Keys are the latency in picoseconds and the bit pattern of the
//! slowdown, which orders non-negative floats as it orders integers. The memory held is a
//! fixed 1 MiB however long the run; W1 on the k=8 fat tree (976k messages in 300 µs)
//! held 15.6 MB.
//!
//! Means are computed as the messages arrive, the same way in both cases, so no statistic
//! depends on whether the run outgrew the buffer: the latencies' from an exact integer sum,
//! the slowdowns' from a compensated (Neumaier) sum, in arrival order.

use crate::tables::slowdown;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};

/// Finished messages held in memory before they go to the temporary file (1 MiB).
pub const IN_MEMORY: usize = 1 << 16;

/// Keys under one prefix few enough to collect and sort rather than count (512 KiB).
const COLLECT: u64 = 1 << 16;

/// A message that arrived in the measurement window, as the summary's statistics need it.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct WindowMessage {
    /// One-way latency, or [`WindowMessage::UNFINISHED`].
    pub latency_ps: u64,
    pub ideal_ps: u64,
}

impl WindowMessage {
    pub const UNFINISHED: u64 = u64::MAX;

    pub fn latency(&self) -> Option<u64> {
        (self.latency_ps != Self::UNFINISHED).then_some(self.latency_ps)
    }

    /// Latency over the ideal completion time (`None` if unfinished).
    pub fn slowdown(&self) -> Option<f64> {
        self.latency().map(|l| slowdown(l, self.ideal_ps))
    }
}

/// Percentiles two ways (nearest rank): `p50`, `p99`, `p999` count unfinished samples as
/// +∞ (`None` when the rank falls on one: the honest tail of a run that left messages
/// behind), `p50_finished`, `p99_finished`, `p999_finished` rank the finished samples
/// alone (what a reader of a paper's CDF of completed flows expects). Mean and maximum
/// of the finished samples. Each p99.9 only with at least 10⁴ samples ranked.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Stats {
    pub p50: Option<f64>,
    pub p99: Option<f64>,
    pub p999: Option<f64>,
    pub p50_finished: Option<f64>,
    pub p99_finished: Option<f64>,
    pub p999_finished: Option<f64>,
    pub mean_finished: Option<f64>,
    pub max_finished: Option<f64>,
}

/// The 1-based ranks among `n` finished samples of p50, p99, p99.9 with `unfinished`
/// more samples counted as +∞, of the same three among the finished ones alone, and of
/// the maximum; `None` where the rank is not among the finished ones (or p99.9 with fewer
/// than 10⁴ samples ranked).
fn ranks(n: u64, unfinished: u64) -> [Option<u64>; 7] {
    let rank = |q: f64, total: u64| -> Option<u64> {
        if total == 0 {
            return None;
        }
        let r = ((q * total as f64).ceil() as u64).clamp(1, total);
        (r <= n).then_some(r)
    };
    let three = |total: u64| [rank(0.5, total), rank(0.99, total), if total >= 10_000 { rank(0.999, total) } else { None }];
    let [a, b, c] = three(n + unfinished);
    let [d, e, f] = three(n);
    [a, b, c, d, e, f, (n > 0).then_some(n)]
}

impl Stats {
    /// Statistics of `n` finished samples whose `i`-th smallest is `at(i)`, `unfinished`
    /// more, and the given mean.
    pub fn from_sorted(n: usize, unfinished: usize, mean: Option<f64>, at: impl Fn(usize) -> f64) -> Stats {
        Stats::from_ranked(ranks(n as u64, unfinished as u64).map(|r| r.map(|r| at(r as usize - 1))), mean)
    }

    /// From the values at the ranks of [`ranks`], in its order.
    fn from_ranked(v: [Option<f64>; 7], mean: Option<f64>) -> Stats {
        let [p50, p99, p999, p50_finished, p99_finished, p999_finished, max] = v;
        Stats { p50, p99, p999, p50_finished, p99_finished, p999_finished, mean_finished: mean, max_finished: max }
    }
}

/// The window's message statistics, as the summary's `messages` entry.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct MessageStats {
    pub count: u64,
    pub finished: u64,
    pub unfinished: u64,
    pub latency_ps: Stats,
    pub slowdown: Stats,
}

/// Latency and ideal time of every message in the measurement window, in bounded memory.
pub struct WindowSamples {
    held: Vec<WindowMessage>,
    capacity: usize,
    spill: Option<BufWriter<File>>,
    spilled: u64,
    unfinished: u64,
    /// Sums for the means, in arrival order (see the module doc).
    latency_sum: u128,
    slowdown_sum: NeumaierSum,
}

/// A running sum of floats with Neumaier's compensation: the rounding error of each
/// addition is carried separately, so the result is as if summed at twice the precision.
#[derive(Clone, Copy, Debug, Default)]
struct NeumaierSum {
    sum: f64,
    compensation: f64,
}

impl NeumaierSum {
    fn add(&mut self, x: f64) {
        let t = self.sum + x;
        self.compensation += if self.sum.abs() >= x.abs() { (self.sum - t) + x } else { (x - t) + self.sum };
        self.sum = t;
    }

    fn value(&self) -> f64 {
        self.sum + self.compensation
    }
}

impl Default for WindowSamples {
    fn default() -> Self {
        WindowSamples::with_capacity(IN_MEMORY)
    }
}

impl WindowSamples {
    /// Holds up to `capacity` finished messages in memory before spilling.
    pub fn with_capacity(capacity: usize) -> WindowSamples {
        WindowSamples { held: Vec::new(), capacity: capacity.max(1), spill: None, spilled: 0, unfinished: 0, latency_sum: 0, slowdown_sum: NeumaierSum::default() }
    }

    pub fn push(&mut self, m: WindowMessage) -> std::io::Result<()> {
        let (Some(l), Some(sd)) = (m.latency(), m.slowdown()) else {
            self.unfinished += 1;
            return Ok(());
        };
        self.latency_sum += u128::from(l);
        self.slowdown_sum.add(sd);
        if self.held.len() == self.capacity {
            self.spill_held()?;
        }
        self.held.push(m);
        Ok(())
    }

    fn finished(&self) -> u64 {
        self.spilled + self.held.len() as u64
    }

    fn spill_held(&mut self) -> std::io::Result<()> {
        let w = match &mut self.spill {
            Some(w) => w,
            None => self.spill.insert(BufWriter::with_capacity(64 << 10, tempfile::tempfile()?)),
        };
        for m in &self.held {
            w.write_all(&m.latency_ps.to_le_bytes())?;
            w.write_all(&m.ideal_ps.to_le_bytes())?;
        }
        self.spilled += self.held.len() as u64;
        self.held.clear();
        Ok(())
    }

    /// The statistics of everything pushed. Sorts what is held in memory.
    pub fn statistics(&mut self) -> std::io::Result<MessageStats> {
        let (n, unfinished) = (self.finished(), self.unfinished);
        let means = (n > 0).then(|| ((self.latency_sum as f64) / n as f64, self.slowdown_sum.value() / n as f64));
        let (latency_ps, slowdown) = if self.spill.is_none() {
            let held = &mut self.held;
            held.sort_unstable_by_key(|m| m.latency_ps);
            let latency = Stats::from_sorted(held.len(), unfinished as usize, means.map(|m| m.0), |i| held[i].latency_ps as f64);
            let sd = |m: &WindowMessage| m.slowdown().expect("finished");
            held.sort_unstable_by(|a, b| sd(a).total_cmp(&sd(b)));
            (latency, Stats::from_sorted(held.len(), unfinished as usize, means.map(|m| m.1), |i| sd(&held[i])))
        } else {
            self.spill_held()?;
            let w = self.spill.as_mut().expect("spilled");
            w.flush()?;
            let file = w.get_mut();
            let latency = select_stats(file, n, unfinished, |l, _| l, |k| k as f64)?;
            let sd = select_stats(file, n, unfinished, |l, i| slowdown(l, i).to_bits(), f64::from_bits)?;
            (Stats { mean_finished: means.map(|m| m.0), ..latency }, Stats { mean_finished: means.map(|m| m.1), ..sd })
        };
        Ok(MessageStats { count: n + unfinished, finished: n, unfinished, latency_ps, slowdown })
    }
}

/// Percentiles and maximum (no mean) of the keys `key(latency, ideal)` of the `n` pairs in
/// `file`, by radix selection; `value` turns a key back into the statistic.
fn select_stats(file: &mut File, n: u64, unfinished: u64, key: impl Fn(u64, u64) -> u64, value: impl Fn(u64) -> f64) -> std::io::Result<Stats> {
    let wanted = ranks(n, unfinished);
    let found = select_ranks(file, n, &wanted.iter().flatten().copied().collect::<Vec<_>>(), &key)?;
    let mut found = found.into_iter();
    Ok(Stats::from_ranked(wanted.map(|r| r.map(|_| value(found.next().expect("one key per rank")))), None))
}

/// Calls `f(latency, ideal)` for every pair in `file`, in order.
fn for_each_pair(file: &mut File, mut f: impl FnMut(u64, u64)) -> std::io::Result<()> {
    file.seek(SeekFrom::Start(0))?;
    let mut r = BufReader::with_capacity(64 << 10, &*file);
    let mut pair = [0u8; 16];
    loop {
        match r.read_exact(&mut pair) {
            Ok(()) => f(u64::from_le_bytes(pair[..8].try_into().expect("8 bytes")), u64::from_le_bytes(pair[8..].try_into().expect("8 bytes"))),
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(()),
            Err(e) => return Err(e),
        }
    }
}

/// The keys of the given 1-based ranks among the `n` keys of `file`'s pairs.
fn select_ranks(file: &mut File, n: u64, ranks: &[u64], key: &impl Fn(u64, u64) -> u64) -> std::io::Result<Vec<u64>> {
    /// A rank being looked for: among the keys whose top `bits` bits are `prefix`
    /// (`count` of them), the `rank`-th smallest.
    struct Target {
        rank: u64,
        prefix: u64,
        bits: u32,
        count: u64,
        found: Option<u64>,
    }
    let under = |t: &Target, k: u64| t.bits == 0 || k >> (64 - t.bits) == t.prefix;
    let mut targets: Vec<Target> = ranks.iter().map(|&rank| Target { rank, prefix: 0, bits: 0, count: n, found: None }).collect();
    while targets.iter().any(|t| t.found.is_none()) {
        // Each open target either collects its keys (few left) or counts them by their
        // next 16 bits.
        let mut bags: Vec<Vec<u64>> = targets.iter().map(|_| Vec::new()).collect();
        let mut counts: Vec<Vec<u64>> = targets.iter().map(|t| if t.found.is_none() && t.count > COLLECT { vec![0; 1 << 16] } else { Vec::new() }).collect();
        for_each_pair(file, |l, i| {
            let k = key(l, i);
            for (j, t) in targets.iter().enumerate() {
                if t.found.is_some() || !under(t, k) {
                    continue;
                }
                if t.count > COLLECT {
                    counts[j][((k << t.bits) >> 48) as usize] += 1;
                } else {
                    bags[j].push(k);
                }
            }
        })?;
        for (j, t) in targets.iter_mut().enumerate() {
            if t.found.is_some() {
                continue;
            }
            if t.count <= COLLECT {
                let bag = &mut bags[j];
                bag.sort_unstable();
                t.found = Some(bag[(t.rank - 1) as usize]);
                continue;
            }
            let mut below = 0;
            let (digit, count) = counts[j]
                .iter()
                .enumerate()
                .find_map(|(d, &c)| {
                    if below + c >= t.rank {
                        Some((d as u64, c))
                    } else {
                        below += c;
                        None
                    }
                })
                .expect("the rank is among the keys under the prefix");
            t.rank -= below;
            t.prefix = (t.prefix << 16) | digit;
            t.bits += 16;
            t.count = count;
            if t.bits == 64 {
                t.found = Some(t.prefix);
            }
        }
    }
    Ok(targets.into_iter().map(|t| t.found.expect("found")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic pseudo-random values: a 64-bit mixing function.
    fn mix(i: u64) -> u64 {
        let mut x = i.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        x ^= x >> 31;
        x.wrapping_mul(0xBF58_476D_1CE4_E5B9) ^ (x >> 29)
    }

    /// Samples with heavy ties (three eighths share one latency, so selection must go to
    /// the last digit), a spread of others, huge and tiny values, and one unfinished in
    /// 2,000 (so p99.9 of 10⁶ falls on a finished one).
    fn samples(n: u64) -> Vec<WindowMessage> {
        (0..n)
            .map(|i| {
                let r = mix(i);
                let latency_ps = match r % 8 {
                    _ if i % 2000 == 7 => WindowMessage::UNFINISHED,
                    0..=2 => 1_234_567,
                    3 => r >> 8,
                    4 => r % 1000,
                    _ => 1_000_000 + r % 50_000_000,
                };
                WindowMessage { latency_ps, ideal_ps: 1 + mix(i + n) % 3_000_000 }
            })
            .collect()
    }

    /// The statistics straight from the definition: sort, take nearest ranks, and the
    /// means as the module defines them.
    fn by_sorting(msgs: &[WindowMessage]) -> MessageStats {
        let unfinished = msgs.iter().filter(|m| m.latency().is_none()).count();
        let mut lat: Vec<u64> = msgs.iter().filter_map(|m| m.latency()).collect();
        let mut sd: Vec<f64> = msgs.iter().filter_map(|m| m.slowdown()).collect();
        let n = lat.len();
        let lat_mean = (n > 0).then(|| lat.iter().map(|&l| u128::from(l)).sum::<u128>() as f64 / n as f64);
        let sd_mean = (n > 0).then(|| {
            let mut s = NeumaierSum::default();
            sd.iter().for_each(|&x| s.add(x));
            s.value() / n as f64
        });
        lat.sort_unstable();
        sd.sort_by(f64::total_cmp);
        MessageStats {
            count: msgs.len() as u64,
            finished: n as u64,
            unfinished: unfinished as u64,
            latency_ps: Stats::from_sorted(n, unfinished, lat_mean, |i| lat[i] as f64),
            slowdown: Stats::from_sorted(n, unfinished, sd_mean, |i| sd[i]),
        }
    }

    fn through(capacity: usize, msgs: &[WindowMessage]) -> (MessageStats, bool) {
        let mut w = WindowSamples::with_capacity(capacity);
        for &m in msgs {
            w.push(m).unwrap();
        }
        let spilled = w.spill.is_some();
        (w.statistics().unwrap(), spilled)
    }

    /// Held in memory or spilled and selected on disk, the statistics equal those of
    /// sorting everything, to the bit; 10⁶ samples with a 1,000-entry buffer go through
    /// every radix digit (the tied third) and the collect step.
    #[test]
    fn spilled_statistics_equal_sorting_exactly() {
        for n in [0, 1, 7, 9_999, 10_000, 1_000_000] {
            let msgs = samples(n);
            let expected = by_sorting(&msgs);
            let (in_memory, spilled) = through(usize::MAX, &msgs);
            assert!(!spilled);
            assert_eq!(in_memory, expected, "in memory, n = {n}");
            let (on_disk, spilled) = through(1000, &msgs);
            assert_eq!(spilled, n > 1000);
            assert_eq!(on_disk, expected, "spilled, n = {n}");
        }
        let s = by_sorting(&samples(1_000_000));
        assert_eq!(s.unfinished, 500);
        assert!(s.latency_ps.p999.is_some() && s.slowdown.p999.is_some(), "{s:?}");
        assert!(s.latency_ps.p999_finished <= s.latency_ps.p999, "ranking the finished alone never moves a percentile up");
    }

    /// The compensated sum keeps what plain summation loses: 1 + 10⁻¹⁶ × 10⁴ is
    /// 1 + 10⁻¹² (plain f64 addition returns exactly 1), and 10¹⁶ + 1 − 10¹⁶ is 1.
    #[test]
    fn compensated_sum_keeps_small_terms() {
        let mut s = NeumaierSum::default();
        s.add(1.0);
        (0..10_000).for_each(|_| s.add(1e-16));
        assert_eq!((1.0f64 + 1e-16), 1.0);
        assert!((s.value() - (1.0 + 1e-12)).abs() < 1e-15, "{}", s.value());
        let mut s = NeumaierSum::default();
        [1e16, 1.0, -1e16].iter().for_each(|&x| s.add(x));
        assert_eq!(s.value(), 1.0);
    }
}
