//! DCTCP (RFC 8257): data segments are ECT; the receiver echoes CE (ECE, with an
//! immediate ACK whenever the CE state changes); per window of data (until `snd_una`
//! passes the `snd_nxt` recorded at the window's start) the sender measures the fraction
//! F of acknowledged bytes that carried ECE and updates `alpha ← (1 − g)·alpha + g·F`,
//! g = 1/16, alpha starting at 1 (§3.3, 4.2). On the first ECE of a window (outside loss
//! recovery) `cwnd ← cwnd·(1 − alpha/2)` (≥ 2 segments) and `ssthresh` follows; at most
//! once per window of data. Growth and loss response are NewReno's, except that a loss
//! in a window of data the ECN response has already cut (the first unacknowledged
//! segment was sent before the cut's `snd_nxt`) does not cut again: RFC 3168 §6.1.2,
//! "the TCP sender's congestion window should be reduced only once in response to a
//! series of dropped and/or CE packets from a single window of data" (Linux likewise
//! enters recovery from CWR without a second reduction, `tcp_enter_recovery`; ns-3 stays
//! in CWR and resends what its scoreboard marks lost). A timeout always reduces, and
//! ECE for data sent before a loss or timeout does not cut again. With `dctcp_loss =
//! "alpha"` a loss (fast recovery or timeout) sets `ssthresh ← max(cwnd·(1 − α/2), 2
//! segments)` instead of halving the flight, as Linux 4.x–5.0's `dctcp_ssthresh`
//! did for losses and marks alike (RFC 8257 §3.5's halving came with Linux 5.1's
//! `dctcp_react_to_loss`).

use super::newreno::NewReno;
use crate::transport::tcp::config::DctcpLoss;
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
    pub(crate) cwr_end: u64,
    /// `snd_una` and `snd_nxt` when the latest loss or timeout was detected.
    snd_una: u64,
    snd_nxt: u64,
    pub loss: DctcpLoss,
}

impl Dctcp {
    /// DCTCP growing its window as `reno` does (byte or ACK counting).
    pub fn with_reno(reno: NewReno) -> Dctcp {
        Dctcp { reno, ..Dctcp::default() }
    }
}

impl Default for Dctcp {
    fn default() -> Self {
        Dctcp { alpha: 1.0, reno: NewReno::default(), acked: 0, marked: 0, window_end: None, cwr_end: 0, snd_una: 0, snd_nxt: 0, loss: DctcpLoss::Half }
    }
}

impl Dctcp {
    /// `dctcp_ssthresh`: cwnd · (1 − α/2), at least 2 segments.
    fn alpha_cut(&self, w: &Window) -> u64 {
        ((w.cwnd as f64 * (1.0 - self.alpha / 2.0)) as u64).max(2 * w.mss)
    }
}

impl CongestionControl for Dctcp {
    fn on_ack(&mut self, w: &mut Window, a: &AckInfo) {
        self.acked += a.cum_acked;
        if a.ece {
            self.marked += a.cum_acked;
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
        if self.snd_una < self.cwr_end {
            // The loss belongs to the window the ECN response already cut (RFC 3168
            // §6.1.2): recovery runs with the window as it is.
            return;
        }
        match self.loss {
            DctcpLoss::Half => self.reno.on_loss(w, now, flight),
            DctcpLoss::Alpha => {
                let cut = self.alpha_cut(w);
                self.reno.on_loss(w, now, flight);
                w.ssthresh = cut;
                w.cwnd = cut;
            }
        }
        self.cwr_end = self.cwr_end.max(self.snd_nxt);
    }
    fn on_rto(&mut self, w: &mut Window, now: SimTime, flight: u64) {
        // A timeout always reduces (RFC 5681 eq. 4; RFC 3168 §6.1.2: a dropped
        // retransmission is a new instance of congestion); ECE for data sent before it
        // does not cut again (Linux ignores ECE in its Loss state).
        let cut = self.alpha_cut(w);
        self.reno.on_loss(w, now, flight);
        w.ssthresh = match self.loss {
            DctcpLoss::Half => (flight / 2).max(2 * w.mss),
            DctcpLoss::Alpha => cut,
        };
        self.cwr_end = self.cwr_end.max(self.snd_nxt);
    }
    fn on_congestion_point(&mut self, snd_una: u64, snd_nxt: u64) {
        self.snd_una = snd_una;
        self.snd_nxt = snd_nxt;
    }
    fn alpha(&self) -> Option<f64> {
        Some(self.alpha)
    }
    fn ecn(&self) -> bool {
        true
    }
}
