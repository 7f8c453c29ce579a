"""The command line with the fake native module: exit codes and outputs."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from pl2 import Scenario
from pl2.cli import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_INVALID, app

runner = CliRunner()


def _bad(tmp_path: Path) -> Path:
    p = tmp_path / "bad.toml"
    p.write_text('[network.link]\nrate = "fast"\n')
    return p


def test_validate_ok(toy: Scenario, tmp_path: Path) -> None:
    r = runner.invoke(app, ["validate", str(tmp_path / "toy.toml")])
    assert r.exit_code == 0, r.output
    assert f"scenario hash {toy.hash()}" in r.output


def test_validate_invalid(tmp_path: Path) -> None:
    r = runner.invoke(app, ["validate", str(_bad(tmp_path))])
    assert r.exit_code == EXIT_INVALID
    assert "error: network.link.rate: 'fast' is not allowed" in r.output


def test_validate_missing_file(tmp_path: Path) -> None:
    r = runner.invoke(app, ["validate", str(tmp_path / "nope.toml")])
    assert r.exit_code == EXIT_INVALID and "does not exist" in r.output


def test_validate_bad_toml(tmp_path: Path) -> None:
    p = tmp_path / "x.toml"
    p.write_text("[network\n")
    r = runner.invoke(app, ["validate", str(p)])
    assert r.exit_code == EXIT_INVALID and "not valid TOML" in r.output


def test_show(toy: Scenario, tmp_path: Path) -> None:
    r = runner.invoke(app, ["show", str(tmp_path / "toy.toml")])
    assert r.exit_code == 0 and r.stdout == toy.canonical()
    assert runner.invoke(app, ["show", str(_bad(tmp_path))]).exit_code == EXIT_INVALID


def test_inspect_help_keeps_the_table_name() -> None:
    """Rich markup once swallowed `[metrics.trace]` from the help text."""
    r = runner.invoke(app, ["inspect", "--help"], terminal_width=200)
    assert "[metrics.trace]" in r.output and "--message" in r.output


def test_usage_error_is_2() -> None:
    assert runner.invoke(app, ["run"]).exit_code == 2


def test_run_inspect_plot_rerun(toy: Scenario, tmp_path: Path) -> None:
    scen, out = tmp_path / "toy.toml", tmp_path / "out"
    r = runner.invoke(app, ["run", str(scen), "--out", str(out), "--seed", "3"])
    assert r.exit_code == 0, r.output
    assert "latency p99 (µs)" in r.output and (out / "messages.parquet").is_file()
    r = runner.invoke(app, ["inspect", str(out), "--message", "5"])
    assert r.exit_code == 0 and "size_bytes" in r.output
    assert r.output == runner.invoke(app, ["inspect", str(out), "--flow", "5"]).output, "--flow is the old name of --message"
    assert max(len(line) for line in r.output.splitlines()) > 80 or "…" not in r.output, "tables are not cut to 80 columns"
    r = runner.invoke(app, ["inspect", str(out), "--message", "99999"])
    assert r.exit_code == EXIT_INVALID and "--message 99999: no message with that id" in r.output
    r = runner.invoke(app, ["plot", str(out), "--kind", "latency_cdf", "--out", str(tmp_path / "fig")])
    assert r.exit_code == 0 and (tmp_path / "fig.png").is_file() and (tmp_path / "fig.svg").is_file()
    assert runner.invoke(app, ["plot", str(out), "--kind", "queue", "--out", str(tmp_path / "q.svg")]).exit_code == 0
    assert (tmp_path / "q.svg").is_file() and not (tmp_path / "q.png").exists()
    assert runner.invoke(app, ["plot", str(out), "--kind", "pie", "--out", str(tmp_path / "p")]).exit_code == 2
    r = runner.invoke(app, ["rerun", str(out), "--out", str(tmp_path / "again")])
    assert r.exit_code == 0, r.output
    assert "identical" in r.output and "DIFFERS" not in r.output
    (out / "summary.json").write_text("{}\n")
    r = runner.invoke(app, ["rerun", str(out), "--out", str(tmp_path / "again2")])
    assert r.exit_code == EXIT_FAILED and "DIFFERS" in r.output


def test_run_quiet_and_interrupted(toy: Scenario, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import pl2.cli

    r = runner.invoke(app, ["run", str(tmp_path / "toy.toml"), "--out", str(tmp_path / "o"), "--quiet"])
    assert r.exit_code == 0 and r.output == ""

    def interrupted(*a: object, **k: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(pl2.cli, "run_scenario", interrupted)
    r = runner.invoke(app, ["run", str(tmp_path / "toy.toml"), "--out", str(tmp_path / "o")])
    assert r.exit_code == EXIT_INTERRUPTED and "interrupted" in r.output


def test_sweep_exit_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import pl2.cli
    from pl2 import SerialExecutor

    monkeypatch.setattr(pl2.cli, "LocalExecutor", lambda workers: SerialExecutor())
    (tmp_path / "base.toml").write_text("seed = 1\n")
    (tmp_path / "ok.toml").write_text('base = "base.toml"\nseeds = [1, 2]\n')
    (tmp_path / "bad.toml").write_text('base = "base.toml"\n[grid]\nfail = [true]\n')
    store = str(tmp_path / "store")
    r = runner.invoke(app, ["sweep", str(tmp_path / "ok.toml"), "--store", store, "--quiet"])
    assert r.exit_code == 0 and "2 runs (2 run now, 0 reused from the store), 2 done, 0 failed" in r.output
    r = runner.invoke(app, ["sweep", str(tmp_path / "ok.toml"), "--store", store, "--quiet"])
    assert r.exit_code == 0 and "2 runs (0 run now, 2 reused from the store), 2 done, 0 failed" in r.output
    r = runner.invoke(app, ["sweep", str(tmp_path / "bad.toml"), "--store", store, "--quiet"])
    assert r.exit_code == EXIT_FAILED and "fake failure requested" in r.output
    (tmp_path / "worse.toml").write_text('base = "base.toml"\nseeds = [-1]\n')
    assert runner.invoke(app, ["sweep", str(tmp_path / "worse.toml"), "--store", store]).exit_code == EXIT_INVALID


def test_native_missing_is_exit_1(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, toy: Scenario) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "pl2._native", None)
    r = runner.invoke(app, ["validate", str(tmp_path / "toy.toml")])
    assert r.exit_code == EXIT_FAILED and "maturin develop" in r.output


def test_compare_sets_runs_side_by_side(toy: Scenario, tmp_path: Path) -> None:
    scen = tmp_path / "toy.toml"
    for seed in (1, 2):
        assert runner.invoke(app, ["run", str(scen), "--out", str(tmp_path / f"s{seed}"), "--seed", str(seed), "-q"]).exit_code == 0
    r = runner.invoke(app, ["compare", str(tmp_path / "s1"), str(tmp_path / "s2"), "--out", str(tmp_path / "cmp")], terminal_width=200)
    assert r.exit_code == 0, r.output
    assert "latency p99 (µs)" in r.output and "Δ% s2" in r.output
    for f in ("latency_cdf.png", "latency_cdf.svg", "slowdown_by_size.png", "slowdown_by_size.svg", "compare.csv"):
        assert (tmp_path / "cmp" / f).is_file(), f
    assert runner.invoke(app, ["compare", str(tmp_path / "s1")]).exit_code == EXIT_INVALID


def test_compare_table_by_hand() -> None:
    from pl2 import RunResult
    from pl2.compare import compare, labels_for

    def run(p99_ps: float, drops: int) -> RunResult:
        return RunResult({"messages": {"count": 10, "finished": 10, "latency_ps": {"p99": p99_ps}}, "drops": {"buffer_full": drops}, "sim_time_ps": 10**9}, {})

    df = compare({"a": run(2e6, 4), "b": run(3e6, 0)})
    row = {r[0]: r[1:] for r in df.iter_rows()}
    assert row["latency p99 (µs)"] == (2.0, 3.0, 50.0)
    assert row["drops (frames)"] == (4.0, 0.0, -100.0)
    assert row["latency p50 (µs)"] == (None, None, None)
    assert labels_for(["x/run", "y/run", "z"]) == ["x/run", "y/run", "z"]


def test_plot_sweep_from_a_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import pl2.cli
    from pl2 import SerialExecutor

    monkeypatch.setattr(pl2.cli, "LocalExecutor", lambda workers: SerialExecutor())
    (tmp_path / "base.toml").write_text('seed = 1\n\n[[workload]]\nload = 0.5\n')
    (tmp_path / "s.toml").write_text('base = "base.toml"\nname = "loads"\nseeds = [1, 2]\n[grid]\n"workload.0.load" = [0.2, 0.5, 0.8]\n')
    store = str(tmp_path / "store")
    assert runner.invoke(app, ["sweep", str(tmp_path / "s.toml"), "--store", store, "-q"]).exit_code == 0
    r = runner.invoke(app, ["plot-sweep", store, "--x", "workload.0.load", "--y", "latency_p99_ps", "--out", str(tmp_path / "fig.svg")])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "fig.svg").is_file()
    r = runner.invoke(app, ["plot-sweep", store, "--x", "workload.0.load", "--y", "nope", "--out", str(tmp_path / "f2")])
    assert r.exit_code == EXIT_INVALID and "no column 'nope'" in r.output
    r = runner.invoke(app, ["plot-sweep", str(tmp_path), "--x", "a", "--y", "b", "--out", str(tmp_path / "f3")])
    assert r.exit_code == EXIT_INVALID and "is not a results store" in r.output


def test_summary_separates_drops_and_shows_percentiles_both_ways() -> None:
    """A reader of the PL2 paper saw "drops 16" and concluded PL2 loses packets; a run
    with unfinished messages printed "–" for its p99 with no explanation."""
    from rich.console import Console

    from pl2 import RunResult
    from pl2.cli import summary_table

    summary = {
        "scenario": 'name = "x"\n',
        "messages": {"count": 10, "finished": 8, "unfinished": 2,
                     "latency_ps": {"p50": 2e6, "p99": None, "p50_finished": 1.5e6, "p99_finished": 9e6},
                     "slowdown": {"p99": None, "p99_finished": 4.0}},
        "drops": {"buffer_full": 3, "port_limit": 1, "program": 16},
        "drop_causes": {"buffer": 4, "program": 16, "fault": 0},
    }
    console = Console(width=200, record=True)
    console.print(summary_table(RunResult(summary, {})))
    text = console.export_text()
    assert "run x" in text
    assert "drops: buffer full (frames)" in text and " 4 " in text.split("drops: buffer full (frames)")[1].splitlines()[0] + " "
    assert "drops: by a switch program, on purpose (frames)" in text and "injected faults" not in text.split("Drops:")[0]
    assert "–  (finished only: 9.000)" in text and "2.000  (finished only: 1.500)" in text
    assert "count the 2 unfinished messages as infinitely late" in text
