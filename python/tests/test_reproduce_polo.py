"""`pl2 reproduce polo --quick`: the Polo family end to end on the real native module,
checked for structural facts (every design finishes its flows in the quick incasts, NDP
loses nothing that it cannot trim, the report and its files are written) and a
hand-worked bound (goodput never above the available bandwidth × payload / wire bytes).
The whole family in quick mode is the CI budget: ≤ 2 minutes on 2 cores."""

from __future__ import annotations

import math
from pathlib import Path

import polars as pl
import pytest

from pl2 import reproduce as rep
from pl2.reproduce.polo import common


def test_goodput_bound_by_hand() -> None:
    """800 Mbps available: Polo's data frame (1542 B) is followed by an 84 B adjoint, so
    at most 800 × 1500 / 1626 = 738.01 Mbps of payload; Homa's scheduled payload is
    1456 B per 1542 B frame: 755.38 Mbps."""
    assert common.goodput_bound_mbps("Polo", 800e6) == pytest.approx(800 * 1500 / 1626)
    assert common.goodput_bound_mbps("Polo^c", 800e6) == pytest.approx(738.007, abs=1e-3)
    assert common.goodput_bound_mbps("Homa 5 ms", 800e6) == pytest.approx(755.383, abs=1e-3)
    # The background: 1542 B every 61.68 µs is 200 Mbps of wire bytes exactly.
    assert 1542 * 8 / (common.BG_INTERVAL_NS * 1e-9) == pytest.approx(200e6)


def test_every_design_gets_the_same_network() -> None:
    """One switch for all (86 KB per port, ECN at 5 packets, the slides' "ECN threshold is
    5"); NDP's trimming FIFOs together hold exactly the port's 86 KB."""
    for d in common.DESIGNS:
        sw = common.switch(d)
        assert sw["port_limit"] == "86000B" and sw["ecn"] == {"kind": "step_packets", "threshold_packets": 5}
        assert ("queue" in sw) == (d == "NDP")
    q = common.switch("NDP")["queue"]
    assert common.NDP_DATA_LIMIT_B + common.NDP_HEADER_LIMIT_B == common.PORT_LIMIT_B
    assert q["header_prio"] == 1


def test_queue_by_d_joins_each_epoch_end_with_its_window() -> None:
    """Hand-made tables: epoch ends at 5, 12 and 25 µs with D = 8, 12, 12 fall in the 10 µs
    windows starting at 0, 10 and 20 µs (queues 2, 9 and 11 KB); a D in another seed's
    window, or Homa's row, must not join. D 8 is alone in the first bin (queue 2 KB,
    excess (8 − 6) × 1626 B); D 12, 12 in the second (median queue 10 KB, excess 9756 B)."""
    from pl2.reproduce.polo import queue

    us = 1_000_000
    dv = pl.DataFrame({"seed": [1, 1, 1, 2], "time_ps": [5 * us, 12 * us, 25 * us, 35 * us], "d": [8.0, 12.0, 12.0, 40.0]})
    ts = pl.DataFrame({"design": ["Polo", "Polo", "Polo", "Homa", "Polo"], "seed": [1, 1, 1, 2, 1],
                       "window_start_ps": [0, 10 * us, 20 * us, 30 * us, 30 * us],
                       "max_queue_bytes": [2000, 9000, 11000, 50000, 70000]})
    qd = queue.queue_by_d(dv, ts).to_dicts()
    assert [(r["d_lo"], r["epochs"], r["d_median"], r["queue_median_bytes"], r["excess_bytes"]) for r in qd] == [
        (1, 1, 8.0, 2000.0, 2 * 1626.0), (10, 2, 12.0, 10000.0, 6 * 1626.0)]


