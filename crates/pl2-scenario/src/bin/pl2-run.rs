//! `pl2-run SCENARIO.toml OUT_DIR`: runs a scenario from Rust alone (no Python), streams
//! its tables into OUT_DIR and prints summary.json. The `pl2` command line (Python) is
//! the full front; this is for quick checks and environments without Python. OUT_DIR
//! must not exist or be an empty directory: this runner never writes over anything.

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
    if let Some(why) = refuse_out_dir(Path::new(out)) {
        eprintln!("error: OUT_DIR \"{out}\" {why}; give a new or empty directory");
        return ExitCode::from(2);
    }
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

/// Why OUT_DIR cannot be written (it exists and is not an empty directory), or None.
fn refuse_out_dir(out: &Path) -> Option<&'static str> {
    if out.as_os_str().is_empty() {
        return Some("is empty");
    }
    match std::fs::symlink_metadata(out) {
        Err(_) => None,
        Ok(m) if !m.is_dir() => Some("exists and is not a directory"),
        Ok(_) => match std::fs::read_dir(out).map(|mut entries| entries.next().is_none()) {
            Ok(true) => None,
            Ok(false) => Some("exists and is not empty"),
            Err(_) => Some("cannot be read"),
        },
    }
}
