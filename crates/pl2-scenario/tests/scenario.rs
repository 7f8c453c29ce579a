//! Scenario files: every class of invalid input names its field; canonical form round
//! trips; the hash is stable; random TOML never panics the validator; the same scenario
//! and seed give byte-identical output files.

use pl2_scenario::output::{MemorySink, ParquetSink};
use pl2_scenario::{run_scenario, Scenario};
use std::path::Path;

const BASE: &str = r#"
seed = 3
[run]
duration = "1ms"
[network]
topology = { kind = "single_rack", hosts = 4 }
[[workload]]
kind = "poisson"
load = 0.3
sizes = "w3"
"#;

fn err(text: &str) -> String {
    Scenario::parse(text, Path::new(".")).err().expect("expected an error").to_string()
}

/// What a new user typed and pl2 once accepted silently or answered vaguely: each now
/// an error that starts with the field's full path and says what to write.
#[test]
fn silent_and_vague_inputs_name_the_field_and_the_fix() {
    let w = "[[workload]]\nkind = \"poisson\"\nload = 0.5\nsizes = \"w1\"\n";
    let cases: &[(String, &str, &str)] = &[
        (String::new(), "workload: ", "at least one [[workload]]"),
        ("name = \"x\"\n".into(), "workload: ", "add e.g. [[workload]]"),
        ("[[workload]]\nkind = \"incast\"\nsenders = [0, 1]\nreceiver = 2\nsize = \"1KiB\"\ncount = 0\n".into(), "workload[0].count: ", "at least 1 message"),
        ("[[workload]]\nkind = \"outcast\"\nsender = 0\nreceivers = [1, 2]\nsize = \"1KiB\"\ncount = 0\n".into(), "workload[0].count: ", "at least 1 message"),
        (format!("[transport]\nkind = \"tcp\"\ncc = \"dctcp\"\n{w}"), "transport.cc: ", "[network.switch.ecn]"),
        ("[[workload]]\nkind = \"incast\"\nsenders = [0, 1]\nreceiver = -1\nsize = \"1KiB\"\n".into(), "workload[0].receiver: ", "a whole number ≥ 0"),
        (format!("[network.topology]\nkind = \"single_rack\"\nhosts = \"six\"\n{w}"), "network.topology.hosts: ", "a whole number ≥ 0"),
        (format!("seed = -3\n{w}"), "seed: ", "from 0 to 18446744073709551615"),
        (format!("seed = 18446744073709551616\n{w}"), "seed: ", "from 0 to 18446744073709551615"),
        ("[[workload]]\nkind = \"poisson\"\nload = \"60%\"\nsizes = \"w1\"\n".into(), "workload[0].load: ", "0.6 for 60%"),
    ];
    for (text, path, fix) in cases {
        let e = err(text);
        assert!(e.starts_with(path) && e.contains(fix), "{text:?}: {e}");
    }
    let marked = format!("[network.switch]\necn = {{ kind = \"step\", threshold = \"60KB\" }}\n[transport]\nkind = \"tcp\"\ncc = \"dctcp\"\n{w}");
    assert!(Scenario::parse(&marked, Path::new(".")).is_ok(), "DCTCP with marking is fine");
}

