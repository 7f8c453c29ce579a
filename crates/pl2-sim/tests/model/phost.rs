//! pHost: hand-worked timelines (exact to the picosecond) on an idle 10 Gbps switch with
//! YAPS's packet sizes (1500 B data, 40 B control, PPP framing), for one short and one
//! long message, the Polo preset's free packets, two competing messages, a lost data
//! packet (re-granted after the resend timeout) and a lost RTS (our RTS timeout);
//! conservation of bytes, counters, and determinism under spraying.

use super::common::*;
use pl2_sim::config::{CustomLink, LinkConfig, NetworkConfig, TopologyConfig};
use pl2_sim::framing::{Framing, L4Headers, LinkLayer};
use pl2_sim::metrics::Records;
use pl2_sim::sim::{FaultSpec, ProgressClock, SimSpec, Simulation, StopAt, TransportConfig};
use pl2_sim::transport::phost::{FreeTokens, PhostConfig, PhostPreset, PhostStats, TokenScheduling};
use pl2_sim::units::{BitsPerSec, Bytes, Duration, SimTime};
use pl2_sim::workload::MessageSpec;

const END: SimTime = SimTime(u64::MAX / 2);
/// A full data frame (1460 B payload + 40 B header) at 10 Gbps.
const D: u64 = 1_200_000;
/// A control frame (40 B) at 10 Gbps.
const C: u64 = 32_000;
/// Propagation delay of every link.
const P: u64 = 200_000;
const MSS: u64 = 1460;

/// `hosts` hosts on one store-and-forward switch with no pipeline latency, 10 Gbps links
/// of 200 ns, and YAPS's frame sizes: PPP framing (2 B) + 38 B of headers = 40 B per
/// packet, MTU 1498 so a full frame carries 1460 B.
fn star(hosts: u32) -> NetworkConfig {
    let mut net = NetworkConfig::default();
    let links = (0..hosts).map(|h| CustomLink { a: format!("h{h}"), b: "s0".into(), rate: None, delay: None }).collect();
    net.topology = TopologyConfig::Custom { hosts, switches: 1, links };
    net.link = LinkConfig { rate: BitsPerSec::gbps(10), delay: Duration(P), ..LinkConfig::default() };
    net.switch.cut_through = false;
    net.switch.latency = pl2_sim::dist::DelayDist::constant(Duration::ZERO);
    net.framing = Framing { vlan_tag: false, link: LinkLayer::Ppp };
    net.mtu = Bytes(1498);
    net
}

fn yaps() -> PhostConfig {
    PhostConfig { headers: L4Headers::Bytes { bytes: 38 }, ..PhostConfig::default() }
}

fn phost(net: NetworkConfig, msgs: Vec<MessageSpec>, cfg: PhostConfig) -> SimSpec {
    let mut sp = spec(net, vec![list(msgs)]);
    sp.transport = TransportConfig::Phost(cfg);
    sp
}

/// Runs until nothing is left to happen (the ACKs too: `run` stops at the last delivery).
fn run_phost(sp: SimSpec) -> (Simulation, Records, PhostStats) {
    let mut sim = Simulation::new(sp).expect("valid scenario");
    sim.run(StopAt { end: END, all_delivered: false, event_budget: None }, &mut ProgressClock::new(std::time::Duration::from_secs(3600)), &mut |_| true);
    assert_conserved(&sim);
    assert_eq!(sim.packets_in_flight(), 0, "every frame arrived or was dropped");
    sim.finish();
    let recs = sim.drain_records();
    let st = sim.module_stats().phost.unwrap_or_default();
    (sim, recs, st)
}

/// The sender's completion times (ACK arrival), by message id.
fn sender_fct(recs: &Records) -> Vec<(u32, u64)> {
    let mut v: Vec<_> = recs.probes.iter().filter(|p| p.name == "phost_sender_fct_ns").map(|p| (p.flow, (p.value * 1000.0).round() as u64)).collect();
    v.sort();
    v
}

#[test]
fn a_short_message_goes_whole_without_tokens() {
    // 3 packets ≤ 8: all on free tokens. The RTS (prio 7) leaves first, then the three
    // data packets back to back; each crosses the switch as the one before leaves it, so
    // the last arrives at C + 3D (h0) + P + D (switch) + P. The ACK returns in 2C + 2P.
    let (_, recs, st) = run_phost(phost(star(2), vec![msg(0, 0, 1, 3 * MSS)], yaps()));
    all_delivered_once(&recs, 1);
    assert_eq!(took(&recs, 0), C + 4 * D + 2 * P);
    assert_eq!(took(&recs, 0), 5_232_000);
    // Overhead over the message alone: the RTS ahead of it in the NIC.
    assert_eq!(took(&recs, 0) - recs.messages[0].ideal.0, C);
    assert_eq!(sender_fct(&recs), vec![(0, C + 4 * D + 2 * P + 2 * C + 2 * P)]);
    assert_eq!((st.tokens_sent, st.free_data_sent, st.data_sent, st.held_slots), (0, 3, 3, 3), "{st:?}");
}

