"""Runs side by side: `compare` sets the headline figures of several runs in one table
(one column per run, and each run's difference from the first), `pl2 compare RUN RUN...`
prints it and, with `--out`, overlays their latency CDFs and slowdown-by-size curves."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import polars as pl

from pl2.results import RunResult

Getter = Callable[[dict[str, Any]], "float | None"]


def _get(*path: str) -> Getter:
    def get(summary: dict[str, Any]) -> float | None:
        x: Any = summary
        for k in path:
            x = x.get(k) if isinstance(x, dict) else None
        return None if x is None else float(x)

    return get


def _sum(key: str) -> Getter:
    return lambda s: float(sum(float(v) for v in (s.get(key) or {}).values()))


#: The figures compared: (name with unit, how to read it from summary.json).
FIGURES: tuple[tuple[str, Getter], ...] = (
    ("messages measured", _get("messages", "count")),
    ("messages finished", _get("messages", "finished")),
    ("latency p50 (µs)", lambda s: _scaled(_get("messages", "latency_ps", "p50")(s), 1e-6)),
    ("latency p99 (µs)", lambda s: _scaled(_get("messages", "latency_ps", "p99")(s), 1e-6)),
    ("latency p99.9 (µs)", lambda s: _scaled(_get("messages", "latency_ps", "p999")(s), 1e-6)),
    ("slowdown p50", _get("messages", "slowdown", "p50")),
    ("slowdown p99", _get("messages", "slowdown", "p99")),
    ("goodput, all hosts (Gbps)", _sum("goodput_gbps")),
    ("drops (frames)", _sum("drops")),
    ("simulated time (µs)", lambda s: _scaled(_get("sim_time_ps")(s), 1e-6)),
)


def _scaled(x: float | None, k: float) -> float | None:
    return None if x is None else x * k


def compare(results: Mapping[str, RunResult]) -> pl.DataFrame:
    """The headline figures of `results` (label -> run) side by side: a `figure` column,
    one column per run, and for every run after the first `Δ% <label>`, its difference
    from the first run in percent (null where either is missing or the first is 0).
    Percentiles that count unfinished messages as infinitely late are null when such a
    message falls in the tail, as in the summary."""
    if not results:
        raise ValueError("compare: give at least one run")
    labels = list(results)
    data: dict[str, list[Any]] = {"figure": [name for name, _ in FIGURES]}
    values = {label: [get(results[label].summary) for _, get in FIGURES] for label in labels}
    for label in labels:
        data[label] = values[label]
    first = values[labels[0]]
    for label in labels[1:]:
        data[f"Δ% {label}"] = [None if a is None or b is None or a == 0 else 100.0 * (b - a) / a for a, b in zip(first, values[label])]
    return pl.DataFrame(data, schema={"figure": pl.Utf8, **{k: pl.Float64 for k in data if k != "figure"}})


def labels_for(dirs: list[str]) -> list[str]:
    """Short, unique labels for run directories: their last path component, or more of
    the path where two share it."""
    parts = [d.rstrip("/").split("/") for d in dirs]
    depth = 1
    while True:
        labels = ["/".join(p[-depth:]) for p in parts]
        if len(set(labels)) == len(labels) or depth >= max(len(p) for p in parts):
            return labels
        depth += 1
