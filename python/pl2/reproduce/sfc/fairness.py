"""SFC slides, "Impact on Fairness": four long flows into one receiver at 100 Gbps with
staggered starts and stops, all on the receiver's ToR (intra-switch) or two of them on
another ToR (inter-switch); per-flow throughput over time and Jain's index per window,
PFC against SFC (and SFC with the proxy, and DCQCN alone)."""

from __future__ import annotations

from typing import Any

import polars as pl

from pl2.reproduce.common import Context, Job, table
from pl2.reproduce.sfc.common import COLORS, DESIGNS, fmt, frame, jain, scenario

NAME = "sfc-fairness"
TITLE = "SFC: fairness of four staggered long flows into one 100 Gbps receiver (intra- and inter-switch)"

RECEIVER = 0
SENDERS = {"intra": [1, 2, 3, 4], "inter": [1, 2, 16, 17]}
#: Flow k (k = 0..3) starts at k·T; its size is what it would send under exact fair
#: sharing of the 100 Gbps link if flow 3-j stopped at (4+j)·T, in units of T × line
#: rate: flow 3 alone in [3T, 4T] at ¼; flow 2 ⅓ + ¼ + ⅓; flow 1 ½ + ⅓ + ¼ + ⅓ + ½;
#: flow 0 1 + ½ + ⅓ + ¼ + ⅓ + ½ + 1.
SHARES = [1 + 1 / 2 + 1 / 3 + 1 / 4 + 1 / 3 + 1 / 2 + 1, 1 / 2 + 1 / 3 + 1 / 4 + 1 / 3 + 1 / 2, 1 / 3 + 1 / 4 + 1 / 3, 1 / 4]
BIN_US = 100


def phase_us(quick: bool) -> int:
    return 500 if quick else 2000


def jobs(ctx: Context) -> list[Job]:
    t = phase_us(ctx.quick)
    out = []
    for where, senders in SENDERS.items():
        wls = [{"kind": "incast", "senders": [s], "receiver": RECEIVER, "size": f"{round(SHARES[k] * t * 1e-6 * 100e9 / 8)}B",
                "start": f"{k * t}us"} for k, s in enumerate(senders)]
        run = {"duration": f"{20 * t}us"}
        for design in DESIGNS:
            sc = scenario(f"{NAME}-{where}-{design.replace(' ', '-')}", design, wls, run=run, fairness=True)
            out += [Job(sc, {"figure": NAME, "where": where, "design": design}, seed, NAME) for seed in ctx.seeds]
    return out


