"""reTCP with dynamic buffers (slides 26-31; abstract: utilisation × 1.91, tail latency
× 1.20 over static 16-packet buffers): τ from 0 to 300 µs, the same τ for the VOQ resize
and the circuit-state signal, beside static 16-packet CUBIC; and the gap to the abstract's
ratios taken apart, one etalon setting (`common.SETTINGS`) at a time."""

from __future__ import annotations

from typing import Any

import polars as pl

from pl2.reproduce.common import Context, table
from pl2.reproduce.retcp import sweep
from pl2.reproduce.retcp.common import ETALON_RACKS, PROBES, RACKS, SETTINGS

NAME = "retcp-dynamic-retcp"
TITLE = "reTCP: reTCP with dynamic buffers, τ 0-300 µs (abstract: ×1.91 utilisation, ×1.20 tail latency)"

#: etalon's runs behind the slides and the abstract (its repository's log of the camera-ready
#: graphs, `experiments/buffers/graphs/nsdi2020/1581462196-nsdi2020.txt:114, 130`): reTCP with
#: dynamic buffers, utilisation % and p99 latency µs by τ; static 16-packet CUBIC (lines 20, 27, 36).
ETALON_UTIL = {"0": 79.7, "50": 87.3, "100": 91.1, "150": 92.7, "200": 93.9, "250": 92.8, "300": 93.3}
ETALON_P99 = {"0": 139, "50": 139, "100": 139, "150": 147, "200": 177, "250": 199, "300": 237}
ETALON_STATIC16 = {"util": 48.67, "p50_us": 123.0, "p99_us": 139.0}

ALL = "all (the family)"
GRO16 = "all, GRO within 16 µs (mlx4's fixed moderation)"
GRO128 = "all, GRO within 128 µs (mlx4's adaptive maximum)"
#: The rows of the gap table: which of etalon's settings each applies.
GAP_ROWS: list[tuple[str, tuple[str, ...]]] = (
    [("none (pl2's earlier family)", ())]
    + [(f"only {s}", (s,)) for s in SETTINGS]
    + [(ALL, SETTINGS)]
    + [(f"all but {s}", tuple(x for x in SETTINGS if x != s)) for s in SETTINGS]
    # Host factors beyond etalon's settings, each on top of all of them (`common.PROBES`).
    + [("all, TSO units of 2 segments", tuple(x for x in SETTINGS if x != "tso") + ("tso_2seg",)),
       ("all, no delayed ACKs", SETTINGS + ("no_delayed_ack",)),
       (GRO16, SETTINGS + ("gro_16us",)),
       (GRO128, SETTINGS + ("gro_128us",)),
       ("all, CUBIC per RFC 9438 with Linux's α (the family's CUBIC before)", SETTINGS + ("cubic_alpha_only",))])


def taus(quick: bool) -> list[int]:
    return [0, 150, 300] if quick else list(range(0, 301, 50))


def _top(settings: tuple[str, ...]) -> dict[str, Any]:
    return {"cc": "retcp", "resize": (150, 16, 50), "signal_lead_us": 150, "racks": ETALON_RACKS, "settings": settings}


