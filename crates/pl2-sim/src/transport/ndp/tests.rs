//! The sans-IO state machines fed by hand: pull-number credit, NACK then PULL, the
//! timeout, the pacer's spacing, ACK paths and delivery. Expected values are worked out
//! in the comments from htsim's rules, never read back from the code.

use super::wire::{decode, encode_ctl, CtlHdr, CtlKind, Frame, Msg};
use super::*;
use crate::config::NetworkConfig;
use crate::framing::{Framing, LinkLayer};
use crate::packet::{PktKind, SendSpec};
use crate::units::Bytes;

const PPP: Framing = Framing { vlan_tag: false, link: LinkLayer::Ppp };
/// One full data frame (9000 B payload + 62 B header + 2 B PPP) at 10 Gb/s: 9064 · 800 ps.
const SER: u64 = 7_251_200;
const M: Msg = Msg { slot: 4, gen: 9 };

fn host_with(cfg: NdpConfig, h: u32, paths: u32) -> Box<NdpHost> {
    let net = NetworkConfig { framing: PPP, mtu: Bytes(9062), ..NetworkConfig::default() };
    let site = HostSite { host: h, net: &net, host_rate: BitsPerSec::gbps(10), link_rate: BitsPerSec::gbps(10), field: "transport", seed: 1, paths, base_rtt: crate::units::Duration::from_us(10) };
    Ndp::host(&cfg, &site).unwrap()
}

fn htsim(iw: u32) -> NdpConfig {
    NdpConfig { header_bytes: 62, initial_window: Some(iw), pull_rate_modifier: 1.0, ..NdpConfig::default() }
}

fn message(size: u64) -> MsgInfo {
    MsgInfo { slot: M.slot, gen: M.gen, id: 77, src: 0, dst: 1, size, thread: 0, prio: 0, start: SimTime::ZERO }
}

fn t(ps: u64) -> SimTime {
    SimTime(ps)
}

/// Data frames' packet indices among `out.sends`, with whether each is a resend.
fn data(out: &Actions) -> Vec<(u32, bool)> {
    out.sends
        .iter()
        .filter(|s| s.kind == PktKind::Data)
        .map(|s| (s.seq, s.proto & crate::packet::proto::RETX != 0))
        .collect()
}

fn ctl(kind: CtlKind, index: u32, pull_no: u32, cum: u32, pull: bool) -> Packet {
    let c = CtlHdr { kind, msg: M, index, pull_no, cum, pull, tag: 0 };
    encode_ctl(0, 0, &c, &wire::Stamp { l4: L4Headers::None, data: 0, control: 7 }, 0).to_packet(1, SimTime::ZERO, PPP)
}

fn feed(h: &mut NdpHost, now: u64, p: &Packet) -> Actions {
    let mut out = Actions::default();
    h.on_packet(t(now), p, &HostView::default(), &mut out);
    out
}

fn as_packet(s: &SendSpec, src: u32) -> Packet {
    s.to_packet(src, SimTime::ZERO, PPP)
}

#[test]
fn the_initial_window_goes_at_once_and_the_thread_is_released() {
    let mut h = host_with(htsim(23), 0, 1);
    let mut out = Actions::default();
    h.on_message(t(0), &message(30 * 9000), &mut out);
    assert_eq!(data(&out), (0..23).map(|i| (i, false)).collect::<Vec<_>>());
    assert_eq!(out.released, vec![0]);
    let s = &out.sends[0];
    assert_eq!((s.payload, s.prio, s.flags & crate::packet::flags::TRIMMABLE != 0), (9000, 0, true));
    // A message smaller than the window sends what it has; the last frame carries the rest.
    let mut h = host_with(htsim(23), 0, 1);
    let mut out = Actions::default();
    h.on_message(t(0), &message(2 * 9000 + 1), &mut out);
    assert_eq!(out.sends.iter().map(|s| s.payload).collect::<Vec<_>>(), vec![9000, 9000, 1]);
}

