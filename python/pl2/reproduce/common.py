"""Shared pieces of `pl2 reproduce`: the testbed profile, the context a figure runs in,
cached runs in a results store (run in batches on an executor: in this process, local
worker processes or Ray), and small Markdown/number helpers."""

from __future__ import annotations

import copy
import math
import time
import tomllib
from collections.abc import Iterator, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, ContextManager, NamedTuple, Protocol

import polars as pl

from pl2 import _ffi, outdir
from pl2._progress import LogProgress, SweepBar, wanted
from pl2.errors import Pl2Error, ScenarioError, StoreError
from pl2.executors import Executor, LocalExecutor, SerialExecutor
from pl2.ray_executor import RayExecutor
from pl2.results import RunResult
from pl2.scenario import Scenario
from pl2.store import Store
from pl2.sweep import RunFailed, run_remote

MTU = 1500
LINK_BPS = 100e9
PORT_LIMIT = 1_500_000
CTL_WIRE = 84  # a 64 B RSV/GRT frame + preamble/SFD + IFG
FRAME_WIRE = 1542  # a full frame on the wire
WIRE_OVERHEAD = 42  # Ethernet header 14 + 802.1Q 4 + FCS 4 + preamble 8 + IFG 12


def testbed() -> dict[str, Any]:
    """The PL2 testbed profile (package data `testbed.toml`, a copy of
    examples/pl2-incast-testbed.toml) without its transport and workload."""
    text = resources.files("pl2.reproduce").joinpath("testbed.toml").read_text(encoding="utf-8")
    d = tomllib.loads(text)
    d.pop("workload", None)
    d.pop("transport", None)
    return d


def scenario(
    name: str,
    transport: Mapping[str, Any],
    workloads: Sequence[Mapping[str, Any]],
    *,
    transports: Mapping[str, Mapping[str, Any]] | None = None,
    warmup_ms: float,
    until_ms: float,
    duration_ms: float,
    window: str = "10us",
    drop_records: bool = True,
    probes: bool = False,
    stop_when_delivered: bool | None = None,
    base_dir: str | Path = ".",
) -> Scenario:
    """A scenario on the testbed profile: `transport` is the [transport] table,
    `transports` further named transports ([transports.NAME], for workloads that name
    one), `workloads` the [[workload]] tables; times in ms. Protocol probes are off: no figure
    reads them, and PL2 publishes one set per burst (millions in a 10 s VGG16 run)."""
    d = copy.deepcopy(testbed())
    d["name"] = name
    run: dict[str, Any] = {"duration": _ms(duration_ms), "warmup": _ms(warmup_ms), "measure_until": _ms(until_ms)}
    if stop_when_delivered is not None:
        run["stop_when_delivered"] = stop_when_delivered
    d["run"] = run
    d["metrics"] = {"window": window, "drop_records": drop_records, "probes": probes}
    d["transport"] = dict(transport)
    if transports:
        d["transports"] = {k: dict(v) for k, v in transports.items()}
    d["workload"] = [dict(w) for w in workloads]
    return Scenario.from_dict(d, base_dir=str(base_dir))


def _ms(x: float) -> str:
    """A duration string in µs (exact for the fractions of ms used here)."""
    return f"{round(x * 1000)}us"


class Job(NamedTuple):
    """One run a figure asks for: `scenario` run with `seed`, stored with `params` (plus
    the seed) under the sweep name `sweep` (the figure's name)."""

    scenario: Scenario
    params: Mapping[str, Any]
    seed: int
    sweep: str


class RunsFailed(Pl2Error):
    """Runs of a batch failed (the others finished and are stored); the message names
    each failed run's parameters, seed and error."""


@dataclass(frozen=True)
class Claim:
    """One published claim set beside our measurement: `text` says what was claimed
    (short), `paper` the published figure, `ours` what we measured, `holds` whether our
    measurement supports the claim (decided by the figure's code from the numbers, with
    the tolerance `text` states; None when no comparison is possible)."""

    text: str
    paper: str
    ours: str
    holds: bool | None

    def mark(self) -> str:
        return {True: "holds", False: "does not hold", None: "not comparable"}[self.holds]


#: A figure's verdict from its claims: every claim holds, some do, none does.
VERDICTS = ("matches", "partly", "differs", "not scored")


def verdict(claims: Sequence[Claim]) -> str:
    judged = [c.holds for c in claims if c.holds is not None]
    if not judged:
        return "not scored"
    if all(judged):
        return "matches"
    return "partly" if any(judged) else "differs"


def claims_table(claims: Sequence[Claim]) -> str:
    """The Markdown table of a figure's claims, paper beside ours."""
    return table(["published claim", "paper", "pl2", "verdict"], [[c.text, c.paper, c.ours, c.mark()] for c in claims])


class _Advance(Protocol):
    def advance(self, ok: bool) -> None: ...


