//! CUBIC as Linux 4.15 runs it (`net/ipv4/tcp_cubic.c`, the kernel of the reTCP
//! emulator's hosts), selected by `TcpConfig::cubic_linux`: integer windows in segments,
//! the window grown one segment per `cnt` acknowledged (`tcp_cong_avoid_ai`), and time
//! read from the kernel's jiffy clock. It differs from RFC 9438 (`cubic.rs`) where the
//! kernel's clock shows:
//!
//! - `bictcp_update` recomputes `cnt` only when cwnd changed or more than HZ/32 jiffies
//!   passed since it last did. Right after a reduction cwnd sits at the cubic curve's
//!   start, `cnt` = 100·cwnd ("very small increment"), so cwnd holds still for HZ/32
//!   jiffies (28 ms at HZ 250) while the Reno-friendly count (`ack_cnt`) keeps counting;
//!   then cwnd catches up with the Reno estimate at one segment per two acknowledged,
//!   and holds again. On a clock that runs faster than simulated time (`dilation`, the
//!   emulator's time dilation) the hold is that many times shorter in simulated time.
//! - t in the cubic function is jiffies since the epoch plus the minimum RTT, in units
//!   of 1/1024 s (`BICTCP_HZ`), and K is an integer cube root (here exact; Linux's table
//!   and one Newton step are within 0.2 %).
//! - The Reno-friendly estimate grows one segment per ⌊15·cwnd/8⌋ acknowledged
//!   (`beta_scale`: α = 8/15 at β = 717/1024), never 1.
//! - A loss sets ssthresh = max(⌊717·cwnd/1024⌋, 2) with fast convergence on
//!   `last_max_cwnd` (`bictcp_recalc_ssthresh`); a timeout also forgets every state
//!   (`bictcp_state` → `bictcp_reset` on `TCP_CA_Loss`).
//!
//! Not modelled: HyStart (slow start only, and only above 16 segments), the restart
//! after an idle period (`bictcp_cwnd_event`), `tcp_is_cwnd_limited` (every connection
//! is taken as limited by its window) and the minimum RTT's samples from SACKed
//! segments (the cumulative sample only; the minimum barely moves t).

use super::{segs, AckInfo, CongestionControl, Window};
use super::super::config::CubicLinux;
use crate::units::SimTime;

/// β = 717/1024 (`beta`).
const BETA: u64 = 717;
const BETA_SCALE: u64 = 1024;
/// ⌊8·(1024 + β)/3/(1024 − β)⌋ = 15 (`beta_scale`).
const RENO_SCALE: u64 = 8 * (BETA_SCALE + BETA) / 3 / (BETA_SCALE - BETA);
/// C/RTT scaled: `bic_scale` 41 × 10 (`cube_rtt_scale`).
const CUBE_RTT_SCALE: u64 = 41 * 10;
/// 2^40 / 410 (`cube_factor`): K = ∛(cube_factor · (W_max − cwnd)) in 1/1024 s.
const CUBE_FACTOR: u64 = (1 << 40) / CUBE_RTT_SCALE;

/// The kernel's state, in its types (`struct bictcp`, `u32` segments and jiffies).
#[derive(Clone, Debug)]
pub struct LinuxCubic {
    /// Simulated picoseconds per jiffy: 10^12 / (hz · dilation).
    jiffy_ps: u64,
    /// The kernel's timer frequency (CONFIG_HZ).
    hz: u32,
    /// The kernel's clock runs this many times faster than simulated time.
    dilation: u32,
    /// Segments per `cwnd` step (`ca->cnt`).
    pub cnt: u32,
    pub last_max_cwnd: u32,
    last_cwnd: u32,
    last_time: u32,
    origin: u32,
    /// K in 1/1024 s.
    pub k: u32,
    /// Minimum RTT in ms × 8 of the kernel's clock (`delay_min`; 0: none yet).
    delay_min: u32,
    /// Jiffy the epoch began (none: the next update starts one).
    pub epoch_start: Option<u32>,
    /// Segments acknowledged since the Reno estimate last grew.
    ack_cnt: u32,
    /// The Reno-friendly estimate, segments.
    pub tcp_cwnd: u32,
    /// Segments acknowledged towards the next step (`tp->snd_cwnd_cnt`).
    cwnd_cnt: u32,
}

