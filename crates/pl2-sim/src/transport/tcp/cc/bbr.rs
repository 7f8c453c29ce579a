//! BBR v1 (Cardwell, Cheng, Gunn, Hassas Yeganeh and Jacobson, "BBR: Congestion-Based
//! Congestion Control", ACM Queue 14(5), 2016), as Linux 4.15 runs it
//! (`net/ipv4/tcp_bbr.c`; etalon's hosts ran Ubuntu's 4.15.0-50). Function names below
//! are that file's.
//!
//! BBR keeps a model of the path: the bottleneck bandwidth (a windowed maximum of
//! delivery-rate samples over 10 round trips, [`MaxFilter`]) and the round-trip
//! propagation time (a windowed minimum over `min_rtt_window`). It sets a pacing rate
//! (bandwidth × `pacing_gain`) and a window (bandwidth × min RTT × `cwnd_gain` plus
//! three sending units), and moves through STARTUP (gain 2/ln 2 until the bandwidth
//! stops growing by 25 % for three rounds), DRAIN (the inverse gain until the queue it
//! built is gone), PROBE_BW (an eight-phase gain cycle 5/4, 3/4, 1 × 6, starting at a
//! random phase) and PROBE_RTT (four segments for `probe_rtt_duration` and a round
//! trip when the minimum RTT has not been seen again for `min_rtt_window`). Loss does
//! not cut the window: fast recovery holds it to packet conservation for a round and
//! restores it afterwards; a timeout leaves it at one segment to grow back by what is
//! delivered. The long-term ("policer") estimator (`bbr_lt_bw_sampling`) is included:
//! when two sampling intervals of 4-16 rounds with more than 50/256 of their data lost
//! agree within 1/8, BBR pins its bandwidth to their mean for 48 rounds.
//!
//! Units: pl2 counts the window in bytes where Linux counts segments; the bandwidth is
//! in payload bytes per second, the pacing rate in bytes per second with the 40 bytes
//! of IPv4 and TCP headers per segment (`bbr_rate_bytes_per_sec` multiplies by
//! `tcp_mss_to_mtu`). Gains are Linux's fixed-point values (units of 1/256).
//! Times are exact where Linux rounds to jiffies or milliseconds (the long-term
//! interval's length, the filters' expiry). Not modelled: restart after idle
//! (`CA_EVENT_TX_START`, `idle_restart`): the connection's sender has no idle restart
//! either. The delivery-rate samples come from the connection ([`RateSample`]; Linux
//! `net/ipv4/tcp_rate.c`).

use super::{AckInfo, CongestionControl, Window};
use crate::rng::SimRng;
use crate::transport::tcp::config::BbrConfig;
use crate::units::{Duration, SimTime};

/// `BBR_UNIT`: gains are fixed point in units of 1/256.
const UNIT: f64 = 256.0;
/// `bbr_high_gain` = 2885/1000 + 1/256 (2/ln 2, rounded up): STARTUP's gains.
const HIGH_GAIN: f64 = (256 * 2885 / 1000 + 1) as f64 / UNIT;
/// `bbr_drain_gain` = 1000/2885: DRAIN's pacing gain.
const DRAIN_GAIN: f64 = (256 * 1000 / 2885) as f64 / UNIT;
/// `bbr_cwnd_gain`: PROBE_BW's window gain.
const CWND_GAIN: f64 = 2.0;
/// `bbr_pacing_gain`: PROBE_BW's eight phases.
const PACING_GAIN: [f64; 8] = [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
/// `bbr_bw_rtts` = `CYCLE_LEN` + 2: the bandwidth filter's window, in round trips.
const BW_RTTS: u64 = 10;
/// `bbr_cwnd_min_target`: the least window, and PROBE_RTT's, in segments.
const CWND_MIN_SEGS: u64 = 4;
/// `bbr_full_bw_thresh` (5/4) and `bbr_full_bw_cnt`: STARTUP ends after three rounds
/// without 25 % more bandwidth.
const FULL_BW_THRESH: f64 = 1.25;
const FULL_BW_CNT: u32 = 3;
/// Long-term sampling: intervals of at least 4 rounds (`bbr_lt_intvl_min_rtts`), lossy
/// above 50/256 (`bbr_lt_loss_thresh`), consistent within 1/8 (`bbr_lt_bw_ratio`) or
/// 4 kbit/s (`bbr_lt_bw_diff`), used for 48 rounds (`bbr_lt_bw_max_rtts`).
const LT_INTVL_MIN_RTTS: u32 = 4;
const LT_LOSS_THRESH: f64 = 50.0 / UNIT;
const LT_BW_RATIO: f64 = 1.0 / 8.0;
const LT_BW_DIFF_BYTES_PER_S: f64 = 4000.0 / 8.0;
const LT_BW_MAX_RTTS: u32 = 48;
/// `bbr_min_tso_rate` (1.2 Mbit/s): below it a sending unit may be one segment.
const MIN_TSO_RATE_BYTES_PER_S: f64 = 1_200_000.0 / 8.0;
/// A sending unit is at most 127 segments (`bbr_set_tso_segs_goal`) and 64 KiB
/// (`GSO_MAX_SIZE`).
const UNIT_MAX_SEGS: u64 = 127;
const UNIT_MAX_BYTES: u64 = 64 << 10;
/// IPv4 and TCP headers of a data segment (no options): `tcp_mss_to_mtu` − MSS.
pub const HEADER_BYTES: u64 = 40;

/// The connection's loss-recovery state, as BBR sees it (Linux `icsk_ca_state`; Open
/// stands for Open, Disorder and CWR).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CaState {
    Open,
    Recovery,
    Loss,
}

