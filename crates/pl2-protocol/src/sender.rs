//! The PL2 sender (§4.2.1 host logic with equation (1), §4.3 bursts of at most K packets,
//! §4.4 Algorithm 2, §5 blocking contexts, the talk's pipelining and priorities) as a
//! sans-IO state machine in the style of smoltcp's sockets: every `on_*` method takes the
//! current time and pushes what to do into a caller-provided `Vec<SenderAction>`.
//!
//! One `Sender` serves one host and all its contexts. Messages are queued per context
//! (or per context and destination, [`ExchangeScope`]) and cut into bursts of at most K
//! packets; a burst never spans two messages. Each burst is one RSV–GRT exchange.
//!
//! Choices where the paper is silent (ours):
//! - Lost RSVs or GRTs: an RSV whose GRT has not arrived after `rsv_timeout_ps` is sent
//!   again with the attempt number incremented. A GRT of an earlier attempt (or of a burst
//!   we no longer wait for) is a grant nobody will use: the sender releases it with a
//!   CANCEL to the switch. A GRT that is truly lost leaks its reservation, unless the
//!   receivers track pending bursts from GRT copies (§4.5, [`crate::receiver`]).
//! - A retried RSV never announces an unsolicited copy (that copy went out with attempt 0
//!   and the switch may not have seen its RSV); with the improved switch this makes the
//!   retry's GRT say "not admitted", so the burst is always resent.
//! - Algorithm 2 line 17 tests `lastChosenTimeslot < t` to know the burst went
//!   unsolicited; we remember that per burst instead, which is the same in blocking mode
//!   and stays right when pipelining has two exchanges in flight.
//! - Priority scheme: a burst sends exactly `granted` packets and the rest of the message
//!   goes into the next burst; a reject (granted = 0) asks again after
//!   `reject_backoff_ps`.
//! - The probe record of every processed GRT is emitted as [`SenderAction::Probe`].

mod config;
mod state;
#[cfg(test)]
mod tests;
mod types;

use std::collections::{BTreeMap, HashMap};

pub use config::{ExchangeScope, LowLoadConfig, PipelineMode, Recency, SenderConfig, WaitRule};
pub use types::{AppMessage, BurstProbe, BurstSend, SenderAction, SenderStats};

use crate::error::{ConfigError, ProtocolError};
use crate::msg::{BurstId, Cancel, Grt, HostId, MsgId, Rsv, TimerToken};
use state::{
    decode_token, encode_token, Burst, DestState, Message, Phase, Queue, QueueKey, TimerKind,
};

/// The sender of one host.
#[derive(Debug)]
pub struct Sender {
    cfg: SenderConfig,
    next_burst: u32,
    messages: HashMap<MsgId, Message>,
    queues: BTreeMap<QueueKey, Queue>,
    dests: HashMap<(u32, HostId), DestState>,
    bursts: HashMap<BurstId, Burst>,
    stats: SenderStats,
}

impl Sender {
    pub fn new(cfg: SenderConfig) -> Result<Sender, ConfigError> {
        cfg.validate()?;
        Ok(Sender {
            cfg,
            next_burst: 0,
            messages: HashMap::new(),
            queues: BTreeMap::new(),
            dests: HashMap::new(),
            bursts: HashMap::new(),
            stats: SenderStats::default(),
        })
    }

    pub fn config(&self) -> &SenderConfig {
        &self.cfg
    }

    pub fn stats(&self) -> &SenderStats {
        &self.stats
    }

    /// The RSV–GRT delay estimate for a (context, destination), if any.
    pub fn rsv_grt_estimate_ps(&self, ctx: u32, dst: HostId) -> Option<u64> {
        self.dests
            .get(&(ctx, dst))
            .and_then(|d| d.estimator.estimate_ps())
    }

    /// The application sends a message.
    pub fn on_app_message(
        &mut self,
        now_ps: u64,
        m: AppMessage,
        out: &mut Vec<SenderAction>,
    ) -> Result<(), ProtocolError> {
        if self.messages.contains_key(&m.id) {
            return Err(ProtocolError::DuplicateMessage(m.id));
        }
        let packets = m.bytes.div_ceil(self.cfg.payload_per_packet_bytes).max(1);
        let total_packets =
            u32::try_from(packets).map_err(|_| ProtocolError::MessageTooLarge(m.id))?;
        self.stats.messages += 1;
        self.messages.insert(
            m.id,
            Message {
                dst: m.dst,
                ctx: m.ctx,
                high_priority: m.high_priority,
                total_packets,
                next_packet: 0,
                handed_packets: 0,
            },
        );
        let key = self.queue_key(m.ctx, m.dst);
        self.queues.entry(key).or_default().messages.push_back(m.id);
        self.try_start(now_ps, key, out);
        Ok(())
    }

