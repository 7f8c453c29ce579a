"""Figures of one run or several, as matplotlib `Figure` objects made without pyplot (no
display or GUI backend needed; in a notebook they display as usual). Axis labels carry
units. `save` writes PNG and SVG."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import matplotlib
import numpy as np
import polars as pl
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from pl2 import outdir
from pl2.results import RunResult

PS_PER_US = 1e6
#: The formats `save` writes by default (each carries pl2's mark in its metadata).
FORMATS: tuple[str, ...] = ("png", "svg")
_MAX_SERIES = 8


def _figure() -> tuple[Figure, Axes]:
    fig = Figure(figsize=(7, 4.5), layout="constrained")
    return fig, fig.add_subplot()


def _frame(x: RunResult | pl.DataFrame, table: str) -> pl.DataFrame:
    return x.table(table) if isinstance(x, RunResult) else x


def _window_ps(starts: pl.Series, given: int | None) -> int:
    """A window's length (ps): `given`, else the smallest gap between window starts."""
    if given:
        return int(given)
    u = np.unique(starts.to_numpy())
    gaps = np.diff(u)
    gaps = gaps[gaps > 0]
    if gaps.size == 0:
        raise ValueError("cannot tell the window length from a single window; pass window_ps= (the scenario's metrics.window in ps)")
    return int(gaps.min())


def _plain_log_ticks(ax: Axes, axis: str = "x") -> None:
    """Log-axis ticks labelled as plain numbers (1, 10, 100) instead of powers of ten;
    at 1, 2 and 5 of every decade when the axis spans two decades or less, so a short
    range still has labels. Call after plotting."""
    target = ax.xaxis if axis == "x" else ax.yaxis
    ax.autoscale_view()
    lo, hi = sorted(target.get_view_interval())
    decades = np.log10(hi / lo) if lo > 0 else np.inf
    target.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0) if decades <= 2 else (1.0,)))
    target.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    target.set_minor_formatter(NullFormatter())


def _as_runs(results: Mapping[str, RunResult | pl.DataFrame] | RunResult | pl.DataFrame) -> dict[str, RunResult | pl.DataFrame]:
    return dict(results) if isinstance(results, Mapping) else {"": results}


def _title(runs: Mapping[str, RunResult | pl.DataFrame], what: str) -> str:
    names = [r.name for label, r in runs.items() if not label and isinstance(r, RunResult)]
    return f"{what}: {names[0]}" if names else what


def _measured(r: RunResult | pl.DataFrame) -> pl.DataFrame:
    m = _frame(r, "messages")
    return m.filter(pl.col("in_window")) if "in_window" in m.columns else m


def latency_cdf(results: Mapping[str, RunResult | pl.DataFrame] | RunResult | pl.DataFrame, log: bool = True) -> Figure:
    """CDF of message latency (µs) of the messages in the measurement window; one curve
    per labelled result. Unfinished messages count as infinitely late, so a curve tops
    out at the fraction of messages that finished; its legend then says how many did
    not. Titled with the run's name."""
    runs = _as_runs(results)
    fig, ax = _figure()
    labelled = False
    for label, r in runs.items():
        m = _measured(r)
        lat = np.sort(m["latency_ps"].drop_nulls().to_numpy().astype(float)) / PS_PER_US
        unfinished = m.height - lat.size
        text = label + (f" ({unfinished} of {m.height} unfinished)" if unfinished else "")
        labelled |= bool(text)
        if lat.size:
            ax.step(lat, np.arange(1, lat.size + 1) / m.height, where="post", label=text or None)
        elif text:
            ax.plot([], [], label=text)
    if log:
        ax.set_xscale("log")
        _plain_log_ticks(ax)
    ax.set_xlabel("message latency (µs)")
    ax.set_ylabel("fraction of messages")
    ax.set_ylim(0, 1.0)
    ax.set_title(_title(runs, "latency CDF"))
    ax.grid(True, which="both", alpha=0.3)
    if labelled:
        ax.legend()
    return fig


