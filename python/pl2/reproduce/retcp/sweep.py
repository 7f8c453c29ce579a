"""Running a list of points of the reTCP family and drawing utilisation and latency: each
experiment module gives its points (label, scenario settings) and the slides' numbers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from pl2.reproduce.common import Context, Job, table
from pl2.reproduce.retcp.common import measures, scenario


def run_points(ctx: Context, name: str, points: Sequence[tuple[str, Mapping[str, Any]]]) -> pl.DataFrame:
    """One row per (point, seed): the point's label and settings, and its measures."""
    jobs = []
    for label, kw in points:
        sc = scenario(f"{name}-{label}", quick=ctx.quick, **kw)
        params = {"figure": name, "label": label, **{k: (str(v) if isinstance(v, tuple) else v) for k, v in kw.items()}}
        jobs += [Job(sc, params, seed, name) for seed in ctx.seeds]
    rows = []
    for job, res in zip(jobs, ctx.run_many(jobs), strict=True):
        m = measures(res.summary)
        rows.append({"label": job.params["label"], "seed": job.seed, **m})
    df = pl.DataFrame(rows)
    ctx.write_parquet(df, name)
    return df


def mean_of(df: pl.DataFrame, label: str, col: str) -> float | None:
    v = df.filter(pl.col("label") == label)[col].drop_nulls()
    return float(v.mean()) if len(v) else None


def pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.0f}"


def us(x: float | None) -> str:
    return "–" if x is None else f"{x:.0f}"


def util_claim(ctx: Context, df: pl.DataFrame, labels: Sequence[str], slides: Mapping[str, float], text: str,
               paper: str, prefix: str = "") -> None:
    """Puts on the scorecard the claim that each point's circuit utilisation (%) is within 10
    points of the slides' value, where the slides give one."""
    ours = {lab: 100 * (mean_of(df, lab, "util") or 0.0) for lab in labels}
    ctx.claim(text, paper, ", ".join(f"{prefix}{k}: {v:.0f}" for k, v in ours.items()),
              all(abs(ours[k] - slides[k]) <= 10 for k in labels if k in slides))


def result_table(df: pl.DataFrame, labels: Sequence[str], slides: Mapping[str, str], head: str) -> str:
    rows = []
    for lab in labels:
        rows.append([lab, slides.get(lab, "–"), pct(mean_of(df, lab, "util")), us(mean_of(df, lab, "p50_us")),
                     us(mean_of(df, lab, "p99_us")), f"{mean_of(df, lab, 'circuit_gbps') or 0:.1f}",
                     f"{mean_of(df, lab, 'packet_gbps') or 0:.2f}", f"{int(mean_of(df, lab, 'voq_drops') or 0):,}"])
    return table([head, "slides: util. %", "ours: util. %", "p50 latency µs", "p99 latency µs", "circuit Gbps (avg)",
                  "packet Gbps (avg)", "VOQ drops"], rows)


def plot(ctx: Context, df: pl.DataFrame, labels: Sequence[str], slides: Mapping[str, float], name: str, xlabel: str,
         title: str) -> None:
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(14, 4))
    x = range(len(labels))
    ours = [100 * (mean_of(df, lab, "util") or 0) for lab in labels]
    axes[0].bar([i - 0.2 for i in x], ours, width=0.4, label="pl2")
    axes[0].bar([i + 0.2 for i in x], [slides.get(lab, 0) for lab in labels], width=0.4, label="slides")
    axes[0].set_ylabel("Average circuit utilisation (%)")
    axes[0].set_ylim(0, 105)
    for ax, col, lab in ((axes[1], "p50_us", "Median latency (µs)"), (axes[2], "p99_us", "99th percentile latency (µs)")):
        ax.plot(ours, [mean_of(df, lb, col) or 0 for lb in labels], "o-")
        for u, lb in zip(ours, labels, strict=True):
            ax.annotate(lb, (u, mean_of(df, lb, col) or 0), fontsize=7)
        ax.set_xlabel("Average circuit utilisation (%)")
        ax.set_ylabel(lab)
    axes[0].set_xticks(list(x), list(labels), rotation=45)
    axes[0].set_xlabel(xlabel)
    axes[0].legend()
    fig.suptitle(title)
    fig.tight_layout()
    ctx.save(fig, name)
