"""`pl2 reproduce sfc --quick`: the SFC family end to end on the real native module,
checked against the seed's settings and for structural facts: PFC runs lose nothing,
SFC and lossy runs count their egress drops, every message is delivered once the
arrivals stop (conservation), and the report and its files are written. The family's
quick mode is part of the CI budget: ≤ 2 minutes on 2 cores."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from pl2 import reproduce as rep
from pl2.reproduce.sfc import benefit, common, fairness, large, lasthop, queues, quick_split


def test_switch_settings_are_the_slides() -> None:
    """Benefit runs: PFC a static 800 KB per ingress port (16 MB / 20 ports), XOFF 650 KB,
    no egress pool; SFC a 16 MB egress buffer (15 MB shared + 20 × 50 KB guaranteed),
    α 1, ingress accounting disabled, trigger 100 KB, target 50 KB, suppression 6 µs."""
    pfc = common.switch("PFC")
    assert pfc["pools"] == {"ingress": {"size": "16000000B", "limit": {"bytes": "800000B"}}}
    assert pfc["pfc"]["xoff"] == {"bytes": "650KB"} and "sfc" not in pfc
    sfc = common.switch("SFC")
    assert sfc["pools"] == {"egress": {"size": "15000000B", "guaranteed": "50000B", "limit": {"alpha": 1.0}}}
    assert sfc["sfc"] == {"trigger": "100KB", "target": "50KB", "suppression": "6us", "proxy": False}
    assert "pfc" not in sfc and common.switch("SFC proxy")["sfc"]["proxy"] is True
    assert "sfc" not in common.switch("DCQCN lossy") and "pfc" not in common.switch("DCQCN lossy")
    f = common.switch("SFC", fairness=True)
    assert f["sfc"]["target"] == "64KB" and f["pools"]["egress"]["limit"] == {"alpha": 2.0}
    fp = common.switch("PFC", fairness=True)
    assert fp["pools"]["ingress"] == {"size": "9MB", "guaranteed": "50000B", "limit": {"alpha": 0.5}}


def test_incast_rate_by_hand() -> None:
    """120 × 256 KB = 245.76 Mbit per incast; 8% of 320 × 100 Gbps = 2.56 Tbps: one
    incast every 96 µs, each ≥ 2.4576 ms of the receiver's 100 Gbps link."""
    assert benefit.incast_gap_us(120) == pytest.approx(96.0)
    assert 120 * benefit.INCAST_B * 8 / common.LINK_BPS == pytest.approx(2.4576e-3)


def test_fairness_sizes_stop_in_reverse_order_under_fair_sharing() -> None:
    """Under exactly fair sharing flow k (started at kT) sends SHARES[k] × T × line rate;
    replaying the phases by hand, flow 3 ends at 4T, 2 at 5T, 1 at 6T, 0 at 7T."""
    left = list(common_shares := fairness.SHARES)
    assert len(common_shares) == 4
    ends = {}
    active: list[int] = []
    for phase in range(7):
        if phase < 4:
            active.append(phase)
        share = 1 / len(active)
        for k in list(active):
            left[k] -= share
            if left[k] < 1e-9:
                ends[k] = phase + 1
                active.remove(k)
    assert ends == {3: 4, 2: 5, 1: 6, 0: 7}


