//! NDP: hand-worked timelines on an idle k = 4 fat tree set up as htsim's (10 Gb/s, 1 µs
//! links, store-and-forward, no switch latency, PPP framing with 64 B headers: 9064 B
//! data frames, 64 B control frames), exact to the picosecond; a trimmed packet recovered
//! through NACK and PULL, exact to the picosecond; a lost packet recovered by the
//! timeout; incasts into trimming queues (headers dropped or returned) and into drop-tail
//! buffers, every byte delivered once; determinism and the effect of the seed on path
//! choice.

use super::common::*;
use pl2_sim::config::{CustomLink, HeaderOverflow, NetworkConfig, QueueDiscipline, QueueLimit, TopologyConfig, TrimmingConfig};
use pl2_sim::dist::DelayDist;
use pl2_sim::framing::{Framing, LinkLayer};
use pl2_sim::metrics::{Records, TraceEvent};
use pl2_sim::sim::{FaultSpec, ProgressClock, SimSpec, Simulation, StopAt, TraceConfig, TransportConfig};
use pl2_sim::transport::ndp::{NdpConfig, NdpPaths, NdpPreset, NdpStats};
use pl2_sim::units::{BitsPerSec, Bytes, Duration, SimTime};
use pl2_sim::workload::MessageSpec;

const END: SimTime = SimTime(u64::MAX / 2);
/// A data frame, 9000 B payload + 62 B header + 2 B PPP = 9064 B, at 10 Gb/s (800 ps/B).
const SER: u64 = 7_251_200;
/// A 64 B control frame at 10 Gb/s.
const CTRL: u64 = 51_200;
const US: u64 = 1_000_000;
const MS: u64 = 1_000_000_000;
/// Inter-pod one way: 6 store-and-forward hops of serialisation + 1 µs.
const DATA_ONE_WAY: u64 = 6 * (SER + US);
const CTRL_ONE_WAY: u64 = 6 * (CTRL + US);
/// 30 packets of 9000 B (the NDP paper's 270 KB incast flows).
const SIZE: u64 = 270_000;

/// A k = 4 fat tree (16 hosts, 4 per pod) as htsim's `FatTreeTopology`.
fn fat_tree() -> NetworkConfig {
    let mut net = NetworkConfig {
        topology: TopologyConfig::FatTree { k: 4 },
        framing: Framing { vlan_tag: false, link: LinkLayer::Ppp },
        mtu: Bytes(9062),
        ..NetworkConfig::default()
    };
    net.link.rate = BitsPerSec::gbps(10);
    net.link.delay = Duration::from_us(1);
    net.switch.latency = DelayDist::Const { value: Duration::ZERO };
    net.switch.cut_through = false;
    net
}

fn htsim(iw: u32) -> NdpConfig {
    NdpConfig { header_bytes: 62, initial_window: Some(iw), ..NdpConfig::default() }
}

fn ndp(net: NetworkConfig, msgs: Vec<MessageSpec>, cfg: NdpConfig) -> SimSpec {
    let mut sp = spec(net, vec![list(msgs)]);
    sp.transport = TransportConfig::Ndp(cfg);
    sp
}

/// Runs until no event is left (not only until every message is delivered, so the
/// final ACKs reach their senders), checking frame conservation.
fn run_ndp(sp: SimSpec) -> (Simulation, Records, NdpStats) {
    let mut sim = Simulation::new(sp).expect("valid scenario");
    sim.run(StopAt { end: END, all_delivered: false, event_budget: None }, &mut ProgressClock::new(std::time::Duration::from_secs(3600)), &mut |_| true);
    assert_conserved(&sim);
    assert_eq!(sim.packets_in_flight(), 0, "nothing left in the network");
    sim.finish();
    let recs = sim.drain_records();
    let st = sim.module_stats().ndp.clone().unwrap_or_default();
    (sim, recs, st)
}

