"""Polo slides, "Edge link is the bottleneck": N synchronised senders to one receiver on
one switch, 1 Gbps, RTT 50 µs, 86 KB; Homa with its 1 ms and 5 ms timeouts."""

from __future__ import annotations

from pl2.reproduce.common import Context, table
from pl2.reproduce.polo import incast
from pl2.reproduce.polo.common import DESIGNS

NAME = "polo-edge"
TITLE = "Polo: the edge link is the bottleneck (synchronised senders, 1 Gbps, RTT 50 µs, 86 KB)"


def senders(quick: bool) -> list[int]:
    return [8, 32] if quick else [4, 8, 16, 32, 64, 128]


def rounds(quick: bool) -> int:
    return 2 if quick else 10


def run(ctx: Context) -> str:
    designs = [*DESIGNS, "Homa 5 ms", "NDP rearm"]
    ns = senders(ctx.quick)
    js = incast.jobs(ctx, NAME, "edge", designs, ns, rounds(ctx.quick))
    df = incast.rows(ctx, js)
    ctx.write_parquet(df, "edge")
    agg = incast.aggregate(df)
    incast.plot(ctx, agg, designs, ns, "edge", "Edge bottleneck: N synchronised senders → 1 receiver, one switch", 1000.0)
    g = {(d, n): agg[(d, n)]["good"][0] for d in ("Polo", "NDP", "Homa") for n in ns}
    between = [n for n in ns if min(g[("NDP", n)], g[("Homa", n)]) <= g[("Polo", n)] <= max(g[("NDP", n)], g[("Homa", n)])]
    ctx.claim("Polo's goodput lies between NDP's and Homa's at every N", "between", f"between at N = {', '.join(map(str, between)) or 'none'} of {', '.join(map(str, ns))}",
              len(between) == len(ns))
    return section(agg, designs, ns, rounds(ctx.quick))


def section(agg: dict, designs: list[str], ns: list[int], r: int) -> str:
    def g(d: str, n: int) -> float:
        return agg[(d, n)]["good"][0]

    between = [n for n in ns if min(g("NDP", n), g("Homa", n)) <= g("Polo", n) <= max(g("NDP", n), g("Homa", n))]
    above = [n for n in ns if g("Polo", n) > max(g("NDP", n), g("Homa", n))]
    below = [n for n in ns if g("Polo", n) < min(g("NDP", n), g("Homa", n))]
    md = [
        f"Setting: N senders and the receiver on one switch (links 12.5 µs), {r} synchronised rounds of one 100 KB flow "
        "per sender (`ps_shuffle`, global barrier); the receiver's 1 Gbps downlink is the bottleneck. Homa runs with the "
        "slides' 1 ms and with a 5 ms RESEND timeout (`resend_timeout`); `NDP rearm` is a diagnostic (NDP with "
        "`rto_rearm = true`), not a design of the slides. Columns as in the core experiment. Seeds change only random "
        "choices (NDP's path and trimming draws, Polo's recovery 2); Homa and pHost on one path make none, so their seeds "
        "repeat.",
        "",
        table(incast.HEAD, incast.table_rows(agg, designs, ns)),
        "",
        "| slide claim | ours |",
        "|---|---|",
        "| \"With the number of senders increasing, Polo's goodput is between NDP and Homa\" | "
        f"between them at N = {', '.join(map(str, between)) or 'none'}; above both at N = {', '.join(map(str, above)) or 'none'}; "
        f"below both at N = {', '.join(map(str, below)) or 'none'}. Goodput (Mbps) Polo / NDP / Homa: "
        + "; ".join(f"{n}: {g('Polo', n):.0f} / {g('NDP', n):.0f} / {g('Homa', n):.0f}" for n in ns) + " |",
        "| \"Its 99th percentile tail latency has the same trend\" | p99 Polo / NDP / Homa: "
        + "; ".join(f"{n}: {incast.p99s(agg[('Polo', n)])} / {incast.p99s(agg[('NDP', n)])} / {incast.p99s(agg[('Homa', n)])}" for n in ns) + " |",
        "| (motivation) Homa's goodput depends on its timeout, 1 ms vs 5 ms | Homa 1 ms / 5 ms goodput: "
        + "; ".join(f"{n}: {g('Homa', n):.0f} / {g('Homa 5 ms', n):.0f}" for n in ns) + " Mbps |",
        "",
        *incast.why_text(agg, designs, ns),
    ]
    return "\n".join(md)