    /// A GRT arrives. `nic_backlog_ps` is the time the NIC needs to send what is queued in
    /// it now (`pendingDataDelay`, used by [`WaitRule::Literal`] only).
    pub fn on_grt(
        &mut self,
        now_ps: u64,
        grt: &Grt,
        nic_backlog_ps: u64,
        out: &mut Vec<SenderAction>,
    ) {
        if grt.src != self.cfg.host {
            return;
        }
        let current = self.bursts.get(&grt.burst).is_some_and(|b| {
            b.phase == Phase::AwaitingGrt && b.attempt == grt.attempt && b.dst == grt.dst
        });
        if !current {
            self.stats.stale_grts += 1;
            if grt.granted_packets > 0 {
                self.cancel(grt.dst, grt.granted_packets, out);
            }
            return;
        }
        let mut b = self.bursts.remove(&grt.burst).expect("checked above");
        let chosen = grt.chosen_slots();
        let est_kind = self.cfg.estimator;
        let dest = self
            .dests
            .entry((b.ctx, b.dst))
            .or_insert_with(|| DestState::new(est_kind));
        dest.estimator
            .add_sample(now_ps.saturating_sub(b.rsv_sent_ps));
        dest.last_chosen_slots = Some(chosen);
        dest.last_response_ps = Some(now_ps);
        let estimate_ps = dest.estimator.estimate_ps().unwrap_or(0);
        let mut wait_ps = 0;
        if grt.granted_packets == 0 {
            self.stats.rejects += 1;
            b.phase = Phase::Backoff;
            let token = encode_token(TimerKind::RejectBackoff, grt.burst, b.attempt);
            out.push(SenderAction::SetTimer {
                token,
                at_ps: now_ps + self.cfg.reject_backoff_ps,
            });
        } else {
            self.apply_grant_size(&mut b, grt, out);
            wait_ps = self.waiting_time_ps(chosen, estimate_ps, nic_backlog_ps);
            b.phase = Phase::Granted;
            let resend = b.unsolicited
                && if self.cfg.improved {
                    !grt.unsolicited_admitted
                } else {
                    chosen > self.cfg.low_load.t_slots
                };
            if resend {
                b.resent = true;
                self.stats.resent_bursts += 1;
            }
            if !b.unsolicited || resend {
                b.copies_emitted += 1;
                out.push(SenderAction::SendBurst(burst_send(
                    grt.burst,
                    &b,
                    false,
                    resend,
                    now_ps + wait_ps,
                )));
            }
        }
        out.push(SenderAction::Probe(BurstProbe {
            burst: grt.burst,
            msg: b.msg,
            ctx: b.ctx,
            dst: b.dst,
            attempt: b.attempt,
            rsv_time_ps: b.rsv_sent_ps,
            grt_time_ps: now_ps,
            send_slot: grt.send_timeslot_slots,
            recv_slot: grt.recv_timeslot_slots,
            chosen_slots: chosen,
            granted_packets: grt.granted_packets,
            wait_ps,
            unsolicited: b.unsolicited,
            resent: b.resent,
        }));
        let key = b.queue;
        self.bursts.insert(grt.burst, b);
        self.finish_if_done(grt.burst);
        self.try_start(now_ps, key, out);
    }

    /// A timer set by a [`SenderAction::SetTimer`] fires. Stale tokens are ignored.
    pub fn on_timer(&mut self, now_ps: u64, token: TimerToken, out: &mut Vec<SenderAction>) {
        let Some((kind, id, attempt)) = decode_token(token) else {
            return;
        };
        let Some(b) = self.bursts.get_mut(&id) else {
            return;
        };
        let due = match kind {
            TimerKind::RsvTimeout => b.phase == Phase::AwaitingGrt,
            TimerKind::RejectBackoff => b.phase == Phase::Backoff,
        };
        if !due || b.attempt != attempt {
            return;
        }
        if kind == TimerKind::RsvTimeout {
            self.stats.rsv_retries += 1;
        }
        b.attempt = b.attempt.wrapping_add(1);
        b.phase = Phase::AwaitingGrt;
        self.send_rsv(now_ps, id, out);
    }