#[test]
fn each_invalid_class_names_the_field() {
    let cases: &[(&str, &str)] = &[
        ("[netwrk]\n", "netwrk"),
        ("[network.link]\nrate = \"-5Gbps\"\n", "network.link.rate"),
        ("[network.link]\nrate = \"100\"\n", "network.link.rate"),
        ("[network.link]\nrate = 100\n", "network.link.rate"),
        ("[network.switch]\nalpha = -1.0\n", "network.switch.alpha"),
        ("[network.switch]\nbuffer = \"10B\"\n", "network.switch.buffer"),
        ("[network.topology]\nkind = \"single_rack\"\nhosts = 0\n", "network.topology.hosts"),
        ("[network.topology]\nkind = \"single_rack\"\nhosts = 8\nbreakout = 16\n", "network.topology.breakout"),
        ("[network.topology]\nkind = \"fat_tree\"\nk = 5\n", "network.topology.k"),
        ("[network.topology]\nkind = \"torus\"\n", "network.topology"),
        ("[[workload]]\nkind = \"incast\"\nsenders = [0, 1]\nreceiver = 9\nsize = \"1KiB\"\n", "workload[0].receiver"),
        ("[[workload]]\nkind = \"poisson\"\nload = 1.5\nsizes = \"w3\"\n", "workload[0].load"),
        ("[[workload]]\nkind = \"poisson\"\nload = 0.5\nsizes = \"nope.txt\"\n", "workload[0].sizes"),
        ("[[workload]]\nkind = \"persistent\"\nsenders = [0]\nreceiver = 1\nsize = \"6KiB\"\nthreads = 4\n", "workload[0].threads"),
        ("[run]\nduration = \"1ms\"\nwarmup = \"2ms\"\n", "run.warmup"),
        ("[[fault]]\nkind = \"link_loss\"\na = \"h0\"\nb = \"s9\"\nprobability = 0.1\n", "fault[0]"),
        ("[[network.override]]\nselect = \"s9\"\nbuffer = \"1MiB\"\n", "network.override[0].select"),
        ("[metrics.trace]\nnodes = [\"x1\"]\n", "metrics.trace.nodes[0]"),
        // TCP over PL2: a single rack only, the pl2 table only with scheduler = "pl2",
        // and none of the keys that TCP's own settings replace.
        ("[network.topology]\nkind = \"fat_tree\"\nk = 4\n[transport]\nkind = \"tcp\"\nscheduler = \"pl2\"\n", "transport.scheduler"),
        ("[transport]\nkind = \"tcp\"\n[transport.pl2]\nk = 8\n", "transport.pl2"),
        ("[transport]\nkind = \"tcp\"\nscheduler = \"pl2\"\n[transport.pl2]\nheaders = \"udp\"\n", "transport.pl2.headers"),
        ("[transport]\nkind = \"tcp\"\nscheduler = \"pl2\"\n[transport.pl2]\nk = 0\n", "transport.pl2"),
        ("[transport]\nkind = \"tcp\"\nscheduler = \"pl3\"\n", "transport.scheduler"),
        // An unknown value of a field inside a table chosen by `kind` names the field.
        ("[transport]\nkind = \"polo\"\nd_bound = \"cap\"\n", "transport.d_bound: "),
        ("[transport]\nkind = \"polo\"\nshort_first = { max_bytes = \"100KB\", priority = 7 }\n", "short_first.priority"),
        ("[transport]\nkind = \"sctp\"\n", "transport.kind: "),
    ];
    for (text, field) in cases {
        let e = err(text);
        assert!(e.starts_with(field) || e.contains(&format!("{field}:")) || e.contains(field), "{text:?}: {e}");
    }
}

#[test]
fn a_malformed_size_file_names_its_line() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(dir.join("bad.txt"), "100\n10 0.5\nxx 0.9\n").unwrap();
    let text = "[[workload]]\nkind = \"poisson\"\nload = 0.5\nsizes = \"bad.txt\"\n";
    let e = Scenario::parse(text, dir).err().unwrap().to_string();
    assert!(e.contains("workload[0].sizes") && e.contains("line 3"), "{e}");
}

#[test]
fn the_identity_covers_the_contents_of_input_files() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let text = "[[workload]]\nkind = \"poisson\"\nload = 0.5\nsizes = \"mine.txt\"\n";
    std::fs::write(dir.join("mine.txt"), "1000\n1000 1.0\n").unwrap();
    let a = Scenario::parse(text, dir).unwrap().identity(dir);
    std::fs::write(dir.join("mine.txt"), "2000\n2000 1.0\n").unwrap();
    let sc = Scenario::parse(text, dir).unwrap();
    assert_ne!(a, sc.identity(dir), "editing the size file must change the run's identity");
    assert_eq!(sc.input_files(), vec!["mine.txt".to_string()]);
}

const PINNED_HASH: &str = "3d1c578eabc74d8e";

#[test]
fn canonical_form_round_trips_and_hash_is_stable() {
    let a = Scenario::parse(BASE, Path::new(".")).unwrap();
    let canon = a.canonical();
    let b = Scenario::parse(&canon, Path::new(".")).unwrap();
    assert_eq!(a, b);
    assert_eq!(canon, b.canonical());
    assert_eq!(a.hash(), b.hash());
    // Pinned: the hash must not change across processes, platforms or runs. Update it
    // deliberately when the scenario schema or its defaults change.
    assert_eq!(a.hash(), PINNED_HASH, "canonical form:\n{canon}");
    // Key order and unit spelling do not change the identity.
    let same = "seed = 3\n[network.topology]\nhosts = 4\nkind = \"single_rack\"\n[run]\nduration = \"1000us\"\n[[workload]]\nsizes = \"w3\"\nload = 0.3\nkind = \"poisson\"\n";
    assert_eq!(Scenario::parse(same, Path::new(".")).unwrap().hash(), a.hash());
}