#[test]
fn one_inter_pod_message_matches_htsims_259_792_us() {
    // Host 0 (pod 0) to host 15 (pod 3), 30 packets, IW 23. The initial window leaves the
    // NIC back to back; the ACK of packet 0 (at the receiver at DATA_ONE_WAY = 49.5072 µs,
    // back at the sender CTRL_ONE_WAY = 6.3072 µs later) carries the first pull, and
    // pulls keep arriving before the NIC runs dry (pull 7 is back by 99.8 µs, the window
    // takes 23 SER = 166.8 µs to send), so the NIC never idles: packet 29's last bit
    // leaves at 30 SER = 217.536 µs and it reaches host 15 after 5 more store-and-forward
    // hops, 5 SER + 6 µs: 259.792 µs (notes §5.3; the paper's IW ≥ 10 row).
    let (_, recs, st) = run_ndp(ndp(fat_tree(), vec![msg(0, 0, 15, SIZE)], htsim(23)));
    all_delivered_once(&recs, 1);
    assert_eq!(took(&recs, 0), 30 * SER + 5 * SER + 6 * US);
    assert_eq!(took(&recs, 0), 259_792_000);
    // The pacer (modifier 0.99: a pull every 7,324,444 ps) is idle at the first ACK,
    // which carries pull 1; ACK k arrives at t0 + k SER, faster than the pacer, so the
    // other 29 pulls are queued: 28 leave by the last ACK (28 · 7,324,444 ≤ 29 SER <
    // 29 · 7,324,444) and the final one is flushed. The sender used 7 (packets 23..29) of
    // the 29 it got: 22 unused.
    assert_eq!((st.data_sent, st.acks_sent, st.nacks_sent, st.retransmissions_pulled + st.retransmissions_rto), (30, 30, 0, 0), "{st:?}");
    assert_eq!((st.pulls_piggybacked, st.pulls_sent, st.pulls_flushed, st.pull_credit_unused), (1, 28, 1, 22), "{st:?}");
    assert_eq!((st.messages_sent, st.messages_acked, st.messages_received), (1, 1, 1));
}

#[test]
fn at_modifier_one_every_ack_carries_its_pull() {
    // The paper's driver: drain = one data frame = SER, exactly the ACKs' spacing, so
    // each ACK finds a drain time passed and carries the pull; no PULL frame is sent.
    let cfg = NdpConfig { pull_rate_modifier: 1.0, ..htsim(23) };
    let (_, recs, st) = run_ndp(ndp(fat_tree(), vec![msg(0, 0, 15, SIZE)], cfg));
    assert_eq!(took(&recs, 0), 259_792_000);
    assert_eq!((st.pulls_piggybacked, st.pulls_sent, st.pull_credit_unused), (30, 0, 22), "{st:?}");
}

#[test]
fn initial_window_one_sends_one_packet_per_round_trip() {
    // Each packet waits for the previous one's ACK: RTT = 49.5072 + 6.3072 = 55.8144 µs;
    // the last arrives at 29 RTT + 49.5072 µs = 1668.1248 µs (the paper's IW 1 row,
    // 0.001668125 s).
    let (_, recs, st) = run_ndp(ndp(fat_tree(), vec![msg(0, 0, 15, SIZE)], htsim(1)));
    all_delivered_once(&recs, 1);
    assert_eq!(took(&recs, 0), 29 * (DATA_ONE_WAY + CTRL_ONE_WAY) + DATA_ONE_WAY);
    assert_eq!(took(&recs, 0), 1_668_124_800);
    assert_eq!((st.pulls_piggybacked, st.pulls_sent, st.pull_credit_unused), (30, 0, 0), "{st:?}");
}

/// Jacobson's estimator in integer ps over `samples` (htsim `processAck`).
fn jacobson(samples: impl Iterator<Item = u64>) -> u64 {
    let (mut srtt, mut mdev) = (0u64, 0u64);
    for m in samples {
        if srtt > 0 {
            mdev = 3 * mdev / 4 + m.abs_diff(srtt) / 4;
            srtt = 7 * srtt / 8 + m / 8;
        } else {
            (srtt, mdev) = (m, m / 2);
        }
    }
    srtt + 4 * mdev
}

