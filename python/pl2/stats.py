"""Statistics across seeds: `summarise` gives, per parameter combination, the mean and
the half-width of the 95% confidence interval (Student's t) of every headline figure."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from pl2._catalogue import HEADLINE
from pl2._units import quantity

# Two-sided 95% quantiles t(0.975, df) for df = 1..30 (standard tables); beyond 30 the
# normal quantile 1.960 is used.
T975: tuple[float, ...] = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)
Z975 = 1.960
P999_MIN_MESSAGES = 10_000


def t975(df: int) -> float | None:
    """t(0.975, df): the 95% two-sided quantile; None for df < 1."""
    if df < 1:
        return None
    return T975[df - 1] if df <= len(T975) else Z975


def summarise(df: pl.DataFrame, by: Sequence[str]) -> pl.DataFrame:
    """Groups the `done` runs of `df` (catalogue rows, e.g. from `run_sweep`) by the
    columns `by` and gives, per headline figure F present, `F_mean` and `F_ci95` (half
    width of the 95% CI of the mean, Student's t; null with one sample) and `F_n`.
    p99.9 latency only counts runs with msg_count ≥ 10⁴. Units are the figures' own
    (ps, Gbps, counts). Also `runs`: done runs in the group. Groups are ordered by
    `by`, quantity strings by value ("256KiB" before "1MiB")."""
    missing = [c for c in by if c not in df.columns]
    if missing:
        raise KeyError(f"summarise: no column(s) {', '.join(missing)}; columns are: {', '.join(df.columns)}")
    if "status" in df.columns:
        df = df.filter(pl.col("status") == "done")
    figures = [f for f in HEADLINE if f in df.columns]
    aggs: list[pl.Expr] = [pl.len().alias("runs")]
    for f in figures:
        x = pl.col(f).cast(pl.Float64)
        if f == "latency_p999_ps" and "msg_count" in df.columns:
            x = pl.when(pl.col("msg_count") >= P999_MIN_MESSAGES).then(x)
        aggs += [x.mean().alias(f"{f}_mean"), x.std(ddof=1).alias(f"_{f}_sd"), x.count().cast(pl.Int64).alias(f"{f}_n")]
    out = df.group_by(list(by), maintain_order=True).agg(aggs)
    t_of_n = {n: t975(n - 1) for n in range(2, len(T975) + 2)}
    ci = []
    for f in figures:
        n = pl.col(f"{f}_n")
        t = n.replace_strict(t_of_n, default=Z975, return_dtype=pl.Float64)
        ci.append(pl.when(n >= 2).then(t * pl.col(f"_{f}_sd") / n.cast(pl.Float64).sqrt()).alias(f"{f}_ci95"))
    out = out.with_columns(ci).drop([f"_{f}_sd" for f in figures])
    ordered = list(by) + ["runs"] + [c for f in figures for c in (f"{f}_mean", f"{f}_ci95", f"{f}_n")]
    out = out.select(ordered)
    return out.sort([_sort_key(out[c]) for c in by]) if by else out


def _sort_key(col: pl.Series) -> pl.Series:
    """A column to order groups by: quantity strings of one kind ("256KiB", "1MiB") by
    their value, not as text; anything else as it is."""
    if col.dtype != pl.Utf8:
        return col
    parsed = [None if v is None else quantity(v) for v in col.to_list()]
    kinds = {p[0] for p in parsed if p is not None}
    if len(kinds) != 1 or any(p is None and v is not None for p, v in zip(parsed, col.to_list())):
        return col
    return pl.Series(col.name, [None if p is None else p[1] for p in parsed], dtype=pl.Float64)