#[test]
fn tcp_handshake_keys_stay_out_of_the_canonical_form_at_their_defaults() {
    // TCP scenarios written before `handshake` and `syn_rto` existed keep their canonical
    // form, hence their hash: the keys are written only when set.
    let off = Scenario::parse(&format!("{BASE}[transport]\nkind = \"tcp\"\n"), Path::new(".")).unwrap();
    let canon = off.canonical();
    assert!(canon.contains("kind = \"tcp\"") && !canon.contains("handshake") && !canon.contains("syn_rto"), "{canon}");
    let on = Scenario::parse(&format!("{BASE}[transport]\nkind = \"tcp\"\nhandshake = true\nsyn_rto = \"50us\"\n"), Path::new(".")).unwrap();
    let canon = on.canonical();
    assert!(canon.contains("handshake = true") && canon.contains("syn_rto"), "{canon}");
    assert_eq!(Scenario::parse(&canon, Path::new(".")).unwrap(), on);
    assert_ne!(on.hash(), off.hash());
}

/// A tiny deterministic generator for the fuzz test (no dependency needed).
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn pick<'a>(&mut self, v: &[&'a str]) -> &'a str {
        v[(self.next() % v.len() as u64) as usize]
    }
}

#[test]
fn random_toml_gives_errors_never_panics() {
    let keys = ["seed", "run.duration", "run.warmup", "network.mtu", "network.link.rate", "network.link.delay",
        "network.switch.alpha", "network.switch.buffer", "network.switch.latency", "network.host.threads",
        "network.topology.kind", "network.topology.hosts", "network.topology.k", "metrics.window", "transport.kind", "bogus"];
    let values = ["0", "-1", "1", "7", "1e308", "\"\"", "\"100Gbps\"", "\"1us\"", "\"-3ms\"", "\"1500B\"", "true",
        "\"fat_tree\"", "\"single_rack\"", "[1, 2]", "{kind = \"uniform\", min = \"2us\", max = \"1us\"}", "\"18446744073709551615s\"", "nan", "inf"];
    let mut g = Lcg(12345);
    for _ in 0..600 {
        let mut text = String::new();
        for _ in 0..(1 + g.next() % 4) {
            let k = g.pick(&keys);
            let v = g.pick(&values);
            match k.rsplit_once('.') {
                Some((table, key)) => text.push_str(&format!("[{table}]\n{key} = {v}\n")),
                None => text = format!("{k} = {v}\n{text}"),
            }
        }
        let r = std::panic::catch_unwind(|| Scenario::parse(&text, Path::new(".")).map(|s| s.canonical()));
        assert!(r.is_ok(), "validator panicked on:\n{text}");
    }
}

#[test]
fn same_scenario_same_seed_gives_identical_files() {
    let sc = Scenario::parse(BASE, Path::new(".")).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let dirs: Vec<_> = (0..2)
        .map(|i| {
            let d = tmp.path().join(i.to_string());
            let mut sink = ParquetSink::new(&d).unwrap();
            let out = run_scenario(&sc, Path::new("."), &mut sink, &mut |_| true).unwrap();
            sink.finish(&out).unwrap();
            d
        })
        .collect();
    for f in ["messages.parquet", "drops.parquet", "ports.parquet", "goodput.parquet", "summary.json"] {
        let a = std::fs::read(dirs[0].join(f)).unwrap();
        let b = std::fs::read(dirs[1].join(f)).unwrap();
        assert!(!a.is_empty());
        assert!(a == b, "{f} differs between two runs of the same scenario");
    }
    let summary: serde_json::Value = serde_json::from_slice(&std::fs::read(dirs[0].join("summary.json")).unwrap()).unwrap();
    assert!(summary["messages"]["count"].as_u64().unwrap() > 50);
    let mut other = sc.clone();
    other.seed = 4;
    let o = run_scenario(&other, Path::new("."), &mut MemorySink::default(), &mut |_| true).unwrap();
    assert_ne!(o.summary["messages"], summary["messages"], "a different seed must give different samples");
}

