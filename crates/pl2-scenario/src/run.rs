//! Running a scenario: build the simulation, run it in slices of simulated time
//! (draining records into compact columns between slices and handing full batches to a
//! sink), and produce the summary.

use crate::compile::compile_spec;
use crate::error::ScenarioError;
use crate::heap_trim::HeapTrimmer;
use crate::scenario::Scenario;
use crate::summary::summarise;
use crate::tables::{Collector, TableSink, Window};
use pl2_sim::sim::{Progress, ProgressClock, Simulation, StopAt, StopReason};
use pl2_sim::units::SimTime;
use std::path::Path;

/// A finished (or interrupted) run.
pub struct RunOutput {
    pub summary: serde_json::Value,
    pub stop: StopReason,
    /// Wall-clock time of the simulation proper (kept out of the summary).
    pub wall: std::time::Duration,
    /// Wall-clock time spent in the sink (writing outputs).
    pub sink_wall: std::time::Duration,
}

/// Why a run could not produce its output.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    #[error("writing results: {0}")]
    Io(#[from] std::io::Error),
}

/// Longest stretch of simulated time between two drains of the simulation's records.
const MAX_SLICE_PS: u64 = 50_000_000;
/// Most events between two drains. Records come from events (a drop, a probe, a closed
/// window), so this bounds the records buffered per slice whatever the run's length or
/// event rate; a bound in simulated time alone lets a busy run (a probe per ACK) buffer
/// hundreds of thousands of records per slice, and more in a longer run, whose slices
/// are longer.
const MAX_SLICE_EVENTS: u64 = 1 << 14;

/// Runs `sc`, handing tables to `sink`. `progress` is called about every 100 ms of
/// wall time; returning `false` stops the run early (the output then covers what was
/// simulated).
pub fn run_scenario(
    sc: &Scenario,
    base_dir: &Path,
    sink: &mut dyn TableSink,
    progress: &mut dyn FnMut(&Progress) -> bool,
) -> Result<RunOutput, RunError> {
    // `Scenario::parse` already built the model once to validate it.
    let spec = compile_spec(sc, base_dir)?;
    let mut sim = Simulation::new(spec).map_err(|e| crate::compile::build_error(sc, e))?;
    let end = SimTime(sc.run.duration.0);
    // Records are drained every slice of simulated time, cut short after
    // MAX_SLICE_EVENTS events. Fixed upper bounds keep the buffered records (port and
    // goodput windows, drops, messages, probes) independent of the run's length, so peak
    // memory stays flat on long runs.
    let slice = (end.0 / 200).clamp(1_000_000, MAX_SLICE_PS);
    let w = Window { from: SimTime(sc.run.warmup.0), until: SimTime(sc.run.measure_until.unwrap_or(sc.run.duration).0) };
    use crate::workload_spec::WorkloadConfig;
    let has = |f: fn(&WorkloadConfig) -> bool| sc.workloads.iter().any(|w| f(&w.kind));
    let mut col = Collector::new(w, sim.host_count())
        .with_app_tables(has(|x| matches!(x, WorkloadConfig::Rpc(_))), has(|x| matches!(x, WorkloadConfig::PsShuffle(_))))
        .with_transport_names(sc.transports.keys().map(String::as_str))
        .with_framing(sc.network.framing);
    col.prepare(sim.graph(), sink)?;
    let wall0 = std::time::Instant::now();
    let mut sink_wall = std::time::Duration::ZERO;
    let mut budget = sc.run.event_budget;
    let mut clock = ProgressClock::new(std::time::Duration::from_millis(100));
    let mut trimmer = HeapTrimmer::new();
    let stop = loop {
        let until = SimTime((sim.now().0 + slice).min(end.0));
        let before = sim.counters().events;
        let slice_budget = budget.map_or(MAX_SLICE_EVENTS, |b| b.min(MAX_SLICE_EVENTS));
        let r = sim.run(
            StopAt { end: until, all_delivered: sc.run.stop_when_delivered, event_budget: Some(slice_budget) },
            &mut clock,
            &mut |p: &Progress| progress(&Progress { end, ..*p }),
        );
        if let Some(b) = budget.as_mut() {
            *b = b.saturating_sub(sim.counters().events - before);
        }
        col.ingest(sim.drain_records())?;
        let t = std::time::Instant::now();
        col.flush(sim.graph(), sink, false)?;
        sink_wall += t.elapsed();
        trimmer.tick();
        match r {
            StopReason::EndTime if until < end => continue,
            // The slice's event bound, not the scenario's budget, stopped it.
            StopReason::EventBudget if budget.is_none_or(|b| b > 0) => continue,
            other => break other,
        }
    };
    sim.finish();
    col.ingest(sim.drain_records())?;
    let t = std::time::Instant::now();
    col.flush(sim.graph(), sink, true)?;
    sink_wall += t.elapsed();
    let wall = wall0.elapsed() - sink_wall;
    let summary = summarise(&sim, &mut col, w, stop, &sc.canonical(), &sc.identity(base_dir), sc.seed)?;
    Ok(RunOutput { summary, stop, wall, sink_wall })
}
