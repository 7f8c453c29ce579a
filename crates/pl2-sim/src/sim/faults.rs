//! Deterministic fault injection and schedules: drop a given packet of a flow (data, or
//! an ACK or handshake frame), Bernoulli loss on a link direction, links going down and
//! up, hosts crashing, and changes of link rates and switch buffers at given times (the
//! hooks circuit switches and dynamic buffers build on). Protocol tests use these to
//! force each recovery path.

use super::Simulation;
use crate::engine::Ev;
use crate::error::{invalid, BuildError};
use crate::metrics::DropReason;
use crate::packet::{PktId, PktKind};
use crate::units::{BitsPerSec, Bytes, Duration, SimTime};
use serde::{Deserialize, Serialize};

/// One fault. Links are named by their two ends, `"h3"` (host 3) or `"s0"` (switch 0),
/// and act on the direction from `a` to `b`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum FaultSpec {
    /// Drop the data frame with sequence number `seq` of flow `flow` (for raw Ethernet
    /// the flow is the message id) the first `times` times it crosses a link.
    DropNth {
        /// The frame's `flow` field as its transport writes it (see its `wire.rs`): the
        /// message id's low 32 bits for raw Ethernet and most transports, the connection
        /// id for TCP, the path number for NDP with sprayed paths. Required.
        flow: u32,
        /// The frame's `seq` field as its transport writes it: the packet index in the
        /// message for most transports (RoCE: the PSN from 0), the low 32 bits of the
        /// first byte's sequence number for TCP. Required.
        seq: u32,
        /// How many times to drop it (its resends included), at least 1. Default 1.
        #[serde(default = "one")]
        times: u32,
    },
    /// Drop the transport acknowledgement or handshake frame (kind ACK: a TCP ACK, SYN or
    /// SYN-ACK, an RDS ACK) with sequence-number field `seq` of flow `flow` the first
    /// `times` times it crosses a link. For TCP, `flow` is the connection's (as for its
    /// data) and `seq` is 4294967295 (the ISN, 2³² − 1) for a SYN, 0 for a SYN-ACK, 1 for
    /// the handshake's ACK and the low 32 bits of the acknowledgement number for an ACK.
    DropControl {
        /// The frame's `flow` field, as for `drop_nth`. Required.
        flow: u32,
        /// The frame's sequence-number field (for TCP as above; other transports: see
        /// their `wire.rs`). Required.
        seq: u32,
        /// How many times to drop it (its resends included), at least 1. Default 1.
        #[serde(default = "one")]
        times: u32,
    },
    /// Every frame crossing the link from `a` to `b` is lost with `probability`.
    LinkLoss {
        /// The sending end, `"h<index>"` or `"s<index>"`. Required.
        a: String,
        /// The receiving end, a node joined to `a` by a link. Required.
        b: String,
        /// Loss probability of each frame, a number in [0, 1]. Required.
        probability: f64,
    },
    /// The link between `a` and `b` (both directions) is down from `at` until `until`
    /// (forever if omitted): frames sent over it are lost.
    LinkDown {
        /// One end, `"h<index>"` or `"s<index>"`. Required.
        a: String,
        /// The other end, a node joined to `a` by a link. Required.
        b: String,
        /// When the link goes down, a simulated time (a duration, `"50us"`). Required.
        at: Duration,
        /// When it comes back up, a duration later than `at`. Default none (down for the
        /// rest of the run).
        until: Option<Duration>,
    },
    /// Host `host` crashes at `at`: its queues are discarded and it neither sends nor
    /// receives again.
    HostCrash {
        /// The host's index, below the number of hosts. Required.
        host: u32,
        /// When it crashes, a simulated time (a duration). Required.
        at: Duration,
    },
    /// From `at`, the link between `a` and `b` (both directions) runs at `rate`; a frame
    /// being serialised at that moment finishes at the old rate.
    LinkRate {
        /// One end, `"h<index>"` or `"s<index>"`. Required.
        a: String,
        /// The other end, a node joined to `a` by a link. Required.
        b: String,
        /// When the rate changes, a simulated time (a duration). Required.
        at: Duration,
        /// The new line rate of both directions, a rate (`"25Gbps"`). Required.
        rate: BitsPerSec,
    },
    /// From `at`, switch `switch` has a shared buffer of `buffer` bytes and/or a static
    /// per-port limit of `port_limit`. Frames already queued stay (a queue above its new
    /// limit drains); admission uses the new sizes.
    SwitchBuffer {
        /// The switch's index (`n` of `"s<n>"`), below the number of switches. Required.
        switch: u32,
        /// When the sizes change, a simulated time (a duration). Required.
        at: Duration,
        /// The new shared buffer size, a size (`"6MiB"`). Default: unchanged (give it,
        /// `port_limit` or both).
        buffer: Option<Bytes>,
        /// The new static limit on the bytes queued at one output port (all priorities),
        /// a size. Default: unchanged.
        port_limit: Option<Bytes>,
    },
}

fn one() -> u32 {
    1
}

impl Simulation {
    pub(crate) fn node_of(&self, name: &str, field: &str) -> Result<u32, BuildError> {
        let (hosts, switches) = (self.graph.hosts, self.graph.switches);
        let bad = || invalid(field, format!("{name:?} is not a node; write \"h<index>\" (0..{hosts}) or \"s<index>\" (0..{switches})"));
        let (kind, idx) = name.split_at(1.min(name.len()));
        let idx: u32 = idx.parse().map_err(|_| bad())?;
        match kind {
            "h" if idx < hosts => Ok(idx),
            "s" if idx < switches => Ok(hosts + idx),
            _ => Err(bad()),
        }
    }