def gap_table(ctx: Context) -> tuple[str, pl.DataFrame]:
    """Static 16-packet CUBIC and reTCP with dynamic buffers at τ = 150 µs, at etalon's 25
    racks, for each row of `GAP_ROWS` (quick: the first and the family's only)."""
    rows = GAP_ROWS if not ctx.quick else [GAP_ROWS[0], GAP_ROWS[len(SETTINGS) + 1]]
    pts = []
    for i, (_, st) in enumerate(rows):
        pts += [(f"g{i}-static", {"cc": "cubic", "capacity": 16, "racks": ETALON_RACKS, "settings": st}), (f"g{i}-top", _top(st))]
    df = sweep.run_points(ctx, f"{NAME}-gap", pts)
    out = []
    for i, (label, st) in enumerate(rows):
        m = {k: sweep.mean_of(df, f"g{i}-static", k) or 0.0 for k in ("util", "p50_us", "p99_us", "timeouts")}
        t = {k: sweep.mean_of(df, f"g{i}-top", k) or 0.0 for k in ("util", "p50_us", "p99_us", "timeouts")}
        out.append([label, ", ".join(st) or "–", f"{100 * m['util']:.1f}", f"{100 * t['util']:.1f}",
                    f"{t['util'] / m['util']:.2f}" if m["util"] else "–", f"{m['p50_us']:.0f}", f"{m['p99_us']:.0f}",
                    f"{t['p99_us']:.0f}", f"{t['p99_us'] / m['p99_us']:.2f}" if m["p99_us"] else "–",
                    f"{t['p99_us'] / m['p50_us']:.2f}" if m["p50_us"] else "–", f"{m['timeouts']:,.0f} / {t['timeouts']:,.0f}"])
    e = ETALON_STATIC16
    out.append(["etalon (its log)", "–", f"{e['util']:.1f}", f"{ETALON_UTIL['150']:.1f}", f"{ETALON_UTIL['150'] / e['util']:.2f}",
                f"{e['p50_us']:.0f}", f"{e['p99_us']:.0f}", f"{ETALON_P99['150']}", f"{ETALON_P99['150'] / e['p99_us']:.2f}",
                f"{ETALON_P99['150'] / e['p50_us']:.2f}", "–"])
    head = ["etalon settings", "applied", "static-16 CUBIC util. %", "reTCP τ 150 util. %", "util. ×", "static p50 µs",
            "static p99 µs", "reTCP p99 µs", "p99 / p99 ×", "reTCP p99 / static p50 × (etalon's ×1.20)",
            "timeouts static / reTCP"]
    return table(head, out), df


def _row(label: str) -> int:
    return next(i for i, (lab, _) in enumerate(GAP_ROWS) if lab == label)


