"""Shared pieces of `pl2 reproduce`: the testbed profile, the context a figure runs in,
cached runs in a results store, and small Markdown/number helpers."""

from __future__ import annotations

import copy
import math
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import polars as pl

from pl2 import _ffi
from pl2.results import RunResult
from pl2.runner import run as run_scenario
from pl2.scenario import Scenario
from pl2.store import Store

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
    `workloads` the [[workload]] tables; times in ms. Protocol probes are off: no figure
    reads them, and PL2 publishes one set per burst (millions in a 10 s VGG16 run)."""
    d = copy.deepcopy(testbed())
    d["name"] = name
    run: dict[str, Any] = {"duration": _ms(duration_ms), "warmup": _ms(warmup_ms), "measure_until": _ms(until_ms)}
    if stop_when_delivered is not None:
        run["stop_when_delivered"] = stop_when_delivered
    d["run"] = run
    d["metrics"] = {"window": window, "drop_records": drop_records, "probes": probes}
    d["transport"] = dict(transport)
    d["workload"] = [dict(w) for w in workloads]
    return Scenario.from_dict(d, base_dir=str(base_dir))


def _ms(x: float) -> str:
    """A duration string in µs (exact for the fractions of ms used here)."""
    return f"{round(x * 1000)}us"


@dataclass
class Context:
    """Where and how a figure runs: `out` is the figure's output directory, `store` the
    shared results store (finished runs are reused on a re-run), `seeds` the seeds of
    statistics, `quick` shorter windows and fewer points."""

    out: Path
    store: Store
    seeds: list[int]
    quick: bool
    log: Any = print
    runs: int = 0
    reused: int = 0
    figures: list[Path] = field(default_factory=list)
    data: list[Path] = field(default_factory=list)

    def run(self, sc: Scenario, params: Mapping[str, Any], seed: int, sweep: str) -> RunResult:
        """Runs `sc` with `seed`, or loads it from the store if it already ran on this code."""
        sc = sc.with_overrides({"seed": seed})
        run_id = f"{sc.hash()}-{_ffi.code_hash()}"
        if self.store.has(run_id):
            self.reused += 1
            return self.store.load(run_id)
        result = run_scenario(sc, progress=False)
        self.store.record_done(run_id, result, {**params, "seed": seed}, sweep=sweep)
        self.runs += 1
        return self.store.load(run_id)

    def write_parquet(self, df: pl.DataFrame, name: str) -> Path:
        p = self.out / f"{name}.parquet"
        p.parent.mkdir(parents=True, exist_ok=True)
        df.write_parquet(p)
        self.data.append(p)
        return p

    def save(self, fig: Any, name: str) -> list[Path]:
        import matplotlib.pyplot as plt

        from pl2 import plots

        paths = plots.save(fig, self.out / name)
        plt.close(fig)
        self.figures += paths
        return paths


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
