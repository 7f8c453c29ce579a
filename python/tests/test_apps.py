"""Application results: the `rpcs` and `iterations` tables and their summary rows."""

from __future__ import annotations

import pyarrow as pa
from rich.console import Console

from pl2 import RunResult
from pl2.cli import summary_table


def _result() -> RunResult:
    summary = {
        "scenario_hash": "0" * 16,
        "messages": {"count": 4, "finished": 4, "latency_ps": {}, "slowdown": {}},
        "rpcs": {"count": 2, "finished": 2, "unfinished": 0, "tps": 250000.0, "latency_ps": {"p50": 4_000_000.0, "p99": 6_000_000.0}},
        "iterations": {"count": 1, "finished": 1, "time_ps": {"mean_finished": 92_500_000_000.0, "p99": 92_500_000_000.0}, "total_ps": 92_500_000_000},
    }
    rpcs = pa.table({"id": pa.array([0, 1], pa.uint64()), "request_id": pa.array([0, 2], pa.uint64()), "response_id": pa.array([1, 3], pa.uint64()), "latency_ps": pa.array([4_000_000, 6_000_000], pa.uint64())})
    iterations = pa.table({"iteration": pa.array([0], pa.uint32()), "time_ps": pa.array([92_500_000_000], pa.uint64())})
    return RunResult(summary, {"rpcs": rpcs, "iterations": iterations})


def test_application_tables_are_polars() -> None:
    r = _result()
    assert r.rpcs["response_id"].to_list() == [1, 3]
    assert r.iterations["time_ps"].to_list() == [92_500_000_000]


def test_summary_table_shows_rpcs_and_iterations() -> None:
    console = Console(width=120, record=True)
    console.print(summary_table(_result()))
    text = console.export_text()
    for row in ["RPCs (finished / count)", "RPC latency p99 (µs)", "transactions / s", "iteration time mean (ms)", "92.5", "250000"]:
        assert row in text, row