/// One ACK's delivery-rate sample and the connection's counts after it (Linux
/// `struct rate_sample` and the `tcp_sock` fields `bbr_main` reads).
#[derive(Copy, Clone, Debug)]
pub struct RateSample {
    pub now: SimTime,
    /// Bytes this ACK newly reports delivered (SACKed or cumulatively acknowledged).
    pub acked_sacked: u64,
    /// Bytes delivered over the sample's interval and the interval, when the sample is
    /// valid (`tcp_rate_gen`: a sent segment was delivered, and the interval is at least
    /// the minimum RTT).
    pub rate: Option<(u64, Duration)>,
    /// The connection's delivered count when the sampled segment was sent.
    pub prior_delivered: u64,
    /// The sampled segment was sent while the sender was application-limited.
    pub is_app_limited: bool,
    /// This ACK's RTT sample (none when it covers a resent segment, Karn).
    pub rtt: Option<Duration>,
    /// Bytes newly marked lost while processing this ACK.
    pub losses: u64,
    /// Bytes in flight before this ACK and after it.
    pub prior_in_flight: u64,
    pub in_flight: u64,
    /// The connection's bytes delivered so far (`tp->delivered`), bytes marked lost so
    /// far (`tp->lost`), and when the latest delivery was reported (`delivered_mstamp`).
    pub delivered: u64,
    pub lost: u64,
    pub delivered_time: SimTime,
    pub state: CaState,
    pub srtt: Option<Duration>,
}

/// Kathleen Nichols' windowed running maximum over three samples (Linux
/// `lib/win_minmax.c`, `minmax_running_max`), with time in round trips.
#[derive(Copy, Clone, Debug, Default)]
pub struct MaxFilter {
    s: [(u64, f64); 3],
}

impl MaxFilter {
    pub fn get(&self) -> f64 {
        self.s[0].1
    }

    fn reset(&mut self, t: u64, v: f64) -> f64 {
        self.s = [(t, v); 3];
        v
    }

