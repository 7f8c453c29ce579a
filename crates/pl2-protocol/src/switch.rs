//! The PL2 switch scheduler (§4.1 Algorithm 1, §4.2, §4.4's T rule, §4.5 GRT copies and
//! cancels, §7 inter-rack share, the talk's low-latency priorities) as a sans-IO state
//! machine: the driver hands it RSVs, CANCELs and PL2-scheduled data packets with the
//! current time, and gets GRTs to send and verdicts back.
//!
//! Choices where the paper is silent (each is ours):
//! - Counter decrements (Algorithm 1 lines 13-15) happen only for PL2-scheduled data
//!   (the driver calls [`Scheduler::on_data_ingress`] for those only). TCP ACKs, ARP,
//!   RSV/GRT and external traffic never touch the counters: they were never reserved.
//!   Each data packet releases exactly one reservation whatever its size (one slot is
//!   one packet, §4.1), and a decrement saturates at 0.
//! - The T rule of §4.4 ("not shown in algorithm 1") is checked per unsolicited packet,
//!   before its decrement: drop iff `max(in[src], out[dst]) > T`. A dropped packet does
//!   not decrement (the resend is expected to carry the reservation).
//! - Both known holes are counted in every mode (see [`SwitchStats`]) using a per-burst
//!   ledger (`ledger.rs`), which in faithful mode is measurement only.
//!
//! Hardware cost (§4.2: one stateful object per operation, one read-modify-write per
//! object per packet): faithful RSVs, scheduled data packets and cancels touch
//! `in[src]` once and `out[dst]` once. Three features break the rule and are modelled as
//! if the switch could do them atomically: the unsolicited T check and the priority
//! scheme both need `max(in, out)` before either counter is updated (the talk's priority
//! algorithm updates `in` by an amount that depends on `out` and vice versa), and the
//! ideal mode's shared chosen slot is exactly what §4.2 says hardware cannot do.
//!
//! Inter-rack traffic (§7: "traffic leaving the rack using a port on the ToR is no
//! different from intra-rack traffic; the traffic exiting will also be scheduled using
//! the timeslot reservation scheme"): the driver maps every host outside the rack to
//! one port standing for the ToR's uplinks ([`Scheduler::set_port_rate`] gives it their
//! summed rate), so an RSV to a remote host reserves `in[src]` and `out[uplink]` like
//! any other. Frames entering the rack from outside were reserved by no one here and
//! must not be handed to [`Scheduler::on_data_ingress`]: the driver forwards them
//! unscheduled, into the share of each downlink `external_share_ppm` keeps free.

mod config;
mod ledger;
pub mod share;
#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};

pub use config::{DecrementPoint, PriorityThresholds, SchedulerConfig, SwitchMode};

use crate::error::{ConfigError, ProtocolError};
use crate::msg::{Cancel, DataTag, Grt, HostId, Rsv};
use ledger::Ledger;
use share::SlotUnits;

/// What the switch sends in reply to an RSV.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum SwitchAction {
    /// The grant, to the RSV's sender (`grt.src`).
    SendGrt(Grt),
    /// A copy of the grant to the receiver (`grt.dst`), if enabled (§4.5).
    SendGrtCopy(Grt),
}

/// What happens to a data packet at ingress.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Verdict {
    Forward,
    /// An unsolicited packet refused by the T rule (or, improved, not admitted).
    Drop,
}

/// Counters of everything the scheduler did, including the two known holes.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SwitchStats {
    pub rsvs: u64,
    /// RSVs answered with a grant of at least one packet.
    pub grants: u64,
    pub granted_packets: u64,
    /// Priority scheme: low-priority RSVs granted fewer packets than asked (one slot).
    pub partial_grants: u64,
    /// Priority scheme: low-priority RSVs rejected (granted 0).
    pub rejects: u64,
    pub grt_copies: u64,
    /// Data packets handed to `on_data_ingress`.
    pub data_packets: u64,
    pub unsolicited_passed: u64,
    pub unsolicited_dropped: u64,
    /// Hole 1, `counter_drift`: packets that released a reservation their burst did not
    /// have (its arrivals exceeded what was reserved for it, e.g. an unsolicited copy that
    /// passed and then its resend, or a packet of a burst whose RSV the switch never saw).
    /// Each one leaves both counters one packet lower than the true backlog. Faithful mode
    /// only: the ideal mode has no decrements and the improved variant suppresses them.
    pub counter_drift_packets: u64,
    /// What a hardware switch can see of drift: decrements that found a counter already
    /// at (or below one packet of) zero, per counter.
    pub decrement_saturations: u64,
    /// Improved variant or `suppress_excess_decrements`: arrivals beyond the burst's
    /// reservation that were not allowed to decrement (where the faithful switch would
    /// have drifted).
    pub suppressed_decrements: u64,
    /// `unsolicited_bypass`: unsolicited packets that passed without decrementing.
    pub bypassed_unsolicited_packets: u64,
    /// Hole 2, `unsolicited_unrecovered`: unsolicited packets dropped although the GRT of
    /// their burst tells the sender not to resend (faithful: `chosen <= t`; improved:
    /// admitted, which the improved switch never drops). Counted for bursts whose RSV the
    /// switch saw. Each one is lost data and a reservation that never drains.
    pub unsolicited_unrecovered_packets: u64,
    /// The bursts those packets belong to.
    pub unsolicited_unrecovered_bursts: u64,
    pub cancels: u64,
    pub cancelled_packets: u64,
}

