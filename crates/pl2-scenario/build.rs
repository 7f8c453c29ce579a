//! Bakes provenance into the binary: git SHA and dirty flag (an installed wheel has no
//! `.git`), a hash of the simulator's sources and lock file (docs excluded, so editing
//! documentation invalidates no stored result), rustc version, profile and target.

use std::path::{Path, PathBuf};
use std::process::Command;

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            if p.file_name().is_some_and(|n| n == "target" || n == "tests" || n == "benches") {
                continue;
            }
            collect(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs" || x == "txt" || x == "toml")
            || p.file_name().is_some_and(|n| n == "Cargo.lock")
        {
            out.push(p);
        }
    }
}

/// FNV-1a over (path, contents) of every source file, in sorted order.
fn source_hash(root: &Path) -> String {
    let mut files = Vec::new();
    collect(&root.join("crates"), &mut files);
    for f in ["Cargo.toml", "Cargo.lock"] {
        files.push(root.join(f));
    }
    files.sort();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |b: &[u8]| {
        for x in b {
            h ^= *x as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    for f in &files {
        if let Ok(bytes) = std::fs::read(f) {
            eat(f.strip_prefix(root).unwrap_or(f).to_string_lossy().as_bytes());
            eat(&bytes);
        }
        println!("cargo:rerun-if-changed={}", f.display());
    }
    format!("{h:016x}")
}

fn git(root: &Path, args: &[&str]) -> Option<String> {
    let o = Command::new("git").args(args).current_dir(root).output().ok()?;
    o.status.success().then(|| String::from_utf8_lossy(&o.stdout).trim().to_string())
}

/// The build's output directory under `target/` (`debug`, `release`, `ci`, `dist`...):
/// Cargo's `PROFILE` says only `debug` or `release`, whatever custom profile inherits
/// from them. `OUT_DIR` is `<target>/[<triple>/]<dir>/build/<package>-<hash>/out`.
fn profile_dir() -> String {
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap_or_default());
    let dir = out.ancestors().find(|a| a.file_name().is_some_and(|n| n == "build")).and_then(|b| b.parent()).and_then(|p| p.file_name());
    match dir {
        Some(d) => d.to_string_lossy().into_owned(),
        None => std::env::var("PROFILE").unwrap_or_default(),
    }
}

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let root = manifest.parent().and_then(|p| p.parent()).unwrap().to_path_buf();
    let sha = git(&root, &["rev-parse", "HEAD"]).unwrap_or_else(|| "unknown".into());
    let dirty = git(&root, &["status", "--porcelain", "--untracked-files=no"]).map(|s| !s.is_empty());
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let rustc_v = Command::new(rustc)
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    println!("cargo:rustc-env=PL2_GIT_SHA={sha}");
    println!("cargo:rustc-env=PL2_GIT_DIRTY={}", dirty.map_or("unknown".into(), |d| d.to_string()));
    println!("cargo:rustc-env=PL2_SOURCE_HASH={}", source_hash(&root));
    println!("cargo:rustc-env=PL2_RUSTC={rustc_v}");
    println!("cargo:rustc-env=PL2_PROFILE={}", profile_dir());
    println!("cargo:rustc-env=PL2_TARGET={}", std::env::var("TARGET").unwrap_or_default());
    if root.join(".git").exists() {
        println!("cargo:rerun-if-changed={}", root.join(".git/HEAD").display());
        println!("cargo:rerun-if-changed={}", root.join(".git/index").display());
    }
}
