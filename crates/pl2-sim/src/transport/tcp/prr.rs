//! Proportional Rate Reduction (RFC 6937) in fast recovery, as Linux 4.15 runs it
//! (`tcp_cwnd_reduction` in `net/ipv4/tcp_input.c`), selected by `TcpConfig::prr`. The
//! cut to ssthresh is spread over the recovery: while more than ssthresh is in flight,
//! the sender may have sent ⌈ssthresh · delivered / prior cwnd⌉ segments by the time
//! `delivered` segments have been reported delivered since recovery began (RFC 6937
//! §3, "proportional"); once in flight falls to ssthresh or below, it sends as much as
//! the ACK delivered (packet conservation, PRR-CRB), or, when the ACK delivered a
//! retransmitted segment, up to one segment more than the recovery's deficit (PRR-SSRB),
//! never beyond ssthresh. The first ACK of a recovery always releases one segment (the
//! fast retransmit). Counts are in segments, as the kernel's (`tcp_packets_in_flight`,
//! `prr_delivered`, `prr_out`).
//!
//! Without it pl2's recovery sets cwnd = ssthresh at once (RFC 6675 §5: the sender waits
//! until the pipe has drained below ssthresh, then sends one segment per one delivered,
//! and after several losses in a window may send ssthresh − pipe at once).

use super::cc::segs_up;

/// A recovery's PRR state (`prior_cwnd`, `prr_delivered`, `prr_out`), in segments.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Prr {
    prior_cwnd: u32,
    delivered: u32,
    /// Segments sent since recovery began (new data and retransmissions).
    pub out: u32,
}

impl Prr {
    /// A recovery beginning with a window of `cwnd` bytes (`tcp_init_cwnd_reduction`).
    pub fn start(cwnd: u64, mss: u64) -> Prr {
        Prr { prior_cwnd: segs_up(cwnd, mss).max(1), delivered: 0, out: 0 }
    }

    /// Segments, the window when the reduction began.
    pub fn prior_cwnd(&self) -> u32 {
        self.prior_cwnd
    }

    /// A segment of the recovery left.
    pub fn on_sent(&mut self) {
        self.out = self.out.saturating_add(1);
    }

    /// The window in bytes after an ACK that newly delivered (acknowledged or SACKed)
    /// `newly` bytes, `retx_delivered` if a retransmitted segment among them, with `pipe`
    /// bytes in flight after it; `None` (window unchanged) if it delivered nothing.
    pub fn on_ack(&mut self, ssthresh: u64, pipe: u64, newly: u64, retx_delivered: bool, mss: u64) -> Option<u64> {
        if newly == 0 {
            return None;
        }
        let newly = segs_up(newly, mss);
        self.delivered = self.delivered.saturating_add(newly);
        let (ssthresh, in_flight) = (i64::from(segs_up(ssthresh, mss)), i64::from(segs_up(pipe, mss)));
        let delta = ssthresh - in_flight;
        let mut sndcnt = if delta < 0 {
            let allowed = (ssthresh as u64 * u64::from(self.delivered)).div_ceil(u64::from(self.prior_cwnd));
            allowed as i64 - i64::from(self.out)
        } else if retx_delivered {
            delta.min((i64::from(self.delivered) - i64::from(self.out)).max(i64::from(newly)) + 1)
        } else {
            delta.min(i64::from(newly))
        };
        if self.out == 0 {
            sndcnt = sndcnt.max(1);
        }
        Some((in_flight + sndcnt).max(0) as u64 * mss)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    /// RFC 6937's single-loss case worked by hand: 20 segments in flight at cwnd 20,
    /// segment 0 lost, ssthresh 10 (Reno). Each of the 19 duplicate ACKs delivers one
    /// segment (in flight before the k-th ACK's sends: 19 − k + sent); the sender sends
    /// while a segment fits. While more than 10 are in flight it may have sent ⌈10·k/20⌉
    /// by the k-th ACK: 1 (the fast retransmit), 1, 2, 2, … 8, 8 by the 16th. At the 17th
    /// 10 are in flight: conservation, min(10 − 10, 1) = 0; then one per ACK: 9, 10. In
    /// flight ends at ssthresh, and no ACK released more than one segment.
    #[test]
    fn a_single_loss_sends_one_segment_per_two_delivered_until_pipe_reaches_ssthresh() {
        let mut p = Prr::start(20 * MSS, MSS);
        let (mut pipe, mut sent_by) = (19 * MSS, Vec::new());
        for _ in 1..=19 {
            pipe -= MSS;
            let cwnd = p.on_ack(10 * MSS, pipe, MSS, false, MSS).expect("delivered");
            while pipe + MSS <= cwnd {
                pipe += MSS;
                p.on_sent();
            }
            sent_by.push(p.out);
        }
        assert_eq!(sent_by, [1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 8, 9, 10]);
        assert_eq!(pipe, 10 * MSS, "in flight is ssthresh when the recovery's ACKs are in");
    }

    /// Conservation and slow-start reduction bound (pipe below ssthresh after a burst of
    /// losses): with 4 in flight, ssthresh 10 and 2 segments of a recovery already sent,
    /// an ACK delivering one segment releases one (CRB: min(6, 1)); the same ACK
    /// delivering a retransmission releases min(6, max(delivered − out, 1) + 1) = 2
    /// (SSRB, Linux's `FLAG_RETRANS_DATA_ACKED` case), with 3 delivered in all: 2.
    #[test]
    fn below_ssthresh_an_ack_releases_what_it_delivered_or_one_more_for_a_retransmission() {
        for (retx, want) in [(false, 5), (true, 6)] {
            let mut p = Prr { prior_cwnd: 20, delivered: 2, out: 2 };
            assert_eq!(p.on_ack(10 * MSS, 4 * MSS, MSS, retx, MSS), Some(want * MSS), "retx {retx}");
        }
        let mut p = Prr::start(20 * MSS, MSS);
        assert_eq!(p.on_ack(10 * MSS, 5 * MSS, 0, false, MSS), None, "nothing delivered: no change");
    }
}
