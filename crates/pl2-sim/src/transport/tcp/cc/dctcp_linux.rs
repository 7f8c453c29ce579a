//! DCTCP as Linux 4.15 runs it (`net/ipv4/tcp_dctcp.c` with `tcp_input.c`'s CWR state,
//! the kernel of the reTCP emulator's hosts), selected by `TcpConfig::dctcp_linux`. It
//! differs from `dctcp.rs` (RFC 8257 with the window cut at once) where the kernel's
//! state machine shows:
//!
//! - **No growth while the window is being reduced.** The first ECE outside a reduction
//!   enters CWR (`tcp_try_to_open` → `tcp_enter_cwr` → `tcp_init_cwnd_reduction`):
//!   `high_seq` = snd_nxt, `prior_cwnd` = cwnd, ssthresh = max(cwnd − ⌊cwnd·α⌋/2, 2)
//!   segments (`dctcp_ssthresh`, α in 1/1024). `tcp_cong_control` then runs Proportional
//!   Rate Reduction (RFC 6937, `tcp_cwnd_reduction`) instead of growing: each ACK sets
//!   cwnd = in flight + sndcnt, sndcnt = ⌈ssthresh·delivered/prior_cwnd⌉ − sent while in
//!   flight exceeds ssthresh, else min(ssthresh − in flight, newly delivered), at least
//!   one on the first ACK. CWR ends on an ACK above `high_seq` (`tcp_fastretrans_alert`:
//!   `snd_una != high_seq`), cwnd = ssthresh (`tcp_end_cwnd_reduction`), and that ACK
//!   grows the window if it carries no ECE, or starts the next CWR if it does. Under
//!   steady marking the window therefore only shrinks; RFC 8257 §3.3 leaves growth
//!   between cuts to the base algorithm, which `dctcp.rs` applies on every ACK.
//! - **α in the kernel's integers** (`dctcp_update_alpha`): 1/1024 units from 1024;
//!   per window of data (until snd_una reaches the snd_nxt recorded at the window's
//!   start) α ← α − d + ⌊64 · ECE bytes / bytes⌋, capped at 1024, with the decay
//!   d = `min_not_zero(α, α >> 4)`: ⌊α/16⌋, but below 16/1024 α falls to 0 at once.
//! - **Windows in segments**: growth is `tcp_reno_cong_avoid` (`reno_linux.rs`: `tcp_slow_start`,
//!   then `tcp_cong_avoid_ai`'s credits, reset when a reduction starts).
//!
//! Losses: `dctcp_loss` chooses ssthresh (4.15's α cut, or 5.1's half of cwnd,
//! `dctcp_react_to_loss`); the window is set to it at once, as `dctcp.rs` does, and a
//! reduction under way ends there (Linux carries PRR on into Recovery, but duplicate
//! ACKs, which drive it there, do not reach pl2's congestion controls). A loss in data
//! sent before a reduction began does not cut again (Linux enters Recovery from CWR
//! without a new ssthresh). Not modelled: duplicate ACKs counted as one MSS in α, ECE on
//! duplicate ACKs, `tcp_is_cwnd_limited`.

use super::super::config::DctcpLoss;
use super::super::prr::Prr;
use super::reno_linux::reno_cong_avoid;
use super::{segs, segs_up, AckInfo, CongestionControl, Window};
use crate::units::SimTime;

/// α's full scale, `DCTCP_MAX_ALPHA`.
pub const MAX_ALPHA: u32 = 1024;
/// g = 1/2^4 (`dctcp_shift_g`).
const SHIFT_G: u32 = 4;

/// A window reduction under way (`TCP_CA_CWR`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Cwr {
    /// `snd_nxt` when it began.
    pub high_seq: u64,
    /// Its Proportional Rate Reduction, the same as fast recovery's (`tcp_cwnd_reduction`
    /// serves both); its segments sent are those above `high_seq`.
    pub prr: Prr,
}

#[derive(Clone, Debug)]
pub struct LinuxDctcp {
    /// α in 1/1024 (`dctcp_alpha`).
    pub alpha: u32,
    /// Bytes acknowledged in the current window of data, and of them those with ECE;
    /// `u32` as the kernel's (`acked_bytes_total`, `acked_bytes_ecn`), saturating.
    acked_bytes_total: u32,
    acked_bytes_ecn: u32,
    /// The current window of data ends when snd_una reaches this (`next_seq`).
    next_seq: u64,
    /// Credits towards the next segment of growth (`snd_cwnd_cnt`).
    cwnd_cnt: u32,
    pub cwr: Option<Cwr>,
    /// No ECN reduction until snd_una reaches this: the snd_nxt of the latest loss or
    /// timeout (Linux ignores ECE in Recovery and Loss).
    quiet_until: u64,
    /// snd_nxt at the latest congestion point (`on_congestion_point`).
    loss_nxt: u64,
    loss_una: u64,
    pub loss: DctcpLoss,
}

impl LinuxDctcp {
    pub fn new(loss: DctcpLoss) -> LinuxDctcp {
        LinuxDctcp { alpha: MAX_ALPHA, acked_bytes_total: 0, acked_bytes_ecn: 0, next_seq: 0, cwnd_cnt: 0, cwr: None, quiet_until: 0, loss_nxt: 0, loss_una: 0, loss }
    }