/// The files written as the run goes (tables set up before the run, encoded on their own
/// thread, named at the end) are byte for byte what `write_parquet` makes of the batches
/// the same run hands an in-memory sink, every table, including those without a row.
#[test]
fn files_written_during_the_run_equal_the_in_memory_tables_written_after() {
    let sc = Scenario::parse(BASE, Path::new(".")).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().to_path_buf();
    let mut sink = ParquetSink::new(&d).unwrap();
    let out = run_scenario(&sc, Path::new("."), &mut sink, &mut |_| true).unwrap();
    sink.finish(&out).unwrap();
    let mut memory = MemorySink::default();
    run_scenario(&sc, Path::new("."), &mut memory, &mut |_| true).unwrap();
    let expected = d.join("expected");
    std::fs::create_dir(&expected).unwrap();
    let tables = memory.into_batches();
    assert!(tables.iter().any(|(_, b)| b.iter().all(|b| b.num_rows() == 0)), "no table without rows: the case is not tested");
    for (name, batches) in tables {
        let f = format!("{name}.parquet");
        pl2_scenario::output::write_parquet(&expected.join(&f), batches.into_iter().map(Ok)).unwrap();
        let same = std::fs::read(d.join(&f)).unwrap() == std::fs::read(expected.join(&f)).unwrap();
        assert!(same, "{f}: the file written during the run differs from the in-memory table's");
    }
}

#[test]
fn an_event_budget_longer_than_a_slice_stops_exactly_at_the_budget() {
    // The runner drains records every few thousand events; the budget spans slices.
    let mut sc = Scenario::parse(BASE, Path::new(".")).unwrap();
    sc.run.duration.0 *= 10;
    let full = run_scenario(&sc, Path::new("."), &mut MemorySink::default(), &mut |_| true).unwrap();
    let events = full.summary["counters"]["events"].as_u64().unwrap();
    assert!(events > 3 << 16, "the scenario must outlast several slices ({events} events)");
    let budget = (5 << 15) + 7;
    sc.run.event_budget = Some(budget);
    let cut = run_scenario(&sc, Path::new("."), &mut MemorySink::default(), &mut |_| true).unwrap();
    assert_eq!(cut.summary["stop_reason"], "EventBudget");
    assert_eq!(cut.summary["counters"]["events"].as_u64().unwrap(), budget);
}

#[test]
fn committed_scenario_reference_is_current() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/scenario-reference.md");
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == pl2_scenario::reference::scenario_reference(),
        "docs/scenario-reference.md is stale: run `cargo run -p pl2-scenario --bin pl2-reference > docs/scenario-reference.md`"
    );
}

#[test]
fn every_field_of_the_scenario_reference_has_a_meaning() {
    // Rows are `| `name` | type | default | meaning |`; a `|` inside a cell is written
    // `\|`, so " | " only ever separates cells.
    let reference = pl2_scenario::reference::scenario_reference();
    let (mut section, mut rows, mut empty) = (String::new(), 0, Vec::new());
    for line in reference.lines() {
        if let Some(h) = line.strip_prefix("## ") {
            section = h.to_string();
        } else if let Some(h) = line.strip_prefix("### ") {
            section = format!("{} {h}", section.split(' ').next().unwrap_or_default());
        } else if line.starts_with("| `") {
            let cells: Vec<&str> = line.trim_end_matches('|').split(" | ").map(str::trim).collect();
            assert_eq!(cells.len(), 4, "not a field row of four cells: {line}");
            rows += 1;
            if cells[3].is_empty() {
                empty.push(format!("{section}: {}", cells[0].trim_start_matches("| ")));
            }
        }
    }
    assert!(rows > 300, "only {rows} field rows found: has the table layout changed?");
    assert!(
        empty.is_empty(),
        "fields with no meaning in the scenario reference ({}); add a `///` doc comment to each:\n{}",
        empty.len(),
        empty.join("\n")
    );
}

#[test]
fn the_testbed_example_spells_the_testbed_profile() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/pl2-incast-testbed.toml");
    let sc = Scenario::parse(&std::fs::read_to_string(&path).unwrap(), path.parent().unwrap()).unwrap();
    let mut want = pl2_sim::config::NetworkConfig::pl2_testbed();
    want.host.threads = 12;
    assert_eq!(sc.network, want, "examples/pl2-incast-testbed.toml drifted from NetworkConfig::pl2_testbed()");
}