#[test]
fn a_long_message_waits_one_rts_round_trip_then_runs_at_line_rate() {
    // 10 packets > 8: no free packets. The RTS reaches h1 at 2C + 2P; a token goes back
    // at once and one every D after; token k reaches h0 at 4C + 4P + kD, which sends data
    // k then (the previous packet has just left). The last packet leaves at
    // 4C + 4P + 10D and arrives D + 2P later: the message alone (11D + 2P) plus the RTS
    // round trip (2C + 2P each way).
    let (_, recs, st) = run_phost(phost(star(2), vec![msg(0, 0, 1, 10 * MSS)], yaps()));
    all_delivered_once(&recs, 1);
    assert_eq!(took(&recs, 0), 4 * C + 6 * P + 11 * D);
    assert_eq!(took(&recs, 0), 14_528_000);
    assert_eq!(recs.messages[0].ideal.0, 11 * D + 2 * P);
    assert_eq!(took(&recs, 0) - recs.messages[0].ideal.0, 4 * C + 4 * P, "the RTS round trip");
    assert_eq!((st.tokens_sent, st.tokens_received, st.free_data_sent, st.data_sent, st.tokens_expired), (10, 10, 0, 10, 0), "{st:?}");
    assert_eq!((st.acks_sent, st.acks_received, st.regrants, st.window_relaxed), (1, 1, 0, 0), "{st:?}");
}

#[test]
fn polo_preset_sends_twelve_free_packets_and_holds_twelve_slots() {
    // 20 packets, the first 12 free: data k (k < 12) leaves at C + kD. The receiver holds
    // its first 12 slots (from 2C + 2P), so token 12 leaves at 2C + 2P + 12D and data 12
    // at 4C + 4P + 12D: the sender idles 3C + 4P after its free packets, and the message
    // still pays the RTS round trip over 21D + 2P.
    let cfg = PhostConfig { preset: PhostPreset::Polo, ..yaps() };
    let (_, recs, st) = run_phost(phost(star(2), vec![msg(0, 0, 1, 20 * MSS)], cfg));
    all_delivered_once(&recs, 1);
    assert_eq!(took(&recs, 0), 4 * C + 6 * P + 21 * D);
    assert_eq!((st.free_data_sent, st.tokens_sent, st.held_slots), (12, 8, 12), "{st:?}");
    // One round trip's worth (6 µs = 5 frames) is the same rule with 5 free packets.
    let rt = PhostConfig { free_tokens: Some(FreeTokens::RoundTrip { rtt: Duration::from_us(6) }), ..yaps() };
    let (_, recs, st) = run_phost(phost(star(2), vec![msg(0, 0, 1, 20 * MSS)], rt));
    all_delivered_once(&recs, 1);
    assert_eq!(took(&recs, 0), 4 * C + 6 * P + 21 * D);
    assert_eq!((st.free_data_sent, st.tokens_sent), (5, 15), "{st:?}");
}

#[test]
fn two_competing_messages_are_served_one_after_the_other() {
    // h0 and h1 each send 10 packets to h2 at t = 0. The RTSs queue at the switch port to
    // h2 (arriving 2C + 2P and 3C + 2P); the first flow gets slots 0-9 (SRPT: once its
    // data arrives it has fewer packets left), the second slots 10-19, so its data runs
    // back to back behind the first's on h2's link.
    let msgs = vec![msg(0, 0, 2, 10 * MSS), msg(0, 1, 2, 10 * MSS)];
    let (_, recs, st) = run_phost(phost(star(3), msgs.clone(), yaps()));
    all_delivered_once(&recs, 2);
    let mut t = [took(&recs, 0), took(&recs, 1)];
    t.sort();
    assert_eq!(t, [4 * C + 6 * P + 11 * D, 4 * C + 6 * P + 21 * D]);
    assert_eq!((st.tokens_sent, st.tokens_expired), (20, 0), "{st:?}");
    // Round robin alternates the tokens: both finish late, the second one D after the
    // first.
    let rr = PhostConfig { scheduling: Some(TokenScheduling::RoundRobin), ..yaps() };
    let (_, recs, _) = run_phost(phost(star(3), msgs, rr));
    all_delivered_once(&recs, 2);
    let mut t = [took(&recs, 0), took(&recs, 1)];
    t.sort();
    assert_eq!(t, [4 * C + 6 * P + 20 * D, 4 * C + 6 * P + 21 * D]);
}