def test_time_weighted_queue_by_hand() -> None:
    """Two switch ports, 10 µs windows, measured over [10, 50) µs. Port 1 (s0 → h1): rows
    in windows 1 and 2 only; window 1 holds 100 KB for 2 µs then 0 (mean 20 KB), window 2
    rises to 300 KB at 5 µs and keeps it (mean 150 KB, ends at 300 KB), so windows 3 and 4,
    without rows (the port paused), hold 300 KB: per-window means 20, 150, 300, 300 KB,
    time-average 192.5 KB. Port 2 (s1 → s0): one row in window 0 ending at 40 KB, so 40 KB
    through windows 1-4. Over the 8 (port, window) cells: mean (20 + 150 + 300 + 300 +
    4 × 40) / 8 = 116.25 KB; nearest-rank p99 = the largest cell, 300 KB; busiest port
    192.5 KB; per-window maxima 100, 300, 300, 300 and 40 × 4."""
    ports = pl.DataFrame({
        "port": [1, 1, 2], "node": ["s0", "s0", "s1"], "peer": ["h1", "h1", "s0"],
        "window_start_ps": [10_000_000, 20_000_000, 0], "max_queue_bytes": [100_000, 300_000, 40_000],
        "mean_queue_bytes": [20_000.0, 150_000.0, 10_000.0], "end_queue_bytes": [0, 300_000, 40_000],
        "tx_bytes": [0, 0, 0]}, schema_overrides={"port": pl.UInt32, "max_queue_bytes": pl.UInt64, "end_queue_bytes": pl.UInt64})
    cells = queues.port_windows(ports, 10_000_000, 50_000_000, 10_000_000, "s")
    assert cells.height == 8
    p1 = cells.filter(pl.col("port") == 1).sort("k")
    assert p1["mean_b"].to_list() == [20_000.0, 150_000.0, 300_000.0, 300_000.0]
    assert p1["max_b"].to_list() == [100_000.0, 300_000.0, 300_000.0, 300_000.0]
    assert cells.filter(pl.col("port") == 2)["mean_b"].to_list() == [40_000.0] * 4
    s = queues.summary(cells)
    assert s["tw_mean_kb"] == pytest.approx(116.25)
    assert s["tw_p99_kb"] == pytest.approx(300.0)
    assert s["tw_port_max_kb"] == pytest.approx(192.5)
    assert s["wmax_mean_kb"] == pytest.approx((100 + 900 + 160) / 8)
    assert s["wmax_max_kb"] == pytest.approx(300.0)
    assert queues.port_windows(ports, 10_000_000, 50_000_000, 10_000_000, "h").is_empty()


def test_colocated_by_hand() -> None:
    """Host 1 sends incast messages over [10, 40) and [15, 20) ps and one never delivered
    from 100; host 2 one over [0, 5). Background messages from host 1 at 12, 30 (the
    message started at 10 is still open though the one started last has ended), 50 (none
    open), 150 (the undelivered one); from host 2 at 5 (its message was delivered at 5)
    and from host 3 at 12 (no incast data)."""
    inc = pl.DataFrame({"src": [1, 1, 1, 2], "start_ps": [10, 15, 100, 0], "finish_ps": [40, 20, None, 5]},
                       schema_overrides={"finish_ps": pl.UInt64})
    bg = pl.DataFrame({"src": [1, 1, 1, 1, 2, 3], "start_ps": [12, 30, 50, 150, 5, 12]})
    assert benefit.colocated(bg, inc).to_list() == [True, True, False, True, False, False]


