//! DCQCN's reaction point (Zhu et al., SIGCOMM 2015, §3.1 and its state machine, Fig. 8):
//! one flow's current rate RC, target rate RT and α, the timers that move them and the
//! byte counter. A sans-IO state machine: each call takes the time and says which of the
//! flow's three timers to (re)arm ([`Arm`]) and what changed ([`Change`]); the sender
//! owns the timers and the pacing.
//!
//! - The first CNP allocates the rate limiter (Mellanox's `rate_to_set_on_first_cnp`,
//!   HPCC `cnp_received_mlx`, `rdma-hw.cc:638-653`): α ← `alpha_init`, RT ← RC (the line
//!   rate, where every flow starts, paper §3.1 "no slow start").
//! - α ([`AlphaUpdate`]): `on_cnp`, paper eqs. 1-2: α ← (1 − g)α + g at each CNP, and
//!   α ← (1 − g)α when the α timer K expires, which each CNP restarts. `per_tick`, HPCC
//!   `UpdateAlphaMlx` (`rdma-hw.cc:618-636`): the timer runs freely from the first CNP;
//!   each tick takes in whether a CNP arrived since the last.
//! - Cut: with `decrease_interval` 0 at each CNP (paper eq. 1); otherwise at most once per
//!   interval, at a check that finds a CNP arrived since the last (HPCC
//!   `CheckRateDecreaseMlx`, `rdma-hw.cc:655-681`; the first check comes 1 ns after the
//!   interval, `:648`, so that it follows an α tick due at the same time). A cut sets RT ←
//!   RC ([`ClampTarget`]), RC ← max(min rate, RC(1 − α/2)) with the α of that moment
//!   (at a CNP the α update comes first, as ns3-rdma `qbb-net-device.cc:1406-1407`),
//!   resets both stage counters and the byte count, and restarts the increase timer T.
//! - Increase events: the timer T and, if on, the byte counter B, each counting its own
//!   stage. With both (QCN, paper §3.1): fast recovery while both stages are at most F,
//!   additive increase while one is, hyper increase when both exceed F, the i-th with
//!   i = min(stages) − F. Timer only (HPCC `RateIncEventMlx`, `rdma-hw.cc:688-697`): stage
//!   t ≤ F fast recovery, t = F + 1 additive, later hyper. Fast recovery: RC ← (RC + RT)/2
//!   (eq. 3); additive: RT ← RT + R_AI then the same (eq. 4); hyper: RT ← RT + step
//!   ([`HyperIncrease`]); RT never exceeds the line rate (HPCC `:717-718`).
//!
//! Rates are integers in bit/s: a cut truncates RC(1 − α/2), a halving truncates.

use super::params::{AlphaUpdate, ClampTarget, DcqcnParams, HyperIncrease};
use crate::units::{BitsPerSec, Duration, SimTime};

/// Timers to (re)arm, each at the given time (`None`: leave as it is).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Arm {
    pub alpha: Option<SimTime>,
    pub decrease: Option<SimTime>,
    pub increase: Option<SimTime>,
}

/// What one call did.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Change {
    /// The rate was cut, and the cut hit the minimum rate.
    pub cut: bool,
    pub floor: bool,
    /// Increase events by phase.
    pub fast_recovery: u32,
    pub additive: u32,
    pub hyper: u32,
}

impl Change {
    /// RC or RT moved.
    pub fn moved(&self) -> bool {
        self.cut || self.fast_recovery + self.additive + self.hyper > 0
    }
}

/// The phase of one increase event.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Phase {
    FastRecovery,
    Additive,
    /// The i-th hyper-increase event since the cut (1-based).
    Hyper(u32),
}

/// One flow's reaction point.
#[derive(Clone, Debug)]
pub struct Rp {
    /// RC and RT.
    pub rate: BitsPerSec,
    pub target: BitsPerSec,
    pub alpha: f64,
    /// A CNP has arrived (the limiter is allocated and the timers run).
    pub active: bool,
    /// `per_tick`: a CNP since the last α tick. Interval cuts: a CNP since the last check.
    alpha_cnp: bool,
    decrease_cnp: bool,
    pub time_stage: u32,
    pub byte_stage: u32,
    /// Bytes sent since the last byte-counter event.
    bytes: u64,
}

impl Rp {
    /// A flow starting at `line_rate`, with no CNP yet.
    pub fn new(line_rate: BitsPerSec, p: &DcqcnParams) -> Rp {
        Rp {
            rate: line_rate,
            target: line_rate,
            alpha: p.alpha_init,
            active: false,
            alpha_cnp: false,
            decrease_cnp: false,
            time_stage: 0,
            byte_stage: 0,
            bytes: 0,
        }
    }

