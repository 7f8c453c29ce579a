//! Application workloads in scenario files: every invalid input names its field; the
//! `rpcs` and `iterations` tables and summary entries agree with each other and with
//! the closed-loop and shuffle arithmetic; same seed, same bytes; the examples use the
//! testbed profile.

use arrow_array::cast::AsArray;
use arrow_array::types::UInt64Type;
use pl2_scenario::output::{MemorySink, ParquetSink};
use pl2_scenario::{run_scenario, Scenario};
use std::path::Path;

const NET: &str = r#"
seed = 3
[run]
duration = "500us"
[network]
topology = { kind = "single_rack", hosts = 6 }
[network.host]
threads = 4
"#;

fn err(workload: &str) -> String {
    Scenario::parse(&format!("{NET}{workload}"), Path::new(".")).expect_err("expected an error").to_string()
}

#[test]
fn each_invalid_application_input_names_its_field() {
    let rpc = "[[workload]]\nkind = \"rpc\"\nclients = [0]\nservers = [1]\n";
    let ps = "[[workload]]\nkind = \"ps_shuffle\"\n";
    let cases: &[(String, &str, &str)] = &[
        (format!("{rpc}concurrency = 0\n"), "workload[0].concurrency", "at least one outstanding request"),
        (format!("{rpc}concurrency = 5\n"), "workload[0].concurrency", "raise network.host.threads to at least 5"),
        (format!("{rpc}first_thread = 2\nconcurrency = 3\n"), "workload[0].concurrency", "needs threads 2..5"),
        ("[[workload]]\nkind = \"rpc\"\nclients = [0, 1]\nservers = [1]\n".into(), "workload[0].servers", "host 1 is also one of the clients"),
        ("[[workload]]\nkind = \"rpc\"\nclients = [0]\nservers = [7]\n".into(), "workload[0].servers", "host 7 does not exist"),
        ("[[workload]]\nkind = \"rpc\"\nservers = [1]\n".into(), "workload[0]", "missing field `clients`"),
        (format!("{rpc}request_size = \"0B\"\n"), "workload[0].request_size", "at least 1 byte"),
        (format!("{rpc}count = 0\n"), "workload[0].count", "no RPC would run"),
        (format!("{rpc}service = {{ kind = \"uniform\", min = \"2us\", max = \"1us\" }}\n"), "workload[0].service", "swap"),
        (format!("{rpc}bogus = 1\n"), "workload[0]", "unknown field `bogus`"),
        (format!("{ps}workers = \"0..7\"\n"), "workload[0].workers", "host 6 does not exist"),
        (format!("{ps}workers = [0, 1, 4]\n"), "workload[0].servers", "host 4 is also one of the workers"),
        (format!("{ps}iterations = 0\n"), "workload[0].iterations", "nothing would run"),
        (format!("{ps}threads_per_flow = 3\n"), "workload[0].threads_per_flow", "servers × threads_per_flow"),
        (format!("{ps}pull = true\nthreads_per_flow = 2\n"), "workload[0].threads_per_flow", "workers × threads_per_flow"),
        (format!("{ps}barrier = \"sometimes\"\n"), "workload[0].barrier", "unknown variant `sometimes`"),
        (format!("{ps}message_size = \"0B\"\n"), "workload[0].message_size", "at least 1 byte"),
        (format!("{ps}gradient_size = \"1B\"\n"), "workload[0].gradient_size", "smaller than the number of servers"),
        (
            format!("[[workload]]\nkind = \"persistent\"\nsenders = [0]\nreceiver = 2\nsize = \"1KiB\"\nthreads = 2\n{rpc}concurrency = 2\n"),
            "workload[1]",
            "host 0 thread 0 also sends for persistent[0]",
        ),
    ];
    for (text, field, what) in cases {
        let e = err(text);
        assert!(e.starts_with(field) && e.contains(what), "{text:?}:\n  {e}\n  want {field} ... {what}");
    }
}

fn col_u64(b: &arrow_array::RecordBatch, name: &str) -> Vec<Option<u64>> {
    b.column_by_name(name).unwrap_or_else(|| panic!("no column {name}")).as_primitive::<UInt64Type>().iter().collect()
}

