//! `pl2-run SCENARIO.toml OUT_DIR`: runs a scenario from Rust alone (no Python), streams
//! its tables into OUT_DIR and prints summary.json. The `pl2` command line (Python) is
//! the full front; this is for quick checks and environments without Python.

use pl2_scenario::output::ParquetSink;
use pl2_scenario::{run_scenario, Scenario};
use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [scenario, out] = args.as_slice() else {
        eprintln!("usage: pl2-run SCENARIO.toml OUT_DIR");
        return ExitCode::from(2);
    };
    let path = Path::new(scenario);
    let base = path.parent().unwrap_or(Path::new("."));
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{scenario}: {e}");
            return ExitCode::from(2);
        }
    };
    let sc = match Scenario::parse(&text, base) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{scenario}: {e}");
            return ExitCode::from(2);
        }
    };
    let result = ParquetSink::new(Path::new(out)).and_then(|mut sink| {
        let r = run_scenario(&sc, base, &mut sink, &mut |_| true).map_err(std::io::Error::other)?;
        sink.finish(&r)?;
        Ok(r)
    });
    match result {
        Ok(r) => {
            println!("{}", serde_json::to_string_pretty(&r.summary).expect("json"));
            eprintln!("simulated in {:.3} s wall", r.wall.as_secs_f64());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(1)
        }
    }
}
