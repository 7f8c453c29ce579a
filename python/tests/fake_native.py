"""A tiny, honest stand-in for `pl2._native` used by the unit tests: the same functions,
argument and return types and summary keys, over a toy scenario format (top-level keys
name, seed, run, network, workload, fail). Its tables are random but fixed by the seed.
`fail = true` makes `run` raise; the progress callback can stop a run."""

from __future__ import annotations

import hashlib
import json
import tomllib
from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa

from pl2 import _toml

ALLOWED = ("name", "seed", "run", "network", "workload", "fail")
DEFAULTS: dict[str, Any] = {"seed": 1, "run": {"duration_ps": 1_000_000}, "network": {"link": {"rate": "100Gbps"}}}
BUILD = {"version": "0.1.0", "git_sha": "fake", "git_dirty": "false", "source_hash": "fakecode", "rustc": "none", "profile": "test", "target": "fake"}


class ScenarioError(ValueError):
    """Like the real one: the message names the field path."""


def _merge(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in top.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def _canonical(text: str) -> dict[str, Any]:
    try:
        d = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError(f"not valid TOML: {e}") from None
    for k in d:
        if k not in ALLOWED:
            raise ScenarioError(f"{k}: unknown field, expected one of {', '.join(ALLOWED)}")
    d = _merge(DEFAULTS, d)
    if not isinstance(d["seed"], int) or d["seed"] < 0:
        raise ScenarioError(f"seed: {d['seed']!r} is not allowed; an integer ≥ 0")
    rate = d["network"]["link"]["rate"]
    if not (isinstance(rate, str) and rate.endswith("Gbps")):
        raise ScenarioError(f"network.link.rate: {rate!r} is not allowed; a rate with its unit (hint: \"100Gbps\")")
    for i, w in enumerate(d.get("workload", [])):
        if not 0 < w.get("load", 0) <= 1:
            raise ScenarioError(f"workload[{i}].load: {w.get('load')!r} is not allowed; a fraction in (0, 1]")
    return {k: d[k] for k in sorted(d)}


def validate(toml_text: str, base_dir: str) -> str:
    return _toml.dumps(_canonical(toml_text))


def scenario_hash(toml_text: str, base_dir: str) -> str:
    return hashlib.sha256(validate(toml_text, base_dir).encode()).hexdigest()[:16]


def build_info() -> dict[str, str]:
    return dict(BUILD)


def _u64(x: Any) -> pa.Array:
    return pa.array(x, type=pa.uint64())


def run(toml_text: str, base_dir: str, progress: Callable[[int, int, int, float], bool] | None) -> tuple[str, dict[str, pa.RecordBatch]]:
    canonical = validate(toml_text, base_dir)
    d = tomllib.loads(canonical)
    if d.get("fail"):
        raise RuntimeError("fake failure requested by `fail = true`")
    end, seed = d["run"]["duration_ps"], d["seed"]
    stop, sim = "EndTime", end
    for step in range(1, 4):
        if progress is not None and progress(end * step // 4, end, 1000 * step, 0.01 * step) is False:
            stop, sim = "Interrupted", end * step // 4
            break
    rng = np.random.default_rng(seed)
    n = 200
    size = rng.integers(64, 1_000_000, n)
    start = np.sort(rng.integers(0, end // 2, n))
    ideal = size * 80 + 1_000_000
    lat = (ideal * rng.uniform(1.0, 5.0, n)).astype(np.int64)
    done = rng.uniform(size=n) > 0.05
    messages = pa.record_batch({
        "id": _u64(np.arange(n)), "src": pa.array(rng.integers(0, 4, n), pa.uint32()), "dst": pa.array(rng.integers(0, 4, n), pa.uint32()),
        "size_bytes": _u64(size), "thread": pa.array(np.zeros(n), pa.uint16()), "priority": pa.array(np.zeros(n), pa.uint8()),
        "start_ps": _u64(start), "finish_ps": _u64([int(s + l) if ok else None for s, l, ok in zip(start, lat, done)]),
        "latency_ps": _u64([int(l) if ok else None for l, ok in zip(lat, done)]), "ideal_ps": _u64(ideal),
        "slowdown": pa.array([float(l / i) if ok else None for l, i, ok in zip(lat, ideal, done)], pa.float64()),
        "in_window": pa.array(np.ones(n, dtype=bool)),
    })
    k = 30
    drops = pa.record_batch({
        "time_ps": _u64(np.sort(rng.integers(0, end, k))), "node": pa.array(rng.integers(4, 5, k), pa.uint32()),
        "port": pa.array(rng.integers(0, 4, k), pa.uint32()), "priority": pa.array(np.zeros(k), pa.uint8()),
        "reason": pa.array(rng.choice(["buffer_full", "port_limit"], k)), "src": pa.array(rng.integers(0, 4, k), pa.uint32()),
        "dst": pa.array(rng.integers(0, 4, k), pa.uint32()), "msg_id": _u64(rng.integers(0, n, k)),
        "seq": pa.array(rng.integers(0, 100, k), pa.uint32()), "data": pa.array(np.ones(k, dtype=bool)),
    })
    windows = np.arange(0, end, 10_000_000 if end > 10_000_000 else end // 10)
    w = len(windows)
    ports = pa.record_batch({
        "port": pa.array(np.repeat(np.arange(4), w), pa.uint32()), "node": pa.array(["s0"] * 4 * w),
        "peer": pa.array([f"h{p}" for p in np.repeat(np.arange(4), w)]), "window_start_ps": _u64(np.tile(windows, 4)),
        "max_queue_bytes": _u64(rng.integers(0, 200_000, 4 * w)), "tx_bytes": _u64(rng.integers(0, 10**6, 4 * w)),
        "mean_queue_bytes": pa.array(rng.uniform(0, 100_000, 4 * w), pa.float64()), "end_queue_bytes": _u64(rng.integers(0, 200_000, 4 * w)),
    })
    goodput = pa.record_batch({
        "host": pa.array(np.repeat(np.arange(4), w), pa.uint32()), "window_start_ps": _u64(np.tile(windows, 4)),
        "payload_bytes": _u64(rng.integers(0, 10_000, 4 * w)),
    })
    fin = np.sort(lat[done]).astype(float)
    q = lambda p: float(fin[min(len(fin) - 1, int(np.ceil(p * n)) - 1)])  # noqa: E731
    summary = {
        "scenario": canonical, "scenario_hash": scenario_hash(toml_text, base_dir), "seed": seed, "build": build_info(),
        "stop_reason": stop, "sim_time_ps": int(sim), "counters": {"events": 3000},
        "messages": {"count": n, "finished": int(done.sum()), "unfinished": int(n - done.sum()),
                     "latency_ps": {"p50": q(0.5), "p99": q(0.9), "p999": None, "mean_finished": float(fin.mean()), "max_finished": float(fin.max())},
                     "slowdown": {"p50": 2.0, "p99": 4.9, "p999": None, "mean_finished": 3.0, "max_finished": 5.0}},
        "goodput_gbps": {f"h{h}": 1.5 * (h + 1) for h in range(4)},
        "drops": {"buffer_full": 20, "port_limit": 10}, "max_queue_bytes": {"s0->h0": 1234},
    }
    return json.dumps(summary), {"messages": messages, "drops": drops, "ports": ports, "goodput": goodput}


def run_to_dir(toml_text: str, base_dir: str, out_dir: str, progress: Callable[[int, int, int, float], bool] | None,
               writing: Callable[[], bool] | None = None) -> str:
    """Like the real core's run to a directory: the tables as Parquet files in `out_dir`,
    plus summary.json and scenario.toml; returns the summary JSON."""
    from pathlib import Path

    from pl2.results import RunResult

    summary_json, tables = run(toml_text, base_dir, progress)
    if writing is not None and writing() is False:
        return summary_json
    RunResult.from_native(summary_json, tables)._write_files(Path(out_dir))
    return summary_json


def write_parquet(path: str, batches: list[pa.RecordBatch]) -> None:
    """Like the real core's: the batches as one Parquet file (pyarrow's writer here)."""
    import pyarrow.parquet as pq

    pq.write_table(pa.Table.from_batches(batches), path, compression="zstd")
