"""Queue depth per port over the SFC family's measured interval, from pl2's `ports` table
(one row per egress port and window in which the port's queue changed or was non-empty
at the window's start).

Two measures, both per (port, window) and then summarised over the ports of a tier:

- **time-weighted**: the window's exact time-average of the bytes queued
  (`mean_queue_bytes`, the simulator's integral of the queue over the window, advanced at
  every enqueue and dequeue, divided by the window). Its mean over (port, window) is the
  exact time-average of a tier's port queues over the interval; its percentiles are
  percentiles over (port, window) of the 10 µs time-averages (all windows have the same
  length, so counting windows is weighting by time).
- **per-window maximum**: the window's largest byte count (`max_queue_bytes`), as the
  family reported before; its mean over-states the time-average by the variation within a
  window.

A window without a row held the queue at the level the port's previous row ended at
(`end_queue_bytes`; 0 before the port's first row): a port paused by PFC holds its queue
without events, so such windows are not empty (before the simulator recorded the end
level they were counted as 0, which under-stated PFC's queues).
"""

from __future__ import annotations

import polars as pl

from pl2.reproduce.sfc.common import pct


def port_windows(ports: pl.DataFrame, t0_ps: int, t1_ps: int, window_ps: int, node_prefix: str) -> pl.DataFrame:
    """Every (port, window) of the ports whose `node` starts with `node_prefix`, for the windows
    that start in [t0_ps, t1_ps): `port`, `node`, `peer`, `mean_b` (time-average) and `max_b`
    (largest), filling windows without a row with the previous row's end level."""
    mine = ports.filter(pl.col("node").str.starts_with(node_prefix))
    if mine.is_empty():
        return pl.DataFrame(schema={"port": pl.UInt32, "node": pl.Utf8, "peer": pl.Utf8, "k": pl.Int64, "mean_b": pl.Float64, "max_b": pl.Float64})
    k1 = t1_ps // window_ps
    rows = (mine.filter(pl.col("window_start_ps") < t1_ps)
            .select("port", (pl.col("window_start_ps") // window_ps).cast(pl.Int64).alias("k"),
                    pl.col("mean_queue_bytes").alias("mean_row"), pl.col("max_queue_bytes").cast(pl.Float64).alias("max_row"),
                    pl.col("end_queue_bytes").cast(pl.Float64).alias("end_row")))
    names = mine.select("port", "node", "peer").unique()
    grid = names.join(pl.DataFrame({"k": pl.arange(0, k1, eager=True).cast(pl.Int64)}), how="cross")
    g = (grid.join(rows, on=["port", "k"], how="left").sort(["port", "k"])
         .with_columns(pl.col("end_row").forward_fill().shift(1).over("port").fill_null(0.0).alias("held")))
    return (g.with_columns(pl.coalesce("mean_row", "held").alias("mean_b"), pl.coalesce("max_row", "held").alias("max_b"))
            .filter(pl.col("k") * window_ps >= t0_ps)
            .select("port", "node", "peer", "k", "mean_b", "max_b"))


def summary(cells: pl.DataFrame) -> dict[str, float]:
    """The family's queue figures for a set of (port, window) cells, in KB: the
    time-weighted mean, p99 of the 10 µs time-averages, the busiest port's time-average
    over the interval; the per-window maxima's mean, p99 and largest."""
    if cells.is_empty():
        return {k: 0.0 for k in ("tw_mean_kb", "tw_p99_kb", "tw_port_max_kb", "wmax_mean_kb", "wmax_p99_kb", "wmax_max_kb")}
    means = cells["mean_b"].to_list()
    maxes = cells["max_b"].to_list()
    per_port = cells.group_by("port").agg(pl.col("mean_b").mean())["mean_b"]
    return {
        "tw_mean_kb": sum(means) / len(means) / 1e3,
        "tw_p99_kb": (pct(means, 0.99) or 0.0) / 1e3,
        "tw_port_max_kb": float(per_port.max()) / 1e3,
        "wmax_mean_kb": sum(maxes) / len(maxes) / 1e3,
        "wmax_p99_kb": (pct(maxes, 0.99) or 0.0) / 1e3,
        "wmax_max_kb": max(maxes) / 1e3,
    }
