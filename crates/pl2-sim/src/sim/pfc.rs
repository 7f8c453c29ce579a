//! Priority flow control (IEEE 802.1Qbb) as a network mechanism: switches count, per
//! (ingress port, lossless priority), the bytes that came in through a port and have not
//! left the switch (`SharedBuffer::ingress`); crossing XOFF sends a PAUSE frame to the
//! upstream neighbour, falling to XON sends one with pause time 0; the neighbour's port
//! (a switch's or a host NIC's) stops serving that priority when the frame arrives (the
//! frame on the wire finishes) until the pause expires or XON arrives. PAUSE frames are
//! real frames: 64 B, serialised ahead of any queued frame once the current one ends,
//! propagated, and acted on by the far MAC at their last bit — never behind the frames in
//! the far node's input pipeline or a host's receive path, which are past its MAC —
//! consumed there, never forwarded.
//!
//! With `host.pfc` host NICs send PAUSE as well, from the lossless bytes in their
//! receive buffer (from a frame's last bit at the MAC until it reaches the application).
//!
//! Head-of-line blocking, pause propagation and congestion spreading follow from these
//! rules alone. A pause deadlock (a cycle of ports, each paused by the switch its frames
//! wait in, none resuming) is looked for whenever a switch refreshes its pauses; when
//! every port of such a cycle has been paused longer than `deadlock_after`, the run
//! records it and stops.

use super::network::Owner;
use super::Simulation;
use crate::config::{PfcConfig, PfcThreshold};
use crate::engine::Ev;
use crate::metrics::{DropReason, TraceEvent};
use crate::packet::{Packet, PktId, PktKind, PktList, NO_PKT};
use crate::units::{BitsPerSec, SimTime};

/// A switch's PFC settings, resolved at build time.
#[derive(Clone, Debug)]
pub(crate) struct PfcRules {
    /// Bit p set: priority p is lossless.
    pub lossless: u8,
    pub xoff: PfcThreshold,
    pub xon_gap: u64,
    pub quanta: u16,
    pub refresh: bool,
    pub deadlock_after: u64,
}

impl PfcRules {
    pub(crate) fn new(cfg: &PfcConfig, full_frame_wire: u64) -> PfcRules {
        PfcRules {
            lossless: cfg.priorities.iter().fold(0, |m, &p| m | 1 << p),
            xoff: cfg.xoff,
            xon_gap: cfg.xon_gap.map_or(2 * full_frame_wire, |b| b.0),
            quanta: cfg.pause_quanta,
            refresh: cfg.refresh,
            deadlock_after: cfg.deadlock_after.0,
        }
    }
}

/// The default headroom of a switch port whose link runs at `rate` with one-way
/// `delay_ps`, behind an input pipeline of at most `pipeline_ps`: what can still be
/// counted after the switch decides to pause (`PfcConfig::headroom`). The frame that
/// crossed XOFF was counted at t0; every later one started at the upstream port at or
/// after t0 − delay − pipeline. The PAUSE leaves after at most one full frame, takes its
/// own serialisation and the delay to reach the upstream MAC, which stops starting
/// frames `response_ps` later, and finishes the one it started last: frames started in
/// a window of 2 × delay + pipeline + one frame + the PAUSE + response, plus that last
/// full frame.
pub(crate) fn default_headroom(rate: BitsPerSec, delay_ps: u64, pipeline_ps: u64, full_frame_wire: u64, pause_wire: u64, response_ps: u64) -> u64 {
    let wire_ps = 2 * delay_ps + pipeline_ps + 2 * rate.tx_time(full_frame_wire).0 + rate.tx_time(pause_wire).0 + response_ps;
    (wire_ps as u128 * rate.0 as u128).div_ceil(8_000_000_000_000) as u64
}

/// PFC at host NICs from their receive buffers (`HostPfcConfig`), resolved at build
/// time.
#[derive(Clone, Debug)]
pub(crate) struct HostPfcRules {
    pub lossless: u8,
    pub xoff: u64,
    pub xon_gap: u64,
    pub quanta: u16,
    pub refresh: bool,
}

impl HostPfcRules {
    pub(crate) fn new(cfg: &crate::config::HostPfcConfig, full_frame_wire: u64) -> HostPfcRules {
        HostPfcRules {
            lossless: cfg.priorities.iter().fold(0, |m, &p| m | 1 << p),
            xoff: cfg.xoff.0,
            xon_gap: cfg.xon_gap.map_or(2 * full_frame_wire, |b| b.0),
            quanta: cfg.pause_quanta,
            refresh: cfg.refresh,
        }
    }
}