    /// `dctcp_update_alpha` for an ACK that advanced snd_una.
    fn update_alpha(&mut self, a: &AckInfo) {
        if a.cum_acked > 0 {
            let acked = u32::try_from(a.cum_acked).unwrap_or(u32::MAX);
            self.acked_bytes_total = self.acked_bytes_total.saturating_add(acked);
            if a.ece {
                self.acked_bytes_ecn = self.acked_bytes_ecn.saturating_add(acked);
            }
        }
        if a.snd_una >= self.next_seq {
            let decay = self.alpha >> SHIFT_G;
            self.alpha -= if decay == 0 { self.alpha } else { decay };
            if self.acked_bytes_ecn > 0 {
                let f = (u64::from(self.acked_bytes_ecn) << (10 - SHIFT_G)) / u64::from(self.acked_bytes_total.max(1));
                self.alpha = (u64::from(self.alpha) + f).min(u64::from(MAX_ALPHA)) as u32;
            }
            self.acked_bytes_total = 0;
            self.acked_bytes_ecn = 0;
            self.next_seq = a.snd_nxt;
        }
    }

    /// `dctcp_ssthresh`, segments.
    fn ssthresh(&self, cwnd: u32) -> u32 {
        cwnd.saturating_sub(((u64::from(cwnd) * u64::from(self.alpha)) >> 11) as u32).max(2)
    }

    /// ssthresh after a loss, segments: `dctcp_loss = "alpha"` as a mark (4.15's
    /// `dctcp_ssthresh`), `"half"` half of cwnd (5.1's `dctcp_react_to_loss`).
    fn loss_ssthresh(&self, cwnd: u32) -> u32 {
        match self.loss {
            DctcpLoss::Alpha => self.ssthresh(cwnd),
            DctcpLoss::Half => (cwnd >> 1).max(2),
        }
    }
}

impl CongestionControl for LinuxDctcp {
    fn on_ack(&mut self, w: &mut Window, a: &AckInfo) {
        self.update_alpha(a);
        let mss = w.mss;
        if a.in_recovery {
            return;
        }
        let mut cwnd = segs(w.cwnd, mss);
        let ssthresh = segs(w.ssthresh, mss);
        if self.cwr.is_some_and(|c| a.snd_una > c.high_seq) {
            // `tcp_end_cwnd_reduction`.
            self.cwr = None;
            cwnd = ssthresh;
        }
        if self.cwr.is_none() && a.ece && a.snd_una >= self.quiet_until {
            // `tcp_enter_cwr` → `tcp_init_cwnd_reduction`.
            self.cwr = Some(Cwr { high_seq: a.snd_nxt, prr: Prr::start(u64::from(cwnd) * mss, mss) });
            self.cwnd_cnt = 0;
            w.ssthresh = u64::from(self.ssthresh(cwnd)) * mss;
        }
        match &mut self.cwr {
            Some(c) => {
                // `tcp_cwnd_reduction` (PRR, RFC 6937); sent since the reduction began:
                // new data only (no retransmissions happen in CWR).
                c.prr.out = segs_up(a.snd_nxt.saturating_sub(c.high_seq), mss);
                w.cwnd = c.prr.on_ack(w.ssthresh, a.in_flight, a.acked, false, mss).unwrap_or(u64::from(cwnd) * mss);
            }
            None => {
                reno_cong_avoid(&mut cwnd, &mut self.cwnd_cnt, segs(w.ssthresh, mss), segs_up(a.acked, mss));
                w.cwnd = u64::from(cwnd) * mss;
            }
        }
    }

    fn on_loss(&mut self, w: &mut Window, _now: SimTime, _flight: u64) {
        // `tcp_enter_recovery` keeps the ssthresh of a reduction under way.
        let reducing = self.cwr.take().is_some();
        if !reducing && self.loss_una >= self.quiet_until {
            w.ssthresh = u64::from(self.loss_ssthresh(segs(w.cwnd, w.mss))) * w.mss;
        }
        w.cwnd = w.ssthresh;
        self.cwnd_cnt = 0;
        self.quiet_until = self.quiet_until.max(self.loss_nxt);
    }

    /// `tcp_enter_loss`: ssthresh as for a loss, unless a reduction under way still
    /// covers unacknowledged data (its `high_seq` above snd_una: the ssthresh is kept);
    /// the connection then sets cwnd to one segment.
    fn on_rto(&mut self, w: &mut Window, _now: SimTime, _flight: u64) {
        let covered = self.cwr.take().is_some_and(|c| c.high_seq > self.loss_una);
        if !covered {
            w.ssthresh = u64::from(self.loss_ssthresh(segs(w.cwnd, w.mss))) * w.mss;
        }
        self.cwnd_cnt = 0;
        self.quiet_until = self.quiet_until.max(self.loss_nxt);
    }

    fn on_congestion_point(&mut self, snd_una: u64, snd_nxt: u64) {
        self.loss_una = snd_una;
        self.loss_nxt = snd_nxt;
    }

