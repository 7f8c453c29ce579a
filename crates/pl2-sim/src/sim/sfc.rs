//! Source Flow Control (IEEE 802.1Qdw) as a network mechanism, beside PFC (`pfc.rs`).
//!
//! - Trigger: when a frame of an SFC priority joins an egress queue of a switch running
//!   SFC and that (port, priority)'s bytes (the shared buffer's egress count: frames
//!   waiting and the one being serialised, the new frame included) are at or above the
//!   trigger, the switch sends a signal — unless its suppression entry for the frame's
//!   key (source host and flow, or source host alone) is younger than the suppression
//!   period, in which case it counts a suppressed signal. The rule is level-triggered:
//!   once the period has passed, the next frame enqueued at or above the trigger sends a
//!   new signal, so a queue that stays high keeps signalling every period per key.
//!   Frames dropped at admission never trigger; frames switches generate never do.
//! - The signal is a real frame ([`PktKind::Sfc`]): a MAC-control-sized frame (64 B,
//!   plus preamble and IFG on Ethernet) from the switch to the triggering frame's source
//!   host, in the signal priority, routed like any frame from the switch (the switch's
//!   ECMP over equal-cost next hops), queued without buffer admission as frames switches
//!   generate are. It carries the pause duration in `aux` (ps), the triggering frame's
//!   priority in `seq`, and its `msg`, `msg_gen`, `flow` and transport index, so that
//!   the source host hands it to the transport that sent the frame (`Protocol::on_packet`)
//!   and that transport can find the flow.
//! - Pause time: (queue bytes − target) at the egress port's rate by default, or a fixed
//!   time (`SfcPauseTime`).
//! - Proxy: a switch with `proxy` on whose next hop for a signal is the signal's
//!   destination host itself (the source's ToR; the generating switch if it is that ToR)
//!   consumes the signal and queues a PFC PAUSE for the signal's priority class (`seq`)
//!   on that port, for the pause duration in quanta of 512 bit times at the port's rate
//!   (rounded up, at most 65535), through PFC's MAC-control queue: the NIC then stops
//!   every frame of that priority, all its flows alike, until the pause runs out.
//!
//! Suppression entries live in a hash map looked up by (switch, source host, flow or
//! `u32::MAX`) and never iterated; it holds one entry per key that ever signalled.

use super::network::Owner;
use super::Simulation;
use crate::config::{SfcConfig, SfcPauseTime, SfcSuppressKey};
use crate::packet::{flags, Packet, PktId, PktKind, NO_PKT};
use crate::units::SimTime;
use rustc_hash::FxHashMap;

/// A switch's SFC settings, resolved at build time.
#[derive(Clone, Debug)]
pub(crate) struct SfcRules {
    /// Bit p set: priority p's queues signal.
    pub priorities: u8,
    pub trigger_bytes: u64,
    pub target_bytes: u64,
    pub suppression_ps: u64,
    pub per_flow: bool,
    pub signal_prio: u8,
    /// `Some`: every signal carries this pause (ps); `None`: drain to the target.
    pub fixed_pause_ps: Option<u64>,
    pub proxy: bool,
}

impl SfcRules {
    pub(crate) fn new(cfg: &SfcConfig) -> SfcRules {
        SfcRules {
            priorities: cfg.priorities.iter().fold(0, |m, &p| m | 1 << p),
            trigger_bytes: cfg.trigger.0,
            target_bytes: cfg.target.0,
            suppression_ps: cfg.suppression.0,
            per_flow: cfg.suppress_per == SfcSuppressKey::Flow,
            signal_prio: cfg.signal_priority,
            fixed_pause_ps: match cfg.pause_time {
                SfcPauseTime::DrainToTarget => None,
                SfcPauseTime::Fixed { time } => Some(time.0),
            },
            proxy: cfg.proxy,
        }
    }
}

/// SFC counters of a run.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct SfcStats {
    /// Signals switches sent.
    pub signals_sent: u64,
    /// Enqueues at or above the trigger that sent nothing because their key's
    /// suppression period was running.
    pub signals_suppressed: u64,
    /// Signals a proxy ToR turned into a PFC PAUSE towards the source NIC.
    pub signals_proxied: u64,
    /// Signals that reached a host and were handed to its transport.
    pub signals_delivered: u64,
    /// Pause time carried by the signals sent, summed (ps).
    pub pause_requested_ps: u64,
}

/// SFC state of a run (present only if some switch runs SFC).
pub(crate) struct Sfc {
    /// Per switch: its rules (`None`: no SFC there).
    pub rules: Vec<Option<SfcRules>>,
    /// When each (switch, source host, flow or `u32::MAX`) last signalled.
    pub last_signal: FxHashMap<(u32, u32, u32), SimTime>,
    pub stats: SfcStats,
}

impl Sfc {
    pub(crate) fn new(rules: Vec<Option<SfcRules>>) -> Sfc {
        Sfc { rules, last_signal: FxHashMap::default(), stats: SfcStats::default() }
    }

    /// Whether switch `index` signals for priority `prio`.
    #[inline]
    pub(crate) fn watches(&self, index: u32, prio: usize) -> bool {
        self.rules[index as usize].as_ref().is_some_and(|r| r.priorities & (1 << prio) != 0)
    }
}

