//! Physical units used everywhere in pl2: simulated time in integer picoseconds
//! ([`SimTime`], [`Duration`]), sizes in bytes ([`Bytes`]) and link rates in bits per
//! second ([`BitsPerSec`]).
//!
//! Each type parses from and prints to a string with its unit (`"1.5us"`, `"1500B"`,
//! `"100Gbps"`), which is how scenario files spell them. Parsing rejects negative,
//! non-finite and unit-less values with a [`UnitError`] naming what is allowed.

use serde::{de, Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// A point in simulated time, in picoseconds since the start of the run.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimTime(pub u64);

/// A span of simulated time, in picoseconds.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Duration(pub u64);

/// A size in bytes.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Bytes(pub u64);

/// A link or NIC rate in bits per second.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BitsPerSec(pub u64);

pub const PS_PER_NS: u64 = 1_000;
pub const PS_PER_US: u64 = 1_000_000;
pub const PS_PER_MS: u64 = 1_000_000_000;
pub const PS_PER_S: u64 = 1_000_000_000_000;

impl SimTime {
    pub const ZERO: SimTime = SimTime(0);
    pub const MAX: SimTime = SimTime(u64::MAX);
    pub fn ps(self) -> u64 {
        self.0
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / PS_PER_S as f64
    }
    /// Time elapsed since `earlier`, zero if `earlier` is later.
    pub fn since(self, earlier: SimTime) -> Duration {
        Duration(self.0.saturating_sub(earlier.0))
    }
}

impl Duration {
    /// Whether it is zero long.
    pub fn is_zero(&self) -> bool {
        self.0 == 0
    }
    pub const ZERO: Duration = Duration(0);
    pub const fn from_ns(ns: u64) -> Duration {
        Duration(ns * PS_PER_NS)
    }
    pub const fn from_us(us: u64) -> Duration {
        Duration(us * PS_PER_US)
    }
    pub const fn from_ms(ms: u64) -> Duration {
        Duration(ms * PS_PER_MS)
    }
    pub fn ps(self) -> u64 {
        self.0
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / PS_PER_S as f64
    }
    pub fn as_ns_f64(self) -> f64 {
        self.0 as f64 / PS_PER_NS as f64
    }
}

impl Add<Duration> for SimTime {
    type Output = SimTime;
    fn add(self, d: Duration) -> SimTime {
        SimTime(self.0.saturating_add(d.0))
    }
}
impl AddAssign<Duration> for SimTime {
    fn add_assign(&mut self, d: Duration) {
        self.0 = self.0.saturating_add(d.0);
    }
}
impl Sub<SimTime> for SimTime {
    type Output = Duration;
    fn sub(self, o: SimTime) -> Duration {
        Duration(self.0 - o.0)
    }
}
impl Add for Duration {
    type Output = Duration;
    fn add(self, d: Duration) -> Duration {
        Duration(self.0 + d.0)
    }
}
impl AddAssign for Duration {
    fn add_assign(&mut self, d: Duration) {
        self.0 += d.0;
    }
}
impl Add for Bytes {
    type Output = Bytes;
    fn add(self, b: Bytes) -> Bytes {
        Bytes(self.0 + b.0)
    }
}

impl BitsPerSec {
    pub const fn gbps(g: u64) -> BitsPerSec {
        BitsPerSec(g * 1_000_000_000)
    }
    pub fn bps(self) -> u64 {
        self.0
    }
    /// Time to serialise `bytes` at this rate, rounded up to the next picosecond so that a
    /// link never runs faster than its rate.
    #[inline]
    pub fn tx_time(self, bytes: u64) -> Duration {
        // Every frame (below 2.3 MB) fits the product in 64 bits: one 64-bit division
        // instead of a 128-bit one (a library call); the same result.
        if let Some(num) = bytes.checked_mul(8 * PS_PER_S) {
            return Duration(num.div_ceil(self.0));
        }
        let num = bytes as u128 * 8 * PS_PER_S as u128;
        let r = self.0 as u128;
        Duration(num.div_ceil(r) as u64)
    }
    /// Bytes this rate carries in `d` (rounded down).
    pub fn bytes_in(self, d: Duration) -> u64 {
        (d.0 as u128 * self.0 as u128 / (8 * PS_PER_S as u128)) as u64
    }
}

/// A malformed quantity: names the text, what was wrong and what is accepted.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("invalid {kind} {text:?}: {problem}; write e.g. {example}")]
pub struct UnitError {
    pub kind: &'static str,
    pub text: String,
    pub problem: String,
    pub example: &'static str,
}

fn split_number(s: &str) -> Option<(f64, &str)> {
    let s = s.trim();
    let end = s
        .char_indices()
        .find(|&(_, c)| !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+'))
        .map(|(i, _)| i)
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(end);
    num.parse::<f64>().ok().map(|v| (v, unit.trim()))
}

fn parse_scaled(
    kind: &'static str,
    example: &'static str,
    text: &str,
    units: &[(&str, f64)],
) -> Result<u64, UnitError> {
    let err = |problem: String| UnitError { kind, text: text.to_string(), problem, example };
    let (v, unit) = split_number(text).ok_or_else(|| err("no number".into()))?;
    if !v.is_finite() || v < 0.0 {
        return Err(err("must be a non-negative finite number".into()));
    }
    let allowed: Vec<&str> = units.iter().map(|u| u.0).collect();
    let scale = units
        .iter()
        .find(|(u, _)| *u == unit)
        .map(|u| u.1)
        .ok_or_else(|| err(format!("unknown unit {unit:?} (allowed: {})", allowed.join(", "))))?;
    let x = v * scale;
    if x > u64::MAX as f64 / 2.0 {
        return Err(err("too large".into()));
    }
    let r = x.round();
    if (r - x).abs() > 1e-6 * x.max(1.0) {
        return Err(err(format!("not a whole number of the base unit ({x})")));
    }
    Ok(r as u64)
}

const TIME_UNITS: &[(&str, f64)] =
    &[("ps", 1.0), ("ns", 1e3), ("us", 1e6), ("µs", 1e6), ("ms", 1e9), ("s", 1e12)];
const BYTE_UNITS: &[(&str, f64)] = &[
    ("B", 1.0),
    ("KB", 1e3),
    ("MB", 1e6),
    ("GB", 1e9),
    ("KiB", 1024.0),
    ("MiB", 1048576.0),
    ("GiB", 1073741824.0),
];
const RATE_UNITS: &[(&str, f64)] =
    &[("bps", 1.0), ("Kbps", 1e3), ("Mbps", 1e6), ("Gbps", 1e9), ("Tbps", 1e12)];

impl std::str::FromStr for Duration {
    type Err = UnitError;
    fn from_str(s: &str) -> Result<Self, UnitError> {
        parse_scaled("duration", "\"1.5us\", \"346ns\", \"10ms\"", s, TIME_UNITS).map(Duration)
    }
}
impl std::str::FromStr for Bytes {
    type Err = UnitError;
    fn from_str(s: &str) -> Result<Self, UnitError> {
        parse_scaled("size", "\"1500B\", \"64KiB\", \"12MB\"", s, BYTE_UNITS).map(Bytes)
    }
}
impl std::str::FromStr for BitsPerSec {
    type Err = UnitError;
    fn from_str(s: &str) -> Result<Self, UnitError> {
        let v = parse_scaled("rate", "\"100Gbps\", \"25Gbps\"", s, RATE_UNITS)?;
        if v == 0 {
            return Err(UnitError {
                kind: "rate",
                text: s.into(),
                problem: "must be positive".into(),
                example: "\"100Gbps\"",
            });
        }
        Ok(BitsPerSec(v))
    }
}

/// Prints the value in the largest unit that keeps it an integer, so that printing and
/// parsing round-trip exactly.
fn fmt_exact(v: u64, units: &[(&str, u64)]) -> String {
    for (u, scale) in units.iter().rev() {
        if v != 0 && v.is_multiple_of(*scale) {
            return format!("{}{}", v / scale, u);
        }
    }
    format!("{}{}", v, units[0].0)
}

impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let u = [("ps", 1), ("ns", PS_PER_NS), ("us", PS_PER_US), ("ms", PS_PER_MS), ("s", PS_PER_S)];
        f.write_str(&fmt_exact(self.0, &u))
    }
}
impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        Duration(self.0).fmt(f)
    }
}
impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let u = [("B", 1), ("KiB", 1024), ("MiB", 1 << 20), ("GiB", 1 << 30)];
        f.write_str(&fmt_exact(self.0, &u))
    }
}
impl fmt::Display for BitsPerSec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let u = [("bps", 1), ("Kbps", 1_000), ("Mbps", 1_000_000), ("Gbps", 1_000_000_000)];
        f.write_str(&fmt_exact(self.0, &u))
    }
}