    /// The driver handed (a copy of) a burst to the NIC.
    pub fn on_burst_handed_to_nic(
        &mut self,
        now_ps: u64,
        burst: BurstId,
        out: &mut Vec<SenderAction>,
    ) {
        let Some(b) = self.bursts.get_mut(&burst) else {
            return;
        };
        b.copies_handed += 1;
        let (first, msg_id, packets, key) = (b.copies_handed == 1, b.msg, b.packets, b.queue);
        if first {
            if let Some(m) = self.messages.get_mut(&msg_id) {
                m.handed_packets += packets;
                if m.handed_packets >= m.total_packets {
                    self.messages.remove(&msg_id);
                    out.push(SenderAction::MessageHandedOver { msg: msg_id });
                }
            }
        }
        self.finish_if_done(burst);
        self.try_start(now_ps, key, out);
    }

    /// The NIC finished transmitting (a copy of) a burst. Needed in blocking mode.
    pub fn on_burst_transmitted(
        &mut self,
        now_ps: u64,
        burst: BurstId,
        out: &mut Vec<SenderAction>,
    ) {
        let Some(b) = self.bursts.get_mut(&burst) else {
            return;
        };
        b.copies_transmitted += 1;
        let key = b.queue;
        self.finish_if_done(burst);
        self.try_start(now_ps, key, out);
    }

    fn queue_key(&self, ctx: u32, dst: HostId) -> QueueKey {
        match self.cfg.scope {
            ExchangeScope::PerContext => (ctx, None),
            ExchangeScope::PerDestination => (ctx, Some(dst)),
        }
    }

    /// Equation (1) under the configured reading.
    fn waiting_time_ps(
        &self,
        chosen_slots: u64,
        rsv_grt_delay_ps: u64,
        nic_backlog_ps: u64,
    ) -> u64 {
        let timeslot_wait_ps = chosen_slots.saturating_mul(self.cfg.slot_ps);
        let wait = timeslot_wait_ps.saturating_sub(rsv_grt_delay_ps);
        match self.cfg.wait_rule {
            WaitRule::Literal => wait.saturating_sub(nic_backlog_ps),
            WaitRule::AtHandoff => wait,
        }
    }

    /// Trims a burst to its grant (priority scheme) and gives the rest back to its message.
    fn apply_grant_size(&mut self, b: &mut Burst, grt: &Grt, out: &mut Vec<SenderAction>) {
        let granted = grt.granted_packets;
        if granted == b.packets {
            return;
        }
        if b.unsolicited {
            self.stats.grant_mismatches += 1;
            return;
        }
        if granted > b.packets {
            // More than asked: release what we will not use.
            self.cancel(b.dst, granted - b.packets, out);
            return;
        }
        self.stats.partial_grants += 1;
        let m = self
            .messages
            .get_mut(&b.msg)
            .expect("a burst's message lives until handed over");
        let was_queued = m.next_packet < m.total_packets;
        m.next_packet = b.first_packet + granted;
        b.packets = granted;
        if !was_queued {
            self.queues
                .entry(b.queue)
                .or_default()
                .messages
                .push_front(b.msg);
        }
    }

    fn cancel(&mut self, dst: HostId, packets: u32, out: &mut Vec<SenderAction>) {
        self.stats.cancels_sent += 1;
        out.push(SenderAction::SendCancel(Cancel {
            src: self.cfg.host,
            dst,
            packets,
        }));
    }

    /// Starts bursts from a queue while its pipeline mode allows.
    fn try_start(&mut self, now_ps: u64, key: QueueKey, out: &mut Vec<SenderAction>) {
        while self.may_start(key) {
            self.start_burst(now_ps, key, out);
        }
    }

    fn may_start(&self, key: QueueKey) -> bool {
        let Some(q) = self.queues.get(&key) else {
            return false;
        };
        if q.messages.is_empty() {
            return false;
        }
        match self.cfg.pipeline {
            PipelineMode::Blocking => q.active.is_empty(),
            PipelineMode::Pipelined => {
                let bursts = q.active.iter().map(|id| &self.bursts[id]);
                let all_handed = bursts.clone().all(|b| b.copies_handed > 0);
                let awaiting = bursts.filter(|b| b.phase != Phase::Granted).count();
                all_handed && awaiting < 2
            }
        }
    }

