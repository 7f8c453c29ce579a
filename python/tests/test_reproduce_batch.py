"""`pl2 reproduce` in batches: `Context.run_many` skips runs already in the store, runs
the rest on an executor, stores each in the driver and returns results in the jobs'
order; a figure gives the same data and report through local worker processes as in
this process."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from exec_helpers import CountingExecutor
from repro_helpers import same_figure

from pl2 import LocalExecutor, Scenario, ScenarioError, SerialExecutor, open_store
from pl2 import reproduce as rep
from pl2._progress import LogProgress
from pl2.reproduce.common import Context, Job, RunsFailed


def _ctx(tmp_path: Path, executor: Any) -> Context:
    return Context(out=tmp_path / "fig", store=open_store(tmp_path / "store"), seeds=[1], quick=True,
                   log=lambda *_: None, executor=executor)


def _jobs(sc: Scenario, seeds: list[int]) -> list[Job]:
    return [Job(sc, {"figure": "t", "point": 1}, seed, "t") for seed in seeds]


def test_run_many_skips_stored_runs_and_keeps_the_order(toy: Scenario, tmp_path: Path) -> None:
    first = CountingExecutor()
    ctx = _ctx(tmp_path, first)
    assert [r.summary["seed"] for r in ctx.run_many(_jobs(toy, [1, 2]))] == [1, 2]
    assert len(first.ran) == 2 and (ctx.runs, ctx.reused) == (2, 0)

    again = CountingExecutor()
    ctx2 = _ctx(tmp_path, again)
    results = ctx2.run_many(_jobs(toy, [2, 3, 1, 3]))
    assert [r.summary["seed"] for r in results] == [2, 3, 1, 3]
    assert len(again.ran) == 1, "only seed 3 is new, and it runs once"
    assert (ctx2.runs, ctx2.reused) == (1, 3)
    stored = ctx2.store.rows([f"{toy.with_overrides({'seed': 3}).hash()}-fakecode"])
    assert stored["status"].to_list() == ["done"] and stored["sweep"].to_list() == ["t"]


def test_run_is_a_batch_of_one(toy: Scenario, tmp_path: Path) -> None:
    ex = CountingExecutor()
    ctx = _ctx(tmp_path, ex)
    assert ctx.run(toy, {"figure": "t"}, 4, "t").summary["seed"] == 4
    assert ctx.run(toy, {"figure": "t"}, 4, "t").summary["seed"] == 4
    assert len(ex.ran) == 1 and (ctx.runs, ctx.reused) == (1, 1)


def test_a_failed_run_raises_after_the_others_with_its_parameters(toy: Scenario, tmp_path: Path) -> None:
    bad = toy.with_overrides({"fail": True})
    jobs = [*_jobs(toy, [1]), Job(bad, {"figure": "t", "point": "bad"}, 1, "t"), *_jobs(toy, [2])]
    ctx = _ctx(tmp_path, SerialExecutor())
    with pytest.raises(RunsFailed, match=r"1 of 3 runs failed(.|\n)*'point': 'bad'(.|\n)*seed 1(.|\n)*fake failure requested"):
        ctx.run_many(jobs)
    assert ctx.runs == 2
    rows = ctx.store.load_all()
    assert sorted(rows["status"].to_list()) == ["done", "done", "failed"]


class InterruptedExecutor(SerialExecutor):
    """Serial, and Ctrl-C after `after` runs."""

    def __init__(self, after: int) -> None:
        self.after = after

    def map(self, fn: Callable[[Any], Any], items: Iterable[Any]) -> Iterator[tuple[Any, Any]]:
        for i, pair in enumerate(super().map(fn, items)):
            if i == self.after:
                raise KeyboardInterrupt
            yield pair


def test_an_interrupted_batch_keeps_what_finished(toy: Scenario, tmp_path: Path) -> None:
    ctx = _ctx(tmp_path, InterruptedExecutor(after=2))
    with pytest.raises(KeyboardInterrupt):
        ctx.run_many(_jobs(toy, [1, 2, 3, 4]))
    done = ctx.store.load_all()
    assert sorted(done["seed"].to_list()) == [1, 2] and (done["status"] == "done").all()
    again = CountingExecutor()
    assert [r.summary["seed"] for r in _ctx(tmp_path, again).run_many(_jobs(toy, [1, 2, 3, 4]))] == [1, 2, 3, 4]
    assert len(again.ran) == 2, "a re-run runs only what was missing"


def test_an_invalid_scenario_is_named_before_anything_runs(toy: Scenario, tmp_path: Path) -> None:
    ex = CountingExecutor()
    bad = toy.with_overrides({"workload.0.load": 7})
    with pytest.raises(ScenarioError, match=r"t, run with \{'figure': 't', 'point': 'bad'\}, seed 1: workload\[0\]\.load"):
        _ctx(tmp_path, ex).run_many([*_jobs(toy, [1]), Job(bad, {"figure": "t", "point": "bad"}, 1, "t")])
    assert ex.ran == []


def test_batch_progress_is_a_few_log_lines(toy: Scenario, tmp_path: Path) -> None:
    """Off a terminal, a batch logs one line when it starts, then at most one every
    30 s (none for a batch this short)."""
    lines: list[str] = []
    ctx = Context(out=tmp_path / "fig", store=open_store(tmp_path / "store"), seeds=[1], quick=True,
                  log=lines.append, executor=SerialExecutor(), progress=True)
    list(ctx.run_many(_jobs(toy, [1, 2, 3])))
    assert lines == ["t: 3 runs to do, on this process"]
    list(ctx.run_many(_jobs(toy, [1, 2, 3])))
    assert len(lines) == 1, "nothing to do, nothing logged"


def test_log_progress_throttles() -> None:
    lines: list[str] = []
    with LogProgress(4, "fig", lines.append, every_s=0.0) as p:
        for ok in (True, False, True, True):
            p.advance(ok)
    assert [re.sub(r" \(\d+ s\)", "", x) for x in lines] == ["fig: 1/4 runs done", "fig: 2/4 runs done, 1 failed", "fig: 3/4 runs done, 1 failed"]
    quiet: list[str] = []
    with LogProgress(4, "fig", quiet.append) as p:
        for _ in range(4):
            p.advance(True)
    assert quiet == []


@pytest.mark.real_native
def test_fig10_through_local_workers_matches_serial(tmp_path: Path) -> None:
    """The smallest figure (3 quick runs) gives the same rows, report and store through
    two worker processes as in this process."""
    quiet = lambda *_: None  # noqa: E731
    rep.reproduce(["fig10"], out=tmp_path / "serial", quick=True, log=quiet, executor=SerialExecutor())
    rep.reproduce(["fig10"], out=tmp_path / "local", quick=True, log=quiet, executor=LocalExecutor(2))
    same_figure(tmp_path / "serial", tmp_path / "local", "fig10")
    assert "(3 runs, 0 reused from the store)" in (tmp_path / "local" / "paper" / "report.md").read_text(encoding="utf-8")


def test_long_runs_are_submitted_first(tmp_path: Path) -> None:
    """Runs go to the executor longest simulated duration first; results keep the jobs' order."""
    from pl2.reproduce.common import _duration_s

    durations = ("2ms", "1.5s", "300us")
    scs = [Scenario.from_toml(f'name = "d{d}"\n[run]\nduration = "{d}"\n') for d in durations]
    assert [_duration_s(sc) for sc in scs] == [0.002, 1.5, 0.0003]
    assert _duration_s(Scenario.from_toml('name = "x"\n')) == 0.0
    ex = CountingExecutor()
    jobs = [Job(sc, {"figure": "t", "d": d}, 1, "t") for sc, d in zip(scs, durations, strict=True)]
    results = list(_ctx(tmp_path, ex).run_many(jobs))
    by_id = {f"{sc.with_overrides({'seed': 1}).hash()}-fakecode": d for sc, d in zip(scs, durations, strict=True)}
    assert [by_id[r] for r in ex.ran] == ["1.5s", "2ms", "300us"]
    assert [r.summary["scenario_hash"] for r in results] == [r.split("-")[0] for r in by_id]