#[test]
fn a_lost_last_packet_is_resent_by_the_timeout_exactly_when_due() {
    // Switch-chosen paths (one per message) so the fault can name the flow: message 0.
    // Packet 29 is lost on its first link. Modifier 1 (every ACK pulls) and a 1 ps floor
    // (the Jacobson estimate stands) make the RTO exact:
    // - packet p < 23 is handed over at 0 and ACKed back at (p+6) SER + 12.3072 µs;
    // - packet 23 + j is handed over when the ACK of packet j brings pull j + 1, at
    //   (j+6) SER + 12.3072 µs, and ACKed 23 SER later (it waits behind the window).
    // The last ACK (packet 28) sets the timeout to packet 29's clock (its serialisation
    // started at 29 SER) + the RTO over those 29 samples; the resend crosses in
    // DATA_ONE_WAY.
    let cfg = NdpConfig { paths: NdpPaths::PerFlow, pull_rate_modifier: 1.0, rto_min: Some(Duration(1)), ..htsim(23) };
    let mut sp = ndp(fat_tree(), vec![msg(0, 0, 15, SIZE)], cfg);
    sp.faults = vec![FaultSpec::DropNth { flow: 0, seq: 29, times: 1 }];
    let (sim, recs, st) = run_ndp(sp);
    assert_eq!(sim.counters().total_drops(), 1);
    all_delivered_once(&recs, 1);
    let samples = (0..29u64).map(|p| if p < 23 { (p + 6) * SER + 12 * US + 6 * CTRL } else { 23 * SER });
    let rto = jacobson(samples);
    assert_eq!(took(&recs, 0), 29 * SER + rto + DATA_ONE_WAY);
    assert_eq!((st.timeouts, st.retransmissions_rto, st.retransmissions_pulled), (1, 1, 0), "{st:?}");
}

#[test]
fn below_the_floor_the_timeout_falls_in_three_quarters_to_five_quarters_of_it() {
    // Default floor 5 ms, Polo's preset 1 ms: the same loss is resent at packet 29's clock
    // + U[0.75, 1.25] × floor.
    for (cfg, floor) in [(htsim(23), 5 * MS), (NdpConfig { preset: Some(NdpPreset::Polo), header_bytes: 62, ..NdpConfig::default() }, MS)] {
        let cfg = NdpConfig { paths: NdpPaths::PerFlow, ..cfg };
        let mut sp = ndp(fat_tree(), vec![msg(0, 0, 15, SIZE)], cfg);
        sp.faults = vec![FaultSpec::DropNth { flow: 0, seq: 29, times: 1 }];
        let (_, recs, st) = run_ndp(sp);
        all_delivered_once(&recs, 1);
        let t = took(&recs, 0) - 29 * SER - DATA_ONE_WAY;
        assert!((floor * 3 / 4..=floor * 5 / 4).contains(&t), "RTO {t} ps outside [0.75, 1.25] × {floor}");
        assert_eq!(st.retransmissions_rto, 1);
    }
}

fn incast(senders: u32, cfg: NdpConfig, seed: u64, port_limit: Option<Bytes>) -> (Simulation, Records, NdpStats) {
    let mut net = fat_tree();
    if let Some(l) = port_limit {
        net.switch.dynamic_thresholds = false;
        net.switch.port_limit = Some(l);
    }
    let msgs = (1..=senders).map(|s| msg(0, s, 0, SIZE)).collect();
    let mut sp = ndp(net, msgs, cfg);
    sp.seed = seed;
    run_ndp(sp)
}