@dataclass
class Context:
    """Where and how a figure runs: `out` is the figure's output directory, `store` the
    shared results store (finished runs are reused on a re-run), `seeds` the seeds of
    statistics, `quick` shorter windows and fewer points. `executor` runs a batch's
    runs (None: one after another in this process); `progress` shows a bar on a
    terminal, or a log line at most every 30 s otherwise."""

    out: Path
    store: Store
    seeds: list[int]
    quick: bool
    log: Any = print
    runs: int = 0
    reused: int = 0
    figures: list[Path] = field(default_factory=list)
    data: list[Path] = field(default_factory=list)
    executor: Executor | None = None
    progress: bool = False
    #: The reproduction's output directory, through which every file is claimed (None:
    #: files go straight into `out`, for tests that build a Context by hand).
    target: outdir.Target | None = None
    #: The published claims the figure checked (`claim`), for its section and the
    #: family's scorecard.
    claims: list[Claim] = field(default_factory=list)
    #: Dotted-path overrides applied to every run's scenario (`pl2 reproduce --set`), e.g.
    #: a host CPU model for a sensitivity study; runs keep their own keys.
    overrides: Mapping[str, Any] = field(default_factory=dict)

    def claim(self, text: str, paper: str, ours: str, holds: bool | None) -> None:
        """Records a published claim and whether our measurement supports it (see
        `Claim`); the section opens with the table of them and the family's report with
        a scorecard of every figure's."""
        self.claims.append(Claim(text, paper, ours, holds))

    def file(self, name: str) -> Path:
        """The path of the figure's file `name`, once it is sure pl2 may write it there
        (see `pl2.outdir`); its directory exists."""
        p = self.out / name
        if self.target is not None:
            p = self.target.claim(p.relative_to(self.target.path).as_posix())
        p.parent.mkdir(parents=True, exist_ok=True)
        return p

    def run(self, sc: Scenario, params: Mapping[str, Any], seed: int, sweep: str) -> RunResult:
        """Runs `sc` with `seed`, or loads it from the store if it already ran on this code."""
        return next(self.run_many([Job(sc, params, seed, sweep)]))

    def run_many(self, jobs: Sequence[Job]) -> Iterator[RunResult]:
        """Runs every job whose run the store lacks (a run asked for twice runs once) on
        the executor; the driver stores each run as it finishes, so an interrupted batch
        keeps what finished. Returns the results in the order of `jobs`, each loaded from
        the store when the iterator reaches it (one in memory at a time). Runs are keyed
        as always: scenario hash (with the seed) + code hash. Raises RunsFailed after
        the batch if any run failed."""
        code = _ffi.code_hash()
        planned = [_plan(job, code, self.overrides) for job in jobs]
        ids = [run_id for run_id, _ in planned]
        self.store.ensure_catalogued(ids)
        todo: dict[str, tuple[Job, Scenario]] = {}
        for job, (run_id, sc) in zip(jobs, planned, strict=True):
            if run_id not in todo and not self.store.has(run_id):
                todo[run_id] = (job, sc)
        failures = self._execute(todo) if todo else []
        self.runs += len(todo) - len(failures)
        self.reused += len(jobs) - len(todo)
        if failures:
            raise RunsFailed(f"{len(failures)} of {len(todo)} runs failed (the others are stored):\n" + "\n".join(failures))
        return (self.store.load(run_id) for run_id in ids)

    def _execute(self, todo: Mapping[str, tuple[Job, Scenario]]) -> list[str]:
        """Runs `todo` (run id -> job and seeded scenario) on the executor and stores
        each outcome as it arrives; returns one line per failed run."""
        executor = self.executor if self.executor is not None else SerialExecutor()
        name = next(iter(todo.values()))[0].sweep
        # Longest simulated duration first, so no long run starts last while the other
        # workers idle (the order of the results does not depend on it).
        order = sorted(todo.items(), key=lambda kv: -_duration_s(kv[1][1]))
        items = [(run_id, sc.text, sc.base_dir) for run_id, (_, sc) in order]
        if self.progress:
            self.log(f"{name}: {len(items)} runs to do, on {describe(executor)}")
        failures: list[str] = []
        rows = _Catalogue(self.store)
        results = executor.map(run_remote, items)
        try:
            with self._progress_bar(name, len(items)) as bar:
                for (run_id, _, _), outcome in results:
                    job = todo[run_id][0]
                    error = self._record(run_id, job, outcome, rows)
                    if error is not None:
                        failures.append(f"- {job.sweep}, run with {dict(job.params)}, seed {job.seed}: {error}")
                    if bar is not None:
                        bar.advance(error is None)
        finally:
            close = getattr(results, "close", None)
            if close is not None:
                close()
            rows.flush()
        return failures

    def _record(self, run_id: str, job: Job, outcome: Any, rows: _Catalogue) -> str | None:
        """Stores a finished run (its catalogue row goes to `rows`), or records a failed
        one; returns the error or None."""
        params = {**job.params, "seed": job.seed}
        error = _error_text(outcome) if isinstance(outcome, BaseException) else None
        if error is None:
            try:
                rows.add(self.store.store_run(run_id, RunResult.from_files(outcome), params, sweep=job.sweep)[1])
            except StoreError as e:
                error = str(e)
        if error is not None:
            self.store.record_failed(run_id, params, error, seed=job.seed, sweep=job.sweep)
        return error

    def _progress_bar(self, name: str, total: int) -> ContextManager[_Advance | None]:
        if not self.progress:
            return nullcontext()
        if wanted(True):
            return SweepBar(total, name)
        return LogProgress(total, name, self.log)

    def write_parquet(self, df: pl.DataFrame, name: str) -> Path:
        p = self.file(f"{name}.parquet")
        df.write_parquet(p)
        self.data.append(p)
        return p

    def save(self, fig: Any, name: str) -> list[Path]:
        import matplotlib.pyplot as plt

        from pl2 import plots

        for fmt in plots.FORMATS:
            self.file(f"{name}.{fmt}")
        paths = plots.save(fig, self.out / name)
        plt.close(fig)
        self.figures += paths
        return paths