def slowdown_by_size(results: Mapping[str, RunResult | pl.DataFrame] | RunResult | pl.DataFrame, bins: int | Sequence[float] = 10) -> Figure:
    """p50 (dashed) and p99 (solid) slowdown (latency / ideal latency) per message-size
    bin, one pair of curves per labelled result, and below them the number of finished
    messages in each bin (a percentile of few messages is noisy). `bins`: a number of
    log-spaced bins over all results' sizes, or bin edges in bytes."""
    runs = _as_runs(results)
    frames = {label: _measured(r).filter(pl.col("slowdown").is_not_null()) for label, r in runs.items()}
    sizes = np.concatenate([m["size_bytes"].to_numpy().astype(float) for m in frames.values()] or [np.array([])])
    if isinstance(bins, int):
        lo, hi = (sizes.min(), sizes.max()) if sizes.size else (1.0, 2.0)
        edges = np.geomspace(max(lo, 1.0), max(hi, lo * 1.0001, 1.0001), bins + 1)
    else:
        edges = np.asarray(bins, dtype=float)
    centres_all = np.array([np.sqrt(edges[b] * edges[b + 1]) if edges[b] > 0 else edges[b + 1] / 2 for b in range(len(edges) - 1)])
    fig = Figure(figsize=(7, 5.5), layout="constrained")
    ax, cnt = fig.subplots(2, 1, sharex=True, height_ratios=(3, 1))
    for i, (label, m) in enumerate(frames.items()):
        size = m["size_bytes"].to_numpy().astype(float)
        sd = m["slowdown"].to_numpy().astype(float)
        which = np.clip(np.searchsorted(edges, size, side="right") - 1, 0, len(edges) - 2)
        counts = np.bincount(which, minlength=len(edges) - 1)
        have = counts > 0
        p50 = [float(np.percentile(sd[which == b], 50)) for b in np.flatnonzero(have)]
        p99 = [float(np.percentile(sd[which == b], 99)) for b in np.flatnonzero(have)]
        colour = f"C{i}"
        prefix = f"{label} " if label else ""
        ax.plot(centres_all[have], p50, marker="o", ls="--", color=colour, label=f"{prefix}p50")
        ax.plot(centres_all[have], p99, marker="s", ls="-", color=colour, label=f"{prefix}p99")
        cnt.step(edges, np.append(counts, counts[-1] if counts.size else 0), where="post", color=colour)
    ax.set_xscale("log")
    ax.set_yscale("log")
    _plain_log_ticks(ax, "y")
    ax.set_ylabel("slowdown (latency / ideal latency)")
    ax.set_title(_title(runs, "slowdown by message size"))
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small", ncols=2 if len(frames) > 1 else 1)
    cnt.set_yscale("log")
    _plain_log_ticks(cnt, "y")
    _plain_log_ticks(cnt, "x")
    cnt.set_xlabel("message size (bytes)")
    cnt.set_ylabel("messages per bin")
    cnt.grid(True, which="both", alpha=0.3)
    return fig


def goodput_over_time(result: RunResult | pl.DataFrame, hosts: Sequence[int] | None = None, window_ps: int | None = None) -> Figure:
    """Goodput (Gbps of payload delivered) per host per window against time (µs). By
    default the 8 hosts with the most payload."""
    g = _frame(result, "goodput")
    w = _window_ps(g["window_start_ps"], window_ps)
    if hosts is None:
        hosts = g.group_by("host").agg(pl.col("payload_bytes").sum()).sort(["payload_bytes", "host"], descending=[True, False])["host"].head(_MAX_SERIES).to_list()
    fig, ax = _figure()
    for h in sorted(hosts):
        s = g.filter(pl.col("host") == h).sort("window_start_ps")
        t = s["window_start_ps"].to_numpy() / PS_PER_US
        gbps = s["payload_bytes"].to_numpy().astype(float) * 8.0 / w * 1e3
        ax.step(t, gbps, where="post", label=f"h{h}")
    ax.set_xlabel("time (µs)")
    ax.set_ylabel(f"goodput (Gbps, {w / PS_PER_US:g} µs windows)")
    ax.grid(True, alpha=0.3)
    ax.legend(ncols=2, fontsize="small")
    return fig


def queue_over_time(result: RunResult | pl.DataFrame, ports: Sequence[int] | None = None) -> Figure:
    """Maximum queue (KiB) per port per window against time (µs). By default the 8
    ports with the largest queues."""
    p = _frame(result, "ports")
    if ports is None:
        ports = p.group_by("port").agg(pl.col("max_queue_bytes").max()).sort(["max_queue_bytes", "port"], descending=[True, False])["port"].head(_MAX_SERIES).to_list()
    fig, ax = _figure()
    for port in sorted(ports):
        s = p.filter(pl.col("port") == port).sort("window_start_ps")
        if s.height == 0:
            continue
        label = f"{s['node'][0]}→{s['peer'][0]}" if "node" in s.columns else f"port {port}"
        ax.step(s["window_start_ps"].to_numpy() / PS_PER_US, s["max_queue_bytes"].to_numpy() / 1024.0, where="post", label=label)
    ax.set_xlabel("time (µs)")
    ax.set_ylabel("max queue in window (KiB)")
    ax.grid(True, alpha=0.3)
    ax.legend(ncols=2, fontsize="small")
    return fig


def drops_over_time(result: RunResult | pl.DataFrame, bins: int = 50) -> Figure:
    """Dropped frames per time bin (bars stacked by reason) against time (µs)."""
    d = _frame(result, "drops")
    fig, ax = _figure()
    t = d["time_ps"].to_numpy().astype(float) / PS_PER_US
    if t.size:
        edges = np.linspace(t.min(), max(t.max(), t.min() + 1e-3), bins + 1)
        bottom = np.zeros(bins)
        for reason in sorted(d["reason"].unique().to_list()):
            counts, _ = np.histogram(t[(d["reason"] == reason).to_numpy()], bins=edges)
            ax.bar(edges[:-1], counts, width=np.diff(edges), bottom=bottom, align="edge", label=reason)
            bottom += counts
        ax.legend()
        ax.set_ylabel(f"drops per {edges[1] - edges[0]:.3g} µs (frames)")
    else:
        ax.set_ylabel("drops (frames)")
        ax.text(0.5, 0.5, "no drops", transform=ax.transAxes, ha="center")
    ax.set_xlabel("time (µs)")
    ax.grid(True, axis="y", alpha=0.3)
    return fig


