//! Topologies as graphs: nodes (hosts first, then switches) and bidirectional links.
//! Builders for a single rack, a dumbbell, leaf–spine, a k-ary fat tree, a 3-tier Clos
//! with its own tier sizes and rates (`three_tier`), hybrid racks (packet and circuit
//! switch) and any graph
//! given as lists; all checked, with errors that name the field and the fix.

use crate::config::{LinkConfig, TopologyConfig};
use crate::units::{BitsPerSec, Duration};

/// A bidirectional link between node `a` and node `b` (node ids: hosts are 0..hosts,
/// switches hosts..hosts+switches).
#[derive(Clone, Debug, PartialEq)]
pub struct LinkSpec {
    pub a: u32,
    pub b: u32,
    pub rate: BitsPerSec,
    pub delay: Duration,
    /// Tier of the switch end nearest the hosts ("host", "tor", "agg", "core", "spine").
    pub tier: &'static str,
}

/// A built topology graph.
#[derive(Clone, Debug, PartialEq)]
pub struct Graph {
    pub hosts: u32,
    pub switches: u32,
    /// Tier name of each switch ("tor", "agg", "core", "spine", "switch", "packet",
    /// "circuit").
    pub switch_tier: Vec<&'static str>,
    /// Hosts per physical switch port (breakout lanes); 1 without breakout. Host h uses
    /// physical port h / breakout of its switch.
    pub breakout: u32,
    pub links: Vec<LinkSpec>,
}

/// A topology that cannot be built.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("topology.{field}: {problem}")]
pub struct TopologyError {
    pub field: String,
    pub problem: String,
}

fn err(field: &str, problem: impl Into<String>) -> TopologyError {
    TopologyError { field: field.into(), problem: problem.into() }
}

/// Largest number of hosts (and of switches) a topology may have.
pub const MAX_HOSTS: u32 = 1 << 17;

impl Graph {
    pub fn nodes(&self) -> u32 {
        self.hosts + self.switches
    }
    pub fn is_host(&self, node: u32) -> bool {
        node < self.hosts
    }

