"""`pl2 reproduce receiver-driven`: the Homa paper's network as the Homa simulator builds
it (delays worked by hand from `homaTransportConfig.ini` and `DcnTopo.ned`), the size
binning, and on the real native module the quick variant's smallest scenario checked
against physical invariants: no message beats the ideal time of the same message alone
by more than what spraying can gain (one frame's serialisation at 10 Gbps), packets are
conserved, and the family's report counts every unfinished message."""

from __future__ import annotations

import tomllib
from pathlib import Path

import polars as pl
import pytest

from pl2 import reproduce as rep
from pl2.reproduce.receiver_driven import common, homa_slowdown

#: A full frame (1542 B on the wire, preamble and IFG included) at 10 Gbps, in ps.
FRAME_10G_PS = 1542 * 8 * 100


@pytest.mark.real_native
def test_network_is_the_homa_simulators() -> None:
    """9 × 16 hosts, 4 spines at 40G; the fixed one-way delay across racks is the
    simulator's 2.25 µs: send path 0.5 + host link + 2 uplinks 0.25 + host link +
    receive path 0.5, with the simulator's host links (0.5 up, 0.25 down) summing to 0.75."""
    sc = common.build("t", "Homa", "w3", 0.5, warmup_us=1, until_us=10, duration_us=20)
    d = tomllib.loads(sc.canonical())
    net = d["network"]
    topo = net["topology"]
    assert (topo["leaves"], topo["hosts_per_leaf"], topo["spines"]) == (9, 16, 4) and common.HOSTS == 144
    assert topo["uplink"]["rate"] == "40Gbps" and net["link"]["rate"] == "10Gbps"
    ns = {"500ns": 500, "375ns": 375, "250ns": 250}
    one_way = (ns[net["host"]["send_latency"]["value"]] + 2 * ns[net["link"]["delay"]] + 2 * ns[topo["uplink"]["delay"]]
               + ns[net["host"]["recv_latency"]["value"]])
    assert one_way == 2250
    assert net["switch"]["cut_through"] is False and net["switch"]["latency"]["value"] == "0ps"
    # Only NDP's and DCTCP's switches differ, each by its own queue mechanism.
    base = common.switch("Homa")
    for tp in common.TRANSPORTS:
        extra = {k: v for k, v in common.switch(tp).items() if k not in base}
        assert set(extra) == {"NDP": {"queue"}, "DCTCP": {"ecn"}}.get(tp, set()), tp
    assert common.switch("DCTCP")["ecn"]["threshold"] == f"{65 * 1542}B"


def test_size_bins_equal_counts() -> None:
    """Deciles of 1..100 cut at 10, 20, …, 100; a repeated size merges bins."""
    b = common.size_bins(pl.Series(list(range(1, 101))))
    assert [hi for _, hi, _ in b] == list(range(10, 101, 10)) and b[0][0] == 0
    assert [hi for _, hi, _ in common.size_bins(pl.Series([5] * 50 + [7] * 50))] == [5, 7]


@pytest.mark.real_native
def test_smallest_quick_scenario_obeys_invariants() -> None:
    """W3 at 80% (the quick variant's smallest window), every transport."""
    from pl2.runner import run

    until = homa_slowdown.QUICK_WINDOW_US["w3"]
    for tp in common.TRANSPORTS:
        sc = common.build(f"t-{tp}", tp, "w3", 0.8, warmup_us=until * 0.1, until_us=until, duration_us=until + 50_000)
        res = run(sc, progress=False)
        m = res.messages
        fin = m.filter(pl.col("finish_ps").is_not_null())
        assert fin.height > 5000, tp
        # No message beats its ideal time alone by more than spraying can gain: its
        # short last frame overtaking a full one on another spine, at most one full
        # frame's serialisation at 10 Gbps. Per-flow ECMP keeps one path: never faster.
        slack = FRAME_10G_PS if tp in ("Homa", "pHost", "NDP") else 0
        fastest = fin.select((pl.col("latency_ps").cast(pl.Int64) - pl.col("ideal_ps").cast(pl.Int64)).min()).item()
        assert fastest >= -slack, (tp, fastest)
        if slack == 0:
            assert fin["slowdown"].min() >= 1.0 - 1e-12, tp
        # Packets are conserved: every frame created is delivered, dropped, consumed
        # by a switch or still on its way.
        k = res.summary["counters"]
        assert k["packets_created"] == k["packets_delivered"] + k["packets_dropped"] + k["packets_consumed"] + k["packets_in_flight"], tp
        assert k["messages_created"] == m.height and k["messages_finished"] == fin.height, tp
        # A 64 MiB buffer per switch cannot overflow here: nothing is dropped (NDP trims).
        assert k["packets_dropped"] == 0, tp
        assert (k["trims"] > 0) == (tp == "NDP"), tp


@pytest.mark.real_native
def test_family_quick(tmp_path: Path) -> None:
    out = tmp_path / "r"
    top = rep.reproduce(["receiver-driven"], out=out, quick=True, log=lambda *_: None).read_text(encoding="utf-8")
    assert "(receiver-driven/report.md): homa-slowdown" in top
    d = out / "receiver-driven" / "homa-slowdown"
    assert (d / "slowdown_80.png").is_file() and (d / "slowdown_80.svg").is_file()
    runs = pl.read_parquet(d / "runs.parquet")
    bins = pl.read_parquet(d / "bins.parquet")
    assert runs.height == len(common.TRANSPORTS) * len(homa_slowdown.QUICK_WINDOW_US)
    # Every measured message is in exactly one size bin, unfinished ones included.
    for (w, tp), g in runs.group_by(["workload", "transport"]):
        b = bins.filter((pl.col("workload") == w) & (pl.col("transport") == tp))
        assert b["messages"].sum() == g["messages"].sum(), (w, tp)
        assert b["unfinished"].sum() == g["unfinished"].sum(), (w, tp)
    report = (out / "receiver-driven" / "report.md").read_text(encoding="utf-8")
    assert f"## {homa_slowdown.TITLE}" in report and "wire bytes" in report