def test_last_hop_series_by_hand() -> None:
    """An incast starting at 1 µs from h3 and h40 into h17 (ToR s1), 1 µs windows, 4 µs
    followed. Window 0: h3 and h40 start sending 1000 B each (in flight 2000 B); a
    background frame of h3 and a hop at s5 do not count. Window 1: 1000 B reach h17
    (1000 B); s1 makes an SFC signal (its first hop: sent), s5 forwards it (not sent
    again). Window 2: 1000 B dropped and h3 resends 1000 B (1000 B). Window 3: the signal
    reaches h3 (flow 11's first). The port s1 → h17: a row in window 0 (largest 5000 B, mean 2500 B, ends
    at 4000 B), none in window 1 (held at 4000 B), a row in window 2 (8000 B, 6000 B,
    ends empty), none in window 3 (0); s1 → h16 is another port."""
    t0 = 1_000_000
    ev = [  # (µs after t0, event, node, src, kind, transport, payload)
        (0.2, "tx", "h3", 3, "data", "incast", 1000), (0.5, "tx", "h40", 40, "data", "incast", 1000),
        (0.3, "tx", "h3", 3, "data", "default", 5000), (0.9, "tx", "s5", 3, "data", "incast", 1000),
        (1.5, "arrive", "h17", 3, "data", "incast", 1000), (1.2, "tx", "s1", common.HOSTS + 1, "sfc", "incast", 0),
        (1.4, "tx", "s5", common.HOSTS + 1, "sfc", "incast", 0), (2.1, "drop", "s1", 40, "data", "incast", 1000),
        (2.5, "tx", "h3", 3, "data", "incast", 1000), (3.3, "arrive", "h3", common.HOSTS + 1, "sfc", "incast", 0),
    ]
    trace = pl.DataFrame({
        "time_ps": [t0 + round(t * 1e6) for t, *_ in ev], "event": [e[1] for e in ev], "node": [e[2] for e in ev],
        "src": [e[3] for e in ev], "kind": [e[4] for e in ev], "transport": [e[5] for e in ev],
        "payload_bytes": [e[6] for e in ev], "flow": [12 if e[2] == "h40" or e[1] == "drop" else 11 for e in ev]},
        schema_overrides={"time_ps": pl.UInt64, "src": pl.UInt32, "payload_bytes": pl.UInt32, "flow": pl.UInt32})
    ports = pl.DataFrame({
        "port": [7, 7, 8], "node": ["s1", "s1", "s1"], "peer": ["h17", "h17", "h16"],
        "window_start_ps": [t0, t0 + 2_000_000, t0], "max_queue_bytes": [5000, 8000, 99_000],
        "mean_queue_bytes": [2500.0, 6000.0, 99_000.0], "end_queue_bytes": [4000, 0, 99_000], "tx_bytes": [0, 0, 0]},
        schema_overrides={"port": pl.UInt32, "window_start_ps": pl.UInt64, "max_queue_bytes": pl.UInt64, "end_queue_bytes": pl.UInt64})
    incast = {"start_ps": t0, "dst": 17, "srcs": [3, 40], "ids": [11, 12]}
    s = lasthop.series(trace, ports, incast, 4)
    assert s["t_us"].to_list() == [0.0, 1.0, 2.0, 3.0]
    assert s["inflight_b"].to_list() == [2000, 1000, 1000, 1000]
    assert s["queue_max_b"].to_list() == [5000, 4000, 8000, 0]
    assert s["queue_mean_b"].to_list() == [2500.0, 4000.0, 6000.0, 0.0]
    assert s["signals_sent"].to_list() == [0, 1, 0, 0] and s["signals_arrived"].to_list() == [0, 0, 0, 1]
    # Per flow: flow 11 (h3) is signalled at 3.3 µs, after sending 1000 B at 0.2 µs and
    # 1000 B at 2.5 µs; flow 12 (h40) is never signalled and sent 1000 B.
    flows = lasthop.per_flow(trace, incast)
    assert flows["flow"].to_list() == [11, 12]
    assert flows["signal_us"].to_list() == [pytest.approx(3.3), None]
    assert flows["sent_before_b"].to_list() == [2000, 1000]
    f = lasthop.facts(s, flows)
    assert f["first signal sent us"] == 1.0 and f["first signal arrived us"] == 3.0
    assert f["inflight at first arrival KB"] == 1.0 and f["peak inflight KB"] == 2.0
    assert f["peak queue KB"] == 8.0 and f["peak queue at us"] == 2.0 and f["dropped KB"] == 1.0
    assert f["flows signalled"] == 1 and f["sent before signal sum KB"] == 3.0 and f["sent before signal max KB"] == 2.0


def test_last_hop_picks_the_first_incast_after_the_warmup() -> None:
    """Incast messages at 5 (before the warm-up at 10), two at 20 into h9 and one at 30:
    the incast at 20, its senders and ids; background messages do not count."""
    m = pl.DataFrame({"id": [1, 2, 3, 4, 5], "src": [1, 2, 3, 4, 6], "dst": [9, 9, 9, 8, 7],
                      "transport": ["incast", "incast", "incast", "incast", "default"], "start_ps": [5, 20, 20, 30, 12]})
    assert lasthop.pick(m, 10) == {"start_ps": 20, "dst": 9, "ids": [2, 3], "srcs": [2, 3]}


