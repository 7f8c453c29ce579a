"""Polo slides, "Larger scale simulation": an oversubscribed leaf–spine, 25 hosts per
leaf, Poisson arrivals at 0.5 load of web search (W5, `sizes = "w5"`) and data mining
(VL2: `datamining_vl2.txt` here is `../shared/reference/workloads/datamining_vl2_pkts.txt`
with its packet counts × 1460 payload bytes, as pFabric, PIAS, pHost and Polo's
simulators convert it); p99 slowdown by flow size, Polo against Homa, NDP and pHost."""

from __future__ import annotations

import math
from importlib import resources

import polars as pl

from pl2.reproduce.common import Context, Job, table
from pl2.reproduce.polo.common import COLORS, DESIGNS, build, counters, pct

NAME = "polo-leafspine"
TITLE = "Polo: leaf–spine at 0.5 load, web search and data mining (p99 slowdown by size)"
LEAVES, SPINES, PER_LEAF = 4, 12, 25
BINS = [(0, 100_000, "≤ 100 KB"), (100_000, 1_000_000, "100 KB–1 MB"), (1_000_000, 10_000_000, "1–10 MB"), (10_000_000, 10**12, "> 10 MB")]


def vl2_path() -> str:
    return str(resources.files("pl2.reproduce.polo").joinpath("datamining_vl2.txt"))


def windows(quick: bool) -> tuple[float, float, float]:
    """(warm-up, end of arrivals, end of run) in ms."""
    return (2.0, 42.0, 20_042.0) if quick else (10.0, 1010.0, 21_010.0)


def topo() -> dict:
    return {"kind": "leaf_spine", "leaves": LEAVES, "spines": SPINES, "hosts_per_leaf": PER_LEAF,
            "uplink": {"rate": "1Gbps", "delay": "6250ns"}}