def what_it_shows(ctx: Context, df: pl.DataFrame, tau_df: pl.DataFrame) -> str:
    """The gap table (`df`) read row against row: each setting's effect on top of all the
    others ('all' against 'all but …', or 'all, …' against 'all'), from the runs; and
    the 25-rack τ sweep (`tau_df`) against etalon's log."""
    def v(label: str, point: str, col: str = "util") -> float:
        x = sweep.mean_of(df, f"g{_row(label)}-{point}", col) or 0.0
        return 100 * x if col == "util" else x

    def moves(label: str, point: str, but: bool = True) -> float:
        """Points the setting (or the probe) adds on top of the others."""
        return v(ALL, point) - v(label, point) if but else v(label, point) - v(ALL, point)

    e = ETALON_STATIC16
    one = ("(1) The ×1.20 is not p99 over p99: etalon's `calcs.txt` divides reTCP's p99 (147 µs) by static CUBIC's median "
           f"(123 µs); its own p99 over p99 is 147 / 139 = × {ETALON_P99['150'] / e['p99_us']:.2f}. The claim is judged on "
           "etalon's definition, and both columns are printed.")
    if ctx.quick:
        return "What the table shows. " + one + " The rows that take the gap apart run in the full reproduction."
    ratio = lambda lab: v(lab, "top") / v(lab, "static")  # noqa: E731
    nc = "all but night_closed"
    lc, rfc = "all but linux_cubic", "all, CUBIC per RFC 9438 with Linux's α (the family's CUBIC before)"
    sign = lambda x: f"{x:+.1f}"  # noqa: E731
    tau = lambda t, col: sweep.mean_of(tau_df, t, col) or 0.0  # noqa: E731
    u0 = 100 * tau("0", "util")
    off_util = max(abs(100 * tau(t, "util") - ETALON_UTIL[t]) for t in ETALON_UTIL if t != "0")
    off_p99 = max(abs(tau(t, "p99_us") - ETALON_P99[t]) for t in ETALON_P99)
    return " ".join([
        "What the table shows.", one,
        f"(2) The static baseline's gap of an earlier version (55.3 % against etalon's {e['util']:.1f} %) was etalon's closed "
        f"night packet path: on top of every other setting `night_closed` moves static 16-packet CUBIC from "
        f"{v(nc, 'static'):.1f} to {v(ALL, 'static'):.1f} % and its median latency from {v(nc, 'static', 'p50_us'):.0f} to "
        f"{v(ALL, 'static', 'p50_us'):.0f} µs (etalon: {e['util']:.1f} %, {e['p50_us']:.0f} µs), and reTCP at τ = 150 µs from "
        f"{v(nc, 'top'):.1f} to {v(ALL, 'top'):.1f} %, so the utilisation ratio goes from × {ratio(nc):.2f} to "
        f"× {ratio(ALL):.2f} (etalon × {ETALON_UTIL['150'] / e['util']:.2f}).",
        f"(3) Linux's CUBIC (`linux_cubic`: `tcp_cubic.c` on the hosts' kernel clock) moves static CUBIC by "
        f"{sign(moves(lc, 'static'))} points against RFC 9438's ({v(lc, 'static'):.1f} %), of which Linux's α alone is "
        f"{sign(v(rfc, 'static') - v(lc, 'static'))} (RFC 9438 with Linux's α: {v(rfc, 'static'):.1f} %) and its integer "
        f"windows and kernel clock {sign(v(ALL, 'static') - v(rfc, 'static'))}; it leaves reTCP (Reno-based) at "
        f"{v(ALL, 'top'):.1f} %. The other Linux host details, on top of the rest: its RTO form moves static CUBIC by "
        f"{sign(moves('all but linux_rto', 'static'))} and reTCP by {sign(moves('all but linux_rto', 'top'))}; the PTO floor "
        f"by {sign(moves('all but linux_pto', 'static'))} and {sign(moves('all but linux_pto', 'top'))}; segmentation "
        f"offload by {sign(moves('all but tso', 'static'))} and {sign(moves('all but tso', 'top'))}; fast recovery by "
        f"PRR by {sign(moves('all but linux_prr', 'static'))} and {sign(moves('all but linux_prr', 'top'))}; Linux's Reno, "
        f"reTCP's base (`linux_reno`), moves reTCP by {sign(moves('all but linux_reno', 'top'))} (static CUBIC runs no Reno: "
        f"{sign(moves('all but linux_reno', 'static'))}). etalon's queues "
        f"dropping what a shrunk VOQ cannot hold (`shrink_drop`) move reTCP by {sign(moves('all but shrink_drop', 'top'))} "
        f"and its p99 from {v('all but shrink_drop', 'top', 'p99_us'):.0f} to {v(ALL, 'top', 'p99_us'):.0f} µs: kept, "
        "the frames above the small capacity wait out the packet uplink after the day. Beyond etalon's "
        f"settings: 2-segment TSO units {sign(v('all, TSO units of 2 segments', 'static') - v(ALL, 'static'))} and "
        f"{sign(v('all, TSO units of 2 segments', 'top') - v(ALL, 'top'))}; GRO at 16 µs "
        f"{sign(moves(GRO16, 'static', False))} and {sign(moves(GRO16, 'top', False))}, at 128 µs "
        f"{sign(moves(GRO128, 'static', False))} and {sign(moves(GRO128, 'top', False))}; no delayed ACKs "
        f"{sign(moves('all, no delayed ACKs', 'static', False))} and {sign(moves('all, no delayed ACKs', 'top', False))}.",
        "(4) The host link rate is the setting that moves utilisation most (row 'only host_40g' against 'none'); Linux's "
        "timers lower both runs and cut timeouts to about a fifth (a 10 ms RTO is two 4800 µs weeks); the fake strobe "
        "lowers static CUBIC's median latency (the ACKs' path changes).",
        f"(5) With every setting on, reTCP's utilisation is within {off_util:.0f} points of etalon's log from τ = 50 µs on "
        f"and {ETALON_UTIL['0'] - u0:.1f} points under it at τ = 0 ({u0:.1f} against {ETALON_UTIL['0']} %), and its p99 "
        f"latency within {off_p99:.0f} µs at every τ (the 25-rack table's slides column is that log; etalon's p99: "
        f"{', '.join(str(x) for x in ETALON_P99.values())} µs). The remaining differences at τ = 150 µs: × {ratio(ALL):.2f} "
        f"against × 1.91 (static CUBIC {sign(v(ALL, 'static') - e['util'])} points from etalon's, reTCP "
        f"{sign(v(ALL, 'top') - ETALON_UTIL['150'])}) and × {v(ALL, 'top', 'p99_us') / v(ALL, 'static', 'p50_us'):.2f} "
        f"against × 1.20 (reTCP's p99 {v(ALL, 'top', 'p99_us'):.0f} µs against {ETALON_P99['150']} µs, static CUBIC's "
        f"median {v(ALL, 'static', 'p50_us'):.0f} against {e['p50_us']:.0f} µs)."])


