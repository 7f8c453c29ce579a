//! Per-element overrides: `[[network.override]]` tables that change switch or link
//! parameters for the elements a selector picks. Selectors: `"all"`, `"tier:tor"`
//! (`host`, `tor`, `agg`, `core`, `spine`, `switch`), `"s3"` (one switch and, for link
//! fields, every link touching it), `"h5"` (that host's link), `"s0-h5"` (one link).
//! Later overrides win.

use crate::config::{EcnConfig, QueueDiscipline, SfcConfig, SwitchConfig};
use crate::dist::{deserialize_opt_delay, DelayDist};
use crate::net::topology::{Graph, LinkSpec};
use crate::units::{BitsPerSec, Bytes, Duration};
use serde::{Deserialize, Serialize};

/// One override. Switch fields apply to the selected switches, link fields to the
/// selected links (both directions).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Override {
    /// Which elements: `"all"`, `"tier:tor"`, `"s3"`, `"h5"`, `"s0-h5"`.
    pub select: String,
    /// Switch shared buffer size.
    pub buffer: Option<Bytes>,
    /// Switch dynamic thresholds on or off.
    pub dynamic_thresholds: Option<bool>,
    /// Switch dynamic-threshold factor.
    pub alpha: Option<f64>,
    /// Switch static per-port limit.
    pub port_limit: Option<Bytes>,
    /// Switch ECN marking.
    pub ecn: Option<EcnConfig>,
    /// Switch pipeline latency.
    #[serde(default, deserialize_with = "deserialize_opt_delay")]
    pub latency: Option<DelayDist>,
    /// Switch cut-through.
    pub cut_through: Option<bool>,
    /// Switch output-port queue discipline (e.g. trimming at the ToRs only).
    pub queue: Option<QueueDiscipline>,
    /// Source Flow Control on the selected switches: `false` turns it off, `true` turns
    /// on `[network.switch].sfc` (its defaults if that has none), a table such as
    /// `{ trigger = "200KB", proxy = true }` sets their own (e.g. SFC at the ToRs only,
    /// or other thresholds in the core).
    #[serde(default)]
    pub sfc: Option<SfcOverride>,
    /// Link rate.
    pub rate: Option<BitsPerSec>,
    /// Link propagation delay.
    pub delay: Option<Duration>,
}

/// An override's `sfc`: on, off, or its own settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum SfcOverride {
    /// `true`: `[network.switch].sfc` (or SFC's defaults); `false`: no SFC.
    Enabled(bool),
    /// These settings.
    Config(SfcConfig),
}

#[derive(Clone, Debug, PartialEq)]
enum Selector {
    All,
    Tier(String),
    Node(u32),
    Link(u32, u32),
}

/// A selector that names nothing.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct SelectorError(pub String);

fn node(g: &Graph, name: &str) -> Option<u32> {
    let (kind, idx) = name.split_at(1.min(name.len()));
    let i: u32 = idx.parse().ok()?;
    match kind {
        "h" if i < g.hosts => Some(i),
        "s" if i < g.switches => Some(g.hosts + i),
        _ => None,
    }
}

fn parse(g: &Graph, s: &str) -> Result<Selector, SelectorError> {
    let bad = || {
        SelectorError(format!(
            "{s:?} selects nothing; use \"all\", \"tier:tor\", \"s<switch>\", \"h<host>\" or \"s0-h5\" (hosts 0..{}, switches 0..{})",
            g.hosts, g.switches
        ))
    };
    if s == "all" {
        return Ok(Selector::All);
    }
    if let Some(t) = s.strip_prefix("tier:") {
        let known = t == "host" || g.switch_tier.contains(&t) || g.links.iter().any(|l| l.tier == t);
        return if known { Ok(Selector::Tier(t.to_string())) } else { Err(bad()) };
    }
    if let Some((a, b)) = s.split_once('-') {
        let (a, b) = (node(g, a).ok_or_else(bad)?, node(g, b).ok_or_else(bad)?);
        if !g.links.iter().any(|l| (l.a, l.b) == (a, b) || (l.a, l.b) == (b, a)) {
            return Err(SelectorError(format!("{s:?}: no link joins these nodes")));
        }
        return Ok(Selector::Link(a, b));
    }
    node(g, s).map(Selector::Node).ok_or_else(bad)
}

