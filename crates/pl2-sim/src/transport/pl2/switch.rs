//! `Pl2Switch`: the ToR's PL2 scheduler (pl2-protocol's [`Scheduler`]) as a switch
//! program ([`crate::programs::SwitchProgram::Pl2`], installed by [`super::install`]).
//!
//! - RSV: `on_rsv`, emit the GRT to the sender (and the copy to the receiver if
//!   enabled) at priority 7, consume the RSV.
//! - CANCEL: `on_cancel`, consume it.
//! - PL2-scheduled data (flag `SCHEDULED`): `on_data_ingress`; a `Drop` verdict (the T
//!   rule on an unsolicited packet) is a program drop, counted apart from buffer drops.
//!   With the dequeue ablation the release happens in [`Pl2Switch::on_dequeue`].
//! - Everything else is forwarded untouched: TCP ACKs (pure ACKs are never scheduled,
//!   also under TCP over PL2), ARP, GRTs, external traffic and any unscheduled data never
//!   touch the counters (they were never reserved). Only frames flagged `SCHEDULED`
//!   ([`crate::packet::proto::SCHEDULED`]) release reservations.
//! - The tag is read in the layout the hosts use ([`TagLayout`]: PL2's own frames or TCP
//!   segments), fixed when the program is installed.
//!
//! Ports: the scheduler's port of a host of the rack is its physical ToR port, (h −
//! first host) / breakout (hosts sharing a port under breakout share its counters,
//! §4.2.1).
//!
//! Several racks (§7, "Handling inter-rack traffic"): every ToR runs its own program,
//! which knows its own hosts ([`Rack`]). Every host of another rack maps to one more
//! port standing for the ToR's uplinks at their summed rate, so a local sender's RSV
//! to a remote host reserves its input port and the uplinks, and its scheduled frames
//! release them as they enter this ToR; they then cross the fabric unscheduled. A
//! scheduled frame whose source is in another rack was reserved by that rack's ToR, not
//! this one: it is forwarded untouched (no T rule, no decrement, no arrival sample) and
//! counted in `inter_rack_in_frames`. It has the share of its downlink that
//! `external_share_ppm` keeps free; beyond that it queues (and, the buffer full, is
//! dropped) like any unscheduled frame.

use super::wire::{self, Control, TagLayout};
use super::Pl2Stats;
use crate::metrics::{Counters, DropReason};
use crate::net::program::{ProgramIo, SwitchLogic, Verdict};
use crate::packet::{Packet, MAX_TRANSPORTS};
use crate::programs::Program;
use crate::transport::ModuleStats;
use crate::units::SimTime;
use pl2_protocol::switch::{Scheduler, SchedulerConfig, SwitchAction, SwitchMode, SwitchStats, Verdict as PVerdict};
use std::collections::HashMap;

/// How far scheduled bursts arrive from their slots: PL2's key diagnostic. Positive is
/// late, negative early; in picoseconds.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct ArrivalError {
    pub bursts: u64,
    pub early: u64,
    pub sum_ps: i64,
    pub min_ps: i64,
    pub max_ps: i64,
}

impl ArrivalError {
    fn add(&mut self, err: i64) {
        if self.bursts == 0 {
            self.min_ps = err;
            self.max_ps = err;
        }
        self.bursts += 1;
        self.early += u64::from(err < 0);
        self.sum_ps += err;
        self.min_ps = self.min_ps.min(err);
        self.max_ps = self.max_ps.max(err);
    }

    /// Sums two switches' figures.
    pub fn merge(&mut self, o: &ArrivalError) {
        if o.bursts == 0 {
            return;
        }
        if self.bursts == 0 {
            *self = *o;
            return;
        }
        self.bursts += o.bursts;
        self.early += o.early;
        self.sum_ps += o.sum_ps;
        self.min_ps = self.min_ps.min(o.min_ps);
        self.max_ps = self.max_ps.max(o.max_ps);
    }
}

/// The hosts one ToR schedules, and its uplinks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rack {
    /// Hosts in the whole network (ids `0..hosts`).
    pub hosts: u32,
    /// The rack's hosts, ascending: `local[i]` is on the ToR's port `i / breakout`.
    pub local: Vec<u32>,
    /// Hosts per physical ToR port (breakout, §4.2.1); 1 without.
    pub breakout: u32,
    /// The ToR's uplinks' summed rate, bits per second, with several racks; `None` in a
    /// single rack.
    pub uplink_bps: Option<u64>,
    /// The rate a timeslot is one packet at (a host link's), bits per second.
    pub slot_bps: u64,
}

