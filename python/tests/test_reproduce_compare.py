"""`pl2 reproduce compare` (issue 26): every design on the same network. The registry's
promise, checked structurally (a design changes nothing of a base scenario but
`[transport]` and the switch keys it names), the settings against their sources' values
worked by hand, and the quick family end to end on the real native module (every design
in every table, PL2 run across racks with its inter-rack counters, goodput never above the wire's bound)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import polars as pl
import pytest

from pl2 import reproduce as rep
from pl2.reproduce.compare import core, designs as D, fluid, microburst, pod, polo_tail, rack


def _bases() -> list[dict]:
    return [rack.incast_base(5, 6, "x.csv", 20.0), rack.replay_base("w3", 0.5, 0.5, 1.0, 5.0),
            microburst.base("x.csv", True), core.base(8, 2)[0],
            pod.base("incast", "", 0, 0, 0, 20.0), pod.base("w5", "w5", 0.8, 0.1, 0.5, 10.0)]


@pytest.mark.parametrize("gbps", [1.0, 100.0])
def test_a_design_changes_only_its_transport_and_switch_keys(gbps: float) -> None:
    for base in _bases():
        for name, d in D.designs(gbps).items():
            sc = D.apply(base, d)
            a, b = copy.deepcopy(sc), copy.deepcopy(base)
            assert a.pop("transport") == d.transport, name
            b.pop("transport", None)
            sw_a = a["network"].pop("switch", {})
            sw_b = b["network"].pop("switch", {})
            assert a == b, f"{name} changed more than [transport] and [network.switch]"
            for k, v in sw_a.items():
                assert v == (d.switch[k] if k in d.switch else sw_b[k]), (name, k)
            assert set(sw_a) == set(sw_b) | set(d.switch), name


def test_settings_are_their_sources_values() -> None:
    """DCTCP's K is the DCTCP paper's 65 packets at 10 Gbps and above (65 × 1542 B =
    100,230 B) and 20 at 1 Gbps (30,840 B); Polo's threshold is 5 full frames (7,710 B)."""
    hi, lo = D.designs(100.0), D.designs(1.0)
    assert hi["DCTCP"].switch["ecn"] == {"kind": "step", "threshold": "100230B"}
    assert lo["DCTCP"].switch["ecn"] == {"kind": "step", "threshold": "30840B"}
    assert hi["Polo"].switch["ecn"]["threshold"] == "7710B"
    assert hi["NDP"].switch["queue"]["data_limit"] == {"frames": 8}
    # NDP's own return-to-sender (NDP §3.2), not htsim's default of dropping the header.
    assert hi["NDP"].switch["queue"]["header_overflow"] == "return_to_sender"
    assert set(D.ORDER) <= set(hi) and all(hi[n].settings for n in hi)
    assert D.diff(hi["Cubic"]) == '[transport] kind = "tcp", cc = "cubic"'


def test_the_examples_are_the_experiments_bases() -> None:
    """examples/compare-rack-w3.toml is compare-rack's W3 50 % base (10 ms window) with
    PL2's transport: they must not drift apart."""
    import tomllib

    root = Path(__file__).resolve().parents[2]
    ex = tomllib.loads((root / "examples" / "compare-rack-w3.toml").read_text(encoding="utf-8"))
    want = D.apply(rack.replay_base("w3", 0.5, 0.5, 10.5, 30.5), D.designs()["PL2"], "compare-rack-w3")
    assert ex == want


@pytest.mark.real_native
def test_compare_family_quick(tmp_path: Path) -> None:
    out = tmp_path / "r"
    top = rep.reproduce(["compare"], out=out, quick=True, log=lambda *_: None, executor=None).read_text(encoding="utf-8")
    assert "(compare/report.md): compare-rack, compare-microburst, compare-core, compare-pod" in top
    report = (out / "compare" / "report.md").read_text(encoding="utf-8")
    for n in D.ORDER:
        assert f"**{n}**" in report, n  # every design's settings in the preamble
    for name in rep.resolve(["compare"]):
        sec = (out / "compare" / name / "report.md").read_text(encoding="utf-8")
        assert f"## {rep.module(name).TITLE}" in sec
        assert (out / "compare" / name / f"{name.removeprefix('compare-')}.png").is_file()
        assert "Same scenario, every design" in sec
        for n in D.ORDER:
            assert f"| {n} |" in sec or f"| {n} | " in sec or f" | {n} | " in sec, (name, n)
    # PL2 runs across racks (§7): the pod and the core have its rows, no refusal, and the
    # pod's rows count frames crossing racks (each one counted leaving and entering).
    for name in ("compare-pod", "compare-core"):
        sec = (out / "compare" / name / "report.md").read_text(encoding="utf-8")
        assert "cannot run" not in sec and "across" in sec, name
    pod_df = pl.read_parquet(out / "compare" / "compare-pod" / "pod.parquet").filter(pl.col("design") == "PL2")
    assert pod_df.height and (pod_df["pl2_inter_out"] > 0).all()
    assert (pod_df["pl2_inter_in"] <= pod_df["pl2_inter_out"]).all()
    # Long flows sharing h0's link: every design's rate is at most the wire's payload
    # bound, and Polo's D is probed while both flows are open (a run of cuts from a peak).
    sh = pl.read_parquet(out / "compare" / "compare-pod" / "pod_shared.parquet")
    assert set(sh["design"]) == {"Polo", "Polo ECN 65"} and (sh["flows"] == 2).all()
    assert (sh["gbps"] <= 100 * 1500 / 1542).all()
    polo = sh.row(by_predicate=pl.col("design") == "Polo", named=True)
    assert polo["cycles"] > 0 and polo["d_trough"] < polo["d_peak"]
    assert "Polo's long flows sharing a link" in (out / "compare" / "compare-pod" / "report.md").read_text(encoding="utf-8")
    # Goodput into one 100 Gbps host never exceeds the wire's bound for full frames of the
    # largest payload (1500 B in 1542 B on the wire), give or take the one frame a
    # measurement window can cut (1500 B over the shortest window, the quick closed
    # loop's 0.3 ms: 0.04 Gbps).
    df = pl.read_parquet(out / "compare" / "compare-rack" / "rack.parquet")
    assert df.height and (df["goodput_gbps"] <= 100 * 1500 / 1542 + 1500 * 8 / 0.3e-3 / 1e9).all()
    # Lossless designs lose nothing to a full port in the rack (PFC admits their frames).
    roce = df.filter(pl.col("design").is_in(["RoCE+PFC", "SFC"]))
    assert (roce["buffer_drops"] == roce["headroom_drops"]).all()
    # The closed-loop incast runs every design, and with one 6000 B message (5 frames of at
    # most 1542 B) outstanding per thread, 60 threads can never queue more than 60 × 5 ×
    # 1542 B at h5's port unless a design sends a frame twice.
    closed = df.filter(pl.col("part") == "closed")
    assert set(closed["design"]) == set(D.ORDER)
    once = closed.filter(pl.col("resends") == 0)
    assert once.height and (once["max_queue_bytes"] <= 60 * 5 * 1542).all() and (once["buffer_drops"] == 0).all()
    score = json.loads((out / "compare" / "compare-rack" / "claims.json").read_text(encoding="utf-8"))
    assert score["claims"]


