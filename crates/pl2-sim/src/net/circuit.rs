//! The circuit switch of a reconfigurable datacenter network (RDCN) and the hybrid ToR's
//! virtual output queues, as configuration and pure functions of time: which source rack
//! has a circuit to which destination rack at any picosecond, when the next circuit of a
//! rack pair starts, how long a pair's circuit was up in an interval, and the capacity
//! and marking threshold of a VOQ under dynamic buffer resizing. No state and no
//! protocol: `sim/hybrid.rs` drives the ports from these answers.
//!
//! The model follows the reTCP paper's emulator, etalon (github mukerjee/etalon): a
//! schedule is a cycle of matchings, each held for a "day" and followed by a
//! reconfiguration "night" during which no circuit carries traffic
//! (`etc/python_config.py:64-76`: circuit 80 Gbps / 30 µs, packet 10 Gbps / 5 µs, night
//! 20 µs; `experiments/buffers/nsdi2020_graphs.py:37-38`: day = 9 × night = 180 µs).

use crate::units::{Duration, SimTime};
use serde::{Deserialize, Serialize};

/// No rack (a destination with no circuit in a matching).
pub const NO_RACK: u32 = u32::MAX;

/// Which matchings the circuit switch cycles through.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ScheduleKind {
    /// Round robin over all shift matchings (a "strobe"): in slot i, destination rack d
    /// is served by source rack (d − k) mod R with k = 1 + i mod (R − 1), so each rack
    /// pair gets one day per "week" of R − 1 slots. Default.
    #[default]
    RoundRobin,
    /// One matching forever (destination d served by source d − 1), no nights.
    Fixed,
    /// The given matchings, cycled: `{ list = [[1, 2, 0], [2, 0, 1]] }`; entry d of a
    /// matching is the source rack connected to destination rack d, or −1 for none.
    List(Vec<Vec<i64>>),
}

/// What the packet network does with the rack pair whose circuit comes next while the
/// circuit switch reconfigures (etalon disables that pair's packet path during the night).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum NightPacketPath {
    /// The packet uplink keeps serving every VOQ during nights. Default.
    #[default]
    Open,
    /// During a night the packet uplink does not serve the VOQ whose circuit starts at
    /// the end of that night.
    Closed,
}

/// What happens to a frame still on its way to the circuit switch (on the ToR→circuit
/// switch fibre) when the night starts.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum InFlightAtNight {
    /// It crosses to the destination ToR (the circuit's latency is a delay line after
    /// the switching point, as in etalon's software switch). Default.
    #[default]
    Deliver,
    /// It is dropped at the circuit switch (counted as `link_down`): the mirrors moved
    /// before its light reached them.
    Drop,
}

/// When the circuit-state signal changes (with `signal_lead`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SignalTiming {
    /// At every instant, exactly while the pair's circuit is up or starts within
    /// `signal_lead` (so it clears when the day ends). Default.
    #[default]
    Exact,
    /// As etalon's schedule runner sets it (click-etalon
    /// `elements/standard/run_schedule.cc:439-481`): the ECE map is recomputed only when a
    /// day or a night comes within `signal_lead` (at each day start or day end b, at
    /// b − `signal_lead`), and holds the pairs whose circuit is up then or starts within
    /// `signal_lead`; between recomputations it keeps that value, so a pair's signal can
    /// stay on after its day ends (with 180 µs days, 20 µs nights and a 150 µs lead, for
    /// 50 µs). With a lead of 0 it is `exact`.
    Recompute,
}

