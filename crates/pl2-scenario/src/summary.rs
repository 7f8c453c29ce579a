//! The run summary (`summary.json`): headline figures computed from the tables and the
//! counters, plus provenance. No wall-clock figures, so the same seed gives the same
//! bytes.

use crate::tables::{node_name, port_ends, Collector, Window};
use pl2_sim::metrics::DropReason;
use pl2_sim::sim::{Simulation, StopReason};
use pl2_sim::sim::TransportConfig;
use serde_json::{json, Map, Value};

/// Nearest-rank percentile of `sorted` (ascending) where `unfinished` more samples are
/// +∞: `None` when the rank falls on an unfinished message.
fn percentile(sorted: &[f64], unfinished: usize, q: f64) -> Option<f64> {
    let n = sorted.len() + unfinished;
    if n == 0 {
        return None;
    }
    let rank = ((q * n as f64).ceil() as usize).clamp(1, n);
    sorted.get(rank - 1).copied()
}

/// p50, p99 and p99.9 (the last only with at least 10⁴ samples), mean and max.
fn stats(mut v: Vec<f64>, unfinished: usize) -> Value {
    v.sort_by(|a, b| a.partial_cmp(b).expect("no NaN"));
    let n = v.len() + unfinished;
    let mean = if v.is_empty() { None } else { Some(v.iter().sum::<f64>() / v.len() as f64) };
    json!({
        "p50": percentile(&v, unfinished, 0.5),
        "p99": percentile(&v, unfinished, 0.99),
        "p999": if n >= 10_000 { percentile(&v, unfinished, 0.999) } else { None },
        "mean_finished": mean,
        "max_finished": v.last(),
    })
}

/// RPCs started in the window: count, two-way latency; transactions per second from the
/// responses delivered in the window. `null` without RPC workloads.
fn rpc_summary(col: &Collector, span_s: f64) -> Value {
    let r = &col.window_rpcs;
    if r.is_empty() && col.window_rpc_completions == 0 {
        return Value::Null;
    }
    let unfinished = r.iter().filter(|x| x.is_none()).count();
    let lat: Vec<f64> = r.iter().flatten().map(|&l| l as f64).collect();
    json!({
        "count": r.len(),
        "finished": r.len() - unfinished,
        "unfinished": unfinished,
        "completed_in_window": col.window_rpc_completions,
        "tps": if span_s > 0.0 { Some(col.window_rpc_completions as f64 / span_s) } else { None },
        "latency_ps": stats(lat, unfinished),
    })
}

/// Shuffle iterations started in the window: count, time per iteration, their total.
/// `null` without shuffles.
fn iteration_summary(col: &Collector) -> Value {
    let it = &col.window_iterations;
    if it.is_empty() {
        return Value::Null;
    }
    let unfinished = it.iter().filter(|x| x.is_none()).count();
    let times: Vec<f64> = it.iter().flatten().map(|&t| t as f64).collect();
    let total: u64 = it.iter().flatten().sum();
    json!({
        "count": it.len(),
        "finished": it.len() - unfinished,
        "unfinished": unfinished,
        "time_ps": stats(times, unfinished),
        "total_ps": total,
    })
}

pub fn summarise(sim: &Simulation, col: &Collector, w: Window, stop: StopReason, canonical: &str, hash: &str, seed: u64) -> Value {
    let msgs = &col.window_messages;
    let unfinished = msgs.iter().filter(|m| m.latency().is_none()).count();
    let lat: Vec<f64> = msgs.iter().filter_map(|m| m.latency().map(|l| l as f64)).collect();
    let sd: Vec<f64> = msgs.iter().filter_map(|m| m.slowdown()).collect();
    let c = sim.counters();
    let graph = sim.graph();
    let tps = sim.transport_configs();
    let until = w.until.min(sim.now());
    let span_s = (until.0.saturating_sub(w.from.0)) as f64 * 1e-12;
    let mut goodput = Map::new();
    for (h, b) in col.window_goodput.iter().enumerate() {
        if *b > 0 && span_s > 0.0 {
            goodput.insert(format!("h{h}"), json!(*b as f64 * 8.0 / span_s / 1e9));
        }
    }
    let mut drops = Map::new();
    for r in DropReason::ALL {
        drops.insert(r.name().into(), json!(c.drops[r as usize]));
    }
    let mut maxq = Map::new();
    for (p, q) in sim.port_max_queue().into_iter().enumerate() {
        if q > 0 {
            let (a, b) = port_ends(graph, p as u32);
            maxq.insert(format!("{}->{}", node_name(graph, a), node_name(graph, b)), json!(q));
        }
    }
    json!({
        "scenario": canonical,
        "scenario_hash": hash,
        "seed": seed,
        "build": crate::provenance::build_info(),
        "stop_reason": format!("{stop:?}"),
        "sim_time_ps": sim.now().0,
        "window": {"from_ps": w.from.0, "until_ps": until.0},
        "counters": {
            "events": c.events,
            "hops": c.hops,
            "data_hops": c.data_hops,
            "packets_created": c.packets_created,
            "packets_delivered": c.packets_delivered,
            "packets_consumed": c.packets_consumed,
            "packets_dropped": c.total_drops(),
            "packets_in_flight": sim.packets_in_flight(),
            "packets_peak": sim.packets_peak(),
            "data_wire_bytes": c.data_wire_bytes,
            "control_wire_bytes": c.control_wire_bytes,
            "messages_created": c.messages_created,
            "messages_finished": c.messages_finished,
            "messages_lost": c.messages_lost,
        },
        "messages": {
            "count": msgs.len(),
            "finished": msgs.len() - unfinished,
            "unfinished": unfinished,
            "latency_ps": stats(lat, unfinished),
            "slowdown": stats(sd, unfinished),
        },
        "rpcs": rpc_summary(col, span_s),
        "iterations": iteration_summary(col),
        "goodput_gbps": goodput,
        "drops": drops,
        "max_queue_bytes": maxq,
        // Each protocol's counters, summed over every transport of that kind in the run.
        "pl2": if tps.iter().any(|t| matches!(t, TransportConfig::Pl2(_)) || matches!(t, TransportConfig::Tcp(c) if c.pl2_config().is_some())) {
            // TCP over PL2: the PL2 layer's and the ToR's counters beside TCP's.
            serde_json::to_value(sim.pl2_stats()).expect("plain counters")
        } else {
            Value::Null
        },
        "rds": if tps.iter().any(|t| matches!(t, TransportConfig::Rds(_))) {
            serde_json::to_value(sim.rds_stats()).expect("plain counters")
        } else {
            Value::Null
        },
        "tcp": if tps.iter().any(|t| matches!(t, TransportConfig::Tcp(_))) {
            serde_json::to_value(sim.tcp_stats()).expect("plain counters")
        } else {
            Value::Null
        },
    })
}