def test_polo_tail_shares_are_worked_from_the_slowdowns() -> None:
    """Polo 10, Homa 2: a gap of 8; a diagnostic at 8 closes 2/8 = 25 %, the four
    together at 4 close 6/8 = 75 % and leave 25 %, which the text says none explains (the
    three that help together, at 5, close 5/8 = 62.5 %, printed 62 % by round-half-even); a
    setting at 2.5 closes 7.5/8 ≈ 94 % and is named as the gap."""
    t = {d: {"s99": v} for d, v in {"Polo": 10.0, "Homa": 2.0, "Polo first burst 36": 8.0, "Polo no pause": 10.0,
                                     "Polo D bounded": 6.0, "Polo sprayed": 9.0, "Polo ECN 65": 7.0, "Polo D per receiver": 10.0, "Polo short first": 10.0,
                                     "Polo all four": 4.0, "Polo three that help": 5.0, "Polo three + ECN 65": 10.0,
                                     "Polo three + ECN 65 sprayed": 10.0, "Polo three + ECN 65 sprayed no gap": 10.0}.items()}
    v = polo_tail.tail_verdict(t)
    assert "a first burst of 36 packets 25%, no pause 0%, D bounded 50%, packets sprayed over the uplinks 12%, ECN marking at 65 full frames 38%" in v
    assert ("the first four together 75%, a first burst of 36, no pause and short first together 62%, those three with "
            "ECN marking at 65 full frames 0%, those three with ECN marking at 65 full frames and packets sprayed 0%, those "
            "three with ECN marking at 65 full frames, packets sprayed and no recovery 1 0%. The most, 75%, with the first four together, leaving 25% that no setting") in v
    assert v.endswith("leaving 25% that no setting changed here removes.")
    t["Polo ECN 65"]["s99"] = 2.5
    assert polo_tail.tail_verdict(t).endswith("The most, 94%, with ECN marking at 65 full frames: that setting is Polo's gap to Homa here.")
    t["Polo"]["s99"] = 1.0
    assert polo_tail.tail_verdict(t) == "Polo's p99 slowdown is not above Homa's in this run."