/// Receive buffers of the host NICs, when hosts send PAUSE (`host.pfc`).
pub(crate) struct HostRx {
    pub rules: HostPfcRules,
    /// Per host: lossless bytes per priority between the MAC and the application.
    pub bytes: Vec<[u64; 8]>,
    /// Per host: lossless frames on the link to it whose last bit has not reached its MAC
    /// yet (wire bytes, priority), oldest first.
    pub on_wire: Vec<std::collections::VecDeque<(u64, u8)>>,
}

/// PFC counters of a run.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct PfcStats {
    /// PAUSE frames sent with a pause time (XOFF, refreshes included) / with time 0 (XON),
    /// by switches and (with `host.pfc`) host NICs.
    pub pause_frames: u64,
    pub xon_frames: u64,
    /// PAUSE frames that reached a switch port / a host NIC.
    pub pauses_at_switches: u64,
    pub pauses_at_hosts: u64,
    /// Time (ps) priorities spent paused, summed over every (port, priority).
    pub paused_ps: u64,
    /// Lossless frames dropped because their ingress headroom was full (0 when the
    /// headroom covers the bytes in flight, as the default does).
    pub headroom_drops: u64,
}

/// A detected pause deadlock.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Deadlock {
    pub at: SimTime,
    /// The cycle's ports (global ids), each paused by the next one's switch.
    pub ports: Vec<u32>,
    pub prio: u8,
}

/// PFC state of a run (present only if some switch runs PFC).
pub(crate) struct Pfc {
    /// Per switch: its rules (`None`: no PFC there).
    pub rules: Vec<Option<PfcRules>>,
    /// Per global port: headroom of the (ingress) link whose far end is this port's owner.
    pub headroom: Vec<u64>,
    /// Per global port: until when each priority is paused (a PAUSE arrived for it).
    pub paused_until: Vec<[SimTime; 8]>,
    /// Per global port: since when each priority has been paused without a break
    /// (`SimTime::MAX`: not paused).
    pub paused_since: Vec<[SimTime; 8]>,
    /// Per global port: MAC control frames waiting to go out before any queued frame.
    pub mac_ctrl: Vec<PktList>,
    /// Per global port: MAC control frames on its link, oldest first (their last bits
    /// reach the far MAC in this order).
    pub on_wire: Vec<PktList>,
    /// Per global switch port (towards an upstream neighbour): lossless priorities in
    /// XOFF state.
    pub xoff: Vec<u8>,
    /// Per global port: the pending refresh time (`SimTime::MAX`: none).
    pub refresh_at: Vec<SimTime>,
    pub stats: PfcStats,
    pub deadlock: Option<Deadlock>,
    /// Host NICs' receive buffers (`None`: hosts send no PAUSE).
    pub host_rx: Option<HostRx>,
}

impl Pfc {
    pub(crate) fn new(rules: Vec<Option<PfcRules>>, headroom: Vec<u64>, host_rx: Option<HostRx>) -> Pfc {
        let n = headroom.len();
        Pfc {
            rules,
            headroom,
            paused_until: vec![[SimTime::ZERO; 8]; n],
            paused_since: vec![[SimTime(u64::MAX); 8]; n],
            mac_ctrl: vec![PktList::default(); n],
            on_wire: vec![PktList::default(); n],
            xoff: vec![0; n],
            refresh_at: vec![SimTime(u64::MAX); n],
            stats: PfcStats::default(),
            deadlock: None,
            host_rx,
        }
    }

    /// Priorities port `port` may serve at `now` (bit p clear: paused).
    #[inline]
    pub(crate) fn allowed(&self, port: u32, now: SimTime) -> u8 {
        let until = &self.paused_until[port as usize];
        let mut m = 0xff;
        for (p, t) in until.iter().enumerate() {
            if *t > now {
                m &= !(1 << p);
            }
        }
        m
    }
}

impl Simulation {
    /// The XOFF threshold of switch `index` now.
    fn xoff_bytes(&self, index: u32, t: PfcThreshold) -> u64 {
        match t {
            PfcThreshold::Bytes(b) => b.0,
            PfcThreshold::Alpha(a) => {
                let b = &self.switches[index as usize].buffer;
                let free = b.ingress_pool.as_ref().map_or(b.size.saturating_sub(b.used), |p| p.free());
                (a * free as f64) as u64
            }
        }
    }