/// `[network.circuit]`: the circuit switch's schedule (used with `topology.kind =
/// "hybrid_racks"`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct CircuitConfig {
    /// The matchings cycled. Default `"round_robin"`.
    pub schedule: ScheduleKind,
    /// How long each matching carries traffic. Default 180 µs (etalon).
    pub day: Duration,
    /// Reconfiguration time after each day, no circuit up. Default 20 µs (etalon).
    pub night: Duration,
    /// Default `"open"`.
    pub night_packet_path: NightPacketPath,
    /// Default `"deliver"`.
    pub in_flight_at_night: InFlightAtNight,
    /// The circuit-state signal: when set, a ToR sets the congestion-echo bit (engine
    /// flag `CE`) on every acknowledgement frame (`PktKind::Ack`) it delivers to a local
    /// host from rack s while the circuit from the host's rack to s is up or starts
    /// within `signal_lead`, and clears it otherwise (reTCP, slides 27-30; TCP reads
    /// the bit as ECN-Echo). Default none (no signal).
    pub signal_lead: Option<Duration>,
    /// When the signal changes: `"exact"` (default) or `"recompute"` (etalon's).
    pub signal_timing: SignalTiming,
    /// Start of the circuit counters and the latency histogram (warm-up excluded).
    /// Default 0.
    pub stats_from: Duration,
}

impl Default for CircuitConfig {
    fn default() -> Self {
        CircuitConfig {
            schedule: ScheduleKind::RoundRobin,
            day: Duration::from_us(180),
            night: Duration::from_us(20),
            night_packet_path: NightPacketPath::Open,
            in_flight_at_night: InFlightAtNight::Deliver,
            signal_lead: None,
            signal_timing: SignalTiming::Exact,
            stats_from: Duration::ZERO,
        }
    }
}

/// Dynamic buffer resizing (slides 15-22): a VOQ whose circuit starts within `tau`, or
/// is up, holds `large` packets, otherwise `small`.
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResizeConfig {
    /// How long before its circuit a VOQ grows (and how near the next circuit must be for
    /// it not to shrink when one ends).
    pub tau: Duration,
    /// Capacity in frames (any size) of a VOQ whose circuit is neither up nor due; it
    /// replaces `capacity_packets`. At least 1. Required.
    pub small: u32,
    /// Capacity in frames of a VOQ whose circuit is up or starts within `tau`; at least
    /// `small`. Required.
    pub large: u32,
    /// What a VOQ holding more than `small` frames does when it shrinks (at its day's
    /// end): `keep` (default) its frames and refuse new ones until it drains below
    /// `small`; `drop` the frames beyond `small` at once, newest first, as etalon's Click
    /// queues do (`SimpleQueue::live_reconfigure` kills the frames a smaller capacity
    /// leaves out, called by its schedule runner's resize).
    #[serde(default, skip_serializing_if = "ShrinkPolicy::is_keep")]
    #[schemars(!skip_serializing_if)]
    pub shrink: ShrinkPolicy,
}

/// What a VOQ does with the frames beyond its new capacity when it shrinks
/// (`ResizeConfig::shrink`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ShrinkPolicy {
    /// They stay; new frames are refused until the VOQ drains below its capacity. Default.
    #[default]
    Keep,
    /// The newest of them are dropped at the shrink, leaving the VOQ at its capacity.
    Drop,
}

impl ShrinkPolicy {
    fn is_keep(&self) -> bool {
        *self == ShrinkPolicy::Keep
    }
}

/// `[network.voq]`: the hybrid ToR's virtual output queues, one per destination rack.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct VoqConfig {
    /// Capacity of each VOQ in frames (any size), when not resized. Default 16.
    pub capacity_packets: u32,
    /// DCTCP-style step marking: an ECN-capable frame is marked CE when, with it, the
    /// VOQ would hold more than this many frames (etalon's queues). With `resize`, it
    /// scales with the capacity (`threshold × capacity / small`, rounded). Default none
    /// (no marking).
    pub mark_threshold_packets: Option<u32>,
    /// Dynamic buffer resizing; default none (static capacity).
    pub resize: Option<ResizeConfig>,
}

impl Default for VoqConfig {
    fn default() -> Self {
        VoqConfig { capacity_packets: 16, mark_threshold_packets: None, resize: None }
    }
}

