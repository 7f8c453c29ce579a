//! Congestion control: a small trait and a closed enum over the algorithms (static
//! dispatch). The connection owns the window ([`Window`]); an algorithm only changes
//! `cwnd` and `ssthresh` when told about ACKs, losses, timeouts and ECN echoes. Loss
//! recovery (which segments to resend, when recovery ends) is the connection's job.

pub mod bbr;
pub mod cubic;
pub mod cubic_linux;
pub mod dctcp;
pub mod dctcp_linux;
pub mod newreno;
pub mod none;
pub mod reno_linux;
pub mod retcp;

use super::config::{CcKind, CubicAlpha, RetcpBase, TcpConfig};
use crate::rng::SimRng;
use crate::units::{Duration, SimTime};

/// The window an algorithm controls, in bytes.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Window {
    pub cwnd: u64,
    pub ssthresh: u64,
    pub mss: u64,
}

/// What an ACK that advanced `snd_una` tells the algorithm.
#[derive(Copy, Clone, Debug)]
pub struct AckInfo {
    pub now: SimTime,
    /// Bytes this ACK newly reports delivered (cumulatively acknowledged and not SACKed
    /// before, or SACKed now): what the window grows by.
    pub acked: u64,
    /// `snd_una` advance (bytes SACKed earlier included): DCTCP's per-window byte counts.
    pub cum_acked: u64,
    /// The ACK carried ECN-Echo.
    pub ece: bool,
    /// Smoothed RTT, if known.
    pub srtt: Option<Duration>,
    /// This ACK's RTT sample (the newest segment it covers cumulatively; none if it
    /// covers a resent one, Karn's rule).
    pub rtt: Option<Duration>,
    /// The connection is in fast recovery (no window growth).
    pub in_recovery: bool,
    /// Bytes in flight after this ACK (RFC 6675's pipe): Linux DCTCP's rate reduction.
    pub in_flight: u64,
    pub snd_una: u64,
    pub snd_nxt: u64,
}

pub trait CongestionControl {
    /// New data was acknowledged: grow the window (slow start / congestion avoidance).
    fn on_ack(&mut self, w: &mut Window, a: &AckInfo);
    /// Loss detected by duplicate ACKs / SACK: set `ssthresh` and `cwnd` for recovery.
    fn on_loss(&mut self, w: &mut Window, now: SimTime, flight: u64);
    /// Retransmission timeout (first expiry of a series): `ssthresh` (RFC 5681 eq. 4);
    /// the connection sets `cwnd` to one segment.
    fn on_rto(&mut self, w: &mut Window, now: SimTime, flight: u64) {
        self.on_loss(w, now, flight);
        w.ssthresh = (flight / 2).max(2 * w.mss);
    }
    /// Called just before `on_loss` / `on_rto` with the connection's `snd_una` and
    /// `snd_nxt` (which window of data the congestion event belongs to).
    fn on_congestion_point(&mut self, _snd_una: u64, _snd_nxt: u64) {}
    /// DCTCP's running alpha (others: none).
    fn alpha(&self) -> Option<f64> {
        None
    }
    /// Whether data segments are ECN-capable (ECT).
    fn ecn(&self) -> bool {
        false
    }
}

/// Slow start (RFC 5681 §3.1) with byte counting (RFC 3465, no per-ACK limit, which
/// matters with delayed ACKs): `cwnd` grows by the bytes acknowledged, up to
/// `ssthresh`. Returns the bytes left over for congestion avoidance.
pub(crate) fn slow_start(w: &mut Window, acked: u64) -> u64 {
    if w.cwnd >= w.ssthresh {
        return acked;
    }
    let room = w.ssthresh - w.cwnd;
    let used = acked.min(room);
    w.cwnd += used;
    acked - used
}


/// Whole segments in `bytes` of `mss`-byte segments, as the kernel's `u32` windows
/// (the Linux models: `cubic_linux`, `dctcp_linux`, `reno_linux`).
pub(crate) fn segs(bytes: u64, mss: u64) -> u32 {
    (bytes / mss).min(u64::from(u32::MAX)) as u32
}

/// Segments `bytes` occupy, a part segment counting as one, as the kernel counts skbs.
pub(crate) fn segs_up(bytes: u64, mss: u64) -> u32 {
    bytes.div_ceil(mss).min(u64::from(u32::MAX)) as u32
}