    /// Adds the sample `v` taken at round `t`; returns the maximum over the window.
    pub fn update(&mut self, win: u64, t: u64, v: f64) -> f64 {
        if v >= self.s[0].1 || t - self.s[2].0 > win {
            return self.reset(t, v);
        }
        if v >= self.s[1].1 {
            self.s[2] = (t, v);
            self.s[1] = (t, v);
        } else if v >= self.s[2].1 {
            self.s[2] = (t, v);
        }
        // `minmax_subwin_update`: age the best samples out of the window.
        let dt = t - self.s[0].0;
        if dt > win {
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = (t, v);
            if t - self.s[0].0 > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = (t, v);
            }
        } else if self.s[1].0 == self.s[0].0 && dt > win / 4 {
            self.s[2] = (t, v);
            self.s[1] = (t, v);
        } else if self.s[2].0 == self.s[1].0 && dt > win / 2 {
            self.s[2] = (t, v);
        }
        self.s[0].1
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Mode {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

/// The long-term bandwidth estimator's state (`lt_*` fields).
#[derive(Copy, Clone, Debug, Default)]
struct LongTerm {
    is_sampling: bool,
    use_bw: bool,
    bw: f64,
    rtt_cnt: u32,
    last_stamp: SimTime,
    last_delivered: u64,
    last_lost: u64,
}

#[derive(Clone, Debug)]
pub struct Bbr {
    cfg: BbrConfig,
    mss: u64,
    init_cwnd: u64,
    pub mode: Mode,
    pub pacing_gain: f64,
    cwnd_gain: f64,
    bw: MaxFilter,
    rtt_cnt: u64,
    next_rtt_delivered: u64,
    round_start: bool,
    min_rtt: Option<Duration>,
    min_rtt_stamp: SimTime,
    full_bw: f64,
    full_bw_cnt: u32,
    cycle_idx: usize,
    cycle_stamp: SimTime,
    prior_cwnd: u64,
    prev_state: CaState,
    packet_conservation: bool,
    restore_cwnd: bool,
    probe_rtt_done: Option<SimTime>,
    probe_rtt_round_done: bool,
    /// Bytes per second, headers included; 0 until set.
    pacing_rate: f64,
    has_seen_rtt: bool,
    unit_segs: u64,
    lt: LongTerm,
    /// PROBE_RTT marks the connection application-limited (`tp->app_limited`); the
    /// connection reads and clears this.
    pub app_limited_request: bool,
    /// A timeout happened: the long-term estimator sees it as a loss at the next sample
    /// (Linux runs it at the timeout, from the same counts).
    lt_rto_pending: bool,
    rng: SimRng,
}

impl Bbr {
    /// `bbr_init`: STARTUP, the pacing rate from the initial window over `initial_rtt`.
    pub fn new(cfg: BbrConfig, mss: u64, init_cwnd: u64, rng: SimRng) -> Bbr {
        let mut b = Bbr {
            cfg,
            mss,
            init_cwnd,
            mode: Mode::Startup,
            pacing_gain: HIGH_GAIN,
            cwnd_gain: HIGH_GAIN,
            bw: MaxFilter::default(),
            rtt_cnt: 0,
            next_rtt_delivered: 0,
            round_start: false,
            min_rtt: None,
            min_rtt_stamp: SimTime::ZERO,
            full_bw: 0.0,
            full_bw_cnt: 0,
            cycle_idx: 0,
            cycle_stamp: SimTime::ZERO,
            prior_cwnd: 0,
            prev_state: CaState::Open,
            packet_conservation: false,
            restore_cwnd: false,
            probe_rtt_done: None,
            probe_rtt_round_done: false,
            pacing_rate: 0.0,
            has_seen_rtt: false,
            unit_segs: 0,
            lt: LongTerm::default(),
            app_limited_request: false,
            lt_rto_pending: false,
            rng,
        };
        b.init_pacing_rate(init_cwnd, None);
        b
    }

    /// Pacing rate, bytes per second with headers.
    pub fn pacing_rate(&self) -> f64 {
        self.pacing_rate
    }

    /// Segments per sending unit (`tso_segs_goal`; at least 2 before the first ACK).
    pub fn unit_segs(&self) -> u64 {
        self.unit_segs.max(2)
    }

    /// Time to pace a unit of `payload` bytes (one set of headers, as a GSO skb).
    pub fn unit_gap(&self, payload: u64) -> Duration {
        if self.pacing_rate <= 0.0 {
            return Duration::ZERO;
        }
        Duration(((payload + HEADER_BYTES) as f64 / self.pacing_rate * 1e12).round() as u64)
    }

    pub fn full_bw_reached(&self) -> bool {
        self.full_bw_cnt >= FULL_BW_CNT
    }

    /// The bandwidth estimate, payload bytes per second (`bbr_bw`).
    pub fn bw(&self) -> f64 {
        if self.lt.use_bw {
            self.lt.bw
        } else {
            self.bw.get()
        }
    }

    pub fn min_rtt(&self) -> Option<Duration> {
        self.min_rtt
    }

    fn rate_with_headers(&self, bw: f64, gain: f64) -> f64 {
        bw * (self.mss + HEADER_BYTES) as f64 / self.mss as f64 * gain
    }

    fn init_pacing_rate(&mut self, cwnd: u64, srtt: Option<Duration>) {
        let rtt = match srtt {
            Some(r) if r.0 > 0 => {
                self.has_seen_rtt = true;
                r
            }
            _ => self.cfg.initial_rtt,
        };
        let bw = cwnd as f64 / rtt.as_secs_f64();
        self.pacing_rate = self.rate_with_headers(bw, HIGH_GAIN);
    }

    /// `bbr_target_cwnd`: bandwidth × min RTT × gain, plus three sending units, rounded
    /// up to an even number of segments; the initial window before any RTT sample.
    fn target_cwnd(&self, bw: f64, gain: f64) -> u64 {
        let Some(rtt) = self.min_rtt else { return self.init_cwnd };
        let mss = self.mss as f64;
        let mut segs = (bw * rtt.as_secs_f64() * gain / mss).ceil() as u64;
        segs += 3 * self.unit_segs;
        segs = (segs + 1) & !1;
        segs * self.mss
    }

    fn save_cwnd(&mut self, cwnd: u64) {
        if self.prev_state < CaState::Recovery && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(cwnd);
        }
    }

    fn advance_cycle_phase(&mut self, delivered_time: SimTime) {
        self.cycle_idx = (self.cycle_idx + 1) % PACING_GAIN.len();
        self.cycle_stamp = delivered_time;
        self.pacing_gain = PACING_GAIN[self.cycle_idx];
    }

    fn reset_probe_bw_mode(&mut self, delivered_time: SimTime) {
        self.mode = Mode::ProbeBw;
        self.pacing_gain = 1.0;
        self.cwnd_gain = CWND_GAIN;
        // `CYCLE_LEN - 1 - prandom_u32_max(bbr_cycle_rand = 7)`: any phase but 3/4.
        self.cycle_idx = PACING_GAIN.len() - 1 - self.rng.below(7) as usize;
        self.advance_cycle_phase(delivered_time);
    }

    fn reset_mode(&mut self, delivered_time: SimTime) {
        if self.full_bw_reached() {
            self.reset_probe_bw_mode(delivered_time);
        } else {
            self.mode = Mode::Startup;
            self.pacing_gain = HIGH_GAIN;
            self.cwnd_gain = HIGH_GAIN;
        }
    }

    fn reset_lt_interval(&mut self, rs: &RateSample) {
        self.lt.last_stamp = rs.delivered_time;
        self.lt.last_delivered = rs.delivered;
        self.lt.last_lost = rs.lost;
        self.lt.rtt_cnt = 0;
    }

    fn reset_lt(&mut self, rs: &RateSample) {
        self.lt.bw = 0.0;
        self.lt.use_bw = false;
        self.lt.is_sampling = false;
        self.reset_lt_interval(rs);
    }

    fn lt_interval_done(&mut self, bw: f64, rs: &RateSample) {
        if self.lt.bw > 0.0 {
            let diff = (bw - self.lt.bw).abs();
            if diff <= LT_BW_RATIO * self.lt.bw || self.rate_with_headers(diff, 1.0) <= LT_BW_DIFF_BYTES_PER_S {
                self.lt.bw = (bw + self.lt.bw) / 2.0;
                self.lt.use_bw = true;
                self.pacing_gain = 1.0;
                self.lt.rtt_cnt = 0;
                return;
            }
        }
        self.lt.bw = bw;
        self.reset_lt_interval(rs);
    }

    /// `bbr_lt_bw_sampling`: detects a token-bucket policer from lossy intervals of
    /// consistent delivery rate.
    fn lt_sampling(&mut self, rs: &RateSample, losses: bool, app_limited: bool) {
        if self.lt.use_bw {
            if self.mode == Mode::ProbeBw && self.round_start {
                self.lt.rtt_cnt += 1;
                if self.lt.rtt_cnt >= LT_BW_MAX_RTTS {
                    self.reset_lt(rs);
                    self.reset_probe_bw_mode(rs.delivered_time);
                }
            }
            return;
        }
        if !self.lt.is_sampling {
            if !losses {
                return;
            }
            self.reset_lt_interval(rs);
            self.lt.is_sampling = true;
        }
        if app_limited {
            return self.reset_lt(rs);
        }
        if self.round_start {
            self.lt.rtt_cnt += 1;
        }
        if self.lt.rtt_cnt < LT_INTVL_MIN_RTTS {
            return;
        }
        if self.lt.rtt_cnt > 4 * LT_INTVL_MIN_RTTS {
            return self.reset_lt(rs);
        }
        if !losses {
            return;
        }
        let lost = rs.lost - self.lt.last_lost;
        let delivered = rs.delivered - self.lt.last_delivered;
        if delivered == 0 || (lost as f64) < LT_LOSS_THRESH * delivered as f64 {
            return;
        }
        let t = rs.delivered_time.since(self.lt.last_stamp);
        if t.0 == 0 {
            return;
        }
        let bw = delivered as f64 / t.as_secs_f64();
        self.lt_interval_done(bw, rs);
    }

    /// `bbr_update_bw`: round counting and the bandwidth filter.
    fn update_bw(&mut self, rs: &RateSample) {
        self.round_start = false;
        let Some((delivered, interval)) = rs.rate else { return };
        if interval.0 == 0 {
            return;
        }
        if rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = rs.delivered;
            self.rtt_cnt += 1;
            self.round_start = true;
            self.packet_conservation = false;
        }
        self.lt_sampling(rs, rs.losses > 0, rs.is_app_limited);
        let bw = delivered as f64 / interval.as_secs_f64();
        if !rs.is_app_limited || bw >= self.bw.get() {
            self.bw.update(BW_RTTS, self.rtt_cnt, bw);
        }
    }

