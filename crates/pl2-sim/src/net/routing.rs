//! Precomputed shortest-path routing tables: for every switch and destination host, the
//! equal-cost egress ports, in one flat array. A lookup is two indexed loads, never a scan.
//! Identical port lists are stored once (in a fat tree every remote destination of an
//! edge switch shares the same uplinks), so the array stays small and cache-resident.
//!
//! The (switch, destination) index is itself compressed: hosts behind the same switch
//! (one link each, to that switch) are reached the same way from every *other* switch,
//! so the table keeps one column per such group and, apart, each host's own entry at its
//! switch. At k = 16 that shrinks the index from 2.6 MB (read at random on every hop)
//! to 0.3 MB; numbering the few distinct port lists and storing each entry as a 16-bit
//! number, to 82 KB. The build checks the premise on the full table and keeps a host's
//! own column wherever it does not hold.
//!
//! For source-chosen paths ([`crate::config::EcmpMode::Source`]) the table also numbers
//! paths: a switch's tier is its hop distance from the nearest host (ToRs 1), each tier
//! has a fan-out (the most equal-cost next hops any of its switches has towards any
//! host), and a path number is read in mixed radix, the ToRs' fan-out as the lowest
//! digit. In a k-ary fat tree that gives (k/2)² numbers, one per inter-pod path.

use super::topology::Graph;
use rustc_hash::FxHashMap;
use std::collections::VecDeque;

/// Equal-cost next hops of every (switch, destination host).
pub struct RoutingTable {
    /// Columns of `spans` (destination groups).
    groups: u32,
    /// Each host's group.
    group_of: Vec<u32>,
    /// The switch every host of a group hangs from (`u32::MAX`: a group of one host that
    /// keeps its full column).
    group_switch: Vec<u32>,
    /// Which of `spans` each (switch, group) uses, indexed by switch_index * groups +
    /// group.
    span_of: SpanIndex,
    /// Distinct (start, len) ranges of `ports`.
    spans: Vec<(u32, u16)>,
    /// Each host's entry at its group's switch.
    own: Vec<(u32, u16)>,
    /// Distinct port lists, concatenated.
    ports: Vec<u32>,
    /// Per switch: the product of the fan-outs of the tiers below it (a path number's
    /// digit for the switch is `path / divisor % next_hops`).
    divisors: Vec<u32>,
    /// Path numbers with distinct meanings: the product of every tier's fan-out (capped at
    /// `u32::MAX`).
    paths: u32,
}

impl RoutingTable {
    /// `port_of(link, at_a)` gives the global egress port id of a link's end.
    pub fn build(g: &Graph, port_of: impl Fn(usize, bool) -> u32) -> RoutingTable {
        let n = g.nodes() as usize;
        // Adjacency: (neighbour, egress port id from this node to it).
        let mut adj: Vec<Vec<(u32, u32)>> = vec![Vec::new(); n];
        for (i, l) in g.links.iter().enumerate() {
            adj[l.a as usize].push((l.b, port_of(i, true)));
            adj[l.b as usize].push((l.a, port_of(i, false)));
        }
        for a in &mut adj {
            a.sort_unstable();
        }
        let mut spans = vec![(0u32, 0u16); (g.switches * g.hosts) as usize];
        let mut ports = Vec::new();
        let mut interned: FxHashMap<Vec<u32>, u32> = FxHashMap::default();
        let mut hops: Vec<u32> = Vec::new();
        let mut dist = vec![u32::MAX; n];
        let mut q = VecDeque::new();
        for dst in 0..g.hosts {
            dist.iter_mut().for_each(|d| *d = u32::MAX);
            dist[dst as usize] = 0;
            q.push_back(dst);
            while let Some(x) = q.pop_front() {
                // Hosts do not forward: only the destination itself expands from a host.
                if g.is_host(x) && x != dst {
                    continue;
                }
                for &(y, _) in &adj[x as usize] {
                    if dist[y as usize] == u32::MAX {
                        dist[y as usize] = dist[x as usize] + 1;
                        q.push_back(y);
                    }
                }
            }
            for s in 0..g.switches {
                let node = g.hosts + s;
                let d = dist[node as usize];
                hops.clear();
                if d != u32::MAX {
                    for &(y, p) in &adj[node as usize] {
                        let ok = dist[y as usize] == d - 1 && (!g.is_host(y) || y == dst);
                        if ok {
                            hops.push(p);
                        }
                    }
                }
                let start = match interned.get(hops.as_slice()) {
                    Some(&start) => start,
                    None => {
                        let start = ports.len() as u32;
                        ports.extend_from_slice(&hops);
                        interned.insert(hops.clone(), start);
                        start
                    }
                };
                spans[(s * g.hosts + dst) as usize] = (start, hops.len() as u16);
            }
        }
        let mut rt = Self::grouped(g, &adj, &spans, ports);
        rt.number_paths(g, &adj);
        rt
    }