macro_rules! string_serde {
    ($t:ty, $what:expr) => {
        impl Serialize for $t {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&self.to_string())
            }
        }
        impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> de::Visitor<'de> for V {
                    type Value = $t;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        f.write_str($what)
                    }
                    fn visit_str<E: de::Error>(self, v: &str) -> Result<$t, E> {
                        v.parse().map_err(|e: UnitError| E::custom(e))
                    }
                }
                d.deserialize_str(V)
            }
        }
    };
}
string_serde!(Duration, "a duration with its unit, e.g. \"1us\"");

macro_rules! string_schema {
    ($t:ty, $name:expr, $desc:expr) => {
        impl schemars::JsonSchema for $t {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                $name.into()
            }
            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                schemars::json_schema!({ "type": "string", "description": $desc })
            }
        }
    };
}
string_schema!(Duration, "Duration", "a duration with a unit: ps, ns, us, ms, s (e.g. \"1.5us\")");
string_schema!(Bytes, "Bytes", "a size with a unit: B, KB, MB, GB, KiB, MiB, GiB (e.g. \"1500B\")");
string_schema!(BitsPerSec, "BitsPerSec", "a rate with a unit: bps, Kbps, Mbps, Gbps, Tbps (e.g. \"100Gbps\")");
string_serde!(Bytes, "a size with its unit, e.g. \"1500B\"");
string_serde!(BitsPerSec, "a rate with its unit, e.g. \"100Gbps\"");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_print_round_trip() {
        for s in ["1us", "346ns", "10ms", "1500B", "64KiB", "100Gbps", "25Gbps", "1ps"] {
            let printed = if s.ends_with("bps") {
                s.parse::<BitsPerSec>().unwrap().to_string()
            } else if s.ends_with('B') {
                s.parse::<Bytes>().unwrap().to_string()
            } else {
                s.parse::<Duration>().unwrap().to_string()
            };
            assert_eq!(printed, s);
        }
        assert_eq!("1.5us".parse::<Duration>().unwrap(), Duration(1_500_000));
        assert_eq!("12MB".parse::<Bytes>().unwrap(), Bytes(12_000_000));
    }

    #[test]
    fn rejects_bad_quantities() {
        assert!("-1us".parse::<Duration>().is_err());
        assert!("10".parse::<Duration>().unwrap_err().to_string().contains("unknown unit"));
        assert!("0Gbps".parse::<BitsPerSec>().is_err());
        assert!("1.5ps".parse::<Duration>().is_err());
        assert!("abc".parse::<Bytes>().is_err());
    }

    #[test]
    fn serialisation_time_is_exact_at_100g() {
        // 1542 B (full 802.1Q frame with preamble and IFG) at 100 Gbps = 123.36 ns.
        assert_eq!(BitsPerSec::gbps(100).tx_time(1542), Duration(123_360));
        assert_eq!(BitsPerSec::gbps(25).tx_time(64), Duration(20_480));
    }
}