def run(ctx: Context) -> str:
    out = []
    tau_df = pl.DataFrame()
    for racks in (RACKS, ETALON_RACKS):
        pts = [("static-16 cubic", {"cc": "cubic", "capacity": 16, "racks": racks})]
        pts += [(str(t), {"cc": "retcp", "resize": (t, 16, 50), "signal_lead_us": t, "racks": racks}) for t in taus(ctx.quick)]
        name = f"{NAME}-{racks}racks"
        df = sweep.run_points(ctx, name, pts)
        if racks == ETALON_RACKS:
            tau_df = df
        labels = [p[0] for p in pts]
        slides = {} if racks == RACKS else ETALON_UTIL
        sweep.plot(ctx, df, labels, slides, name, "τ (µs)", f"reTCP + dynamic buffers 16 → 50, {racks} racks")
        base_u, base_p50, base_p99 = (sweep.mean_of(df, labels[0], k) for k in ("util", "p50_us", "p99_us"))
        u150, p150 = sweep.mean_of(df, "150", "util"), sweep.mean_of(df, "150", "p99_us")
        ok = bool(base_u and base_p50 and base_p99 and u150 and p150)
        ratio = (f"at τ = 150 µs: utilisation × {u150 / base_u:.2f}; p99 latency × {p150 / base_p99:.2f} over static "
                 f"16-packet CUBIC's p99 and × {p150 / base_p50:.2f} over its median (abstract: × 1.91, × 1.20; etalon's "
                 f"own p99 over p99 is × {ETALON_P99['150'] / ETALON_STATIC16['p99_us']:.2f})") if ok else "ratios: –"
        if racks == ETALON_RACKS and ok:
            ctx.claim("reTCP with dynamic buffers (τ = 150 µs) raises utilisation × 1.91 over static 16-packet CUBIC "
                      "(etalon's 25 racks; ±15 %)", "× 1.91", f"× {u150 / base_u:.2f}", abs(u150 / base_u - 1.91) <= 0.15 * 1.91)
            ctx.claim("… at a tail latency cost of × 1.20: reTCP's p99 over static CUBIC's median, as etalon computed it "
                      "(`graphs/nsdi2020/calcs.txt`: 123 → 147 µs; ±15 %)", "× 1.20", f"× {p150 / base_p50:.2f}",
                      abs(p150 / base_p50 - 1.20) <= 0.15 * 1.20)
            ctx.claim("reTCP with dynamic buffers at τ = 150 µs uses the circuit 92.7 % (etalon's log; within 10 points)",
                      "92.7 %", f"{100 * u150:.1f} %", abs(100 * u150 - 92.7) <= 10)
        tab = sweep.result_table(df, labels, {k: f"{v:.0f}" for k, v in slides.items()}, "τ (µs)")
        out += [f"**{racks} racks**: {ratio}.", "", tab, ""]
    gap, gap_df = gap_table(ctx)
    out += ["**The gap to the abstract, taken apart** (etalon's 25 racks; each row runs both points with the etalon settings "
            "named; the family runs them all): `host_40g`, host links of 40 Gbps instead of 10 (etalon `etc/python_config.py:17`); "
            "`linux_timers`, a 10 ms minimum RTO and a 2 ms delayed-ACK timer (Linux's 200 ms and 40 ms on the hosts' "
            "undilated clocks, TDF 20) instead of 1 ms and 40 µs; `signal_recompute`, etalon's signal timing instead of "
            "the exact one; `fake_strobe`, etalon's 3 real racks with the reverse pair's circuit in the other 23 days instead "
            "of 25 racks round robin; `tso`, segmentation offload as etalon's hosts had it (64 KiB TSO/GSO units timed by "
            "the 40 Gbps netem shaper, then back to back at the NIC's 800 Gbps of emulated time) instead of one frame per "
            "segment at the host link's rate; `night_closed`, the pair's packet path off from the night before its day "
            "until the day ends, as etalon's RunSchedule does (click-etalon `elements/standard/run_schedule.cc:398-415, "
            "522-529`), instead of open at night; `linux_cubic`, CUBIC as Linux 4.15's `tcp_cubic.c` runs it on the hosts' "
            "undilated kernel clock (HZ 250: integer windows, its Reno-friendly α of 3(1 − β)/(1 + β) at every window, its "
            "growth step recomputed at most every 8 jiffies of 200 µs emulated while the window is unchanged), instead of RFC "
            "9438 (α 1 above `cwnd_prior`, no clock); `linux_rto`, RTO = SRTT + max(4·RTTVAR, "
            "minimum) as Linux computes it, instead of RFC 6298's max(SRTT + 4·RTTVAR, minimum); `linux_pto`, Linux 4.15's "
            "10 ms floor under the tail loss probe's timeout (500 µs emulated), instead of 2·SRTT alone; `shrink_drop`, "
            "a resized VOQ dropping the frames beyond its small capacity when it shrinks at its day's end, as etalon's Click "
            "queues do (`SimpleQueue::live_reconfigure`), instead of keeping them until they drain (static-16 CUBIC has no "
            "resize: only the reTCP column can move); `linux_prr`, fast recovery by Proportional Rate Reduction (RFC 6937) "
            "as Linux has run it since 3.2 (`tcp_cwnd_reduction`), instead of the window cut to ssthresh at once (RFC 6675); "
            "`linux_reno`, Reno as Linux 4.15's `tcp_cong.c` runs it for Reno and for reTCP's base (whole-segment windows, "
            "ssthresh half of cwnd after a loss, `tcp_reno_ssthresh`, and reTCP's jumps on whole segments, as etalon's "
            "`reTCP/retcp.c` calls them), instead of RFC 5681 in bytes with ssthresh half of the bytes in flight. "
            "The five rows before "
            "etalon's change one thing each on top of all of them: four host factors that are not etalon's settings, TSO units of 2 segments (Linux's "
            "floor, where `tso` takes its 64 KiB ceiling; Linux sizes units between them by the flow's pacing rate), an ACK "
            "for every segment, and receive offload (GRO: in-order segments arriving within the receiving NIC's interrupt "
            "moderation time acknowledged as one unit of up to 64 KB) at the mlx4 driver's fixed 16 µs and adaptive maximum "
            "128 µs (0.8 and 6.4 µs emulated); etalon's NICs ran the adaptive moderation at a packet rate where it takes 0 µs, "
            "so GRO had nothing to merge and the family leaves it off (`docs/model.md`); and the family's CUBIC before "
            "this version, RFC 9438 with Linux's α (no integer windows, no kernel clock). The last row is etalon's own "
            "numbers.", "", gap, "",
            what_it_shows(ctx, gap_df, tau_df), "",
            "Measured and ruled out: the measurement interval (etalon measures from the pair's first packet to its last, "
            "`parse_logs.py:519-546`; including our 50 warm-up weeks moved static CUBIC from 46.2 to 46.3 % and left reTCP at 74.5 % with "
            "pl2's earlier settings, `--set network.circuit.stats_from=0us`), and the RACK-TLP loss recovery the previous version lacked (in: etalon's hosts "
            "had it), the hosts' qdisc limits (a host's backlog is at most its flow's 22 segments in flight, far below "
            "netem's and pfifo_fast's 1000 packets; `retcp-static`). Not modelled (`docs/model.md`): TSO unit autosizing "
            "and deferral (bracketed by the two TSO rows), TCP small queues (at least ~130 KB per socket with 64 KB units, "
            "where a host's backlog stays ≤ 197,120 B: it could hold back at most ~67 KB for the ~13 µs its shaper takes), "
            "HyStart (acts only in slow start above 16 segments), the hosts' CPU shares under dilation and the jiffy "
            "rounding of Linux's timers (4 ms real, 200 µs emulated, ≤ 2 % of the 10 ms RTO).", ""]
    return "\n".join(out)
