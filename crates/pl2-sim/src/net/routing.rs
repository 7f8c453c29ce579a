//! Precomputed shortest-path routing tables: for every switch and destination host, the
//! equal-cost egress ports, in one flat array. A lookup is two indexed loads, never a scan.
//! Identical port lists are stored once (in a fat tree every remote destination of an
//! edge switch shares the same uplinks), so the array stays small and cache-resident.

use super::topology::Graph;
use rustc_hash::FxHashMap;
use std::collections::VecDeque;

/// Equal-cost next hops of every (switch, destination host).
pub struct RoutingTable {
    hosts: u32,
    /// (start, len) into `ports`, indexed by switch_index * hosts + dst.
    spans: Vec<(u32, u16)>,
    /// Distinct port lists, concatenated.
    ports: Vec<u32>,
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
        RoutingTable { hosts: g.hosts, spans, ports }
    }

    /// Equal-cost egress ports of switch `switch_index` towards host `dst`.
    #[inline]
    pub fn next_hops(&self, switch_index: u32, dst: u32) -> &[u32] {
        let (s, l) = self.spans[(switch_index * self.hosts + dst) as usize];
        &self.ports[s as usize..s as usize + l as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{LinkConfig, TopologyConfig};

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
}