def test_polo_tail_shares_over_seeds() -> None:
    """Seed 1: gap 8, first burst at 8 closes 25 %, ECN at 7 38 %, all four at 4 75 %.
    Seed 2: gap 4 (Polo 6, Homa 2), first burst at 3 closes 75 %, ECN 6 0 %, all four
    5 25 %. Seed 3: Polo below Homa, left out. Ranges over seeds 1–2; the first burst and
    all four each close the most on one."""
    def t(polo: float, homa: float, fb: float, ecn: float, four: float) -> dict:
        v = {"Polo": polo, "Homa": homa, "Polo first burst 36": fb, "Polo no pause": polo, "Polo D bounded": polo,
             "Polo sprayed": polo, "Polo ECN 65": ecn, "Polo D per receiver": polo, "Polo short first": polo,
             "Polo all four": four, "Polo three that help": polo, "Polo three + ECN 65": polo,
             "Polo three + ECN 65 sprayed": polo, "Polo three + ECN 65 sprayed no gap": polo}
        # 100 messages each: 99 at 1.0 and the slowest at the p99 (nearest rank: the 99th).
        return {d: {"s99": x, "n": 100, "sl": [1.0] * 98 + [x, x]} for d, x in v.items()}
    by = {1: t(10.0, 2.0, 8.0, 7.0, 4.0), 2: t(6.0, 2.0, 3.0, 6.0, 5.0), 3: t(1.0, 2.0, 1.0, 1.0, 1.0)}
    v = polo_tail.tail_seeds(by)
    assert v.startswith(" On seeds 1–3 (Polo / Homa p99 slowdown 10.0 / 2.0, 6.0 / 2.0, 1.0 / 2.0; shares on the 2 seeds")
    assert "a first burst of 36 packets 25% to 75%, no pause 0% to 0%" in v
    assert ("ECN marking at 65 full frames 0% to 38%, one D per receiver shared by its flows 0% to 0%, messages of at most 100 KB sent at a higher priority 0% to 0%, the first four "
            "together 25% to 75%, a first burst of 36, no pause and short first together 0% to 0%") in v
    assert ("a first burst of 36 packets closes the most on 1 of 2; only a first burst of 36 packets and the first four "
            "together close part of the gap on every one of them") in v
    # Pooled: 300 messages per design, the p99 the 297th smallest (nearest rank), i.e. the
    # 4th largest of each seed's two slowest {10, 10, 6, 6, 1, 1}: Polo 6.0, Homa 2.0, gap
    # 4; first burst {8, 8, 3, 3, 1, 1} → 3.0 (75 %), ECN {7, 7, 6, 6, 1, 1} → 6.0 (0 %),
    # all four {4, 4, 5, 5, 1, 1} → 4.0 (50 %).
    assert v.endswith("one seed's shares are not the design's). Pooled over the seeds (p99 of every measured message): "
                      "Polo 6.0, Homa 2.0; shares a first burst of 36 packets 75%, no pause 0%, D bounded 0%, packets "
                      "sprayed over the uplinks 0%, ECN marking at 65 full frames 0%, one D per receiver shared by its "
                      "flows 0%, messages of at most 100 KB sent at a higher priority 0%, the first four together 50%, a first burst "
                      "of 36, no pause and short first together 0%, those three with ECN marking at 65 full frames 0%, those "
                      "three with ECN marking at 65 full frames and packets sprayed 0%, those three with ECN marking at 65 full frames, "
                      "packets sprayed and no recovery 1 0%.")
    # Seed 3 with Polo above Homa: Polo {10, 10, 9, 9, 6, 6} → 9.0, gap 7; first burst
    # {8, 8, 3, 3, 5, 5} → 5.0 (4/7 = 57 %), ECN {7, 7, 6, 6, 9, 9} → 7.0 (2/7 = 29 %).
    by[3] = t(9.0, 2.0, 5.0, 9.0, 6.0)
    v = polo_tail.tail_seeds(by)
    assert "shares on the 3 seeds" in v
    assert v.endswith("Polo 9.0, Homa 2.0; shares a first burst of 36 packets 57%, no pause 0%, D bounded 0%, packets "
                      "sprayed over the uplinks 0%, ECN marking at 65 full frames 29%, one D per receiver shared by its "
                      "flows 0%, messages of at most 100 KB sent at a higher priority 0%, the first four together 57%, a first burst "
                      "of 36, no pause and short first together 0%, those three with ECN marking at 65 full frames 0%, those "
                      "three with ECN marking at 65 full frames and packets sprayed 0%, those three with ECN marking at 65 full frames, "
                      "packets sprayed and no recovery 1 0%.")
    assert polo_tail.tail_seeds({1: by[1]}) == ""
    low = t(1.0, 2.0, 1.0, 1.0, 1.0)
    assert polo_tail.tail_seeds({3: low, 5: low}) == " On none of seeds 3, 5 is Polo's p99 slowdown finitely above Homa's."


def test_phost_unfinished_over_seeds() -> None:
    row = lambda u: {"unf": u}  # noqa: E731
    by = {1: {"pHost": row(7), pod.PHOST_RR: row(6), pod.PHOST_TIMERS: row(7), pod.PHOST_WINDOW: row(0)},
          2: {"pHost": row(3), pod.PHOST_RR: row(3), pod.PHOST_TIMERS: row(2), pod.PHOST_WINDOW: row(0)}}
    assert pod._phost_seeds(by) == (
        " Unfinished messages on seeds 1–2: YAPS's settings 7, 3; the receiver's tokens given in turn instead of by "
        "SRPT 6, 3; YAPS's two timers (a token's life, the re-grant wait) at 1000 MTU times 7, 2; a flow's token "
        "window at 64 instead of YAPS's 8 0, 0.")


def test_receiver_sharing_by_hand() -> None:
    """Receiver 9: message 1 (10 KB, 0–5 µs) overlaps 2 (1 MB, 4–20 µs): 1 shares with a
    larger one, 2 does not (1 is smaller). Message 3 (10 KB, 20–30 µs) starts as 2 is
    delivered: no overlap. Message 4 (5 KB, to receiver 8, unfinished) overlaps 5 (6 KB,
    to 8, from 100 µs): a message never delivered stays open to the run's end."""
    import polars as pl

    m = pl.DataFrame({"id": [1, 2, 3, 4, 5], "dst": [9, 9, 9, 8, 8],
                      "size_bytes": [10_000, 1_000_000, 10_000, 5_000, 6_000],
                      "start_ps": [0, 4_000_000, 20_000_000, 0, 100_000_000],
                      "latency_ps": [5_000_000, 16_000_000, 10_000_000, None, 1_000_000]})
    assert sorted(polo_tail.shares_receiver(m)) == [1, 4]
    # 200 messages per design over two seeds: Polo's two slowest (sizes 40 and 60 KB) both
    # shared, 20 of 200 in all (10 %); Homa's two slowest (3 and 5 MB) none, 50 of 200.
    def design(top: list[tuple[float, bool, int]], shared_rest: int) -> list:
        rest = [(1.0, i < shared_rest, 50_000) for i in range(100 - len(top))]
        return top + rest
    by = {1: {"Polo": {"rx": design([(9.0, True, 40_000)], 9)}, "Homa": {"rx": design([(4.0, False, 5_000_000)], 25)}},
          2: {"Polo": {"rx": design([(8.0, True, 60_000)], 9)}, "Homa": {"rx": design([(3.0, False, 3_000_000)], 25)}}}
    assert polo_tail.receiver_sharing(by) == (
        " Which messages make the tail, pooled over seeds 1–2 (slowest 1 % by slowdown): Polo's 2 slowest of 200 (median "
        "size 40 KB): 2 shared their receiver with a larger open message, against 10% of all its messages; Homa's 2 "
        "slowest of 200 (median size 3,000 KB): 0 shared their receiver with a larger open message, against 25% of all "
        "its messages. Polo's tail is short messages that met a larger one at their receiver, where Polo drives each "
        "flow by its own D with no priority by size; Homa's is large messages, which its SRPT grants last.")
    # Polo's slowest sharing at less than twice the rate of all its messages (none of
    # them; 18 of 200 in all): no verdict.
    by[1]["Polo"]["rx"][0] = (9.0, False, 40_000)
    by[2]["Polo"]["rx"][0] = (8.0, False, 60_000)
    assert polo_tail.receiver_sharing(by).endswith("against 9% of all its messages; Homa's 2 slowest of 200 (median size "
                                              "3,000 KB): 0 shared their receiver with a larger open message, against "
                                              "25% of all its messages.")