/// An ACK newly delivering `acked` bytes, nothing else set (the algorithms' unit tests).
#[cfg(test)]
pub(crate) fn test_ack(acked: u64) -> AckInfo {
    AckInfo {
        now: SimTime::ZERO,
        acked,
        cum_acked: acked,
        ece: false,
        srtt: None,
        rtt: None,
        in_recovery: false,
        in_flight: 0,
        snd_una: 0,
        snd_nxt: 0,
    }
}

/// The algorithms pl2 implements.
#[derive(Clone, Debug)]
pub enum Cc {
    NewReno(newreno::NewReno),
    /// Reno as Linux 4.15 runs it (`reno_linux`).
    RenoLinux(reno_linux::LinuxReno),
    Cubic(cubic::Cubic),
    /// CUBIC as Linux 4.15 runs it (`cubic_linux`).
    CubicLinux(cubic_linux::LinuxCubic),
    Dctcp(dctcp::Dctcp),
    /// DCTCP as Linux 4.15 runs it (`dctcp_linux`).
    DctcpLinux(dctcp_linux::LinuxDctcp),
    Retcp(retcp::Retcp),
    /// Boxed: its model is several times the others' size.
    Bbr(Box<bbr::Bbr>),
    None(none::NoCc),
}

impl Cc {
    /// The algorithm `cfg` selects, with its options (`byte_counting`, `cubic_alpha`,
    /// `dctcp_loss`, `dctcp_linux`, `reno_linux`, `retcp`, `bbr`); `bbr_rng` gives BBR its draws (the gain cycle's
    /// first phase) and is called only for BBR.
    pub fn for_config(cfg: &TcpConfig, mss: u64, bbr_rng: impl FnOnce() -> SimRng) -> Cc {
        let reno = || newreno::NewReno::with_counting(cfg.byte_counting);
        let cubic = || {
            let mut c = cubic::Cubic::default();
            c.linux_alpha = cfg.cubic_alpha == CubicAlpha::Linux;
            c
        };
        match cfg.cc_kind() {
            CcKind::NewReno if cfg.reno_linux => Cc::RenoLinux(reno_linux::LinuxReno::default()),
            CcKind::NewReno => Cc::NewReno(reno()),
            CcKind::Cubic => match cfg.cubic_linux {
                Some(clock) => Cc::CubicLinux(cubic_linux::LinuxCubic::new(clock)),
                None => Cc::Cubic(cubic()),
            },
            CcKind::Dctcp if cfg.dctcp_linux => Cc::DctcpLinux(dctcp_linux::LinuxDctcp::new(cfg.dctcp_loss)),
            CcKind::Dctcp => {
                let mut d = dctcp::Dctcp::with_reno(reno());
                d.loss = cfg.dctcp_loss;
                Cc::Dctcp(d)
            }
            CcKind::Retcp => {
                let base = match cfg.retcp.base {
                    RetcpBase::Reno if cfg.reno_linux => retcp::Base::RenoLinux(reno_linux::LinuxReno::default()),
                    RetcpBase::Reno => retcp::Base::Reno(reno()),
                    RetcpBase::Cubic => match cfg.cubic_linux {
                        Some(clock) => retcp::Base::CubicLinux(cubic_linux::LinuxCubic::new(clock)),
                        None => retcp::Base::Cubic(cubic()),
                    },
                };
                Cc::Retcp(retcp::Retcp::new(base, cfg.retcp.beta))
            }
            CcKind::Bbr => Cc::Bbr(Box::new(bbr::Bbr::new(cfg.bbr, mss, u64::from(cfg.initial_window) * mss, bbr_rng()))),
            CcKind::None => Cc::None(none::NoCc),
        }
    }
}

/// Evaluates `$e` with `$c` bound to whichever algorithm `$s` holds (static dispatch).
macro_rules! each {
    ($s:expr, $c:ident => $e:expr) => {
        match $s {
            Cc::NewReno($c) => $e,
            Cc::RenoLinux($c) => $e,
            Cc::Cubic($c) => $e,
            Cc::CubicLinux($c) => $e,
            Cc::Dctcp($c) => $e,
            Cc::DctcpLinux($c) => $e,
            Cc::Retcp($c) => $e,
            Cc::Bbr($c) => $e,
            Cc::None($c) => $e,
        }
    };
}