/// The scheduler of one switch. Counters are indexed by port.
#[derive(Debug)]
pub struct Scheduler {
    cfg: SchedulerConfig,
    host_port: Vec<u32>,
    units: SlotUnits,
    /// Units one packet reserves on each port (`share.rs`): one packet's worth at the
    /// slot's rate, less on a faster port (the uplink, [`Scheduler::set_port_rate`]).
    packet_units: Vec<u64>,
    /// Faithful: `inReservation`, the backlog of granted, not yet arrived packets per input
    /// port, in units (`share.rs`). Ideal: the next free slot of each input port on the
    /// switch clock, in units.
    in_units: Vec<u64>,
    /// The same for output ports (`outReservation`).
    out_units: Vec<u64>,
    ledger: Ledger,
    stats: SwitchStats,
}

/// Which of the two counters of a port.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Dir {
    In,
    Out,
}

impl Scheduler {
    /// `host_port[h]` is the switch port host `h` is attached to (several hosts may share
    /// one, §4.2.1); the switch has `ports` ports.
    pub fn new(
        cfg: SchedulerConfig,
        host_port: Vec<u32>,
        ports: u32,
    ) -> Result<Scheduler, ConfigError> {
        cfg.validate()?;
        for (host, &port) in host_port.iter().enumerate() {
            if port >= ports {
                return Err(ConfigError::PortOutOfRange {
                    host: host as HostId,
                    port,
                    ports,
                });
            }
        }
        let n = ports as usize;
        let units = SlotUnits::new(cfg.external_share_ppm);
        Ok(Scheduler {
            packet_units: vec![units.packets(1); n],
            units,
            ledger: Ledger::new(cfg.ledger_bursts_per_host),
            cfg,
            host_port,
            in_units: vec![0; n],
            out_units: vec![0; n],
            stats: SwitchStats::default(),
        })
    }

    pub fn config(&self) -> &SchedulerConfig {
        &self.cfg
    }

    pub fn stats(&self) -> &SwitchStats {
        &self.stats
    }

    /// The port a host is attached to.
    pub fn port_of(&self, host: HostId) -> Result<u32, ProtocolError> {
        self.host_port
            .get(host as usize)
            .copied()
            .ok_or(ProtocolError::UnknownHost(host))
    }

    /// Declares that port `port` runs at `port_bps` while a slot is one packet at
    /// `slot_bps` (§7: the ToR's uplinks as one output port of their summed rate). A
    /// packet then reserves `slot_bps / port_bps` of a slot there, so bursts to other
    /// racks are spread over the uplinks' capacity, not over one host link's. The input
    /// direction of the port is never reserved (frames entering the rack are not
    /// scheduled here).
    pub fn set_port_rate(
        &mut self,
        port: u32,
        port_bps: u64,
        slot_bps: u64,
    ) -> Result<(), ConfigError> {
        let ports = self.packet_units.len() as u32;
        if port >= ports {
            return Err(ConfigError::NoSuchPort { port, ports });
        }
        if port_bps == 0 || slot_bps == 0 {
            return Err(ConfigError::Invalid("port and slot rates must be positive"));
        }
        self.packet_units[port as usize] = self.units.packet_at_rate(port_bps, slot_bps);
        Ok(())
    }

    /// Slots reserved ahead on input port `port` (faithful: `inReservation[port]`; ideal:
    /// next free slot minus the current slot), rounded up.
    pub fn in_backlog_slots(&self, now_ps: u64, port: u32) -> u64 {
        self.units
            .to_slots_ceil(self.backlog_units(now_ps, Dir::In, port as usize))
    }

    /// The same for output port `port` (`outReservation[port]`).
    pub fn out_backlog_slots(&self, now_ps: u64, port: u32) -> u64 {
        self.units
            .to_slots_ceil(self.backlog_units(now_ps, Dir::Out, port as usize))
    }

