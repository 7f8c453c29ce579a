//! Retransmission timer per RFC 6298: SRTT/RTTVAR with α = 1/8, β = 1/4, RTO = SRTT +
//! 4·RTTVAR (clock granularity G = 0: the simulator's clock is exact), clamped to
//! [`min_rto`, `max_rto`] (with `linux_rto`: SRTT + max(4·RTTVAR, `min_rto`), Linux's
//! form); doubled on each expiry (§5.5) and kept backed off until a new sample arrives. Karn's rule (no sample from an ACK covering a retransmitted segment)
//! is applied by the caller.

use crate::units::Duration;

#[derive(Clone, Debug)]
pub struct Rto {
    pub srtt: Option<Duration>,
    pub rttvar: Duration,
    pub rto: Duration,
    min: Duration,
    max: Duration,
    /// The floor applies to the variance term (Linux), not to the sum.
    linux: bool,
}

impl Rto {
    pub fn new(initial: Duration, min: Duration, max: Duration) -> Rto {
        Rto { srtt: None, rttvar: Duration::ZERO, rto: Duration(initial.0.clamp(min.0, max.0)), min, max, linux: false }
    }

    /// With the floor on the variance term, as Linux: RTO = SRTT + max(4·RTTVAR, min).
    pub fn linux(mut self, on: bool) -> Rto {
        self.linux = on;
        self
    }

    /// A new RTT measurement (RFC 6298 §2.2–2.3).
    pub fn sample(&mut self, r: Duration) {
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = Duration(r.0 / 2);
            }
            Some(s) => {
                let dev = s.0.abs_diff(r.0);
                self.rttvar = Duration((3 * self.rttvar.0 + dev) / 4);
                self.srtt = Some(Duration((7 * s.0 + r.0) / 8));
            }
        }
        let s = self.srtt.expect("set").0;
        let rto = if self.linux { s + (4 * self.rttvar.0).max(self.min.0) } else { s + 4 * self.rttvar.0 };
        self.rto = Duration(rto.clamp(self.min.0, self.max.0));
    }

    /// The timer expired: back off (RFC 6298 §5.5).
    pub fn backoff(&mut self) {
        self.rto = Duration(self.rto.0.saturating_mul(2).min(self.max.0));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc6298_estimator_and_backoff() {
        let us = Duration::from_us;
        let mut r = Rto::new(Duration::from_ms(1), us(10), Duration::from_ms(100));
        assert_eq!(r.rto, Duration::from_ms(1));
        r.sample(us(100));
        assert_eq!((r.srtt, r.rttvar, r.rto), (Some(us(100)), us(50), us(300)));
        r.sample(us(20));
        // rttvar = 3/4·50 + 1/4·80 = 57.5; srtt = 7/8·100 + 1/8·20 = 90.
        assert_eq!((r.srtt, r.rttvar), (Some(us(90)), Duration(57_500_000)));
        assert_eq!(r.rto, Duration(90_000_000 + 230_000_000));
        r.backoff();
        assert_eq!(r.rto, Duration(640_000_000));
        for _ in 0..20 {
            r.backoff();
        }
        assert_eq!(r.rto, Duration::from_ms(100));
        let mut tiny = Rto::new(us(1), us(10), us(20));
        tiny.sample(Duration(1));
        assert_eq!(tiny.rto, us(10), "min RTO");
        // Linux's form: SRTT 100 µs, RTTVAR 50 µs: 100 + max(200, 1000) µs where RFC 6298
        // gives max(300, 1000) µs.
        let mut lx = Rto::new(Duration::from_ms(1), Duration::from_ms(1), Duration::from_ms(100)).linux(true);
        lx.sample(us(100));
        assert_eq!(lx.rto, us(1_100));
        let mut rfc = Rto::new(Duration::from_ms(1), Duration::from_ms(1), Duration::from_ms(100));
        rfc.sample(us(100));
        assert_eq!(rfc.rto, us(1_000));
    }
}