def test_polo_alone_share_is_worked_from_the_slowdowns() -> None:
    """Polo 10, Homa 2 at load: a gap of 8; alone Polo 6, Homa 1: 5 of it, 62 %, is
    Polo's own pace and 38 % contention; alone 1.5 against 1 (0.5 of 8, 6 %) leaves the
    gap to contention."""
    t = {"Polo": {"s99": 10.0}, "Homa": {"s99": 2.0}}
    first = {"Polo": {"n": 200, "s50": 2.2, "s99": 6.0}, "Homa": {"n": 199, "s50": 1.0, "s99": 1.0}}
    v = polo_tail.alone(t, polo_tail.Alone(first, {}, {}), 0.5)
    assert "nothing else sent; 200 and 199 runs): p50 / p99 slowdown Polo 2.2 / 6.0, Homa 1.0 / 1.0." in v
    assert v.endswith("5.0 above Homa's, 62% of its gap at 50%: that much is Polo's own pace (its first burst of 12 "
                      "packets, then D driving packets per epoch from D = 12, one more per epoch), the other 38% is contention.")
    # Pooled over seeds: alone Polo 3 against Homa 1 (2 above), at load 8 against 3 (gap 5): 40 %.
    pooled = {"Polo": {"n": 1000, "s50": 1.3, "s99": 3.0}, "Homa": {"n": 990, "s50": 1.0, "s99": 1.0}}
    assert polo_tail.alone(t, polo_tail.Alone(first, pooled, {"Polo": 8.0, "Homa": 3.0}), 0.5).endswith(
        " The same for every seed's messages (1000 and 990 runs): alone Polo 1.3 / 3.0, Homa 1.0 / 1.0; at 50%, pooled, "
        "Polo 8.0 and Homa 3.0 at the p99: Polo's own pace is 40% of the pooled gap, contention 60%.")
    first["Polo"]["s99"] = 1.5
    assert polo_tail.alone(t, polo_tail.Alone(first, {"Homa": pooled["Homa"]}, {}), 0.5).endswith(
        "the gap is made by contention, not by Polo's own pace.")
    assert polo_tail.alone(t, None, 0.5) == ""
    assert polo_tail.alone(t, polo_tail.Alone({}, {}, {}), 0.5) == ""


def test_fluid_model_by_hand() -> None:
    """One server of rate 1. Work 1 and 2 from time 0: shared equally, both served at ½
    until 2, when the first is done and the second has 1 left (done at 3); shortest first,
    1 then 3. Work 2 from 0 and 1 from 1: shared, the first alone to 1 (1 left), then both
    at ½ (both done at 3); shortest first, the tie at 1 goes to the earlier arrival (2, 3).
    An idle gap: work 1 at 0 and at 5 finish at 1 and 6."""
    assert fluid.finish_times([(0, 1), (0, 2)], "fair") == [2, 3]
    assert fluid.finish_times([(0, 2), (0, 1)], "srpt") == [3, 1]
    assert fluid.finish_times([(0, 2), (1, 1)], "fair") == [3, 3]
    assert fluid.finish_times([(0, 2), (1, 1)], "srpt") == [2, 3]
    assert fluid.finish_times([(5, 1), (0, 1)], "fair") == [6, 1]
    with pytest.raises(ValueError, match="discipline 'fifo'"):
        fluid.finish_times([(0, 1)], "fifo")
    assert fluid.line_fit([0, 10, 20], [5, 25, 45]) == (5, 2)


def test_fluid_slowdowns_take_the_slower_link() -> None:
    """Ideal time 100 + 2 ps per byte (the fit's intercept and slope). Messages 1 and 2
    (100 B each, work 200) start together from hosts 0 and 1 to host 9: each alone on its
    sender's link (200), shared on the receiver's (both done at 400): latency 100 + 400,
    slowdown 500 / 300. Message 3 (50 B, work 100) from host 0 to host 8 starts at 1000,
    alone everywhere: slowdown 1."""
    m = pl.DataFrame({"id": [1, 2, 3], "src": [0, 1, 0], "dst": [9, 9, 8], "size_bytes": [100, 100, 50],
                      "start_ps": [0, 0, 1000], "ideal_ps": [300, 300, 200]})
    got = fluid.slowdowns(m, "fair")
    assert got == pytest.approx({1: 500 / 300, 2: 500 / 300, 3: 1.0})
    srpt = fluid.slowdowns(m, "srpt")
    assert srpt == pytest.approx({1: 1.0, 2: 500 / 300, 3: 1.0})