    /// Processes an RSV (Algorithm 1 lines 7-12) and pushes the GRT (and its copy).
    pub fn on_rsv(
        &mut self,
        now_ps: u64,
        rsv: &Rsv,
        out: &mut Vec<SwitchAction>,
    ) -> Result<(), ProtocolError> {
        let sp = self.port_of(rsv.src)? as usize;
        let dp = self.port_of(rsv.dst)? as usize;
        self.stats.rsvs += 1;
        let demand = rsv.demand_packets.min(self.cfg.k_max_packets);
        let in_slots = self
            .units
            .to_slots_ceil(self.backlog_units(now_ps, Dir::In, sp));
        let out_slots = self
            .units
            .to_slots_ceil(self.backlog_units(now_ps, Dir::Out, dp));
        let backlog_slots = in_slots.max(out_slots);
        let granted = self.grant_size(rsv, demand, backlog_slots);
        let (reserve_in, reserve_out) = (
            u64::from(granted) * self.packet_units[sp],
            u64::from(granted) * self.packet_units[dp],
        );
        let (send_slots, recv_slots) = match self.cfg.mode {
            SwitchMode::Faithful => {
                // Lines 8-9 and 10-11: one read-modify-write on each counter.
                self.in_units[sp] += reserve_in;
                self.out_units[dp] += reserve_out;
                (in_slots, out_slots)
            }
            SwitchMode::Ideal { lead_slots } => {
                let now_slot = now_ps / self.cfg.slot_ps;
                let earliest = self.units.slots(now_slot + lead_slots);
                let chosen = earliest.max(self.in_units[sp]).max(self.out_units[dp]);
                if granted > 0 {
                    self.in_units[sp] = chosen + reserve_in;
                    self.out_units[dp] = chosen + reserve_out;
                }
                let rel = self
                    .units
                    .to_slots_ceil(chosen - self.units.slots(now_slot));
                (rel, rel)
            }
        };
        let chosen_slots = send_slots.max(recv_slots);
        // Improved variant: decide now whether the unsolicited copy may pass, with the
        // same T as the faithful per-packet rule, evaluated on the backlog this RSV sees.
        let admitted = self.cfg.improved
            && rsv.unsolicited_follows
            && granted == demand
            && backlog_slots <= self.cfg.t_unsolicited_slots;
        let rec = self.ledger.entry(rsv.src, rsv.burst);
        rec.reserved_packets += u64::from(granted);
        rec.chosen_slots = chosen_slots;
        rec.admitted |= admitted;
        if granted > 0 {
            self.stats.grants += 1;
            self.stats.granted_packets += u64::from(granted);
        }
        let grt = Grt {
            src: rsv.src,
            dst: rsv.dst,
            burst: rsv.burst,
            attempt: rsv.attempt,
            send_timeslot_slots: saturate_u32(send_slots),
            recv_timeslot_slots: saturate_u32(recv_slots),
            granted_packets: granted,
            unsolicited_admitted: admitted,
        };
        out.push(SwitchAction::SendGrt(grt));
        if self.cfg.grt_copy_to_receiver && granted > 0 {
            self.stats.grt_copies += 1;
            out.push(SwitchAction::SendGrtCopy(grt));
        }
        Ok(())
    }

    /// A PL2-scheduled data packet enters the switch (Algorithm 1 lines 13-15). Only
    /// PL2-scheduled data may be passed here; other frames never touch the counters.
    pub fn on_data_ingress(
        &mut self,
        now_ps: u64,
        tag: &DataTag,
    ) -> Result<Verdict, ProtocolError> {
        let sp = self.port_of(tag.src)? as usize;
        let dp = self.port_of(tag.dst)? as usize;
        self.stats.data_packets += 1;
        if tag.unsolicited && !self.admit_unsolicited(now_ps, tag, sp, dp) {
            self.stats.unsolicited_dropped += 1;
            self.count_unrecovered(tag);
            return Ok(Verdict::Drop);
        }
        if tag.unsolicited {
            self.stats.unsolicited_passed += 1;
        }
        if self.cfg.decrement_at == DecrementPoint::Ingress {
            self.release(tag, sp, dp);
        }
        Ok(Verdict::Forward)
    }

    /// A forwarded PL2-scheduled data packet leaves its output queue. Releases its
    /// reservation only under [`DecrementPoint::Dequeue`] (the ablation).
    pub fn on_data_dequeued(&mut self, _now_ps: u64, tag: &DataTag) -> Result<(), ProtocolError> {
        let sp = self.port_of(tag.src)? as usize;
        let dp = self.port_of(tag.dst)? as usize;
        if self.cfg.decrement_at == DecrementPoint::Dequeue {
            self.release(tag, sp, dp);
        }
        Ok(())
    }