fn matches_switch(sel: &Selector, g: &Graph, s: u32) -> bool {
    match sel {
        Selector::All => true,
        Selector::Tier(t) => g.switch_tier[s as usize] == t,
        Selector::Node(n) => *n == g.hosts + s,
        Selector::Link(..) => false,
    }
}

fn matches_link(sel: &Selector, l: &LinkSpec) -> bool {
    match sel {
        Selector::All => true,
        Selector::Tier(t) => l.tier == t,
        Selector::Node(n) => l.a == *n || l.b == *n,
        Selector::Link(a, b) => (l.a, l.b) == (*a, *b) || (l.a, l.b) == (*b, *a),
    }
}

/// Applies overrides: returns each switch's configuration and rewrites link rates and
/// delays in `g`. Errors name the override's index.
pub fn apply(overrides: &[Override], base: &SwitchConfig, g: &mut Graph) -> Result<Vec<SwitchConfig>, (usize, SelectorError)> {
    let mut cfg = vec![base.clone(); g.switches as usize];
    for (i, o) in overrides.iter().enumerate() {
        let sel = parse(g, &o.select).map_err(|e| (i, e))?;
        for (s, c) in cfg.iter_mut().enumerate() {
            if !matches_switch(&sel, g, s as u32) {
                continue;
            }
            if let Some(b) = o.buffer {
                c.buffer = b;
            }
            if let Some(a) = o.alpha {
                c.alpha = a;
            }
            if let Some(d) = o.dynamic_thresholds {
                c.dynamic_thresholds = d;
            }
            if let Some(p) = o.port_limit {
                c.port_limit = Some(p);
            }
            if let Some(e) = &o.ecn {
                c.ecn = e.clone();
            }
            if let Some(l) = &o.latency {
                c.latency = l.clone();
            }
            if let Some(ct) = o.cut_through {
                c.cut_through = ct;
            }
            if let Some(q) = &o.queue {
                c.queue = q.clone();
            }
            match &o.sfc {
                None => {}
                Some(SfcOverride::Enabled(false)) => c.sfc = None,
                Some(SfcOverride::Enabled(true)) => c.sfc = Some(base.sfc.clone().unwrap_or_default()),
                Some(SfcOverride::Config(x)) => c.sfc = Some(x.clone()),
            }
        }
        for l in g.links.iter_mut().filter(|l| matches_link(&sel, l)) {
            if let Some(r) = o.rate {
                l.rate = r;
            }
            if let Some(d) = o.delay {
                l.delay = d;
            }
        }
    }
    Ok(cfg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{LinkConfig, TopologyConfig};

    /// SFC at the ToRs only (off at the aggregation and core switches), and the ToRs of
    /// pod 0 with their own trigger: every other switch keeps the base settings.
    #[test]
    fn sfc_is_switched_per_switch() {
        let mut g = Graph::build(&TopologyConfig::FatTree { k: 4 }, &LinkConfig::default()).unwrap();
        let base = SwitchConfig { sfc: Some(SfcConfig::default()), ..SwitchConfig::default() };
        let parse = |select: &str, sfc: SfcOverride| Override {
            select: select.into(),
            buffer: None,
            dynamic_thresholds: None,
            alpha: None,
            port_limit: None,
            ecn: None,
            latency: None,
            cut_through: None,
            queue: None,
            sfc: Some(sfc),
            rate: None,
            delay: None,
        };
        let own = SfcConfig { trigger: Bytes(200_000), proxy: true, ..SfcConfig::default() };
        let ovs = vec![
            parse("tier:agg", SfcOverride::Enabled(false)),
            parse("tier:core", SfcOverride::Enabled(false)),
            parse("s0", SfcOverride::Config(own.clone())),
        ];
        let cfg = apply(&ovs, &base, &mut g).unwrap();
        assert_eq!(cfg[0].sfc.as_ref(), Some(&own));
        for s in 1..8 {
            assert_eq!(cfg[s].sfc.as_ref(), Some(&SfcConfig::default()), "ToR s{s}");
        }
        assert!(cfg[8..].iter().all(|c| c.sfc.is_none()));
        // `true` turns on the base settings, or SFC's defaults without any.
        let on = apply(&[parse("s9", SfcOverride::Enabled(true))], &SwitchConfig::default(), &mut g).unwrap();
        assert_eq!(on[9].sfc.as_ref(), Some(&SfcConfig::default()));
        assert!(on[8].sfc.is_none());
    }
}
