"""Parameter sweeps: a base scenario, a grid of overrides (every combination) and/or a
list of cases, each run with every seed. A run's id is its scenario hash (after
overrides, with the seed) plus the code hash, so `run_sweep` skips runs a store already
has, and killing a sweep loses at most the runs in progress. Workers only simulate; the
driver alone writes the store."""

from __future__ import annotations

import itertools
import tempfile
import os
import sys
import tomllib
import traceback
from collections.abc import Iterator, Mapping, Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import Any, ContextManager, NamedTuple

import polars as pl

from pl2 import _catalogue as cat
from pl2 import _ffi
from pl2._progress import LogProgress, SweepBar, wanted
from pl2.errors import ScenarioError, StoreError
from pl2.executors import Executor, LocalExecutor
from pl2.results import RunResult
from pl2.runner import _Guard, sigint_sets_flag
from pl2.scenario import Scenario
from pl2.stats import summarise
from pl2.store import Store, expand_params

__all__ = ["PlannedRun", "RunFailed", "Sweep", "flatten", "run_remote", "run_sweep", "summarise", "sweep_rows"]
SPEC_KEYS = ("base", "name", "seeds", "grid", "case")


class PlannedRun(NamedTuple):
    """One run of a sweep: its id, its overrides (with "seed") and its scenario."""

    run_id: str
    overrides: dict[str, Any]
    scenario: Scenario

    @property
    def params(self) -> dict[str, Any]:
        """The overrides without the seed (what varies besides the seed)."""
        return {k: v for k, v in self.overrides.items() if k != "seed"}

    @property
    def seed(self) -> int:
        """The run's seed."""
        return int(self.overrides["seed"])


class RunFailed(RuntimeError):
    """A run raised in its worker; the message carries the worker's traceback."""


