//! The layering rule of `pl2-sim`, checked on its source tree: the simulation (`src/sim/`,
//! `src/net/`, `src/engine.rs`) and the run summary (`pl2-scenario/src/summary.rs`) name no
//! protocol, and no import circle joins the simulation and the transports. Protocols live in `src/transport/<name>/` and reach the simulation only
//! through the lists that generate the closed enums (`src/transport/mod.rs`,
//! `src/programs.rs`). See `docs/architecture.md`.
//!
//! A protocol is named by
//! - a module path: `pl2::`, `raw::`, `rds::`, `tcp::` (e.g. `transport::pl2::wire`);
//! - a type or variant name: an identifier that is `Pl2`, `Raw`, `Rds` or `Tcp`, or starts
//!   with one of them followed by a capital or a digit (`Pl2Config`, `Pl2Host`,
//!   `Pl2Switch`, `RawHost`, `TcpStats`, `TransportConfig::Rds` ...);
//! - a snake-case identifier with one of `pl2`, `raw`, `rds`, `tcp` as a word
//!   (`pl2_stats`, `install_pl2`, `tcp_stats`), or PL2's library crate `pl2_protocol`.
//!
//! Prose may still say "PL2" or "TCP" (capitals, not identifiers), and `pl2_sim`, this
//! crate's own name, is allowed. Comments are checked too, so doc links cannot name a
//! protocol either.

use std::path::{Path, PathBuf};

const PROTOCOLS: [&str; 4] = ["pl2", "raw", "rds", "tcp"];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under `dir` (or `dir` itself if it is a file), in name order.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    if dir.is_file() {
        return vec![dir.to_path_buf()];
    }
    let mut out = Vec::new();
    let mut entries: Vec<_> = std::fs::read_dir(dir).expect("source directory").map(|e| e.expect("entry").path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            out.extend(rust_files(&p));
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
    out
}

/// The identifiers of `text`, each with the character that follows it.
fn identifiers(text: &str) -> Vec<(&str, Option<char>)> {
    let mut out = Vec::new();
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i] as char;
        if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while i < b.len() && ((b[i] as char).is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push((&text[start..i], text[i..].chars().next()));
        } else if c.is_ascii_digit() {
            // A number's digits and suffix (`1u64`) are not an identifier.
            while i < b.len() && ((b[i] as char).is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
        } else {
            i += c.len_utf8().max(1);
            while i < b.len() && !text.is_char_boundary(i) {
                i += 1;
            }
        }
    }
    out
}

/// Why identifier `id` (followed by `next`) names a protocol, if it does.
fn names_protocol(id: &str, next: Option<char>) -> Option<&'static str> {
    if id == "pl2_sim" {
        return None;
    }
    if id == "pl2_protocol" {
        return Some("PL2's library crate");
    }
    for p in PROTOCOLS {
        if id == p && next == Some(':') {
            return Some("a module path");
        }
        let camel = {
            let mut c = p.to_string();
            c[..1].make_ascii_uppercase();
            c
        };
        if let Some(rest) = id.strip_prefix(camel.as_str()) {
            if rest.is_empty() || rest.starts_with(|c: char| c.is_ascii_uppercase() || c.is_ascii_digit()) {
                return Some("a type or variant name");
            }
        }
        if id.contains('_') && id.split('_').any(|w| w.eq_ignore_ascii_case(p)) {
            return Some("an identifier with a protocol's name as a word");
        }
    }
    None
}

/// `path` relative to the crate, for messages.
fn rel(path: &Path) -> String {
    path.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap_or(path).display().to_string()
}

/// The files that must name no protocol: the simulation's (the switch and host paths, the
/// network parts, the engine) and the summary, which reads every module's counters
/// generically.
fn protocol_free_files() -> Vec<PathBuf> {
    let summary = Path::new(env!("CARGO_MANIFEST_DIR")).join("../pl2-scenario/src/summary.rs");
    ["sim", "net", "engine.rs"].iter().flat_map(|d| rust_files(&src().join(d))).chain([summary]).collect()
}

#[test]
fn the_simulation_names_no_protocol() {
    let mut found = Vec::new();
    for f in protocol_free_files() {
        let text = std::fs::read_to_string(&f).expect("source file");
        for (n, line) in text.lines().enumerate() {
            for (id, next) in identifiers(line) {
                if let Some(why) = names_protocol(id, next) {
                    found.push(format!("{}:{}: `{id}` ({why})", rel(&f), n + 1));
                }
            }
        }
    }
    assert!(found.is_empty(), "the simulation names a protocol; move the code into the protocol's module:\n{}", found.join("\n"));
}

/// The check itself: what it must catch and what it must let pass.
#[test]
fn the_check_tells_protocol_names_from_prose() {
    let caught = |s: &str| identifiers(s).into_iter().any(|(id, next)| names_protocol(id, next).is_some());
    for s in ["use crate::transport::pl2::Pl2Switch;", "TransportConfig::Rds(c)", "sim.tcp_stats()", "fn install_pl2()", "RawHost::new", "pl2_protocol::timeslot", "raw::RawConfig", "Pl2(Box<X>)"] {
        assert!(caught(s), "{s}");
    }
    for s in ["/// PL2's scheduler and TCP's ACKs", "use pl2_sim::units::SimTime;", "let raw = 3;", "records.drops", "RawWindow", "// raw Ethernet"] {
        assert_eq!(caught(s), s == "RawWindow", "{s}");
    }
}

/// Imports between the simulation and the modules go one way: the simulation uses the
/// transports (through their lists) and the workloads, the transports never use the
/// simulation or the engine, and the network parts, the workloads and the engine use
/// neither, so no circle can form.
#[test]
fn no_import_circle_joins_the_simulation_and_the_transports() {
    let rules: [(&str, &[&str]); 6] = [
        ("transport", &["crate::sim", "crate::engine"]),
        ("workload", &["crate::sim", "crate::transport", "crate::programs", "crate::engine"]),
        ("programs.rs", &["crate::sim", "crate::engine"]),
        ("net", &["crate::sim", "crate::transport", "crate::programs", "crate::engine"]),
        ("engine.rs", &["crate::sim", "crate::transport", "crate::programs", "crate::net"]),
        ("packet.rs", &["crate::sim", "crate::transport", "crate::programs", "crate::net", "crate::engine"]),
    ];
    let mut found = Vec::new();
    for (dir, banned) in rules {
        for f in rust_files(&src().join(dir)) {
            let text = std::fs::read_to_string(&f).expect("source file");
            for (n, line) in text.lines().enumerate() {
                // Code only: a comment may point the reader anywhere.
                let code = line.split("//").next().unwrap_or("");
                for b in banned {
                    if code.contains(b) {
                        found.push(format!("{}:{}: uses `{b}`", rel(&f), n + 1));
                    }
                }
            }
        }
    }
    assert!(found.is_empty(), "an import against the layering (docs/architecture.md):\n{}", found.join("\n"));
}
