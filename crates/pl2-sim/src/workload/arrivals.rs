//! Message sources: open-loop Poisson arrivals at a target load ([`PoissonSource`]),
//! closed-loop persistent fixed-size streams ([`FixedSizeStream`]), and how a source
//! picks each message's destination ([`DestChooser`]).
//!
//! Load is counted in wire bytes: a source at load `L` on a NIC of rate `R` offers
//! `L * R` bits per second including every frame's headers, padding, preamble and IFG,
//! so its mean inter-arrival time is `mean_wire_bytes * 8 / (L * R)`. Inter-arrival
//! times are drawn exponential in continuous time and rounded to the nearest picosecond
//! (the rounding shifts the mean by under 1e-3 ps for gaps above 100 ps); the first
//! message arrives one inter-arrival time after `start`, as in a Poisson process
//! started at `start`. Each message draws, in order, its size, its destination, then
//! the gap to the next message, all from the caller's stream.

use super::{MessageSpec, SizeCdf, WorkloadError, MAX_PRIORITY};
use crate::framing::{Framing, L4Headers};
use crate::rng::SimRng;
use crate::units::{BitsPerSec, Duration, SimTime, PS_PER_S};
use serde::{Deserialize, Serialize};

/// How a [`DestChooser::List`] walks its hosts.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ListOrder {
    /// In list order, wrapping around.
    RoundRobin,
    /// Independently and uniformly at random each time.
    Uniform,
}

/// Which host each message goes to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DestChooser {
    /// Always this host.
    Fixed(u32),
    /// Uniformly among hosts `0..n_hosts`. With `exclude_self` the source is skipped
    /// (uniform over the other `n_hosts - 1`); without it the source must lie outside
    /// `0..n_hosts` (e.g. clients sending to a block of servers), since a host never
    /// sends to itself.
    UniformExcept { n_hosts: u32, exclude_self: bool },
    /// From a list of hosts (none of them the source), in `order`.
    List { hosts: Vec<u32>, order: ListOrder },
}

fn self_send(src: u32) -> WorkloadError {
    WorkloadError::param(
        "dests",
        src,
        "includes the source host itself",
        "a host never sends to itself: remove it",
    )
}

impl DestChooser {
    /// Checks that the chooser can serve source `src` and never returns `src`.
    pub fn validate(&self, src: u32) -> Result<(), WorkloadError> {
        match self {
            DestChooser::Fixed(d) if *d == src => Err(self_send(src)),
            DestChooser::Fixed(_) => Ok(()),
            DestChooser::UniformExcept {
                n_hosts,
                exclude_self,
            } => {
                let n = *n_hosts;
                if *exclude_self && (src >= n || n < 2) {
                    return Err(WorkloadError::param(
                        "n_hosts",
                        n,
                        format!("source {src} is not among hosts 0..{n}, or no other host is left"),
                        "set n_hosts to the number of hosts (at least 2), \
                         or exclude_self = false for a source outside them",
                    ));
                }
                if !*exclude_self && (src < n || n == 0) {
                    return Err(WorkloadError::param(
                        "exclude_self",
                        false,
                        format!(
                            "source {src} would pick itself among hosts 0..{n} (or none exist)"
                        ),
                        "set exclude_self = true",
                    ));
                }
                Ok(())
            }
            DestChooser::List { hosts, .. } if hosts.is_empty() => Err(WorkloadError::param(
                "hosts",
                "[]",
                "the destination list is empty",
                "list at least one host",
            )),
            DestChooser::List { hosts, .. } if hosts.contains(&src) => Err(self_send(src)),
            DestChooser::List { .. } => Ok(()),
        }
    }

    /// The next destination for `src`. `cursor` is the round-robin position (start at
    /// 0); only `List` with `RoundRobin` moves it, only random choices draw from `rng`.
    pub fn pick(&self, src: u32, cursor: &mut usize, rng: &mut SimRng) -> u32 {
        match self {
            DestChooser::Fixed(d) => *d,
            DestChooser::UniformExcept {
                n_hosts,
                exclude_self: true,
            } => {
                let d = rng.below(u64::from(*n_hosts) - 1) as u32;
                if d >= src {
                    d + 1
                } else {
                    d
                }
            }
            DestChooser::UniformExcept {
                n_hosts,
                exclude_self: false,
            } => rng.below(u64::from(*n_hosts)) as u32,
            DestChooser::List {
                hosts,
                order: ListOrder::RoundRobin,
            } => {
                let d = hosts[*cursor % hosts.len()];
                *cursor = (*cursor + 1) % hosts.len();
                d
            }
            DestChooser::List {
                hosts,
                order: ListOrder::Uniform,
            } => hosts[rng.below(hosts.len() as u64) as usize],
        }
    }
}

fn check_priority(priority: u8) -> Result<(), WorkloadError> {
    if priority > MAX_PRIORITY {
        return Err(WorkloadError::param(
            "priority",
            priority,
            "is not an 802.1Q priority",
            "use 0..=7",
        ));
    }
    Ok(())
}

