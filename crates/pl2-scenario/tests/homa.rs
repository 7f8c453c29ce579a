//! Homa's derived settings: the scenario fills RTTbytes from the network and the level
//! split and unscheduled cut-offs from the workload's size distribution, they appear in
//! the canonical form (`pl2 show`), set fields are kept, and ambiguous workloads are an
//! error that names the field.

use pl2_scenario::Scenario;
use pl2_sim::sim::TransportConfig;
use pl2_sim::transport::homa::HomaConfig;
use pl2_sim::units::Bytes;
use std::path::Path;

fn homa(sc: &Scenario) -> &HomaConfig {
    match &sc.transport {
        TransportConfig::Homa(c) => c,
        other => panic!("not Homa: {other:?}"),
    }
}

/// The simulator's network as far as RTTbytes and the packet layout go: untagged frames,
/// its 10,000 B RTTbytes; workload `sizes`.
fn reference(sizes: &str, extra: &str) -> String {
    format!(
        r#"
[network]
topology = {{ kind = "single_rack", hosts = 4 }}
link = {{ rate = "10Gbps" }}
framing = {{ vlan_tag = false }}
[transport]
kind = "homa"
rtt_bytes = "10000B"
{extra}
[[workload]]
kind = "poisson"
load = 0.3
sizes = "{sizes}"
"#
    )
}

#[test]
fn cutoffs_come_from_the_workload_as_the_simulator_computes_them() {
    // homa_cutoffs.py's output for W2 and W3 (the reference notes, A4).
    for (w, u, cuts) in [("w2", 5, vec![269, 366, 512, 1463]), ("w3", 4, vec![433, 2339, 6756]), ("w5", 1, vec![])] {
        let sc = Scenario::parse(&reference(w, ""), Path::new(".")).unwrap();
        let c = homa(&sc);
        assert_eq!((c.unscheduled_levels, c.scheduled_levels), (Some(u), Some(8 - u)), "{w}");
        assert_eq!(c.unscheduled_cutoffs, Some(cuts.into_iter().map(Bytes).collect()), "{w}");
        assert_eq!(c.rtt_bytes, Some(Bytes(10_000)), "set, so kept");
        // pl2 show prints the canonical form: the derived fields are in it, and it parses
        // back to the same scenario.
        let text = sc.canonical();
        assert!(text.contains("unscheduled_cutoffs"), "{text}");
        assert_eq!(Scenario::parse(&text, Path::new(".")).unwrap(), sc);
    }
}

#[test]
fn a_fixed_split_or_fixed_cutoffs_are_kept() {
    let sc = Scenario::parse(&reference("w2", "unscheduled_levels = 2"), Path::new(".")).unwrap();
    let c = homa(&sc);
    assert_eq!((c.unscheduled_levels, c.scheduled_levels), (Some(2), Some(6)));
    assert_eq!(c.unscheduled_cutoffs.as_ref().map(Vec::len), Some(1));
    let sc = Scenario::parse(&reference("w2", "unscheduled_levels = 2\nunscheduled_cutoffs = [\"1000B\"]"), Path::new(".")).unwrap();
    assert_eq!(homa(&sc).unscheduled_cutoffs, Some(vec![Bytes(1000)]));
}

#[test]
fn rtt_bytes_come_from_the_base_round_trip_of_the_homa_papers_network() {
    // Across racks: a full frame (1538 B: 1.2304 µs at 10G, 0.3076 µs at 40G) with
    // 0.5 µs send and receive delays, 0.375 µs host links and 0.25 µs fabric links,
    // store-and-forward: 0.5 + 1.2304 + 0.375 + 0.3076 + 0.25 + 0.3076 + 0.25 + 1.2304 +
    // 0.375 + 0.5 = 5.3260 µs; a minimum frame (84 B) back: 0.5 + 0.0672 + 0.375 + 0.0168
    // + 0.25 + 0.0168 + 0.25 + 0.0672 + 0.375 + 0.5 = 2.4180 µs. 7.7440 µs at 10 Gbps is
    // 9680 B (the simulator rounds its own 9.6 KB up to 10,000).
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/homa-w5.toml");
    let sc = Scenario::parse(&std::fs::read_to_string(&path).unwrap(), path.parent().unwrap()).unwrap();
    let c = homa(&sc);
    assert_eq!(c.rtt_bytes, Some(Bytes(9680)));
    assert_eq!((c.unscheduled_levels, c.scheduled_levels, c.unscheduled_cutoffs.clone()), (Some(1), Some(7), Some(vec![])));
}

#[test]
fn workloads_with_different_distributions_are_an_error_naming_the_second() {
    let text = format!("{}\n[[workload]]\nkind = \"poisson\"\nload = 0.1\nsizes = \"w3\"\n", reference("w2", ""));
    let e = Scenario::parse(&text, Path::new(".")).err().expect("rejected").to_string();
    assert!(e.starts_with("workload[1].sizes:") && e.contains("unscheduled_cutoffs"), "{e}");
    // The same distribution twice is fine, and so is setting the cut-offs.
    let same = format!("{}\n[[workload]]\nkind = \"poisson\"\nload = 0.1\nsizes = \"w2\"\n", reference("w2", ""));
    assert!(Scenario::parse(&same, Path::new(".")).is_ok());
    let set = format!("{}\n[[workload]]\nkind = \"poisson\"\nload = 0.1\nsizes = \"w3\"\n", reference("w2", "unscheduled_levels = 1"));
    assert!(Scenario::parse(&set, Path::new(".")).is_ok());
}

#[test]
fn without_a_size_distribution_the_default_split_stands() {
    let text = r#"
[network]
topology = { kind = "single_rack", hosts = 3 }
[transport]
kind = "homa"
[[workload]]
kind = "incast"
senders = [0, 1]
receiver = 2
size = "64KiB"
"#;
    let sc = Scenario::parse(text, Path::new(".")).unwrap();
    let c = homa(&sc);
    assert_eq!((c.unscheduled_levels, c.unscheduled_cutoffs.clone()), (None, None));
    assert!(c.rtt_bytes.is_some());
}
