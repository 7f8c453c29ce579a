//! Homa's settings the scenario derives before it runs, so that they show in the
//! canonical form (`pl2 show`) and the simulator receives them as configuration:
//! RTTbytes from the network's base round trip and host link rate, and the level split
//! and unscheduled cut-offs from the size distribution of the workloads Homa carries
//! (`pl2_sim::transport::homa::cutoffs`, the Homa simulator's estimator).
//!
//! Rules: a field the scenario sets is kept. The distribution is that of the Poisson
//! workloads on the transport; fixed-size, list, RPC and shuffle workloads have none, so
//! without a Poisson workload the split stays the simulator-level default (one
//! unscheduled level, seven scheduled, no cut-offs); a scenario that sets one unscheduled
//! level needs none either. Several Poisson workloads must draw
//! from the same distribution (same `sizes`, `sizes_format` and `truncate`), or the
//! scenario must set the cut-offs itself: an error says so.

use crate::compile::load_sizes;
use crate::error::ScenarioError;
use crate::scenario::Scenario;
use crate::workload_spec::WorkloadConfig;
use pl2_sim::net::topology::Graph;
use pl2_sim::sim::TransportConfig;
use pl2_sim::transport::homa::cutoffs::from_workload;
use pl2_sim::transport::homa::layout::Layout;
use pl2_sim::transport::homa::{HomaConfig, HomaPreset};
use pl2_sim::units::Bytes;
use std::path::Path;

/// Fills the derived fields of every Homa transport of `sc`.
pub fn derive(sc: &mut Scenario, base_dir: &Path) -> Result<(), ScenarioError> {
    let names: Vec<String> = sc.transports.keys().cloned().collect();
    for t in 0..=names.len() {
        let (field, name) = if t == 0 { ("transport".to_string(), None) } else { (format!("transports.{}", names[t - 1]), Some(names[t - 1].as_str())) };
        let cfg = match name {
            None => &sc.transport,
            Some(n) => &sc.transports[n],
        };
        let TransportConfig::Homa(cfg) = cfg else { continue };
        let derived = derive_one(sc, cfg, name, &field, base_dir)?;
        match name {
            None => sc.transport = TransportConfig::Homa(derived),
            Some(n) => *sc.transports.get_mut(n).expect("named above") = TransportConfig::Homa(derived),
        }
    }
    Ok(())
}

fn derive_one(sc: &Scenario, cfg: &HomaConfig, name: Option<&str>, field: &str, base_dir: &Path) -> Result<HomaConfig, ScenarioError> {
    let net = &sc.network;
    let bad = |e: &dyn std::fmt::Display| ScenarioError::field(field, "", e.to_string(), "see docs/scenario-reference.md, [transport] kind = \"homa\"");
    let mut out = cfg.clone();
    let graph = Graph::build(&net.topology, &net.link).map_err(|e| ScenarioError::from_build(e.into()))?;
    let rate = graph.links.iter().find(|l| l.a == 0 || l.b == 0).map(|l| l.rate).unwrap_or(net.link.rate);
    let base_rtt = pl2_sim::sim::base_round_trip(net).map_err(ScenarioError::from_build)?;
    let rtt = cfg.rtt_wire_bytes(net.framing, net.mtu.0, base_rtt, rate).map_err(|e| bad(&e))?;
    if cfg.rtt_bytes.is_none() && cfg.rtt_packets.is_none() && cfg.preset == HomaPreset::Reference {
        out.rtt_bytes = Some(Bytes(rtt));
    }
    if cfg.unscheduled_cutoffs.is_some() {
        return Ok(out);
    }
    let fixed = (cfg.unscheduled_levels.is_some() || cfg.scheduled_levels.is_some()).then(|| cfg.levels()).transpose().map_err(|e| bad(&e))?;
    if let Some((1, s)) = fixed {
        // One unscheduled level needs no cut-off, whatever the workloads.
        out.unscheduled_levels = Some(1);
        out.scheduled_levels = Some(s);
        out.unscheduled_cutoffs = Some(Vec::new());
        return Ok(out);
    }
    // The Poisson workloads on this transport, and their distributions.
    let mut dists: Vec<(usize, &String, &Option<String>, &Option<Bytes>)> = Vec::new();
    for (i, w) in sc.workloads.iter().enumerate() {
        if w.transport.as_deref() != name {
            continue;
        }
        if let WorkloadConfig::Poisson { sizes, sizes_format, truncate, .. } = &w.kind {
            if let Some(&(j, ..)) = dists.iter().find(|d| (d.1, d.2, d.3) != (sizes, sizes_format, truncate)) {
                return Err(ScenarioError::field(
                    &format!("workload[{i}].sizes"),
                    format!("\"{sizes}\""),
                    format!("the same distribution as workload[{j}]: {field} is Homa, whose unscheduled cut-offs come from one size distribution"),
                    format!("set {field}.unscheduled_levels and unscheduled_cutoffs, or carry the workloads on separate transports"),
                ));
            }
            dists.push((i, sizes, sizes_format, truncate));
        }
    }
    let Some(&(i, sizes, format, truncate)) = dists.first() else { return Ok(out) };
    let at = format!("workload[{i}].sizes");
    let cdf = load_sizes(sizes, format.as_deref(), base_dir).map_err(|e| ScenarioError::field(&at, "", e.to_string(), ""))?;
    let cdf = match truncate {
        Some(t) => cdf.truncated(t.0).map_err(|e| ScenarioError::field(&at, "", e.to_string(), ""))?,
        None => cdf,
    };
    let builtin = (truncate.is_none() && pl2_sim::workload::BUILTIN_NAMES.contains(&sizes.as_str())).then_some(sizes.as_str());
    let layout = Layout::new(net.framing, cfg.headers, net.mtu.0, rtt);
    let split = from_workload(&cdf, builtin, &layout, fixed);
    out.unscheduled_levels = Some(split.unscheduled_levels);
    out.scheduled_levels = Some(split.scheduled_levels);
    out.unscheduled_cutoffs = Some(split.cutoffs.into_iter().map(Bytes).collect());
    Ok(out)
}
