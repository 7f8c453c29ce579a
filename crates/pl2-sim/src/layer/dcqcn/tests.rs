//! The DCQCN layer under a transport that is not RoCE: a minimal frame source (one flow
//! per message, full raw-Ethernet frames, no reliability), so that what is checked is
//! the layer alone — pacing to the picosecond, CNPs consumed before the transport, and
//! settings refused with the field named. Every number is worked out by hand below.

use super::stack::{pacing_timer, Stack, PACING};
use super::{wire, Dcqcn, DcqcnHost, DcqcnLayerConfig, DcqcnParams};
use crate::config::NetworkConfig;
use crate::framing::{Framing, L4Headers};
use crate::layer::{HostLayer, Layer};
use crate::packet::{flags, Packet, PktKind};
use crate::transport::roce::{AlphaUpdate, ClampTarget, HyperIncrease};
use crate::transport::{Actions, HostSite, HostView, MsgInfo, Protocol, Pulled, SendSpec};
use crate::units::{BitsPerSec, Duration, SimTime};

const G100: BitsPerSec = BitsPerSec::gbps(100);
/// A full raw frame: 1500 B payload + 42 B Ethernet (tagged) framing = 1542 B, whose
/// 12,336 bits take 123,360 ps at 100 Gbps.
const PAYLOAD: u32 = 1500;
const WIRE: u64 = 1542;
const SER: u64 = 123_360;

/// One message at a time, cut into full frames, pushed by nobody but the layer's pulls.
#[derive(Default)]
struct Frames {
    msg: Option<MsgInfo>,
    next: u32,
    frames: u32,
    /// Every frame the layer let through to this transport.
    seen: Vec<PktKind>,
}

impl Protocol for Frames {
    fn on_message(&mut self, _now: SimTime, msg: &MsgInfo, out: &mut Actions) {
        self.msg = Some(*msg);
        self.frames = msg.size.div_ceil(u64::from(PAYLOAD)) as u32;
        out.wake = true;
    }
    fn on_packet(&mut self, _now: SimTime, pkt: &Packet, _view: &HostView, _out: &mut Actions) {
        self.seen.push(pkt.kind);
    }
    fn on_timer(&mut self, _now: SimTime, _id: u32, _out: &mut Actions) {}
    fn on_tx_dequeue(&mut self, _now: SimTime, _thread: u16, _out: &mut Actions) {}
    fn sendable(&self, _flow: (u32, u16), _rate: BitsPerSec) -> Option<SimTime> {
        (self.next < self.frames).then_some(SimTime::ZERO)
    }
    fn pull(&mut self, _now: SimTime, _flow: (u32, u16), out: &mut Actions) -> Option<Pulled> {
        let m = self.msg?;
        let seq = self.next;
        self.next += 1;
        out.sends.push(SendSpec {
            dst: m.dst,
            kind: PktKind::Data,
            prio: 3,
            payload: PAYLOAD,
            l4: Some(L4Headers::None),
            msg: m.slot,
            msg_gen: m.gen,
            flow: m.id as u32,
            seq,
            thread: m.thread,
            flags: flags::ECT | flags::NOTIFY_TX_DONE | flags::BURST_END,
            proto: 0,
            aux: 0,
        });
        Some(Pulled { seq, wire: Framing::default().wire_bytes(L4Headers::None, u64::from(PAYLOAD)) })
    }
}

/// The paper's reaction point at 100 Gbps, with an increase timer long enough never to
/// fire here, and no byte counter.
fn params() -> DcqcnParams {
    DcqcnParams {
        line_rate: G100,
        g: 1.0 / 256.0,
        alpha_init: 1.0,
        alpha_timer: Duration::from_us(55),
        alpha_update: AlphaUpdate::OnCnp,
        decrease_interval: Duration::ZERO,
        clamp_target: ClampTarget::Always,
        fast_recovery_steps: 5,
        increase_timer: Duration::from_ms(100),
        byte_counter: None,
        rate_ai: BitsPerSec(40_000_000),
        rate_hai: BitsPerSec(400_000_000),
        hyper_increase: HyperIncrease::Multiplied,
        min_rate: BitsPerSec(100_000_000),
        cnp_interval: Duration::from_us(50),
        cnp_on_ack: false,
        window: None,
        window_scales_with_rate: false,
    }
}

fn config() -> DcqcnLayerConfig {
    DcqcnLayerConfig { params: params(), tx_pipeline_frames: None, probes: true }
}

fn stack() -> Stack<Frames> {
    Stack { t: Frames::default(), l: DcqcnHost::new(config(), G100) }
}

fn msg(frames: u64) -> MsgInfo {
    MsgInfo { slot: 3, gen: 1, id: 42, src: 0, dst: 1, size: frames * u64::from(PAYLOAD), thread: 0, prio: 0, start: SimTime::ZERO }
}

fn sent(s: &SendSpec) -> Packet {
    s.to_packet(0, SimTime::ZERO, Framing::default())
}

/// A CNP frame for message 3/1, as a notification point sends it.
fn cnp(slot: u32) -> Packet {
    Packet { kind: PktKind::Control, msg: slot, msg_gen: 1, aux: wire::CNP_TYPE << wire::TYPE_SHIFT, ..Packet::default() }
}