impl LinuxCubic {
    pub fn new(clock: CubicLinux) -> LinuxCubic {
        LinuxCubic {
            jiffy_ps: 1_000_000_000_000 / (u64::from(clock.hz) * u64::from(clock.dilation)),
            hz: clock.hz,
            dilation: clock.dilation,
            cnt: 0,
            last_max_cwnd: 0,
            last_cwnd: 0,
            last_time: 0,
            origin: 0,
            k: 0,
            delay_min: 0,
            epoch_start: None,
            ack_cnt: 0,
            tcp_cwnd: 0,
            cwnd_cnt: 0,
        }
    }

    /// `tcp_jiffies32` at `now` (the clock starts at 0 with the run).
    pub fn jiffies(&self, now: SimTime) -> u32 {
        (now.0 / self.jiffy_ps) as u32
    }

    /// `msecs_to_jiffies`, rounding up.
    fn ms_to_jiffies(&self, ms: u32) -> u64 {
        (u64::from(ms) * u64::from(self.hz)).div_ceil(1000)
    }

    /// `bictcp_acked`: the minimum RTT from this ACK's sample, on the kernel's clock;
    /// samples in the first second of an epoch are skipped ("right after fast recovery").
    fn on_rtt(&mut self, now: u32, rtt_ps: u64) {
        if self.epoch_start.is_some_and(|e| (now.wrapping_sub(e) as i32) < self.hz as i32) {
            return;
        }
        let us = rtt_ps * u64::from(self.dilation) / 1_000_000;
        let delay = ((us << 3) / 1000).clamp(1, u64::from(u32::MAX)) as u32;
        if self.delay_min == 0 || self.delay_min > delay {
            self.delay_min = delay;
        }
    }

    /// `bictcp_update`: `cnt` for a window of `cwnd` segments, `acked` more acknowledged.
    fn update(&mut self, cwnd: u32, acked: u32, now: u32) {
        self.ack_cnt = self.ack_cnt.wrapping_add(acked);
        if self.last_cwnd == cwnd && (now.wrapping_sub(self.last_time) as i32) <= (self.hz / 32) as i32 {
            return;
        }
        // The cubic function is evaluated at most once per jiffy.
        if !(self.epoch_start.is_some() && now == self.last_time) {
            self.last_cwnd = cwnd;
            self.last_time = now;
            let epoch = match self.epoch_start {
                Some(e) => e,
                None => {
                    self.epoch_start = Some(now);
                    self.ack_cnt = acked;
                    self.tcp_cwnd = cwnd;
                    if self.last_max_cwnd <= cwnd {
                        self.k = 0;
                        self.origin = cwnd;
                    } else {
                        self.k = icbrt(CUBE_FACTOR * u64::from(self.last_max_cwnd - cwnd)) as u32;
                        self.origin = self.last_max_cwnd;
                    }
                    now
                }
            };
            let jiffies = u64::from(now.wrapping_sub(epoch)) + self.ms_to_jiffies(self.delay_min >> 3);
            let t = (jiffies << 10) / u64::from(self.hz);
            let offs = t.abs_diff(u64::from(self.k));
            let delta = (CUBE_RTT_SCALE.wrapping_mul(offs).wrapping_mul(offs).wrapping_mul(offs) >> 40) as u32;
            // u32 as the kernel's `bic_target`.
            let target = if t < u64::from(self.k) { self.origin.wrapping_sub(delta) } else { self.origin.wrapping_add(delta) };
            self.cnt = if target > cwnd { cwnd / (target - cwnd) } else { cwnd.saturating_mul(100) };
            if self.last_max_cwnd == 0 && self.cnt > 20 {
                // Before any loss: at least 5 % per RTT.
                self.cnt = 20;
            }
        }
        let per = ((u64::from(cwnd) * RENO_SCALE) >> 3) as u32;
        if per > 0 {
            self.tcp_cwnd += self.ack_cnt / per;
            self.ack_cnt %= per;
        }
        if self.tcp_cwnd > cwnd {
            self.cnt = self.cnt.min(cwnd / (self.tcp_cwnd - cwnd));
        }
        // At most one segment per two acknowledged.
        self.cnt = self.cnt.max(2);
    }

