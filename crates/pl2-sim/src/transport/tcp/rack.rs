//! RACK-TLP (RFC 8985) state of one sending connection (`rack_tlp = true`), and its pure
//! rules: RACK's "sent after" order (§6.2 step 2), reordering window (§6.2 step 4) and
//! the tail loss probe's timeout (§7.2). [`super::sender`] drives them: it feeds every
//! newly acknowledged segment to [`Rack::on_delivered`], marks losses with
//! [`Rack::remaining`], and keeps one timer per connection whose meaning is a
//! [`TimerKind`] (§8: the reordering timer, the PTO and the RTO are mutually exclusive).
//!
//! Choices where the RFC leaves room (documented in `docs/model.md`, "TCP"):
//! - RACK.min_RTT is the minimum of every RTT sample of the connection: the RFC asks for a
//!   windowed minimum; Linux's window is 300 s (`tcp_min_rtt_wlen`), longer than any run.
//! - No D-SACK, so the reordering window never grows (RACK.reo_wnd_mult stays 1, §6.2
//!   step 4) and a probe is never found spurious by D-SACK (§7.4).
//! - No timestamps: a resent segment's delivery counts only if its round trip is at least
//!   RACK.min_RTT (§6.2 step 2, the second condition).
//! - TLP.max_ack_delay (the "worst-case delayed ACK timer", WCDelAckT, of §7.2) is the
//!   receiver's `delayed_ack_timeout` when it delays ACKs, 0 otherwise: every host runs
//!   the same `[transport]`, so the sender knows its peer's timer.
//! - Timers fire at the exact time the rules give (the simulator's clock has no ticks;
//!   Linux adds up to two jiffies).

use crate::units::{Duration, SimTime};

/// RFC 8985 §6.2 step 4: DupThresh, the SACKed segments that make the reordering
/// window 0 while no reordering has been seen.
pub const DUP_THRESH: u32 = 3;

/// What the connection's one timer stands for (RFC 8985 §8).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum TimerKind {
    /// Retransmission timeout (RFC 6298).
    Rto,
    /// Tail loss probe timeout (§7.2).
    Pto,
    /// RACK's reordering timer (§6.2 step 5).
    Reo,
}

/// RACK's and TLP's per-connection variables (§5.2, §7.1).
#[derive(Clone, Debug)]
pub struct Rack {
    /// RACK.xmit_ts, RACK.end_seq: the most recently sent segment known delivered
    /// (`None` before the first).
    pub segment: Option<(SimTime, u64)>,
    /// RACK.rtt: the round trip of that segment's latest delivery.
    pub rtt: Duration,
    /// RACK.min_RTT (see the module's choices).
    pub min_rtt: Option<Duration>,
    /// RACK.fack: the highest end sequence delivered so far.
    pub fack: u64,
    /// RACK.reordering_seen.
    pub reordering_seen: bool,
    /// When the reordering timer fires (§6.2 step 5), if armed.
    pub reo_due: Option<SimTime>,
    /// TLP.end_seq: SND.NXT when the outstanding loss probe left (`None`: no probe out).
    pub tlp_end_seq: Option<u64>,
    /// TLP.is_retrans: that probe resent the last segment (no new data was available).
    pub tlp_is_retrans: bool,
    /// An RTT sample was taken since the last probe (§7.3's second condition; false at
    /// the start of the connection).
    pub rtt_sampled_since_probe: bool,
    /// The timer's meaning, and when it is set to fire (`None`: not set).
    pub timer: TimerKind,
    pub timer_at: Option<SimTime>,
    /// When the RTO fires (RFC 6298 §5.3: one RTO after the latest ACK of new data or
    /// the first transmission into an empty flight), whether or not the timer stands for
    /// it now.
    pub rto_due: SimTime,
    /// The PTO is to be (re)started at the next arming (§7.2: after new data was sent,
    /// or an ACK cumulatively acknowledged new data).
    pub pto_restart: bool,
}

impl Default for Rack {
    fn default() -> Self {
        Rack {
            segment: None,
            rtt: Duration::ZERO,
            min_rtt: None,
            fack: 0,
            reordering_seen: false,
            reo_due: None,
            tlp_end_seq: None,
            tlp_is_retrans: false,
            rtt_sampled_since_probe: false,
            timer: TimerKind::Rto,
            timer_at: None,
            rto_due: SimTime::ZERO,
            pto_restart: false,
        }
    }
}

