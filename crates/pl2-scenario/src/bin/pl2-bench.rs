//! `pl2-bench`: the speed benchmark. Runs the scenarios in `bench/` (release build with
//! LTO: `cargo run --profile bench --bin pl2-bench`), each in a fresh child process so
//! that peak memory is per scenario, five times, and prints the medians: wall time (the
//! run with its outputs, in the child process), simulation-only time, events/s, hops/s
//! (all and data-only), events per hop, events per delivered packet, share of packets
//! dropped, share of wall time spent writing outputs, peak RSS, the part of it that is
//! simulated state rather than simulator overhead (the most packets alive at once, 64 bytes
//! each: frames in queues, on wires and in hosts' send paths), and the rest; and the wall
//! time per byte of payload delivered to applications (ns/B), which compares transports
//! that spend different numbers of control frames per data frame on the same traffic
//! (benchmarks 2, 5 and 6: raw Ethernet, DCTCP and NDP on one workload).
//!
//! `pl2-bench [--runs N] [--scale F] [SCENARIO.toml ...]`; `--scale` multiplies every
//! scenario's duration (the memory-flatness check runs scenario 2 at 1× and 10×). The
//! like-for-like scenarios against htsim run the same way:
//! `pl2-bench ../shared/bench/htsim-dctcp/*.toml` (A–D, DCTCP on the flows htsim runs).

use pl2_scenario::output::ParquetSink;
use pl2_scenario::{run_scenario, Scenario};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("VmHWM:")).map(|l| l.split_whitespace().nth(1).unwrap_or("0").parse().unwrap_or(0)))
        .unwrap_or(0)
}

/// Child mode: one run, prints one line of key=value figures.
fn child(path: &Path, scale: f64) {
    let text = std::fs::read_to_string(path).expect("read scenario");
    let base = path.parent().unwrap_or(Path::new("."));
    let mut sc = Scenario::parse(&text, base).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    sc.run.duration.0 = (sc.run.duration.0 as f64 * scale) as u64;
    let t0 = Instant::now();
    let dir = std::env::temp_dir().join(format!("pl2-bench-{}", std::process::id()));
    let mut sink = ParquetSink::new(&dir).expect("output directory");
    let out = run_scenario(&sc, base, &mut sink, &mut |_| true).expect("run");
    let tw = Instant::now();
    sink.finish(&out).expect("write outputs");
    let sim_wall = out.wall.as_secs_f64();
    let write_wall = out.sink_wall.as_secs_f64() + tw.elapsed().as_secs_f64();
    let _ = std::fs::remove_dir_all(&dir);
    let total = t0.elapsed().as_secs_f64();
    let c = &out.summary["counters"];
    let g = |k: &str| c[k].as_u64().unwrap_or(0) as f64;
    let w = &out.summary["window"];
    let span_s = (w["until_ps"].as_f64().unwrap_or(0.0) - w["from_ps"].as_f64().unwrap_or(0.0)) * 1e-12;
    let gbps: f64 = out.summary["goodput_gbps"].as_object().map(|m| m.values().filter_map(|v| v.as_f64()).sum()).unwrap_or(0.0);
    let goodput_bytes = gbps * 1e9 / 8.0 * span_s;
    println!(
        "wall={total} sim_wall={sim_wall} write_wall={write_wall} goodput_bytes={goodput_bytes} events={} hops={} data_hops={} delivered={} created={} dropped={} rss_kib={} peak_packets={}",
        g("events"),
        g("hops"),
        g("data_hops"),
        g("packets_delivered"),
        g("packets_created"),
        g("packets_dropped"),
        peak_rss_kib(),
        g("packets_peak")
    );
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut runs = 5;
    let mut scale = 1.0;
    let mut files = Vec::new();
    let mut child_mode = false;
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--runs" => {
                i += 1;
                runs = args[i].parse().expect("--runs N");
            }
            "--scale" => {
                i += 1;
                scale = args[i].parse().expect("--scale F");
            }
            "--child" => child_mode = true,
            "-h" | "--help" => {
                println!("usage: pl2-bench [--runs N] [--scale F] [SCENARIO.toml ...] (default: bench/*.toml)");
                return;
            }
            f => files.push(PathBuf::from(f)),
        }
        i += 1;
    }
    if child_mode {
        return child(&files[0], scale);
    }
    if files.is_empty() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench");
        let mut v: Vec<PathBuf> = std::fs::read_dir(&root).expect("bench/").flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "toml")).collect();
        v.sort();
        files = v;
    }
    let exe = std::env::current_exe().expect("own path");
    println!(
        "{:<34} {:>8} {:>8} {:>8} {:>9} {:>9} {:>7} {:>10} {:>8} {:>8} {:>7} {:>8} {:>8} {:>8} {:>8}",
        "scenario (median of runs)", "wall s", "sim s", "Mev/s", "Mhops/s", "Mdata/s", "ev/hop", "ev/deliv", "drop %", "write %", "runs", "RSS MiB", "pkt MiB", "rest MiB", "ns/B"
    );
    for f in &files {
        let mut fig: std::collections::BTreeMap<String, Vec<f64>> = Default::default();
        for _ in 0..runs {
            let o = Command::new(&exe).arg("--child").arg("--scale").arg(scale.to_string()).arg(f).output().expect("spawn");
            if !o.status.success() {
                eprintln!("{}: {}", f.display(), String::from_utf8_lossy(&o.stderr));
                std::process::exit(1);
            }
            for kv in String::from_utf8_lossy(&o.stdout).split_whitespace() {
                if let Some((k, v)) = kv.split_once('=') {
                    fig.entry(k.into()).or_default().push(v.parse().unwrap_or(0.0));
                }
            }
        }
        let m = |k: &str| median(fig[k].clone());
        let sim = m("sim_wall");
        let (rss, pkt) = (m("rss_kib") / 1024.0, m("peak_packets") * 64.0 / (1u64 << 20) as f64);
        println!(
            "{:<34} {:>8.3} {:>8.3} {:>8.2} {:>9.2} {:>9.2} {:>7.2} {:>10.2} {:>8.2} {:>8.1} {:>7} {:>8.1} {:>8.1} {:>8.1} {:>8.3}",
            f.file_stem().unwrap().to_string_lossy(),
            m("wall"),
            sim,
            m("events") / sim / 1e6,
            m("hops") / sim / 1e6,
            m("data_hops") / sim / 1e6,
            m("events") / m("hops").max(1.0),
            m("events") / m("delivered").max(1.0),
            100.0 * m("dropped") / m("created").max(1.0),
            100.0 * m("write_wall") / m("wall"),
            runs,
            rss,
            pkt,
            rss - pkt,
            m("wall") / m("goodput_bytes").max(1.0) * 1e9
        );
    }
}
