//! Running a scenario: build the simulation, run it in slices of simulated time
//! (draining records into compact columns between slices), and produce the tables and
//! the summary.

use crate::compile::compile;
use crate::error::ScenarioError;
use crate::scenario::Scenario;
use crate::summary::summarise;
use crate::tables::{Collector, Window};
use arrow_array::RecordBatch;
use pl2_sim::sim::{Progress, Simulation, StopAt, StopReason};
use pl2_sim::units::SimTime;
use std::path::Path;

/// A finished (or interrupted) run.
pub struct RunOutput {
    pub summary: serde_json::Value,
    pub tables: Vec<(&'static str, RecordBatch)>,
    pub stop: StopReason,
    /// Wall-clock time of the simulation proper (kept out of the summary).
    pub wall: std::time::Duration,
}

/// Runs `sc`. `progress` is called about every 100 ms of wall time; returning `false`
/// stops the run early (the output then covers what was simulated).
pub fn run_scenario(
    sc: &Scenario,
    base_dir: &Path,
    progress: &mut dyn FnMut(&Progress) -> bool,
) -> Result<RunOutput, ScenarioError> {
    let spec = compile(sc, base_dir)?;
    let mut sim = Simulation::new(spec).map_err(ScenarioError::from_build)?;
    let end = SimTime(sc.run.duration.0);
    let slice = (end.0 / 200).max(1_000_000);
    let mut col = Collector::default();
    let wall0 = std::time::Instant::now();
    let mut budget = sc.run.event_budget;
    let stop = loop {
        let until = SimTime((sim.now().0 + slice).min(end.0));
        let before = sim.counters().events;
        let r = sim.run(
            StopAt { end: until, all_delivered: sc.run.stop_when_delivered, event_budget: budget },
            std::time::Duration::from_millis(100),
            &mut |p: &Progress| progress(&Progress { end, ..*p }),
        );
        if let Some(b) = budget.as_mut() {
            *b = b.saturating_sub(sim.counters().events - before);
        }
        col.ingest(sim.drain_records());
        match r {
            StopReason::EndTime if until < end => continue,
            other => break other,
        }
    };
    let wall = wall0.elapsed();
    sim.finish();
    col.ingest(sim.drain_records());
    let w = Window {
        from: SimTime(sc.run.warmup.0),
        until: SimTime(sc.run.measure_until.unwrap_or(sc.run.duration).0),
    };
    let canonical = sc.canonical();
    let summary = summarise(&sim, &col, w, stop, &canonical, &sc.hash(), sc.seed);
    let tables = col.into_batches(sim.graph(), w);
    Ok(RunOutput { summary, tables, stop, wall })
}
