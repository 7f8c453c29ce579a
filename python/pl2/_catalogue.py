"""The catalogue's schema and rows: one row per run in table `runs` of
`catalogue.duckdb`, with the run's identity, its parameters (JSON), its status and its
headline figures (latencies in ps, goodput in Gbps). Every row can be rebuilt from the
run's files, so the catalogue is only an index."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

COLUMNS: tuple[tuple[str, str], ...] = (
    ("run_id", "VARCHAR PRIMARY KEY"),
    ("scenario_hash", "VARCHAR NOT NULL"),
    ("code_hash", "VARCHAR NOT NULL"),
    ("seed", "UBIGINT"),
    ("params", "JSON"),
    ("status", "VARCHAR NOT NULL CHECK (status IN ('done', 'failed'))"),
    ("error", "VARCHAR"),
    ("stop_reason", "VARCHAR"),
    ("sim_time_ps", "UBIGINT"),
    ("msg_count", "UBIGINT"),
    ("latency_p50_ps", "DOUBLE"),
    ("latency_p99_ps", "DOUBLE"),
    ("latency_p999_ps", "DOUBLE"),
    ("slowdown_p99", "DOUBLE"),
    ("drops_total", "UBIGINT"),
    ("goodput_gbps_total", "DOUBLE"),
    ("path", "VARCHAR NOT NULL"),
    ("sweep", "VARCHAR"),
)
NAMES: tuple[str, ...] = tuple(n for n, _ in COLUMNS)
# Headline figures: one number per run, summarised across seeds by `pl2.summarise`.
HEADLINE: tuple[str, ...] = (
    "msg_count",
    "latency_p50_ps",
    "latency_p99_ps",
    "latency_p999_ps",
    "slowdown_p99",
    "drops_total",
    "goodput_gbps_total",
)
CREATE = "CREATE TABLE IF NOT EXISTS runs (" + ", ".join(f"{n} {t}" for n, t in COLUMNS) + ")"
UPSERT = f"INSERT OR REPLACE INTO runs ({', '.join(NAMES)}) VALUES ({', '.join('?' for _ in NAMES)})"


#: The view with one column per sweep parameter beside the columns of `runs`.
WIDE_VIEW = "runs_wide"


def refresh_wide_view(con: Any) -> None:
    """(Re)creates the view `runs_wide`: every column of `runs` plus one per parameter
    key found in `params`, named by its override path (e.g. "workload.0.load"; SQL
    quotes it: `ORDER BY "workload.0.load"`), typed DOUBLE where every value is a
    number, BOOLEAN where every value is a boolean, else VARCHAR. A parameter named like
    a column of `runs` is prefixed "params."."""
    keys = [r[0] for r in con.execute("SELECT DISTINCT unnest(json_keys(params)) AS k FROM runs ORDER BY k").fetchall()]
    columns = []
    for k in keys:
        path = "$." + json.dumps(k)
        types = {r[0] for r in con.execute("SELECT DISTINCT json_type(json_extract(params, ?)) FROM runs", [path]).fetchall()} - {None, "NULL"}
        expr = f"json_extract(params, '{_sql_text(path)}')"
        if types and types <= {"BIGINT", "UBIGINT", "DOUBLE"}:
            expr = f"CAST({expr} AS DOUBLE)"
        elif types == {"BOOLEAN"}:
            expr = f"CAST({expr} AS BOOLEAN)"
        else:
            expr = f"json_extract_string(params, '{_sql_text(path)}')"
        name = k if k not in NAMES else f"params.{k}"
        columns.append(f"{expr} AS {json.dumps(name)}")
    con.execute(f"CREATE OR REPLACE VIEW {WIDE_VIEW} AS SELECT runs.*{''.join(', ' + c for c in columns)} FROM runs")


def _sql_text(s: str) -> str:
    """`s` inside a single-quoted SQL string."""
    return s.replace("'", "''")


def split_run_id(run_id: str) -> tuple[str, str]:
    """(scenario_hash, code_hash) of `<scenario_hash>-<code_hash>`."""
    scenario_hash, sep, code_hash = run_id.partition("-")
    if not sep or not scenario_hash or not code_hash:
        raise ValueError(f"run id {run_id!r} is not <scenario_hash>-<code_hash>")
    return scenario_hash, code_hash


def params_json(params: Mapping[str, Any]) -> str:
    """The stored form of a run's parameters (sorted keys, so rebuilds compare equal)."""
    return json.dumps(dict(params), sort_keys=True)


def done_row(run_id: str, summary: Mapping[str, Any], params: Mapping[str, Any], sweep: str | None, path: str) -> dict[str, Any]:
    """The row of a finished run, from its summary."""
    scenario_hash, code_hash = split_run_id(run_id)
    msgs = summary.get("messages") or {}
    lat = msgs.get("latency_ps") or {}
    slowdown = msgs.get("slowdown") or {}
    drops = summary.get("drops") or {}
    goodput = summary.get("goodput_gbps") or {}
    row = {
        "run_id": run_id,
        "scenario_hash": scenario_hash,
        "code_hash": code_hash,
        "seed": summary.get("seed"),
        "params": params_json(params),
        "status": "done",
        "error": None,
        "stop_reason": summary.get("stop_reason"),
        "sim_time_ps": summary.get("sim_time_ps"),
        "msg_count": msgs.get("count"),
        "latency_p50_ps": lat.get("p50"),
        "latency_p99_ps": lat.get("p99"),
        "latency_p999_ps": lat.get("p999"),
        "slowdown_p99": slowdown.get("p99"),
        "drops_total": sum(int(v) for v in drops.values()),
        "goodput_gbps_total": float(sum(float(v) for v in goodput.values())),
        "path": path,
        "sweep": sweep,
    }
    return row


def failed_row(run_id: str, params: Mapping[str, Any], error: str, seed: int | None, sweep: str | None, path: str) -> dict[str, Any]:
    """The row of a failed run: no figures."""
    scenario_hash, code_hash = split_run_id(run_id)
    row = dict.fromkeys(NAMES)
    row.update(
        run_id=run_id,
        scenario_hash=scenario_hash,
        code_hash=code_hash,
        seed=seed,
        params=params_json(params),
        status="failed",
        error=error,
        path=path,
        sweep=sweep,
    )
    return row


def values(row: Mapping[str, Any]) -> list[Any]:
    """The row's values in column order, for UPSERT."""
    return [row[n] for n in NAMES]