#[test]
fn a_lost_data_packet_is_granted_again_after_the_resend_timeout() {
    // Data 4 is lost. The last token (slot 9, at 2C + 2P + 9D) arms the re-grant timer,
    // 9D later: at 2C + 2P + 18D the receiver grants the one missing packet, which reaches
    // h0 at 4C + 4P + 18D and h1 at 4C + 6P + 20D.
    let mut sp = phost(star(2), vec![msg(0, 0, 1, 10 * MSS)], yaps());
    sp.faults = vec![FaultSpec::DropNth { flow: 0, seq: 4, times: 1 }];
    let (sim, recs, st) = run_phost(sp);
    assert_eq!(sim.counters().total_drops(), 1);
    all_delivered_once(&recs, 1);
    assert_eq!(took(&recs, 0), 4 * C + 6 * P + 20 * D);
    assert_eq!(took(&recs, 0), 25_328_000);
    assert_eq!((st.regrants, st.tokens_sent, st.data_sent, st.data_resent), (1, 11, 11, 1), "{st:?}");
}

#[test]
fn with_yaps_sizing_a_packet_sent_again_is_a_bare_header() {
    // YAPS sizes data packets by bytes sent in order: the re-granted packet 4 goes out as
    // a 40 B header (C per link instead of D) and still completes the message at h1,
    // 1460 B short.
    let cfg = PhostConfig { yaps_header_only_resends: true, ..yaps() };
    let mut sp = phost(star(2), vec![msg(0, 0, 1, 10 * MSS)], cfg);
    sp.faults = vec![FaultSpec::DropNth { flow: 0, seq: 4, times: 1 }];
    let (_, recs, st) = run_phost(sp);
    assert_eq!(took(&recs, 0), 4 * C + 4 * P + 18 * D + 2 * C + 2 * P);
    let got: u64 = recs.goodput.iter().map(|g| g.payload_bytes).sum();
    assert_eq!(got, 9 * MSS);
    assert_eq!((st.regrants, st.data_resent), (1, 1), "{st:?}");
}

#[test]
fn a_lost_short_flow_packet_waits_twice_its_length() {
    // 3 free packets, data 1 lost: the receiver's re-grant timer is 2 × 3 MTU times from
    // the RTS's arrival (2C + 2P); the token for data 1 leaves then.
    let mut sp = phost(star(2), vec![msg(0, 0, 1, 3 * MSS)], yaps());
    sp.faults = vec![FaultSpec::DropNth { flow: 0, seq: 1, times: 1 }];
    let (_, recs, st) = run_phost(sp);
    all_delivered_once(&recs, 1);
    assert_eq!(took(&recs, 0), (2 * C + 2 * P + 6 * D) + (2 * C + 2 * P) + (2 * D + 2 * P));
    assert_eq!((st.regrants, st.tokens_sent), (1, 1), "{st:?}");
}

#[test]
fn a_lost_rts_is_sent_again_after_the_rts_timeout() {
    let mut sp = phost(star(2), vec![msg(0, 0, 1, 10 * MSS)], yaps());
    sp.faults = vec![FaultSpec::DropControl { flow: 0, seq: 0, times: 1 }];
    let (_, recs, st) = run_phost(sp);
    all_delivered_once(&recs, 1);
    assert_eq!(took(&recs, 0), 1_000_000_000 + 4 * C + 6 * P + 11 * D);
    assert_eq!((st.rts_sent, st.rts_resent), (1, 1), "{st:?}");
}