impl Simulation {
    /// After `pkt`, of an SFC priority, joined egress port `out` of switch `index`:
    /// signal its source if the queue is at or above the trigger and the key is not
    /// suppressed.
    #[inline(never)]
    pub(super) fn sfc_after_enqueue(&mut self, index: u32, out: u32, pkt: PktId) {
        let Owner::Switch { local, .. } = self.ports[out as usize].owner else { unreachable!("a switch's egress port") };
        let p = *self.arena.get(pkt);
        let prio = p.prio();
        let queued = self.switches[index as usize].buffer.egress[local as usize].bytes[prio as usize];
        let sfc = self.sfc.as_mut().expect("SFC on");
        let rules = sfc.rules[index as usize].clone().expect("SFC at this switch");
        if queued < rules.trigger_bytes || p.has(flags::FROM_SWITCH) || p.src >= self.graph.hosts {
            return;
        }
        let key = (index, p.src, if rules.per_flow { p.flow } else { u32::MAX });
        let now = self.now;
        if let Some(&last) = sfc.last_signal.get(&key) {
            if now.0 - last.0 < rules.suppression_ps {
                sfc.stats.signals_suppressed += 1;
                return;
            }
        }
        let pause_ps = rules.fixed_pause_ps.unwrap_or_else(|| self.ports[out as usize].rate.tx_time(queued - rules.target_bytes).0);
        let signal_prio = rules.signal_prio;
        let mut signal = Packet {
            created: now,
            enqueued: now,
            aux: pause_ps,
            src: self.switches[index as usize].node,
            dst: p.src,
            msg: p.msg,
            flow: p.flow,
            seq: u32::from(prio),
            wire: self.net.framing.mac_control_wire() as u16,
            queue_next: NO_PKT,
            msg_gen: p.msg_gen,
            kind: PktKind::Sfc,
            prio_transport: signal_prio,
            flags: flags::FROM_SWITCH,
            ..Packet::default()
        };
        signal.set_transport(p.transport());
        let hop = self.next_hop_of(index, &signal);
        if hop == u32::MAX {
            return;
        }
        let sfc = self.sfc.as_mut().expect("SFC on");
        sfc.last_signal.insert(key, now);
        sfc.stats.signals_sent += 1;
        sfc.stats.pause_requested_ps += pause_ps;
        let id = self.arena.alloc(signal);
        self.counters.packets_created += 1;
        if self.sfc_intercept(index, hop, id) {
            return;
        }
        let cpu_row = self.switches[index as usize].buffer.ingress.len() as u32 - 1;
        self.enqueue_at_switch(index, hop, id, cpu_row, false);
    }

    /// A signal `pkt` at switch `index`, about to take egress port `out`: a proxy whose
    /// port leads to the signal's destination host consumes it and pauses that host's
    /// NIC with PFC instead. Returns whether it did.
    #[cold]
    #[inline(never)]
    pub(super) fn sfc_intercept(&mut self, index: u32, out: u32, pkt: PktId) -> bool {
        let Some(sfc) = self.sfc.as_mut() else { return false };
        let p = *self.arena.get(pkt);
        let proxy = sfc.rules[index as usize].as_ref().is_some_and(|r| r.proxy);
        if !proxy || out == u32::MAX || self.ports[out as usize].peer_host() != Some(p.dst) {
            return false;
        }
        sfc.stats.signals_proxied += 1;
        self.arena.free(pkt);
        self.counters.packets_consumed += 1;
        let quanta = pause_quanta(p.aux, self.ports[out as usize].rate.0);
        self.send_pause(out, (p.seq & 7) as u8, quanta);
        true
    }

    /// A signal reached a host: counted (the host hands it to its transport).
    #[cold]
    #[inline(never)]
    pub(super) fn sfc_delivered(&mut self) {
        if let Some(sfc) = self.sfc.as_mut() {
            sfc.stats.signals_delivered += 1;
        }
    }
}

/// A pause of `pause_ps` in PFC quanta (512 bit times) at `rate_bps`, rounded up so the
/// PAUSE lasts at least as long, and held within 1..=65535.
pub(crate) fn pause_quanta(pause_ps: u64, rate_bps: u64) -> u16 {
    let quantum_bits_ps: u128 = 512 * 1_000_000_000_000;
    let q = (u128::from(pause_ps) * u128::from(rate_bps)).div_ceil(quantum_bits_ps);
    q.clamp(1, u128::from(u16::MAX)) as u16
}

#[cfg(test)]
mod tests {
    use super::pause_quanta;

    #[test]
    fn a_pause_becomes_quanta_rounded_up_and_clamped() {
        // One quantum at 100 Gb/s is 5120 ps.
        assert_eq!(pause_quanta(5120, 100_000_000_000), 1);
        assert_eq!(pause_quanta(5121, 100_000_000_000), 2);
        assert_eq!(pause_quanta(4_000_000, 100_000_000_000), 782);
        assert_eq!(pause_quanta(0, 100_000_000_000), 1);
        assert_eq!(pause_quanta(u64::MAX / 1_000_000_000, 100_000_000_000), u16::MAX);
    }
}