    /// `bictcp_recalc_ssthresh`: the end of the epoch, W_max with fast convergence, and
    /// ssthresh in segments.
    fn ssthresh(&mut self, cwnd: u32) -> u32 {
        self.epoch_start = None;
        let c = u64::from(cwnd);
        self.last_max_cwnd = if cwnd < self.last_max_cwnd { (c * (BETA_SCALE + BETA) / (2 * BETA_SCALE)) as u32 } else { cwnd };
        ((c * BETA / BETA_SCALE) as u32).max(2)
    }
}

impl CongestionControl for LinuxCubic {
    fn on_ack(&mut self, w: &mut Window, a: &AckInfo) {
        let now = self.jiffies(a.now);
        if let Some(r) = a.rtt {
            self.on_rtt(now, r.0);
        }
        if a.in_recovery {
            return;
        }
        let mss = w.mss;
        let start = segs(w.cwnd, mss);
        let mut cwnd = start;
        // Segments this ACK delivered (a part segment counts as one, as Linux counts skbs).
        let mut acked = a.acked.div_ceil(mss).min(u64::from(u32::MAX)) as u32;
        let ssthresh = segs(w.ssthresh, mss);
        if cwnd < ssthresh {
            // `tcp_slow_start`.
            let grown = cwnd.saturating_add(acked).min(ssthresh);
            acked -= grown - cwnd;
            cwnd = grown;
        }
        if acked > 0 {
            self.update(cwnd, acked, now);
            // `tcp_cong_avoid_ai`.
            if self.cwnd_cnt >= self.cnt {
                self.cwnd_cnt = 0;
                cwnd += 1;
            }
            self.cwnd_cnt += acked;
            if self.cwnd_cnt >= self.cnt {
                let steps = self.cwnd_cnt / self.cnt;
                self.cwnd_cnt -= steps * self.cnt;
                cwnd += steps;
            }
        }
        if cwnd != start {
            w.cwnd = u64::from(cwnd) * mss;
        }
    }

    fn on_loss(&mut self, w: &mut Window, _now: SimTime, _flight: u64) {
        let s = self.ssthresh(segs(w.cwnd, w.mss));
        w.ssthresh = u64::from(s) * w.mss;
        w.cwnd = w.ssthresh;
        self.cwnd_cnt = 0;
    }

    /// `tcp_enter_loss`: ssthresh as for a loss, then `bictcp_reset` forgets W_max, the
    /// epoch and the minimum RTT; the connection sets cwnd to one segment.
    fn on_rto(&mut self, w: &mut Window, _now: SimTime, _flight: u64) {
        w.ssthresh = u64::from(self.ssthresh(segs(w.cwnd, w.mss))) * w.mss;
        *self = LinuxCubic::new(CubicLinux { hz: self.hz, dilation: self.dilation });
    }
}

