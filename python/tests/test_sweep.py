"""Sweeps: spec files, run enumeration and ids, skipping finished runs, recording
failures and carrying on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pytest

from exec_helpers import CountingExecutor

from pl2 import Scenario, ScenarioError, SerialExecutor, Sweep, open_store, run_sweep
from pl2.sweep import flatten


def _spec(tmp_path: Path, body: str) -> Path:
    (tmp_path / "base.toml").write_text('seed = 1\n\n[network.link]\nrate = "100Gbps"\n\n[[workload]]\nload = 0.5\n')
    p = tmp_path / "spec.toml"
    p.write_text('base = "base.toml"\n' + body)
    return p


def test_from_file_grid_and_seeds(tmp_path: Path) -> None:
    sw = Sweep.from_file(_spec(tmp_path, 'name = "rates"\nseeds = [1, 2]\n[grid]\n"network.link.rate" = ["25Gbps", "100Gbps"]\n"workload.0.load" = [0.1, 0.5, 0.9]\n'))
    assert sw.name == "rates" and len(sw) == 12
    runs = list(sw.runs())
    assert len(runs) == 12 and len({r.run_id for r in runs}) == 12
    assert all(r.run_id.endswith("-fakecode") for r in runs)
    first = runs[0]
    assert first.overrides == {"network.link.rate": "25Gbps", "workload.0.load": 0.1, "seed": 1}
    assert first.params == {"network.link.rate": "25Gbps", "workload.0.load": 0.1} and first.seed == 1
    assert first.run_id == f"{first.scenario.hash()}-fakecode"


def test_unquoted_grid_paths_are_flattened(tmp_path: Path) -> None:
    sw = Sweep.from_file(_spec(tmp_path, '[grid.network.link]\nrate = ["25Gbps", "100Gbps"]\n'))
    assert sw.grid == {"network.link.rate": ["25Gbps", "100Gbps"]} and sw.name == "spec"


def test_cases_times_grid(tmp_path: Path) -> None:
    sw = Sweep.from_file(_spec(tmp_path, '[grid]\nname = ["x"]\n[[case]]\n"network.link.rate" = "25Gbps"\n[[case]]\nnetwork.link.rate = "40Gbps"\n'))
    assert sw.points() == [{"network.link.rate": "25Gbps", "name": "x"}, {"network.link.rate": "40Gbps", "name": "x"}]


def test_flatten_keeps_dotted_tables_whole() -> None:
    assert flatten({"a": {"b": 1, "c.d": {"e": 2}}}) == {"a.b": 1, "a.c.d": {"e": 2}}


def test_identical_points_run_once(toy: Scenario) -> None:
    sw = Sweep(toy, grid={"network.link.rate": ["100Gbps", "100Gbps"]}, seeds=[1])
    assert len(list(sw.runs())) == 1


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("colour = 1\n", "unknown key.*colour.*allowed: base, name"),
        ("[grid]\n\"name\" = 3\n", "grid\\['name'\\] = 3: must be a non-empty list"),
        ("[grid]\nseed = [3]\n", "'seed' in a grid or case; list seeds with seeds = "),
        ("seeds = [-1]\n", "seeds = \\[-1\\]: must be a non-empty list of integers"),
        ("[grid]\n\"network.link.rate\" = [\"fast\"]\n", "run with .*network.link.rate: 'fast' is not allowed"),
        ("[grid]\n\"network.nope.rate\" = [1]\n", "network has no 'nope'"),
    ],
)
def test_spec_errors(tmp_path: Path, body: str, message: str) -> None:
    with pytest.raises(ScenarioError, match=message):
        list(Sweep.from_file(_spec(tmp_path, body)).runs())


def test_spec_base_missing(tmp_path: Path) -> None:
    p = tmp_path / "spec.toml"
    p.write_text('base = "nope.toml"\n')
    with pytest.raises(ScenarioError, match="nope.toml' does not exist"):
        Sweep.from_file(p)


def test_run_sweep_skips_done_and_records_failures(toy: Scenario, tmp_path: Path) -> None:
    store = open_store(tmp_path / "store")
    sw = Sweep(toy, grid={"workload.0.load": [0.1, 0.2], "fail": [False, True]}, seeds=[1, 2], name="s1")
    ex = CountingExecutor()
    df = run_sweep(sw, store, executor=ex, progress=False)
    assert len(ex.ran) == 8 and df.height == 8
    assert df.group_by("status").len().sort("status").rows() == [("done", 4), ("failed", 4)]
    failed = df.filter(pl.col("status") == "failed")
    assert failed["fail"].to_list() == [True] * 4
    assert all("fake failure requested" in e for e in failed["error"].to_list())
    assert set(df["workload.0.load"].to_list()) == {0.1, 0.2} and set(df["seed"].to_list()) == {1, 2}

    ex2 = CountingExecutor()
    df2 = run_sweep(sw, store, executor=ex2, progress=False)
    assert sorted(ex2.ran) == sorted(failed["run_id"].to_list()), "only the failed runs are retried"
    assert df2.drop("error").equals(df.drop("error"))
    assert store.load_all().height == 8


def test_sweep_result_has_this_sweeps_params(toy: Scenario, tmp_path: Path) -> None:
    store = open_store(tmp_path / "store")
    run_sweep(Sweep(toy, grid={"network.link.rate": ["100Gbps"]}, name="a"), store, SerialExecutor(), progress=False)
    df = run_sweep(Sweep(toy, grid={"network.link.rate": ["100Gbps"]}, cases=[{"name": "toy"}], name="b"), store, SerialExecutor(), progress=False)
    assert df.height == 1 and df["name"].to_list() == ["toy"], "same run, this sweep's parameters"
    assert df["sweep"].to_list() == ["a"], "the catalogue keeps the sweep that made the run"


def test_run_sweep_with_forced_progress(toy: Scenario, tmp_path: Path) -> None:
    df = run_sweep(Sweep(toy, seeds=[1, 2]), open_store(tmp_path / "store"), SerialExecutor(), progress="always")
    assert df["status"].to_list() == ["done", "done"]


def test_ctrl_c_in_a_serial_sweep_stores_nothing_partial(toy: Scenario, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import signal

    import fake_native

    real_run = fake_native.run

    def run_then_ctrl_c(text: str, base_dir: str, progress: Any) -> Any:
        def cb(*a: Any) -> Any:
            signal.raise_signal(signal.SIGINT)  # to this thread, handled before it returns
            return progress(*a)

        return real_run(text, base_dir, cb)

    monkeypatch.setattr(fake_native, "run", run_then_ctrl_c)
    store = open_store(tmp_path / "store")
    # Ctrl-C raises KeyboardInterrupt here even if this process was started with SIGINT
    # ignored (a background job), as test_run.py's `sigint` fixture explains.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            run_sweep(Sweep(toy, seeds=[1, 2]), store, SerialExecutor(), progress=False)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert store.load_all().height == 0 and not any(store.runs_dir.iterdir())


def test_code_change_during_a_sweep_is_a_failure_not_a_mixup(toy: Scenario, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import fake_native

    store = open_store(tmp_path / "store")
    planned = list(Sweep(toy).runs())
    monkeypatch.setitem(fake_native.BUILD, "source_hash", "newcode")
    df = run_sweep(Sweep(toy), store, SerialExecutor(), progress=False)
    assert df["run_id"].to_list() == [planned[0].run_id.replace("fakecode", "newcode")]
    monkeypatch.setattr("pl2._ffi.code_hash", lambda: "fakecode")
    df = run_sweep(Sweep(toy), store, SerialExecutor(), progress=False)
    assert df["status"].to_list() == ["failed"] and "native module changed" in df["error"][0]
    assert not store.has(planned[0].run_id)