def test_fluid_check_is_worked_from_the_pooled_rows() -> None:
    """Two seeds of 500 messages each: Polo's measured slowdowns 1 … 10 (p99 of 1000 is
    the 990th), the model's fair ones 2, srpt 1.5; Homa measured 3. The slowest 1 % of
    Polo's (ten messages) took in 40 Gbps at their receivers (median), of a 97.3 Gbps line:
    the verdict says the link is not kept full."""
    def design(sl: float | list[float], fair: float, srpt: float) -> dict:
        v = sl if isinstance(sl, list) else [sl] * 500
        return {"n": 500, "sl": sorted(v), "fluid": {"fair": [fair] * 500, "srpt": [srpt] * 500}}
    by_seed = {}
    for seed in (1, 2):
        polo = design([1.0] * 490 + [10.0] * 10, 2.0, 1.5)
        polo["rx_rate"] = [(1.0, 90.0)] * 490 + [(10.0, 40.0)] * 10
        polo["line_gbps"] = 97.3
        by_seed[seed] = {"Polo": polo, "Homa": design(3.0, 2.0, 1.5)}
    text = polo_tail.fluid_check(by_seed)
    assert "p99 slowdown 2.0 for Polo's messages and 2.0 for Homa's; shared shortest first, 1.5 and 1.5; measured, Polo 10.0 and Homa 3.0." in text
    assert "While Polo's 10 slowest messages were open, their receivers took in a median 40 Gbps of payload, of the 97 Gbps" in text
    assert text.endswith("driven below an equal share of their receiver's link, and the link is not kept full meanwhile.")
    for t in by_seed.values():
        t["Polo"]["sl"] = [1.0] * 500
    assert "does not account" not in polo_tail.fluid_check(by_seed)
    assert polo_tail.fluid_check({1: {"Polo": {"n": 1}, "Homa": {"n": 1}}}) == ""


def test_pause_tail_by_hand() -> None:
    """Two seeds of 100 messages (slowest 1 %: 2). Polo's slowest, 50 on seed 1, is 5
    without the pause (more than twice as slow with it); the next, 9 on seed 2, is 8
    without it (not): one made by the pause, the other a median 8.0 without against 9.0."""
    by_seed = {s: {"Polo": {"by_id": {i: 1.0 for i in range(100)}}, "Polo no pause": {"by_id": {i: 1.0 for i in range(100)}}}
               for s in (1, 2)}
    by_seed[1]["Polo"]["by_id"][7], by_seed[1]["Polo no pause"]["by_id"][7] = 50.0, 5.0
    by_seed[2]["Polo"]["by_id"][3], by_seed[2]["Polo no pause"]["by_id"][3] = 9.0, 8.0
    text = polo_tail.pause_tail(by_seed)
    assert text == (" The same 2 slowest messages of Polo's, pooled, in the runs without the pause (`Polo no pause`, same "
                    "seeds and messages): 1 of them more than twice as slow with the pause as without it (with it 50.0; "
                    "without 5.0); the other 1 a median 8.0 without it against 9.0 with it.")
    assert polo_tail.pause_tail({1: {"Polo": {}}}) == ""


def test_same_messages_by_hand() -> None:
    """One seed of 300 messages (slowest 1 %: 3, slowdowns 30, 20, 10; median 20). In
    the run without the pause the same three are 3, 2 and 1 (median 2); with a first
    burst of 36, 40, 25 and 5 (median 25). Other diagnostics, not run, are left out."""
    polo = {i: 1.0 for i in range(300)}
    polo.update({5: 30.0, 6: 20.0, 7: 10.0})
    nop = {i: 1.0 for i in range(300)}
    nop.update({5: 3.0, 6: 2.0, 7: 1.0})
    burst = {i: 1.0 for i in range(300)}
    burst.update({5: 40.0, 6: 25.0, 7: 5.0})
    by_seed = {1: {"Polo": {"by_id": polo}, "Polo no pause": {"by_id": nop}, "Polo first burst 36": {"by_id": burst}}}
    assert polo_tail.same_messages(by_seed) == (" Those 3 messages in each diagnostic's runs (same seeds and messages), median "
                                           "slowdown: 20.0 as run; a first burst of 36 packets 25.0; no pause 2.0.")
    assert polo_tail.same_messages({1: {"Polo": {"by_id": polo}}}) == ""


def test_tail_after_by_hand() -> None:
    """200 messages (slowest 1 %: 2). As run, the two slowest are 50 and 60 KB (median
    the lower, 50); with the three settings, 3 MB at 8.0 and 1 MB at 7.0."""
    rest = [(1.0, False, 10_000)] * 198
    by_seed = {1: {"Polo": {"rx": rest + [(20.0, True, 50_000), (10.0, True, 60_000)]},
                   "Polo three that help": {"rx": rest + [(8.0, False, 3_000_000), (7.0, False, 1_000_000)]}}}
    assert polo_tail.tail_after(by_seed) == (" With a first burst of 36, no pause and short first together, the run's own slowest 2 "
                                        "messages (pooled): median size 1,000 KB (1,000 KB to 3,000 KB), "
                                        "slowdowns 7.0 to 8.0, against median 50 KB (50 KB to 60 KB) as run.")
    assert polo_tail.tail_after({1: {"Polo": {"rx": rest}}}) == ""


def test_rx_rates_by_hand() -> None:
    """Windows of 10 ps. A message to host 3 open from 5 to 35: the windows that begin
    inside are 10, 20 and 30 (30 ps), holding 30 + 0 + 15 bytes at host 3 (the window at 20
    has no row: nothing arrived): 45 B × 8 / 30 ps = 12 × 10³ Gbps. Unfinished: ∞ and the
    windows from its start to the table's end."""
    g = pl.DataFrame({"host": [3, 3, 3, 4], "window_start_ps": [0, 10, 30, 20], "payload_bytes": [100, 30, 15, 999]})
    m = pl.DataFrame({"id": [1, 2], "dst": [3, 3], "start_ps": [5, 25], "latency_ps": [30, None], "ideal_ps": [10, 10]},
                     schema_overrides={"latency_ps": pl.Int64})
    got = polo_tail.rx_rates(m, g)
    assert got[0] == (3.0, pytest.approx(12e3))
    assert got[1] == (float("inf"), pytest.approx(15 * 8 / 10 * 1e3))


