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
    /// ACK counting instead of byte counting (`TcpConfig::byte_counting = false`).
    per_ack: bool,
}

impl NewReno {
    pub fn with_counting(byte_counting: bool) -> NewReno {
        NewReno { acc: 0, per_ack: !byte_counting }
    }

    /// Window growth (shared with DCTCP).
    pub fn grow(&mut self, w: &mut Window, a: &AckInfo) {
        if a.in_recovery {
            return;
        }
        if self.per_ack {
            Self::grow_per_ack(w, a.acked);
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

impl NewReno {
    /// ACK counting (RFC 5681 §3.1), as ns-3's `TcpNewReno`: in slow start
    /// `cwnd += min(N, SMSS)` per ACK (eq. 2); once at `ssthresh`, `cwnd += SMSS·SMSS/cwnd`
    /// (at least one byte) per ACK (eq. 3), also on the ACK that reaches `ssthresh` when it
    /// delivered more than one segment.
    fn grow_per_ack(w: &mut Window, acked: u64) {
        if acked == 0 {
            return;
        }
        if w.cwnd < w.ssthresh {
            w.cwnd += acked.min(w.mss).min(w.ssthresh - w.cwnd);
            if w.cwnd < w.ssthresh || acked <= w.mss {
                return;
            }
        }
        w.cwnd += (w.mss * w.mss / w.cwnd).max(1);
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