#[test]
fn pull_numbers_are_cumulative_and_unused_credit_is_kept() {
    let mut h = host_with(htsim(23), 0, 1);
    h.on_message(t(0), &message(30 * 9000), &mut Actions::default());
    // ACK of packet 0 with pull number 1: one new packet, 23.
    assert_eq!(data(&feed(&mut h, 100, &ctl(CtlKind::Ack, 0, 1, 1, true))), vec![(23, false)]);
    // The same pull number again (a reordered or duplicated pull) sends nothing.
    assert!(data(&feed(&mut h, 101, &ctl(CtlKind::Pull, 0, 1, 1, true))).is_empty());
    // An ACK without the pull bit sends nothing, whatever pull number it carries.
    assert!(data(&feed(&mut h, 102, &ctl(CtlKind::Ack, 1, 9, 2, false))).is_empty());
    // PULL 3 skips over the lost pull 2: two packets, 24 and 25.
    assert_eq!(data(&feed(&mut h, 103, &ctl(CtlKind::Pull, 2, 3, 2, true))), vec![(24, false), (25, false)]);
    // A late PULL 2 sends nothing.
    assert!(data(&feed(&mut h, 104, &ctl(CtlKind::Pull, 1, 2, 2, true))).is_empty());
    // PULL 10 allows 7 more, but only 26..29 remain: 3 pulls of credit stay.
    assert_eq!(data(&feed(&mut h, 105, &ctl(CtlKind::Pull, 3, 10, 2, true))), (26..30).map(|i| (i, false)).collect::<Vec<_>>());
    // A NACK without a pull uses the kept credit at once (htsim af57f45).
    assert_eq!(data(&feed(&mut h, 106, &ctl(CtlKind::Nack, 5, 0, 2, false))), vec![(5, true)]);
    // The final cumulative ACK ends the flow: 2 of the 10 pulls were never used.
    feed(&mut h, 107, &ctl(CtlKind::Ack, 29, 0, 30, false));
    let st = h.stats();
    assert_eq!((st.data_sent, st.retransmissions_pulled, st.messages_acked, st.pull_credit_unused), (30, 1, 1, 2), "{st:?}");
    assert_eq!(h.unacknowledged(), 0);
    // Anything later is stale.
    feed(&mut h, 108, &ctl(CtlKind::Pull, 3, 11, 30, true));
    assert_eq!(h.stats().stale_control, 1);
}

#[test]
fn a_nack_queues_the_resend_for_the_next_pull_lowest_sequence_first() {
    let mut h = host_with(htsim(23), 0, 1);
    h.on_message(t(0), &message(30 * 9000), &mut Actions::default());
    // NACKs for 9 then 4, no pull bit, no credit: nothing goes yet.
    assert!(data(&feed(&mut h, 10, &ctl(CtlKind::Nack, 9, 0, 0, false))).is_empty());
    assert!(data(&feed(&mut h, 11, &ctl(CtlKind::Nack, 4, 0, 0, false))).is_empty());
    // A second NACK of 9 does not queue it twice.
    assert!(data(&feed(&mut h, 12, &ctl(CtlKind::Nack, 9, 0, 0, false))).is_empty());
    // Each PULL takes the lowest queued resend, then new data.
    assert_eq!(data(&feed(&mut h, 20, &ctl(CtlKind::Pull, 0, 1, 0, true))), vec![(4, true)]);
    assert_eq!(data(&feed(&mut h, 21, &ctl(CtlKind::Pull, 0, 2, 0, true))), vec![(9, true)]);
    assert_eq!(data(&feed(&mut h, 22, &ctl(CtlKind::Pull, 0, 3, 0, true))), vec![(23, false)]);
    // A NACK carrying the pull sends its own resend at once.
    assert_eq!(data(&feed(&mut h, 23, &ctl(CtlKind::Nack, 7, 4, 0, true))), vec![(7, true)]);
    assert_eq!(h.stats().retransmissions_pulled, 3);
}