#[test]
fn the_layer_paces_another_transport_to_the_picosecond() {
    let mut h = stack();
    let mut out = Actions::default();
    h.on_message(SimTime::ZERO, &msg(20), &mut out);
    assert_eq!(out.sends.iter().map(|s| s.seq).collect::<Vec<_>>(), [0], "one frame in the NIC");
    let first = out.sends[0];
    assert_eq!(u64::from(sent(&first).wire), WIRE);
    // At line rate the next frame goes the moment the last one's last bit leaves.
    out.clear();
    h.on_tx_done(SimTime(SER), &sent(&first), &mut out);
    assert_eq!(out.sends.iter().map(|s| s.seq).collect::<Vec<_>>(), [1]);
    let second = out.sends[0];
    // A CNP at 200 ns halves the rate (α = 1). Frame 1 was picked at 123,360 ps; at
    // 50 Gbps its 12,336 bits take 246,720 ps: frame 2 may go at 370,080 ps, not when
    // frame 1 ends at 246,720 ps.
    out.clear();
    assert!(h.on_packet(SimTime(200_000), &cnp(3), &mut out), "the layer keeps its CNP");
    assert_eq!(h.l.rate_of(3, 1).unwrap().0, 50_000_000_000);
    assert!(out.probes.iter().any(|&(f, n, v)| f == 42 && n == "roce_rate_bps" && v == 5e10));
    out.clear();
    h.on_tx_done(SimTime(2 * SER), &sent(&second), &mut out);
    assert!(out.sends.is_empty());
    assert_eq!(pacing_timer(&out), Some(SimTime(370_080)));
    out.clear();
    h.on_timer(SimTime(370_080), PACING, &mut out);
    assert_eq!(out.sends.iter().map(|s| s.seq).collect::<Vec<_>>(), [2]);
    // And so on: 370,080 + 246,720 = 616,800 ps.
    let third = out.sends[0];
    out.clear();
    h.on_tx_done(SimTime(370_080 + SER), &sent(&third), &mut out);
    assert_eq!(pacing_timer(&out), Some(SimTime(616_800)));
    // A second cut at α = (1 − 1/256)·1 + 1/256 = 1 halves again: 25 Gbps, 493,440 ps a
    // frame, from frame 2's pick.
    out.clear();
    h.on_packet(SimTime(500_000), &cnp(3), &mut out);
    assert_eq!(h.l.rate_of(3, 1).unwrap().0, 25_000_000_000);
    assert_eq!(pacing_timer(&out), Some(SimTime(370_080 + 493_440)));
    assert_eq!(h.l.stats().rate_decreases, 2);
}

#[test]
fn cnps_are_consumed_by_the_layer_and_never_reach_the_transport() {
    let mut h = stack();
    let mut out = Actions::default();
    h.on_message(SimTime::ZERO, &msg(4), &mut out);
    // A CNP frame for the live flow, and one for a message the host does not have.
    assert!(h.on_packet(SimTime(10), &cnp(3), &mut out));
    assert!(h.on_packet(SimTime(20), &cnp(9), &mut out));
    assert!(h.t.seen.is_empty(), "the transport heard of no CNP");
    let st = h.l.stats();
    assert_eq!((st.cnps_received, st.stale_cnps, st.rate_decreases), (1, 1, 1));
    // A CNP riding on an acknowledgement: the transport reads the acknowledgement, the
    // layer the CNP (a cut to 25 Gbps, α staying 1).
    let ack = Packet { kind: PktKind::Ack, msg: 3, msg_gen: 1, aux: wire::CNP_FLAG, ..Packet::default() };
    assert!(!h.on_packet(SimTime(30), &ack, &mut out));
    assert_eq!(h.t.seen, [PktKind::Ack]);
    assert_eq!(h.l.rate_of(3, 1).unwrap().0, 25_000_000_000);
    assert_eq!(h.l.stats().cnps_received, 2);
    // Once the transport reports the message finished, a CNP for it is stale.
    out.clear();
    out.finished.push((3, 1));
    h.l.on_actions(SimTime(40), &mut h.t, &mut out);
    assert!(h.l.rate_of(3, 1).is_none());
    assert!(h.on_packet(SimTime(50), &cnp(3), &mut out));
    assert_eq!(h.l.stats().stale_cnps, 2);
}

#[test]
fn bad_settings_name_the_field() {
    let net = NetworkConfig::default();
    let site = HostSite { host: 0, net: &net, host_rate: G100, link_rate: G100, field: "transport", seed: 1, paths: 1, base_rtt: Duration::ZERO };
    let bad = |c: DcqcnLayerConfig| Dcqcn::host(&c, &site).err().expect("refused").to_string();
    assert_eq!(
        bad(DcqcnLayerConfig { tx_pipeline_frames: Some(0), ..config() }),
        "transport: tx_pipeline_frames = 0; the NIC holds at least the frame it sends (1, or leave it unset to derive it from the send path)"
    );
    let slow = DcqcnParams { min_rate: BitsPerSec::gbps(200), ..params() };
    assert!(bad(DcqcnLayerConfig { params: slow, ..config() }).starts_with("transport: min_rate = 200000000000 bit/s is above the line rate"));
    let stuck = DcqcnParams { alpha_timer: Duration::ZERO, ..params() };
    assert!(bad(DcqcnLayerConfig { params: stuck, ..config() }).starts_with("transport: alpha_timer = 0"));
    assert!(Dcqcn::host(&config(), &site).is_ok());
}