    /// The compressed index of the full table `full` (switch_index * hosts + dst): see
    /// the module docs.
    fn grouped(g: &Graph, adj: &[Vec<(u32, u32)>], full: &[(u32, u16)], ports: Vec<u32>) -> RoutingTable {
        let at = |s: u32, dst: u32| full[(s * g.hosts + dst) as usize];
        // The switch of each single-homed host.
        let attach = |h: u32| match adj[h as usize].as_slice() {
            [(y, _)] if !g.is_host(*y) => Some(*y - g.hosts),
            _ => None,
        };
        let mut group_of = vec![u32::MAX; g.hosts as usize];
        let mut group_switch = Vec::new();
        let mut first_of_switch: Vec<u32> = vec![u32::MAX; g.switches as usize];
        for h in 0..g.hosts {
            let Some(t) = attach(h) else { continue };
            let first = first_of_switch[t as usize];
            if first == u32::MAX {
                first_of_switch[t as usize] = h;
                group_of[h as usize] = group_switch.len() as u32;
                group_switch.push(t);
            } else if (0..g.switches).all(|s| s == t || at(s, h) == at(s, first)) {
                group_of[h as usize] = group_of[first as usize];
            }
        }
        for h in 0..g.hosts {
            if group_of[h as usize] == u32::MAX {
                group_of[h as usize] = group_switch.len() as u32;
                group_switch.push(u32::MAX);
            }
        }
        let groups = group_switch.len() as u32;
        let mut leader = vec![u32::MAX; groups as usize];
        for h in (0..g.hosts).rev() {
            leader[group_of[h as usize] as usize] = h;
        }
        // Few distinct ranges (identical port lists are stored once): index them, so that
        // a (switch, group) entry takes 2 bytes, not 8 (at k = 16, 82 KB instead of 328).
        let mut spans = Vec::new();
        let mut number: FxHashMap<(u32, u16), u32> = FxHashMap::default();
        let mut index = Vec::with_capacity((g.switches * groups) as usize);
        for s in 0..g.switches {
            for &h in &leader {
                let span = at(s, h);
                let i = *number.entry(span).or_insert_with(|| {
                    spans.push(span);
                    (spans.len() - 1) as u32
                });
                index.push(i);
            }
        }
        let span_of = SpanIndex::new(&index);
        let own = (0..g.hosts)
            .map(|h| match group_switch[group_of[h as usize] as usize] {
                u32::MAX => (0, 0),
                t => at(t, h),
            })
            .collect();
        RoutingTable { groups, group_of, group_switch, span_of, spans, own, ports, divisors: Vec::new(), paths: 1 }
    }

    /// Tiers, fan-outs and the path-number divisor of every switch (see the module docs).
    fn number_paths(&mut self, g: &Graph, adj: &[Vec<(u32, u32)>]) {
        let mut tier = vec![u32::MAX; g.nodes() as usize];
        let mut q: VecDeque<u32> = (0..g.hosts).collect();
        for h in 0..g.hosts {
            tier[h as usize] = 0;
        }
        while let Some(x) = q.pop_front() {
            for &(y, _) in &adj[x as usize] {
                if tier[y as usize] == u32::MAX {
                    tier[y as usize] = tier[x as usize] + 1;
                    q.push_back(y);
                }
            }
        }
        let switch_tier = |s: u32| tier[(g.hosts + s) as usize];
        let top = (0..g.switches).map(switch_tier).filter(|&t| t != u32::MAX).max().unwrap_or(1);
        let mut fanout = vec![1u64; top as usize + 1];
        for s in 0..g.switches {
            let t = switch_tier(s);
            if t == u32::MAX {
                continue;
            }
            for dst in 0..g.hosts {
                let n = self.next_hops(s, dst).len() as u64;
                fanout[t as usize] = fanout[t as usize].max(n);
            }
        }
        let cap = |x: u64| x.min(u64::from(u32::MAX));
        self.divisors = (0..g.switches)
            .map(|s| {
                let t = switch_tier(s).min(top) as usize;
                cap(fanout[1..t].iter().product()) as u32
            })
            .collect();
        self.paths = cap(fanout[1..].iter().fold(1u64, |a, &f| cap(a * f))) as u32;
    }

    /// The divisor that selects switch `switch_index`'s digit of a path number.
    #[inline]
    pub fn path_divisor(&self, switch_index: u32) -> u32 {
        self.divisors[switch_index as usize]
    }