/// Everything a [`PoissonSource`] needs.
#[derive(Clone, Debug)]
pub struct PoissonParams {
    /// The sending host.
    pub src: u32,
    /// Offered load as a fraction of `nic_rate`, in wire bytes; in (0, 1].
    pub load: f64,
    /// The source's NIC rate.
    pub nic_rate: BitsPerSec,
    /// Message payload sizes.
    pub sizes: SizeCdf,
    /// Destination of each message.
    pub dests: DestChooser,
    /// Arrivals happen in `[start, stop)`.
    pub start: SimTime,
    pub stop: SimTime,
    /// Framing, headers and IP MTU the network uses, to count wire bytes.
    pub framing: Framing,
    pub l4: L4Headers,
    pub mtu_bytes: u64,
    /// Thread and priority stamped on every message.
    pub thread: u16,
    pub priority: u8,
}

/// Open-loop Poisson arrivals for one source host.
#[derive(Clone, Debug)]
pub struct PoissonSource {
    params: PoissonParams,
    mean_gap_ps: f64,
    /// Time of the next message; `None` until the first gap is drawn.
    next_time: Option<SimTime>,
    cursor: usize,
}

impl PoissonSource {
    /// Validates the parameters and computes the mean inter-arrival time.
    pub fn new(params: PoissonParams) -> Result<PoissonSource, WorkloadError> {
        if !(params.load > 0.0 && params.load <= 1.0) {
            return Err(WorkloadError::param(
                "load",
                params.load,
                "must be in (0, 1]: a source cannot offer more than its NIC rate \
                 counting headers, preamble and IFG",
                "give the offered load as a fraction of the NIC rate, e.g. 0.5",
            ));
        }
        if params.nic_rate.bps() == 0 {
            return Err(WorkloadError::param(
                "nic_rate",
                params.nic_rate,
                "must be positive",
                "e.g. 100Gbps",
            ));
        }
        if params.stop <= params.start {
            return Err(WorkloadError::param(
                "stop",
                params.stop,
                format!("is not after start = {}", params.start),
                "set stop later than start",
            ));
        }
        check_priority(params.priority)?;
        params.dests.validate(params.src)?;
        let wire_bytes =
            params
                .sizes
                .mean_wire_bytes(params.framing, params.l4, params.mtu_bytes)?;
        let mean_gap_ps =
            wire_bytes * 8.0 * PS_PER_S as f64 / (params.load * params.nic_rate.bps() as f64);
        Ok(PoissonSource {
            params,
            mean_gap_ps,
            next_time: None,
            cursor: 0,
        })
    }

    /// Mean time between messages, in picoseconds.
    pub fn mean_interarrival_ps(&self) -> f64 {
        self.mean_gap_ps
    }

    fn gap(&self, rng: &mut SimRng) -> Duration {
        Duration(rng.exponential(self.mean_gap_ps).round() as u64)
    }

    /// The next message, or `None` once arrivals reach `stop`.
    pub fn next(&mut self, rng: &mut SimRng) -> Option<MessageSpec> {
        let time = match self.next_time {
            Some(t) => t,
            None => self.params.start + self.gap(rng),
        };
        self.next_time = Some(time);
        if time >= self.params.stop {
            return None;
        }
        let p = &self.params;
        let size = p.sizes.sample(rng);
        let dst = p.dests.pick(p.src, &mut self.cursor, rng);
        let msg = MessageSpec {
            time,
            src: p.src,
            dst,
            size,
            thread: p.thread,
            priority: p.priority,
        };
        self.next_time = Some(time + self.gap(rng));
        Some(msg)
    }
}

/// A persistent stream of same-size messages from one thread (closed loop): whenever
/// the application is ready for its next message, it asks for one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FixedSizeStream {
    src: u32,
    dst: u32,
    size_bytes: u64,
    thread: u16,
    priority: u8,
    sent: u64,
}

impl FixedSizeStream {
    pub fn new(
        src: u32,
        dst: u32,
        size_bytes: u64,
        thread: u16,
        priority: u8,
    ) -> Result<FixedSizeStream, WorkloadError> {
        if src == dst {
            return Err(self_send(src));
        }
        if size_bytes == 0 {
            return Err(WorkloadError::param(
                "size",
                "0 B",
                "a message carries at least 1 byte",
                "use a size >= 1",
            ));
        }
        check_priority(priority)?;
        Ok(FixedSizeStream {
            src,
            dst,
            size_bytes,
            thread,
            priority,
            sent: 0,
        })
    }

    /// The next message, submitted at `now`.
    pub fn next_message(&mut self, now: SimTime) -> MessageSpec {
        self.sent += 1;
        MessageSpec {
            time: now,
            src: self.src,
            dst: self.dst,
            size: self.size_bytes,
            thread: self.thread,
            priority: self.priority,
        }
    }

