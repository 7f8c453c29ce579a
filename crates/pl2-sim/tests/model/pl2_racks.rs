//! PL2 across racks (§7, "Handling inter-rack traffic"): each ToR schedules its own
//! hosts' ports and its uplinks as one port; frames between racks cross the fabric
//! unscheduled and enter the destination rack into the share of its downlinks kept for
//! them. Hand-worked unloaded latency over two racks, conservation and losslessness of
//! a two-rack all-to-all at low load (every inter-rack frame counted leaving one ToR
//! and entering the other), determinism, and what uncoordinated external traffic does
//! to a downlink when it exceeds the share.

use super::common::*;
use pl2_sim::config::{CustomLink, LinkConfig, NetworkConfig, TopologyConfig};
use pl2_sim::dist::DelayDist;
use pl2_sim::metrics::DropReason;
use pl2_sim::sim::{PersistentSpec, SimSpec, TransportConfig};
use pl2_sim::transport::pl2::Pl2Config;
use pl2_sim::units::{BitsPerSec, Duration, SimTime};
use pl2_sim::workload::MessageSpec;

const SER: u64 = 123_360; // 1542 B at 100 Gbps
const CTL: u64 = 6_720; // a 64 B control frame on the wire (84 B) at 100 Gbps
const PROP: u64 = 100_000;

fn pl2(net: NetworkConfig, cfg: Pl2Config, msgs: Vec<MessageSpec>) -> SimSpec {
    let mut sp = spec(net, vec![list(msgs)]);
    sp.transport = TransportConfig::Pl2(cfg);
    sp
}

/// One host on each side of a 100G, 100 ns bottleneck: h0 on s0, h1 on s1.
fn two_racks_of_one() -> NetworkConfig {
    let mut net = NetworkConfig::default();
    net.topology = TopologyConfig::Dumbbell {
        hosts_per_side: 1,
        bottleneck: LinkConfig::default(),
    };
    net
}

/// A message to the other rack: the RSV–GRT exchange is with the sender's own ToR (the
/// uplink is free, chosen slot 0), then the burst crosses both switches unscheduled:
/// latency = ideal + one exchange, to the picosecond.
#[test]
fn a_burst_to_another_rack_is_booked_at_its_own_tor_and_crosses_the_fabric() {
    const SEND: u64 = 700_000;
    const RECV: u64 = 900_000;
    const LAT: u64 = 350_000;
    for packets in [1u64, 4] {
        let mut net = two_racks_of_one();
        net.host.send_latency = DelayDist::constant(Duration(SEND));
        net.host.recv_latency = DelayDist::constant(Duration(RECV));
        let mut sim = run(
            pl2(
                net,
                Pl2Config::default(),
                vec![msg(5_000, 0, 1, packets * 1500)],
            ),
            SimTime(u64::MAX / 2),
        );
        sim.finish();
        let recs = sim.drain_records();
        let r = &recs.messages[0];
        // Cut-through at both switches (all links 100G): the first bit crosses three
        // wires and two pipelines, the last frame's serialisation once.
        let ideal = SEND + 3 * PROP + 2 * LAT + packets * SER + RECV;
        assert_eq!(r.ideal.0, ideal);
        let exchange = SEND + PROP + LAT + CTL + PROP + RECV;
        assert_eq!(
            r.finish.unwrap().0 - r.start.0,
            ideal + exchange,
            "{packets} packets"
        );
        let st = sim.module_stats().pl2.unwrap();
        assert_eq!(
            (st.inter_rack_out_frames, st.inter_rack_in_frames),
            (packets, packets)
        );
        assert_eq!(st.switch.rsvs, 1, "one RSV, consumed by s0 only");
        assert_eq!(
            st.switch.data_packets, packets,
            "s1 never hands the frames to its scheduler"
        );
        assert_eq!(sim.counters().packets_consumed, 1);
    }
}

/// Two leaves of 4 hosts, two 100G spines (1:1): every host sends 10 KB messages to
/// every other at ~8% of its link for 200 µs (low-load optimisation off, so every frame
/// is scheduled and sent once). Lossless, every message delivered, packets conserved
/// (`run` checks), and every inter-rack frame counted once leaving its rack and once
/// entering the other: 7 frames a message (10,000 B in 1500 B payloads) × the messages
/// between racks. Two runs are identical.
#[test]
fn a_two_rack_all_to_all_at_low_load_is_lossless_and_conserves_frames() {
    let mut net = NetworkConfig::default();
    net.topology = TopologyConfig::LeafSpine {
        leaves: 2,
        spines: 2,
        hosts_per_leaf: 4,
        uplink: LinkConfig::default(),
    };
    net.host.threads = 4;
    let mut msgs = Vec::new();
    let mut remote = 0u64;
    for i in 0..1600u64 {
        let src = (i % 8) as u32;
        let dst = ((i / 8) % 7) as u32;
        let dst = if dst >= src { dst + 1 } else { dst };
        remote += u64::from(src / 4 != dst / 4);
        msgs.push(MessageSpec {
            time: SimTime(i * 125_000),
            src,
            dst,
            size: 10_000,
            thread: u16::MAX,
            priority: 0,
        });
    }
    let cfg = Pl2Config {
        low_load: false,
        ..Pl2Config::default()
    };
    let once = || {
        let mut sim = run(
            pl2(net.clone(), cfg.clone(), msgs.clone()),
            SimTime(u64::MAX / 2),
        );
        sim.finish();
        let c = sim.counters().clone();
        let st = sim.module_stats().pl2.unwrap();
        let fin: Vec<_> = sim
            .drain_records()
            .messages
            .iter()
            .map(|m| m.finish)
            .collect();
        (c, st, fin)
    };
    let (c, st, fin) = once();
    assert_eq!(c.total_drops(), 0);
    assert_eq!(c.messages_finished, 1600);
    assert_eq!(st.inter_rack_out_frames, 7 * remote);
    assert_eq!(st.inter_rack_in_frames, 7 * remote);
    assert_eq!(
        st.switch.data_packets,
        7 * 1600,
        "each frame scheduled once, at its own ToR"
    );
    assert_eq!(st.switch.decrement_saturations, 0);
    let (c2, st2, fin2) = once();
    assert_eq!((c2, st2, fin2), (c, st, fin), "same seed, same run");
}