#[test]
fn every_example_and_bench_scenario_round_trips_through_its_canonical_form() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    for dir in ["examples", "bench"] {
        for e in std::fs::read_dir(root.join(dir)).unwrap().flatten() {
            let p = e.path();
            if p.extension().is_none_or(|x| x != "toml") {
                continue;
            }
            let a = Scenario::parse(&std::fs::read_to_string(&p).unwrap(), &root.join(dir)).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            let b = Scenario::parse(&a.canonical(), &root.join(dir)).unwrap();
            assert_eq!(a, b, "{} does not round-trip", p.display());
        }
    }
}

/// A run's `messages` table as (src, dst, size, start, finish, ideal) rows, sorted, and
/// its `transport` column.
fn message_rows(text: &str) -> (serde_json::Value, Vec<[u64; 6]>, Vec<String>) {
    use arrow_array::cast::AsArray;
    use arrow_array::types::{UInt32Type, UInt64Type};
    let sc = Scenario::parse(text, Path::new(".")).unwrap_or_else(|e| panic!("{e}"));
    let mut sink = MemorySink::default();
    let out = run_scenario(&sc, Path::new("."), &mut sink, &mut |_| true).unwrap();
    let mut rows = Vec::new();
    let mut names = Vec::new();
    for (name, b) in sink.into_tables() {
        if name != "messages" {
            continue;
        }
        let u32s = |c: &str| b.column_by_name(c).unwrap().as_primitive::<UInt32Type>().values().to_vec();
        let u64s = |c: &str| b.column_by_name(c).unwrap().as_primitive::<UInt64Type>().iter().map(|v| v.unwrap_or(u64::MAX)).collect::<Vec<_>>();
        let (src, dst) = (u32s("src"), u32s("dst"));
        let (size, start, finish, ideal) = (u64s("size_bytes"), u64s("start_ps"), u64s("finish_ps"), u64s("ideal_ps"));
        for i in 0..b.num_rows() {
            rows.push([u64::from(src[i]), u64::from(dst[i]), size[i], start[i], finish[i], ideal[i]]);
        }
        names.extend(b.column_by_name("transport").unwrap().as_string::<i32>().iter().map(|s| s.unwrap().to_string()));
    }
    rows.sort_unstable();
    (out.summary, rows, names)
}

const MIXED_NET: &str = r#"
seed = 5
[run]
duration = "2ms"
[network]
topology = { kind = "single_rack", hosts = 4 }
[network.host]
threads = 2
send_latency = "500ns"
recv_latency = "700ns"
"#;

/// ECN marking for the runs with DCTCP, which needs it.
const DCTCP_MARKING: &str = "[network.switch]\necn = { kind = \"step\", threshold = \"60KB\" }\n";

#[test]
fn a_named_transport_carries_its_workload_exactly_as_the_default_would() {
    let tcp = "kind = \"tcp\"\ncc = \"dctcp\"\n";
    let load = "kind = \"poisson\"\nload = 0.4\nsizes = \"w4\"\nhosts = [0, 1, 2]\ndests = [3]\n";
    let as_default = format!("{MIXED_NET}{DCTCP_MARKING}[transport]\n{tcp}[[workload]]\n{load}");
    let as_named = format!("{MIXED_NET}{DCTCP_MARKING}[transports.dc]\n{tcp}[[workload]]\ntransport = \"dc\"\n{load}");
    let (s1, m1, n1) = message_rows(&as_default);
    let (s2, m2, n2) = message_rows(&as_named);
    assert!(m1.len() > 100, "{} messages", m1.len());
    assert_eq!(m1, m2, "same messages, same times, same ideal times");
    assert_eq!(s1["tcp"], s2["tcp"], "TCP's counters (timeouts, retransmissions) agree");
    assert!(s1["tcp"]["segments_sent"].as_u64().unwrap_or(1) > 0);
    assert!(n1.iter().all(|n| n == "default") && n2.iter().all(|n| n == "dc"), "the transport column names the transport");
}