impl VoqConfig {
    /// Checks values serde cannot; the error names the field below `voq` and the fix.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        if self.capacity_packets == 0 {
            return Err(("capacity_packets", "0; a VOQ must hold at least one frame (e.g. 16)".into()));
        }
        if self.mark_threshold_packets == Some(0) {
            return Err(("mark_threshold_packets", "0 would mark every frame; use at least 1 or leave it out".into()));
        }
        if let Some(r) = &self.resize {
            if r.small == 0 || r.large < r.small {
                return Err(("resize", format!("small {} large {}; need 1 ≤ small ≤ large (e.g. {{ tau = \"1800us\", small = 16, large = 50 }})", r.small, r.large)));
            }
        }
        Ok(())
    }

    /// Capacity in frames of VOQ (src → dst) at `t`.
    pub fn capacity(&self, sched: &Schedule, src: u32, dst: u32, t: SimTime) -> u32 {
        match &self.resize {
            None => self.capacity_packets,
            Some(r) if sched.up_or_due(src, dst, t, r.tau) => r.large,
            Some(r) => r.small,
        }
    }

    /// Marking threshold in frames of VOQ (src → dst) at `t` (`u32::MAX`: none).
    pub fn mark_threshold(&self, sched: &Schedule, src: u32, dst: u32, t: SimTime) -> u32 {
        let Some(k) = self.mark_threshold_packets else { return u32::MAX };
        match &self.resize {
            None => k,
            Some(r) => {
                let cap = self.capacity(sched, src, dst, t);
                ((u64::from(k) * u64::from(cap) + u64::from(r.small) / 2) / u64::from(r.small)).max(1) as u32
            }
        }
    }
}

/// A schedule of matchings over `racks` racks, resolved from a [`CircuitConfig`].
#[derive(Clone, Debug)]
pub struct Schedule {
    racks: u32,
    /// Day and day + night, in ps.
    day: u64,
    slot: u64,
    /// `dst_of[m][src]`: the destination rack source `src` reaches in matching `m`.
    dst_of: Vec<Vec<u32>>,
    /// One matching held forever.
    fixed: bool,
}

impl CircuitConfig {
    /// The schedule over `racks` racks; the error names the field below `circuit`.
    pub fn schedule(&self, racks: u32) -> Result<Schedule, (&'static str, String)> {
        if racks < 2 {
            return Err(("schedule", format!("{racks} racks; a circuit switch joins at least 2")));
        }
        let shift = |k: u32| -> Vec<u32> { (0..racks).map(|s| (s + k) % racks).collect() };
        let (dst_of, fixed) = match &self.schedule {
            ScheduleKind::RoundRobin => ((1..racks).map(shift).collect(), false),
            ScheduleKind::Fixed => (vec![shift(1)], true),
            ScheduleKind::List(ms) => {
                if ms.is_empty() {
                    return Err(("schedule", "an empty list; give at least one matching".into()));
                }
                let mut out = Vec::new();
                for (i, m) in ms.iter().enumerate() {
                    if m.len() != racks as usize {
                        return Err(("schedule", format!("matching {i} has {} entries; give one per destination rack ({racks})", m.len())));
                    }
                    let mut d_of = vec![NO_RACK; racks as usize];
                    for (d, &s) in m.iter().enumerate() {
                        if s < 0 {
                            continue;
                        }
                        if s >= i64::from(racks) || s as usize == d {
                            return Err(("schedule", format!("matching {i}: destination {d} has source {s}; use a rack 0..{racks} other than {d}, or -1")));
                        }
                        if d_of[s as usize] != NO_RACK {
                            return Err(("schedule", format!("matching {i}: source rack {s} has two destinations; a matching gives each source at most one")));
                        }
                        d_of[s as usize] = d as u32;
                    }
                    out.push(d_of);
                }
                (out, false)
            }
        };
        if !fixed && self.day.0 == 0 {
            return Err(("day", "0; a day must be positive (e.g. \"180us\")".into()));
        }
        Ok(Schedule { racks, day: self.day.0, slot: self.day.0 + self.night.0, dst_of, fixed })
    }
}