def test_large_message_breakdown_by_hand() -> None:
    """Message 7 (3000 B, h3 → h9) starts at 0 and is delivered at 10 µs; its NIC sends
    three 1250 B frames (100 ns each at 100 Gbps) at 0, 2 and 8 µs: line 0.3 µs, last
    frame out at 8 µs, tail 2 µs. SFC signals reach h3 at 1 µs (pause 2 µs) and 3.5 µs
    (1 µs): paused [1, 3] ∪ [3.5, 4.5] = 3 µs. DCQCN's rate: line rate until 4 µs, 50 Gbps
    from 4 µs, 25 Gbps from 6 µs; below line rate outside the pauses: 1.5 µs × 0.5 (4.5–6)
    + 2 µs × 0.75 (6–8) = 2.25 µs. Other waits: 8 − 0.3 − 3 − 2.25 = 2.45 µs. Frames,
    signals and probes of other flows, other nodes or other probe names do not count;
    message 8 never finished."""
    us = 1_000_000
    m = pl.DataFrame({"id": [7, 8], "src": [3, 4], "size_bytes": [3000, 5000], "start_ps": [0, 0], "finish_ps": [10 * us, None],
                      "latency_ps": [10 * us, None]}, schema_overrides={"finish_ps": pl.UInt64, "latency_ps": pl.UInt64})
    ev = [  # (µs, event, node, flow, kind, wire, payload, aux)
        (0, "tx", "h3", 7, "data", 1250, 1000, 0), (2, "tx", "h3", 7, "data", 1250, 1000, 0),
        (8, "tx", "h3", 7, "data", 1250, 1000, 0), (8.5, "tx", "s0", 7, "data", 1250, 1000, 0),
        (9, "tx", "h3", 99, "data", 1250, 1000, 0), (1, "arrive", "h3", 7, "sfc", 84, 0, 2 * us),
        (3.5, "arrive", "h3", 7, "sfc", 84, 0, us), (0.9, "tx", "s0", 7, "sfc", 84, 0, 2 * us),
        (1, "tx", "h4", 8, "data", 1250, 1000, 0)]
    trace = pl.DataFrame({"time_ps": [round(e[0] * us) for e in ev], "event": [e[1] for e in ev], "node": [e[2] for e in ev],
                          "flow": [e[3] for e in ev], "kind": [e[4] for e in ev], "wire_bytes": [e[5] for e in ev],
                          "payload_bytes": [e[6] for e in ev], "aux": [e[7] for e in ev]},
                         schema_overrides={"time_ps": pl.UInt64, "flow": pl.UInt32, "aux": pl.UInt64})
    probes = pl.DataFrame({"time_ps": [4 * us, 4 * us, 6 * us, 5 * us], "flow": [7, 7, 7, 99],
                           "name": ["roce_rate_bps", "roce_alpha", "roce_rate_bps", "roce_rate_bps"], "value": [50e9, 0.5, 25e9, 1e9]},
                          schema_overrides={"time_ps": pl.UInt64, "flow": pl.UInt32})
    b = large.breakdown(m, trace, probes, [7, 8]).sort("id")
    r = b.row(0, named=True)
    assert r["fct_us"] == pytest.approx(10.0) and r["line_us"] == pytest.approx(0.3)
    assert r["paused_us"] == pytest.approx(3.0) and r["below_us"] == pytest.approx(2.25)
    assert r["other_us"] == pytest.approx(2.45) and r["tail_us"] == pytest.approx(2.0)
    assert sum(r[p] for p in large.PARTS) == pytest.approx(r["fct_us"])
    assert r["resent_b"] == 0 and r["signals"] == 2 and r["min_rate_gbps"] == pytest.approx(25.0)
    assert b.row(1, named=True)["fct_us"] is None
    # The messages picked: measured (in the window), background, at least 1 MB.
    cand = pl.DataFrame({"id": [1, 2, 3, 4, 5], "src": [6, 5, 5, 2, 1], "size_bytes": [2_000_000, 999_999, 1_000_000, 3_000_000, 4_000_000],
                         "in_window": [True, True, True, False, True], "transport": ["default"] * 4 + ["incast"]})
    assert large.pick(cand) == {"ids": [1, 3], "srcs": [5, 6]}


