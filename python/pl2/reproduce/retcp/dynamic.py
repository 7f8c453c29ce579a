"""reTCP slides 21-23: dynamic buffer resizing 16 → 50 packets, τ from 0 to 3000 µs,
CUBIC (the slides: 49 % at τ = 0 rising to 98 %; 91 % at 1800 µs)."""

from __future__ import annotations

from pl2.reproduce.common import Context
from pl2.reproduce.retcp import sweep
from pl2.reproduce.retcp.common import DAY_US, ETALON_RACKS, RACKS, week_us

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
        if racks == ETALON_RACKS:
            sweep.util_claim(ctx, df, labels, SLIDES, "dynamic buffers 16 → 50: utilisation 49 % at τ = 0 rising to 98 % at "
                             "3000 µs (etalon's 25 racks; each within 10 points)", "49 → 98 %", prefix="τ ")
        out += [f"**{racks} racks**:", "", sweep.result_table(df, labels, {k: f"{v:.0f}" for k, v in SLIDES.items()}, "τ (µs)"), ""]
        gap = week_us(racks) - DAY_US
        flat = [lab for lab in labels if int(lab) >= gap]
        if flat:
            same = {round(sweep.mean_of(df, lab, "util") or 0, 6) for lab in flat}
            out += [f"With {racks} racks a pair's circuits are {gap} µs apart (week {week_us(racks)} µs − day {DAY_US} µs): "
                    f"for τ ≥ {gap} µs the VOQ never shrinks, so τ = {', '.join(flat)} µs are one configuration, a static "
                    f"50-packet VOQ ({'identical' if len(same) == 1 else 'not identical: ' + str(sorted(same))} utilisation "
                    "measured). The slides' curve still rises up to τ = 3000 µs, which needs circuits more than 3000 µs apart: "
                    "etalon's 25-rack strobe (4800 µs week), not 8 racks.", ""]
    out += ["Differences from the slides, measured (25 racks): with pl2's earlier setting (10 Gbps host links, 1 ms minimum "
            "RTO, 25 racks round robin) utilisation rose from 46 % to 92 % at τ = 1500 µs and then fell to 88 % at 3000 µs, "
            "below the slides' 96-98 % at τ ≥ 2100 µs. With etalon's settings (the table) it starts at the slides' 49 % "
            "(50 %), reaches 98-99 % from τ = 2100 µs as the slides' 96-98 % does, and the p99 latency follows etalon's log "
            "within 21 µs at every τ (etalon: 139, 149, 180, 208, 239, 265, 286, 318, 358, 379, 381 µs, "
            "`graphs/nsdi2020/1581462196-nsdi2020.txt:65`). Between τ = 300 and 1800 µs our utilisation rises sooner than "
            "the slides' (5 to 10 points above: 65, 74, 82, 89, 93, 97 % against 60, 65, 72, 79, 86, 91 %): not explained; "
            "the host factors of `retcp-dynamic-retcp`'s gap table were measured at τ = 0 (static 16-packet CUBIC) only.", ""]
    return "\n".join(out)