impl Schedule {
    pub fn racks(&self) -> u32 {
        self.racks
    }

    /// Matchings in one cycle ("week": `len × (day + night)`).
    pub fn len(&self) -> u32 {
        self.dst_of.len() as u32
    }

    pub fn is_empty(&self) -> bool {
        self.dst_of.is_empty()
    }

    pub fn is_fixed(&self) -> bool {
        self.fixed
    }

    /// Start of slot `k` (its day).
    fn start(&self, k: u64) -> SimTime {
        SimTime(k * self.slot)
    }

    fn matched(&self, k: u64, src: u32, dst: u32) -> bool {
        self.dst_of[(k % self.dst_of.len() as u64) as usize][src as usize] == dst
    }

    /// The destination rack `src`'s circuit reaches at `t`, if one is up.
    #[inline]
    pub fn dst_of(&self, src: u32, t: SimTime) -> Option<u32> {
        if self.fixed {
            return Some(self.dst_of[0][src as usize]).filter(|&d| d != NO_RACK);
        }
        let k = t.0 / self.slot;
        if t.0 - k * self.slot >= self.day {
            return None;
        }
        Some(self.dst_of[(k % self.dst_of.len() as u64) as usize][src as usize]).filter(|&d| d != NO_RACK)
    }

    /// Whether the circuit `src → dst` is up at `t`.
    #[inline]
    pub fn up(&self, src: u32, dst: u32, t: SimTime) -> bool {
        self.dst_of(src, t) == Some(dst)
    }

    /// End of the day holding `t` (`SimTime::MAX` for a fixed schedule); meaningful when
    /// a circuit is up at `t`.
    #[inline]
    pub fn day_end(&self, t: SimTime) -> SimTime {
        if self.fixed {
            return SimTime::MAX;
        }
        SimTime((t.0 / self.slot) * self.slot + self.day)
    }

    /// The first day start at or after `t` in which `src → dst` is matched.
    pub fn next_start(&self, src: u32, dst: u32, t: SimTime) -> Option<SimTime> {
        if self.fixed {
            return self.matched(0, src, dst).then_some(t);
        }
        let mut k = t.0.div_ceil(self.slot);
        for _ in 0..=self.dst_of.len() {
            if self.matched(k, src, dst) {
                return Some(self.start(k));
            }
            k += 1;
        }
        None
    }

    /// Whether `src → dst` is up at `t` or its next circuit starts within `lead`.
    #[inline]
    pub fn up_or_due(&self, src: u32, dst: u32, t: SimTime, lead: Duration) -> bool {
        self.up(src, dst, t) || self.next_start(src, dst, t).is_some_and(|s| s.0 - t.0 <= lead.0)
    }

    /// The circuit-state signal of `src → dst` at `t` with lead `lead` (see
    /// [`SignalTiming`]): `exact` is `up_or_due` at `t`; `recompute` is `up_or_due` at the
    /// latest recomputation at or before `t`, b − `lead` for the latest day start or day
    /// end b at or before `t + lead` (time 0 before the first).
    #[inline]
    pub fn signal(&self, src: u32, dst: u32, t: SimTime, lead: Duration, timing: SignalTiming) -> bool {
        let at = match timing {
            SignalTiming::Exact => t,
            SignalTiming::Recompute if self.fixed => t,
            SignalTiming::Recompute => {
                let x = t.0 + lead.0;
                let k = x / self.slot;
                let b = if x - k * self.slot >= self.day { k * self.slot + self.day } else { k * self.slot };
                SimTime(b.saturating_sub(lead.0))
            }
        };
        self.up_or_due(src, dst, at, lead)
    }