def probes_over_time(result: RunResult | pl.DataFrame, flow: int, names: Sequence[str] | None = None) -> Figure:
    """A flow's probe values (cwnd, slots, waits, ...) against time (µs), one series per
    probe name."""
    p = _frame(result, "probes").filter(pl.col("flow") == flow)
    fig, ax = _figure()
    wanted = names if names is not None else sorted(p["name"].unique().to_list())[:_MAX_SERIES]
    for name in wanted:
        s = p.filter(pl.col("name") == name).sort("time_ps")
        ax.step(s["time_ps"].to_numpy() / PS_PER_US, s["value"].to_numpy(), where="post", label=name)
    if not wanted:
        ax.text(0.5, 0.5, f"no probes for flow {flow}", transform=ax.transAxes, ha="center")
    else:
        ax.legend()
    ax.set_xlabel("time (µs)")
    ax.set_ylabel("probe value (units as published)")
    ax.grid(True, alpha=0.3)
    return fig


def sweep(rows: pl.DataFrame, x: str, y: str, by: str | None = None) -> Figure:
    """A headline figure `y` (a catalogue column such as "latency_p99_ps" or
    "goodput_gbps_total") against the swept parameter `x`, one line per value of the
    parameter `by` (if given), each point the mean over seeds with its 95% confidence
    interval (`pl2.summarise`). `rows`: catalogue rows, e.g. `store.load_all()` or what
    `run_sweep` returns. Quantity strings ("256KiB", "10us") are placed by value, other
    strings evenly; times in ps are shown in µs."""
    from pl2.stats import summarise

    for c in (x, y) + ((by,) if by else ()):
        if c not in rows.columns:
            raise KeyError(f"sweep plot: no column {c!r}; columns are: {', '.join(rows.columns)}")
    s = summarise(rows, by=[x] + ([by] if by else []))
    xs = s[x].unique(maintain_order=True).to_list()
    place = _positions(xs)
    scale, unit = (1 / PS_PER_US, " (µs)") if y.endswith("_ps") else (1.0, "")
    fig, ax = _figure()
    for g in s.partition_by(by, maintain_order=True) if by else [s]:
        mean = g[f"{y}_mean"].to_numpy().astype(float) * scale
        ci = g[f"{y}_ci95"].fill_null(0.0).to_numpy().astype(float) * scale
        ax.errorbar([place[v] for v in g[x].to_list()], mean, yerr=ci, marker="o", capsize=3, label=f"{by} = {g[by][0]}" if by else None)
    if any(isinstance(v, str) for v in xs):
        ax.set_xticks([place[v] for v in xs], [str(v) for v in xs])
    ax.set_xlabel(x)
    ax.set_ylabel(f"{y}{unit}, mean ± 95% CI over seeds")
    ax.grid(True, alpha=0.3)
    if by:
        ax.legend(fontsize="small")
    return fig


def _positions(values: list[object]) -> dict[object, float]:
    """Where each swept value goes on the x axis: numbers at themselves, quantity
    strings of one kind at their value, anything else at 0, 1, 2, ..."""
    from pl2._units import quantity

    if all(isinstance(v, (int, float)) for v in values):
        return {v: float(v) for v in values}  # type: ignore[arg-type]
    parsed = [quantity(v) if isinstance(v, str) else None for v in values]
    if all(p is not None for p in parsed) and len({p[0] for p in parsed if p}) == 1:
        return {v: p[1] for v, p in zip(values, parsed) if p}
    return {v: float(i) for i, v in enumerate(values)}


def save(fig: Figure, path_without_ext: str | os.PathLike[str], formats: Sequence[str] = FORMATS) -> list[Path]:
    """Writes `fig` as `<path>.png` and `<path>.svg` (no timestamps, so the same figure
    gives the same files); returns the paths. Both files name pl2 in their metadata;
    an existing file that does not is never replaced (OutputPathError: pl2 did not
    write it). Saved into a directory pl2 made (a run's, say), the files are added to
    its manifest, so the directory stays pl2's own. Raises OutputPathError for an empty path or one with `..`."""
    base = outdir.check_path_text(path_without_ext)
    paths = [base.with_name(f"{base.name}.{fmt}") for fmt in formats]
    for p in paths:
        outdir.check_figure_file(p)
    try:
        base.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise outdir.os_error(base, e) from None
    for fmt, p in zip(formats, paths):
        metadata = {"Date": None, "Creator": outdir.FIGURE_MARK} if fmt == "svg" else {"Software": outdir.FIGURE_MARK} if fmt == "png" else None
        with matplotlib.rc_context({"svg.hashsalt": "pl2"}):
            try:
                fig.savefig(p, format=fmt, dpi=150, metadata=metadata)
            except OSError as e:
                raise outdir.os_error(p, e) from None
    outdir.record_in_manifest(base.parent, [p.name for p in paths])
    return paths