    /// How many path numbers name distinct paths (1 when no switch has a choice).
    pub fn path_count(&self) -> u32 {
        self.paths
    }

    /// Equal-cost egress ports of switch `switch_index` towards host `dst`.
    #[inline(always)]
    pub fn next_hops(&self, switch_index: u32, dst: u32) -> &[u32] {
        let group = self.group_of[dst as usize];
        let (s, l) = if self.group_switch[group as usize] == switch_index {
            self.own[dst as usize]
        } else {
            self.spans[self.span_of.get((switch_index * self.groups + group) as usize)]
        };
        &self.ports[s as usize..s as usize + l as usize]
    }
}

/// Indices into [`RoutingTable`]'s distinct spans: 16 bits each while there are at most
/// 2^16 of them (any fat tree up to k = 64 has fewer), else 32.
enum SpanIndex {
    Narrow(Box<[u16]>),
    Wide(Box<[u32]>),
}

impl SpanIndex {
    fn new(index: &[u32]) -> SpanIndex {
        match index.iter().map(|&i| u16::try_from(i)).collect::<Result<Box<[u16]>, _>>() {
            Ok(narrow) => SpanIndex::Narrow(narrow),
            Err(_) => SpanIndex::Wide(index.into()),
        }
    }

    #[inline(always)]
    fn get(&self, i: usize) -> usize {
        match self {
            SpanIndex::Narrow(v) => usize::from(v[i]),
            SpanIndex::Wide(v) => v[i] as usize,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{CustomLink, LinkConfig, TopologyConfig};

    /// The definition, computed directly: switch `s`'s ports towards a neighbour one hop
    /// nearer to `dst` on a shortest path that crosses no other host.
    fn shortest_next_hops(g: &Graph, port_of: impl Fn(usize, bool) -> u32, s: u32, dst: u32) -> Vec<u32> {
        let n = g.nodes() as usize;
        let mut dist = vec![u32::MAX; n];
        dist[dst as usize] = 0;
        let mut frontier = vec![dst];
        while !frontier.is_empty() {
            let mut next = Vec::new();
            for &x in &frontier {
                if g.is_host(x) && x != dst {
                    continue;
                }
                for l in &g.links {
                    for (from, to) in [(l.a, l.b), (l.b, l.a)] {
                        if from == x && dist[to as usize] == u32::MAX {
                            dist[to as usize] = dist[x as usize] + 1;
                            next.push(to);
                        }
                    }
                }
            }
            frontier = next;
        }
        let node = g.hosts + s;
        let d = dist[node as usize];
        let mut hops = Vec::new();
        if d == u32::MAX {
            return hops;
        }
        for (i, l) in g.links.iter().enumerate() {
            for (from, to, at_a) in [(l.a, l.b, true), (l.b, l.a, false)] {
                if from == node && dist[to as usize] == d - 1 && (!g.is_host(to) || to == dst) {
                    hops.push(port_of(i, at_a));
                }
            }
        }
        hops.sort_unstable();
        hops
    }

    /// The compressed index answers exactly what the definition does, on every kind of
    /// topology (a host has exactly one link, so every host joins its switch's group).
    #[test]
    fn grouped_table_equals_shortest_paths_everywhere() {
        let link = |a: &str, b: &str| CustomLink { a: a.into(), b: b.into(), rate: None, delay: None };
        let topologies = [
            TopologyConfig::FatTree { k: 4 },
            TopologyConfig::SingleRack { hosts: 5, breakout: 2 },
            TopologyConfig::LeafSpine { leaves: 3, spines: 2, hosts_per_leaf: 3, uplink: LinkConfig::default() },
            TopologyConfig::ThreeTier { pods: 2, tors_per_pod: 2, aggs_per_pod: 2, cores: 2, hosts_per_tor: 2, tor_uplink: None, agg_uplink: None },
            TopologyConfig::Dumbbell { hosts_per_side: 2, bottleneck: LinkConfig::default() },
            // A triangle of switches with two hosts on s0 and one on each other switch.
            TopologyConfig::Custom {
                hosts: 4,
                switches: 3,
                links: vec![link("h0", "s0"), link("h1", "s0"), link("h2", "s1"), link("h3", "s2"), link("s0", "s1"), link("s1", "s2"), link("s0", "s2")],
            },
        ];
        let port_of = |i: usize, a: bool| (2 * i + if a { 0 } else { 1 }) as u32;
        for topo in &topologies {
            let g = Graph::build(topo, &LinkConfig::default()).unwrap();
            let rt = RoutingTable::build(&g, port_of);
            for s in 0..g.switches {
                for dst in 0..g.hosts {
                    let mut got = rt.next_hops(s, dst).to_vec();
                    got.sort_unstable();
                    assert_eq!(got, shortest_next_hops(&g, port_of, s, dst), "{topo:?}: switch {s} to host {dst}");
                }
            }
        }
        let g = Graph::build(&TopologyConfig::FatTree { k: 4 }, &LinkConfig::default()).unwrap();
        let rt = RoutingTable::build(&g, port_of);
        assert_eq!(rt.groups, 8, "one column per edge switch");
    }

    #[test]
    fn span_numbers_take_16_bits_while_they_fit_and_32_beyond() {
        let fits = SpanIndex::new(&[0, 65_535, 7]);
        assert!(matches!(fits, SpanIndex::Narrow(_)));
        assert_eq!([fits.get(0), fits.get(1), fits.get(2)], [0, 65_535, 7]);
        let wide = SpanIndex::new(&[3, 65_536, 70_000]);
        assert!(matches!(wide, SpanIndex::Wide(_)));
        assert_eq!([wide.get(0), wide.get(1), wide.get(2)], [3, 65_536, 70_000]);
    }

    #[test]
    fn fat_tree_has_k_over_2_up_paths_and_one_down() {
        let g = Graph::build(&TopologyConfig::FatTree { k: 4 }, &LinkConfig::default()).unwrap();
        let rt = RoutingTable::build(&g, |i, a| (2 * i + if a { 0 } else { 1 }) as u32);
        // Edge switch 0 (hosts 0,1) to host 15 in another pod: 2 uplinks.
        assert_eq!(rt.next_hops(0, 15).len(), 2);
        // Edge switch 0 to its own host 1: one port.
        assert_eq!(rt.next_hops(0, 1).len(), 1);
        // Core switches have exactly one way down to any host.
        let first_core = 8 + 8;
        assert_eq!(rt.next_hops(first_core, 5).len(), 1);
    }

    /// The 3-tier Clos of the SFC slides: a ToR has its pod's 4 aggregation switches
    /// towards another ToR, an aggregation switch all 16 cores towards another pod and
    /// one port down to a ToR of its own pod; a core reaches a pod through any of its 4
    /// aggregation switches (every aggregation switch meets every core). Path numbers:
    /// 4 × 16 × 4 = 256 inter-pod paths.
    #[test]
    fn three_tier_has_ecmp_up_and_at_the_core() {
        let g = Graph::build(&crate::net::topology::tests::sfc_three_tier(), &LinkConfig::default()).unwrap();
        let rt = RoutingTable::build(&g, |i, a| (2 * i + if a { 0 } else { 1 }) as u32);
        let (tor0, agg0, core0) = (0, 20, 40);
        assert_eq!(rt.next_hops(tor0, 1).len(), 1, "own host");
        assert_eq!(rt.next_hops(tor0, 16).len(), 4, "same pod, other ToR");
        assert_eq!(rt.next_hops(tor0, 319).len(), 4, "other pod");
        assert_eq!(rt.next_hops(agg0, 16).len(), 1, "own pod, down");
        assert_eq!(rt.next_hops(agg0, 319).len(), 16, "other pod, up to every core");
        for c in 0..16 {
            assert_eq!(rt.next_hops(core0 + c, 200).len(), 4);
        }
        assert_eq!(rt.path_count(), 256);
    }

    /// In a k = 4 fat tree every path number 0..4 names one of the four inter-pod paths:
    /// the ToR reads the low digit (which aggregation switch), the aggregation switch the
    /// high one (which core switch), as a hand count of the (k/2)² paths gives.
    #[test]
    fn fat_tree_path_numbers_name_each_inter_pod_path_once() {
        let g = Graph::build(&TopologyConfig::FatTree { k: 4 }, &LinkConfig::default()).unwrap();
        let rt = RoutingTable::build(&g, |i, a| (2 * i + if a { 0 } else { 1 }) as u32);
        assert_eq!(rt.path_count(), 4);
        let tiers: Vec<u32> = (0..g.switches).map(|s| rt.path_divisor(s)).collect();
        // 8 edge switches read digit 0, 8 aggregation switches digit 1 (divisor 2); the
        // cores have one way down and read nothing.
        assert_eq!(&tiers[..8], &[1; 8]);
        assert_eq!(&tiers[8..16], &[2; 8]);
        let single = Graph::build(&TopologyConfig::SingleRack { hosts: 4, breakout: 1 }, &LinkConfig::default()).unwrap();
        assert_eq!(RoutingTable::build(&single, |i, a| (2 * i + usize::from(!a)) as u32).path_count(), 1);
    }
}