    /// The next day start or day end strictly after `t` (`None`: a fixed schedule).
    pub fn next_boundary(&self, t: SimTime) -> Option<SimTime> {
        if self.fixed {
            return None;
        }
        let k = t.0 / self.slot;
        let end = k * self.slot + self.day;
        Some(SimTime(if t.0 < end { end } else { (k + 1) * self.slot }))
    }

    /// Whether `t` is in a night and the matching after it joins `src → dst` (the pair
    /// whose packet path a `closed` night disables).
    pub fn night_before(&self, src: u32, dst: u32, t: SimTime) -> bool {
        if self.fixed {
            return false;
        }
        let k = t.0 / self.slot;
        t.0 - k * self.slot >= self.day && self.matched(k + 1, src, dst)
    }

    /// How long `src → dst` was up within `[from, to)`.
    pub fn up_time(&self, src: u32, dst: u32, from: SimTime, to: SimTime) -> Duration {
        if to <= from {
            return Duration::ZERO;
        }
        if self.fixed {
            return if self.matched(0, src, dst) { Duration(to.0 - from.0) } else { Duration::ZERO };
        }
        let mut total = 0;
        let mut k = from.0 / self.slot;
        while self.start(k) < to {
            if self.matched(k, src, dst) {
                let a = self.start(k).0.max(from.0);
                let b = (self.start(k).0 + self.day).min(to.0);
                total += b.saturating_sub(a);
            }
            k += 1;
        }
        Duration(total)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(x: u64) -> SimTime {
        SimTime(x * 1_000_000)
    }

    fn etalon() -> Schedule {
        CircuitConfig::default().schedule(8).unwrap()
    }

    /// The round-robin week of 8 racks is 7 × 200 µs = 1400 µs and each pair has exactly
    /// one 180 µs day in it, up to the picosecond: pair 0 → 3 (shift 3) is slot 2,
    /// [400 µs, 580 µs).
    #[test]
    fn round_robin_circuit_is_up_exactly_in_its_day() {
        let s = etalon();
        assert_eq!(s.len(), 7);
        assert!(!s.up(0, 3, SimTime(us(400).0 - 1)));
        assert!(s.up(0, 3, us(400)));
        assert!(s.up(0, 3, SimTime(us(580).0 - 1)));
        assert!(!s.up(0, 3, us(580)));
        assert!(s.up(0, 3, us(1800)), "one week later");
        assert_eq!(s.dst_of(0, us(590)), None, "night: no circuit at all");
        assert_eq!(s.up_time(0, 3, SimTime::ZERO, us(1400 * 10)), Duration::from_us(1800));
        for src in 0..8 {
            let up: u64 = (0..8).filter(|&d| d != src).map(|d| s.up_time(src, d, us(0), us(1400)).0).sum();
            assert_eq!(up, 7 * 180 * 1_000_000, "each rack is up 7 days a week, one per peer");
        }
    }

    #[test]
    fn next_start_and_lead_count_to_the_picosecond() {
        let s = etalon();
        assert_eq!(s.next_start(0, 3, us(0)), Some(us(400)));
        assert_eq!(s.next_start(0, 3, us(401)), Some(us(1800)));
        let tau = Duration::from_us(150);
        assert!(!s.up_or_due(0, 3, SimTime(us(250).0 - 1), tau));
        assert!(s.up_or_due(0, 3, us(250), tau));
        assert!(!s.up_or_due(0, 3, us(580), tau));
        assert_eq!(s.next_boundary(us(0)), Some(us(180)));
        assert_eq!(s.next_boundary(us(180)), Some(us(200)));
        assert!(s.night_before(0, 3, us(390)));
        assert!(s.night_before(0, 3, us(380)), "the night [380, 400) precedes 0 → 3");
        assert!(!s.night_before(0, 3, SimTime(us(380).0 - 1)), "still the day of 0 → 2");
    }

    /// VOQ capacities change exactly τ before the circuit and back at its end.
    #[test]
    fn resize_grows_at_tau_before_and_shrinks_at_the_end() {
        let s = etalon();
        let v = VoqConfig { capacity_packets: 16, mark_threshold_packets: Some(10), resize: Some(ResizeConfig { tau: Duration::from_us(300), small: 16, large: 50, shrink: ShrinkPolicy::Keep }) };
        assert_eq!(v.capacity(&s, 0, 3, SimTime(us(100).0 - 1)), 16);
        assert_eq!(v.capacity(&s, 0, 3, us(100)), 50);
        assert_eq!(v.mark_threshold(&s, 0, 3, us(100)), 31);
        assert_eq!(v.mark_threshold(&s, 0, 3, us(0)), 10);
        assert_eq!(v.capacity(&s, 0, 3, SimTime(us(580).0 - 1)), 50);
        assert_eq!(v.capacity(&s, 0, 3, us(580)), 16);
        // τ longer than the gap to the next circuit: it never shrinks.
        let always = VoqConfig { resize: Some(ResizeConfig { tau: Duration::from_us(1220), small: 16, large: 50, shrink: ShrinkPolicy::Keep }), ..v };
        assert!((0..2800).all(|t| always.capacity(&s, 0, 3, us(t)) == 50));
    }

    /// etalon's recomputed signal, worked by hand from `run_schedule.cc:439-481` for pair
    /// 0 → 3 (day [400, 580) µs of the 8-rack week) with a 150 µs lead. Boundaries: day
    /// starts at multiples of 200 µs, day ends at 180 + multiples of 200; recomputations at
    /// each boundary less 150 µs: 230 (380), 250 (400), 430 (580), 450 (600), 630 (780).
    /// At 250 the pair's day is 150 µs ahead: on (as the exact signal). At 450 the pair's
    /// day is up: still on, and nothing recomputes until 630, when the day [600, 780) of
    /// 0 → 4 holds and 0 → 3 is a week away: off, 50 µs after the day ended at 580.
    #[test]
    fn recomputed_signal_lingers_after_the_day_as_etalons() {
        let s = etalon();
        let lead = Duration::from_us(150);
        let sig = |t: SimTime| s.signal(0, 3, t, lead, SignalTiming::Recompute);
        assert!(!sig(SimTime(us(250).0 - 1)));
        assert!(sig(us(250)), "rises exactly lead before the day, as the exact signal");
        assert!(sig(us(579)));
        assert!(sig(us(580)), "the day has ended; the map computed at 450 µs still holds the pair");
        assert!(!s.signal(0, 3, us(580), lead, SignalTiming::Exact));
        assert!(sig(SimTime(us(630).0 - 1)));
        assert!(!sig(us(630)), "cleared at the recomputation for the day end at 780 µs");
        // A lead of 0 is the exact signal at every microsecond of two weeks.
        let z = Duration::ZERO;
        assert!((0..2800).all(|t| s.signal(0, 3, us(t), z, SignalTiming::Recompute) == s.signal(0, 3, us(t), z, SignalTiming::Exact)));
    }

    #[test]
    fn lists_and_fixed_schedules() {
        let cfg = CircuitConfig { schedule: ScheduleKind::List(vec![vec![1, -1], vec![-1, 0]]), ..Default::default() };
        let s = cfg.schedule(2).unwrap();
        assert!(s.up(1, 0, us(0)));
        assert!(s.up(0, 1, us(200)));
        assert_eq!(s.dst_of(0, us(0)), None);
        let bad = CircuitConfig { schedule: ScheduleKind::List(vec![vec![0, 1]]), ..Default::default() };
        assert_eq!(bad.schedule(2).unwrap_err().0, "schedule");
        let f = CircuitConfig { schedule: ScheduleKind::Fixed, ..Default::default() }.schedule(3).unwrap();
        assert!(f.up(0, 1, us(12_345)));
        assert_eq!(f.next_boundary(us(0)), None);
    }
}