def test_d_diagnostic_joins_each_drop_with_its_receivers_d() -> None:
    """Hand-made tables: receiver h5's D is 10 from 0, 100 from 10 µs and 40 from 20 µs
    (median 40, maximum 100); h6 has no D probe. Data drops: to h5 at 2 µs (D 10), 15 and
    17 µs (D 100), to h6 at 16 µs (no D: counted as 0); a control frame's drop is left out:
    4 data drops, 2 of them above the 55 full frames of an 86 KB port. The bin
    100 KB–1 MB holds flows 1 (slowdown 50, from 4 µs) and 2 (slowdown 2): the p99
    (nearest rank) is flow 1, which lost a packet at port 3, where flow 7 (receiver h5)
    lost one at 17 µs with D 100; flow 7's drop there at 2 µs came before flow 1 started.
    Flow 5 (to h6, slowdown 50: also at the p99) lost nothing and its receiver has no D,
    but its sender h9 had flow 8 to h5 alive from 10 to 19 µs, when h5's D was 100: it
    counts as sharing its sender with a flow of large D."""
    from types import SimpleNamespace

    from pl2.reproduce.polo import leafspine

    us = 1_000_000
    probes = pl.DataFrame({"name": ["polo_d", "polo_d", "polo_retx", "polo_d"], "host": [5, 5, 5, 5],
                           "time_ps": [0, 10 * us, 11 * us, 20 * us], "value": [10.0, 100.0, 3.0, 40.0]})
    drops = pl.DataFrame({"time_ps": [2 * us, 5 * us, 15 * us, 16 * us, 17 * us], "dst": [5, 5, 5, 6, 5], "port": [3, 9, 3, 9, 3],
                          "msg_id": [7, 2, 1, 4, 7], "data": [True, False, True, True, True]})
    m = pl.DataFrame({"id": [1, 2, 3, 5], "src": [1, 2, 3, 9], "dst": [5, 5, 5, 6], "size_bytes": [200_000, 300_000, 50, 400_000],
                      "start_ps": [4 * us, 0, 0, 0], "finish_ps": [30 * us, 30 * us, 30 * us, 30 * us], "slowdown": [50.0, 2.0, 1.0, 50.0]})
    peer = pl.DataFrame({"id": [8], "src": [9], "dst": [5], "size_bytes": [50], "start_ps": [10 * us], "finish_ps": [19 * us], "slowdown": [1.0]})
    res = SimpleNamespace(probes=probes, drops=drops, messages=pl.concat([m, peer]))
    d = leafspine.d_diagnostic(res, "Polo no pause", m)
    assert (d["data_drops"], d["drops_d_over_buffer"]) == (4, 2)
    assert (d["tail_flows"], d["tail_lost_beside_big_d"], d["tail_big_receiver_d"], d["tail_big_sender_peer_d"]) == (2, 1, 0, 1)
    assert (d["d_p50"], d["d_max"]) == (40.0, 100.0)
    assert all(v is None for v in leafspine.d_diagnostic(res, "pHost", m).values())


@pytest.mark.real_native
def test_polo_family_quick(tmp_path: Path) -> None:
    out = tmp_path / "r"
    top = rep.reproduce(["polo"], out=out, quick=True, log=lambda *_: None).read_text(encoding="utf-8")
    assert "(polo/report.md): polo-core, polo-edge, polo-queue, polo-ablation, polo-leafspine, polo-large-incast" in top
    report = (out / "polo" / "report.md").read_text(encoding="utf-8")
    for name in rep.resolve(["polo"]):
        assert f"## {rep.module(name).TITLE}" in report
        d = out / "polo" / name
        assert list(d.glob("*.png")) and list(d.glob("*.svg")) and list(d.glob("*.parquet")), name
    assert report.count("| slide claim | ours |") == 6

    for exp in ("edge", "core"):
        df = pl.read_parquet(out / "polo" / f"polo-{exp}" / f"{exp}.parquet")
        assert set(df["design"]) >= set(common.DESIGNS)
        # Every design finishes every flow of every round in the quick incasts.
        assert (df["unfinished"] == 0).all(), df.filter(pl.col("unfinished") > 0)
        assert (df["rounds_done"] == df["rounds"]).all()
        # Goodput is never above the hand-worked bound.
        assert (df["goodput_mbps"] <= df["bound_mbps"] + 1e-9).all()
        assert (df["goodput_mbps"] > 0.3 * df["bound_mbps"]).filter(df["design"] == "Polo").all()
        # NDP trims where the others drop: nothing of it is dropped at the port limit
        # (its FIFOs hold the port's 86 KB together); only headers over the header FIFO
        # limit, or at the core the background's frames, are dropped.
        assert (df.filter(pl.col("design") == "NDP")["drops_port_limit"] == 0).all()
        if exp == "edge":
            assert (df.filter(pl.col("design") == "NDP")["trims"] > 0).all()

    li = pl.read_parquet(out / "polo" / "polo-large-incast" / "large_incast.parquet")
    assert set(li["senders"]) == {50, 100}
    assert (li["goodput_mbps"] <= li["bound_mbps"] + 1e-9).all()
    assert (li.filter(pl.col("design") == "Polo")["unfinished"] == 0).all()
    perf = pl.read_parquet(out / "polo" / "polo-large-incast" / "large_incast_perf.parquet")
    assert perf.height == 4 and (perf["wall_s"] > 0).all() and (perf["peak_rss_mb"] > 0).all()

    q = pl.read_parquet(out / "polo" / "polo-queue" / "queue.parquet")
    assert (q["max_queue_bytes"] <= common.PORT_LIMIT_B).all()
    assert all(math.isfinite(x) for x in q["completion_ms"].to_list())
