//! The network's base round trip: the time a full data frame takes from host 0 to the
//! host farthest from it plus the time a minimum-size frame takes back, alone in the
//! network with every delay at its minimum, on the first equal-cost path. Receiver-driven
//! transports size their unscheduled bytes from it (Homa's RTTbytes: "one full packet in
//! one way and a grant in the other", HomaSimulation `homaTransportConfig.ini:35`).
//!
//! A frame crosses the stages exactly as [`super::ideal`] pushes one: the send path,
//! then per hop serialisation, propagation and FEC latency, and at a switch its pipeline
//! after the first bit (cut-through onto a link no faster) or the last bit
//! (store-and-forward); at the far host the receive path.

use crate::config::{NetworkConfig, SwitchConfig};
use crate::error::{invalid, BuildError};
use crate::framing::L4Headers;
use crate::net::routing::RoutingTable;
use crate::net::topology::Graph;
use crate::units::Duration;

/// Global egress port of link `i`'s end at `a` (`at_a`) or at `b`: the numbering of
/// `build.rs` (link `i` gives port `2i` from a to b and `2i + 1` from b to a).
pub(crate) fn port_of(i: usize, at_a: bool) -> u32 {
    (2 * i + usize::from(!at_a)) as u32
}

/// One way from `src` to `dst` for a frame of `wire` bytes.
fn one_way(net: &NetworkConfig, g: &Graph, routes: &RoutingTable, sw: &[SwitchConfig], src: u32, dst: u32, wire: u64) -> Option<Duration> {
    let hc = &net.host;
    let hop = |port: u32| {
        let l = &g.links[(port / 2) as usize];
        let to = if port.is_multiple_of(2) { l.b } else { l.a };
        (l.rate, l.delay, to)
    };
    let first_port = g.links.iter().position(|l| l.a == src || l.b == src)?;
    let mut port = port_of(first_port, g.links[first_port].a == src);
    let mut t = hc.send_cpu_per_message.min() + hc.send_cpu_per_packet.min() + hc.send_latency.min();
    let fec = net.link.fec_jitter.min();
    loop {
        let (rate, delay, to) = hop(port);
        let first = t + delay + fec;
        let last = first + rate.tx_time(wire);
        if g.is_host(to) {
            return (to == dst).then(|| last + hc.recv_latency.min() + hc.recv_cpu_per_packet.min());
        }
        let s = to - g.hosts;
        let next = *routes.next_hops(s, dst).first()?;
        let (out_rate, _, _) = hop(next);
        let c = &sw[s as usize];
        let base = if c.cut_through && out_rate <= rate { first } else { last };
        t = base + c.latency.min();
        port = next;
    }
}

/// The base round trip from host 0 (see the module documentation), given the built
/// graph, routes and per-switch settings.
pub(crate) fn round_trip(net: &NetworkConfig, g: &Graph, routes: &RoutingTable, sw: &[SwitchConfig]) -> Duration {
    let full = net.framing.wire_bytes(L4Headers::None, net.mtu.0);
    let min = net.framing.wire_bytes(L4Headers::None, 0);
    (1..g.hosts)
        .filter_map(|d| Some(one_way(net, g, routes, sw, 0, d, full)? + one_way(net, g, routes, sw, d, 0, min)?))
        .max()
        .unwrap_or(Duration::ZERO)
}

/// The base round trip of the network `net` describes, without building a simulation
/// (the scenario layer sizes Homa's unscheduled bytes and cut-offs with it).
pub fn base_round_trip(net: &NetworkConfig) -> Result<Duration, BuildError> {
    net.validate()?;
    let mut g = Graph::build(&net.topology, &net.link)?;
    let sw = crate::net::overrides::apply(&net.overrides, &net.switch, &mut g).map_err(|(i, e)| invalid(format!("override[{i}].select"), e.0))?;
    let routes = RoutingTable::build(&g, port_of);
    Ok(round_trip(net, &g, &routes, &sw))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{LinkConfig, NetworkConfig};
    use crate::dist::DelayDist;
    use crate::units::{BitsPerSec, Bytes};

    /// The SFC slides' network with the latencies `pl2 reproduce sfc-*` uses: 0.5 µs
    /// links, 600 ns per switch, no host delays, MTU 1024 B. Hand sum of the farthest
    /// pair (host 0 to a host of another pod, 5 switches each way): 6 links × 0.5 µs + 5
    /// switches × 0.6 µs = 6 µs one way, 12 µs round trip, plus the serialisation the probe counts on top: the full frame is stored at
    /// the first ToR (100G in, 400G out: no cut-through onto a faster link) and
    /// serialised again into the receiving host; the minimum frame likewise.
    #[test]
    fn sfc_three_tier_base_rtt_is_12us_plus_serialisation() {
        let mut net = NetworkConfig {
            topology: crate::net::topology::tests::sfc_three_tier(),
            link: LinkConfig { rate: BitsPerSec::gbps(100), delay: Duration::from_ns(500), ..LinkConfig::default() },
            mtu: Bytes(1024),
            ..NetworkConfig::default()
        };
        net.switch.latency = DelayDist::constant(Duration::from_ns(600));
        let full = net.framing.wire_bytes(L4Headers::None, 1024);
        let min = net.framing.wire_bytes(L4Headers::None, 0);
        let tx = |b: u64| BitsPerSec::gbps(100).tx_time(b);
        let hand = Duration::from_us(12) + tx(full) + tx(full) + tx(min) + tx(min);
        assert_eq!(base_round_trip(&net).unwrap(), hand);
        // Serialisation is small beside the 12 µs: 1062 B at 100 Gbps is 85 ns.
        assert!(hand < Duration::from_ns(12_250), "{hand:?}");
    }
}