    /// Cuts the next burst off the queue's head message, sends its RSV and, under the
    /// low-load optimisation, the burst itself unsolicited (Algorithm 2 lines 7-9).
    fn start_burst(&mut self, now_ps: u64, key: QueueKey, out: &mut Vec<SenderAction>) {
        let q = self.queues.get_mut(&key).expect("may_start checked it");
        let msg_id = *q.messages.front().expect("may_start checked it");
        let m = self
            .messages
            .get_mut(&msg_id)
            .expect("queued messages exist");
        let packets = self.cfg.k_packets.min(m.total_packets - m.next_packet);
        let first_packet = m.next_packet;
        m.next_packet += packets;
        if m.next_packet == m.total_packets {
            q.messages.pop_front();
        }
        let (dst, ctx, high) = (m.dst, m.ctx, m.high_priority);
        let id = BurstId(self.next_burst);
        self.next_burst = self.next_burst.wrapping_add(1);
        q.active.push(id);
        let unsolicited = self.unsolicited_allowed(now_ps, ctx, dst, high);
        self.stats.bursts += 1;
        let mut b = Burst {
            queue: key,
            msg: msg_id,
            dst,
            ctx,
            high_priority: high,
            first_packet,
            packets,
            attempt: 0,
            rsv_sent_ps: now_ps,
            unsolicited,
            resent: false,
            phase: Phase::AwaitingGrt,
            copies_emitted: 0,
            copies_handed: 0,
            copies_transmitted: 0,
        };
        let unsolicited_send = unsolicited.then(|| {
            b.copies_emitted = 1;
            burst_send(id, &b, true, false, now_ps)
        });
        self.bursts.insert(id, b);
        self.send_rsv(now_ps, id, out);
        if let Some(s) = unsolicited_send {
            self.stats.unsolicited_bursts += 1;
            out.push(SenderAction::SendBurst(s));
        }
    }

    /// Algorithm 2 line 8: the last chosen timeslot is below t and the last GRT is recent.
    fn unsolicited_allowed(&self, now_ps: u64, ctx: u32, dst: HostId, high: bool) -> bool {
        let ll = self.cfg.low_load;
        if !ll.enabled || (self.cfg.priority_scheme && !high) {
            return false;
        }
        let Some(d) = self.dests.get(&(ctx, dst)) else {
            return false;
        };
        let (Some(chosen), Some(last)) = (d.last_chosen_slots, d.last_response_ps) else {
            return false;
        };
        let window_ps = match ll.recency {
            Recency::FixedPs(ps) => ps,
            Recency::EstimateTimes(k) => match d.estimator.estimate_ps() {
                Some(e) => e.saturating_mul(u64::from(k)),
                None => return false,
            },
        };
        chosen < ll.t_slots && now_ps.saturating_sub(last) <= window_ps
    }

    /// Sends the RSV of a burst's current attempt and arms its timeout.
    fn send_rsv(&mut self, now_ps: u64, id: BurstId, out: &mut Vec<SenderAction>) {
        let b = self.bursts.get_mut(&id).expect("caller holds a live burst");
        b.rsv_sent_ps = now_ps;
        self.stats.rsvs += 1;
        out.push(SenderAction::SendRsv(Rsv {
            src: self.cfg.host,
            dst: b.dst,
            burst: id,
            attempt: b.attempt,
            demand_packets: b.packets,
            high_priority: b.high_priority,
            unsolicited_follows: b.unsolicited && b.attempt == 0,
        }));
        let token = encode_token(TimerKind::RsvTimeout, id, b.attempt);
        out.push(SenderAction::SetTimer {
            token,
            at_ps: now_ps + self.cfg.rsv_timeout_ps,
        });
    }

    /// Forgets a burst once its GRT is processed and all its copies left (blocking:
    /// transmitted; pipelined: handed to the NIC).
    fn finish_if_done(&mut self, id: BurstId) {
        let Some(b) = self.bursts.get(&id) else {
            return;
        };
        let left = match self.cfg.pipeline {
            PipelineMode::Blocking => b.copies_transmitted,
            PipelineMode::Pipelined => b.copies_handed,
        };
        if b.phase == Phase::Granted
            && left >= b.copies_emitted
            && b.copies_handed >= b.copies_emitted
        {
            let key = b.queue;
            self.bursts.remove(&id);
            if let Some(q) = self.queues.get_mut(&key) {
                q.active.retain(|&a| a != id);
            }
        }
    }
}

fn burst_send(id: BurstId, b: &Burst, unsolicited: bool, resent: bool, at_ps: u64) -> BurstSend {
    BurstSend {
        burst: id,
        msg: b.msg,
        dst: b.dst,
        ctx: b.ctx,
        first_packet: b.first_packet,
        packets: b.packets,
        unsolicited,
        resent,
        at_ps,
    }
}