    /// `bbr_is_next_cycle_phase`: a phase lasts a min RTT; the 5/4 phase also until it
    /// has lost data or put gain × BDP in flight, the 3/4 phase at most until the
    /// flight is down to one BDP.
    fn is_next_cycle_phase(&self, rs: &RateSample) -> bool {
        // With no min RTT yet Linux compares with ~0U: never a full phase.
        let full_length = self.min_rtt.is_some_and(|m| rs.delivered_time.since(self.cycle_stamp) > m);
        if self.pacing_gain == 1.0 {
            return full_length;
        }
        let bw = self.bw.get();
        if self.pacing_gain > 1.0 {
            return full_length && (rs.losses > 0 || rs.prior_in_flight >= self.target_cwnd(bw, self.pacing_gain));
        }
        full_length || rs.prior_in_flight <= self.target_cwnd(bw, 1.0)
    }

    fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_reached() || !self.round_start || rs.is_app_limited {
            return;
        }
        let max = self.bw.get();
        if max >= self.full_bw * FULL_BW_THRESH {
            self.full_bw = max;
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
    }

    fn check_drain(&mut self, rs: &RateSample) {
        if self.mode == Mode::Startup && self.full_bw_reached() {
            self.mode = Mode::Drain;
            self.pacing_gain = DRAIN_GAIN;
            self.cwnd_gain = HIGH_GAIN;
        }
        if self.mode == Mode::Drain && rs.in_flight <= self.target_cwnd(self.bw.get(), 1.0) {
            self.reset_probe_bw_mode(rs.delivered_time);
        }
    }

