"""Polo slides, "Role of recovery mechanism": Polo, Polo^a (no optimisation for wasted
driving packets: our design, not the slides'), Polo^b (no recovery 2), Polo^c (no
recovery 1), on the edge and core incasts of `polo-edge` and `polo-core`."""

from __future__ import annotations

from pl2.reproduce.common import Context, table
from pl2.reproduce.polo import incast
from pl2.reproduce.polo.common import ABLATIONS

NAME = "polo-ablation"
TITLE = "Polo: the role of its recovery mechanisms (Polo, Polo^a, Polo^b, Polo^c)"


def senders(quick: bool) -> list[int]:
    return [32] if quick else [8, 32, 128]


def run(ctx: Context) -> str:
    designs = list(ABLATIONS)
    ns = senders(ctx.quick)
    r = 2 if ctx.quick else 10
    js = incast.jobs(ctx, NAME, "edge", designs, ns, r) + incast.jobs(ctx, NAME, "core", designs, ns, r)
    df = incast.rows(ctx, js)
    ctx.write_parquet(df, "ablation")
    md = [
        "Polo^a turns off `redirect_wasted_driving` (our design of the slides' unnamed \"optimization mechanism for the "
        "wasted driven packets\": a driving packet for a flow with nothing left to ask for goes to another active flow; "
        "**our design, not the slides'**), Polo^b `recovery_idle` (recovery 2), Polo^c `recovery_gap` (recovery 1). The "
        f"edge and core incasts of the sections above, {r} rounds. `driving wasted` counts driving packets sent to a flow "
        "that could not use them (`polo.driving_wasted`).",
        "",
    ]
    for where in ("edge", "core"):
        sub = df.filter(df["where"] == where)
        agg = incast.aggregate(sub)
        avail = incast.available_bps(where) / 1e6
        incast.plot(ctx, agg, designs, ns, f"ablation-{where}", f"Ablations, {where} bottleneck", avail)
        md += [f"**{where.capitalize()} bottleneck.**", "", table(incast.HEAD, incast.table_rows(agg, designs, ns)), ""]
    md += [
        "| slide claim | ours |",
        "|---|---|",
        "| (the slides show each mechanism's role in a figure; no number is given in the text) | see the tables: the "
        "goodput and p99 of each ablation against Polo at the same N |",
    ]
    return "\n".join(md)
