//! reTCP (Mukerjee et al., "Adapting TCP for Reconfigurable Datacenter Networks", NSDI
//! 2020; slides 26-31): a base congestion control (Reno by default, as the authors'
//! kernel module `reTCP/retcp.c` in mukerjee/etalon, or CUBIC) plus one multiplicative
//! jump per change of the circuit-state signal the ToR writes into ECN-Echo: on a
//! 0 → 1 transition `cwnd ← cwnd × β`, on 1 → 0 `cwnd ← cwnd / β`, once per transition
//! (slide 31; β = 2: circuit BDP 45 packets against a 16-packet queue). The signal never
//! halves the window as RFC 3168 ECN would.
//!
//! As `retcp.c` does (lines 30-49), the signal is read from every ACK that reaches the
//! algorithm (`in_ack_event`), and the jump is applied where the window grows
//! (`cong_avoid`, after the base's growth), so not during fast recovery: a transition
//! seen in recovery takes effect on the first ACK after it.

use super::cubic::Cubic;
use super::cubic_linux::LinuxCubic;
use super::newreno::NewReno;
use super::reno_linux::LinuxReno;
use super::{segs, AckInfo, CongestionControl, Window};
use crate::units::SimTime;

/// Calls the same method on whichever base algorithm `$base` holds.
macro_rules! base {
    ($base:expr, $b:ident => $e:expr) => {
        match $base {
            Base::Reno($b) => $e,
            Base::RenoLinux($b) => $e,
            Base::Cubic($b) => $e,
            Base::CubicLinux($b) => $e,
        }
    };
}

/// The base algorithm reTCP grows the window with.
#[derive(Clone, Debug)]
pub enum Base {
    Reno(NewReno),
    /// Reno as Linux 4.15 runs it (`reno_linux`): the authors' module's own base,
    /// `tcp_reno_cong_avoid` and `tcp_reno_ssthresh`.
    RenoLinux(LinuxReno),
    Cubic(Cubic),
    /// CUBIC as Linux 4.15 runs it (`cubic_linux`).
    CubicLinux(LinuxCubic),
}

#[derive(Clone, Debug)]
pub struct Retcp {
    pub base: Base,
    /// β: the factor of the jumps (slide 31; default 2).
    pub beta: f64,
    /// The last signal seen (the ACK's ECE bit).
    have_circuit: bool,
    /// Whether the window is jumped up now.
    jumped: bool,
}

impl Retcp {
    pub fn new(base: Base, beta: f64) -> Retcp {
        Retcp { base, beta, have_circuit: false, jumped: false }
    }
}

impl CongestionControl for Retcp {
    fn on_ack(&mut self, w: &mut Window, a: &AckInfo) {
        self.have_circuit = a.ece;
        base!(&mut self.base, b => b.on_ack(w, a));
        if a.in_recovery {
            return;
        }
        if self.have_circuit == self.jumped {
            return;
        }
        let up = self.have_circuit;
        self.jumped = up;
        w.cwnd = match self.base {
            // `retcp.c`: `snd_cwnd *= jump_up`, `snd_cwnd /= jump_down` on the kernel's
            // whole segments (floored; kept at one segment, where the kernel's would
            // reach 0 from 1).
            Base::RenoLinux(_) => {
                let cwnd = f64::from(segs(w.cwnd, w.mss));
                u64::from(((if up { cwnd * self.beta } else { cwnd / self.beta }) as u32).max(1)) * w.mss
            }
            _ => ((if up { w.cwnd as f64 * self.beta } else { w.cwnd as f64 / self.beta }) as u64).max(w.mss),
        };
    }

    fn on_congestion_point(&mut self, snd_una: u64, snd_nxt: u64) {
        base!(&mut self.base, b => b.on_congestion_point(snd_una, snd_nxt))
    }

    fn on_loss(&mut self, w: &mut Window, now: SimTime, flight: u64) {
        base!(&mut self.base, b => b.on_loss(w, now, flight))
    }
    fn on_rto(&mut self, w: &mut Window, now: SimTime, flight: u64) {
        base!(&mut self.base, b => b.on_rto(w, now, flight))
    }
}