#[test]
fn mixed_transports_apart_in_time_match_their_runs_alone() {
    // TCP incast at 0, UDP incast at 1 ms (long after the first has drained): each
    // message takes exactly as long, with the same ideal time, as in a run of its
    // workload alone, although the two transports frame data differently.
    let tcp = "[[workload]]\nkind = \"incast\"\nsenders = [0, 1]\nreceiver = 3\nsize = \"200KB\"\n";
    let udp = "[[workload]]\nkind = \"incast\"\nsenders = [1, 2]\nreceiver = 3\nsize = \"300KB\"\nstart = \"1ms\"\n";
    let (_, tcp_alone, _) = message_rows(&format!("{MIXED_NET}[transport]\nkind = \"tcp\"\n{tcp}"));
    let (_, udp_alone, _) = message_rows(&format!("{MIXED_NET}[transport]\nkind = \"raw\"\nheaders = \"udp\"\n{udp}"));
    let mixed = format!("{MIXED_NET}[transport]\nkind = \"tcp\"\n[transports.udp]\nkind = \"raw\"\nheaders = \"udp\"\n{tcp}{udp}transport = \"udp\"\n");
    let (s, both, names) = message_rows(&mixed);
    let mut want = [tcp_alone, udp_alone].concat();
    want.sort_unstable();
    assert_eq!(both, want);
    assert_ne!(both[0][5], both[3][5], "TCP and UDP framing give different ideal times");
    assert_eq!(names.iter().filter(|n| *n == "udp").count(), 2);
    assert_eq!(s["counters"]["packets_in_flight"], 0);
    assert_eq!(s["counters"]["packets_created"], s["counters"]["packets_delivered"], "conservation, nothing dropped");
}

#[test]
fn transports_over_pl2_share_the_tors_scheduler() {
    // The PL2 paper's Figs. 5–6 set-up in small: memcached over TCP over PL2 beside UDP
    // background over PL2 into the client. Both schedule with the one ToR scheduler; with
    // the dequeue decrement it drops nothing, and every reservation either transport
    // asks for is answered by it.
    let pl2 = "k = 4\nt = 15\ndecrement_at = \"dequeue\"\nimproved = true\n";
    let text = format!(
        "{MIXED_NET}[network.switch]\nbuffer = \"9MB\"\ndynamic_thresholds = false\nport_limit = \"1500000B\"\n\
         [transport]\nkind = \"tcp\"\nscheduler = \"pl2\"\n[transport.pl2]\n{pl2}\
         [transports.bg]\nkind = \"pl2\"\nheaders = \"udp\"\n{pl2}\
         [[workload]]\nkind = \"rpc\"\nclients = [0]\nservers = [1]\nconcurrency = 2\nstop = \"1ms\"\n\
         [[workload]]\ntransport = \"bg\"\nkind = \"persistent\"\nsenders = [2, 3]\nreceiver = 0\nsize = \"64KiB\"\nthreads = 2\n"
    );
    let (s, _, names) = message_rows(&text);
    assert_eq!(s["counters"]["packets_dropped"], 0, "{}", s["drops"]);
    assert!(s["rpcs"]["finished"].as_u64().unwrap() > 100, "{}", s["rpcs"]);
    assert!(names.iter().filter(|n| *n == "bg").count() > 100 && names.iter().filter(|n| *n == "default").count() > 200);
    let p = &s["pl2"];
    // Every burst of either transport asks for its slots: a request and a response per
    // RPC, and ⌈64 KiB / (K · 1472 B)⌉ = 12 bursts per background message (all but the
    // 4 still being sent when the run ends are complete).
    let bg = names.iter().filter(|n| *n == "bg").count() as u64;
    let asked = 2 * s["rpcs"]["finished"].as_u64().unwrap() + 12 * (bg - 4);
    let (rsvs, seen) = (p["rsvs"].as_u64().unwrap(), p["switch"]["rsvs"].as_u64().unwrap());
    assert!(rsvs >= asked && seen <= rsvs && rsvs - seen <= 8, "{asked} bursts, hosts sent {rsvs} RSVs, the ToR saw {seen}: {p}");
    assert!(s["goodput_gbps"]["h0"].as_f64().unwrap() > 50.0, "the background fills the client's downlink: {}", s["goodput_gbps"]);
    // The ToR runs one scheduler: transports over PL2 must configure it alike.
    let e = err(&text.replace("[transports.bg]\nkind = \"pl2\"\nheaders = \"udp\"\nk = 4\n", "[transports.bg]\nkind = \"pl2\"\nheaders = \"udp\"\nk = 8\n"));
    assert!(e.starts_with("transports.bg") && e.contains("k 8 vs 4") && e.contains("ToR runs one scheduler"), "{e}");
}