pub struct Pl2Switch {
    sched: Scheduler,
    /// Whether each host of the network is one of this ToR's (by host id).
    local: Vec<bool>,
    /// Where the hosts' scheduled data frames carry their tag (raw PL2 or TCP over PL2),
    /// by the transport that sent them (`Packet::transport`).
    layouts: [TagLayout; MAX_TRANSPORTS],
    acts: Vec<SwitchAction>,
    dequeue: bool,
    /// When each granted burst's first packet should reach the switch: the RSV's
    /// processing time plus `chosen` slots (faithful mode: relative to the RSV; ideal
    /// mode: to the slot boundary the GRT is relative to). A table of
    /// `expected_per_host` rows per source host, indexed by (source, burst id mod rows),
    /// each holding (burst id, time): see [`Pl2Switch::expect`]. Looked up, never
    /// iterated.
    expected: HashMap<(u32, u32), (u32, u64)>,
    /// Rows per source host of `expected`: the scheduler's per-host ledger size
    /// (`ledger_bursts_per_host`, 1024 by default).
    expected_per_host: u32,
    /// Most rows of `expected` occupied at once.
    pub expected_peak: usize,
    /// Arrival error of scheduled bursts (first packet's arrival − its slot).
    pub arrival: ArrivalError,
    /// Frames naming a host the scheduler does not know (a wiring error), forwarded.
    pub unknown: u64,
    /// Scheduled frames from this rack's hosts to other racks (released the uplink).
    pub inter_rack_out: u64,
    /// Scheduled frames from other racks, forwarded unscheduled (§7's external share).
    pub inter_rack_in: u64,
}

impl Pl2Switch {
    /// The ToR of `rack`; frames of transport `t` carry their tag in `layouts[t]`.
    pub fn new(cfg: SchedulerConfig, rack: Rack, layouts: [TagLayout; MAX_TRANSPORTS]) -> Result<Pl2Switch, String> {
        let b = rack.breakout.max(1);
        let local_ports = (rack.local.len() as u32).div_ceil(b);
        let mut host_port = vec![local_ports; rack.hosts as usize];
        let mut local = vec![false; rack.hosts as usize];
        for (i, &h) in rack.local.iter().enumerate() {
            let slot = host_port.get_mut(h as usize).ok_or_else(|| format!("host {h} of the rack is not in the network"))?;
            *slot = i as u32 / b;
            local[h as usize] = true;
        }
        let ports = local_ports + u32::from(rack.uplink_bps.is_some());
        let dequeue = cfg.decrement_at == pl2_protocol::switch::DecrementPoint::Dequeue;
        let cfg_rows = cfg.ledger_bursts_per_host.max(1);
        let mut sched = Scheduler::new(cfg, host_port, ports).map_err(|e| e.to_string())?;
        if let Some(up) = rack.uplink_bps {
            sched.set_port_rate(local_ports, up, rack.slot_bps).map_err(|e| e.to_string())?;
        }
        Ok(Pl2Switch {
            sched,
            local,
            layouts,
            acts: Vec::new(),
            dequeue,
            expected: HashMap::new(),
            expected_per_host: u32::try_from(cfg_rows).unwrap_or(u32::MAX),
            expected_peak: 0,
            arrival: ArrivalError::default(),
            unknown: 0,
            inter_rack_out: 0,
            inter_rack_in: 0,
        })
    }

    /// Whether `host` is one of this ToR's.
    fn is_local(&self, host: u32) -> bool {
        self.local.get(host as usize).copied().unwrap_or(false)
    }

    pub fn stats(&self) -> &SwitchStats {
        self.sched.stats()
    }

    pub fn scheduler(&self) -> &Scheduler {
        &self.sched
    }

    /// Records when burst `burst` of host `src` should arrive. The table is bounded the
    /// way a Tofino register table is: `expected_per_host` rows per source host, the row
    /// of a burst being its id modulo that (a host numbers its bursts consecutively), so
    /// a burst's row is taken over by the burst `expected_per_host` later from the same
    /// host. An entry whose first scheduled packet never comes (an unsolicited burst that
    /// passed and is not resent, or a burst whose first packet was dropped) is thus
    /// forgotten after at most that many further bursts of its host, where it used to
    /// stay for the whole run. A burst still awaited when its row is taken loses only its
    /// arrival-error sample; that needs more than `expected_per_host` (1024) of one host's
    /// bursts granted while its first packet is on its way, against at most one
    /// outstanding exchange per thread (§4.2.1) per destination.
    fn expect(&mut self, src: u32, burst: u32, at: u64) {
        let row = burst % self.expected_per_host;
        self.expected.insert((src, row), (burst, at));
        self.expected_peak = self.expected_peak.max(self.expected.len());
    }