def series(res: Any, senders: list[int]) -> tuple[pl.DataFrame, dict[int, tuple[int, int | None]]]:
    """Per flow and 100 µs bin: the sender NIC's transmitted bytes (its only traffic is
    the flow's data) as Gbps; and each flow's (start, finish) in ps."""
    names = [f"h{s}" for s in senders]
    p = res.ports.filter(pl.col("node").is_in(names))
    bin_ps = BIN_US * 1_000_000
    p = p.with_columns((pl.col("window_start_ps") // bin_ps).alias("bin")).group_by(["node", "bin"]).agg(pl.col("tx_bytes").sum())
    p = p.with_columns((pl.col("tx_bytes") * 8 / (BIN_US * 1e-6) / 1e9).alias("gbps")).sort(["bin", "node"])
    m = res.messages
    span = {int(r["src"]): (int(r["start_ps"]), r["finish_ps"]) for r in m.iter_rows(named=True)}
    return p, span


def rows(ctx: Context, js: list[Job]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    out, ts = [], []
    for job, res in zip(js, ctx.run_many(js), strict=True):
        where, design = job.params["where"], job.params["design"]
        senders = SENDERS[where]
        p, span = series(res, senders)
        bin_ps = BIN_US * 1_000_000
        rate = {(r["node"], r["bin"]): r["gbps"] for r in p.iter_rows(named=True)}
        last = max((f for _, f in span.values() if f is not None), default=0)
        jains = []
        for b in range(int(last // bin_ps) + 1):
            lo, hi = b * bin_ps, (b + 1) * bin_ps
            active = [s for s in senders if span[s][0] <= lo and span[s][1] is not None and span[s][1] >= hi]
            xs = [rate.get((f"h{s}", b), 0.0) for s in active]
            for s in senders:
                ts.append({"where": where, "design": design, "seed": job.seed, "t_ms": lo / 1e9, "flow": f"h{s}",
                           "gbps": rate.get((f"h{s}", b), 0.0)})
            if len(active) >= 2:
                j = jain(xs)
                if j is not None:
                    jains.append(j)
        fct = {s: ((f - st) / 1e9 if f is not None else None) for s, (st, f) in span.items()}
        summ = res.summary
        pfc = summ.get("pfc") or {}
        out.append({
            "where": where, "design": design, "seed": job.seed,
            "jain mean": sum(jains) / len(jains) if jains else None, "jain min": min(jains) if jains else None,
            "bins ≥ 0.95": sum(1 for j in jains if j >= 0.95) / len(jains) if jains else None, "bins": len(jains),
            **{f"fct h{s} ms": fct[s] for s in senders},
            "receiver queue max KB": int((summ.get("max_queue_bytes") or {}).get("s0->h0", 0)) / 1e3,
            "pause frames": int(pfc.get("pause_frames", 0)), "drops": int(summ["counters"]["packets_dropped"]),
            "sfc signals": int((summ.get("sfc") or {}).get("signals_sent", 0)),
        })
    return out, ts


def plot(ctx: Context, ts: pl.DataFrame) -> None:
    import matplotlib.pyplot as plt

    wheres = list(SENDERS)
    fig, axes = plt.subplots(len(wheres), len(DESIGNS), figsize=(4 * len(DESIGNS), 3 * len(wheres)), sharex=True, sharey=True, squeeze=False)
    for i, w in enumerate(wheres):
        for j, d in enumerate(DESIGNS):
            ax = axes[i][j]
            sub = ts.filter((pl.col("where") == w) & (pl.col("design") == d) & (pl.col("seed") == ts["seed"].min()))
            for flow in sorted(set(sub["flow"].to_list()), key=lambda x: int(x[1:])):
                f = sub.filter(pl.col("flow") == flow).sort("t_ms")
                ax.plot(f["t_ms"].to_list(), f["gbps"].to_list(), label=flow, lw=1)
            ax.set_title(f"{d}, {w}-switch", fontsize=9, color=COLORS[d])
            if i == len(wheres) - 1:
                ax.set_xlabel("time (ms)")
            if j == 0:
                ax.set_ylabel(f"Gbps per {BIN_US} µs")
            ax.legend(fontsize=7)
    fig.tight_layout()
    ctx.save(fig, "fairness")


def run(ctx: Context) -> str:
    js = jobs(ctx)
    rs, ts = rows(ctx, js)
    df = frame(rs)
    tsdf = frame(ts)
    ctx.write_parquet(df, "fairness")
    ctx.write_parquet(tsdf, "fairness_series")
    plot(ctx, tsdf)
    wheres = sorted(set(df["where"].to_list()))
    js = [(w, _m(df, w, "PFC", "jain mean"), _m(df, w, "SFC", "jain mean")) for w in wheres]
    ctx.claim("SFC does not hurt fairness (Jain's index mean per window within 0.02 of PFC's, intra- and inter-switch)",
              "chart", "; ".join(f"{w}: SFC {s:.3f}, PFC {p:.3f}" for w, p, s in js if p is not None and s is not None),
              all(p is not None and s is not None and s >= p - 0.02 for _, p, s in js))
    return section(df, ctx.quick)


def _m(df: pl.DataFrame, where: str, design: str, col: str) -> float | None:
    v = [x for x in df.filter((pl.col("where") == where) & (pl.col("design") == design))[col].to_list() if x is not None]
    return sum(v) / len(v) if v else None


def section(df: pl.DataFrame, quick: bool) -> str:
    t = phase_us(quick)
    head = ["where", "design", "Jain mean (min)", f"share of {BIN_US} µs windows with Jain ≥ 0.95", "flow FCTs (ms, in start order)", "receiver port max queue (KB)", "PAUSE frames", "SFC signals", "drops"]
    body = []
    for where in SENDERS:
        for d in DESIGNS:
            fcts = " / ".join(fmt(_m(df, where, d, f"fct h{s} ms"), 2) for s in SENDERS[where])
            body.append([where, d, f"{fmt(_m(df, where, d, 'jain mean'), 3)} ({fmt(_m(df, where, d, 'jain min'), 3)})",
                         fmt(_m(df, where, d, "bins ≥ 0.95"), 2), fcts, fmt(_m(df, where, d, "receiver queue max KB")), f"{_m(df, where, d, 'pause frames'):,.0f}",
                         f"{_m(df, where, d, 'sfc signals'):,.0f}", f"{_m(df, where, d, 'drops'):,.0f}"])
    claims = []
    for where in SENDERS:
        claims.append(f"{where}-switch: Jain mean PFC {fmt(_m(df, where, 'PFC', 'jain mean'), 3)}, SFC {fmt(_m(df, where, 'SFC', 'jain mean'), 3)}, "
                      f"SFC proxy {fmt(_m(df, where, 'SFC proxy', 'jain mean'), 3)}, DCQCN alone {fmt(_m(df, where, 'DCQCN lossy', 'jain mean'), 3)}")
    md = [
        f"Setting: 4 senders → host 0 at 100 Gbps. Intra-switch: senders h1–h4 on the receiver's ToR; inter-switch: h1, h2 "
        f"there and h16, h17 on another ToR of the same pod (their data shares one 400 Gbps aggregation-to-ToR link into "
        f"the receiver's ToR). One long flow per sender, starting at 0, T, 2T, 3T (T = {t / 1000:g} ms), sized so that under "
        "exactly fair sharing of the receiver's link they would stop at 7T, 6T, 5T, 4T (last started, first done); pl2's "
        "fairness-run buffers (ingress α 0.5, egress α 2.0, 16 MB egress pool, PFC's ingress pool 9 MB with XOFF at α 0.5, "
        f"SFC target 64 KB). Throughput: each sender's transmitted bytes per {BIN_US} µs window (about 8 base RTTs; its "
        "NIC carries only that flow's data). Jain's index per window over the flows active for the whole window (started, "
        "not finished), windows with at least two; mean and minimum over windows.",
        "",
        table(head, body),
        "",
        "| slide claim | slides | ours |",
        "|---|---|---|",
        "| \"SFC does not hurt fairness provided by DCQCN\" / \"does not negatively affect fairness\" | chart only | "
        + "; ".join(claims) + " |",
        "",
        "Mechanism: the receiver's port held at most "
        + ", ".join(f"{fmt(_m(df, w, 'PFC', 'receiver queue max KB'))} KB ({w})" for w in SENDERS)
        + " under PFC: DCQCN's marking at 50 KB keeps the queue near SFC's 100 KB trigger and far below PFC's XOFF, so PFC "
        "never pauses and SFC signals "
        + ", ".join(f"{_m(df, w, 'SFC', 'sfc signals'):,.0f} times ({w})" for w in SENDERS)
        + ": the shares are DCQCN's in every design (SFC's few signals move the Jain mean by about 0.01 either way). The flows finish later than the fair-share "
        "schedule (7T for the first) because DCQCN's cuts when a flow joins take long to recover from with the slides' "
        "parameters (AI 12.5 Mbps and hyper AI 25 Mbps per increase event, `seed_reading.ai = \"gbps\"`): after a flow "
        "leaves, the others take milliseconds to fill the link again (the figure), in every design alike.",
    ]
    n_seeds = df["seed"].n_unique()
    if n_seeds > 1:
        spread = [df.filter((pl.col("where") == w) & (pl.col("design") == d))["jain mean"].drop_nulls() for w in SENDERS for d in DESIGNS]
        widest = max((float(x.max() - x.min()) for x in spread if x.len()), default=0.0)
        md.insert(0, f"*{n_seeds} seeds; each cell is their mean. "
                  + ("The seeds give the same Jain means to the last digit (the flows, their sizes and starts are fixed; "
                     "the seed changes nothing measured here).*\n" if widest == 0.0 else
                     f"The Jain mean of a design differs between seeds by at most {widest:.2g}.*\n"))
    if quick:
        md.insert(0, f"*Quick mode: T = {t / 1000:g} ms; not the committed numbers.*\n")
    return "\n".join(md)