    /// `bbr_update_min_rtt`, PROBE_RTT included.
    fn update_min_rtt(&mut self, rs: &RateSample, cwnd: u64) {
        let now = rs.now;
        let expired = now > self.min_rtt_stamp + self.cfg.min_rtt_window;
        if let Some(r) = rs.rtt {
            if self.min_rtt.is_none_or(|m| r <= m) || expired {
                self.min_rtt = Some(r);
                self.min_rtt_stamp = now;
            }
        }
        if expired && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt;
            self.pacing_gain = 1.0;
            self.cwnd_gain = 1.0;
            self.save_cwnd(cwnd);
            self.probe_rtt_done = None;
        }
        if self.mode == Mode::ProbeRtt {
            self.app_limited_request = true;
            match self.probe_rtt_done {
                None if rs.in_flight <= CWND_MIN_SEGS * self.mss => {
                    self.probe_rtt_done = Some(now + self.cfg.probe_rtt_duration);
                    self.probe_rtt_round_done = false;
                    self.next_rtt_delivered = rs.delivered;
                }
                Some(done) => {
                    if self.round_start {
                        self.probe_rtt_round_done = true;
                    }
                    if self.probe_rtt_round_done && now > done {
                        self.min_rtt_stamp = now;
                        self.restore_cwnd = true;
                        self.reset_mode(rs.delivered_time);
                    }
                }
                None => {}
            }
        }
    }

    fn set_pacing_rate(&mut self, bw: f64, cwnd: u64, srtt: Option<Duration>) {
        if !self.has_seen_rtt && srtt.is_some() {
            self.init_pacing_rate(cwnd, srtt);
        }
        let rate = self.rate_with_headers(bw, self.pacing_gain);
        if self.full_bw_reached() || rate > self.pacing_rate {
            self.pacing_rate = rate;
        }
    }

    /// `bbr_set_tso_segs_goal` with Linux 4.15's `tcp_tso_autosize`.
    fn set_unit(&mut self) {
        let min_segs = if self.pacing_rate < MIN_TSO_RATE_BYTES_PER_S { 1 } else { 2 };
        let bytes = ((self.pacing_rate * self.cfg.unit_time.as_secs_f64()) as u64).min(UNIT_MAX_BYTES);
        self.unit_segs = (bytes / self.mss).max(min_segs).min(UNIT_MAX_SEGS);
    }

    /// `bbr_set_cwnd_to_recover_or_restore`: packet conservation for the first round of
    /// fast recovery, the window from before recovery restored after it. True when the
    /// window is set by conservation alone.
    fn recover_or_restore(&mut self, rs: &RateSample, cwnd: &mut u64) -> bool {
        let acked = rs.acked_sacked;
        if rs.losses > 0 {
            *cwnd = cwnd.saturating_sub(rs.losses).max(self.mss);
        }
        let (prev, state) = (self.prev_state, rs.state);
        if state == CaState::Recovery && prev != CaState::Recovery {
            self.packet_conservation = true;
            self.next_rtt_delivered = rs.delivered;
            *cwnd = rs.in_flight + acked;
        } else if prev >= CaState::Recovery && state < CaState::Recovery {
            self.restore_cwnd = true;
            self.packet_conservation = false;
        }
        self.prev_state = state;
        if self.restore_cwnd {
            *cwnd = (*cwnd).max(self.prior_cwnd);
            self.restore_cwnd = false;
        }
        if self.packet_conservation {
            *cwnd = (*cwnd).max(rs.in_flight + acked);
            return true;
        }
        false
    }

    fn set_cwnd(&mut self, w: &mut Window, rs: &RateSample, bw: f64) {
        let acked = rs.acked_sacked;
        if acked == 0 {
            return;
        }
        let mut cwnd = w.cwnd;
        if !self.recover_or_restore(rs, &mut cwnd) {
            let target = self.target_cwnd(bw, self.cwnd_gain);
            if self.full_bw_reached() {
                cwnd = (cwnd + acked).min(target);
            } else if cwnd < target || rs.delivered < self.init_cwnd {
                cwnd += acked;
            }
            cwnd = cwnd.max(CWND_MIN_SEGS * self.mss);
        }
        w.cwnd = cwnd;
        if self.mode == Mode::ProbeRtt {
            w.cwnd = w.cwnd.min(CWND_MIN_SEGS * self.mss);
        }
    }

    /// `bbr_main`: one ACK's rate sample updates the model, then the pacing rate, the
    /// sending unit and the window.
    pub fn on_rate_sample(&mut self, w: &mut Window, rs: &RateSample) {
        if self.lt_rto_pending {
            self.lt_rto_pending = false;
            self.round_start = true;
            self.lt_sampling(rs, true, false);
        }
        self.update_bw(rs);
        if self.mode == Mode::ProbeBw && !self.lt.use_bw && self.is_next_cycle_phase(rs) {
            self.advance_cycle_phase(rs.delivered_time);
        }
        self.check_full_bw_reached(rs);
        self.check_drain(rs);
        self.update_min_rtt(rs, w.cwnd);
        let bw = self.bw();
        self.set_pacing_rate(bw, w.cwnd, rs.srtt);
        self.set_unit();
        self.set_cwnd(w, rs, bw);
    }
}

