#!/usr/bin/env bash
# Sets up a fresh machine and runs every test: Rust (cargo-nextest, optimised `ci`
# profile) and Python (pytest against the freshly built extension). Prints the time of
# each stage. Used by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
t0=$(date +%s)
stage() { echo "=== [$(( $(date +%s) - t0 ))s] $*"; }

stage "python dependencies"
python3 -m pip install -q --disable-pip-version-check "maturin>=1.5,<2" pytest polars pyarrow matplotlib typer rich duckdb numpy ray scapy

stage "cargo-nextest"
command -v cargo-nextest >/dev/null || cargo install --locked cargo-nextest

# The extension and the Rust tests share one optimised build (profile `ci`).
stage "build and install the Python package (profile ci)"
MATURIN_PEP517_ARGS="--profile ci" python3 -m pip install -q --disable-pip-version-check --no-build-isolation --no-deps -e .

stage "rust tests"
cargo nextest run --cargo-profile ci --workspace

stage "python tests"
python3 -m pytest -q python/tests

# Each reproduction family's quick mode is its own stage, so its time (budget: 2 minutes
# on 2 cores) shows in the log; all write into one output directory and its index.
repro_out=$(mktemp -d)
for fam in $(python3 -c "from pl2.reproduce import FAMILIES; print(*FAMILIES)"); do
    stage "reproduction '$fam', quick mode"
    python3 -m pl2 reproduce "$fam" --quick --out "$repro_out"
done
test -s "$repro_out/report.md"

stage "done"