impl CongestionControl for Cc {
    fn on_ack(&mut self, w: &mut Window, a: &AckInfo) {
        each!(self, c => c.on_ack(w, a))
    }
    fn on_loss(&mut self, w: &mut Window, now: SimTime, flight: u64) {
        each!(self, c => c.on_loss(w, now, flight))
    }
    fn on_rto(&mut self, w: &mut Window, now: SimTime, flight: u64) {
        each!(self, c => c.on_rto(w, now, flight))
    }
    fn on_congestion_point(&mut self, snd_una: u64, snd_nxt: u64) {
        each!(self, c => c.on_congestion_point(snd_una, snd_nxt))
    }
    fn alpha(&self) -> Option<f64> {
        each!(self, c => c.alpha())
    }
    fn ecn(&self) -> bool {
        each!(self, c => c.ecn())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Duration;

    const MSS: u64 = 1000;

    /// The algorithm `kind` as a scenario selects it, with `byte_counting` and every other
    /// option at its default.
    fn cc(kind: CcKind, byte_counting: bool) -> Cc {
        Cc::for_config(&TcpConfig { cc: Some(kind), byte_counting, ..TcpConfig::default() }, MSS, || SimRng::stream(0, "test"))
    }

    fn ack(now_ms: u64, acked: u64) -> AckInfo {
        AckInfo { now: SimTime(now_ms * 1_000_000_000), srtt: Some(Duration::from_ms(100)), ..test_ack(acked) }
    }

    #[test]
    fn newreno_slow_start_then_one_mss_per_window() {
        let mut w = Window { cwnd: 10 * MSS, ssthresh: 20 * MSS, mss: MSS };
        let mut c = cc(CcKind::NewReno, true);
        c.on_ack(&mut w, &ack(0, 10 * MSS));
        assert_eq!(w.cwnd, 20 * MSS);
        for _ in 0..20 {
            c.on_ack(&mut w, &ack(0, MSS));
        }
        assert_eq!(w.cwnd, 21 * MSS);
        c.on_loss(&mut w, SimTime::ZERO, 30 * MSS);
        assert_eq!((w.cwnd, w.ssthresh), (15 * MSS, 15 * MSS));
        c.on_rto(&mut w, SimTime::ZERO, 3 * MSS);
        assert_eq!(w.ssthresh, 2 * MSS, "RFC 5681 eq. 4: at least 2 SMSS");
    }

    /// DCTCP's loss response: RFC 8257 §3.5 halves the flight (30 → 15 segments); Linux
    /// 4.15's `dctcp_ssthresh` takes cwnd · (1 − α/2) (40 × 0.75 = 30 at α = 1/2), after a
    /// fast-recovery loss and a timeout alike.
    #[test]
    fn dctcp_loss_halves_or_cuts_by_alpha_as_linux_4() {
        use super::super::config::DctcpLoss;
        for (loss, after) in [(DctcpLoss::Half, 15 * MSS), (DctcpLoss::Alpha, 30 * MSS)] {
            let cfg = TcpConfig { cc: Some(CcKind::Dctcp), dctcp_loss: loss, ..TcpConfig::default() };
            let Cc::Dctcp(mut d) = Cc::for_config(&cfg, MSS, || SimRng::stream(0, "test")) else { panic!("dctcp") };
            d.alpha = 0.5;
            let mut w = Window { cwnd: 40 * MSS, ssthresh: none::UNLIMITED, mss: MSS };
            d.on_loss(&mut w, SimTime::ZERO, 30 * MSS);
            assert_eq!((w.cwnd, w.ssthresh), (after, after), "{loss:?}");
            let mut d2 = d.clone();
            d2.cwr_end = 0;
            let mut w = Window { cwnd: 40 * MSS, ssthresh: none::UNLIMITED, mss: MSS };
            d2.on_rto(&mut w, SimTime::ZERO, 30 * MSS);
            assert_eq!(w.ssthresh, after, "{loss:?} timeout");
        }
    }

    /// reTCP (slide 31): cwnd × 2 once on the 0 → 1 edge of ECE, ÷ 2 once on 1 → 0;
    /// ACKs in between grow it as Reno does (one SMSS per window in congestion
    /// avoidance) and never halve it as RFC 3168 would.
    #[test]
    fn retcp_doubles_once_on_rise_and_halves_once_on_fall() {
        let mut w = Window { cwnd: 40 * MSS, ssthresh: 20 * MSS, mss: MSS };
        let mut c = cc(CcKind::Retcp, true);
        let ece = |on: bool| AckInfo { ece: on, ..ack(0, 0) };
        c.on_ack(&mut w, &ece(false));
        assert_eq!(w.cwnd, 40 * MSS);
        c.on_ack(&mut w, &ece(true));
        assert_eq!(w.cwnd, 80 * MSS, "doubled on 0 → 1");
        for _ in 0..5 {
            c.on_ack(&mut w, &ece(true));
        }
        assert_eq!(w.cwnd, 80 * MSS, "once per transition");
        // 80 segments acknowledged in congestion avoidance: + 1 SMSS.
        c.on_ack(&mut w, &AckInfo { acked: 80 * MSS, ..ece(true) });
        assert_eq!(w.cwnd, 81 * MSS);
        c.on_ack(&mut w, &ece(false));
        assert_eq!(w.cwnd, 81 * MSS / 2, "halved on 1 → 0");
        c.on_ack(&mut w, &ece(false));
        assert_eq!(w.cwnd, 81 * MSS / 2, "once per transition");
        // A transition seen in fast recovery waits for the first ACK after it.
        c.on_ack(&mut w, &AckInfo { in_recovery: true, ..ece(true) });
        assert_eq!(w.cwnd, 81 * MSS / 2);
        c.on_ack(&mut w, &ece(true));
        assert_eq!(w.cwnd, 81 * MSS);
        let beta3 = TcpConfig { cc: Some(CcKind::Retcp), retcp: super::super::config::RetcpConfig { base: RetcpBase::Cubic, beta: 3.0 }, ..TcpConfig::default() };
        let mut c3 = Cc::for_config(&beta3, MSS, || SimRng::stream(0, "test"));
        let mut w3 = Window { cwnd: 10 * MSS, ssthresh: 5 * MSS, mss: MSS };
        c3.on_ack(&mut w3, &ece(true));
        assert_eq!(w3.cwnd, 30 * MSS, "β = 3 over a CUBIC base");
    }

    /// Over Linux's Reno (`reno_linux`) the jumps are `retcp.c`'s integer `snd_cwnd *= 2`
    /// and `snd_cwnd /= 2`: 15 segments (congestion avoidance, no growth from an ACK that
    /// delivers nothing) → 30 → 15, and an odd 31 falls to 15, not 15.5; a loss then halves
    /// cwnd, not the flight (`tcp_reno_ssthresh`).
    #[test]
    fn retcp_over_linux_reno_jumps_on_whole_segments() {
        let cfg = TcpConfig { cc: Some(CcKind::Retcp), reno_linux: true, ..TcpConfig::default() };
        let mut c = Cc::for_config(&cfg, MSS, || SimRng::stream(0, "test"));
        assert!(matches!(&c, Cc::Retcp(r) if matches!(r.base, retcp::Base::RenoLinux(_))));
        let ece = |on: bool| AckInfo { ece: on, ..ack(0, 0) };
        let mut w = Window { cwnd: 15 * MSS, ssthresh: 10 * MSS, mss: MSS };
        c.on_ack(&mut w, &ece(true));
        assert_eq!(w.cwnd, 30 * MSS);
        c.on_ack(&mut w, &ece(false));
        assert_eq!(w.cwnd, 15 * MSS);
        c.on_ack(&mut w, &ece(true));
        w.cwnd = 31 * MSS;
        c.on_ack(&mut w, &ece(false));
        assert_eq!(w.cwnd, 15 * MSS, "31 / 2 floored to whole segments");
        c.on_loss(&mut w, SimTime::ZERO, 29 * MSS);
        assert_eq!((w.cwnd, w.ssthresh), (7 * MSS, 7 * MSS), "half of cwnd 15, whatever the flight");
    }

    /// Every kind a scenario can name is built by the one constructor, BBR included (its
    /// draws taken only for it), and is the algorithm asked for.
    #[test]
    fn every_kind_is_built_from_its_config() {
        for kind in [CcKind::NewReno, CcKind::Cubic, CcKind::Dctcp, CcKind::Retcp, CcKind::Bbr, CcKind::None] {
            let mut drew = false;
            let c = Cc::for_config(&TcpConfig { cc: Some(kind), ..TcpConfig::default() }, MSS, || {
                drew = true;
                SimRng::stream(0, "test")
            });
            let built = match c {
                Cc::NewReno(_) | Cc::RenoLinux(_) => CcKind::NewReno,
                Cc::Cubic(_) | Cc::CubicLinux(_) => CcKind::Cubic,
                Cc::Dctcp(_) | Cc::DctcpLinux(_) => CcKind::Dctcp,
                Cc::Retcp(_) => CcKind::Retcp,
                Cc::Bbr(_) => CcKind::Bbr,
                Cc::None(_) => CcKind::None,
            };
            assert_eq!(built, kind);
            assert_eq!(drew, kind == CcKind::Bbr, "{kind:?}");
        }
    }

    #[test]
    fn newreno_ack_counting_follows_rfc5681_equations_2_and_3() {
        // byte_counting = false (ns-3's TcpNewReno): one SMSS per ACK in slow start however
        // much it delivers (eq. 2), SMSS²/cwnd per ACK in congestion avoidance (eq. 3).
        let mut w = Window { cwnd: 10 * MSS, ssthresh: 12 * MSS, mss: MSS };
        let mut c = cc(CcKind::NewReno, false);
        c.on_ack(&mut w, &ack(0, 2 * MSS));
        assert_eq!(w.cwnd, 11 * MSS, "a delayed ACK of two segments adds one");
        c.on_ack(&mut w, &ack(0, MSS / 2));
        assert_eq!(w.cwnd, 11 * MSS + MSS / 2, "min(N, SMSS)");
        // Reaching ssthresh with two segments acked: the second goes to eq. 3.
        c.on_ack(&mut w, &ack(0, 2 * MSS));
        assert_eq!(w.cwnd, 12 * MSS + MSS * MSS / (12 * MSS));
        let before = w.cwnd;
        c.on_ack(&mut w, &ack(0, 2 * MSS));
        assert_eq!(w.cwnd, before + MSS * MSS / before, "once per ACK, not per segment");
        // Byte counting (the default) adds both segments in slow start.
        let mut w = Window { cwnd: 10 * MSS, ssthresh: 20 * MSS, mss: MSS };
        cc(CcKind::Dctcp, true).on_ack(&mut w, &ack(0, 2 * MSS));
        assert_eq!(w.cwnd, 12 * MSS);
        let mut w = Window { cwnd: 10 * MSS, ssthresh: 20 * MSS, mss: MSS };
        cc(CcKind::Dctcp, false).on_ack(&mut w, &ack(0, 2 * MSS));
        assert_eq!(w.cwnd, 11 * MSS, "DCTCP grows as its NewReno does");
    }

    #[test]
    fn cubic_loss_sets_k_and_fast_convergence_lowers_w_max() {
        let mut w = Window { cwnd: 100 * MSS, ssthresh: 50 * MSS, mss: MSS };
        let mut c = cubic::Cubic::default();
        c.on_loss(&mut w, SimTime::ZERO, 0);
        assert_eq!((w.cwnd, c.w_max), (70 * MSS, 100.0));
        assert!((c.k - (100.0f64 * 0.3 / 0.4).cbrt()).abs() < 1e-12);
        // A second loss below the previous W_max: W_max = cwnd (1 + β) / 2.
        c.on_loss(&mut w, SimTime::ZERO, 0);
        assert!((c.w_max - 70.0 * 1.7 / 2.0).abs() < 1e-9, "{}", c.w_max);
        assert_eq!(w.cwnd, 49 * MSS);
        // W_cubic(K) = W_max.
        assert!((c.w_cubic(c.k) - c.w_max).abs() < 1e-9);
        // RFC 9438 §4.7 compares cwnd with W_max as fast convergence left it (59.5), not
        // with the cwnd at the previous loss (70): a loss at 65 sets W_max = 65.
        w.cwnd = 65 * MSS;
        c.on_loss(&mut w, SimTime::ZERO, 0);
        assert_eq!(c.w_max, 65.0);
        assert_eq!(c.cwnd_prior, 65.0);
    }

    #[test]
    fn cubic_reno_friendly_alpha_turns_to_one_at_cwnd_prior_not_at_w_max() {
        // RFC 9438 §4.3: W_est grows by α = 3(1 − β)/(1 + β) per window until it reaches
        // cwnd_prior (the cwnd when ssthresh was last set), then by 1. After a loss with
        // fast convergence W_max = 0.85·cwnd_prior is lower: still α < 1 there.
        let mut w = Window { cwnd: 100 * MSS, ssthresh: 50 * MSS, mss: MSS };
        let mut c = cubic::Cubic::default();
        c.on_loss(&mut w, SimTime::ZERO, 0);
        c.on_loss(&mut w, SimTime::ZERO, 0);
        assert_eq!((w.cwnd, c.cwnd_prior), (49 * MSS, 70.0));
        assert!((c.w_max - 59.5).abs() < 1e-9);
        let alpha = 3.0 * 0.3 / 1.7;
        c.on_ack(&mut w, &ack(1, MSS)); // starts the epoch: W_est = 49 + α/49
        // cwnd is between 49 and 71 segments in these ACKs: α/cwnd ∈ [0.0074, 0.0108],
        // 1/cwnd ∈ [0.0141, 0.0205].
        c.w_est = 62.0; // above W_max, below cwnd_prior
        c.on_ack(&mut w, &ack(2, MSS));
        let inc = c.w_est - 62.0;
        assert!((alpha / 71.0..=alpha / 49.0).contains(&inc), "{inc}");
        c.w_est = 70.0;
        c.on_ack(&mut w, &ack(3, MSS));
        let inc = c.w_est - 70.0;
        assert!((1.0 / 71.0..=1.0 / 49.0).contains(&inc), "{inc}");
    }

    #[test]
    fn cubic_linux_alpha_never_turns_to_one() {
        // Linux's tcp_cubic.c grows its Reno estimate by one segment per
        // ⌊15·cwnd/8⌋ acknowledged (`beta_scale` = 15 at β = 717/1024): α = 8/15 ≈
        // 3(1 − β)/(1 + β) at every window, above cwnd_prior too.
        let cfg = TcpConfig { cc: Some(CcKind::Cubic), cubic_alpha: CubicAlpha::Linux, ..TcpConfig::default() };
        let Cc::Cubic(mut c) = Cc::for_config(&cfg, MSS, || SimRng::stream(0, "test")) else { panic!("cubic") };
        let mut w = Window { cwnd: 100 * MSS, ssthresh: 50 * MSS, mss: MSS };
        c.on_loss(&mut w, SimTime::ZERO, 0);
        c.on_ack(&mut w, &ack(1, MSS));
        c.w_est = 120.0; // above cwnd_prior (100 segments)
        let cwnd = w.cwnd as f64 / MSS as f64;
        c.on_ack(&mut w, &ack(2, MSS));
        let inc = c.w_est - 120.0;
        let alpha = 3.0 * 0.3 / 1.7;
        assert!((inc - alpha / cwnd).abs() < alpha / cwnd * 0.05, "{inc} vs {}", alpha / cwnd);
    }

    #[test]
    fn dctcp_alpha_moves_by_g_per_window_and_cuts_by_alpha_over_2() {
        let mut w = Window { cwnd: 100 * MSS, ssthresh: 10 * MSS, mss: MSS };
        let mut d = dctcp::Dctcp::default();
        // Windows of 100 segments with nothing marked: alpha ← (15/16)·alpha each.
        for k in 1..=10u64 {
            let a = AckInfo { snd_una: k * 100 * MSS, snd_nxt: (k + 1) * 100 * MSS, ..ack(0, 100 * MSS) };
            d.on_ack(&mut w, &a);
        }
        // The first ACK opens the first window (no update), the next nine close one each.
        assert!((d.alpha - (15.0f64 / 16.0).powi(9)).abs() < 1e-12, "{}", d.alpha);
        let alpha = d.alpha;
        let cwnd = w.cwnd;
        let a = AckInfo { ece: true, snd_una: 1_100 * MSS, snd_nxt: 1_200 * MSS, ..ack(0, MSS) };
        d.on_ack(&mut w, &a);
        let expect_alpha = (15.0 / 16.0) * alpha + 1.0 / 16.0;
        assert!((d.alpha - expect_alpha).abs() < 1e-12);
        assert_eq!(w.cwnd, (cwnd as f64 * (1.0 - d.alpha / 2.0)) as u64);
        assert!(d.ecn());
    }
}