class _Catalogue:
    """Catalogue rows of stored runs, added to the store's catalogue in one transaction
    every `every_s` seconds and on `flush` (a catalogue update costs more than a quick
    run's files). A run stored but not yet catalogued when the driver dies is
    catalogued by the next `run_many` (`Store.ensure_catalogued`)."""

    def __init__(self, store: Store, every_s: float = 5.0) -> None:
        self._store = store
        self._every_s = every_s
        self._rows: list[dict[str, Any]] = []
        self._last = time.monotonic()

    def add(self, row: dict[str, Any]) -> None:
        self._rows.append(row)
        if time.monotonic() - self._last >= self._every_s:
            self.flush()

    def flush(self) -> None:
        rows, self._rows = self._rows, []
        self._last = time.monotonic()
        if rows:
            self._store.catalogue(rows)


def describe(executor: Executor) -> str:
    """Where an executor runs, for log lines."""
    if isinstance(executor, SerialExecutor):
        return "this process"
    if isinstance(executor, LocalExecutor):
        return f"{executor.workers} local worker process{'es' if executor.workers != 1 else ''}"
    if isinstance(executor, RayExecutor):
        return f"Ray at {executor.address}" if executor.address else "a local Ray"
    return type(executor).__name__


_TIME_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9, "ps": 1e-12}


def _duration_s(sc: Scenario) -> float:
    """The scenario's `run.duration` in seconds (0 if absent or not "<number><unit>")."""
    text = str((sc.to_dict().get("run") or {}).get("duration", ""))
    number = text.rstrip("abcdefghijklmnopqrstuvwxyzµ")
    try:
        return float(number) * _TIME_UNITS[text[len(number):].strip()]
    except (KeyError, ValueError):
        return 0.0


def _plan(job: Job, code: str, overrides: Mapping[str, Any] | None = None) -> tuple[str, Scenario]:
    """The job's run id and seeded scenario (with `overrides` applied); a ScenarioError
    names the job."""
    try:
        sc = job.scenario.with_overrides({**(overrides or {}), "seed": job.seed})
        return f"{sc.hash()}-{code}", sc
    except ScenarioError as e:
        raise ScenarioError(f"{job.sweep}, run with {dict(job.params)}, seed {job.seed}: {e}") from None


def _error_text(e: BaseException) -> str:
    return str(e) if isinstance(e, RunFailed) else f"{type(e).__name__}: {e}"


def table(head: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def mean_ci(xs: Sequence[float | None]) -> tuple[float | None, float | None]:
    """Mean and half-width of the 95% interval (Student's t; None with < 2 values)."""
    from pl2.stats import t975

    v = [float(x) for x in xs if x is not None and not math.isnan(float(x))]
    if not v:
        return None, None
    m = sum(v) / len(v)
    if len(v) < 2:
        return m, None
    sd = math.sqrt(sum((x - m) ** 2 for x in v) / (len(v) - 1))
    t = t975(len(v) - 1) or 1.96
    return m, t * sd / math.sqrt(len(v))


def fmt_ci(m: float | None, ci: float | None, digits: int = 2) -> str:
    if m is None:
        return "–"
    if math.isinf(m):
        return "∞"
    return f"{m:.{digits}f}" + (f" ± {ci:.{digits}f}" if ci is not None else "")


def fmt_us(x: float | None) -> str:
    if x is None:
        return "–"
    if math.isinf(x):
        return "∞ (unfinished)"
    return f"{x:.1f}" if x < 100 else f"{x:.0f}"


def kib(b: float) -> str:
    return f"{b / 1024:.1f}"


def buffer_drops(summary: Mapping[str, Any]) -> int:
    d = summary.get("drops") or {}
    return int(d.get("buffer_full", 0) + d.get("port_limit", 0))


def program_drops(summary: Mapping[str, Any]) -> int:
    return int((summary.get("drops") or {}).get("program", 0))


def max_queue(summary: Mapping[str, Any], port: str = "s0->h5") -> int:
    return int((summary.get("max_queue_bytes") or {}).get(port, 0))
