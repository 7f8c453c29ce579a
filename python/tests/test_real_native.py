"""Integration tests with the compiled `pl2._native` (skipped when it is not built):
the contract's shapes, determinism end to end, a process-pool sweep, and a sweep that is
SIGKILLed midway and resumed. Scenario: tests/data/real_small.toml, or the file named by
$PL2_TEST_SCENARIO."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

import pl2
from pl2 import LocalExecutor, Scenario, Sweep, open_store, run_sweep
from pl2.cli import app

pytestmark = pytest.mark.real_native
PYTHON_DIR = Path(__file__).resolve().parent.parent
SCENARIO = Path(os.environ.get("PL2_TEST_SCENARIO", Path(__file__).resolve().parent / "data" / "real_small.toml"))


@pytest.fixture
def scenario(tmp_path: Path) -> Path:
    p = tmp_path / "scenario.toml"
    shutil.copy(SCENARIO, p)
    return p


def test_contract_shapes(scenario: Path) -> None:
    sc = Scenario.from_file(scenario)
    assert Scenario.from_toml(sc.canonical(), sc.base_dir).hash() == sc.hash()
    r = pl2.run(sc, progress=False)
    for key in ("scenario", "scenario_hash", "seed", "build", "stop_reason", "sim_time_ps", "counters", "messages", "goodput_gbps", "drops", "max_queue_bytes"):
        assert key in r.summary, key
    assert r.summary["scenario_hash"] == sc.hash() and r.scenario == sc.canonical()
    assert set(r.tables) >= {"messages", "drops", "ports", "goodput"}
    assert r.messages.columns[:4] == ["id", "src", "dst", "size_bytes"]
    assert {"source_hash", "version"} <= set(pl2._ffi.call("build_info"))


def test_invalid_is_scenario_error(tmp_path: Path) -> None:
    with pytest.raises(pl2.ScenarioError, match="network.link.rate"):
        Scenario.from_toml('[network.link]\nrate = "fast"\n', tmp_path).validate()


def test_progress_and_early_stop(scenario: Path) -> None:
    calls: list[tuple[int, int, int, float]] = []

    def stop_at_once(*a: object) -> bool:
        calls.append(a)  # type: ignore[arg-type]
        return False

    long = Scenario.from_file(scenario).with_overrides({"run.duration": "50ms"})
    r = pl2.run(long, progress=stop_at_once)
    assert len(calls) == 1, "progress must be called about every 100 ms of wall time (and the run stop at the first False)"
    sim_ps, end_ps, events, wall_s = calls[0]
    assert end_ps == 50 * 10**9 and 0 < sim_ps < end_ps and events > 0 and wall_s > 0
    assert r.summary["sim_time_ps"] < end_ps


def test_a_progress_object_hears_when_the_tables_are_written(scenario: Path, tmp_path: Path) -> None:
    # Parquet files are written after the simulation ends; a progress object with a
    # `writing()` method (the progress bar's says "writing tables") is told then: once,
    # after the last progress call, before any Parquet file exists.
    seen: list[object] = []

    class Watcher:
        def __call__(self, sim_ps: int, end_ps: int, events: int, wall_s: float) -> bool:
            seen.append(sim_ps)
            return True

        def writing(self) -> None:
            seen.append(sorted(p.name for p in tmp_path.glob(".o.partial-*/*")))

    pl2.run(Scenario.from_file(scenario).with_overrides({"run.duration": "20ms"}), progress=Watcher(), out=tmp_path / "o")
    listings = [x for x in seen if isinstance(x, list)]
    assert len(listings) == 1 and seen[-1] is listings[0] and len(seen) >= 2, seen
    assert not any(name.endswith(".parquet") for name in listings[0]), listings[0]
    assert (tmp_path / "o" / "messages.parquet").exists()


def test_a_run_whose_result_is_discarded_writes_no_table(scenario: Path, tmp_path: Path) -> None:
    # After Ctrl-C the result is thrown away: the core is told so and skips the Parquet
    # files (which can take seconds on long runs) rather than write what is deleted.
    sc = Scenario.from_file(scenario)
    names = {}
    for write in (False, True):
        out = tmp_path / f"write-{write}"
        pl2._ffi.call("run_to_dir", sc.text, sc.base_dir, str(out), None, lambda: write)
        names[write] = {p.name for p in out.iterdir()}
    assert names[False] == set(), names
    assert {"messages.parquet", "drops.parquet", "summary.json"} <= names[True], names


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_ctrl_c_and_sigterm_stop_promptly(scenario: Path, tmp_path: Path, sig: int, code: int) -> None:
    long = tmp_path / "long.toml"
    long.write_text(scenario.read_text().replace('duration = "300us"', 'duration = "1s"'))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(PYTHON_DIR), os.environ.get("PYTHONPATH", "")])}
    p = subprocess.Popen([sys.executable, "-m", "pl2", "run", str(long), "--out", str(tmp_path / "o")], env=env, stderr=subprocess.PIPE, text=True)
    time.sleep(5.0)
    p.send_signal(sig)
    t0 = time.monotonic()
    try:
        _, err = p.communicate(timeout=120)
    finally:
        p.kill()
    assert p.returncode == code, err
    assert time.monotonic() - t0 < 10.0, "the run stops within about a progress period (~100 ms; generous for loaded machines)"
    assert sorted(x.name for x in tmp_path.iterdir()) == ["long.toml", "scenario.toml"], "an interrupted run writes nothing, no .partial directory"
    assert "Traceback" not in err


def test_runs_are_byte_identical_and_rerun_agrees(scenario: Path, tmp_path: Path) -> None:
    # The Python API and the command line write the same files, byte for byte.
    pl2.run(scenario, progress=False, out=tmp_path / "api")
    r = CliRunner().invoke(app, ["run", str(scenario), "--out", str(tmp_path / "cli"), "--quiet"])
    assert r.exit_code == 0, r.output
    names = sorted(p.name for p in (tmp_path / "api").iterdir())
    assert names == sorted(p.name for p in (tmp_path / "cli").iterdir())
    assert "messages.parquet" in names and "summary.json" in names
    for n in names:
        assert (tmp_path / "api" / n).read_bytes() == (tmp_path / "cli" / n).read_bytes(), n
    # In-memory results are written by the same native writer: the same files again,
    # and so is a run loaded and written elsewhere.
    a = pl2.run(scenario, progress=False).write(tmp_path / "a")
    b = pl2.RunResult.load(tmp_path / "cli").write(tmp_path / "b")
    assert {p.name for p in a} == set(names) - {".pl2-run"}
    for p in a + b:
        assert p.read_bytes() == (tmp_path / "cli" / p.name).read_bytes(), p
    r = CliRunner().invoke(app, ["rerun", str(tmp_path / "cli"), "--out", str(tmp_path / "c"), "--quiet"])
    assert r.exit_code == 0, r.output


def test_a_stored_run_is_byte_identical_to_pl2_run(scenario: Path, tmp_path: Path) -> None:
    """The store keeps the files the native writer made, so `pl2 rerun` of a run taken
    from the store finds every file identical (it once found six tables DIFFERS)."""
    from pl2 import SerialExecutor

    sw = Sweep(Scenario.from_file(scenario), name="one")
    df = run_sweep(sw, open_store(tmp_path / "store"), SerialExecutor(), progress=False)
    stored = tmp_path / "store" / df["path"][0]
    r = CliRunner().invoke(app, ["rerun", str(stored), "--out", str(tmp_path / "again"), "--quiet"])
    assert r.exit_code == 0 and "DIFFERS" not in r.output, r.output


def test_process_pool_sweep(scenario: Path, tmp_path: Path) -> None:
    sw = Sweep(Scenario.from_file(scenario), grid={"workload.0.load": [0.2, 0.4]}, seeds=[1, 2], name="pool")
    df = run_sweep(sw, open_store(tmp_path / "store"), LocalExecutor(2), progress=False)
    assert df.height == 4 and df["status"].to_list() == ["done"] * 4
    s = pl2.summarise(df, by=["workload.0.load"])
    assert s["runs"].to_list() == [2, 2]


def test_sigkill_sweep_resumes(scenario: Path, tmp_path: Path) -> None:
    seeds = list(range(1, 9))
    spec = tmp_path / "spec.toml"
    spec.write_text(f'base = "scenario.toml"\nname = "killme"\nseeds = {seeds}\n[grid]\n"run.duration" = ["10ms"]\n')
    root = tmp_path / "store"
    total = len(seeds)
    # A worker killed with its driver cannot remove its run's temporary directory: keep
    # those in the test's own directory rather than the machine's.
    (tmp_path / "tmp").mkdir()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(PYTHON_DIR), os.environ.get("PYTHONPATH", "")]),
           "TMPDIR": str(tmp_path / "tmp")}
    cmd = [sys.executable, "-m", "pl2", "sweep", str(spec), "--store", str(root), "--workers", "2", "--quiet"]
    log = tmp_path / "first.log"
    with log.open("w") as out:
        first = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    runs = root / "runs"
    deadline = time.monotonic() + 300
    while not (runs.is_dir() and any(runs.iterdir())):
        assert first.poll() is None, f"the sweep ended before any run finished: {log.read_text()}"
        assert time.monotonic() < deadline, "no run finished in 300 s"
        time.sleep(0.02)
    os.kill(first.pid, signal.SIGKILL)
    first.wait()
    done_before = len(list(runs.iterdir()))
    assert done_before < total, f"all {total} runs finished before the kill: lengthen run.duration in {SCENARIO}"
    _wait_group_gone(first.pid)

    second = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
    assert second.returncode == 0, second.stdout + second.stderr
    store = open_store(root)
    cat = store.query("SELECT * FROM runs ORDER BY run_id")
    assert cat.height == total and cat["run_id"].n_unique() == total
    assert cat["status"].to_list() == ["done"] * total
    assert len(list(runs.iterdir())) == total and list(store.tmp_dir.iterdir()) == []
    ids = {r.run_id for r in Sweep.from_file(spec).runs()}
    assert set(cat["run_id"].to_list()) == ids
    store.rebuild_catalogue()
    assert store.query("SELECT * FROM runs ORDER BY run_id").equals(cat)
    assert pl.DataFrame(cat).filter(pl.col("sweep") != "killme").height == 0


def _wait_group_gone(pgid: int, timeout_s: float = 10.0) -> None:
    """Waits until no process of group `pgid` (the killed driver's workers) is left."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return
        if time.monotonic() > deadline:
            left = subprocess.run(["ps", "-o", "pid,stat,args", "-g", str(pgid)], capture_output=True, text=True).stdout
            os.killpg(pgid, signal.SIGKILL)
            pytest.fail(f"processes outlived the killed sweep driver:\n{left}")
        time.sleep(0.05)


def test_a_probe_plot_of_a_missing_flow_is_an_error(scenario: Path, tmp_path: Path) -> None:
    """It used to write an empty figure and exit 0."""
    run = tmp_path / "run"
    tcp = tmp_path / "tcp.toml"
    tcp.write_text(scenario.read_text() + '\n[transport]\nkind = "tcp"\n')
    pl2.run(tcp, progress=False, out=run)
    flows = pl2.RunResult.load(run).probes["flow"].unique().sort().to_list()
    assert flows, "the test scenario publishes probes"
    r = CliRunner().invoke(app, ["plot", str(run), "--kind", "probes", "--flow", str(max(flows) + 1000), "--out", str(tmp_path / "p")])
    assert r.exit_code == 2 and "has no probes for that flow" in r.output, r.output
    assert not (tmp_path / "p.png").exists()
    r = CliRunner().invoke(app, ["plot", str(run), "--kind", "probes", "--flow", str(flows[0]), "--out", str(tmp_path / "p")])
    assert r.exit_code == 0, r.output


def test_messages_say_which_workload_they_came_from() -> None:
    """Each message row names its `[[workload]]` by index: an incast's messages are
    exactly its senders × count, an RPC workload's are the requests and responses its
    `rpcs` rows name, and the Poisson background owns the rest."""
    text = """
name = "three-workloads"
seed = 3
[run]
duration = "300us"
[network]
topology = { kind = "single_rack", hosts = 4 }
link = { rate = "10Gbps", delay = "1us" }
host = { threads = 8 }
[[workload]]
kind = "incast"
senders = "0..2"
receiver = 3
size = "10KiB"
count = 2
interval = "50us"
[[workload]]
kind = "poisson"
hosts = "2..4"
load = 0.2
sizes = "w1"
[[workload]]
kind = "rpc"
clients = [0]
servers = [1]
concurrency = 2
request_size = "88B"
response_size = "4124B"
first_thread = 4
"""
    r = pl2.run(Scenario.from_toml(text), progress=False)
    m = r.messages
    incast = m.filter(pl.col("workload") == 0)
    assert incast.height == 2 * 2 and set(incast["src"]) == {0, 1} and set(incast["dst"]) == {3}
    rpc_ids = set(r.rpcs["request_id"]) | set(r.rpcs["response_id"].drop_nulls())
    assert rpc_ids and set(m.filter(pl.col("workload") == 2)["id"]) == rpc_ids
    background = m.filter(pl.col("workload") == 1)
    assert background.height > 0 and set(background["src"]) <= {2, 3}
    assert m.height == incast.height + len(rpc_ids) + background.height
