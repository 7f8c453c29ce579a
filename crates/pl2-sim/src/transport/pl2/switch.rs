//! `Pl2Switch`: the ToR's PL2 scheduler (pl2-protocol's [`Scheduler`]) as a switch
//! program ([`crate::net::program::SwitchProgram::Pl2`]).
//!
//! - RSV: `on_rsv`, emit the GRT to the sender (and the copy to the receiver if
//!   enabled) at priority 7, consume the RSV.
//! - CANCEL: `on_cancel`, consume it.
//! - PL2-scheduled data (flag `SCHEDULED`): `on_data_ingress`; a `Drop` verdict (the T
//!   rule on an unsolicited packet) is a program drop, counted apart from buffer drops.
//!   With the dequeue ablation the release happens in [`Pl2Switch::on_dequeue`].
//! - Everything else is forwarded untouched: TCP ACKs, ARP, GRTs, external traffic and
//!   any unscheduled data never touch the counters (they were never reserved).
//!
//! Ports: the scheduler's port of host h is its physical ToR port, h / breakout (hosts
//! sharing a port under breakout share its counters, §4.2.1).

use super::wire::{self, Control};
use crate::net::program::{ProgramIo, Verdict};
use crate::packet::Packet;
use crate::units::SimTime;
use pl2_protocol::switch::{Scheduler, SchedulerConfig, SwitchAction, SwitchStats, Verdict as PVerdict};

pub struct Pl2Switch {
    sched: Scheduler,
    acts: Vec<SwitchAction>,
    dequeue: bool,
    /// Frames naming a host the scheduler does not know (a wiring error), forwarded.
    pub unknown: u64,
}

impl Pl2Switch {
    /// `hosts` hosts, `breakout` hosts per physical port.
    pub fn new(cfg: SchedulerConfig, hosts: u32, breakout: u32) -> Result<Pl2Switch, String> {
        let b = breakout.max(1);
        let host_port = (0..hosts).map(|h| h / b).collect();
        let dequeue = cfg.decrement_at == pl2_protocol::switch::DecrementPoint::Dequeue;
        Ok(Pl2Switch {
            sched: Scheduler::new(cfg, host_port, hosts.div_ceil(b)).map_err(|e| e.to_string())?,
            acts: Vec::new(),
            dequeue,
            unknown: 0,
        })
    }

    pub fn stats(&self) -> &SwitchStats {
        self.sched.stats()
    }

    pub fn scheduler(&self) -> &Scheduler {
        &self.sched
    }

    pub fn on_ingress(&mut self, io: &mut ProgramIo<'_>, pkt: &mut Packet) -> Verdict {
        let now = io.now.0;
        if let Some(tag) = wire::decode_tag(pkt) {
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
                for a in self.acts.drain(..) {
                    io.emit.push(match a {
                        SwitchAction::SendGrt(g) => wire::encode_grt(&g, false),
                        SwitchAction::SendGrtCopy(g) => wire::encode_grt(&g, true),
                    });
                }
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
    pub fn on_dequeue(&mut self, now: SimTime, pkt: &Packet) {
        if !self.dequeue {
            return;
        }
        if let Some(tag) = wire::decode_tag(pkt) {
            if self.sched.on_data_dequeued(now.0, &tag).is_err() {
                self.unknown += 1;
            }
        }
    }
}
