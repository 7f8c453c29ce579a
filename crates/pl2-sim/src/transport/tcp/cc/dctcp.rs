//! DCTCP (RFC 8257): data segments are ECT; the receiver echoes CE (ECE, with an
//! immediate ACK whenever the CE state changes); per window of data (until `snd_una`
//! passes the `snd_nxt` recorded at the window's start) the sender measures the fraction
//! F of acknowledged bytes that carried ECE and updates `alpha ← (1 − g)·alpha + g·F`,
//! g = 1/16, alpha starting at 1 (§3.3, 4.2). On the first ECE of a window (outside loss
//! recovery) `cwnd ← cwnd·(1 − alpha/2)` (≥ 2 segments) and `ssthresh` follows; at most
//! once per window of data. Growth and loss response are NewReno's.

use super::newreno::NewReno;
use super::{AckInfo, CongestionControl, Window};
use crate::units::SimTime;

pub const G: f64 = 1.0 / 16.0;

#[derive(Clone, Debug)]
pub struct Dctcp {
    pub alpha: f64,
    reno: NewReno,
    acked: u64,
    marked: u64,
    window_end: Option<u64>,
    /// No further reduction until `snd_una` reaches this.
    cwr_end: u64,
}

impl Default for Dctcp {
    fn default() -> Self {
        Dctcp { alpha: 1.0, reno: NewReno::default(), acked: 0, marked: 0, window_end: None, cwr_end: 0 }
    }
}

impl CongestionControl for Dctcp {
    fn on_ack(&mut self, w: &mut Window, a: &AckInfo) {
        self.acked += a.acked;
        if a.ece {
            self.marked += a.acked;
        }
        let end = *self.window_end.get_or_insert(a.snd_nxt);
        if a.snd_una >= end {
            let f = if self.acked > 0 { self.marked as f64 / self.acked as f64 } else { 0.0 };
            self.alpha = (1.0 - G) * self.alpha + G * f;
            self.acked = 0;
            self.marked = 0;
            self.window_end = Some(a.snd_nxt);
        }
        if a.ece && !a.in_recovery && a.snd_una >= self.cwr_end {
            w.cwnd = ((w.cwnd as f64 * (1.0 - self.alpha / 2.0)) as u64).max(2 * w.mss);
            w.ssthresh = w.cwnd;
            self.cwr_end = a.snd_nxt;
            return;
        }
        self.reno.grow(w, a);
    }
    fn on_loss(&mut self, w: &mut Window, now: SimTime, flight: u64) {
        self.reno.on_loss(w, now, flight);
    }
    fn alpha(&self) -> Option<f64> {
        Some(self.alpha)
    }
    fn ecn(&self) -> bool {
        true
    }
}