    /// CANCEL (§4.5): releases `packets` reservations on `in[src]` and `out[dst]`,
    /// saturating. In ideal mode reservations are absolute slots that expire with the
    /// clock, so a cancel changes nothing (the slots just go unused).
    pub fn on_cancel(&mut self, _now_ps: u64, c: &Cancel) -> Result<(), ProtocolError> {
        let sp = self.port_of(c.src)? as usize;
        let dp = self.port_of(c.dst)? as usize;
        self.stats.cancels += 1;
        self.stats.cancelled_packets += u64::from(c.packets);
        if self.cfg.mode == SwitchMode::Faithful {
            let n = u64::from(c.packets);
            self.in_units[sp] = self.in_units[sp].saturating_sub(n * self.packet_units[sp]);
            self.out_units[dp] = self.out_units[dp].saturating_sub(n * self.packet_units[dp]);
        }
        Ok(())
    }

    /// The talk's priority algorithm; without it every demand is granted. Note that
    /// `reserved = max(in[src], out[dst])` breaks §4.2's one-stateful-object-per-operation
    /// constraint: the increment of each counter depends on the other counter's value.
    fn grant_size(&mut self, rsv: &Rsv, demand: u32, backlog_slots: u64) -> u32 {
        let Some(p) = self.cfg.priority else {
            return demand;
        };
        if rsv.high_priority {
            demand
        } else if backlog_slots >= p.t2_slots {
            self.stats.rejects += 1;
            0
        } else if backlog_slots >= p.t1_slots {
            if demand > 1 {
                self.stats.partial_grants += 1;
            }
            demand.min(1)
        } else {
            demand
        }
    }

    fn admit_unsolicited(&self, now_ps: u64, tag: &DataTag, sp: usize, dp: usize) -> bool {
        if self.cfg.improved {
            // Decided at the RSV; a burst whose RSV the switch never saw is not admitted
            // (its sender retries the RSV without the unsolicited flag and resends).
            return self
                .ledger
                .get(tag.src, tag.burst)
                .is_some_and(|r| r.admitted);
        }
        let backlog = self
            .backlog_units(now_ps, Dir::In, sp)
            .max(self.backlog_units(now_ps, Dir::Out, dp));
        self.units.to_slots_ceil(backlog) <= self.cfg.t_unsolicited_slots
    }

    fn count_unrecovered(&mut self, tag: &DataTag) {
        let improved = self.cfg.improved;
        let t = self.cfg.t_sender_slots;
        let Some(rec) = self.ledger.get_mut(tag.src, tag.burst) else {
            return;
        };
        let resent = if improved {
            !rec.admitted
        } else {
            rec.chosen_slots > t
        };
        if resent {
            return;
        }
        self.stats.unsolicited_unrecovered_packets += 1;
        if !rec.unrecovered_counted {
            rec.unrecovered_counted = true;
            self.stats.unsolicited_unrecovered_bursts += 1;
        }
    }

    /// One packet releases one reservation: one read-modify-write on `in[src]` and one on
    /// `out[dst]` (faithful), plus one on the ledger record. With `unsolicited_bypass` an
    /// unsolicited packet releases nothing and is not counted as an arrival of its burst.
    fn release(&mut self, tag: &DataTag, sp: usize, dp: usize) {
        if tag.unsolicited && self.cfg.unsolicited_bypass {
            self.stats.bypassed_unsolicited_packets += 1;
            return;
        }
        let excess = match self.ledger.get_mut(tag.src, tag.burst) {
            Some(rec) => {
                rec.arrived_packets += 1;
                rec.arrived_packets > rec.reserved_packets
            }
            None => true,
        };
        if self.cfg.mode != SwitchMode::Faithful {
            return;
        }
        if excess {
            if (self.cfg.improved || self.cfg.suppress_excess_decrements)
                && self.ledger.get(tag.src, tag.burst).is_some()
            {
                self.stats.suppressed_decrements += 1;
                return;
            }
            self.stats.counter_drift_packets += 1;
        }
        for (counter, port) in [(&mut self.in_units, sp), (&mut self.out_units, dp)] {
            let one = self.packet_units[port];
            if counter[port] < one {
                self.stats.decrement_saturations += 1;
            }
            counter[port] = counter[port].saturating_sub(one);
        }
    }

    fn backlog_units(&self, now_ps: u64, dir: Dir, port: usize) -> u64 {
        let v = match dir {
            Dir::In => self.in_units[port],
            Dir::Out => self.out_units[port],
        };
        match self.cfg.mode {
            SwitchMode::Faithful => v,
            SwitchMode::Ideal { .. } => {
                v.saturating_sub(self.units.slots(now_ps / self.cfg.slot_ps))
            }
        }
    }
}

fn saturate_u32(v: u64) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}