    /// A CNP for this flow arrived.
    pub fn on_cnp(&mut self, now: SimTime, p: &DcqcnParams, arm: &mut Arm) -> Change {
        let first = !self.active;
        if first {
            self.active = true;
            self.alpha = p.alpha_init;
            self.target = self.rate;
        }
        match p.alpha_update {
            AlphaUpdate::OnCnp => {
                self.alpha = (1.0 - p.g) * self.alpha + p.g;
                arm.alpha = Some(now + p.alpha_timer);
            }
            AlphaUpdate::PerTick if first => arm.alpha = Some(now + p.alpha_timer),
            AlphaUpdate::PerTick => self.alpha_cnp = true,
        }
        if p.decrease_interval.0 == 0 {
            return self.cut(now, p, arm);
        }
        self.decrease_cnp = true;
        if first {
            arm.decrease = Some(now + p.decrease_interval + Duration::from_ns(1));
        }
        Change::default()
    }

    /// The α timer expired.
    pub fn on_alpha_timer(&mut self, now: SimTime, p: &DcqcnParams, arm: &mut Arm) {
        let gain = if p.alpha_update == AlphaUpdate::PerTick && self.alpha_cnp { p.g } else { 0.0 };
        self.alpha = (1.0 - p.g) * self.alpha + gain;
        self.alpha_cnp = false;
        arm.alpha = Some(now + p.alpha_timer);
    }

    /// The rate-decrease check (only with a nonzero `decrease_interval`).
    pub fn on_decrease_timer(&mut self, now: SimTime, p: &DcqcnParams, arm: &mut Arm) -> Change {
        arm.decrease = Some(now + p.decrease_interval);
        if self.decrease_cnp {
            self.cut(now, p, arm)
        } else {
            Change::default()
        }
    }

    /// The rate-increase timer T expired.
    pub fn on_increase_timer(&mut self, now: SimTime, p: &DcqcnParams, arm: &mut Arm) -> Change {
        arm.increase = Some(now + p.increase_timer);
        self.time_stage += 1;
        let mut c = Change::default();
        self.increase(p, &mut c);
        c
    }

    /// The flow sent a data frame of `wire` bytes: the byte counter.
    pub fn on_sent(&mut self, wire: u64, p: &DcqcnParams) -> Change {
        let mut c = Change::default();
        let Some(b) = p.byte_counter else { return c };
        if !self.active {
            return c;
        }
        self.bytes += wire;
        while self.bytes >= b.0 {
            self.bytes -= b.0;
            self.byte_stage += 1;
            self.increase(p, &mut c);
        }
        c
    }

    fn cut(&mut self, now: SimTime, p: &DcqcnParams, arm: &mut Arm) -> Change {
        let increased = self.time_stage + self.byte_stage > 0;
        if p.clamp_target == ClampTarget::Always || increased {
            self.target = self.rate;
        }
        let cut = (self.rate.0 as f64 * (1.0 - self.alpha / 2.0)) as u64;
        self.rate = BitsPerSec(cut.max(p.min_rate.0));
        self.time_stage = 0;
        self.byte_stage = 0;
        self.bytes = 0;
        self.decrease_cnp = false;
        arm.increase = Some(now + p.increase_timer);
        Change { cut: true, floor: cut <= p.min_rate.0, ..Change::default() }
    }

    /// The phase an increase event falls in, from the stage counters (already counted).
    pub fn phase(&self, p: &DcqcnParams) -> Phase {
        let (f, t) = (p.fast_recovery_steps, self.time_stage);
        if p.byte_counter.is_none() {
            return match t {
                _ if t <= f => Phase::FastRecovery,
                _ if t == f + 1 => Phase::Additive,
                _ => Phase::Hyper(t - f - 1),
            };
        }
        let (lo, hi) = (self.byte_stage.min(t), self.byte_stage.max(t));
        if hi <= f {
            Phase::FastRecovery
        } else if lo <= f {
            Phase::Additive
        } else {
            Phase::Hyper(lo - f)
        }
    }

    fn increase(&mut self, p: &DcqcnParams, c: &mut Change) {
        let line = p.line_rate.0;
        match self.phase(p) {
            Phase::FastRecovery => c.fast_recovery += 1,
            Phase::Additive => {
                self.target = BitsPerSec((self.target.0 + p.rate_ai.0).min(line));
                c.additive += 1;
            }
            Phase::Hyper(i) => {
                let step = match p.hyper_increase {
                    HyperIncrease::Constant => p.rate_hai.0,
                    HyperIncrease::Multiplied => p.rate_hai.0 * u64::from(i),
                };
                self.target = BitsPerSec((self.target.0 + step).min(line));
                c.hyper += 1;
            }
        }
        self.rate = BitsPerSec((self.rate.0 + self.target.0) / 2);
    }
}
