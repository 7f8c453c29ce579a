"""The results store: atomic, idempotent writes; failures; catalogue queries; the
catalogue rebuilt from the run files equals the original."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import polars as pl
import pytest

import pl2
from pl2 import Scenario, StoreError, open_store
from pl2.errors import OutputPathError
from pl2.store import Store


def _done(store: Store, sc: Scenario, params: dict, sweep: str | None = "s") -> str:
    r = pl2.run(sc, progress=False)
    run_id = f"{r.scenario_hash}-fakecode"
    store.record_done(run_id, r, params, sweep=sweep)
    return run_id


def _catalogue(store: Store) -> pl.DataFrame:
    return store.query("SELECT * FROM runs ORDER BY run_id")


def test_layout_and_record_done(toy: Scenario, tmp_path: Path) -> None:
    store = open_store(tmp_path / "st")
    run_id = _done(store, toy, {"network.link.rate": "100Gbps"})
    d = tmp_path / "st" / "runs" / run_id
    assert store.has(run_id) and d.is_dir()
    assert sorted(p.name for p in d.iterdir()) == [".pl2-run", "drops.parquet", "goodput.parquet", "messages.parquet", "ports.parquet", "run.json", "scenario.toml", "summary.json"]
    assert list((tmp_path / "st" / "tmp").iterdir()) == [], "nothing left in tmp"
    row = _catalogue(store).row(0, named=True)
    assert row["status"] == "done" and row["seed"] == 7 and row["code_hash"] == "fakecode"
    assert row["msg_count"] == 200 and row["drops_total"] == 30 and row["goodput_gbps_total"] == pytest.approx(15.0)
    assert row["latency_p999_ps"] is None and row["path"] == f"runs/{run_id}"
    assert json.loads(row["params"]) == {"network.link.rate": "100Gbps"}
    assert store.load(run_id).summary["scenario_hash"] == run_id.split("-")[0]


def test_record_done_is_idempotent(toy: Scenario, tmp_path: Path) -> None:
    store = open_store(tmp_path / "store")
    run_id = _done(store, toy, {"a": 1})
    before = {p.name: p.read_bytes() for p in store.run_dir(run_id).iterdir()}
    _done(store, toy, {"a": 2}, sweep="other")
    assert {p.name: p.read_bytes() for p in store.run_dir(run_id).iterdir()} == before, "an existing run is kept"
    assert list(store.tmp_dir.iterdir()) == []
    assert _catalogue(store).height == 1


def test_rename_race_discards_tmp(toy: Scenario, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = open_store(tmp_path / "store")
    r = pl2.run(toy, progress=False)
    run_id = f"{r.scenario_hash}-fakecode"
    real_rename = os.rename

    def racing_rename(src: str, dst: str) -> None:
        shutil.copytree(src, dst)  # another writer finished first
        real_rename(src, dst)

    monkeypatch.setattr(os, "rename", racing_rename)
    store.record_done(run_id, r, {})
    assert store.has(run_id) and list(store.tmp_dir.iterdir()) == []


def test_killed_writer_leaves_no_partial_run(toy: Scenario, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = open_store(tmp_path / "store")
    r = pl2.run(toy, progress=False)
    run_id = f"{r.scenario_hash}-fakecode"

    def die(src: str, dst: str) -> None:
        raise SystemExit("killed before the rename")

    monkeypatch.setattr(os, "rename", die)
    with pytest.raises(SystemExit):
        store.record_done(run_id, r, {})
    monkeypatch.undo()
    assert not store.has(run_id), "no partial run directory"
    assert store.load_all().height == 0
    leftovers = list(store.tmp_dir.iterdir())
    assert len(leftovers) == 1 and leftovers[0].name.startswith(f"{os.getpid()}-")
    (store.tmp_dir / "999999999-dead").mkdir()
    assert store.clean_tmp() == 1, "only the dead writer's leftovers go"


def test_failed_then_done(toy: Scenario, tmp_path: Path) -> None:
    store = open_store(tmp_path / "store")
    run_id = f"{toy.hash()}-fakecode"
    store.record_failed(run_id, {"x": 1}, "RuntimeError: boom", seed=7, sweep="s")
    assert (tmp_path / "store" / "failed" / f"{run_id}.json").is_file()
    row = _catalogue(store).row(0, named=True)
    assert row["status"] == "failed" and row["error"] == "RuntimeError: boom" and row["msg_count"] is None
    assert not store.has(run_id)
    _done(store, toy, {"x": 1})
    assert not (tmp_path / "store" / "failed" / f"{run_id}.json").exists()
    assert _catalogue(store)["status"].to_list() == ["done"]
    store.record_failed(run_id, {"x": 1}, "late failure")
    assert _catalogue(store)["status"].to_list() == ["done"], "a finished run stays finished"


def test_rebuild_equals_original(toy: Scenario, tmp_path: Path) -> None:
    store = open_store(tmp_path / "store")
    for seed in (1, 2, 3):
        _done(store, toy.with_overrides({"seed": seed}), {"network.link.rate": "100Gbps", "workload.0.load": 0.5})
    store.record_failed("00000000deadbeef-fakecode", {"network.link.rate": "1Gbps"}, "ScenarioError: bad", seed=4, sweep="s")
    _done(store, toy, {}, sweep=None)
    original = _catalogue(store)
    assert original.height == 5
    assert store.rebuild_catalogue() == 5
    assert _catalogue(store).equals(original)


def _five_runs(store: Store, toy: Scenario) -> pl.DataFrame:
    for seed in (1, 2, 3):
        _done(store, toy.with_overrides({"seed": seed}), {"workload.0.load": 0.5})
    store.record_failed("00000000deadbeef-fakecode", {"network.link.rate": "1Gbps"}, "ScenarioError: bad", seed=4, sweep="s")
    _done(store, toy, {}, sweep=None)
    return _catalogue(store)


def test_a_deleted_catalogue_is_rebuilt_on_open(toy: Scenario, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """It used to read as an empty store, with no warning."""
    original = _five_runs(open_store(tmp_path / "store"), toy)
    (tmp_path / "store" / "catalogue.duckdb").unlink()
    fresh = open_store(tmp_path / "store")
    assert _catalogue(fresh).equals(original)
    err = capsys.readouterr().err
    assert "catalogue of" in err and "was missing" in err


def test_a_corrupt_catalogue_is_kept_aside_and_rebuilt(toy: Scenario, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    original = _five_runs(open_store(tmp_path / "store"), toy)
    garbage = b"this is not a duckdb file" * 100
    (tmp_path / "store" / "catalogue.duckdb").write_bytes(garbage)
    fresh = open_store(tmp_path / "store")
    assert _catalogue(fresh).equals(original)
    err = capsys.readouterr().err
    assert "could not be read" in err and "rebuilt" in err
    kept = list((tmp_path / "store" / "corrupt").iterdir())
    assert len(kept) == 1 and kept[0].read_bytes() == garbage, "the corrupt file is kept, byte for byte"
    open_store(tmp_path / "store")
    assert capsys.readouterr().err == "", "a healthy catalogue is left alone"


def test_a_stale_catalogue_is_rebuilt(toy: Scenario, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = open_store(tmp_path / "store")
    original = _five_runs(store, toy)
    with store._connect() as con:
        con.execute("DELETE FROM runs WHERE status = 'failed'")
    fresh = open_store(tmp_path / "store")
    assert _catalogue(fresh).equals(original)
    assert "out of date" in capsys.readouterr().err


def test_ensure_catalogued_repairs_a_missing_row(toy: Scenario, tmp_path: Path) -> None:
    store = open_store(tmp_path / "store")
    run_id = _done(store, toy, {"k": "v"})
    with store._connect() as con:
        con.execute("DELETE FROM runs")
    assert store.ensure_catalogued([run_id, "ffff-fakecode"]) == 1
    assert json.loads(_catalogue(store)["params"][0]) == {"k": "v"}


def test_load_all_expands_params(toy: Scenario, tmp_path: Path) -> None:
    store = open_store(tmp_path / "store")
    _done(store, toy, {"rate": "25Gbps", "load": 0.5, "hosts": 4})
    _done(store, toy.with_overrides({"seed": 1}), {"rate": "100Gbps", "load": 1, "hosts": [0, 1]})
    df = store.load_all()
    assert df.schema["rate"] == pl.Utf8 and df.schema["load"] == pl.Float64 and df.schema["hosts"] == pl.Utf8
    assert sorted(df["load"].to_list()) == [0.5, 1.0]


def test_bad_run_id(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="not <scenario_hash>-<code_hash>"):
        open_store(tmp_path / "store").has("../../etc")


def test_root_is_a_file(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("")
    with pytest.raises(OutputPathError, match="exists and is not a directory"):
        open_store(tmp_path / "f")
    assert (tmp_path / "f").read_text() == "", "the file is untouched"


def test_parameters_are_columns_for_sql(toy: Scenario, tmp_path: Path) -> None:
    store = open_store(tmp_path / "store")
    for load, rate in ((0.5, "100Gbps"), (0.2, "25Gbps"), (0.9, "10Gbps")):
        _done(store, toy.with_overrides({"workload.0.load": load}), {"workload.0.load": load, "network.link.rate": rate, "seed": 1})
    df = store.query('SELECT "workload.0.load", "network.link.rate", "params.seed" FROM runs_wide WHERE "workload.0.load" > 0.3 ORDER BY "workload.0.load" DESC')
    assert df.rows() == [(0.9, "10Gbps", 1.0), (0.5, "100Gbps", 1.0)]
    assert store.query("SELECT * FROM runs_wide").schema["workload.0.load"] == pl.Float64