#[test]
fn an_incast_into_deep_buffers_delivers_every_byte_once_without_loss() {
    let (sim, recs, st) = incast(15, htsim(23), 1, None);
    all_delivered_once(&recs, 15);
    assert_eq!(sim.counters().total_drops(), 0);
    assert_eq!(st.data_sent, 15 * 30);
    assert_eq!((st.retransmissions_pulled, st.retransmissions_rto, st.duplicates), (0, 0, 0), "{st:?}");
    // One ACK per data packet; every pull is either carried by an ACK, sent, or flushed.
    assert_eq!(st.acks_sent, 15 * 30);
    assert_eq!(st.pulls_piggybacked + st.pulls_sent + st.pulls_flushed, st.acks_sent);
    // The receiver's downlink is the bottleneck: the last byte cannot arrive before 450
    // frames have crossed it.
    let last = recs.messages.iter().map(|m| m.finish.unwrap().0).max().unwrap();
    assert!(last >= 450 * SER, "{last}");
}

#[test]
fn a_drop_tail_incast_hangs_as_in_htsim_unless_timed_out_resends_can_time_out_again() {
    // Without a trimming queue a full port drops NDP's data (345 initial-window packets
    // into 8 frames of queue), and only the timeout recovers it. htsim resends each packet
    // once per timeout and never times it out again (`ndp.cpp:1123`): here most resends
    // meet the same full queue, so flows hang, as they would in htsim built with
    // RESEND_ON_TIMEOUT and drop-tail queues.
    let (sim, recs, st) = incast(15, htsim(23), 1, Some(Bytes(8 * 9064)));
    assert!(sim.counters().total_drops() > 0, "the initial windows overflow 8 frames");
    assert!(st.retransmissions_rto > 0 && st.messages_received < 15, "{st:?}");
    assert!(recs.messages.iter().any(|m| m.finish.is_none()));
    // With `rto_rearm` a lost resend times out again, and every byte arrives once.
    let (sim, recs, st) = incast(15, NdpConfig { rto_rearm: true, ..htsim(23) }, 1, Some(Bytes(8 * 9064)));
    all_delivered_once(&recs, 15);
    assert!(sim.counters().total_drops() > 0);
    assert_eq!((st.messages_received, st.messages_acked, st.data_sent), (15, 15, 450), "{st:?}");
    assert!(st.retransmissions_rto >= sim.counters().total_drops(), "every drop resent: {st:?}");
}

fn data_paths(seed: u64) -> (Vec<u32>, String) {
    let mut sp = ndp(fat_tree(), vec![msg(0, 4, 1, SIZE), msg(0, 8, 2, SIZE), msg(0, 12, 3, SIZE)], htsim(23));
    sp.seed = seed;
    sp.metrics.trace = Some(TraceConfig { nodes: vec!["h4".into()], ..TraceConfig::default() });
    let (sim, mut recs, st) = run_ndp(sp);
    let paths = recs.trace.iter().filter(|r| r.event == TraceEvent::Tx && r.packet.payload > 0).map(|r| r.packet.flow).collect();
    recs.trace.clear();
    (paths, format!("{:?}{:?}{:?}{:?}", recs.messages, recs.goodput, sim.counters(), st))
}

#[test]
fn same_seed_same_results_and_the_seed_moves_the_path_choice() {
    let (p7, r7) = data_paths(7);
    let (p7b, r7b) = data_paths(7);
    assert_eq!((&p7, &r7), (&p7b, &r7b));
    assert_eq!(p7.len(), 30);
    assert!(p7.iter().all(|&p| p < 4), "(k/2)² = 4 path numbers: {p7:?}");
    let (p8, _) = data_paths(8);
    assert_ne!(p7, p8, "another seed, another permutation");
}

#[test]
fn invalid_configuration_is_rejected_with_its_field() {
    for cfg in [
        NdpConfig { data_priority: 8, ..NdpConfig::default() },
        NdpConfig { control_priority: Some(0), ..NdpConfig::default() },
        NdpConfig { initial_window: Some(0), ..NdpConfig::default() },
        NdpConfig { pull_rate_modifier: -1.0, ..NdpConfig::default() },
        NdpConfig { rto_min: Some(Duration(0)), ..NdpConfig::default() },
        NdpConfig { header_bytes: 9062, ..NdpConfig::default() },
    ] {
        let err = Simulation::new(ndp(fat_tree(), vec![msg(0, 0, 1, 1)], cfg.clone())).err();
        let text = format!("{:?}", err.expect("rejected"));
        assert!(text.contains("transport"), "{cfg:?}: {text}");
    }
}