    fn alpha(&self) -> Option<f64> {
        Some(f64::from(self.alpha) / f64::from(MAX_ALPHA))
    }

    fn ecn(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn ack(snd_una: u64, snd_nxt: u64, ece: bool) -> AckInfo {
        AckInfo { ece, in_flight: snd_nxt - snd_una, snd_una, snd_nxt, ..super::super::test_ack(MSS) }
    }

    /// A sender with 20 segments in flight at cwnd 20 (congestion avoidance) and α = 1/2
    /// gets one ACK per segment, the first with ECE; after each ACK it sends while a
    /// segment fits in cwnd. By hand from `tcp_dctcp.c` and `tcp_input.c` (4.15):
    /// ssthresh = 20 − ⌊20·512⌋/2048 = 15; by the k-th ACK PRR has let ⌈15·k/20⌉
    /// segments out while more than 15 are in flight (20 − k + sent): 1, 2, 3, 3, 4, 5,
    /// 6, 6, … 12 by the 16th; at the 17th 15 are in flight and it sends
    /// min(15 − in flight, 1) = 0, then one per ACK: 13, 14, 15 by the 20th (in flight
    /// then 15, cwnd 15); cwnd never grows meanwhile. The 21st ACK (for the
    /// first segment sent in CWR, snd_una above high_seq = 20) ends CWR at cwnd 15 and,
    /// without ECE, grows it (credit 1 of 15: still 15); with ECE it starts the next
    /// reduction at ssthresh 15 − ⌊15·512⌋/2048 = 12.
    #[test]
    fn an_ecn_reduction_runs_prr_without_growth_until_an_ack_above_high_seq() {
        for next_ece in [false, true] {
            let mut d = LinuxDctcp::new(DctcpLoss::Alpha);
            d.alpha = 512;
            d.next_seq = u64::MAX;
            let mut w = Window { cwnd: 20 * MSS, ssthresh: 10 * MSS, mss: MSS };
            let (mut una, mut nxt) = (0u64, 20 * MSS);
            let mut sent_by = Vec::new();
            for k in 1..=20u64 {
                una += MSS;
                d.on_ack(&mut w, &ack(una, nxt, k == 1));
                assert!(w.cwnd <= 20 * MSS, "no growth in CWR (ACK {k})");
                while nxt - una + MSS <= w.cwnd {
                    nxt += MSS;
                }
                sent_by.push((nxt - 20 * MSS) / MSS);
            }
            assert_eq!(sent_by, [1, 2, 3, 3, 4, 5, 6, 6, 7, 8, 9, 9, 10, 11, 12, 12, 12, 13, 14, 15]);
            assert_eq!((w.cwnd, w.ssthresh, nxt - una), (15 * MSS, 15 * MSS, 15 * MSS));
            assert_eq!(d.cwr.map(|c| c.high_seq), Some(20 * MSS), "ACK 20 reaches high_seq, not above it");
            d.on_ack(&mut w, &ack(21 * MSS, nxt, next_ece));
            if next_ece {
                assert_eq!(w.ssthresh, 12 * MSS);
                assert_eq!(d.cwr.map(|c| (c.high_seq, c.prr.prior_cwnd())), Some((nxt, 15)));
            } else {
                assert_eq!((w.cwnd, d.cwr), (15 * MSS, None));
            }
        }
    }

    /// Its state fits beside the other algorithms' in a connection's `Cc` without
    /// growing it (96 B, set by BBR's box and Linux's CUBIC).
    #[test]
    fn its_state_does_not_grow_a_connection() {
        assert!(std::mem::size_of::<LinuxDctcp>() <= 88, "{}", std::mem::size_of::<LinuxDctcp>());
        assert_eq!(std::mem::size_of::<super::super::Cc>(), 96);
    }

    /// `dctcp_update_alpha` in 1/1024: from 1024 with no marks, 1024 − 64 = 960, then
    /// 960 − 60 = 900; a window with half its bytes marked adds ⌊64 · 1/2⌋ = 32 after the
    /// decay (900 − 56 + 32 = 876); at 15 the decay ⌊15/16⌋ = 0 is passed over by
    /// `min_not_zero` and α drops to 0.
    #[test]
    fn alpha_moves_in_the_kernels_integers() {
        let mut d = LinuxDctcp::new(DctcpLoss::Alpha);
        let mut w = Window { cwnd: 100 * MSS, ssthresh: 10 * MSS, mss: MSS };
        let mut una = 0;
        let mut window = |d: &mut LinuxDctcp, w: &mut Window, marked: [bool; 2]| {
            for ece in marked {
                una += MSS;
                d.on_ack(w, &AckInfo { in_recovery: true, ..ack(una, una + 2 * MSS, ece) });
            }
            d.alpha
        };
        assert_eq!(window(&mut d, &mut w, [false, false]), 960, "the first ACK ends the first window");
        assert_eq!(window(&mut d, &mut w, [false, false]), 900);
        assert_eq!(window(&mut d, &mut w, [true, false]), 876);
        d.alpha = 15;
        assert_eq!(window(&mut d, &mut w, [false, false]), 0);
    }
}
