//! Reno as Linux 4.15 runs it (`tcp_reno_cong_avoid`, `tcp_reno_ssthresh` in
//! `net/ipv4/tcp_cong.c`, the kernel of the reTCP emulator's hosts), selected by
//! `TcpConfig::reno_linux`. It differs from `newreno.rs` (RFC 5681 in bytes) in two
//! places:
//!
//! - **ssthresh from cwnd, not from the flight.** `tcp_reno_ssthresh` is
//!   max(cwnd / 2, 2) segments; RFC 5681 eq. 4 halves FlightSize (pl2: RFC 6675's pipe).
//!   They differ whenever the flight and cwnd differ when a loss is found: SACKed
//!   segments above a hole leave the pipe, and after reTCP's jump down the old window is
//!   still in flight.
//! - **Windows in segments**: growth is `tcp_slow_start` (cwnd + acked segments, up to
//!   ssthresh) then `tcp_cong_avoid_ai` (a credit per segment acknowledged,
//!   `snd_cwnd_cnt`; a segment of window per cwnd credits), reset when a loss or a
//!   timeout cuts the window.
//!
//! A timeout (`tcp_enter_loss`) takes a new ssthresh unless it comes in a fast recovery
//! still under way (snd_una below the snd_nxt of the loss that began it), which keeps
//! the recovery's. Not modelled: `tcp_is_cwnd_limited` (the window grows whether or not
//! the sender filled it), `tcp_reno_undo_cwnd` (spurious-retransmission undo).

use super::{segs, AckInfo, CongestionControl, Window};
use crate::units::SimTime;

#[derive(Clone, Debug, Default)]
pub struct LinuxReno {
    /// Credits towards the next segment of growth (`snd_cwnd_cnt`).
    cwnd_cnt: u32,
    /// snd_una and snd_nxt at the latest congestion point (`on_congestion_point`).
    loss_una: u64,
    loss_nxt: u64,
    /// A fast recovery covers data below this: the snd_nxt when it began (`high_seq`).
    recovery_high: u64,
}

/// `tcp_reno_cong_avoid` on a window of `cwnd` segments with `ssthresh`, for `acked`
/// segments newly delivered, `cwnd_cnt` the connection's `snd_cwnd_cnt`: slow start up
/// to ssthresh, the rest as `tcp_cong_avoid_ai` credits with w = cwnd.
pub(crate) fn reno_cong_avoid(cwnd: &mut u32, cwnd_cnt: &mut u32, ssthresh: u32, mut acked: u32) {
    if *cwnd < ssthresh {
        let grown = cwnd.saturating_add(acked).min(ssthresh);
        acked -= grown - *cwnd;
        *cwnd = grown;
        if acked == 0 {
            return;
        }
    }
    let w = (*cwnd).max(1);
    if *cwnd_cnt >= w {
        *cwnd_cnt = 0;
        *cwnd += 1;
    }
    *cwnd_cnt += acked;
    if *cwnd_cnt >= w {
        let steps = *cwnd_cnt / w;
        *cwnd_cnt -= steps * w;
        *cwnd += steps;
    }
}

impl LinuxReno {
    /// `tcp_reno_ssthresh`, segments.
    fn ssthresh(cwnd: u32) -> u32 {
        (cwnd >> 1).max(2)
    }
}

impl CongestionControl for LinuxReno {
    fn on_ack(&mut self, w: &mut Window, a: &AckInfo) {
        if a.in_recovery {
            return;
        }
        let mss = w.mss;
        let mut cwnd = segs(w.cwnd, mss);
        reno_cong_avoid(&mut cwnd, &mut self.cwnd_cnt, segs(w.ssthresh, mss), super::segs_up(a.acked, mss));
        w.cwnd = u64::from(cwnd) * mss;
    }

    fn on_loss(&mut self, w: &mut Window, _now: SimTime, _flight: u64) {
        w.ssthresh = u64::from(Self::ssthresh(segs(w.cwnd, w.mss))) * w.mss;
        w.cwnd = w.ssthresh;
        self.cwnd_cnt = 0;
        self.recovery_high = self.loss_nxt;
    }