fn tables(text: &str) -> (serde_json::Value, Vec<(&'static str, arrow_array::RecordBatch)>) {
    let sc = Scenario::parse(text, Path::new(".")).unwrap();
    let mut sink = MemorySink::default();
    let out = run_scenario(&sc, Path::new("."), &mut sink, &mut |_| true).unwrap();
    (out.summary, sink.into_tables())
}

#[test]
fn rpc_table_and_summary() {
    let text = format!(
        "{NET}[[workload]]\nkind = \"rpc\"\nclients = [0, 1]\nservers = [2, 3]\nconcurrency = 4\nservice = \"3us\"\ncount = 25\n"
    );
    let (s, t) = tables(&text);
    let names: Vec<&str> = t.iter().map(|x| x.0).collect();
    assert!(names.contains(&"rpcs") && !names.contains(&"iterations"), "{names:?}");
    let rpcs = &t.iter().find(|x| x.0 == "rpcs").unwrap().1;
    let msgs = &t.iter().find(|x| x.0 == "messages").unwrap().1;
    assert_eq!(rpcs.num_rows(), 2 * 4 * 25);
    assert_eq!(msgs.num_rows(), 2 * rpcs.num_rows(), "each RPC is one request and one response");
    assert_eq!(s["stop_reason"], "AllDelivered", "a counted RPC workload ends the run");
    let r = &s["rpcs"];
    assert_eq!((r["count"].as_u64(), r["finished"].as_u64(), r["unfinished"].as_u64()), (Some(200), Some(200), Some(0)));
    // latency = finish - start, and ≥ the 3 µs service; the response id is the row of
    // the message from the server to the client.
    let (start, finish, lat) = (col_u64(rpcs, "start_ps"), col_u64(rpcs, "finish_ps"), col_u64(rpcs, "latency_ps"));
    for i in 0..rpcs.num_rows() {
        assert_eq!(lat[i], Some(finish[i].unwrap() - start[i].unwrap()));
        assert!(lat[i].unwrap() > 3_000_000);
    }
    let ids = col_u64(msgs, "id");
    let resp = col_u64(rpcs, "response_id");
    assert!(resp.iter().all(|r| ids.contains(r)));
    // TPS: responses delivered per second of the window (here the whole run).
    let span = s["window"]["until_ps"].as_f64().unwrap() * 1e-12;
    assert!((r["tps"].as_f64().unwrap() - 200.0 / span).abs() < 1e-6 * r["tps"].as_f64().unwrap());
    let mut sorted: Vec<u64> = lat.iter().map(|l| l.unwrap()).collect();
    sorted.sort_unstable();
    assert_eq!(r["latency_ps"]["p50"].as_f64(), Some(sorted[99] as f64));
    assert_eq!(r["latency_ps"]["p99"].as_f64(), Some(sorted[197] as f64));
    assert!(s["iterations"].is_null());
}

#[test]
fn iteration_table_and_summary() {
    let text = format!(
        "{NET}[[workload]]\nkind = \"ps_shuffle\"\niterations = 4\ngradient_size = \"200KB\"\npull = true\nmessage_size = \"32KiB\"\nthreads_per_flow = 1\n[transport]\nkind = \"tcp\"\n"
    );
    let (s, t) = tables(&text);
    let it = &t.iter().find(|x| x.0 == "iterations").unwrap().1;
    assert_eq!(it.num_rows(), 4);
    let (start, push, fin, time) = (col_u64(it, "start_ps"), col_u64(it, "push_done_ps"), col_u64(it, "finish_ps"), col_u64(it, "time_ps"));
    for i in 0..4 {
        assert!(start[i].unwrap() < push[i].unwrap() && push[i].unwrap() < fin[i].unwrap());
        assert_eq!(time[i], Some(fin[i].unwrap() - start[i].unwrap()));
        if i > 0 {
            assert_eq!(start[i], fin[i - 1]);
        }
    }
    let total: u64 = time.iter().map(|x| x.unwrap()).sum();
    assert_eq!(s["iterations"]["total_ps"].as_u64(), Some(total));
    assert_eq!(s["iterations"]["finished"].as_u64(), Some(4));
    assert_eq!(s["iterations"]["time_ps"]["mean_finished"].as_f64(), Some(total as f64 / 4.0));
    assert!(s["rpcs"].is_null());
    // 100 kB chunks in 32 KiB messages: 4 messages per chunk; per iteration 4 workers ×
    // 2 servers × 4 messages × 2 directions.
    let msgs = &t.iter().find(|x| x.0 == "messages").unwrap().1;
    assert_eq!(msgs.num_rows(), 4 * 4 * 2 * 4 * 2);
}

#[test]
fn same_seed_gives_identical_application_tables() {
    let text = format!(
        "{NET}[[workload]]\nkind = \"rpc\"\nclients = [0]\nservers = [1, 2]\nconcurrency = 4\nservice = {{ kind = \"exponential\", min = \"1us\", mean_extra = \"1us\" }}\n\
         [[workload]]\nkind = \"ps_shuffle\"\nworkers = [3, 4]\nservers = [5]\niterations = 2\nbarrier = \"worker\"\ngradient_size = \"1MB\"\ncompute = {{ kind = \"uniform\", min = \"1us\", max = \"9us\" }}\n[transport]\nkind = \"pl2\"\n"
    );
    let sc = Scenario::parse(&text, Path::new(".")).unwrap();
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
    for f in ["rpcs.parquet", "iterations.parquet", "messages.parquet", "summary.json"] {
        let a = std::fs::read(dirs[0].join(f)).unwrap();
        assert!(!a.is_empty() && a == std::fs::read(dirs[1].join(f)).unwrap(), "{f} differs between two runs");
    }
}

#[test]
fn the_application_examples_use_the_testbed_profile() {
    for (file, threads) in [("memcached-rpc.toml", 12), ("vgg16-shuffle.toml", 8)] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples").join(file);
        let sc = Scenario::parse(&std::fs::read_to_string(&path).unwrap(), path.parent().unwrap()).unwrap();
        let mut want = pl2_sim::config::NetworkConfig::pl2_testbed();
        want.host.threads = threads;
        assert_eq!(sc.network, want, "examples/{file} drifted from NetworkConfig::pl2_testbed()");
    }
}