#[test]
fn a_workload_naming_an_unknown_transport_is_an_error() {
    let e = err(&format!("{BASE}transport = \"udp\"\n"));
    assert!(e.starts_with("workload[0].transport") && e.contains("[transports.NAME]"), "{e}");
    let e = err(&format!("{BASE}transport = \"udp\"\n[transports.tcp]\nkind = \"tcp\"\n"));
    assert!(e.contains("one of [\"tcp\"]"), "{e}");
    let e = err(&format!("{BASE}[transports.default]\nkind = \"tcp\"\n"));
    assert!(e.starts_with("transports.default"), "{e}");
    let e = err(&format!("{BASE}[transports.t]\nkind = \"tcp\"\nbogus = 1\n"));
    assert!(e.contains("bogus"), "{e}");
}

#[test]
fn two_tcp_transports_on_one_thread_keep_their_probe_series_apart() {
    // The same host and thread send to the same destination over CUBIC (the default) and
    // DCTCP (named): their connections have the same flow id, and the probe table tells
    // them apart by its transport column (a grid thins each series on its own).
    use arrow_array::cast::AsArray;
    use arrow_array::types::UInt32Type;
    let text = format!(
        "{MIXED_NET}{DCTCP_MARKING}[metrics]\nprobe_interval = \"50us\"\n[transport]\nkind = \"tcp\"\ncc = \"cubic\"\n[transports.dc]\nkind = \"tcp\"\ncc = \"dctcp\"\n\
         [[workload]]\nkind = \"incast\"\nsenders = [0]\nreceiver = 3\nsize = \"2MB\"\n\
         [[workload]]\ntransport = \"dc\"\nkind = \"incast\"\nsenders = [0]\nreceiver = 3\nsize = \"2MB\"\nstart = \"10us\"\n"
    );
    let sc = Scenario::parse(&text, Path::new(".")).unwrap();
    let mut sink = MemorySink::default();
    run_scenario(&sc, Path::new("."), &mut sink, &mut |_| true).unwrap();
    let probes = sink.into_tables().into_iter().find(|t| t.0 == "probes").expect("probes table").1;
    let (host, flow) = (probes.column_by_name("host").unwrap().as_primitive::<UInt32Type>(), probes.column_by_name("flow").unwrap().as_primitive::<UInt32Type>());
    let (tp, name) = (probes.column_by_name("transport").unwrap().as_string::<i32>(), probes.column_by_name("name").unwrap().as_string::<i32>());
    let mut series = std::collections::BTreeMap::<(&str, u32), usize>::new();
    for i in 0..probes.num_rows() {
        if host.value(i) == 0 && name.value(i) == "tcp_cwnd" {
            *series.entry((tp.value(i), flow.value(i))).or_default() += 1;
        }
    }
    let flows: std::collections::BTreeSet<u32> = series.keys().map(|k| k.1).collect();
    assert_eq!(flows.len(), 1, "one flow id for both connections: {series:?}");
    assert_eq!(series.keys().map(|k| k.0).collect::<Vec<_>>(), ["dc", "default"], "{series:?}");
    assert!(series.values().all(|&n| n >= 2), "each series keeps its own rows on the grid: {series:?}");
}

