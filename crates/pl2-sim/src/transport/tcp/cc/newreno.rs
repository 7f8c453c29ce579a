//! NewReno's window (RFC 5681): slow start below `ssthresh`, then one SMSS per window
//! of data acknowledged (byte counting: `cwnd += SMSS · acked / cwnd`); on loss
//! `ssthresh = max(flight / 2, 2·SMSS)` and `cwnd = ssthresh`, with the flight the
//! connection passes: RFC 6675's pipe (see `sender.rs`).

use super::{slow_start, AckInfo, CongestionControl, Window};
use crate::units::SimTime;

#[derive(Clone, Debug, Default)]
pub struct NewReno {
    /// Bytes acknowledged in congestion avoidance not yet turned into window.
    acc: u64,
}

impl NewReno {
    /// Congestion avoidance growth (shared with DCTCP).
    pub fn grow(&mut self, w: &mut Window, a: &AckInfo) {
        if a.in_recovery {
            return;
        }
        let left = slow_start(w, a.acked);
        if left == 0 {
            return;
        }
        self.acc += left;
        while self.acc >= w.cwnd {
            self.acc -= w.cwnd;
            w.cwnd += w.mss;
        }
    }
}

impl CongestionControl for NewReno {
    fn on_ack(&mut self, w: &mut Window, a: &AckInfo) {
        self.grow(w, a);
    }
    fn on_loss(&mut self, w: &mut Window, _now: SimTime, flight: u64) {
        w.ssthresh = (flight / 2).max(2 * w.mss);
        w.cwnd = w.ssthresh;
        self.acc = 0;
    }
}
