"""`pl2 reproduce retcp --quick`: the reTCP family end to end on the real native module,
checked for structural facts (the report and its files are written, every run measured
its window, the circuit never carries more than its rate allows while up, the packet
network never more than 10 Gbps) and a hand-worked week. The whole family in quick mode
is the CI budget: ≤ 2 minutes on 2 cores."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

import pl2
from pl2 import reproduce as rep
from pl2.scenario import Scenario
from pl2.reproduce.retcp import common


def test_weeks_by_hand() -> None:
    """8 racks round robin: 7 slots of 180 + 20 µs = 1400 µs; etalon's 25-rack fake
    strobe: 24 × 200 = 4800 µs."""
    assert common.week_us(8) == 1400
    assert common.week_us(25) == 4800
    assert common.weeks(False) == (500, 50)


def test_etalon_fake_strobe_by_hand() -> None:
    """etalon's fake strobe for 25 racks (`click_common.py:186-215`): 3 real racks and 24
    matchings; the measured pair 0 → 1 has one day in 24, the ACKs' pair 1 → 0 the other
    23 (entry d of a matching is the source rack of destination d). The 8-rack runs stay
    round robin over 8 real racks; the family's hosts send at etalon's 40 Gbps through the
    offload's shaper, on links at its NIC's 40 Gbps × TDF 20 = 800 Gbps, in units of up to
    64 KiB (seven 8960 B segments) or, with `tso_2seg`, two segments."""
    d = common.scenario_dict("x", cc="cubic", quick=True, racks=25)
    assert d["network"]["topology"]["racks"] == 3
    ms = d["network"]["circuit"]["schedule"]["list"]
    assert len(ms) == 24
    assert sum(m[1] == 0 for m in ms) == 1 and sum(m[0] == 1 for m in ms) == 23
    assert d["network"]["link"]["rate"] == "800Gbps"
    assert d["network"]["host"]["offload"] == {"rate": "40Gbps", "max_bytes": "65536B"}
    two = common.scenario_dict("v", cc="cubic", quick=True, racks=25, settings=("host_40g", "tso_2seg", "no_delayed_ack"))
    assert two["network"]["host"]["offload"] == {"rate": "40Gbps", "max_bytes": f"{2 * 8960}B"}
    assert two["transport"]["delayed_ack"] is False
    no_tso = common.scenario_dict("u", cc="cubic", quick=True, racks=25, settings=("host_40g",))
    assert no_tso["network"]["link"]["rate"] == "40Gbps" and "host" not in no_tso["network"]
    assert d["run"]["duration"] == f"{25 * 4800}us"
    e = common.scenario_dict("y", cc="retcp", signal_lead_us=150, quick=True, racks=8)
    assert e["network"]["topology"]["racks"] == 8 and e["network"]["circuit"]["schedule"] == "round_robin"
    assert e["network"]["circuit"]["signal_timing"] == "recompute"
    plain = common.scenario_dict("z", cc="retcp", signal_lead_us=150, quick=True, racks=25, settings=())
    assert plain["network"]["link"]["rate"] == "10Gbps" and "signal_timing" not in plain["network"]["circuit"]
    with pytest.raises(ValueError, match="unknown"):
        common.scenario_dict("w", cc="cubic", quick=True, settings=("hystart",))


def test_static_buffer_retcp_runs_lead_by_etalons_default() -> None:
    """etalon's static-buffer runs set no `in_advance`, so its runner marked ECE with the
    default 12000 µs of dilated time: 600 µs at TDF 20. The variants' reTCP and the static
    reTCP sweep run with that lead; the resizing runs lead by τ."""
    from pl2.reproduce.retcp import static, variants

    assert common.ETALON_DEFAULT_LEAD_US * common.TDF == 12_000
    v = common.scenario_dict("l", quick=True, racks=25, capacity=16, **variants.VARIANTS["retcp"])
    assert v["network"]["circuit"]["signal_lead"] == "600us"
    assert set(static.ETALON_RETCP) == {str(c) for c in static.CAPS}


def test_etalon_night_and_linux_host_settings() -> None:
    """The family's etalon settings beyond the network's: etalon's schedule runner closes
    the next pair's packet path at night (`night_packet_path = "closed"`); Linux's timers
    on the hosts' real clock under TDF 20 (200 ms minimum RTO → 10 ms, 40 ms delayed-ACK
    timer → 2 ms, the 10 ms probe-timeout floor → 500 µs), its RTO form and CUBIC's α. GRO
    is a probe only: mlx4's 16 µs and 128 µs of real time are 800 and 6400 ns emulated."""
    d = common.scenario_dict("x", cc="cubic", quick=True, racks=8)
    assert d["network"]["circuit"]["night_packet_path"] == "closed"
    t = d["transport"]
    assert (t["min_rto"], t["delayed_ack_timeout"], t["min_pto"]) == ("10000us", "2000us", "500us")
    assert t["linux_rto"] is True and t["cubic_alpha"] == "linux" and "gro" not in t
    for probe, window in (("gro_16us", "800ns"), ("gro_128us", "6400ns")):
        g = common.scenario_dict("g", cc="cubic", quick=True, settings=common.SETTINGS + (probe,))
        assert g["transport"]["gro"] == {"window": window}
    open_night = common.scenario_dict("o", cc="cubic", quick=True, settings=("host_40g",))
    assert "night_packet_path" not in open_night["network"]["circuit"]
    assert not {"linux_rto", "min_pto", "cubic_alpha"} & set(open_night["transport"])