impl CongestionControl for Bbr {
    /// BBR acts on rate samples ([`Bbr::on_rate_sample`]), not on the ACK alone.
    fn on_ack(&mut self, _w: &mut Window, _a: &AckInfo) {}

    /// `bbr_ssthresh`: remembers the window; no cut (the window is set by the next rate
    /// sample, packet conservation in recovery).
    fn on_loss(&mut self, w: &mut Window, _now: SimTime, _flight: u64) {
        self.save_cwnd(w.cwnd);
        w.ssthresh = super::none::UNLIMITED;
    }

    /// `bbr_ssthresh` and `bbr_set_state(TCP_CA_Loss)`: STARTUP's plateau count restarts
    /// from zero bandwidth, a round starts, and the long-term estimator sees a loss.
    fn on_rto(&mut self, w: &mut Window, _now: SimTime, _flight: u64) {
        self.save_cwnd(w.cwnd);
        w.ssthresh = super::none::UNLIMITED;
        self.prev_state = CaState::Loss;
        self.full_bw = 0.0;
        self.round_start = true;
        self.lt_rto_pending = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn bbr() -> Bbr {
        Bbr::new(BbrConfig::default(), MSS, 10 * MSS, SimRng::stream(1, "bbr"))
    }

    fn sample(now_us: u64, delivered: u64, prior: u64, rate: Option<(u64, u64)>, in_flight: u64) -> RateSample {
        RateSample {
            now: SimTime(now_us * 1_000_000),
            acked_sacked: MSS,
            rate: rate.map(|(b, us)| (b, Duration::from_us(us))),
            prior_delivered: prior,
            is_app_limited: false,
            rtt: Some(Duration::from_us(100)),
            losses: 0,
            prior_in_flight: in_flight,
            in_flight,
            delivered,
            lost: 0,
            delivered_time: SimTime(now_us * 1_000_000),
            state: CaState::Open,
            srtt: Some(Duration::from_us(100)),
        }
    }

    /// `minmax_running_max` worked by hand (window 10 rounds): a sample replaces the
    /// second-best only after a quarter window, the third-best after half; when the best
    /// is more than a window old the second takes its place; a new maximum resets all.
    #[test]
    fn max_filter_keeps_the_best_of_the_window() {
        let mut f = MaxFilter::default();
        assert_eq!(f.update(10, 1, 5.0), 5.0);
        // dt = 3 > 10/4 with the second sample still the first's: (4, 3) becomes 2nd and 3rd.
        assert_eq!(f.update(10, 4, 3.0), 5.0);
        // dt = 6 > 10/2 with the third sample the second's: (7, 2) becomes 3rd.
        assert_eq!(f.update(10, 7, 2.0), 5.0);
        assert_eq!(f.s, [(1, 5.0), (4, 3.0), (7, 2.0)]);
        // Round 12: the best (round 1) is 11 rounds old; the second-best rules.
        assert_eq!(f.update(10, 12, 1.0), 3.0);
        assert_eq!(f.update(10, 13, 9.0), 9.0);
        assert_eq!(f.s, [(13, 9.0); 3]);
    }

    /// STARTUP's gains are 2/ln 2 rounded up in 1/256 (739/256), DRAIN's 88/256, and
    /// the initial pacing rate is the initial window over 1 ms at the high gain with
    /// headers counted.
    #[test]
    fn startup_gains_and_initial_pacing_rate() {
        let b = bbr();
        assert_eq!(HIGH_GAIN, 739.0 / 256.0);
        assert_eq!(DRAIN_GAIN, 88.0 / 256.0);
        let expect = 10.0 * MSS as f64 / 1e-3 * (MSS + 40) as f64 / MSS as f64 * HIGH_GAIN;
        assert!((b.pacing_rate() - expect).abs() < 1e-6 * expect);
        assert_eq!(b.mode, Mode::Startup);
    }

    /// With a constant delivery rate STARTUP sees no 25 % growth for three rounds, then
    /// drains and settles in PROBE_BW with the window at 2 × BDP + 3 units (even).
    #[test]
    fn startup_ends_after_three_flat_rounds_and_the_window_is_two_bdps() {
        let mut b = bbr();
        let mut w = Window { cwnd: 10 * MSS, ssthresh: super::super::none::UNLIMITED, mss: MSS };
        // 1000 B per 10 µs = 100 MB/s; min RTT 100 µs: BDP 10 segments.
        let mut delivered = 0;
        for round in 0..4u64 {
            assert!(!b.full_bw_reached(), "round {round}");
            let prior = delivered;
            delivered += 10 * MSS;
            b.on_rate_sample(&mut w, &sample(100 * (round + 1), delivered, prior, Some((10 * MSS, 100)), 300 * MSS));
        }
        assert!(b.full_bw_reached());
        assert_eq!(b.mode, Mode::Drain, "flight 300 segments > BDP + 3 units");
        let prior = delivered;
        delivered += 10 * MSS;
        b.on_rate_sample(&mut w, &sample(500, delivered, prior, Some((10 * MSS, 100)), 5 * MSS));
        assert_eq!(b.mode, Mode::ProbeBw);
        assert!((b.bw() - 1e8).abs() < 1.0);
        // Pacing at 100 MB/s ≈ 97.7 KB per 976.5625 µs: 64 KiB cap / 1000 B = 65 segments.
        assert_eq!(b.unit_segs(), 65);
        let target = b.target_cwnd(b.bw(), CWND_GAIN);
        assert_eq!(target, (20 + 3 * 65 + 1) * MSS);
    }

    /// PROBE_RTT by hand (a 1 ms min-RTT window, 200 µs of PROBE_RTT): the min RTT seen
    /// at 100 µs expires at 1.1 ms; the sample at 1.2 ms enters PROBE_RTT (window 4
    /// segments, the connection marked application-limited); once the flight is down to
    /// 4 segments (1.3 ms) PROBE_RTT lasts 200 µs and a round; at 1.6 ms, both passed, BBR
    /// leaves it with the window from before — for PROBE_BW, not STARTUP, because the
    /// rounds ending at 1.2, 1.3 and 1.4 ms brought no 25 % more bandwidth (the pipe is
    /// full: `bbr_reset_mode`).
    #[test]
    fn probe_rtt_holds_four_segments_for_its_duration_and_a_round() {
        let cfg = BbrConfig { min_rtt_window: Duration::from_ms(1), probe_rtt_duration: Duration::from_us(200), ..BbrConfig::default() };
        let mut b = Bbr::new(cfg, MSS, 10 * MSS, SimRng::stream(1, "bbr"));
        let mut w = Window { cwnd: 40 * MSS, ssthresh: super::super::none::UNLIMITED, mss: MSS };
        b.on_rate_sample(&mut w, &sample(100, 10 * MSS, 0, Some((10 * MSS, 100)), 30 * MSS));
        assert_eq!((b.mode, b.min_rtt()), (Mode::Startup, Some(Duration::from_us(100))));
        let before = w.cwnd;
        let mut s = sample(1200, 20 * MSS, 10 * MSS, Some((10 * MSS, 100)), 30 * MSS);
        s.rtt = Some(Duration::from_us(120));
        b.on_rate_sample(&mut w, &s);
        assert_eq!((b.mode, b.min_rtt(), w.cwnd), (Mode::ProbeRtt, Some(Duration::from_us(120)), 4 * MSS));
        assert!(std::mem::take(&mut b.app_limited_request));
        b.on_rate_sample(&mut w, &sample(1300, 21 * MSS, 20 * MSS, Some((MSS, 100)), 3 * MSS));
        b.on_rate_sample(&mut w, &sample(1400, 22 * MSS, 21 * MSS, Some((MSS, 100)), 3 * MSS));
        assert_eq!((b.mode, w.cwnd), (Mode::ProbeRtt, 4 * MSS), "200 µs not yet passed");
        b.on_rate_sample(&mut w, &sample(1600, 23 * MSS, 22 * MSS, Some((MSS, 100)), 3 * MSS));
        assert!(b.full_bw_reached());
        assert_eq!(b.mode, Mode::ProbeBw);
        assert!(w.cwnd >= before, "window restored: {} against {before}", w.cwnd);
    }

    /// Fast recovery: the window becomes the flight plus what the ACK delivered (packet
    /// conservation) and is restored on leaving recovery.
    #[test]
    fn recovery_conserves_packets_and_restores_the_window() {
        let mut b = bbr();
        let mut w = Window { cwnd: 40 * MSS, ssthresh: super::super::none::UNLIMITED, mss: MSS };
        b.on_loss(&mut w, SimTime::ZERO, 30 * MSS);
        assert_eq!(w.cwnd, 40 * MSS);
        let mut s = sample(100, 5 * MSS, 0, None, 12 * MSS);
        s.state = CaState::Recovery;
        b.on_rate_sample(&mut w, &s);
        assert_eq!(w.cwnd, 13 * MSS);
        let mut s = sample(200, 6 * MSS, 0, None, 3 * MSS);
        s.state = CaState::Open;
        b.on_rate_sample(&mut w, &s);
        assert!(w.cwnd >= 40 * MSS, "restored: {}", w.cwnd);
    }
}