def test_phost_timer_share_is_worked_from_goodputs() -> None:
    """pHost 30 Gbps, the best design 78, both timers raised 54: (54 − 30) / (78 − 30) = 50 %."""
    row = {"good": 0.0, "tok_exp": 0, "dups": 0, "drops": 0, "q": 0, "unfinished": 0, "p99": 1.0}
    A = {"PL2": {**row, "good": 78.0}, "pHost": {**row, "good": 30.0}, "PL2 drift fix": {**row, "good": 99.0},
         "pHost long tokens": {**row, "good": 35.0}, "pHost late regrant": {**row, "good": 50.0},
         "pHost both timers": {**row, "good": 54.0}}
    text = microburst._phost_diag(A)
    assert "close 50% of pHost's goodput gap to the best design's 78.0 Gbps; the rest is not attributed" in text
    A["pHost both timers"]["good"] = 76.0
    assert microburst._phost_diag(A).endswith("YAPS's timers are the collapse.")
    # Unfinished messages with YAPS's settings, none with only the re-grant raised;
    # drops only with both raised: each said, with its counters.
    A["pHost"].update(unfinished=7, dups=90)
    A["pHost late regrant"]["dups"] = 2
    A["pHost both timers"].update(drops=500, q=1_500_000)
    text = microburst._phost_diag(A)
    assert "raising it alone leaves none unfinished (duplicate data frames 90 → 2)" in text
    assert "fills to 1500 KB and drops 500 frames (YAPS's settings: 0 KB, 0 drops)" in text


def test_pod_diagnostic_texts_read_the_run_rows() -> None:
    """The seed-1 diagnostics read only what `common.measure` returns (rows of a made-up
    run): Polo's incast at 60 Gbps against 90 without the pause is a 30 Gbps rise; pHost's
    W5 with 12 unfinished under SRPT and none round robin says SRPT leaves them waiting."""
    from pl2.reproduce.compare import common as C

    class Res:
        summary = {"goodput_gbps": {"h0": 60.0}, "counters": {}, "max_queue_bytes": {"s0->h0": 998_000}}
        messages = pl.DataFrame({"in_window": [True], "dst": [0], "latency_ps": [5_000_000]})
        ports = pl.DataFrame({"peer": ["h0"], "window_start_ps": [0], "mean_queue_bytes": [0.0]})

    polo = C.measure(Res(), [0])
    Res.summary = {**Res.summary, "goodput_gbps": {"h0": 90.0}}
    no_pause = C.measure(Res(), [0])
    rows = {"Polo": polo, polo_tail.POLO_NP: no_pause}
    text = pod._polo_incast(lambda part, wl, x, d: rows[d])
    assert "60.0 against 90.0 Gbps, largest queue 998 against 998 KB" in text
    assert "rises by 30.0 Gbps" in text
    rows.update({"SFC": polo, pod.SFC_FIXED: no_pause, "RoCE+PFC": no_pause})
    text = pod._sfc_incast(lambda part, wl, x, d: rows[d])
    assert "90.0 Gbps against SFC's 60.0 and RoCE+PFC's 90.0" in text
    assert text.endswith("the drain-to-target pause is what idles h0's link.")
    t = {"pHost": {"n": 100, "unf": 12, "unf_size50": 5e6, "size50": 1e5, "s50": 2.0, "s99": None},
         pod.PHOST_RR: {"n": 100, "unf": 0, "unf_size50": None, "size50": 1e5, "s50": 3.0, "s99": 9.0},
         pod.PHOST_TIMERS: {"n": 100, "unf": 7, "unf_size50": 5e6, "size50": 1e5, "s50": 2.0, "s99": None}}
    line = pod._phost_w5(t, 0.5, 1)
    assert "12 of 100 measured messages unfinished" in line and "median size 5,000 KB, against 100 KB" in line
    assert "instead of by SRPT (`pHost round robin`): 0 of 100 unfinished, p50 / p99 slowdown 3.0 / 9.0" in line
    assert "(`pHost both timers`): 7 of 100 unfinished, p50 / p99 slowdown 2.0 / ∞" in line
    assert line.endswith("Only with the receiver's tokens given in turn instead of by SRPT does every message finish: "
                         "the setting it changes is what leaves them unfinished.")
    t[pod.PHOST_RR]["unf"] = 3
    assert pod._phost_w5(t, 0.5, 1).endswith("No setting changed here lets them finish; no diagnostic here attributes it.")


def test_d_cuts_by_hand() -> None:
    """41 → 25 → 6 → 3 is one run of three cuts; 9 → 4 one of one (the repeated 4 ends
    it); the cut 6 → 2 at the series' end may go on, so it is left out."""
    assert polo_tail.d_cuts([37, 39, 41, 25, 6, 3, 5, 7, 9, 4, 4, 6, 2]) == [[41, 25, 6, 3], [9, 4]]
    assert polo_tail.d_cuts([1, 2, 3]) == []
    assert polo_tail.d_cuts([]) == []