#[test]
fn sfc_settings_parse_name_their_fields_and_count_in_the_summary() {
    // Absent, `sfc` stays out of the canonical form (the pinned hash above holds).
    assert!(!Scenario::parse(BASE, Path::new(".")).unwrap().canonical().contains("sfc"));
    let net = "seed = 3\n[run]\nduration = \"200us\"\n[network]\ntopology = { kind = \"single_rack\", hosts = 5 }\n[transport]\nkind = \"roce\"\n\
               [[workload]]\nkind = \"incast\"\nsenders = \"0..4\"\nreceiver = 4\nsize = \"300KB\"\ncount = 1\ninterval = \"1ms\"\n";
    let with = |sfc: &str| format!("{net}[network.switch]\nsfc = {sfc}\n");
    let e = err(&with("{ trigger = \"100KB\", bogus = 1 }"));
    assert!(e.contains("bogus"), "{e}");
    let e = err(&with("{ target = \"120KB\" }"));
    assert!(e.contains("switch.sfc.target"), "{e}");
    let e = err(&with("{ pause_time = { kind = \"fixed\" } }"));
    assert!(e.contains("time"), "{e}");
    let text = with("{ suppress_per = \"source\", pause_time = { kind = \"fixed\", time = \"2us\" } }");
    let sc = Scenario::parse(&text, Path::new(".")).unwrap();
    let canon = sc.canonical();
    assert!(canon.contains("suppress_per = \"source\"") && canon.contains("trigger = \"100000B\""), "{canon}");
    assert_eq!(Scenario::parse(&canon, Path::new(".")).unwrap(), sc);
    let (s, _, _) = message_rows(&with("{}"));
    let sfc = &s["sfc"];
    assert!(sfc["signals_sent"].as_u64().unwrap() > 0, "{sfc}");
    assert_eq!(sfc["signals_delivered"], sfc["signals_sent"], "{sfc}");
    assert_eq!(s["roce"]["sfc_pauses"], sfc["signals_sent"]);
    assert!(s["pfc"].is_null());
}

#[test]
fn a_persistent_stream_over_a_transport_that_frees_its_thread_at_once_is_refused() {
    // Homa, NDP, pHost and RoCE take a message whole and free the thread at once: a
    // closed loop over them once recursed without end and killed the process.
    let persistent = "[network]\ntopology = { kind = \"single_rack\", hosts = 3 }\nhost = { threads = 2 }\n\
                      [[workload]]\nkind = \"persistent\"\nsenders = \"0..2\"\nreceiver = 2\nsize = \"6000B\"\nthreads = 2\n";
    for kind in ["homa", "ndp", "phost", "roce"] {
        let e = err(&format!("{persistent}[transport]\nkind = \"{kind}\"\n"));
        assert!(e.starts_with("workload[0].kind") && e.contains("frees the thread at once") && e.contains("kind = \"list\""), "{kind}: {e}");
    }
    for kind in ["raw", "pl2", "rds", "tcp", "polo"] {
        let text = format!("{persistent}[transport]\nkind = \"{kind}\"\n");
        assert!(Scenario::parse(&text, Path::new(".")).is_ok(), "{kind} holds its thread: a persistent stream is fine");
    }
}

#[test]
fn a_stream_paced_by_delivery_runs_on_every_transport_one_message_at_a_time() {
    // With next = "delivery" a stream's next message starts the instant its last one
    // reaches the receiver, so no stream ever has two messages out, whatever its
    // transport does with the thread (homa, ndp, phost and roce free it at once, and a
    // loop on the thread's release is refused for them).
    let base = "seed = 3\n[run]\nduration = \"300us\"\n[network]\ntopology = { kind = \"single_rack\", hosts = 3 }\n\
                host = { threads = 1 }\n[[workload]]\nkind = \"persistent\"\nsenders = \"0..2\"\nreceiver = 2\n\
                size = \"6000B\"\nnext = \"delivery\"\n";
    for kind in ["homa", "ndp", "phost", "roce", "raw", "pl2", "rds", "tcp", "polo"] {
        let (_, rows, _) = message_rows(&format!("{base}[transport]\nkind = \"{kind}\"\n"));
        for src in [0, 1] {
            let mine: Vec<_> = rows.iter().filter(|r| r[0] == src).collect();
            assert!(mine.len() >= 10, "{kind}: h{src} sent only {} messages in 300 us", mine.len());
            for w in mine.windows(2) {
                assert_eq!(w[1][3], w[0][4], "{kind}: h{src}'s next message starts when its last one is delivered");
            }
        }
    }
    // The default, next = "release", stays out of the canonical form (scenarios keep their
    // identity) and "delivery" round-trips through it.
    let sc = Scenario::parse(&format!("{base}[transport]\nkind = \"homa\"\n"), Path::new(".")).unwrap();
    assert!(sc.canonical().contains("next = \"delivery\""), "{}", sc.canonical());
    let release = Scenario::parse(&format!("{}[transport]\nkind = \"pl2\"\n", base.replace("next = \"delivery\"\n", "next = \"release\"\n")), Path::new(".")).unwrap();
    assert!(!release.canonical().contains("next ="), "{}", release.canonical());
}