    /// Admission of a frame of lossless priority `prio` arriving at switch `index`
    /// through local ingress port `ingress`: within XOFF + headroom it is admitted
    /// whatever the egress side holds. Returns false (and counts it) when the headroom
    /// is exceeded.
    #[inline(never)]
    pub(super) fn pfc_admit(&mut self, index: u32, ingress: u32, prio: u8, wire: u64) -> bool {
        let pfc = self.pfc.as_ref().expect("PFC on");
        let rules = pfc.rules[index as usize].as_ref().expect("PFC at this switch");
        let sw = &self.switches[index as usize];
        let Some(&up) = sw.ports.get(ingress as usize) else { return true };
        let limit = self.xoff_bytes(index, rules.xoff) + self.pfc.as_ref().expect("PFC on").headroom[up as usize];
        if sw.buffer.ingress[ingress as usize][prio as usize] + wire > limit || sw.buffer.used + wire > sw.buffer.size {
            self.pfc.as_mut().expect("PFC on").stats.headroom_drops += 1;
            return false;
        }
        true
    }

    /// After a lossless frame joined switch `index` through local port `ingress`: XOFF
    /// if its ingress bytes reached the threshold.
    #[inline(never)]
    pub(super) fn pfc_after_enqueue(&mut self, index: u32, ingress: u32, prio: u8) {
        let Some(&up) = self.switches[index as usize].ports.get(ingress as usize) else { return };
        let pfc = self.pfc.as_ref().expect("PFC on");
        let rules = pfc.rules[index as usize].as_ref().expect("PFC at this switch").clone();
        if pfc.xoff[up as usize] & (1 << prio) != 0 {
            return;
        }
        let bytes = self.switches[index as usize].buffer.ingress[ingress as usize][prio as usize];
        if bytes >= self.xoff_bytes(index, rules.xoff) {
            self.pfc.as_mut().expect("PFC on").xoff[up as usize] |= 1 << prio;
            self.send_pause(up, prio, rules.quanta);
            if rules.refresh {
                self.schedule_refresh(up, rules.quanta);
            }
        }
    }

    /// After a lossless frame that came in through local port `ingress` left switch
    /// `index`: XON if its ingress bytes fell to XOFF − gap.
    #[inline(never)]
    pub(super) fn pfc_after_dequeue(&mut self, index: u32, ingress: u32, prio: u8) {
        let Some(&up) = self.switches[index as usize].ports.get(ingress as usize) else { return };
        let pfc = self.pfc.as_ref().expect("PFC on");
        if pfc.xoff[up as usize] & (1 << prio) == 0 {
            return;
        }
        let rules = pfc.rules[index as usize].as_ref().expect("PFC at this switch").clone();
        let bytes = self.switches[index as usize].buffer.ingress[ingress as usize][prio as usize];
        if bytes + rules.xon_gap <= self.xoff_bytes(index, rules.xoff) {
            self.pfc.as_mut().expect("PFC on").xoff[up as usize] &= !(1 << prio);
            self.send_pause(up, prio, 0);
        }
    }

    /// Queues a PAUSE (or, with `quanta` 0, an XON) for priority `prio` on port `port`,
    /// to go out as soon as the frame on the wire ends.
    pub(super) fn send_pause(&mut self, port: u32, prio: u8, quanta: u16) {
        let (node, peer) = match self.ports[port as usize].owner {
            Owner::Switch { index, .. } => (self.switches[index as usize].node, self.ports[port as usize].peer),
            Owner::Host(h) => (h, self.ports[port as usize].peer),
        };
        let wire = self.net.framing.mac_control_wire();
        let pkt = self.arena.alloc(Packet {
            created: self.now,
            enqueued: self.now,
            aux: u64::from(quanta),
            src: node,
            dst: peer,
            seq: 1 << prio,
            wire: wire as u16,
            queue_next: NO_PKT,
            kind: PktKind::Pause,
            prio_transport: 7,
            ..Packet::default()
        });
        self.counters.packets_created += 1;
        let pfc = self.pfc.as_mut().expect("PFC on");
        if quanta == 0 {
            pfc.stats.xon_frames += 1;
        } else {
            pfc.stats.pause_frames += 1;
        }
        pfc.mac_ctrl[port as usize].push_back(pkt, &mut self.arena);
        self.kick_port(port);
    }

