//! CUBIC (RFC 9438) with C = 0.4, β = 0.7, fast convergence (§4.7) and the
//! Reno-friendly region (§4.3). Windows are computed in segments (f64), time in seconds.
//!
//! - On loss: `cwnd_prior` = cwnd at the loss, `W_max` = cwnd (reduced to cwnd·(1 + β)/2
//!   by fast convergence when cwnd is below `W_max`, compared with `W_max` as the last
//!   reduction left it, §4.7, as Linux and ns-3 do), `ssthresh = cwnd = max(β·cwnd, 2)`; the next
//!   congestion-avoidance ACK starts an epoch with `K = ∛(W_max(1 − β)/C)` (eq. 2).
//! - Per ACK in congestion avoidance: target = `W_cubic(t + RTT)` clamped to
//!   [cwnd, 1.5·cwnd]; cwnd grows by `(target − cwnd)/cwnd` per segment acked (§4.4).
//!   The Reno estimate `W_est` grows by `α·acked/cwnd` with α = 3(1 − β)/(1 + β) (1 once
//!   `W_est ≥ cwnd_prior`, §4.3; not once it reaches the fast-convergence-lowered
//!   `W_max`); when `W_cubic(t) < W_est` cwnd = `W_est` (Reno-friendly). With
//!   `linux_alpha` α never turns to 1 (Linux's and ns-3's rule).

use super::{slow_start, AckInfo, CongestionControl, Window};
use crate::units::SimTime;

pub const C: f64 = 0.4;
pub const BETA: f64 = 0.7;

#[derive(Clone, Debug, Default)]
pub struct Cubic {
    /// Segments.
    pub w_max: f64,
    pub k: f64,
    pub epoch: Option<SimTime>,
    pub w_est: f64,
    /// cwnd (segments) when ssthresh was last set (RFC 9438 §4.6 `cwnd_prior`).
    pub cwnd_prior: f64,
    /// Window in segments as a real number (cwnd in bytes is its floor × MSS).
    cwnd_f: f64,
    /// The last ACK's window came from the Reno-friendly estimate.
    pub reno_friendly: bool,
    /// α stays 3(1 − β)/(1 + β) above `cwnd_prior` (`TcpConfig::cubic_alpha = "linux"`).
    pub linux_alpha: bool,
}

impl Cubic {
    /// W_cubic(t) in segments, `t` seconds after the epoch start (RFC 9438 eq. 1).
    pub fn w_cubic(&self, t: f64) -> f64 {
        C * (t - self.k).powi(3) + self.w_max
    }
}

impl CongestionControl for Cubic {
    fn on_ack(&mut self, w: &mut Window, a: &AckInfo) {
        if a.in_recovery {
            return;
        }
        let left = slow_start(w, a.acked);
        if left == 0 {
            self.cwnd_f = w.cwnd as f64 / w.mss as f64;
            return;
        }
        let mss = w.mss as f64;
        let cwnd = (w.cwnd as f64 / mss).max(self.cwnd_f.min(w.cwnd as f64 / mss + 1.0));
        let acked = left as f64 / mss;
        let epoch = match self.epoch {
            Some(e) => e,
            None => {
                // No loss yet (left slow start by ssthresh): W_max = cwnd, K = 0.
                if self.w_max < cwnd {
                    self.w_max = cwnd;
                    self.cwnd_prior = cwnd;
                    self.k = 0.0;
                }
                self.w_est = cwnd;
                self.epoch = Some(a.now);
                a.now
            }
        };
        let t = a.now.since(epoch).as_secs_f64();
        let rtt = a.srtt.map_or(0.0, |d| d.as_secs_f64());
        let alpha = if self.w_est >= self.cwnd_prior && !self.linux_alpha { 1.0 } else { 3.0 * (1.0 - BETA) / (1.0 + BETA) };
        self.w_est += alpha * acked / cwnd;
        let new = if self.w_cubic(t) < self.w_est {
            self.reno_friendly = true;
            self.w_est.max(cwnd)
        } else {
            self.reno_friendly = false;
            let target = self.w_cubic(t + rtt).clamp(cwnd, 1.5 * cwnd);
            cwnd + (target - cwnd) / cwnd * acked
        };
        self.cwnd_f = new;
        w.cwnd = ((new * mss) as u64).max(w.cwnd);
    }

    fn on_loss(&mut self, w: &mut Window, _now: SimTime, _flight: u64) {
        let mss = w.mss as f64;
        let cwnd = w.cwnd as f64 / mss;
        self.cwnd_prior = cwnd;
        if cwnd < self.w_max {
            self.w_max = cwnd * (1.0 + BETA) / 2.0;
        } else {
            self.w_max = cwnd;
        }
        let new = (cwnd * BETA).max(2.0);
        w.ssthresh = (new * mss) as u64;
        w.cwnd = w.ssthresh;
        self.cwnd_f = new;
        self.k = (self.w_max * (1.0 - BETA) / C).cbrt();
        self.w_est = new;
        // The epoch starts at the first ACK in congestion avoidance.
        self.epoch = None;
    }

    /// RFC 9438 §4.8: a timeout reduces like a loss (the connection then sets cwnd to
    /// one segment); ssthresh = β·cwnd.
    fn on_rto(&mut self, w: &mut Window, now: SimTime, flight: u64) {
        self.on_loss(w, now, flight);
    }
}