/// ⌊∛a⌋.
fn icbrt(a: u64) -> u64 {
    let mut x = (a as f64).cbrt() as u64;
    while x * x * x > a {
        x -= 1;
    }
    while (x + 1) * (x + 1) * (x + 1) <= a {
        x += 1;
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Duration;

    const MSS: u64 = 1000;

    /// etalon's hosts: HZ 250 on a clock 20 times faster than the emulated network's, so
    /// a jiffy is 200 µs of simulated time.
    fn etalon() -> LinuxCubic {
        LinuxCubic::new(CubicLinux { hz: 250, dilation: 20 })
    }

    fn ack_at(ps: u64) -> AckInfo {
        AckInfo { now: SimTime(ps), acked: MSS, cum_acked: MSS, ece: false, srtt: None, rtt: None, in_recovery: false, in_flight: 0, snd_una: 0, snd_nxt: 0 }
    }

    #[test]
    fn a_jiffy_is_the_kernel_tick_divided_by_the_dilation() {
        let c = etalon();
        assert_eq!(c.jiffies(SimTime(199_999_999)), 0);
        assert_eq!(c.jiffies(SimTime(200_000_000)), 1);
        let plain = LinuxCubic::new(CubicLinux::default());
        assert_eq!(plain.jiffies(SimTime(4_000_000_000)), 1, "4 ms at HZ 250 on an undilated clock");
        assert_eq!(icbrt(8_036_054_027), 2003);
        assert_eq!(icbrt(8_036_054_026), 2002);
    }

    /// Worked by hand from `tcp_cubic.c` (4.15): a loss at 10 segments, then one segment
    /// acknowledged every 25 µs from 1 ms on (8 per 200 µs jiffy; ACK i in jiffy 5 + ⌊i/8⌋).
    ///
    /// - Loss: W_max = 10, ssthresh = cwnd = ⌊7170/1024⌋ = 7.
    /// - ACK 0 (jiffy 5) starts the epoch: K = ⌊∛(2^40/410 · 3)⌋ = 2003 (1/1024 s); at
    ///   t = 0 the curve is ⌊410 · 2003³ / 2^40⌋ = 2 below W_max, target 8 > 7, so
    ///   cnt = 7/(8 − 7) = 7: the 7th segment (ACK 6) makes cwnd 8.
    /// - ACK 8 (jiffy 6) recomputes (cwnd changed): target 8 = cwnd, cnt = 800. Until
    ///   8 jiffies later (HZ/32 = 7) nothing recomputes it: cwnd holds at 8 through
    ///   ACK 71 (jiffy 13), 1.6 ms, while the Reno count keeps counting.
    /// - ACK 72 (jiffy 14): 73 segments counted since the epoch, one Reno step per
    ///   ⌊8 · 15/8⌋ = 15: the estimate is 7 + 4 = 11 > 8, cnt = ⌊8/3⌋ = 2; the 65
    ///   credits already counted step cwnd to 9 at once. In the same jiffy cnt is not
    ///   recomputed from the curve (only capped by the estimate, ≥ 2 always): cwnd
    ///   grows one per two ACKs to 13 by ACK 79, past the estimate.
    /// - ACK 80 (jiffy 15) recomputes: target 8 < 13, the estimate 11 < 13: cnt = 1300,
    ///   and cwnd holds at 13 again through jiffy 22 (ACK 143).
    #[test]
    fn the_window_holds_for_hz_over_32_jiffies_then_catches_up_with_the_reno_estimate() {
        let mut c = etalon();
        let mut w = Window { cwnd: 10 * MSS, ssthresh: u64::MAX, mss: MSS };
        c.on_loss(&mut w, SimTime::ZERO, 10 * MSS);
        assert_eq!((w.cwnd, w.ssthresh, c.last_max_cwnd), (7 * MSS, 7 * MSS, 10));
        let mut cwnds = Vec::new();
        for i in 0..150u64 {
            c.on_ack(&mut w, &ack_at(1_000_000_000 + i * 25_000_000));
            cwnds.push(w.cwnd / MSS);
            match i {
                0 => assert_eq!((c.k, c.cnt), (2003, 7)),
                80 => assert_eq!((c.cnt, c.tcp_cwnd), (1300, 11)),
                _ => {}
            }
        }
        assert_eq!(&cwnds[..7], &[7, 7, 7, 7, 7, 7, 8]);
        assert!(cwnds[6..72].iter().all(|&x| x == 8), "{:?}", &cwnds[6..72]);
        assert_eq!(&cwnds[72..81], &[9, 10, 10, 11, 11, 12, 12, 13, 13]);
        assert!(cwnds[79..144].iter().all(|&x| x == 13), "{:?}", &cwnds[79..144]);
        // ACK 144 (jiffy 23): 85 counted since ACK 80's 21 left 21, ⌊85/24⌋ = 3 steps
        // make the estimate 14 > 13: cnt = 13, and cwnd 14 by ACK 149.
        assert_eq!((c.tcp_cwnd, cwnds[143], cwnds[149]), (14, 13, 14));
        // A second loss above W_max: W_max = 14, ssthresh ⌊14 · 717/1024⌋ = 9.
        c.on_loss(&mut w, SimTime::ZERO, 14 * MSS);
        assert_eq!((w.cwnd, c.last_max_cwnd, c.epoch_start), (9 * MSS, 14, None));
        // Below it: fast convergence, W_max = ⌊9 · 1741/2048⌋ = 7.
        c.on_loss(&mut w, SimTime::ZERO, 9 * MSS);
        assert_eq!((w.cwnd, c.last_max_cwnd), (6 * MSS, 7));
    }

    /// Without the dilation the same hold lasts 8 jiffies of 4 ms: 20 times longer.
    #[test]
    fn on_an_undilated_clock_the_hold_is_32_ms() {
        let mut c = LinuxCubic::new(CubicLinux::default());
        let mut w = Window { cwnd: 10 * MSS, ssthresh: u64::MAX, mss: MSS };
        c.on_loss(&mut w, SimTime::ZERO, 10 * MSS);
        // ACKs every 500 µs from 20 ms on (jiffy 5), 8 per jiffy as above.
        let mut cwnds = Vec::new();
        for i in 0..81u64 {
            c.on_ack(&mut w, &ack_at(20_000_000_000 + i * 500_000_000));
            cwnds.push(w.cwnd / MSS);
        }
        assert!(cwnds[6..72].iter().all(|&x| x == 8));
        assert_eq!(cwnds[79], 13);
    }

    /// A timeout forgets W_max, the epoch and the minimum RTT (`bictcp_reset`); ssthresh
    /// is set as for a loss; slow start then grows by the segments acknowledged.
    #[test]
    fn a_timeout_resets_the_state_and_slow_start_counts_segments() {
        let mut c = etalon();
        let mut w = Window { cwnd: 20 * MSS, ssthresh: u64::MAX, mss: MSS };
        c.on_ack(&mut w, &AckInfo { rtt: Some(Duration::from_us(50)), ..ack_at(0) });
        assert_eq!(c.delay_min, 8, "50 µs × 20 = 1 ms of the kernel's clock, in ms × 8");
        assert_eq!(w.cwnd, 21 * MSS, "slow start");
        c.on_loss(&mut w, SimTime::ZERO, 21 * MSS);
        c.on_rto(&mut w, SimTime::ZERO, 14 * MSS);
        assert_eq!(w.ssthresh, 9 * MSS, "⌊14 · 717/1024⌋ = 9");
        assert_eq!((c.last_max_cwnd, c.epoch_start, c.delay_min), (0, None, 0));
        w.cwnd = MSS;
        c.on_ack(&mut w, &AckInfo { acked: 3 * MSS, ..ack_at(1) });
        assert_eq!(w.cwnd, 4 * MSS);
        c.on_ack(&mut w, &AckInfo { acked: 7 * MSS, ..ack_at(2) });
        // 5 segments to ssthresh, 2 into congestion avoidance with no W_max: cnt ≤ 20.
        assert_eq!(w.cwnd, 9 * MSS);
        assert!(c.cnt <= 20 && c.cnt >= 2, "{}", c.cnt);
    }
}