    fn schedule_refresh(&mut self, port: u32, quanta: u16) {
        let half = self.pause_time(port, quanta) / 2;
        let at = self.now + crate::units::Duration(half.max(1));
        let pfc = self.pfc.as_mut().expect("PFC on");
        if pfc.refresh_at[port as usize] != SimTime(u64::MAX) && pfc.refresh_at[port as usize] >= self.now {
            return;
        }
        pfc.refresh_at[port as usize] = at;
        self.events.push(at, Ev::PauseRefresh(port));
    }

    /// A pause of `quanta` × 512 bit times at `port`'s link rate, in ps.
    fn pause_time(&self, port: u32, quanta: u16) -> u64 {
        self.ports[port as usize].rate.tx_time(u64::from(quanta) * 64).0
    }

    /// The next MAC control frame waiting at `port`, taken from its queue.
    #[inline(never)]
    pub(super) fn take_mac_ctrl(&mut self, port: u32) -> Option<PktId> {
        let pfc = self.pfc.as_mut()?;
        pfc.mac_ctrl[port as usize].pop_front(&self.arena)
    }

    /// Puts PAUSE frame `pkt`, serialised on `port` now, on the link: its last bit
    /// reaches the far MAC at `last`.
    #[cold]
    #[inline(never)]
    pub(super) fn pause_on_wire(&mut self, port: u32, pkt: PktId, last: SimTime) {
        let pfc = self.pfc.as_mut().expect("PFC on");
        pfc.on_wire[port as usize].push_back(pkt, &mut self.arena);
        self.events.push(last, Ev::PauseArrive(port));
    }

    /// The last bit of the oldest PAUSE frame on `port`'s link reached the far MAC: it is
    /// lost as any frame is on a link that is down or lossy, else acted on now.
    #[cold]
    #[inline(never)]
    pub(crate) fn on_pause_arrive(&mut self, port: u32) {
        let pfc = self.pfc.as_mut().expect("PFC on");
        let pkt = pfc.on_wire[port as usize].pop_front(&self.arena).expect("PAUSE arrival without a frame");
        let (up, loss, peer) = (self.ports[port as usize].up, self.ports[port as usize].loss, self.ports[port as usize].peer);
        if !up {
            return self.drop_packet(pkt, DropReason::LinkDown, peer, port);
        }
        if loss > 0.0 && self.port_rng[port as usize].chance(loss) {
            return self.drop_packet(pkt, DropReason::LinkLoss, peer, port);
        }
        if self.injected_drop(pkt) {
            return self.drop_packet(pkt, DropReason::Injected, peer, port);
        }
        self.arena.get_mut(pkt).enqueued = self.now;
        self.trace(TraceEvent::Arrive, peer, port, pkt);
        self.on_pause_frame(port, pkt);
    }

    /// A PAUSE frame came over link `port` (the sender's port): pause or resume the
    /// receiving node's port back towards the sender.
    #[cold]
    #[inline(never)]
    fn on_pause_frame(&mut self, port: u32, pkt: PktId) {
        let p = *self.arena.get(pkt);
        self.arena.free(pkt);
        self.counters.packets_consumed += 1;
        let target = port ^ 1;
        let now = self.now;
        let duration = self.pause_time(target, p.aux as u16);
        let at_host = matches!(self.ports[target as usize].owner, Owner::Host(_));
        let pfc = self.pfc.as_mut().expect("PFC on");
        if at_host {
            pfc.stats.pauses_at_hosts += 1;
        } else {
            pfc.stats.pauses_at_switches += 1;
        }
        for prio in 0..8 {
            if p.seq & (1 << prio) == 0 {
                continue;
            }
            let i = target as usize;
            settle(pfc, i, prio, now);
            let until = &mut pfc.paused_until[i][prio];
            if duration == 0 {
                if *until > now {
                    pfc.stats.paused_ps += now.0 - pfc.paused_since[i][prio].0;
                }
                *until = now;
                pfc.paused_since[i][prio] = SimTime(u64::MAX);
            } else {
                if *until <= now {
                    pfc.paused_since[i][prio] = now;
                }
                *until = now + crate::units::Duration(duration);
            }
        }
        if duration > 0 {
            self.events.push(now + crate::units::Duration(duration), Ev::PauseEnd(target));
        }
        self.kick_port(target);
    }