/// A trimming queue on every switch port (htsim's `CompositeQueue`): `data` per data FIFO,
/// headers at priority 7.
fn trimming(data: QueueLimit, header: Option<QueueLimit>, trim_newest: f64, overflow: HeaderOverflow) -> QueueDiscipline {
    QueueDiscipline::Trimming(TrimmingConfig { data_limit: data, header_limit: header, header_prio: 7, trim_newest_probability: trim_newest, header_overflow: overflow })
}

#[test]
fn a_trimmed_packet_is_nacked_and_resent_on_the_next_pull() {
    // h0 —10G— s0 —4G— s1 —10G— h1, 1 µs links, every data FIFO 2 frames (counting the
    // one on the wire), the arriving frame always the one trimmed. Message of 4 packets,
    // IW 3. With S = 7,251,200 (a data frame at 10G), S4 = 2.5 S = 18,128,000 (at 4G),
    // C = 51,200 and C4 = 128,000 (a control frame at 10G, 4G), d = 1 µs:
    // - p0, p1, p2 reach s0 at S + d, 2S + d, 3S + d. p0 is on the 4G wire until
    //   3.5 S + d, p1 waits, p2 finds 2 frames: trimmed. Its header goes next (priority),
    //   then p1.
    // - p0 reaches h1 at R0 = 4.5 S + 3d: the pacer is idle, its ACK carries pull 1. The
    //   header follows C later: NACK, its PULL queued for R0 + D (D = 7,324,444, one data
    //   frame at 10G / 0.99).
    // - ACK 0 reaches h0 at A0 = R0 + 2C + C4 + 3d: pull 1 sends the new p3, which holds
    //   the 4G link from A0 + S + d for S4. The NACK arrives with no credit left: p2 waits.
    // - PULL 2 reaches h0 at R0 + D + 2C + C4 + 3d = A0 + D: p2 goes, reaches s0 while p3
    //   is still on the 4G link (D < S4), waits behind it (2 frames: no trim), follows it
    //   onto the 4G link, then s1 → h1: done at A0 + S + d + 2 S4 + d + S + d.
    let mut net = NetworkConfig::default();
    let link = |a: &str, b: &str, g: u64| CustomLink { a: a.into(), b: b.into(), rate: Some(BitsPerSec::gbps(g)), delay: Some(Duration::from_us(1)) };
    net.topology = TopologyConfig::Custom { hosts: 2, switches: 2, links: vec![link("h0", "s0", 10), link("s0", "s1", 4), link("s1", "h1", 10)] };
    net.link.rate = BitsPerSec::gbps(10);
    net.switch.latency = DelayDist::Const { value: Duration::ZERO };
    net.switch.cut_through = false;
    net.switch.queue = trimming(QueueLimit::Frames(2), None, 0.0, HeaderOverflow::Drop);
    net.framing = Framing { vlan_tag: false, link: LinkLayer::Ppp };
    net.mtu = Bytes(9062);
    let (sim, recs, st) = run_ndp(ndp(net, vec![msg(0, 0, 1, 4 * 9000)], htsim(3)));
    all_delivered_once(&recs, 1);
    let (s4, c4) = (18_128_000, 128_000);
    let a0 = 4 * SER + SER / 2 + 3 * US + 2 * CTRL + c4 + 3 * US;
    assert_eq!(took(&recs, 0), a0 + SER + US + 2 * s4 + US + SER + US);
    assert_eq!(took(&recs, 0), 92_619_200);
    assert_eq!((sim.counters().trims, sim.counters().total_drops()), (1, 0));
    assert_eq!((st.trimmed_received, st.nacks_sent, st.nacks_received, st.retransmissions_pulled), (1, 1, 1, 1), "{st:?}");
    // Pulls: ACKs 0, 1, 3 and the final ACK 2 find the pacer idle a drain after the last
    // pull and carry theirs; the NACK's is the one PULL frame. The sender used pulls 1
    // and 2 and held 3 and 4 (the final ACK's pull 5 is never read).
    assert_eq!((st.pulls_piggybacked, st.pulls_sent, st.pull_credit_unused, st.data_sent), (4, 1, 2, 4), "{st:?}");
}