#[test]
fn the_timeout_resends_every_overdue_packet_once_in_sequence_order() {
    let mut h = host_with(htsim(3), 0, 1);
    let mut out = Actions::default();
    h.on_message(t(0), &message(3 * 9000), &mut out);
    // No ACK yet: the timeout is the first send + the initial 20 ms (ndp.cpp:85).
    let ms20 = 20_000_000_000;
    assert_eq!(out.timers.last(), Some(&(1, Some(t(ms20)))));
    // The NIC starts packet 1 at SER and packet 2 at 2 SER (back to back from 0).
    for (i, s) in out.sends.iter().enumerate() {
        let mut o = Actions::default();
        h.on_tx_done(t((i as u64 + 1) * SER), &as_packet(s, 0), &mut o);
    }
    // Packet 1 is NACKed (no longer outstanding, and no pull to resend it): only 0 and 2
    // can time out. No ACK arrives; the timer fires at 20 ms: only packet 0 (clock 0) is
    // overdue, packet 2's clock is 2 SER.
    feed(&mut h, 1000, &ctl(CtlKind::Nack, 1, 0, 0, false));
    let mut out = Actions::default();
    h.on_timer(t(ms20), 1, &mut out);
    assert_eq!(data(&out), vec![(0, true)]);
    // htsim's update_rtx_time: the earliest outstanding clock is packet 2's, 2 SER.
    assert_eq!(out.timers.last(), Some(&(1, Some(t(2 * SER + ms20)))));
    let mut out = Actions::default();
    h.on_timer(t(2 * SER + ms20), 1, &mut out);
    assert_eq!(data(&out), vec![(2, true)]);
    // Both resent once and never again (not put back among the outstanding packets).
    assert_eq!(out.timers.last(), Some(&(1, None)));
    assert_eq!((h.stats().timeouts, h.stats().retransmissions_rto), (2, 2));
}

#[test]
fn every_ack_redraws_the_timeout_around_the_floor() {
    // Floor 5 ms: a 10 µs RTT puts Jacobson far below it, so each ACK sets the timeout to
    // the earliest outstanding clock + U[0.75, 1.25] · 5 ms.
    let mut h = host_with(htsim(23), 0, 1);
    h.on_message(t(0), &message(100 * 9000), &mut Actions::default());
    let mut seen = Vec::new();
    for i in 0..22u32 {
        let out = feed(&mut h, 10_000_000, &ctl(CtlKind::Ack, i, 0, i + 1, false));
        // Packets i+1.. are outstanding with clock 0 (no tx-done reported).
        let (_, at) = *out.timers.last().unwrap();
        let at = at.unwrap().0;
        assert!((3_750_000_000..=6_250_000_000).contains(&at), "{at}");
        seen.push(at);
    }
    seen.dedup();
    assert!(seen.len() > 15, "redrawn on every ACK: {seen:?}");
}

/// Data frame `i` of message `M` (30 packets) from host 0.
fn data_in(i: u32, trimmed: bool) -> Packet {
    let d = wire::DataHdr { msg: M, index: i, size: 30 * 9000, prio: 0, tag: 0, resent: false };
    let mut p = wire::encode_data(1, 0, &d, 9000, &wire::Stamp { l4: L4Headers::Bytes { bytes: 62 }, data: 0, control: 7 }, 0).to_packet(0, SimTime::ZERO, PPP);
    if trimmed {
        p.payload = 0;
        p.flags |= crate::packet::flags::TRIMMED;
    }
    p
}

/// The receiver's control frames: (kind, index, pull number, cumulative ack, pull bit).
fn ctls(out: &Actions) -> Vec<(CtlKind, u32, u32, u32, bool)> {
    out.sends
        .iter()
        .map(|s| match decode(&as_packet(s, 1)) {
            Some(Frame::Ctl(c)) => (c.kind, c.index, c.pull_no, c.cum, c.pull),
            f => panic!("{f:?}"),
        })
        .collect()
}

