//! `pl2._native`: the binding. Every function is a one-line delegation to
//! `pl2-scenario`; documentation, units and plotting live in the Python package. All
//! error mapping is in [`scenario_error`]. A run releases the GIL, polls the Python
//! progress callback at most ~10 times a second, and hands its tables over by the Arrow
//! C data interface.

use arrow::pyarrow::{FromPyArrow, ToPyArrow};
use arrow_array::RecordBatch;
use pl2_scenario::output::{MemorySink, ParquetSink};
use pl2_scenario::{run_scenario, RunError, Scenario, ScenarioError};
use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::Path;

create_exception!(_native, PyScenarioError, PyValueError, "A scenario pl2 cannot run; the message names the field.");

/// The one place where Rust errors become Python exceptions.
fn scenario_error(e: ScenarioError) -> PyErr {
    PyScenarioError::new_err(e.to_string())
}

fn run_error(e: RunError) -> PyErr {
    match e {
        RunError::Scenario(s) => scenario_error(s),
        RunError::Io(io) => pyo3::exceptions::PyOSError::new_err(io.to_string()),
    }
}

/// Calls the Python progress callback (if any) with the GIL. `False` stops the run; an
/// exception (or a non-bool return) stops it too and is kept in `err`, to be raised
/// once the run has stopped.
fn poll(progress: &Option<Py<PyAny>>, err: &mut Option<PyErr>, p: &pl2_sim::sim::Progress) -> bool {
    match progress {
        None => true,
        Some(cb) => Python::attach(|py| {
            match cb.call1(py, (p.now.0, p.end.0, p.events, p.wall.as_secs_f64())).and_then(|r| r.extract::<bool>(py)) {
                Ok(go) => go,
                Err(e) => {
                    *err = Some(e);
                    false
                }
            }
        }),
    }
}

fn parse(toml_text: &str, base_dir: &str) -> PyResult<Scenario> {
    Scenario::parse(toml_text, Path::new(base_dir)).map_err(scenario_error)
}

/// Canonical TOML of a scenario (raises ScenarioError).
#[pyfunction]
fn validate(toml_text: &str, base_dir: &str) -> PyResult<String> {
    parse(toml_text, base_dir).map(|s| s.canonical())
}

/// Stable hash of the canonical scenario.
#[pyfunction]
fn scenario_hash(toml_text: &str, base_dir: &str) -> PyResult<String> {
    parse(toml_text, base_dir).map(|s| s.identity(Path::new(base_dir)))
}

/// Build provenance as a dict.
#[pyfunction]
fn build_info(py: Python<'_>) -> PyResult<Py<PyAny>> {
    json_to_py(py, &pl2_scenario::provenance::build_info())
}

fn json_to_py(py: Python<'_>, v: &serde_json::Value) -> PyResult<Py<PyAny>> {
    let json = py.import("json")?;
    Ok(json.call_method1("loads", (v.to_string(),))?.unbind())
}

/// Runs a scenario; returns (summary JSON text, {table name: pyarrow.Table}).
#[pyfunction]
#[pyo3(signature = (toml_text, base_dir, progress=None))]
fn run(py: Python<'_>, toml_text: &str, base_dir: &str, progress: Option<Py<PyAny>>) -> PyResult<(String, Py<PyDict>)> {
    let sc = parse(toml_text, base_dir)?;
    let mut sink = MemorySink::default();
    let mut err = None;
    let out = py.detach(|| run_scenario(&sc, Path::new(base_dir), &mut sink, &mut |p| poll(&progress, &mut err, p)));
    if let Some(e) = err {
        return Err(e);
    }
    let out = out.map_err(run_error)?;
    // Each table goes over as a pyarrow.Table of the collector's batches, not one
    // concatenated batch: a string column of a long run can pass 2 GiB, more than one
    // Arrow batch's 32-bit offsets hold.
    let from_batches = py.import("pyarrow")?.getattr("Table")?.getattr("from_batches")?;
    let tables = PyDict::new(py);
    for (name, batches) in sink.into_batches() {
        let list = batches.iter().map(|b| b.to_pyarrow(py)).collect::<PyResult<Vec<_>>>()?;
        tables.set_item(name, from_batches.call1((list,))?)?;
    }
    Ok((serde_json::to_string_pretty(&out.summary).expect("json"), tables.unbind()))
}

/// Runs a scenario keeping its tables on disk (bounded memory), then writes one Parquet
/// file per table, `summary.json` and `scenario.toml` into `out_dir`; returns the
/// summary JSON.
/// `writing()` is called, if given, when the simulation is over and the Parquet files are
/// about to be written; if it returns False (the run was interrupted and its result will
/// be discarded) they are not written, so Ctrl-C does not wait for them.
#[pyfunction]
#[pyo3(signature = (toml_text, base_dir, out_dir, progress=None, writing=None))]
fn run_to_dir(py: Python<'_>, toml_text: &str, base_dir: &str, out_dir: &str, progress: Option<Py<PyAny>>, writing: Option<Py<PyAny>>) -> PyResult<String> {
    let sc = parse(toml_text, base_dir)?;
    let mut err = None;
    let out = py.detach(|| {
        let mut sink = ParquetSink::new(Path::new(out_dir))?;
        let out = run_scenario(&sc, Path::new(base_dir), &mut sink, &mut |p| poll(&progress, &mut err, p))?;
        let write = match &writing {
            None => true,
            Some(cb) => Python::attach(|py| cb.call0(py).and_then(|r| r.extract::<bool>(py))).unwrap_or_else(|e| {
                err.get_or_insert(e);
                false
            }),
        };
        if write {
            sink.finish(&out)?;
        }
        Ok::<_, RunError>(out)
    });
    if let Some(e) = err {
        return Err(e);
    }
    let out = out.map_err(run_error)?;
    Ok(serde_json::to_string_pretty(&out.summary).expect("json"))
}

/// Writes one table (its batches, all of one schema) to the Parquet file `path` with the
/// writer `run_to_dir` uses, so a table gives the same bytes wherever it is written.
#[pyfunction]
fn write_parquet(py: Python<'_>, path: &str, batches: Vec<Bound<'_, PyAny>>) -> PyResult<()> {
    let batches = batches.iter().map(RecordBatch::from_pyarrow_bound).collect::<PyResult<Vec<_>>>()?;
    py.detach(|| pl2_scenario::output::write_parquet(Path::new(path), batches.into_iter().map(Ok)))?;
    Ok(())
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("ScenarioError", m.py().get_type::<PyScenarioError>())?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(scenario_hash, m)?)?;
    m.add_function(wrap_pyfunction!(build_info, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(run_to_dir, m)?)?;
    m.add_function(wrap_pyfunction!(write_parquet, m)?)?;
    Ok(())
}