/// RACK_sent_after (§6.2 step 2): segment 1 (sent at `t1`, ending at `e1`) left after
/// segment 2; ties in time are broken by sequence.
pub fn sent_after(t1: SimTime, e1: u64, t2: SimTime, e2: u64) -> bool {
    t1 > t2 || (t1 == t2 && e1 > e2)
}

impl Rack {
    /// An RTT sample of the RFC 6298 estimator: §6.2 step 1 (min_RTT) and §7.3's
    /// "new RTT sample since the last probe".
    pub fn on_rtt_sample(&mut self, r: Duration) {
        self.min_rtt = Some(self.min_rtt.map_or(r, |m| m.min(r)));
        self.rtt_sampled_since_probe = true;
    }

    /// §6.2 step 2 for one segment newly delivered (cumulatively or selectively) at
    /// `now`, last sent at `sent`, ending at `end`, `retx` if ever resent: its round
    /// trip is ambiguous, and ignored, if it was resent and the round trip is shorter
    /// than min_RTT. Callers pass a delivery's segments in any order; only the latest
    /// sent counts, as RACK.rtt ends as that segment's round trip when the RFC walks
    /// them in order of `sent`. Returns whether the segment counted.
    pub fn on_delivered(&mut self, now: SimTime, sent: SimTime, end: u64, retx: bool, best: &mut Option<(SimTime, u64)>) -> bool {
        let rtt = now.since(sent);
        if retx && self.min_rtt.is_some_and(|m| rtt < m) {
            return false;
        }
        if best.is_none_or(|(t, e)| sent_after(sent, end, t, e)) {
            *best = Some((sent, end));
        }
        true
    }

    /// Ends §6.2 step 2 for one ACK: `best` (from [`Self::on_delivered`]) sets RACK.rtt
    /// and, if sent after RACK.segment, becomes it.
    pub fn update(&mut self, now: SimTime, best: Option<(SimTime, u64)>) {
        let Some((t, e)) = best else { return };
        self.rtt = now.since(t);
        if self.segment.is_none_or(|(st, se)| sent_after(t, e, st, se)) {
            self.segment = Some((t, e));
        }
    }

    /// §6.2 step 3 for one segment newly delivered, in sequence order, against `fack`
    /// (RACK.fack as this ACK's walk has raised it so far): a segment below it that was
    /// never resent arrived out of order.
    pub fn detect_reordering(&mut self, fack: &mut u64, end: u64, retx: bool) {
        if end > *fack {
            *fack = end;
        } else if end < *fack && !retx {
            self.reordering_seen = true;
        }
    }

    /// RACK.reo_wnd (§6.2 step 4, RACK.reo_wnd_mult = 1): 0 while no reordering was seen
    /// and the connection is recovering or DupThresh segments are SACKed; otherwise
    /// min_RTT / 4, at most SRTT.
    pub fn reo_wnd(&self, recovering: bool, segs_sacked: u32, srtt: Option<Duration>) -> Duration {
        if !self.reordering_seen && (recovering || segs_sacked >= DUP_THRESH) {
            return Duration::ZERO;
        }
        let w = Duration(self.min_rtt.map_or(0, |m| m.0 / 4));
        srtt.map_or(w, |s| w.min(s))
    }

    /// §6.2 step 5 for one segment not yet delivered, last sent at `sent` and ending at
    /// `end`: `None` if RACK.segment was not sent after it (nothing can be said yet),
    /// else the time left before it is deemed lost (`Some(0)`: lost now).
    pub fn remaining(&self, now: SimTime, sent: SimTime, end: u64, reo_wnd: Duration) -> Option<Duration> {
        let (t, e) = self.segment?;
        if !sent_after(t, e, sent, end) {
            return None;
        }
        let deadline = sent + self.rtt + reo_wnd;
        Some(Duration(deadline.0.saturating_sub(now.0)))
    }
}