    pub fn build(cfg: &TopologyConfig, link: &LinkConfig) -> Result<Graph, TopologyError> {
        let l = |a: u32, b: u32, c: &LinkConfig, tier| LinkSpec { a, b, rate: c.rate, delay: c.delay, tier };
        let g = match cfg {
            TopologyConfig::SingleRack { hosts, breakout } => {
                if *hosts < 2 || *hosts > MAX_HOSTS {
                    return Err(err("hosts", format!("{hosts} hosts; a rack needs 2..{MAX_HOSTS}")));
                }
                if ![1, 2, 4, 8].contains(breakout) {
                    return Err(err("breakout", format!("{breakout} lanes; a port splits into 1, 2, 4 or 8 lanes (e.g. 4 for 4×25G on 100G)")));
                }
                if !link.rate.0.is_multiple_of(*breakout as u64) {
                    return Err(err("breakout", format!("{} does not split evenly into {breakout} lanes", link.rate)));
                }
                let lane = LinkConfig { rate: BitsPerSec(link.rate.0 / *breakout as u64), ..link.clone() };
                let s = *hosts;
                Graph {
                    hosts: *hosts,
                    switches: 1,
                    switch_tier: vec!["tor"],
                    breakout: *breakout,
                    links: (0..*hosts).map(|h| l(h, s, &lane, "host")).collect(),
                }
            }
            TopologyConfig::Dumbbell { hosts_per_side, bottleneck } => {
                if *hosts_per_side < 1 || *hosts_per_side > MAX_HOSTS / 2 {
                    return Err(err("hosts_per_side", format!("{hosts_per_side}; use 1..{}", MAX_HOSTS / 2)));
                }
                let n = 2 * hosts_per_side;
                let (s0, s1) = (n, n + 1);
                let mut links: Vec<LinkSpec> =
                    (0..n).map(|h| l(h, if h < *hosts_per_side { s0 } else { s1 }, link, "host")).collect();
                links.push(l(s0, s1, bottleneck, "tor"));
                Graph { hosts: n, switches: 2, switch_tier: vec!["tor", "tor"], breakout: 1, links }
            }
            TopologyConfig::LeafSpine { leaves, spines, hosts_per_leaf, uplink } => {
                if *leaves < 1 || *spines < 1 || *hosts_per_leaf < 1 {
                    return Err(err("leaves", "leaves, spines and hosts_per_leaf must each be at least 1"));
                }
                if (*leaves as u64) * (*hosts_per_leaf as u64) > MAX_HOSTS as u64 || (*leaves as u64) * (*spines as u64) > (MAX_HOSTS as u64) * 8 {
                    return Err(err("leaves", format!("{leaves} leaves × {hosts_per_leaf} hosts × {spines} spines is too large; pl2 builds at most {MAX_HOSTS} hosts")));
                }
                let hosts = leaves * hosts_per_leaf;
                let mut links = Vec::new();
                for h in 0..hosts {
                    links.push(l(h, hosts + h / hosts_per_leaf, link, "host"));
                }
                for lf in 0..*leaves {
                    for sp in 0..*spines {
                        links.push(l(hosts + lf, hosts + leaves + sp, uplink, "tor"));
                    }
                }
                let mut tier = vec!["tor"; *leaves as usize];
                tier.extend(std::iter::repeat_n("spine", *spines as usize));
                Graph { hosts, switches: leaves + spines, switch_tier: tier, breakout: 1, links }
            }
            TopologyConfig::FatTree { k } => {
                if *k < 2 || k % 2 != 0 || *k > 64 {
                    return Err(err("k", format!("{k}; a fat tree needs an even k from 2 to 64 (e.g. 4, 8, 16)")));
                }
                let k = *k;
                let half = k / 2;
                let hosts = k * k * k / 4;
                let edges = k * half;
                let aggs = k * half;
                let cores = half * half;
                let edge0 = hosts;
                let agg0 = edge0 + edges;
                let core0 = agg0 + aggs;
                let mut links = Vec::new();
                for h in 0..hosts {
                    links.push(l(h, edge0 + h / half, link, "host"));
                }
                for pod in 0..k {
                    for e in 0..half {
                        for a in 0..half {
                            links.push(l(edge0 + pod * half + e, agg0 + pod * half + a, link, "tor"));
                        }
                    }
                    for a in 0..half {
                        for c in 0..half {
                            links.push(l(agg0 + pod * half + a, core0 + a * half + c, link, "agg"));
                        }
                    }
                }
                let mut tier = vec!["tor"; edges as usize];
                tier.extend(std::iter::repeat_n("agg", aggs as usize));
                tier.extend(std::iter::repeat_n("core", cores as usize));
                Graph { hosts, switches: edges + aggs + cores, switch_tier: tier, breakout: 1, links }
            }
            TopologyConfig::HybridRacks { racks, hosts_per_rack, packet, circuit } => {
                if *racks < 2 || *hosts_per_rack < 1 || (*racks as u64) * (*hosts_per_rack as u64) > MAX_HOSTS as u64 {
                    return Err(err("racks", format!("{racks} racks of {hosts_per_rack} hosts; need at least 2 racks of at least 1 host, at most {MAX_HOSTS} hosts")));
                }
                let hosts = racks * hosts_per_rack;
                let (ps, cs) = (hosts + racks, hosts + racks + 1);
                let half = |c: &LinkConfig| LinkConfig { delay: Duration(c.delay.0 / 2), ..c.clone() };
                let (p, c) = (half(packet), half(circuit));
                let mut links: Vec<LinkSpec> = (0..hosts).map(|h| l(h, hosts + h / hosts_per_rack, link, "host")).collect();
                for r in 0..*racks {
                    links.push(l(hosts + r, ps, &p, "tor"));
                    links.push(l(hosts + r, cs, &c, "tor"));
                }
                let mut tier = vec!["tor"; *racks as usize];
                tier.extend(["packet", "circuit"]);
                Graph { hosts, switches: racks + 2, switch_tier: tier, breakout: 1, links }
            }
            TopologyConfig::ThreeTier { pods, tors_per_pod, aggs_per_pod, cores, hosts_per_tor, tor_uplink, agg_uplink } => {
                let (p, t, a, c, h) = (*pods, *tors_per_pod, *aggs_per_pod, *cores, *hosts_per_tor);
                for (name, v) in [("pods", p), ("tors_per_pod", t), ("aggs_per_pod", a), ("cores", c), ("hosts_per_tor", h)] {
                    if v < 1 {
                        return Err(err(name, "0; pods, tors_per_pod, aggs_per_pod, cores and hosts_per_tor must each be at least 1"));
                    }
                }
                let hosts64 = p as u64 * t as u64 * h as u64;
                let switches64 = p as u64 * (t + a) as u64 + c as u64;
                if hosts64 > MAX_HOSTS as u64 || switches64 > MAX_HOSTS as u64 {
                    return Err(err("pods", format!("{hosts64} hosts and {switches64} switches; pl2 builds at most {MAX_HOSTS} of each")));
                }
                let up1 = tor_uplink.clone().unwrap_or_else(|| link.clone());
                let up2 = agg_uplink.clone().unwrap_or_else(|| up1.clone());
                let hosts = hosts64 as u32;
                let tor0 = hosts;
                let agg0 = tor0 + p * t;
                let core0 = agg0 + p * a;
                let mut links = Vec::new();
                for x in 0..hosts {
                    links.push(l(x, tor0 + x / h, link, "host"));
                }
                for pod in 0..p {
                    for e in 0..t {
                        for g in 0..a {
                            links.push(l(tor0 + pod * t + e, agg0 + pod * a + g, &up1, "tor"));
                        }
                    }
                    for g in 0..a {
                        for k in 0..c {
                            links.push(l(agg0 + pod * a + g, core0 + k, &up2, "agg"));
                        }
                    }
                }
                let mut tier = vec!["tor"; (p * t) as usize];
                tier.extend(std::iter::repeat_n("agg", (p * a) as usize));
                tier.extend(std::iter::repeat_n("core", c as usize));
                Graph { hosts, switches: switches64 as u32, switch_tier: tier, breakout: 1, links }
            }
            TopologyConfig::Custom { hosts, switches, links } => {
                if *hosts < 2 || *hosts > MAX_HOSTS || *switches > MAX_HOSTS {
                    return Err(err("hosts", format!("a network needs 2..{MAX_HOSTS} hosts and at most {MAX_HOSTS} switches")));
                }
                let parse = |name: &str, i: usize, end: &str| -> Result<u32, TopologyError> {
                    let field = format!("links[{i}].{end}");
                    let bad = || err(&field, format!("{name:?} is not a node; write \"h<index>\" (0..{hosts}) or \"s<index>\" (0..{switches})"));
                    let (kind, idx) = name.split_at(1.min(name.len()));
                    let idx: u32 = idx.parse().map_err(|_| bad())?;
                    match kind {
                        "h" if idx < *hosts => Ok(idx),
                        "s" if idx < *switches => Ok(hosts + idx),
                        _ => Err(bad()),
                    }
                };
                let mut out = Vec::new();
                for (i, c) in links.iter().enumerate() {
                    let a = parse(&c.a, i, "a")?;
                    let b = parse(&c.b, i, "b")?;
                    if a == b {
                        return Err(err(&format!("links[{i}]"), "a link joins a node to itself"));
                    }
                    if a < *hosts && b < *hosts {
                        return Err(err(&format!("links[{i}]"), "hosts connect only to switches"));
                    }
                    out.push(LinkSpec {
                        a,
                        b,
                        rate: c.rate.unwrap_or(link.rate),
                        delay: c.delay.unwrap_or(link.delay),
                        tier: if a < *hosts || b < *hosts { "host" } else { "switch" },
                    });
                }
                let g = Graph { hosts: *hosts, switches: *switches, switch_tier: vec!["switch"; *switches as usize], breakout: 1, links: out };
                for h in 0..*hosts {
                    let n = g.links.iter().filter(|x| x.a == h || x.b == h).count();
                    if n != 1 {
                        return Err(err("links", format!("host h{h} has {n} links; every host needs exactly one")));
                    }
                }
                g
            }
        };
        if g.hosts > MAX_HOSTS || g.switches > MAX_HOSTS {
            return Err(err("kind", format!("{} hosts and {} switches; pl2 builds at most {MAX_HOSTS} of each", g.hosts, g.switches)));
        }
        g.check_connected()?;
        Ok(g)
    }