    /// Egress port carrying frames from `a` to `b`.
    fn port_between(&self, a: &str, b: &str, field: &str) -> Result<u32, BuildError> {
        let (na, nb) = (self.node_of(a, &format!("{field}.a"))?, self.node_of(b, &format!("{field}.b"))?);
        for (i, l) in self.graph.links.iter().enumerate() {
            if l.a == na && l.b == nb {
                return Ok(2 * i as u32);
            }
            if l.b == na && l.a == nb {
                return Ok(2 * i as u32 + 1);
            }
        }
        Err(invalid(field, format!("no link joins {a} and {b}")))
    }

    pub(crate) fn install_faults(&mut self) -> Result<(), BuildError> {
        self.drop_rules = self.faults.iter().any(|f| matches!(f, FaultSpec::DropNth { .. } | FaultSpec::DropControl { .. }));
        for i in 0..self.faults.len() {
            let f = format!("faults[{i}]");
            match self.faults[i].clone() {
                FaultSpec::DropNth { times: 0, .. } | FaultSpec::DropControl { times: 0, .. } => {
                    return Err(invalid(format!("{f}.times"), "0; drop at least once"));
                }
                FaultSpec::DropNth { .. } | FaultSpec::DropControl { .. } => {}
                FaultSpec::LinkLoss { a, b, probability } => {
                    if !(0.0..=1.0).contains(&probability) {
                        return Err(invalid(format!("{f}.probability"), format!("{probability}; use a probability in [0, 1]")));
                    }
                    let p = self.port_between(&a, &b, &f)?;
                    self.ports[p as usize].loss = probability;
                }
                FaultSpec::LinkDown { a, b, at, until } => {
                    self.port_between(&a, &b, &f)?;
                    if let Some(u) = until {
                        if u <= at {
                            return Err(invalid(format!("{f}.until"), "must be later than `at`"));
                        }
                        self.events.push(SimTime(u.0), Ev::Fault(i as u32));
                    }
                    self.events.push(SimTime(at.0), Ev::Fault(i as u32));
                }
                FaultSpec::HostCrash { host, at } => {
                    if host >= self.graph.hosts {
                        return Err(invalid(format!("{f}.host"), format!("{host}; hosts are 0..{}", self.graph.hosts)));
                    }
                    self.events.push(SimTime(at.0), Ev::Fault(i as u32));
                }
                FaultSpec::LinkRate { a, b, at, .. } => {
                    self.port_between(&a, &b, &f)?;
                    self.events.push(SimTime(at.0), Ev::Fault(i as u32));
                }
                FaultSpec::SwitchBuffer { switch, at, buffer, port_limit } => {
                    if switch >= self.graph.switches {
                        return Err(invalid(format!("{f}.switch"), format!("{switch}; switches are 0..{}", self.graph.switches)));
                    }
                    if buffer.is_none() && port_limit.is_none() {
                        return Err(invalid(f, "give `buffer`, `port_limit` or both"));
                    }
                    self.events.push(SimTime(at.0), Ev::Fault(i as u32));
                }
            }
        }
        Ok(())
    }

    /// A scheduled fault takes effect.
    #[inline(never)]
    pub(crate) fn on_fault(&mut self, i: u32) {
        match self.faults[i as usize].clone() {
            FaultSpec::LinkDown { a, b, at, .. } => {
                let p = self.port_between(&a, &b, "fault").expect("checked at build");
                let down = self.now.0 == at.0;
                self.ports[p as usize].up = !down;
                self.ports[(p ^ 1) as usize].up = !down;
            }
            FaultSpec::HostCrash { host, .. } => self.crash_host(host),
            FaultSpec::LinkRate { a, b, rate, .. } => {
                let p = self.port_between(&a, &b, "fault").expect("checked at build");
                self.ports[p as usize].rate = rate;
                self.ports[(p ^ 1) as usize].rate = rate;
            }
            FaultSpec::SwitchBuffer { switch, buffer, port_limit, .. } => {
                let b = &mut self.switches[switch as usize].buffer;
                if let Some(size) = buffer {
                    b.size = size.0;
                }
                if let Some(l) = port_limit {
                    b.port_limit = Some(l.0);
                }
            }
            _ => {}
        }
    }

    fn crash_host(&mut self, h: u32) {
        let host = &mut self.hosts[h as usize];
        host.up = false;
        let mut doomed: Vec<PktId> = host.txline.drain(..).map(|x| x.1).collect();
        while let Some((p, _)) = host.nic.pop(&self.arena) {
            doomed.push(p);
        }
        let port = host.port;
        for p in doomed {
            let wire = self.arena.get(p).wire as u64;
            self.port_window_step(port);
            self.ports[port as usize].queued -= wire.min(self.ports[port as usize].queued);
            self.drop_packet(p, DropReason::HostDown, h, port);
        }
    }

    /// Whether a deterministic drop rule takes this frame (and uses up one drop).
    #[inline]
    pub(crate) fn injected_drop(&mut self, pkt: PktId) -> bool {
        self.drop_rules && self.injected_drop_ruled(pkt)
    }

    /// [`Simulation::injected_drop`] when drop rules exist: out of line.
    #[inline(never)]
    fn injected_drop_ruled(&mut self, pkt: PktId) -> bool {
        let p = self.arena.get(pkt);
        for f in &mut self.faults {
            let (flow, seq, times) = match f {
                FaultSpec::DropNth { flow, seq, times } if p.kind == PktKind::Data => (flow, seq, times),
                FaultSpec::DropControl { flow, seq, times } if p.kind == PktKind::Ack => (flow, seq, times),
                _ => continue,
            };
            if *flow == p.flow && *seq == p.seq && *times > 0 {
                *times -= 1;
                return true;
            }
        }
        false
    }
}