/// External traffic beyond the share: h4–h7 (rack 1) and h1–h3 (rack 0) each send
/// persistent 6000 B streams (4 threads) to h0 over a 400G dumbbell. Rack 0's ToR
/// schedules its own senders into 90% of h0's downlink; rack 1's ToR books only its
/// uplink, so four hosts' bursts arrive at s0 uncoordinated, far beyond the 10% share:
/// h0's downlink queue fills the port and frames are dropped, the diagnosis naming the
/// external frames. With only local senders the same run is lossless.
#[test]
fn external_traffic_beyond_the_share_fills_the_destination_downlink() {
    let one = |remote: bool| {
        let mut net = NetworkConfig::default();
        net.topology = TopologyConfig::Dumbbell {
            hosts_per_side: 4,
            bottleneck: LinkConfig {
                rate: BitsPerSec::gbps(400),
                ..LinkConfig::default()
            },
        };
        net.host.threads = 4;
        let mut sp = pl2(
            net,
            Pl2Config {
                low_load: false,
                ..Pl2Config::default()
            },
            vec![],
        );
        let senders: Vec<u32> = if remote {
            vec![1, 2, 3, 4, 5, 6, 7]
        } else {
            vec![1, 2, 3]
        };
        sp.persistent = senders
            .iter()
            .flat_map(|&h| {
                (0..4u16).map(move |t| PersistentSpec {
                    host: h,
                    thread: t,
                    dst: 0,
                    size: 6000,
                    prio: 0,
                    start: SimTime(u64::from(h) * 10_007 + u64::from(t) * 3_001),
                    transport: 0,
                    workload: 0,
                    next: Default::default(),
                })
            })
            .collect();
        let sim = run(sp, SimTime(1_000_000_000));
        let q = sim.port_max_queue()[sim.host_downlink(0) as usize];
        let c = sim.counters().clone();
        let st = sim.module_stats().pl2.unwrap();
        println!(
            "remote senders {remote}: drops {}, h0 downlink max queue {q} B, external frames {}",
            c.total_drops(),
            st.inter_rack_in_frames
        );
        (sim, c, st, q)
    };
    let (_, c, st, q) = one(false);
    assert_eq!((c.total_drops(), st.inter_rack_in_frames), (0, 0));
    assert!(q < 64 * 1542, "local senders only: {q}");
    let (sim, c, st, q) = one(true);
    let lost = c.drops[DropReason::BufferFull as usize] + c.drops[DropReason::PortLimit as usize];
    assert!(
        lost > 0 && q > 1_000_000,
        "uncoordinated external bursts: drops {lost}, queue {q}"
    );
    assert!(st.inter_rack_in_frames > 0);
    let why = sim.module_stats().diagnose(sim.counters()).join(" ");
    assert!(why.contains("left their rack") && why.contains("external_share_ppm"), "{why}");
}

/// A custom graph's racks are its switches with hosts: the 400G dumbbell of 4 + 4 hosts
/// written as a custom graph runs the same PL2, message for message.
#[test]
fn a_custom_graph_of_the_dumbbells_shape_installs_the_same_racks() {
    let msgs: Vec<_> = (0..400u64)
        .map(|i| {
            let src = (i % 8) as u32;
            msg(i * 300_000, src, (src + 1 + (i / 8 % 7) as u32) % 8, 3000 + 1000 * (i % 5))
        })
        .collect();
    let records = |topology: TopologyConfig| {
        let mut net = NetworkConfig::default();
        net.topology = topology;
        net.host.threads = 2;
        let mut sim = run(pl2(net, Pl2Config::default(), msgs.clone()), SimTime(u64::MAX / 2));
        sim.finish();
        let st = sim.module_stats().pl2.unwrap();
        assert!(st.inter_rack_in_frames > 0);
        (sim.drain_records().messages, st)
    };
    let fast = LinkConfig { rate: BitsPerSec::gbps(400), ..LinkConfig::default() };
    let dumbbell = records(TopologyConfig::Dumbbell { hosts_per_side: 4, bottleneck: fast.clone() });
    let mut links: Vec<CustomLink> = (0..8).map(|h| CustomLink { a: format!("h{h}"), b: format!("s{}", h / 4), rate: None, delay: None }).collect();
    links.push(CustomLink { a: "s0".into(), b: "s1".into(), rate: Some(fast.rate), delay: Some(fast.delay) });
    let custom = records(TopologyConfig::Custom { hosts: 8, switches: 2, links });
    assert_eq!(custom, dumbbell);
}