@pytest.mark.real_native
def test_linux_cubic_runs_tcp_cubic_c_on_the_hosts_dilated_jiffy_clock() -> None:
    """`linux_cubic` runs CUBIC as Linux's `tcp_cubic.c` on the hosts' kernel clock (HZ
    250, 20 times faster than emulated time) wherever CUBIC runs (reTCP's CUBIC base too),
    and only there: a scenario giving it to a variant without CUBIC is refused, naming the
    key. The probe `cubic_alpha_only` keeps RFC 9438's CUBIC with Linux's α."""
    clock = {"hz": 250, "dilation": 20}
    assert common.scenario_dict("c", cc="cubic", quick=True)["transport"]["cubic_linux"] == clock
    assert common.scenario_dict("r", cc="retcp", retcp_base="cubic", quick=True)["transport"]["cubic_linux"] == clock
    for cc in ("new_reno", "dctcp", "retcp", "bbr"):
        assert "cubic_linux" not in common.scenario_dict("n", cc=cc, quick=True)["transport"], cc
    rfc = common.scenario_dict("a", cc="cubic", quick=True, settings=common.SETTINGS + ("cubic_alpha_only",))["transport"]
    assert rfc["cubic_alpha"] == "linux" and "cubic_linux" not in rfc
    d = common.scenario_dict("bad", cc="new_reno", quick=True)
    d["transport"]["cubic_linux"] = clock
    with pytest.raises(Exception, match="cubic_linux is set but the congestion control runs no CUBIC"):
        pl2.run(Scenario.from_dict(d), progress=False)
    d["transport"] |= {"cc": "cubic", "cubic_linux": {"hz": 0}}
    with pytest.raises(Exception, match="cubic_linux.hz = 0"):
        pl2.run(Scenario.from_dict(d), progress=False)


def test_resized_voqs_drop_beyond_a_shrunk_capacity_as_etalons_click_queues() -> None:
    """`shrink_drop` (etalon's `live_reconfigure`) applies to resized VOQs only."""
    d = common.scenario_dict("d", cc="cubic", resize=(300, 16, 50), quick=True)
    assert d["network"]["voq"]["resize"] == {"tau": "300us", "small": 16, "large": 50, "shrink": "drop"}
    assert "resize" not in common.scenario_dict("s", cc="cubic", quick=True)["network"]["voq"]
    kept = common.scenario_dict("k", cc="cubic", resize=(300, 16, 50), quick=True, settings=("host_40g",))
    assert "shrink" not in kept["network"]["voq"]["resize"]


def test_bbr_clock_constants_are_dilated_like_the_other_kernel_timers() -> None:
    """BBR's times on the hosts' real clock under TDF 20: Linux's 10 s min-RTT window is
    500 ms emulated, 200 ms of PROBE_RTT 10 ms, the 2^-10 s that sizes a sending unit
    976,562,500 ps / 20 = 48,828,125 ps, the 1 ms initial RTT 50 µs; other variants carry
    no BBR table."""
    t = common.scenario_dict("b", cc="bbr", quick=True)["transport"]
    assert t["bbr"] == {"min_rtt_window": "500000us", "probe_rtt_duration": "10000us", "unit_time": "48828125ps",
                        "initial_rtt": "50us"}
    assert "bbr" not in common.scenario_dict("c", cc="cubic", quick=True)["transport"]


def test_dctcp_reacts_to_loss_as_linux_4_15() -> None:
    """etalon's hosts' DCTCP (Linux 4.15) cuts by α/2 on a loss and reduces in the
    kernel's CWR state (`dctcp_linux`, off with the probe `rfc_dctcp`); other variants
    carry neither key (the scenario would refuse `dctcp_linux` without DCTCP)."""
    t = common.scenario_dict("d", cc="dctcp", quick=True)["transport"]
    assert (t["dctcp_loss"], t["dctcp_linux"]) == ("alpha", True)
    rfc = common.scenario_dict("d", cc="dctcp", quick=True, settings=common.settings_for(common.RACKS) + ("rfc_dctcp",))
    assert "dctcp_linux" not in rfc["transport"]
    c = common.scenario_dict("c", cc="cubic", quick=True)["transport"]
    assert "dctcp_loss" not in c and "dctcp_linux" not in c


