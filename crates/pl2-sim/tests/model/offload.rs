//! Segmentation offload behind a rate shaper (`host.offload`, etalon's TSO/GSO under a
//! netem rate): the frames a transport releases at once leave in units of at most
//! `max_bytes` of payload, each held until the shaper has timed its whole length, then
//! sent back to back at the (faster) link rate; worked by hand from TCP's initial window.
//! Refused with PL2, whose bursts are timed hand-over units.

use super::common::*;
use pl2_sim::config::{NetworkConfig, OffloadConfig, TopologyConfig};
use pl2_sim::framing::{Framing, L4Headers};
use pl2_sim::metrics::TraceEvent;
use pl2_sim::packet::PktKind;
use pl2_sim::sim::{TraceConfig, TransportConfig};
use pl2_sim::transport::pl2::Pl2Config;
use pl2_sim::transport::tcp::{TcpConfig, TcpScheduler};
use pl2_sim::units::{BitsPerSec, Bytes, SimTime};

/// Start times of host 0's data frames on its link, in ps, with `offload` and host 0's
/// link at `rate`: one 200 KB TCP message at t = 0, MTU 9000 B (8960 B segments).
fn data_tx(rate: BitsPerSec, offload: Option<OffloadConfig>) -> Vec<u64> {
    let mut net = two_hosts_one_switch(rate, BitsPerSec::gbps(40));
    net.mtu = Bytes(9000);
    net.host.offload = offload;
    let mut sp = spec(net, vec![list(vec![msg(0, 0, 1, 200_000)])]);
    sp.transport = TransportConfig::Tcp(TcpConfig::default());
    // Port 0: host 0's end of its link.
    sp.metrics.trace = Some(TraceConfig { ports: vec![0], max_records: u64::MAX, ..Default::default() });
    let mut sim = run(sp, SimTime(1_000_000_000));
    sim.drain_records().trace.into_iter().filter(|r| r.event == TraceEvent::Tx && r.packet.kind == PktKind::Data).map(|r| r.time.0).collect()
}

/// TCP's initial window releases 10 segments of 8960 B at t = 0, each a 9042 B frame on
/// the wire (9000 + Ethernet header 14, 802.1Q tag 4, FCS 4, preamble 8, gap 12). Without
/// offload at 40 Gbps they leave 1.8084 µs apart from t = 0. With 64 KiB units (7 × 8960
/// = 62720 B ≤ 65536 < 8 × 8960) shaped at 40 Gbps on an 800 Gbps link: the first unit of
/// 7 frames is released at 7 × 1.8084 = 12.6588 µs and its frames leave 90.42 ns apart;
/// the second, of 3, at 12.6588 + 3 × 1.8084 = 18.084 µs. With 2-segment units: pairs at
/// 3.6168 µs, 7.2336 µs, ... The shaper keeps the 40 Gbps average: the last unit is
/// released when the last frame would have ended at 40 Gbps.
#[test]
fn offload_units_leave_whole_at_the_shapers_time_back_to_back_at_line_rate() {
    let wire = Framing::default().wire_bytes(L4Headers::Tcp { options: 0 }, 8960);
    assert_eq!(wire, 9042);
    let t40 = 1_808_400; // 9042 B at 40 Gbps, ps
    let t800 = 90_420; // at 800 Gbps
    let plain = data_tx(BitsPerSec::gbps(40), None);
    assert_eq!(plain[..10], (0..10).map(|k| k * t40).collect::<Vec<_>>()[..]);
    let shaped = |max: u64| Some(OffloadConfig { max_bytes: Bytes(max), rate: BitsPerSec::gbps(40) });
    let gso = data_tx(BitsPerSec::gbps(800), shaped(65_536));
    let mut want: Vec<u64> = (0..7).map(|k| 7 * t40 + k * t800).collect();
    want.extend((0..3).map(|k| 10 * t40 + k * t800));
    assert_eq!(gso[..10], want[..], "a unit of 7, then one of 3");
    let pairs = data_tx(BitsPerSec::gbps(800), shaped(2 * 8960));
    let want: Vec<u64> = (0..10).map(|k| (k / 2 + 1) * 2 * t40 + (k % 2) * t800).collect();
    assert_eq!(pairs[..10], want[..], "units of two segments");
}

/// A shaper without a rate, or units that hold nothing, are refused with the field named.
#[test]
fn offload_settings_are_checked() {
    for (o, field) in [
        (OffloadConfig { max_bytes: Bytes(0), rate: BitsPerSec::gbps(40) }, "host.offload.max_bytes"),
        (OffloadConfig { max_bytes: Bytes(65_536), rate: BitsPerSec(0) }, "host.offload.rate"),
    ] {
        let mut net = two_hosts_one_switch(BitsPerSec::gbps(40), BitsPerSec::gbps(40));
        net.host.offload = Some(o);
        let err = pl2_sim::sim::Simulation::new(spec(net, vec![list(vec![msg(0, 0, 1, 1000)])])).err().expect("refused").to_string();
        assert!(err.contains(field), "{err}");
    }
}

/// PL2 hands each burst over whole at the slot its GRT gives; the offload would regroup
/// and delay those frames, so a run with PL2 (raw, or TCP over PL2) and `host.offload` is
/// refused with the field named, and the same run without the offload builds.
#[test]
fn offload_with_pl2_is_refused() {
    let tcp_over_pl2 = TransportConfig::Tcp(TcpConfig { scheduler: TcpScheduler::Pl2, ..TcpConfig::default() });
    for transport in [TransportConfig::Pl2(Pl2Config::default()), tcp_over_pl2] {
        for offload in [None, Some(OffloadConfig { max_bytes: Bytes(65_536), rate: BitsPerSec::gbps(40) })] {
            let mut net = NetworkConfig::default();
            net.topology = TopologyConfig::SingleRack { hosts: 4, breakout: 1 };
            net.host.offload = offload;
            let mut sp = spec(net, vec![list(vec![msg(0, 0, 1, 100_000)])]);
            sp.transport = transport.clone();
            match (offload, pl2_sim::sim::Simulation::new(sp)) {
                (None, r) => assert!(r.is_ok(), "without the offload the run builds: {:?}", r.err().map(|e| e.to_string())),
                (Some(_), r) => {
                    let err = r.err().expect("refused").to_string();
                    assert!(err.contains("host.offload") && err.contains("PL2"), "{err}");
                }
            }
        }
    }
}
