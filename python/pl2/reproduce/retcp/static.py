"""reTCP slides 13-14: static VOQ capacities 4 … 128 packets under CUBIC; average circuit
utilisation and median / p99 packet latency."""

from __future__ import annotations

from pl2.reproduce.common import Context
from pl2.reproduce.retcp import sweep
from pl2.reproduce.retcp.common import ETALON_RACKS, RACKS

NAME = "retcp-static"
TITLE = "reTCP: static VOQ capacities, CUBIC (slides 13-14)"
CAPS = [4, 8, 16, 32, 64, 128]
#: Slide 13's bars.
SLIDES = {"4": 21.0, "8": 31.0, "16": 49.0, "32": 77.0, "64": 100.0, "128": 100.0}


def run(ctx: Context) -> str:
    out = []
    for racks in (RACKS, ETALON_RACKS):
        pts = [(f"{c}", {"cc": "cubic", "capacity": c, "racks": racks}) for c in CAPS]
        name = f"{NAME}-{racks}racks"
        df = sweep.run_points(ctx, name, pts)
        labels = [p[0] for p in pts]
        sweep.plot(ctx, df, labels, SLIDES, name, "static VOQ capacity (packets)", f"Static buffers, CUBIC, {racks} racks")
        if racks == ETALON_RACKS:
            sweep.util_claim(ctx, df, labels, SLIDES, "static VOQs: circuit utilisation 21, 31, 49, 77, 100, 100 % for 4–128 "
                             "packets (CUBIC, etalon's 25 racks; each within 10 points)", "21–100 %")
        out += [f"**{racks} racks** ({'the issue' if racks == RACKS else 'etalon as run for the slides'}):", "",
                sweep.result_table(df, labels, {k: f"{v:.0f}" for k, v in SLIDES.items()}, "VOQ capacity (packets)"), ""]
    out += ["In every run with 8 packets or more the packet network carries the same 8.6 Gbps (8 racks) or 9.5 Gbps (25 racks: a pair's circuit is "
            "up 1/24 of the time instead of 1/7, so its VOQ spends longer on the packet uplink alone) of payload: the "
            "10 Gbps uplink less frame and ACK overhead; utilisation differs only by what the circuit carries in its 180 µs. "
            "Latency is set by the VOQ's capacity: a full VOQ of C frames of 9000 B drains at 10 Gbps in C × 7.2 µs, which "
            "the p99 column follows (16 frames: 115 µs + 20 µs of path), as etalon's log does (16 frames: p99 139 µs). With "
            "4-packet VOQs the packet network too is left idle at times (its column).", "",
            "Differences from the slides, measured (etalon's 25 racks): with pl2's earlier setting (10 Gbps host links, "
            "1 ms minimum RTO, 25 racks round robin) the same sweep gave 16, 32, 46, 69, 98, 99 %: under the slides' at 4, "
            "16 and 32 packets. etalon's hosts had 40 Gbps links (`retcp/common.py`); with them and Linux's timers every "
            "capacity of 32 packets or less uses the circuit more than etalon's log (the table), so the slides' lower values "
            "at small capacities are not explained by those settings. Segmentation offload, the suspect named before, is now "
            "modelled as etalon's hosts had it (64 KiB TSO/GSO units timed by the 40 Gbps netem shaper, then back to back at "
            "the NIC's 800 Gbps of emulated time; `docs/model.md`) and measured: it moves this sweep by at most one point "
            "(without it, same settings: 27, 35, 55, 88, 99, 99 %). The gap table of `retcp-dynamic-retcp` measures the other "
            "host candidates at 16 packets: 2-segment TSO units (Linux's floor) 56.4 %, no delayed ACKs 59.3 %, no fake "
            "strobe 54.7 %, against the family's 55.3 %: none lowers static CUBIC towards etalon's 48.7 %. The hosts' "
            "qdiscs (netem's default limit and pfifo_fast's txqueuelen, 1000 packets each) cannot bind either: a host's "
            "backlog is bounded by its one flow's bytes in flight, at most 197,120 B (22 segments) in a 110-week run of the "
            "16-packet point with TCP probes on. Unexplained, with the measurement interval, the signal and the schedule's form "
            "ruled out too.", ""]
    return "\n".join(out)