    /// A pause at `port` may have run out.
    #[cold]
    #[inline(never)]
    pub(crate) fn on_pause_end(&mut self, port: u32) {
        let now = self.now;
        let pfc = self.pfc.as_mut().expect("PFC on");
        for prio in 0..8 {
            settle(pfc, port as usize, prio, now);
        }
        self.kick_port(port);
    }

    /// Time (ps) priorities spent paused so far, summed over (port, priority), counting
    /// pauses still running up to now.
    pub(crate) fn pfc_paused_ps(&self) -> u64 {
        let Some(pfc) = &self.pfc else { return 0 };
        let running: u64 = pfc
            .paused_since
            .iter()
            .zip(&pfc.paused_until)
            .flat_map(|(s, u)| s.iter().zip(u))
            .filter(|(s, _)| **s != SimTime(u64::MAX))
            .map(|(s, u)| u.0.min(self.now.0).saturating_sub(s.0))
            .sum();
        pfc.stats.paused_ps + running
    }

    /// Looks for a cycle of ports, each paused for at least `after` ps at one priority,
    /// where each port's pause comes from a switch whose own paused port holds frames of
    /// that priority. Records the first one found.
    fn find_deadlock(&mut self, after: u64) {
        let now = self.now;
        let pfc = self.pfc.as_ref().expect("PFC on");
        if pfc.deadlock.is_some() {
            return;
        }
        let hosts = self.graph.hosts;
        let old = |port: u32, prio: usize| {
            let since = pfc.paused_since[port as usize][prio];
            pfc.paused_until[port as usize][prio] > now && since != SimTime(u64::MAX) && now.0 - since.0 >= after
        };
        for prio in 0..8usize {
            // Successors of a port: the long-paused ports, holding frames of `prio`, of
            // the switch it sends to.
            let next = |port: u32| -> Vec<u32> {
                let peer = self.ports[port as usize].peer;
                if peer < hosts {
                    return Vec::new();
                }
                self.switches[(peer - hosts) as usize].ports.iter().copied().filter(|&f| old(f, prio) && self.queues[f as usize].has(prio)).collect()
            };
            let mut state = vec![0u8; self.ports.len()];
            for start in 0..self.ports.len() as u32 {
                if state[start as usize] != 0 || !old(start, prio) || !matches!(self.ports[start as usize].owner, Owner::Switch { .. }) {
                    continue;
                }
                let mut stack: Vec<(u32, Vec<u32>)> = vec![(start, next(start))];
                state[start as usize] = 1;
                while let Some((node, succ)) = stack.last_mut() {
                    let node = *node;
                    match succ.pop() {
                        Some(f) if state[f as usize] == 1 => {
                            let at = stack.iter().position(|(n, _)| *n == f).expect("on the stack");
                            let ports = stack[at..].iter().map(|(n, _)| *n).collect();
                            self.pfc.as_mut().expect("PFC on").deadlock = Some(Deadlock { at: now, ports, prio: prio as u8 });
                            return;
                        }
                        Some(f) if state[f as usize] == 0 => {
                            state[f as usize] = 1;
                            let s = next(f);
                            stack.push((f, s));
                        }
                        Some(_) => {}
                        None => {
                            state[node as usize] = 2;
                            stack.pop();
                        }
                    }
                }
            }
        }
    }

    /// A switch port's refresh time: resend XOFF for each priority still above XON, and
    /// look for a pause deadlock.
    #[cold]
    #[inline(never)]
    pub(crate) fn on_pause_refresh(&mut self, port: u32) {
        let pfc = self.pfc.as_mut().expect("PFC on");
        if pfc.refresh_at[port as usize] != self.now {
            return;
        }
        pfc.refresh_at[port as usize] = SimTime(u64::MAX);
        let xoff = pfc.xoff[port as usize];
        if xoff == 0 {
            return;
        }
        let (index, local) = match self.ports[port as usize].owner {
            Owner::Switch { index, local } => (index, local),
            Owner::Host(h) => return self.host_pause_refresh(port, h, xoff),
        };
        let rules = self.pfc.as_ref().expect("PFC on").rules[index as usize].clone().expect("PFC at this switch");
        for prio in 0..8u8 {
            if xoff & (1 << prio) == 0 {
                continue;
            }
            let bytes = self.switches[index as usize].buffer.ingress[local as usize][prio as usize];
            if bytes + rules.xon_gap > self.xoff_bytes(index, rules.xoff) {
                self.send_pause(port, prio, rules.quanta);
            }
        }
        self.schedule_refresh(port, rules.quanta);
        self.find_deadlock(rules.deadlock_after);
    }
}

