"""reTCP slides 21-23: dynamic buffer resizing 16 → 50 packets, τ from 0 to 3000 µs,
CUBIC (the slides: 49 % at τ = 0 rising to 98 %; 91 % at 1800 µs)."""

from __future__ import annotations

from pl2.reproduce.common import Context
from pl2.reproduce.retcp import sweep
from pl2.reproduce.retcp.common import ETALON_RACKS, RACKS

NAME = "retcp-dynamic"
TITLE = "reTCP: dynamic buffers 16 → 50 packets, CUBIC, τ 0-3000 µs (slides 21-23)"
#: Slide 22's bars, τ ascending.
SLIDES = dict(zip([str(t) for t in range(0, 3001, 300)], [49.0, 60, 65, 72, 79, 86, 91, 96, 97, 97, 98], strict=True))


def taus(quick: bool) -> list[int]:
    return [0, 1500, 3000] if quick else list(range(0, 3001, 300))


def run(ctx: Context) -> str:
    out = []
    for racks in (RACKS, ETALON_RACKS):
        pts = [(str(t), {"cc": "cubic", "resize": (t, 16, 50), "racks": racks}) for t in taus(ctx.quick)]
        name = f"{NAME}-{racks}racks"
        df = sweep.run_points(ctx, name, pts)
        labels = [p[0] for p in pts]
        sweep.plot(ctx, df, labels, SLIDES, name, "τ (µs)", f"Dynamic buffers 16 → 50, CUBIC, {racks} racks")
        out += [f"**{racks} racks**:", "", sweep.result_table(df, labels, {k: f"{v:.0f}" for k, v in SLIDES.items()}, "τ (µs)"), ""]
    return "\n".join(out)