fn trimming_incast(senders: u32, queue: QueueDiscipline, cfg: NdpConfig) -> (Simulation, Records, NdpStats) {
    let mut net = fat_tree();
    net.switch.queue = queue;
    let msgs = (16 - senders..16).map(|s| msg(0, s, 0, SIZE)).collect();
    run_ndp(ndp(net, msgs, cfg))
}

#[test]
fn an_incast_into_htsims_trimming_queues_delivers_every_byte_once() {
    // htsim's -q 8: 72000 B data FIFOs (7 frames of 9064 B), headers up to 144000 B.
    // 12 senders in pods 1-3 (every path crosses the core) start 23 packets each at once.
    let q8 = trimming(QueueLimit::Bytes(Bytes(72_000)), None, 0.5, HeaderOverflow::Drop);
    let (sim, recs, st) = trimming_incast(12, q8, htsim(23));
    all_delivered_once(&recs, 12);
    let c = sim.counters();
    assert!(c.trims > 100, "12 × 23 packets into a 7-frame FIFO: {c:?}");
    assert_eq!(c.total_drops(), 0, "144000 B of header queue holds every header");
    // Every trimmed header reached the receiver and was NACKed; every NACK brought a resend
    // on a pull (no timeout: nothing was lost), and the receiver saw each packet once.
    assert_eq!((st.trimmed_received, st.nacks_sent), (c.trims, c.trims), "{st:?}");
    assert_eq!((st.retransmissions_pulled, st.retransmissions_rto, st.timeouts), (c.trims, 0, 0), "{st:?}");
    assert_eq!((st.data_sent, st.duplicates, st.acks_sent), (12 * 30, 0, 12 * 30), "{st:?}");
    // Every data packet and header pulled once: carried, sent or flushed.
    assert_eq!(st.pulls_piggybacked + st.pulls_sent + st.pulls_flushed, st.acks_sent + st.nacks_sent);
    // The receiver's link carries 360 data frames and the headers: nothing finishes before.
    let last = recs.messages.iter().map(|m| m.finish.unwrap().0).max().unwrap();
    assert!(last >= 360 * SER, "{last}");
}

#[test]
fn headers_over_a_full_header_queue_are_recovered_by_return_to_sender_or_the_timeout() {
    // A header FIFO of 256 B (4 headers of 64 B) and 1-frame data FIFOs: the initial
    // windows of 15 senders overflow it on the way to the receiver. Timed-out resends may
    // time out again (`rto_rearm`), since a resend can meet a full queue too.
    let tiny = |overflow| trimming(QueueLimit::Frames(1), Some(QueueLimit::Bytes(Bytes(4 * 64))), 0.5, overflow);
    let (sim, recs, st) = trimming_incast(15, tiny(HeaderOverflow::ReturnToSender), NdpConfig { rto_rearm: true, ..htsim(23) });
    all_delivered_once(&recs, 15);
    assert!(sim.counters().headers_returned > 0 && st.headers_returned == sim.counters().headers_returned, "{st:?}");
    assert!(st.retransmissions_returned + st.retransmissions_pulled > 0, "{st:?}");
    let (sim, recs, st) = trimming_incast(15, tiny(HeaderOverflow::Drop), NdpConfig { rto_rearm: true, ..htsim(23) });
    all_delivered_once(&recs, 15);
    assert!(sim.counters().total_drops() > 0 && st.retransmissions_rto > 0, "{st:?}");
}