#[test]
fn the_pacer_spaces_pulls_by_one_data_frame_at_the_link_rate() {
    use CtlKind::*;
    // Modifier 1, 10 Gb/s, 9064 B frames: drain = 9064 · 8 / 10^10 s = 7,251,200 ps.
    let mut h = host_with(htsim(23), 1, 1);
    assert_eq!(h.pull_drain(), Duration(SER));
    // t = 10 µs ≥ drain since the last pull (t = 0): the ACK carries the pull, number 1.
    let t0 = 10_000_000;
    assert_eq!(ctls(&feed(&mut h, t0, &data_in(0, false))), vec![(Ack, 0, 1, 1, true)]);
    // Packets 1 and 3 (2 lost) arrive within the drain: ACKs without the pull, PULLs
    // queued, the pacer's timer at t0 + drain.
    let out = feed(&mut h, t0 + 1, &data_in(1, false));
    assert_eq!(ctls(&out), vec![(Ack, 1, 0, 2, false)]);
    assert_eq!(out.timers, vec![(0, Some(t(t0 + SER)))]);
    assert_eq!(ctls(&feed(&mut h, t0 + 2, &data_in(3, false))), vec![(Ack, 3, 0, 2, false)]);
    // A header: NACKed; its pull number counts it (4).
    assert_eq!(ctls(&feed(&mut h, t0 + 3, &data_in(2, true))), vec![(Nack, 2, 0, 2, false)]);
    // The pacer releases the queued PULLs, one per drain, in order: pull numbers 2, 3, 4.
    for (k, pull_no) in [(1u64, 2u32), (2, 3), (3, 4)] {
        let mut out = Actions::default();
        h.on_timer(t(t0 + k * SER), 0, &mut out);
        let c = ctls(&out);
        assert_eq!((c[0].0, c[0].2), (Pull, pull_no));
        let next = if k < 3 { vec![(0, Some(t(t0 + (k + 1) * SER)))] } else { vec![] };
        assert_eq!(out.timers, next, "re-armed while PULLs remain");
    }
    // Half a drain later a data packet's ACK must still wait (queue empty, too early):
    // its PULL is queued and the timer set a full drain after the last pull.
    let out = feed(&mut h, t0 + 3 * SER + SER / 2, &data_in(2, false));
    assert_eq!(ctls(&out), vec![(Ack, 2, 0, 4, false)]);
    assert_eq!(out.timers, vec![(0, Some(t(t0 + 4 * SER)))]);
    let st = h.stats();
    assert_eq!((st.acks_sent, st.nacks_sent, st.pulls_sent, st.pulls_piggybacked, st.trimmed_received), (4, 1, 3, 1, 1), "{st:?}");
}

#[test]
fn the_last_packet_delivers_once_and_flushes_queued_pulls() {
    let mut h = host_with(htsim(23), 1, 1);
    let t0 = 10_000_000;
    for i in 0..29 {
        feed(&mut h, t0 + u64::from(i), &data_in(i, false));
    }
    // 1 piggybacked pull, 28 queued; the 30th packet completes the message: its ACK
    // carries cum 30 and pull number 30, and all 29 queued PULLs are discarded.
    let out = feed(&mut h, t0 + 100, &data_in(29, false));
    assert_eq!(ctls(&out), vec![(CtlKind::Ack, 29, 0, 30, false)]);
    assert_eq!(out.delivered, vec![(M.slot, M.gen)]);
    assert_eq!(out.goodput_bytes, 9000);
    assert_eq!((h.stats().pulls_flushed, h.stats().messages_received), (29, 1));
    // The pacer has nothing left.
    let mut o = Actions::default();
    h.on_timer(t(t0 + SER), 0, &mut o);
    assert!(o.sends.is_empty());
    // A duplicate after delivery: ACKed with the full cumulative ack, no pull, not
    // delivered again, no goodput.
    let out = feed(&mut h, t0 + 2 * SER, &data_in(3, false));
    assert_eq!(ctls(&out), vec![(CtlKind::Ack, 3, 0, 30, false)]);
    assert!(out.delivered.is_empty() && out.goodput_bytes == 0);
    assert_eq!(h.stats().duplicates, 1);
}