/// Closes the pause of (port `i`, `prio`) if it ran out by `now`.
fn settle(pfc: &mut Pfc, i: usize, prio: usize, now: SimTime) {
    let since = pfc.paused_since[i][prio];
    let until = pfc.paused_until[i][prio];
    if since != SimTime(u64::MAX) && until <= now {
        pfc.stats.paused_ps += until.0.saturating_sub(since.0);
        pfc.paused_since[i][prio] = SimTime(u64::MAX);
    }
}

impl Simulation {
    /// A lossless frame of `wire` bytes and priority `prio` went on the link to host `h`;
    /// its last bit reaches the host's MAC at `at_mac`.
    #[cold]
    #[inline(never)]
    pub(super) fn host_rx_on_wire(&mut self, h: u32, wire: u64, prio: u8, at_mac: SimTime) {
        let rx = self.pfc.as_mut().and_then(|p| p.host_rx.as_mut()).expect("host PFC on");
        rx.on_wire[h as usize].push_back((wire, prio));
        self.events.push(at_mac, Ev::HostRxArrive(h));
    }

    /// The oldest lossless frame on the link to host `h` reached its MAC: it joins the
    /// receive buffer; XOFF if that priority's bytes reached the threshold.
    #[cold]
    #[inline(never)]
    pub(crate) fn on_host_rx_arrive(&mut self, h: u32) {
        let port = self.hosts[h as usize].port;
        let pfc = self.pfc.as_mut().expect("PFC on");
        let rx = pfc.host_rx.as_mut().expect("host PFC on");
        let (wire, prio) = rx.on_wire[h as usize].pop_front().expect("a frame on the wire");
        let bytes = &mut rx.bytes[h as usize][prio as usize];
        *bytes += wire;
        let (xoff, quanta, refresh) = (rx.rules.xoff, rx.rules.quanta, rx.rules.refresh);
        if *bytes >= xoff && pfc.xoff[port as usize] & (1 << prio) == 0 {
            pfc.xoff[port as usize] |= 1 << prio;
            self.send_pause(port, prio, quanta);
            if refresh {
                self.schedule_refresh(port, quanta);
            }
        }
    }

    /// A frame left the link to host `h` (to its application, or dropped there): a
    /// lossless one leaves the receive buffer; XON if its priority fell to XOFF − gap.
    #[inline]
    pub(super) fn host_rx_leave(&mut self, h: u32, pkt: PktId) {
        let Some(rx) = self.pfc.as_ref().and_then(|p| p.host_rx.as_ref()) else { return };
        let p = self.arena.get(pkt);
        let prio = p.prio();
        if rx.rules.lossless & (1 << prio) == 0 {
            return;
        }
        self.host_rx_left(h, p.wire as u64, prio);
    }

    #[cold]
    #[inline(never)]
    fn host_rx_left(&mut self, h: u32, wire: u64, prio: u8) {
        let port = self.hosts[h as usize].port;
        let pfc = self.pfc.as_mut().expect("PFC on");
        let rx = pfc.host_rx.as_mut().expect("host PFC on");
        let bytes = &mut rx.bytes[h as usize][prio as usize];
        *bytes -= wire;
        if pfc.xoff[port as usize] & (1 << prio) != 0 && *bytes + rx.rules.xon_gap <= rx.rules.xoff {
            pfc.xoff[port as usize] &= !(1 << prio);
            self.send_pause(port, prio, 0);
        }
    }

    /// Host `h`'s refresh time: resend XOFF for each priority of `xoff` still above XON.
    fn host_pause_refresh(&mut self, port: u32, h: u32, xoff: u8) {
        let rx = self.pfc.as_ref().and_then(|p| p.host_rx.as_ref()).expect("host PFC on");
        let (quanta, gap, limit) = (rx.rules.quanta, rx.rules.xon_gap, rx.rules.xoff);
        let above: Vec<u8> = (0..8u8).filter(|&p| xoff & (1 << p) != 0 && rx.bytes[h as usize][p as usize] + gap > limit).collect();
        for prio in above {
            self.send_pause(port, prio, quanta);
        }
        self.schedule_refresh(port, quanta);
    }
}