def test_fast_recovery_is_linux_prr_but_for_bbr() -> None:
    """etalon's Linux hosts reduce the window in fast recovery by PRR (`linux_prr`); BBR
    sets its own window, and the scenario would refuse `prr` with it."""
    for cc in ("new_reno", "cubic", "dctcp", "retcp"):
        assert common.scenario_dict("p", cc=cc, quick=True)["transport"]["prr"] is True, cc
        off = common.scenario_dict("p", cc=cc, quick=True, settings=tuple(s for s in common.SETTINGS if s != "linux_prr"))
        assert "prr" not in off["transport"], cc
    assert "prr" not in common.scenario_dict("b", cc="bbr", quick=True)["transport"]


def test_reno_is_linux_reno_for_reno_and_retcp_over_reno_only() -> None:
    """etalon's Reno and reTCP's Reno base run Linux's `tcp_cong.c` (`linux_reno` sets
    `reno_linux`); CUBIC, DCTCP, BBR and reTCP over CUBIC carry no such key (the scenario
    would refuse it there)."""
    for cc in ("new_reno", "retcp"):
        assert common.scenario_dict("r", cc=cc, quick=True)["transport"]["reno_linux"] is True, cc
        off = common.scenario_dict("r", cc=cc, quick=True, settings=tuple(s for s in common.SETTINGS if s != "linux_reno"))
        assert "reno_linux" not in off["transport"], cc
    for cc in ("cubic", "dctcp", "bbr"):
        assert "reno_linux" not in common.scenario_dict("r", cc=cc, quick=True)["transport"], cc
    assert "reno_linux" not in common.scenario_dict("r", cc="retcp", retcp_base="cubic", quick=True)["transport"]


@pytest.mark.real_native
@pytest.mark.parametrize(("cc", "key", "message"), [
    ("bbr", "prr", "prr = true needs a window-based congestion control"),
    ("cubic", "dctcp_linux", "dctcp_linux = true but the congestion control is not DCTCP"),
    ("cubic", "reno_linux", "reno_linux = true but the congestion control runs no Reno"),
])
def test_linux_recovery_keys_are_refused_where_they_cannot_apply(cc: str, key: str, message: str) -> None:
    """`prr` with BBR, `dctcp_linux` without DCTCP and `reno_linux` without Reno are
    refused, naming the key."""
    d = common.scenario_dict("bad", cc=cc, quick=True)
    d["transport"][key] = True
    with pytest.raises(Exception, match=message):
        pl2.run(Scenario.from_dict(d), progress=False)


def test_day_flight_averages_the_acks_of_the_pairs_days_by_hand() -> None:
    """A 10-unit week whose last 2 units are the pair's day, counted from time 10: only
    the probes at 18 and 29 are in a day after the start (8 is before it, 15 and 25 are
    in the rest of the week)."""
    from pl2.reproduce.retcp.variants import day_flight

    rows = [(8, "tcp_pacing_gbps", 100.0), (15, "tcp_pacing_gbps", 50.0), (18, "tcp_pacing_gbps", 2.0),
            (25, "tcp_pacing_gbps", 70.0), (29, "tcp_pacing_gbps", 4.0), (18, "tcp_inflight", 1000.0),
            (29, "tcp_cwnd", 3000.0)]
    df = pl.DataFrame(rows, schema=["time_ps", "name", "value"], orient="row")
    assert day_flight(df, week_ps=10, day_ps=2, from_ps=10) == {"tcp_pacing_gbps": 3.0, "tcp_inflight": 1000.0,
                                                                  "tcp_cwnd": 3000.0}


@pytest.mark.real_native
def test_retcp_family_quick(tmp_path: Path) -> None:
    out = tmp_path / "r"
    rep.reproduce(["retcp"], out=out, quick=True, log=lambda *_: None)
    report = (out / "retcp" / "report.md").read_text(encoding="utf-8")
    for name in rep.resolve(["retcp"]):
        assert f"## {rep.module(name).TITLE}" in report
        d = out / "retcp" / name
        assert list(d.glob("*.png")) and list(d.glob("*.parquet")), name
    for f in (out / "retcp").glob("*/*.parquet"):
        df = pl.read_parquet(f)
        assert (df["util"] > 0).all() and (df["util"] <= 1.0).all(), f
        assert (df["packet_gbps"] <= 10.0).all(), f
        assert (df["frames"] > 0).all(), f
    # Every variant at τ = 1200 µs (etalon's figure 7-2): Linux's CUBIC holds its window
    # for 8 jiffies after each reduction, so it uses the circuit less than RFC 9438's
    # CUBIC with the same α, and both less than Reno, as in etalon's log (78.6 against 95.5 %).
    v = pl.read_parquet(out / "retcp" / "retcp-dynamic" / "retcp-dynamic-variants-1200.parquet")
    u = dict(zip(v["label"], v["util"], strict=True))
    assert set(u) == {"new_reno", "cubic", "cubic, RFC 9438 with Linux's α", "dctcp", "dctcp, cut at once (RFC 8257)", "bbr"}
    assert u["cubic"] < u["cubic, RFC 9438 with Linux's α"] < u["new_reno"], u
