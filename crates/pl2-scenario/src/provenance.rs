//! What reproduces a run: the build that made it (baked in by `build.rs`).

use serde_json::{json, Value};

/// pl2 version, git SHA and dirty flag, hash of the simulator's sources and lock file,
/// compiler, build profile (the output directory Cargo names after it: `debug` for
/// `dev`, `release` also for `bench`; `ci`, `dist`) and target.
pub fn build_info() -> Value {
    json!({
        "version": env!("CARGO_PKG_VERSION"),
        "git_sha": env!("PL2_GIT_SHA"),
        "git_dirty": env!("PL2_GIT_DIRTY"),
        "source_hash": env!("PL2_SOURCE_HASH"),
        "rustc": env!("PL2_RUSTC"),
        "profile": env!("PL2_PROFILE"),
        "target": env!("PL2_TARGET"),
    })
}

/// Hash of the simulator's sources: results from different code never mix in a store.
pub fn source_hash() -> &'static str {
    env!("PL2_SOURCE_HASH")
}

#[cfg(test)]
mod tests {
    /// The profile recorded is the directory this build (and so this test binary,
    /// `<dir>/deps/<test>`) was made in: `ci` under CI, `debug` in a dev build.
    #[test]
    fn the_recorded_profile_is_the_build_directory() {
        let exe = std::env::current_exe().expect("test binary path");
        let dir = exe.parent().and_then(|deps| deps.parent()).and_then(|d| d.file_name()).expect("<dir>/deps/<test>");
        assert_eq!(env!("PL2_PROFILE"), dir.to_string_lossy());
    }
}
