//! The run summary (`summary.json`): headline figures computed from the tables and the
//! counters, plus provenance. No wall-clock figures, so the same seed gives the same
//! bytes.

use crate::tables::{node_name, port_ends, Collector, Window};
use crate::window_stats::Stats;
use pl2_sim::metrics::DropReason;
use pl2_sim::sim::{Simulation, StopReason};
use serde_json::{json, Map, Value};

/// p50, p99 and p99.9 (the last only with at least 10⁴ samples), mean and max.
fn stats(mut v: Vec<f64>, unfinished: usize) -> Value {
    v.sort_by(|a, b| a.partial_cmp(b).expect("no NaN"));
    let mean = (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
    serde_json::to_value(Stats::from_sorted(v.len(), unfinished, mean, |i| v[i])).expect("plain numbers")
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

/// The summary of a run. Fails only if the window's spilled latencies cannot be read back.
/// `drops` counts dropped frames by reason; `drop_causes` groups them: `buffer` (a full
/// buffer, port or trimming queue FIFO: congestion loss), `program` (a switch program's deliberate drop, e.g.
/// PL2's rule against unsolicited bursts, which the sender resends), `fault` (injected).
pub fn summarise(sim: &Simulation, col: &mut Collector, w: Window, stop: StopReason, canonical: &str, hash: &str, seed: u64) -> std::io::Result<Value> {
    let messages = serde_json::to_value(col.window_messages.statistics()?).expect("plain numbers");
    let c = sim.counters();
    let graph = sim.graph();
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
    let by_cause = |cause: &str| DropReason::ALL.iter().filter(|r| r.cause() == cause).map(|&r| c.drops[r as usize]).sum::<u64>();
    let drop_causes = json!({
        "buffer": by_cause("buffer"),
        "program": by_cause("program"),
        "fault": by_cause("fault"),
    });
    let mut maxq = Map::new();
    for (p, q) in sim.port_max_queue().into_iter().enumerate() {
        if q > 0 {
            let (a, b) = port_ends(graph, p as u32);
            maxq.insert(format!("{}->{}", node_name(graph, a), node_name(graph, b)), json!(q));
        }
    }
    let mut trims = Map::new();
    for (p, n) in sim.port_trims().into_iter().enumerate() {
        if n > 0 {
            let (a, b) = port_ends(graph, p as u32);
            trims.insert(format!("{}->{}", node_name(graph, a), node_name(graph, b)), json!(n));
        }
    }
    let mut summary = json!({
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
            "trims": c.trims,
            "headers_returned": c.headers_returned,
            "packets_in_flight": sim.packets_in_flight(),
            "packets_peak": sim.packets_peak(),
            "data_wire_bytes": c.data_wire_bytes,
            "control_wire_bytes": c.control_wire_bytes,
            "messages_created": c.messages_created,
            "messages_finished": c.messages_finished,
            "messages_lost": c.messages_lost,
        },
        "messages": messages,
        "rpcs": rpc_summary(col, span_s),
        "iterations": iteration_summary(col),
        "goodput_gbps": goodput,
        "drops": drops,
        "drop_causes": drop_causes,
        "max_queue_bytes": maxq,
        "trims_by_port": trims,
        "pfc": sim.pfc_stats(),
        "sfc": sim.sfc_stats(),
        "circuit": sim.circuit_stats(),
        "pause_deadlock": sim.pause_deadlock().map(|d| json!({
            "at_ps": d.at.0,
            "prio": d.prio,
            "ports": d.ports.iter().map(|&p| {
                let (a, b) = port_ends(graph, p);
                format!("{}->{}", node_name(graph, a), node_name(graph, b))
            }).collect::<Vec<_>>(),
        })),
    });
    // Each module's counters under its name (`null` when the run does not use it).
    let stats = sim.module_stats();
    summary.as_object_mut().expect("an object").insert("diagnosis".into(), json!(stats.diagnose(c)));
    let Value::Object(modules) = serde_json::to_value(stats).expect("plain counters") else { unreachable!("counters by module name") };
    summary.as_object_mut().expect("an object").extend(modules);
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::window_stats::{WindowMessage, WindowSamples};

    fn summary_of(msgs: &[WindowMessage]) -> Value {
        let mut w = WindowSamples::default();
        for &m in msgs {
            w.push(m).unwrap();
        }
        serde_json::to_value(w.statistics().unwrap()).unwrap()
    }

    fn m(latency_ps: u64, ideal_ps: u64) -> WindowMessage {
        WindowMessage { latency_ps, ideal_ps }
    }

    /// Worked by hand: four finished messages and one unfinished, in arrival order. By
    /// latency 10, 20, 40, 80 (then +∞); by slowdown 40/40 = 1, 80/40 = 2, 10/2 = 5,
    /// 20/2 = 10, so the two orders differ. Nearest rank of 5 samples: p50 is the 3rd,
    /// p99 the 5th (the unfinished one, so null).
    #[test]
    fn message_statistics_rank_latency_and_slowdown_separately() {
        let s = summary_of(&[m(80, 40), m(10, 2), m(WindowMessage::UNFINISHED, 5), m(40, 40), m(20, 2)]);
        assert_eq!(s["count"], 5);
        assert_eq!(s["finished"], 4);
        assert_eq!(s["unfinished"], 1);
        let (lat, sd) = (&s["latency_ps"], &s["slowdown"]);
        assert_eq!(lat["p50"], 40.0);
        assert_eq!(lat["p99"], Value::Null);
        assert_eq!(lat["p999"], Value::Null, "fewer than 10^4 samples");
        assert_eq!(lat["mean_finished"], 37.5);
        assert_eq!(lat["max_finished"], 80.0);
        assert_eq!(sd["p50"], 5.0);
        assert_eq!(sd["mean_finished"], 4.5);
        assert_eq!(sd["max_finished"], 10.0);
        // Over the four finished alone: p50 is the 2nd, p99 the 4th.
        assert_eq!((lat["p50_finished"].clone(), lat["p99_finished"].clone()), (20.0.into(), 80.0.into()));
        assert_eq!((sd["p50_finished"].clone(), sd["p99_finished"].clone()), (2.0.into(), 10.0.into()));
        assert_eq!(lat["p999_finished"], Value::Null, "fewer than 10^4 samples");
    }

    /// With nothing finished every statistic is null; with nothing at all, too.
    #[test]
    fn message_statistics_without_finished_messages() {
        let s = summary_of(&[m(WindowMessage::UNFINISHED, 3)]);
        assert_eq!((s["finished"].clone(), s["latency_ps"]["p50"].clone(), s["slowdown"]["max_finished"].clone()), (0.into(), Value::Null, Value::Null));
        let s = summary_of(&[]);
        assert_eq!((s["count"].clone(), s["latency_ps"]["mean_finished"].clone()), (0.into(), Value::Null));
    }
}