def test_rx_split_by_hand() -> None:
    """Windows of 10 ps. Message 1 to host 3 from 0 to 40 (1,000 B, 200 Gbps of its own:
    1,000 × 8 / 40 ps); message 2 to host 3 from 20 to 60 overlaps it for 20 ps, so 1.5
    messages were open on average while 1 was; host 3 took in 100 + 50 + 50 + 0 B in
    the windows at 0, 10, 20, 30: 200 × 8 / 40 ps = 40 × 10³ Gbps. Message 3 (host 4) is
    unfinished."""
    g = pl.DataFrame({"host": [3, 3, 3, 3, 4], "window_start_ps": [0, 10, 20, 50, 0], "payload_bytes": [100, 50, 50, 7, 1]})
    msgs = pl.DataFrame({"id": [1, 2, 3], "dst": [3, 3, 4], "size_bytes": [1000, 10, 10], "start_ps": [0, 20, 0],
                         "latency_ps": [40, 40, None], "ideal_ps": [10, 10, 10]}, schema_overrides={"latency_ps": pl.Int64})
    got = polo_tail.rx_split(msgs, msgs.filter(pl.col("id") != 2), g)
    assert got[0] == (4.0, pytest.approx(200e3), pytest.approx(40e3), pytest.approx(1.5))
    assert got[1] == (float("inf"), None, None, None)


def test_equal_split_by_hand() -> None:
    """100 messages (slowest 1 %: 1): 10 Gbps of its own while its receiver took in 60
    among 3 open messages: 10 / (60 / 3) = 50 %."""
    rows = [(1.0, 50.0, 60.0, 1.0)] * 99 + [(9.0, 10.0, 60.0, 3.0)]
    text = polo_tail.equal_split({1: {polo_tail.THREE_FIXED: {"split": rows}}})
    assert text.startswith(" Those 1 messages got a median 10.0 Gbps each while open, 50% (median; 50% to 50%) of an "
                           "equal split of what their receivers took in meanwhile (a median 60 Gbps among a median 3.0 "
                           "open messages). So with every setting tested that helps, Polo's slowest messages still get "
                           "less than an equal split")
    # At an equal split (10 Gbps among 6 open at 60), no such sentence.
    rows[-1] = (9.0, 10.0, 60.0, 6.0)
    assert polo_tail.equal_split({1: {polo_tail.THREE_FIXED: {"split": rows}}}).endswith("a median 6.0 open messages).")
    assert polo_tail.equal_split({1: {"Polo": {}}}) == ""


def test_shared_text_is_worked_from_the_rows() -> None:
    """Polo with one flow at 92 Gbps, two at 46, of 100 × 1500 / 1542 = 97.3: 95 % and 47 %;
    its D example 40 → 24 → 5:
    the second cut, 19, needs at least 2 × 19 − 2 = 36 marked arrivals, more than the 24
    D allowed after the first."""
    base = {"cycles": 0, "d_peak": None, "d_trough": None, "d_cuts": None, "d_mean": None, "d_example": None}
    df = pl.DataFrame([
        {**base, "design": "Polo", "flows": 1, "gbps": 92.0},
        {**base, "design": "Polo", "flows": 2, "gbps": 46.0, "cycles": 7, "d_peak": 40.0, "d_trough": 4.0, "d_cuts": 2.0,
         "d_mean": 20.0, "d_example": "40 → 24 → 5"},
        {**base, "design": "Homa", "flows": 2, "gbps": None},
    ])
    text = polo_tail.shared_text(df, 10_000_000, 1)
    assert "1 flow Polo 92.0; 2 flows Polo 46.0, Homa unfinished." in text
    assert " Of the 97.3 Gbps of payload a 100 Gbps link carries in full frames: Polo 1 flow 95%, 2 flows 47%." in text
    assert "7 runs of cuts, each a median 2 epochs of cuts in a row from a median 40 packets per epoch to 4" in text
    assert "D averaged 20.0, 50% of its median peak" in text
    assert "at least 2 × 19 − 2 = 36 marked arrivals in an epoch that began with D = 24, more than that D asks for" in text
    assert polo_tail.shared_text(df.clear(), 1, 1) == ""


def test_spray_resends_by_hand() -> None:
    """Two seeds: `Polo sprayed` resent 30 + 10 of 500 + 500 data packets (4.0 %); the
    other sprayed diagnostics are missing from a seed, so left out."""
    by_seed = {1: {"Polo sprayed": {"dups": 30, "data": 500}, polo_tail.THREE_FIXED: {"dups": 0, "data": 400}},
               2: {"Polo sprayed": {"dups": 10, "data": 500}}}
    assert polo_tail.spray_resends(by_seed).endswith("data packets resent that had arrived, pooled (of all sent): packets "
                                                "sprayed over the uplinks 40 (4.0%).")
    assert polo_tail.spray_resends({}) == ""


def test_against_model_by_hand() -> None:
    """100 messages per design (p99: the 99th smallest). Polo 10, Homa 2: a gap of 8; the
    diagnostic at 4 closes (10 − 4) / 8 = 75 %; the model's fair and shortest-first p99
    are 3.5 and 2.5. Homa is within 10 % of the gap (0.8) of the model's shortest first,
    so the gap splits: (3.5 − 2.5) / 8 = 12 % (12.5, round-half-even) sharing, (4 − 3.5) /
    8 = 6 % (6.25) left. With the model's shortest first at 3.4 (1.4 from Homa) it does not."""
    def t(x: float) -> dict:
        return {"n": 100, "sl": [1.0] * 98 + [x, x]}
    by_seed = {1: {"Polo": {**t(10.0), "fluid": {"fair": [1.0] * 98 + [3.5] * 2, "srpt": [1.0] * 98 + [2.5] * 2}},
                   "Homa": {**t(2.0), "fluid": {"fair": [], "srpt": []}}, polo_tail.THREE_FIXED: t(4.0)}}
    head = (" With those three with ECN marking at 65 full frames, packets sprayed and no recovery 1, Polo's pooled p99 "
            "slowdown is 4.0, 75% of its gap to Homa closed; the fluid model of the same messages gives 3.5 shared equally "
            "and 2.5 shortest first, and Homa measures 2.0.")
    assert polo_tail.against_model(by_seed) == head + (
        " So of Polo's pooled gap to Homa (10.0 − 2.0), those changes close 75%; equal sharing against shortest first is "
        "12% of it in the model (Polo drives every open flow at once, Homa's receiver grants the shortest first, and Homa "
        "measures at the model's shortest first); the remaining 6%, Polo above equal sharing, goes with the unequal "
        "per-flow D measured above.")
    by_seed[1]["Polo"]["fluid"]["srpt"] = [1.0] * 98 + [3.4] * 2
    assert polo_tail.against_model(by_seed).endswith("and Homa measures 2.0.")
    del by_seed[1][polo_tail.THREE_FIXED]
    assert polo_tail.against_model(by_seed) == ""