#[test]
fn short_flows_sharing_a_link_are_granted_again_while_their_last_packet_waits_in_the_switch() {
    // N senders each send a 4-packet flow (all on free tokens) to h3 at t = 0. The RTSs
    // reach h3 at (2 + s)C + 2P, which arms flow s's re-grant timer 2 × 4 MTU times later
    // (YAPS `set_capability_count`, `ext/capabilityflow.cpp:259-266`): (2 + s)C + 2P + 8D.
    // The data packets reach the switch together, one from each sender every D, and leave
    // on h3's link in turn: packet k of flow s is departure 3k + s (N = 3), so flow s's
    // last packet reaches h3 at C + (11 + s)D + 2P, after its timer. The receiver grants
    // that packet again (one slot per D from the first timer: 2C + 2P + (8 + s)D); the
    // token reaches h0..h2 at 4C + 4P + (8 + s)D, before the ACK (3C + 4P + (11 + s)D),
    // so each sender sends its packet 3 again: a duplicate at h3 behind the 12 originals.
    // Nothing was lost; YAPS does the same (validation/yaps/README.md, "Flows sharing the
    // receiver's link").
    let flows = |n: u32| (0..n).map(|s| msg(0, s, 3, 4 * MSS)).collect::<Vec<_>>();
    let (_, recs, st) = run_phost(phost(star(4), flows(3), yaps()));
    all_delivered_once(&recs, 3);
    assert_eq!((0..3).map(|s| took(&recs, s)).collect::<Vec<_>>(), (0..3).map(|s| C + (11 + s) * D + 2 * P).collect::<Vec<_>>());
    assert_eq!(sender_fct(&recs), (0..3).map(|s| (s as u32, 3 * C + (11 + s) * D + 4 * P)).collect::<Vec<_>>());
    assert_eq!((st.regrants, st.tokens_sent, st.tokens_received), (3, 3, 3), "{st:?}");
    assert_eq!((st.data_sent, st.data_resent, st.duplicates), (15, 3, 3), "{st:?}");
    // The duplicates' ACKs reach senders whose flow has ended.
    assert_eq!((st.acks_sent, st.stale_control), (6, 3), "{st:?}");
    // Two flows: flow 0's packet 3 (departure 6) arrives at C + 8D + 2P, C before its
    // timer; flow 1's (departure 7) at C + 9D + 2P, D − 2C after its timer (3C + 2P + 8D).
    let (_, recs, st) = run_phost(phost(star(4), flows(2), yaps()));
    all_delivered_once(&recs, 2);
    assert_eq!((took(&recs, 0), took(&recs, 1)), (C + 8 * D + 2 * P, C + 9 * D + 2 * P));
    assert_eq!((st.regrants, st.data_resent, st.duplicates), (1, 1, 1), "{st:?}");
    // One flow has the link alone: its last packet arrives at C + 5D + 2P, 3D early.
    let (_, recs, st) = run_phost(phost(star(4), flows(1), yaps()));
    all_delivered_once(&recs, 1);
    assert_eq!(took(&recs, 0), C + 5 * D + 2 * P);
    assert_eq!((st.regrants, st.data_resent, st.duplicates), (0, 0, 0), "{st:?}");
}

fn leaf_spine_load(seed: u64) -> (Simulation, Records, PhostStats) {
    let mut net = NetworkConfig::default();
    net.topology = TopologyConfig::LeafSpine { leaves: 2, spines: 2, hosts_per_leaf: 4, uplink: LinkConfig::default() };
    net.switch.dynamic_thresholds = false;
    net.switch.port_limit = Some(Bytes(6 * 1538));
    let mut sp = spec(net, poisson_all_to_all(8, 0.6, "w3", 200_000_000, seed));
    sp.transport = TransportConfig::Phost(PhostConfig::default());
    sp.seed = seed;
    let mut sim = run(sp, SimTime(2_000_000_000));
    sim.finish();
    let recs = sim.drain_records();
    let st = sim.module_stats().phost.unwrap_or_default();
    (sim, recs, st)
}

#[test]
fn sprayed_load_with_small_buffers_delivers_every_byte_once() {
    let (sim, recs, st) = leaf_spine_load(3);
    assert!(recs.messages.len() > 20, "{}", recs.messages.len());
    all_delivered_once(&recs, recs.messages.len());
    assert_eq!(st.messages_sent, st.messages_received);
    assert!(st.acks_received <= st.messages_sent, "{st:?}");
    assert!(st.data_received <= st.data_sent, "{st:?}");
    assert!(sim.counters().total_drops() > 0 && st.regrants > 0, "ports of 6 full frames overflow and the losses are re-granted: {st:?}");
}

#[test]
fn same_seed_same_results() {
    let text = |seed| {
        let (sim, r, st) = leaf_spine_load(seed);
        format!("{:?}{:?}{:?}{:?}{:?}", r.messages, r.drops, r.probes, sim.counters(), st)
    };
    assert_eq!(text(7), text(7));
}

#[test]
fn invalid_configuration_is_rejected_naming_the_field() {
    for (cfg, field) in [
        (PhostConfig { data_priority: 8, ..PhostConfig::default() }, "data_priority"),
        (PhostConfig { control_priority: 0, ..PhostConfig::default() }, "control_priority"),
        (PhostConfig { token_ttl_mtus: 0.0, ..PhostConfig::default() }, "token_ttl_mtus"),
        (PhostConfig { window_tokens: 0, ..PhostConfig::default() }, "window_tokens"),
        (PhostConfig { resend_timeout_mtus: -1.0, ..PhostConfig::default() }, "resend_timeout_mtus"),
        (PhostConfig { rts_timeout: Duration(0), ..PhostConfig::default() }, "rts_timeout"),
    ] {
        let err = Simulation::new(phost(star(2), vec![msg(0, 0, 1, 1)], cfg.clone())).err().unwrap_or_else(|| panic!("{cfg:?} accepted"));
        assert!(err.to_string().contains(field), "{err}");
    }
}