def run(ctx: Context) -> str:
    warm, until, dur = windows(ctx.quick)
    workloads = {"web search": {"sizes": "w5"}, "data mining": {"sizes": vl2_path(), "sizes_format": "homa"}}
    jobs = []
    for wname, w in workloads.items():
        for d in DESIGNS:
            wl = {"kind": "poisson", "load": 0.5, **w, "stop": f"{until:g}ms"}
            sc = build(f"{NAME}-{wname.replace(' ', '')}-{d}", d, topo(), [wl], duration_ms=dur, link_delay="6250ns",
                       warmup_ms=warm, until_ms=until, stop_when_delivered=True, window="1ms")
            jobs += [Job(sc, {"figure": NAME, "workload": wname, "design": d}, seed, NAME) for seed in ctx.seeds]
    rows, bins = [], []
    for job, res in zip(jobs, ctx.run_many(jobs), strict=True):
        w, d = job.params["workload"], job.params["design"]
        m = res.messages.filter(pl.col("in_window"))
        sl = [float(x) if x is not None else math.inf for x in m["slowdown"].to_list()]
        lat = [x / 1e6 if x is not None else math.inf for x in m["latency_ps"].to_list()]
        rows.append({"workload": w, "design": d, "seed": job.seed, "flows": m.height,
                     "unfinished": int(m["finish_ps"].null_count()),
                     "p99_slowdown": pct(sl, 0.99), "p50_slowdown": pct(sl, 0.5), "mean_slowdown_finished":
                     float(m["slowdown"].drop_nulls().mean() or 0.0), "p99_fct_us": pct(lat, 0.99),
                     **counters(res.summary, d)})
        for lo, hi, label in BINS:
            b = m.filter((pl.col("size_bytes") > lo) & (pl.col("size_bytes") <= hi))
            s = [float(x) if x is not None else math.inf for x in b["slowdown"].to_list()]
            bins.append({"workload": w, "design": d, "seed": job.seed, "bin": label, "flows": b.height,
                         "unfinished": int(b["finish_ps"].null_count()), "p99_slowdown": pct(s, 0.99), "p50_slowdown": pct(s, 0.5)})
    df, bf = pl.DataFrame(rows), pl.DataFrame(bins)
    ctx.write_parquet(df, "leafspine")
    ctx.write_parquet(bf, "leafspine_bins")

    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(1, 2, figsize=(12, 4))
    labels = [b[2] for b in BINS]
    for a, w in zip(ax, workloads, strict=True):
        for i, d in enumerate(DESIGNS):
            ys = []
            for lab in labels:
                g = bf.filter((pl.col("workload") == w) & (pl.col("design") == d) & (pl.col("bin") == lab))
                v = [x for x in g["p99_slowdown"].to_list() if x is not None]
                ys.append(sum(v) / len(v) if v and all(math.isfinite(x) for x in v) else float("nan"))
            xs = [j + (i - 1.5) * 0.2 for j in range(len(labels))]
            a.bar(xs, ys, width=0.2, color=COLORS[d], label=d)
        a.set_xticks(range(len(labels)), labels)
        a.set_yscale("log")
        a.set_ylabel("p99 slowdown (missing bar: unfinished flows)")
        a.set_title(w)
        a.legend(fontsize=7)
    fig.suptitle(f"Leaf–spine {LEAVES}×{PER_LEAF} hosts, {SPINES} spines, 0.5 load ({len(ctx.seeds)} seed(s))", fontsize=10)
    fig.tight_layout()
    ctx.save(fig, "leafspine")

    def mean(xs: list) -> float:
        v = [x for x in xs if x is not None]
        return sum(v) / len(v) if v else math.nan

    trows, brows = [], []
    agg: dict = {}
    for w in workloads:
        for d in DESIGNS:
            g = df.filter((pl.col("workload") == w) & (pl.col("design") == d))
            agg[(w, d)] = mean(g["p99_slowdown"].to_list())
            trows.append([w, d, int(g["flows"].sum()), int(g["unfinished"].sum()), _f(mean(g["p50_slowdown"].to_list())),
                          _f(agg[(w, d)]), _f(mean(g["p99_fct_us"].to_list()), 0), int(g["drops"].sum()), int(g["trims"].sum()),
                          int(g["timeouts"].sum()), int(g["retransmissions"].sum())])
            for lab in labels:
                b = bf.filter((pl.col("workload") == w) & (pl.col("design") == d) & (pl.col("bin") == lab))
                brows.append([w, d, lab, int(b["flows"].sum()), int(b["unfinished"].sum()), _f(mean(b["p99_slowdown"].to_list()))])
    claim = []
    for w in workloads:
        p = agg[(w, "Polo")]
        claim.append(f"{w}: Homa / Polo = {_ratio(agg[(w, 'Homa')], p)}, pHost / Polo = {_ratio(agg[(w, 'pHost')], p)}")
    md = [
        f"Setting: leaf–spine of {LEAVES} leaves × {PER_LEAF} hosts and {SPINES} spines, every link 1 Gbps "
        f"(oversubscription {PER_LEAF}:{SPINES} = {PER_LEAF / SPINES:.2f}:1; at 0.5 load and {LEAVES - 1}/{LEAVES} of the "
        f"traffic leaving its rack the mean uplink load is {PER_LEAF * 0.5 * (LEAVES - 1) / LEAVES / SPINES:.2f}); host "
        "links and uplinks 6.25 µs (25 µs one way between racks). Poisson arrivals at every host at 0.5 of its link (wire "
        f"bytes), destinations uniform over the other hosts; flows arriving in [{warm:g}, {until:g}) ms are measured (arrivals stop at {until:g} ms), "
        f"the run goes on until every flow is delivered (at most {dur / 1000:g} s); an unfinished flow counts as infinitely slow. Slowdown "
        "= FCT / the flow's ideal FCT alone in the network. The slides compare p99 tail latency; we give p99 slowdown "
        "(FCT varies over five orders of magnitude with size) overall and by size.",
        "",
        table(["workload", "design", "flows", "unfinished", "p50 slowdown", "p99 slowdown", "p99 FCT µs", "drops", "trims",
               "timeouts", "retransmissions"], trows),
        "",
        table(["workload", "design", "size", "flows", "unfinished", "p99 slowdown"], brows),
        "",
        "| slide claim | ours |",
        "|---|---|",
        "| \"Polo improves the tail latency by 2.2× and 3.1×\" over Homa and pHost | p99 slowdown ratio " + "; ".join(claim) + " |",
    ]
    return "\n".join(md)


def _f(x: float, digits: int = 2) -> str:
    return "∞ (unfinished)" if math.isinf(x) else "–" if math.isnan(x) else f"{x:.{digits}f}"


def _ratio(a: float, b: float) -> str:
    if math.isinf(a) or math.isinf(b) or math.isnan(a) or math.isnan(b) or b == 0:
        return "– (a p99 falls on an unfinished flow)"
    return f"{a / b:.2f}×"
