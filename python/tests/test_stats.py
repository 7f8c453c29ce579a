"""summarise: means and 95% confidence intervals across seeds, checked by hand."""

from __future__ import annotations

import math

import polars as pl
import pytest

from pl2 import summarise
from pl2.stats import T975, t975


def _runs() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "rate": ["25Gbps"] * 4 + ["100Gbps"] * 2 + ["100Gbps"],
            "seed": [1, 2, 3, 4, 1, 2, 3],
            "status": ["done"] * 6 + ["failed"],
            "msg_count": [20_000, 20_000, 5_000, 20_000, 100, 100, None],
            "latency_p99_ps": [1.0, 2.0, 3.0, 4.0, 10.0, 10.0, None],
            "latency_p999_ps": [10.0, 20.0, 1e9, 30.0, None, None, None],
            "goodput_gbps_total": [5.0, 5.0, 5.0, 5.0, 7.0, 9.0, None],
        }
    )


def test_t_table() -> None:
    assert t975(1) == 12.706 and t975(3) == 3.182 and t975(30) == 2.042 and t975(31) == 1.960 and t975(0) is None
    assert len(T975) == 30 and all(a > b for a, b in zip(T975, T975[1:]))


def test_mean_and_ci_by_hand() -> None:
    s = summarise(_runs(), by=["rate"]).sort("rate")
    assert s["rate"].to_list() == ["100Gbps", "25Gbps"]
    row = s.row(1, named=True)
    assert row["runs"] == 4
    # p99 = 1, 2, 3, 4: mean 2.5, sd = sqrt(5/3) = 1.2910, t(3) = 3.182, ci = 3.182 * 1.2910 / 2
    assert row["latency_p99_ps_mean"] == pytest.approx(2.5)
    assert row["latency_p99_ps_ci95"] == pytest.approx(3.182 * math.sqrt(5 / 3) / 2)
    assert row["latency_p99_ps_ci95"] == pytest.approx(2.05396, abs=1e-4)
    assert row["goodput_gbps_total_ci95"] == 0.0
    # p99.9 only where msg_count ≥ 10^4: 10, 20, 30 -> mean 20, sd 10, t(2) = 4.303
    assert row["latency_p999_ps_n"] == 3
    assert row["latency_p999_ps_mean"] == pytest.approx(20.0)
    assert row["latency_p999_ps_ci95"] == pytest.approx(4.303 * 10 / math.sqrt(3))
    other = s.row(0, named=True)
    assert other["runs"] == 2, "failed runs are left out"
    assert other["goodput_gbps_total_mean"] == 8.0
    assert other["goodput_gbps_total_ci95"] == pytest.approx(12.706 * math.sqrt(2) / math.sqrt(2))
    assert other["latency_p999_ps_mean"] is None and other["latency_p999_ps_n"] == 0


def test_single_sample_has_no_ci() -> None:
    s = summarise(_runs().filter(pl.col("seed") == 1), by=["rate"])
    assert s["latency_p99_ps_ci95"].to_list() == [None, None]


def test_large_n_uses_normal_quantile() -> None:
    df = pl.DataFrame({"g": ["a"] * 40, "slowdown_p99": [float(i % 2) for i in range(40)]})
    row = summarise(df, by=["g"]).row(0, named=True)
    sd = pl.Series([float(i % 2) for i in range(40)]).std()
    assert row["slowdown_p99_ci95"] == pytest.approx(1.960 * sd / math.sqrt(40))


def test_unknown_column() -> None:
    with pytest.raises(KeyError, match="no column\\(s\\) colour"):
        summarise(_runs(), by=["colour"])


def test_groups_are_ordered_by_value_not_text() -> None:
    """Quantity strings sort by what they mean: 256KiB < 1MiB < 2MiB (as text, 1MiB came
    first and 256KiB in the middle)."""
    df = pl.DataFrame({"size": ["1MiB", "256KiB", "2MiB", "512B"], "rate": ["100Gbps", "25Gbps", "1Tbps", "400Mbps"], "slowdown_p99": [1.0, 2.0, 3.0, 4.0]})
    assert summarise(df, by=["size"])["size"].to_list() == ["512B", "256KiB", "1MiB", "2MiB"]
    assert summarise(df, by=["rate"])["rate"].to_list() == ["400Mbps", "25Gbps", "100Gbps", "1Tbps"]
    mixed = pl.DataFrame({"x": ["10us", "2KiB", "b", "a"], "slowdown_p99": [1.0, 2.0, 3.0, 4.0]})
    assert summarise(mixed, by=["x"])["x"].to_list() == ["10us", "2KiB", "a", "b"], "not one kind of quantity: as text"