    fn check_connected(&self) -> Result<(), TopologyError> {
        let n = self.nodes() as usize;
        let mut adj = vec![Vec::new(); n];
        for l in &self.links {
            adj[l.a as usize].push(l.b);
            adj[l.b as usize].push(l.a);
        }
        let mut seen = vec![false; n];
        let mut stack = vec![0u32];
        seen[0] = true;
        while let Some(x) = stack.pop() {
            for &y in &adj[x as usize] {
                if !seen[y as usize] {
                    seen[y as usize] = true;
                    stack.push(y);
                }
            }
        }
        match (0..self.hosts).find(|&h| !seen[h as usize]) {
            Some(h) => Err(err("links", format!("host h{h} cannot reach host h0; connect it"))),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn fat_tree_sizes() {
        let g = Graph::build(&TopologyConfig::FatTree { k: 8 }, &LinkConfig::default()).unwrap();
        assert_eq!(g.hosts, 128);
        assert_eq!(g.switches, 80);
        assert_eq!(g.links.len(), 128 + 128 + 128);
    }

    /// The SFC slides' network (seed 003): 5 pods of 4 ToRs and 4 aggregation switches,
    /// 16 cores, 16 hosts per ToR at 100G, 400G above.
    pub(crate) fn sfc_three_tier() -> TopologyConfig {
        let up = LinkConfig { rate: BitsPerSec::gbps(400), delay: Duration::from_ns(500), ..LinkConfig::default() };
        TopologyConfig::ThreeTier { pods: 5, tors_per_pod: 4, aggs_per_pod: 4, cores: 16, hosts_per_tor: 16, tor_uplink: Some(up.clone()), agg_uplink: Some(up) }
    }

    /// 320 hosts, 20 + 20 + 16 = 56 switches, every switch of radix 20 (ToR 16 down + 4
    /// up, aggregation 4 down + 16 up, core 20 down), full bisection at the ToR (16 ×
    /// 100G = 4 × 400G).
    #[test]
    fn three_tier_is_the_sfc_slides_network() {
        let host = LinkConfig { rate: BitsPerSec::gbps(100), delay: Duration::from_ns(500), ..LinkConfig::default() };
        let g = Graph::build(&sfc_three_tier(), &host).unwrap();
        assert_eq!((g.hosts, g.switches), (320, 56));
        assert_eq!(g.links.len(), 320 + 20 * 4 + 20 * 16);
        let mut degree = vec![0u32; g.nodes() as usize];
        let mut up_bps = vec![0u64; g.nodes() as usize];
        let mut down_bps = vec![0u64; g.nodes() as usize];
        for l in &g.links {
            degree[l.a as usize] += 1;
            degree[l.b as usize] += 1;
            // The lower end is always `a` (hosts before ToRs before aggs before cores).
            assert!(l.a < l.b);
            up_bps[l.a as usize] += l.rate.0;
            down_bps[l.b as usize] += l.rate.0;
        }
        for s in 0..g.switches {
            assert_eq!(degree[(g.hosts + s) as usize], 20, "switch {s} ({})", g.switch_tier[s as usize]);
        }
        for tor in g.hosts..g.hosts + 20 {
            assert_eq!(up_bps[tor as usize], down_bps[tor as usize], "ToR {tor} is not full bisection");
        }
        assert_eq!(g.switch_tier.iter().filter(|t| **t == "core").count(), 16);
    }

    #[test]
    fn impossible_topologies_are_rejected_with_the_field() {
        let e = Graph::build(&TopologyConfig::SingleRack { hosts: 0, breakout: 1 }, &LinkConfig::default()).unwrap_err();
        assert_eq!(e.field, "hosts");
        let e = Graph::build(&TopologyConfig::SingleRack { hosts: 8, breakout: 16 }, &LinkConfig::default()).unwrap_err();
        assert_eq!(e.field, "breakout");
        let e = Graph::build(&TopologyConfig::SingleRack { hosts: 1, breakout: 1 }, &LinkConfig::default()).unwrap_err();
        assert_eq!(e.field, "hosts");
        let tt = TopologyConfig::ThreeTier { pods: 2, tors_per_pod: 0, aggs_per_pod: 1, cores: 1, hosts_per_tor: 1, tor_uplink: None, agg_uplink: None };
        assert_eq!(Graph::build(&tt, &LinkConfig::default()).unwrap_err().field, "tors_per_pod");
        let e = Graph::build(&TopologyConfig::FatTree { k: 5 }, &LinkConfig::default()).unwrap_err();
        assert_eq!(e.field, "k");
        let custom = TopologyConfig::Custom {
            hosts: 2,
            switches: 1,
            links: vec![crate::config::CustomLink { a: "h0".into(), b: "s3".into(), rate: None, delay: None }],
        };
        let e = Graph::build(&custom, &LinkConfig::default()).unwrap_err();
        assert_eq!(e.field, "links[0].b");
    }
}