/// TLP_calc_PTO (§7.2): max(2·SRTT, `min_pto`), plus `max_ack_delay` (WCDelAckT) when one
/// segment is in flight, or `timeout_init` before any RTT sample; never later than the RTO
/// would fire.
pub fn pto_at(now: SimTime, srtt: Option<Duration>, one_segment: bool, max_ack_delay: Duration, min_pto: Duration, timeout_init: Duration, rto_due: SimTime) -> SimTime {
    let pto = match srtt {
        Some(s) => Duration((2 * s.0).max(min_pto.0) + if one_segment { max_ack_delay.0 } else { 0 }),
        None => timeout_init,
    };
    (now + pto).min(rto_due)
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: u64 = 1_000_000;

    #[test]
    fn pto_is_two_srtt_plus_the_delayed_ack_timer_for_one_segment_capped_at_the_rto() {
        let srtt = Some(Duration(10 * US));
        let far = SimTime(1_000 * US);
        assert_eq!(pto_at(SimTime(5 * US), srtt, false, Duration(40 * US), Duration::ZERO, Duration(1_000 * US), far), SimTime(25 * US));
        assert_eq!(pto_at(SimTime(5 * US), srtt, true, Duration(40 * US), Duration::ZERO, Duration(1_000 * US), far), SimTime(65 * US));
        assert_eq!(pto_at(SimTime(5 * US), None, false, Duration(40 * US), Duration::ZERO, Duration(300 * US), far), SimTime(305 * US));
        assert_eq!(pto_at(SimTime(5 * US), srtt, true, Duration(40 * US), Duration::ZERO, Duration(1_000 * US), SimTime(50 * US)), SimTime(50 * US));
        // Linux's 10 ms floor (here 30 µs): max(2·SRTT, floor), then the one-segment allowance.
        assert_eq!(pto_at(SimTime(5 * US), srtt, false, Duration(40 * US), Duration(30 * US), Duration(1_000 * US), far), SimTime(35 * US));
        assert_eq!(pto_at(SimTime(5 * US), srtt, true, Duration(40 * US), Duration(30 * US), Duration(1_000 * US), far), SimTime(75 * US));
        assert_eq!(pto_at(SimTime(5 * US), srtt, false, Duration(40 * US), Duration(15 * US), Duration(1_000 * US), far), SimTime(25 * US));
    }

    #[test]
    fn reordering_window_is_zero_until_reordering_is_seen_then_a_quarter_min_rtt_at_most_srtt() {
        let mut r = Rack::default();
        r.on_rtt_sample(Duration(40 * US));
        r.on_rtt_sample(Duration(80 * US));
        assert_eq!(r.min_rtt, Some(Duration(40 * US)));
        assert_eq!(r.reo_wnd(false, 0, Some(Duration(50 * US))), Duration(10 * US));
        assert_eq!(r.reo_wnd(true, 0, Some(Duration(50 * US))), Duration::ZERO);
        assert_eq!(r.reo_wnd(false, DUP_THRESH, Some(Duration(50 * US))), Duration::ZERO);
        assert_eq!(r.reo_wnd(false, 0, Some(Duration(8 * US))), Duration(8 * US), "capped at SRTT");
        let mut fack = 0;
        r.detect_reordering(&mut fack, 3000, false);
        r.detect_reordering(&mut fack, 2000, true);
        assert!(!r.reordering_seen, "a resent segment below fack is a repair, not reordering");
        assert_eq!(fack, 3000);
        r.detect_reordering(&mut fack, 1000, false);
        assert!(r.reordering_seen);
        assert_eq!(r.reo_wnd(true, DUP_THRESH, None), Duration(10 * US));
    }

    #[test]
    fn a_segment_is_lost_an_rtt_plus_the_window_after_it_left_if_a_later_one_arrived() {
        let mut r = Rack::default();
        let mut best = None;
        // Segments 0..1000 sent at 0, 1000..2000 at 1 µs; the second is delivered at 30 µs.
        assert!(r.on_delivered(SimTime(30 * US), SimTime(US), 2000, false, &mut best));
        r.update(SimTime(30 * US), best);
        assert_eq!((r.segment, r.rtt), (Some((SimTime(US), 2000)), Duration(29 * US)));
        let w = Duration(2 * US);
        assert_eq!(r.remaining(SimTime(30 * US), SimTime(0), 1000, w), Some(Duration(US)));
        assert_eq!(r.remaining(SimTime(31 * US), SimTime(0), 1000, w), Some(Duration::ZERO));
        assert_eq!(r.remaining(SimTime(31 * US), SimTime(US), 2000, w), None, "not sent before RACK.segment");
        // A resent segment delivered sooner than min_RTT after its resend is ambiguous.
        r.on_rtt_sample(Duration(29 * US));
        let mut best = None;
        assert!(!r.on_delivered(SimTime(40 * US), SimTime(20 * US), 1000, true, &mut best));
        assert_eq!(best, None);
    }
}
