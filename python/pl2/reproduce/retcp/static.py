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
        out += [f"**{racks} racks** ({'the issue' if racks == RACKS else 'etalon as run for the slides'}):", "",
                sweep.result_table(df, labels, {k: f"{v:.0f}" for k, v in SLIDES.items()}, "VOQ capacity (packets)"), ""]
    return "\n".join(out)