    /// `tcp_enter_loss`: a new ssthresh unless a fast recovery still covers unacknowledged
    /// data; the connection then sets cwnd to one segment.
    fn on_rto(&mut self, w: &mut Window, _now: SimTime, _flight: u64) {
        if self.recovery_high <= self.loss_una {
            w.ssthresh = u64::from(Self::ssthresh(segs(w.cwnd, w.mss))) * w.mss;
        }
        self.cwnd_cnt = 0;
    }

    fn on_congestion_point(&mut self, snd_una: u64, snd_nxt: u64) {
        self.loss_una = snd_una;
        self.loss_nxt = snd_nxt;
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_ack as ack;
    use super::*;

    const MSS: u64 = 1000;

    /// By hand from `tcp_cong.c`: at cwnd 8, ssthresh 10, an ACK for 3 segments slow-starts
    /// to 10 and leaves 1 credit; 9 more single-segment ACKs make 10 credits = w, so
    /// cwnd 11 at the 9th; then 11 ACKs for one more.
    #[test]
    fn slow_start_to_ssthresh_then_one_segment_per_window_of_credits() {
        let mut r = LinuxReno::default();
        let mut w = Window { cwnd: 8 * MSS, ssthresh: 10 * MSS, mss: MSS };
        r.on_ack(&mut w, &ack(3 * MSS));
        assert_eq!((w.cwnd, r.cwnd_cnt), (10 * MSS, 1));
        let mut grew_at = Vec::new();
        for k in 1..=20 {
            let before = w.cwnd;
            r.on_ack(&mut w, &ack(MSS));
            if w.cwnd > before {
                grew_at.push(k);
            }
        }
        assert_eq!(grew_at, [9, 20]);
        assert_eq!(w.cwnd, 12 * MSS);
    }

    /// `tcp_reno_ssthresh` halves cwnd, not the flight (RFC 5681 would take 6 / 2 = 3
    /// segments here), floored at 2 segments; cwnd 41 → 20.
    #[test]
    fn a_loss_halves_the_window_whatever_is_in_flight() {
        let mut r = LinuxReno::default();
        let mut w = Window { cwnd: 41 * MSS, ssthresh: u64::MAX, mss: MSS };
        r.on_loss(&mut w, SimTime::ZERO, 6 * MSS);
        assert_eq!((w.cwnd, w.ssthresh), (20 * MSS, 20 * MSS));
        let mut w = Window { cwnd: 3 * MSS, ssthresh: u64::MAX, mss: MSS };
        r.on_loss(&mut w, SimTime::ZERO, 3 * MSS);
        assert_eq!(w.ssthresh, 2 * MSS);
    }

    /// `tcp_enter_loss` keeps the ssthresh of a fast recovery still under way (the loss at
    /// snd_nxt 50 000 covers snd_una 30 000) and takes cwnd / 2 once it is over.
    #[test]
    fn a_timeout_in_recovery_keeps_its_ssthresh() {
        let mut r = LinuxReno::default();
        let mut w = Window { cwnd: 40 * MSS, ssthresh: u64::MAX, mss: MSS };
        r.on_congestion_point(20 * MSS, 50 * MSS);
        r.on_loss(&mut w, SimTime::ZERO, 30 * MSS);
        assert_eq!(w.ssthresh, 20 * MSS);
        r.on_congestion_point(30 * MSS, 50 * MSS);
        r.on_rto(&mut w, SimTime::ZERO, 20 * MSS);
        assert_eq!(w.ssthresh, 20 * MSS, "recovery under way: kept");
        w.cwnd = 16 * MSS;
        r.on_congestion_point(50 * MSS, 70 * MSS);
        r.on_rto(&mut w, SimTime::ZERO, 20 * MSS);
        assert_eq!(w.ssthresh, 8 * MSS, "recovery over: cwnd / 2");
    }
}