class Sweep:
    """`base` with `grid` (dotted path -> list of values; every combination), `cases`
    (a list of override dicts; combined with every grid point) and `seeds`."""

    def __init__(
        self,
        base: Scenario,
        grid: Mapping[str, Sequence[Any]] | None = None,
        cases: Sequence[Mapping[str, Any]] | None = None,
        seeds: Sequence[int] = (1,),
        name: str = "sweep",
    ) -> None:
        if not name or not isinstance(name, str):
            raise ScenarioError(f"sweep name {name!r}: must be a non-empty string")
        where = f"sweep {name!r}"
        for k, v in (grid or {}).items():
            if isinstance(v, (str, bytes)) or not isinstance(v, Sequence) or len(v) == 0:
                raise ScenarioError(f"{where}: grid[{k!r}] = {v!r}: must be a non-empty list of values, e.g. [\"25Gbps\", \"100Gbps\"]")
        if "seed" in (grid or {}) or any("seed" in c for c in cases or []):
            raise ScenarioError(f"{where}: 'seed' in a grid or case; list seeds with seeds = [1, 2, 3] instead")
        if isinstance(seeds, (str, bytes)) or not isinstance(seeds, Sequence) or not seeds or any(isinstance(s, bool) or not isinstance(s, int) or s < 0 for s in seeds):
            raise ScenarioError(f"{where}: seeds = {seeds!r}: must be a non-empty list of integers ≥ 0, e.g. seeds = [1, 2, 3]")
        self.base = base
        self.name = name
        self.grid = {k: list(v) for k, v in (grid or {}).items()}
        self.cases = [dict(c) for c in cases] if cases else [{}]
        self.seeds = list(seeds)

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> Sweep:
        """Reads a sweep spec: `base` (scenario path, relative to the spec), `name`
        (default: the spec's file name), `seeds`, `[grid]` and/or `[[case]]` tables of
        overrides. Write paths as quoted dotted keys: `"network.link.rate" = [...]`."""
        p = Path(path)
        try:
            spec = tomllib.loads(p.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ScenarioError(f"sweep spec {str(p)!r} does not exist; check the path") from None
        except tomllib.TOMLDecodeError as e:
            raise ScenarioError(f"sweep spec {str(p)!r}: not valid TOML: {e}") from None
        unknown = sorted(set(spec) - set(SPEC_KEYS))
        if unknown:
            raise ScenarioError(f"sweep spec {str(p)!r}: unknown key(s) {', '.join(unknown)}; allowed: {', '.join(SPEC_KEYS)}")
        base = spec.get("base")
        if not isinstance(base, str):
            raise ScenarioError(f"sweep spec {str(p)!r}: base = {base!r}: needs the scenario file's path, e.g. base = \"scenario.toml\"")
        cases = spec.get("case")
        if cases is not None and not (isinstance(cases, list) and all(isinstance(c, dict) for c in cases)):
            raise ScenarioError(f"sweep spec {str(p)!r}: case must be [[case]] tables of overrides")
        grid = spec.get("grid", {})
        if not isinstance(grid, dict):
            raise ScenarioError(f"sweep spec {str(p)!r}: grid must be a [grid] table of path = [values]")
        return cls(
            Scenario.from_file(p.parent / base),
            grid=flatten(grid, leaf=lambda v: isinstance(v, list)),
            cases=[flatten(c) for c in cases] if cases else None,
            seeds=spec.get("seeds", [1]),
            name=spec.get("name", p.stem),
        )

    def points(self) -> list[dict[str, Any]]:
        """Every combination of a case and a grid point (without the seed)."""
        keys = list(self.grid)
        combos = [dict(zip(keys, values)) for values in itertools.product(*self.grid.values())]
        return [{**case, **combo} for case in self.cases for combo in combos]

    def runs(self) -> Iterator[PlannedRun]:
        """Every run, once each (points giving the same scenario are one run). Raises
        ScenarioError naming the overrides if a point's scenario is invalid."""
        code = _ffi.code_hash()
        seen: set[str] = set()
        for point in self.points():
            for seed in self.seeds:
                overrides = {**point, "seed": seed}
                try:
                    sc = self.base.with_overrides(overrides)
                    run_id = f"{sc.hash()}-{code}"
                except ScenarioError as e:
                    raise ScenarioError(f"sweep {self.name!r}, run with {overrides}: {e}") from None
                if run_id not in seen:
                    seen.add(run_id)
                    yield PlannedRun(run_id, overrides, sc)

    def __len__(self) -> int:
        return len(self.points()) * len(self.seeds)


def flatten(table: Mapping[str, Any], leaf: Any = None, prefix: str = "") -> dict[str, Any]:
    """Nested tables as dotted paths. A key holding a dot is a complete path whose value
    is kept whole (a table there replaces the scenario's table); `leaf(value)` stops
    the descent early (default: at any non-table)."""
    out: dict[str, Any] = {}
    for k, v in table.items():
        path = f"{prefix}{k}"
        if isinstance(v, dict) and "." not in k and not (leaf and leaf(v)):
            out.update(flatten(v, leaf, prefix=path + "."))
        else:
            out[path] = v
    return out


def run_remote(item: tuple[str, str, str]) -> dict[str, bytes]:
    """Worker side of a sweep: runs `(run_id, scenario TOML, base_dir)` into a temporary
    directory with the native writer (as `pl2 run --out` does) and returns the run's
    files, name -> bytes, so a stored run is byte-identical to the same run made by
    `pl2 run` (and `pl2 rerun` of a stored run finds nothing different)."""
    _, text, base_dir = item
    guard = _Guard(None)
    with tempfile.TemporaryDirectory(prefix="pl2-run-") as tmp:
        try:
            with sigint_sets_flag(guard):
                _ffi.call("run_to_dir", text, base_dir, tmp, guard, guard.writing)
        except ScenarioError:
            raise
        except Exception as e:
            raise RunFailed(f"{type(e).__name__}: {e}\n{traceback.format_exc()}") from None
        guard.reraise()
        return {p.name: p.read_bytes() for p in sorted(Path(tmp).iterdir()) if p.is_file()}


def run_sweep(sweep: Sweep, store: Store, executor: Executor | None = None, progress: bool | str = True) -> pl.DataFrame:
    """Runs every run of `sweep` the store lacks (failed runs are retried), storing each
    as it finishes and recording failures without stopping. Returns the catalogue rows
    of the sweep's runs, with one column per parameter (this sweep's overrides)."""
    planned = list(sweep.runs())
    ids = [p.run_id for p in planned]
    store.clean_tmp()
    store.ensure_catalogued(ids)
    todo = {p.run_id: p for p in planned if not store.has(p.run_id)}
    executor = executor if executor is not None else LocalExecutor()
    items = [(p.run_id, p.scenario.text, p.scenario.base_dir) for p in todo.values()]
    bar: ContextManager[SweepBar | LogProgress | None] = nullcontext()
    if items and wanted(progress):
        bar = SweepBar(len(items), sweep.name)
    elif items and progress is True:
        bar = LogProgress(len(items), f"sweep {sweep.name}", lambda line: print(line, file=sys.stderr, flush=True), every_s=10.0)
    results = executor.map(run_remote, items)
    try:
        with bar as b:
            for (run_id, _, _), outcome in results:
                p = todo[run_id]
                error = _describe(outcome) if isinstance(outcome, BaseException) else None
                if error is None:
                    try:
                        store.record_done(run_id, RunResult.from_files(outcome), p.params, sweep=sweep.name)
                    except StoreError as e:
                        error = str(e)
                if error is not None:
                    store.record_failed(run_id, p.params, error, seed=p.seed, sweep=sweep.name)
                if b is not None:
                    b.advance(error is None)
    finally:
        close = getattr(results, "close", None)
        if close is not None:
            close()
    return sweep_rows(store, planned)


def sweep_rows(store: Store, planned: Sequence[PlannedRun]) -> pl.DataFrame:
    """The catalogue rows of `planned`, in sweep order, with this sweep's parameters."""
    rows = store.rows([p.run_id for p in planned])
    params = {p.run_id: cat.params_json(p.params) for p in planned}
    order = {p.run_id: i for i, p in enumerate(planned)}
    rows = rows.with_columns(
        pl.col("run_id").replace_strict(params, return_dtype=pl.Utf8).alias("params"),
        pl.col("run_id").replace_strict(order, return_dtype=pl.Int64).alias("_order"),
    )
    return expand_params(rows.sort("_order").drop("_order"))


def _describe(e: BaseException) -> str:
    return str(e) if isinstance(e, (ScenarioError, RunFailed)) else f"{type(e).__name__}: {e}"
