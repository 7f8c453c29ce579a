"""Plots render non-trivial PNG and SVG files from synthetic tables and from a run."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest
from matplotlib.figure import Figure

import pl2
from pl2 import Scenario, plots


def _messages(seed: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    size = rng.integers(64, 10**6, 2000)
    ideal = size * 80 + 10**6
    lat = ideal * rng.uniform(1, 10, 2000)
    return pl.DataFrame({"size_bytes": size, "latency_ps": lat.astype(np.uint64), "slowdown": lat / ideal, "in_window": np.ones(2000, bool)})


def _png_size(fig: Figure, tmp_path: Path, name: str) -> int:
    png, svg = plots.save(fig, tmp_path / name)
    assert png.suffix == ".png" and svg.suffix == ".svg" and svg.stat().st_size > 5000
    return png.stat().st_size


def test_latency_cdf(tmp_path: Path) -> None:
    fig = plots.latency_cdf({"a": _messages(1), "b": _messages(2)})
    assert "latency (µs)" in fig.axes[0].get_xlabel()
    assert _png_size(fig, tmp_path, "cdf") > 5000


def test_slowdown_by_size(tmp_path: Path) -> None:
    fig = plots.slowdown_by_size(_messages(1), bins=8)
    assert len(fig.axes[0].lines) == 2 and "bytes" in fig.axes[1].get_xlabel()
    assert _png_size(fig, tmp_path, "sd") > 5000
    assert len(plots.slowdown_by_size(_messages(1), bins=[64, 1e5, 5e5, 1e6]).axes[0].lines[0].get_xdata()) == 3
    # The lower panel counts the messages of each bin: all 2000, in the bins' order.
    counts = plots.slowdown_by_size(_messages(1), bins=[64, 1e5, 5e5, 1e6 + 1]).axes[1].lines[0].get_ydata()[:-1]
    m = _messages(1)
    assert list(counts) == [int(((m["size_bytes"] >= lo) & (m["size_bytes"] < hi)).sum()) for lo, hi in ((64, 1e5), (1e5, 5e5), (5e5, 1e6 + 1))]
    assert sum(counts) == 2000


def test_overlays_and_legends_say_what_did_not_finish() -> None:
    two = plots.slowdown_by_size({"a": _messages(1), "b": _messages(2)}, bins=4)
    assert [ln.get_label() for ln in two.axes[0].lines] == ["a p50", "a p99", "b p50", "b p99"]
    late = _messages(3).with_columns(pl.when(pl.int_range(pl.len()) < 50).then(None).otherwise(pl.col("latency_ps")).alias("latency_ps"))
    fig = plots.latency_cdf({"a": _messages(1), "late": late})
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert labels == ["a", "late (50 of 2000 unfinished)"]
    assert fig.axes[0].lines[1].get_ydata().max() == pytest.approx(1950 / 2000), "the curve tops out at the finished share"
    assert fig.axes[0].xaxis.get_major_formatter()(100.0, 0) == "100", "plain numbers on log axes"


def test_goodput_over_time(tmp_path: Path) -> None:
    w = np.arange(0, 100) * 10_000_000
    g = pl.DataFrame({"host": np.repeat([0, 1, 2], 100), "window_start_ps": np.tile(w, 3), "payload_bytes": np.tile(np.full(100, 12_500), 3)})
    fig = plots.goodput_over_time(g, hosts=[0, 1])
    y = fig.axes[0].lines[0].get_ydata()
    assert y[0] == pytest.approx(10.0), "12500 B per 10 µs = 10 Gbps"
    assert "Gbps" in fig.axes[0].get_ylabel()
    assert _png_size(fig, tmp_path, "gp") > 5000


def test_goodput_single_window_needs_length() -> None:
    g = pl.DataFrame({"host": [0], "window_start_ps": [0], "payload_bytes": [1]})
    with pytest.raises(ValueError, match="window_ps="):
        plots.goodput_over_time(g)
    assert plots.goodput_over_time(g, window_ps=1000)


def test_queue_and_drops(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    w = np.arange(50) * 10_000_000
    ports = pl.DataFrame({"port": np.repeat([0, 1], 50), "node": ["s0"] * 100, "peer": ["h0"] * 50 + ["h1"] * 50, "window_start_ps": np.tile(w, 2), "max_queue_bytes": rng.integers(0, 300_000, 100)})
    fig = plots.queue_over_time(ports)
    assert "KiB" in fig.axes[0].get_ylabel()
    assert _png_size(fig, tmp_path, "q") > 5000
    drops = pl.DataFrame({"time_ps": np.sort(rng.integers(0, 5 * 10**8, 300)), "reason": rng.choice(["buffer_full", "port_limit"], 300)})
    assert _png_size(plots.drops_over_time(drops), tmp_path, "d") > 5000
    assert plots.drops_over_time(drops.head(0))


def test_from_a_run_and_deterministic_files(toy: Scenario, tmp_path: Path) -> None:
    r = pl2.run(toy, progress=False)
    for f in (plots.latency_cdf, plots.slowdown_by_size, plots.goodput_over_time, plots.queue_over_time, plots.drops_over_time):
        assert _png_size(f(r), tmp_path, f.__name__) > 5000
    a = plots.save(plots.latency_cdf(r), tmp_path / "x")
    b = plots.save(plots.latency_cdf(r), tmp_path / "y")
    assert [p.read_bytes() for p in a] == [p.read_bytes() for p in b]


def test_sweep_plot_means_and_intervals_by_hand() -> None:
    """Two seeds per point: the point is their mean and the bar t(1) × sd / √2."""
    rows = pl.DataFrame({
        "workload.0.load": [0.2, 0.2, 0.5, 0.5] * 2,
        "network.switch.buffer": ["256KiB"] * 4 + ["1MiB"] * 4,
        "status": ["done"] * 8,
        "latency_p99_ps": [1e6, 3e6, 2e6, 2e6, 5e6, 5e6, 8e6, 10e6],
    })
    fig = plots.sweep(rows, x="workload.0.load", y="latency_p99_ps", by="network.switch.buffer")
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["network.switch.buffer = 256KiB", "network.switch.buffer = 1MiB"]
    first = ax.lines[0]
    assert list(first.get_xdata()) == [0.2, 0.5] and list(first.get_ydata()) == pytest.approx([2.0, 2.0]), "µs"
    bars = ax.collections[0].get_segments()
    assert bars[0][1][1] - bars[0][0][1] == pytest.approx(2 * 12.706 * np.sqrt(2) / np.sqrt(2)), "± t(1)·sd/√2 around 2 µs"
    by_size = plots.sweep(rows, x="network.switch.buffer", y="latency_p99_ps")
    assert [t.get_text() for t in by_size.axes[0].get_xticklabels()] == ["256KiB", "1MiB"]
    assert list(by_size.axes[0].lines[0].get_xdata()) == [262144.0, 1048576.0], "placed by value"
    with pytest.raises(KeyError, match="no column 'nope'"):
        plots.sweep(rows, x="nope", y="latency_p99_ps")