    /// Takes the entry of burst `burst` of host `src`, if its row still holds it.
    fn take_expected(&mut self, src: u32, burst: u32) -> Option<u64> {
        let key = (src, burst % self.expected_per_host);
        match self.expected.get(&key) {
            Some(&(b, at)) if b == burst => {
                self.expected.remove(&key);
                Some(at)
            }
            _ => None,
        }
    }
}

impl SwitchLogic for Pl2Switch {
    /// The dequeue ablation (`decrement_at = "dequeue"`) releases reservations there.
    const ON_DEQUEUE: bool = true;

    fn on_ingress(&mut self, io: &mut ProgramIo<'_>, pkt: &mut Packet) -> Verdict {
        let now = io.now.0;
        if let Some(tag) = wire::decode_tag_in(self.layouts[pkt.transport() as usize], pkt) {
            if !self.is_local(tag.src) {
                self.inter_rack_in += u64::from(self.is_local(tag.dst));
                return Verdict::Forward;
            }
            self.inter_rack_out += u64::from(!self.is_local(tag.dst));
            if tag.index_in_burst == 0 && !tag.unsolicited {
                if let Some(at) = self.take_expected(tag.src, tag.burst.0) {
                    let err = now as i64 - at as i64;
                    self.arrival.add(err);
                    io.probes.push((tag.src, tag.burst.0, "pl2_arrival_error_ps", err as f64));
                }
            }
            return match self.sched.on_data_ingress(now, &tag) {
                Ok(PVerdict::Forward) => Verdict::Forward,
                Ok(PVerdict::Drop) => Verdict::Drop,
                Err(_) => {
                    self.unknown += 1;
                    Verdict::Forward
                }
            };
        }
        match wire::decode_control(pkt) {
            Some(Control::Rsv(r)) => {
                if self.sched.on_rsv(now, &r, &mut self.acts).is_err() {
                    self.unknown += 1;
                }
                let slot = self.sched.config().slot_ps;
                let base = match self.sched.config().mode {
                    SwitchMode::Faithful => now,
                    SwitchMode::Ideal { .. } => now / slot * slot,
                };
                for i in 0..self.acts.len() {
                    let a = self.acts[i];
                    if let SwitchAction::SendGrt(g) = &a {
                        if g.granted_packets > 0 {
                            self.expect(g.src, g.burst.0, base + g.chosen_slots() * slot);
                        }
                    }
                    io.emit.push(match a {
                        SwitchAction::SendGrt(g) => wire::encode_grt(&g, false),
                        SwitchAction::SendGrtCopy(g) => wire::encode_grt(&g, true),
                    });
                }
                self.acts.clear();
                Verdict::Consume
            }
            Some(Control::Cancel(c)) => {
                if self.sched.on_cancel(now, &c).is_err() {
                    self.unknown += 1;
                }
                Verdict::Consume
            }
            _ => Verdict::Forward,
        }
    }

    /// A frame leaves one of the switch's output queues.
    fn on_dequeue(&mut self, now: SimTime, pkt: &Packet) {
        if !self.dequeue {
            return;
        }
        if let Some(tag) = wire::decode_tag_in(self.layouts[pkt.transport() as usize], pkt) {
            if !self.is_local(tag.src) {
                return;
            }
            if self.sched.on_data_dequeued(now.0, &tag).is_err() {
                self.unknown += 1;
            }
        }
    }
}

impl Program for Pl2Switch {
    fn report(&self, stats: &mut ModuleStats, counters: &Counters) {
        let st: &mut Pl2Stats = stats.pl2.get_or_insert_default();
        st.arrival_error.merge(&self.arrival);
        st.arrival_pending_peak = st.arrival_pending_peak.max(self.expected_peak as u64);
        st.inter_rack_out_frames += self.inter_rack_out;
        st.inter_rack_in_frames += self.inter_rack_in;
        let (a, t) = (self.stats(), &mut st.switch);
        t.rsvs += a.rsvs;
        t.grants += a.grants;
        t.granted_packets += a.granted_packets;
        t.partial_grants += a.partial_grants;
        t.rejects += a.rejects;
        t.grt_copies += a.grt_copies;
        t.data_packets += a.data_packets;
        t.unsolicited_passed += a.unsolicited_passed;
        t.unsolicited_dropped += a.unsolicited_dropped;
        t.counter_drift_packets += a.counter_drift_packets;
        t.decrement_saturations += a.decrement_saturations;
        t.suppressed_decrements += a.suppressed_decrements;
        t.bypassed_unsolicited_packets += a.bypassed_unsolicited_packets;
        t.unsolicited_unrecovered_packets += a.unsolicited_unrecovered_packets;
        t.unsolicited_unrecovered_bursts += a.unsolicited_unrecovered_bursts;
        t.cancels += a.cancels;
        t.cancelled_packets += a.cancelled_packets;
        st.program_drops = counters.drops[DropReason::Program as usize];
    }
}