def test_quick_split_crosses_one_difference_each() -> None:
    """Each crossed setting differs from quick mode in one thing only: the fan-in, or the
    window (warm-up, arrivals and drain)."""
    q, f = benefit.settings(True), benefit.settings(False)
    c = quick_split.crossed()
    assert c["quick window, 120-to-1"] == {**q, "fan_in": 120} and c["full window, 30-to-1"] == {**f, "fan_in": 30}


@pytest.mark.real_native
def test_sfc_family_quick(tmp_path: Path) -> None:
    out = tmp_path / "r"
    top = rep.reproduce(["sfc"], out=out, quick=True, log=lambda *_: None).read_text(encoding="utf-8")
    assert "(sfc/report.md): sfc-benefit, sfc-fairness" in top
    report = (out / "sfc" / "report.md").read_text(encoding="utf-8")
    for name in rep.resolve(["sfc"]):
        assert f"## {rep.module(name).TITLE}" in report
        d = out / "sfc" / name
        assert list(d.glob("*.png")) and list(d.glob("*.parquet")), name
    b = pl.read_parquet(out / "sfc" / "sfc-benefit" / "benefit.parquet")
    assert set(b["design"]) == set(common.DESIGNS)
    # The > 1 MB mechanism runs are the full run's: quick mode says where they are.
    assert not (out / "sfc" / "sfc-benefit" / "large.parquet").exists()
    assert "Not run in quick mode: the `sfc-large` runs" in report
    # PFC is lossless: no frame dropped anywhere.
    assert (b.filter(pl.col("design") == "PFC")["drops total"] == 0).all()
    # Every design sees the same arrivals (streams keyed by seed and workload), the
    # buckets and the incasts partition the measured messages, and every incast and
    # every message below 10 KB is delivered once the arrivals stop and the run drains
    # (a mid-size message whose frames were dropped may still wait for RoCE's 1 ms
    # timeout in the lossy designs: at most 0.1% of them).
    assert b["messages"].n_unique() == 1 and b["incasts"].n_unique() == 1
    for r in b.iter_rows(named=True):
        assert r["bg < 10 KB unfinished"] == 0, r
        assert r["bg 10 KB – 1 MB unfinished"] <= 0.001 * r["bg 10 KB – 1 MB n"], r
        assert r["incasts unfinished"] == 0
        assert sum(r[f"bg {lab} n"] for lab, _, _ in benefit.BUCKETS) + r["incast msgs"] <= r["messages"]
    # Frame conservation: every frame created was delivered, consumed (control frames a
    # switch or NIC acts on), dropped, or is still on its way when the run stops.
    for r in b.iter_rows(named=True):
        assert r["packets_created"] == r["packets_delivered"] + r["packets_consumed"] + r["packets_dropped"] + r["packets_in_flight"], r
    # SFC signals only where SFC runs; the proxy converts every signal it sees at a ToR.
    assert (b.filter(pl.col("design").str.starts_with("SFC"))["sfc signals"] > 0).all()
    assert (b.filter(~pl.col("design").str.starts_with("SFC"))["sfc signals"] == 0).all()
    assert (b.filter(pl.col("design") == "SFC")["sfc proxied"] == 0).all()
    f = pl.read_parquet(out / "sfc" / "sfc-fairness" / "fairness.parquet")
    assert (f.filter(pl.col("design") == "PFC")["drops"] == 0).all()
    assert ((f["jain mean"] > 0.25) & (f["jain mean"] <= 1.0 + 1e-12)).all()
