//! Raw Ethernet (or UDP) with no congestion control: a message is cut into frames and
//! sent as fast as the NIC allows — the "raw Ethernet (optimal)" baseline of PL2 §6.3.
//! Nothing is retransmitted; a message with a lost frame never completes and is reported
//! unfinished (as soon as its other frames are delivered or dropped, see
//! [`Protocol::frames_if_never_resent`]).
//!
//! It is also the template for every protocol: state per sending thread and per message
//! being received, and everything it does is written into [`Actions`].

use super::{Actions, HostSite, HostView, MsgInfo, Protocol, SendSpec, Transport};
use crate::error::{invalid, BuildError};
use crate::framing::L4Headers;
use crate::packet::{flags, Packet, PktKind};
use crate::units::SimTime;
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

/// Raw transport parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct RawConfig {
    /// Headers between Ethernet and payload: `none` (raw Ethernet, default) or `udp`.
    pub headers: RawHeaders,
    /// 802.1Q priority of data frames. Default 0.
    pub priority: u8,
    /// Let a trimming queue cut data frames to their headers instead of dropping them
    /// (`flags::TRIMMABLE`). Raw Ethernet never resends, so the receiver counts a trimmed
    /// frame as lost; it exists to study trimming queues without a protocol's reaction.
    /// Default false.
    // Left out of the canonical form at its default (scenario hashes stay as they were).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    #[schemars(!skip_serializing_if)]
    pub trimmable: bool,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RawHeaders {
    #[default]
    None,
    Udp,
}

impl Default for RawConfig {
    fn default() -> Self {
        RawConfig { headers: RawHeaders::None, priority: 0, trimmable: false }
    }
}

impl RawConfig {
    pub fn l4(&self) -> L4Headers {
        match self.headers {
            RawHeaders::None => L4Headers::None,
            RawHeaders::Udp => L4Headers::Udp,
        }
    }
}

/// The raw transport module: no counters, no switch program.
pub struct Raw;

impl Transport for Raw {
    type Config = RawConfig;
    type Host = RawHost;
    type Stats = ();

    fn l4(cfg: &RawConfig) -> L4Headers {
        cfg.l4()
    }

    fn host(cfg: &RawConfig, at: &HostSite<'_>) -> Result<RawHost, BuildError> {
        if cfg.priority > 7 {
            return Err(invalid(format!("{}.priority", at.field), format!("{}; 802.1Q priorities are 0..7", cfg.priority)));
        }
        let hc = &at.net.host;
        Ok(RawHost::new(cfg, at.max_payload(cfg.l4()), hc.threads, hc.tx_ring_frames))
    }
}

#[derive(Default, Clone)]
struct ThreadTx {
    msg: Option<MsgInfo>,
    next_offset: u64,
    in_ring: u32,
}

/// Raw transport on one host.
pub struct RawHost {
    l4: L4Headers,
    prio: u8,
    /// Engine flags of every data frame.
    flags: u8,
    max_payload: u64,
    ring: u32,
    threads: Vec<ThreadTx>,
    /// Bytes received so far per message being received, keyed by message slot, with
    /// the slot's generation. An entry leaves at delivery, so the map holds this host's
    /// partly received messages, not one entry per slot of the whole network. The entry of a
    /// message with a lost frame stays until a frame of the slot's next message arrives
    /// here (raw Ethernet never recovers it), so the map holds at most one entry per slot.
    rx: FxHashMap<u32, (u16, u64)>,
}

impl RawHost {
    pub fn new(cfg: &RawConfig, max_payload: u64, threads: u16, ring: u32) -> RawHost {
        RawHost {
            l4: cfg.l4(),
            prio: cfg.priority,
            flags: if cfg.trimmable { flags::BURST_END | flags::TRIMMABLE } else { flags::BURST_END },
            max_payload,
            ring: ring.max(1),
            threads: vec![ThreadTx::default(); threads as usize],
            rx: FxHashMap::default(),
        }
    }

    fn fill(&mut self, thread: u16, out: &mut Actions) {
        let t = &mut self.threads[thread as usize];
        while t.in_ring < self.ring {
            let Some(m) = t.msg else { return };
            let payload = (m.size - t.next_offset).min(self.max_payload);
            out.sends.push(SendSpec {
                dst: m.dst,
                kind: PktKind::Data,
                prio: self.prio,
                payload: payload as u32,
                l4: Some(self.l4),
                msg: m.slot,
                msg_gen: m.gen,
                flow: m.id as u32,
                seq: (t.next_offset / self.max_payload) as u32,
                thread,
                flags: self.flags,
                proto: 0,
                aux: m.size,
            });
            t.in_ring += 1;
            t.next_offset += payload;
            if t.next_offset >= m.size {
                t.msg = None;
                out.released.push(thread);
            }
        }
    }
}

impl Protocol for RawHost {
    fn on_message(&mut self, _now: SimTime, msg: &MsgInfo, out: &mut Actions) {
        let t = &mut self.threads[msg.thread as usize];
        debug_assert!(t.msg.is_none(), "thread busy");
        t.msg = Some(*msg);
        t.next_offset = 0;
        self.fill(msg.thread, out);
    }

    fn on_packet(&mut self, _now: SimTime, pkt: &Packet, _view: &HostView, out: &mut Actions) {
        // Only data is ours (an SFC signal for a raw flow is ignored: raw never slows down).
        if pkt.kind != PktKind::Data {
            return;
        }
        let e = self.rx.entry(pkt.msg).or_insert((pkt.msg_gen, 0));
        if e.0 != pkt.msg_gen {
            // A message of an earlier generation of this slot lost a frame and never
            // completed; its partial count is dropped.
            *e = (pkt.msg_gen, 0);
        }
        e.1 += pkt.payload as u64;
        out.goodput_bytes += pkt.payload as u64;
        // The message size rides in `aux` of every data frame.
        if e.1 == pkt.aux {
            self.rx.remove(&pkt.msg);
            out.delivered.push((pkt.msg, pkt.msg_gen));
        }
    }

    fn on_timer(&mut self, _now: SimTime, _id: u32, _out: &mut Actions) {}

    /// A message of `size` bytes is `fill`'s frames of at most `max_payload` bytes; an
    /// empty message still takes one frame.
    fn frames_if_never_resent(&self, size: u64) -> Option<u32> {
        Some(size.div_ceil(self.max_payload).max(1) as u32)
    }

    fn on_tx_dequeue(&mut self, _now: SimTime, thread: u16, out: &mut Actions) {
        let t = &mut self.threads[thread as usize];
        t.in_ring = t.in_ring.saturating_sub(1);
        self.fill(thread, out);
    }
}
