//! `pl2-run` never writes over anything: an OUT_DIR that exists and is not an empty
//! directory is refused with exit code 2, and the user's files stay as they were.

use std::path::Path;
use std::process::Command;

fn pl2_run(scenario: &Path, out: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_pl2-run")).arg(scenario).arg(out).output().expect("pl2-run starts")
}

fn scenario(dir: &Path) -> std::path::PathBuf {
    let p = dir.join("s.toml");
    std::fs::write(&p, "[run]\nduration = \"5us\"\n\n[[workload]]\nkind = \"incast\"\nsenders = [0, 1]\nreceiver = 2\nsize = \"3KiB\"\n").unwrap();
    p
}

#[test]
fn a_directory_with_files_is_refused_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    let sc = scenario(dir.path());
    let out = dir.path().join("mine");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("thesis.tex"), b"chapter").unwrap();
    let r = pl2_run(&sc, &out);
    assert_eq!(r.status.code(), Some(2), "{}", String::from_utf8_lossy(&r.stderr));
    assert!(String::from_utf8_lossy(&r.stderr).contains("exists and is not empty"));
    assert_eq!(std::fs::read(out.join("thesis.tex")).unwrap(), b"chapter");
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 1, "nothing was added");
}

#[test]
fn a_file_is_refused_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    let sc = scenario(dir.path());
    let r = pl2_run(&sc, &sc);
    assert_eq!(r.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&r.stderr).contains("exists and is not a directory"));
    assert!(std::fs::read_to_string(&sc).unwrap().starts_with("[run]"));
}

#[test]
fn a_new_or_empty_directory_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let sc = scenario(dir.path());
    for out in [dir.path().join("new"), dir.path().join("empty")] {
        if out.ends_with("empty") {
            std::fs::create_dir(&out).unwrap();
        }
        let r = pl2_run(&sc, &out);
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        assert!(out.join("messages.parquet").is_file());
    }
}