#[test]
fn duplicates_are_acked_and_still_pull() {
    let mut h = host_with(htsim(23), 1, 1);
    let t0 = 10_000_000;
    feed(&mut h, t0, &data_in(0, false));
    // The same packet 2 drains later (pacer idle, drain passed): ACK with the pull,
    // pull number 2 though only one packet is new.
    let out = feed(&mut h, t0 + 2 * SER, &data_in(0, false));
    assert_eq!(ctls(&out), vec![(CtlKind::Ack, 0, 2, 1, true)]);
    assert_eq!((h.stats().duplicates, out.goodput_bytes), (1, 0));
}

#[test]
fn new_packets_spray_a_fresh_permutation_of_every_path() {
    // 8 paths, IW 23: the first 7 packets take slots 1..7 of the first permutation, then
    // each run of 8 covers all 8 paths once.
    let mut h = host_with(htsim(23), 0, 8);
    let mut out = Actions::default();
    h.on_message(t(0), &message(30 * 9000), &mut out);
    let paths: Vec<u32> = out.sends.iter().map(|s| s.flow).collect();
    assert!(paths.iter().all(|&p| p < 8));
    let mut first: Vec<u32> = paths[..7].to_vec();
    first.sort_unstable();
    first.dedup();
    assert_eq!(first.len(), 7, "7 distinct paths: {paths:?}");
    for c in paths[7..23].chunks(8) {
        let mut c = c.to_vec();
        c.sort_unstable();
        assert_eq!(c, (0..8).collect::<Vec<_>>(), "{paths:?}");
    }
    // Switch-chosen paths: every frame carries the message id for the switches' hash.
    let mut h = host_with(NdpConfig { paths: NdpPaths::PerFlow, ..htsim(23) }, 0, 8);
    let mut out = Actions::default();
    h.on_message(t(0), &message(3 * 9000), &mut out);
    assert!(out.sends.iter().all(|s| s.flow == 77));
}

/// A returned header of packet `i` of message `M` (at its sender, host 0).
fn returned(i: u32) -> Packet {
    let mut p = data_in(i, true);
    p.flags |= crate::packet::flags::RETURNED;
    std::mem::swap(&mut p.src, &mut p.dst);
    p
}

#[test]
fn a_returned_header_waits_for_a_pull_unless_none_is_coming_or_the_path_looks_bad() {
    let mut h = host_with(htsim(3), 0, 1);
    h.on_message(t(0), &message(3 * 9000), &mut Actions::default());
    // Two initial-window packets still unanswered after this return (3 − 1 = 2 > 1) and
    // no ACK in the history: swallowed, queued for a pull.
    assert!(data(&feed(&mut h, 10, &returned(1))).is_empty());
    // An ACK without a pull: one pull now expected, one window packet unanswered.
    feed(&mut h, 20, &ctl(CtlKind::Ack, 0, 0, 1, false));
    // Packet 2 returned: a pull is expected, but the history (return, ACK, return) is 1/3
    // ACKs ≥ 25 %: a bad path, resend at once: the lowest queued, packet 1.
    assert_eq!(data(&feed(&mut h, 30, &returned(2))), vec![(1, true)]);
    // The next PULL takes packet 2.
    assert_eq!(data(&feed(&mut h, 40, &ctl(CtlKind::Pull, 0, 1, 1, true))), vec![(2, true)]);
    let st = h.stats();
    assert_eq!((st.headers_returned, st.retransmissions_returned, st.retransmissions_pulled), (2, 1, 1), "{st:?}");
}