    /// Messages produced so far.
    pub fn sent(&self) -> u64 {
        self.sent
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::wire_sum::{SizeFn, WireBytes};

    fn params(sizes: SizeCdf, load: f64) -> PoissonParams {
        PoissonParams {
            src: 3,
            load,
            nic_rate: BitsPerSec::gbps(100),
            sizes,
            dests: DestChooser::UniformExcept {
                n_hosts: 8,
                exclude_self: true,
            },
            start: SimTime(1_000_000),
            stop: SimTime(10_001_000_000),
            framing: Framing::default(),
            l4: L4Headers::Udp,
            mtu_bytes: 1500,
            thread: 2,
            priority: 5,
        }
    }

    #[test]
    fn offered_wire_load_matches_the_target() {
        let wire = WireBytes::new(Framing::default(), L4Headers::Udp, 1500).unwrap();
        for (sizes, load) in [
            (SizeCdf::constant(1000), 0.5),
            (SizeCdf::builtin("w1").unwrap(), 0.8),
        ] {
            let p = params(sizes, load);
            let window_s = (p.stop - p.start).as_secs_f64();
            let (start, stop) = (p.start, p.stop);
            let mut src = PoissonSource::new(p).unwrap();
            let mut rng = SimRng::stream(9, "poisson");
            let (mut bits, mut last) = (0.0, start);
            while let Some(m) = src.next(&mut rng) {
                assert!(m.time >= last && m.time < stop && m.dst != 3 && m.dst < 8);
                assert_eq!((m.src, m.thread, m.priority), (3, 2, 5));
                last = m.time;
                bits += wire.at(m.size) as f64 * 8.0;
            }
            let offered = bits / window_s / 100e9;
            assert!(
                (offered - load).abs() < 0.03 * load,
                "load {load}: offered {offered}"
            );
            assert!(src.next(&mut rng).is_none(), "stays exhausted");
        }
    }

    #[test]
    fn load_outside_0_1_is_rejected() {
        for load in [0.0, -0.1, 1.01, f64::NAN] {
            let err = PoissonSource::new(params(SizeCdf::constant(100), load))
                .unwrap_err()
                .to_string();
            assert!(
                err.starts_with("load = ")
                    && err.contains(
                        "cannot offer more than its NIC rate counting headers, preamble and IFG"
                    ),
                "{err}"
            );
        }
        let mut p = params(SizeCdf::constant(100), 0.5);
        p.priority = 8;
        assert!(PoissonSource::new(p.clone()).is_err());
        p.priority = 0;
        p.stop = p.start;
        assert!(PoissonSource::new(p).is_err());
    }

    #[test]
    fn mean_gap_counts_wire_bytes() {
        // 185 B over UDP is 255 B on the wire; at 100 Gbps and load 1 that is 20.4 ns.
        let src = PoissonSource::new(params(SizeCdf::constant(185), 1.0)).unwrap();
        assert!((src.mean_interarrival_ps() - 20_400.0).abs() < 1e-6);
    }

    #[test]
    fn destination_choosers() {
        let mut rng = SimRng::stream(1, "dest");
        let mut cursor = 0;
        let any = DestChooser::UniformExcept {
            n_hosts: 4,
            exclude_self: true,
        };
        let mut seen = [0; 4];
        for _ in 0..1000 {
            seen[any.pick(2, &mut cursor, &mut rng) as usize] += 1;
        }
        assert!(
            seen[2] == 0 && seen.iter().enumerate().all(|(i, &c)| i == 2 || c > 250),
            "{seen:?}"
        );
        let rr = DestChooser::List {
            hosts: vec![5, 7, 9],
            order: ListOrder::RoundRobin,
        };
        let picks: Vec<u32> = (0..5).map(|_| rr.pick(0, &mut cursor, &mut rng)).collect();
        assert_eq!(picks, [5, 7, 9, 5, 7]);
        let uni = DestChooser::List {
            hosts: vec![5, 7],
            order: ListOrder::Uniform,
        };
        assert!((0..100).all(|_| [5, 7].contains(&uni.pick(0, &mut cursor, &mut rng))));
        let outside = DestChooser::UniformExcept {
            n_hosts: 4,
            exclude_self: false,
        };
        assert!(outside.validate(4).is_ok() && outside.validate(1).is_err());
        assert!(DestChooser::Fixed(1).validate(1).is_err());
        assert!(rr.validate(7).is_err() && rr.validate(6).is_ok());
        assert!(DestChooser::List {
            hosts: vec![],
            order: ListOrder::Uniform
        }
        .validate(0)
        .is_err());
        assert!(DestChooser::UniformExcept {
            n_hosts: 1,
            exclude_self: true
        }
        .validate(0)
        .is_err());
    }

    #[test]
    fn fixed_size_stream_always_has_a_next_message() {
        let mut s = FixedSizeStream::new(0, 1, 4096, 3, 1).unwrap();
        let m = s.next_message(SimTime(5));
        assert_eq!(
            m,
            MessageSpec {
                time: SimTime(5),
                src: 0,
                dst: 1,
                size: 4096,
                thread: 3,
                priority: 1
            }
        );
        assert_eq!(s.next_message(SimTime(9)).time, SimTime(9));
        assert_eq!(s.sent(), 2);
        assert!(FixedSizeStream::new(1, 1, 10, 0, 0).is_err());
        assert!(FixedSizeStream::new(0, 1, 0, 0, 0).is_err());
        assert!(FixedSizeStream::new(0, 1, 10, 0, 8).is_err());
    }
}