def test_flow_d_by_hand() -> None:
    """Message 1 to host 3 open from 0 to 40 with its D probed at 10, 20, 30 (4, 6, 8:
    median 6); message 2 to host 3 from 20 to 80, probed at 25 (20), 35 (30) and 50 (99,
    after message 1 ended): the others' median while 1 was open is 25. Message 3 alone
    at host 4, never probed."""
    probes = pl.DataFrame({"time_ps": [10, 20, 30, 25, 35, 50], "flow": [1, 1, 1, 2, 2, 2],
                           "name": ["polo_flow_d"] * 6, "value": [4.0, 6.0, 8.0, 20.0, 30.0, 99.0]})
    msgs = pl.DataFrame({"id": [1, 2, 3], "dst": [3, 3, 4], "start_ps": [0, 20, 0], "latency_ps": [40, 60, 10],
                         "ideal_ps": [10, 10, 10]})
    got = polo_tail.flow_d(msgs, msgs.filter(pl.col("id") != 2), probes)
    assert got == [(4.0, 6.0, 25.0), (1.0, None, None)]


def test_own_d_by_hand() -> None:
    """100 messages (slowest 1 %: 1) at D 6 against 25 for its receiver's others: below
    0.8 × 25, so said; at 24 against 25, not."""
    rows = [(1.0, 50.0, 50.0)] * 99 + [(9.0, 6.0, 25.0)]
    text = polo_tail.own_d({1: {polo_tail.THREE_FIXED: {"flow_d": rows}}})
    assert text.startswith(" Their own D (probe `polo_flow_d`, packets per epoch, each message's median while open) was "
                           "a median 6 against 25 for the messages they shared their receiver with; 1 of 1 below: ")
    rows[-1] = (9.0, 24.0, 25.0)
    assert polo_tail.own_d({1: {polo_tail.THREE_FIXED: {"flow_d": rows}}}).endswith("; 1 of 1 below.")
    assert polo_tail.own_d({}) == ""


def test_spine_links_by_hand() -> None:
    """Two leaves of 2 hosts (s0, s1), spines s2, s3, s4; windows of 10 ps. Message 1 from
    h0 to h3 (leaf 1) open from 5 to 35: the windows at 10, 20, 30 (30 ps). Into s1, s2
    sent 30 + 30 B and s3 15 B in them (s3's 99 B at 0 begins before), s4 nothing then:
    rates 16, 4 and 0 × 10³ Gbps, busiest 16, median 4. Message 2 stays in its rack and
    message 3 is unfinished: neither is read."""
    ports = pl.DataFrame({"node": ["s2", "s2", "s3", "s3", "s4", "h0", "s1"], "peer": ["s1", "s1", "s1", "s1", "s1", "s0", "h3"],
                          "window_start_ps": [10, 30, 0, 20, 50, 10, 10], "tx_bytes": [30, 30, 99, 15, 7, 500, 500]})
    m = pl.DataFrame({"id": [1, 2, 3], "src": [0, 0, 1], "dst": [3, 1, 2], "start_ps": [5, 5, 5], "latency_ps": [30, 30, None]},
                     schema_overrides={"latency_ps": pl.Int64})
    got = polo_tail.spine_links(m, ports, leaves=2, per_leaf=2, spines=3)
    assert got == {1: (pytest.approx(16e3), pytest.approx(4e3))}
    # A fourth spine that never sent a frame (no row) still counts: median of 0, 0, 4, 16
    # (the lower) is 0.
    assert polo_tail.spine_links(m, ports, leaves=2, per_leaf=2, spines=4) == {1: (pytest.approx(16e3), 0.0)}


def test_spine_text_by_hand() -> None:
    """100 messages of the three's run (slowest 1 %: message 7 of seed 1); its spine links
    per flow 95 / 10 Gbps, sprayed 40 / 38."""
    by_seed = {1: {polo_tail.THREE: {"by_id": {i: (9.0 if i == 7 else 1.0) for i in range(100)}},
                   "Polo three + ECN 65": {"spines": {7: (95.0, 10.0)}}, polo_tail.THREE_FIXED: {"spines": {7: (40.0, 38.0)}}}}
    assert polo_tail.spine_text(by_seed) == (
        " The links from the spines into the receiver's rack while each of those messages crossed racks and was open: "
        "those three with ECN marking at 65 full frames, 1 of them: the busiest 95 Gbps and the median link 10 (medians "
        "over the messages); those three with ECN marking at 65 full frames, packets sprayed and no recovery 1, 1 of them: "
        "the busiest 40 Gbps and the median link 38 (medians over the messages): hashed per flow, those long flows meet "
        "on one spine link into the rack while the others have room (ECMP collisions); sprayed, the links carry alike.")
    by_seed[1][polo_tail.THREE_FIXED]["spines"][7] = (80.0, 38.0)
    assert polo_tail.spine_text(by_seed).endswith("the busiest 80 Gbps and the median link 38 (medians over the messages).")
    assert polo_tail.spine_text({1: {polo_tail.THREE: {"by_id": {}}}}) == ""
