"""Fig. 7: VGG16 training's gradient shuffle (§6.2.3). Workers h0–h3 each push VGG16's
gradient (138,357,544 fp32 parameters, 553,430,176 B) split byte-balanced across the
parameter servers h4 and h5, all at once; an iteration ends when every push is
delivered (`kind = "ps_shuffle"`, pull off, global barrier). CDF of the iteration times
with PL2 and RDS, and the total for all iterations."""

from __future__ import annotations

import polars as pl

from pl2.reproduce.common import Context, Job, buffer_drops, scenario, table

NAME = "fig7"
TITLE = "Fig. 7: VGG16 parameter-server shuffle, PL2 vs RDS (§6.2.3)"
#: 4 × 276,715,088 B into each server's downlink in 1542 B frames at 100 Gbps.
BOUND_MS = 4 * (276_715_088 // 1500 * 1542 + 276_715_088 % 1500 + 42) * 8 / 100e9 * 1e3
VARIANTS = [
    ("PL2 (K = 4, t = 15)", {"kind": "pl2", "k": 4, "t": 15}),
    ("PL2, low_load = false", {"kind": "pl2", "k": 4, "t": 15, "low_load": False}),
    ("RDS", {"kind": "rds"}),
]
PAPER = {"PL2 (K = 4, t = 15)": ("9.5", "222"), "PL2, low_load = false": ("9.5", "222"), "RDS": ("12", "321")}


def run(ctx: Context) -> str:
    iterations = 3 if ctx.quick else 100
    seed = ctx.seeds[0]
    workload = {"kind": "ps_shuffle", "workers": "0..4", "servers": "4..6", "iterations": iterations}
    # Room for every iteration at 2.5x the bound (RDS's slow iterations take ~2x); the
    # run stops as soon as the last push is delivered.
    duration = iterations * 2.5 * BOUND_MS + 500.0
    jobs = [Job(scenario(f"fig7-{transport['kind']}", transport, [workload], warmup_ms=0, until_ms=duration, duration_ms=duration,
                         window="1ms", drop_records=False), {"figure": NAME, "transport": label}, seed, NAME)
            for label, transport in VARIANTS]
    rows, times = [], []
    for job, res in zip(jobs, ctx.run_many(jobs), strict=True):
        label = job.params["transport"]
        s = res.summary
        it = s.get("iterations") or {}
        t = it.get("time_ps") or {}
        ms = res.iterations.filter(pl.col("time_ps").is_not_null())["time_ps"].cast(pl.Float64) / 1e9
        times += [{"transport": label, "iteration_ms": x} for x in ms.to_list()]
        rows.append({
            "transport": label,
            "finished": int(it.get("finished") or 0),
            "mean_ms": (t.get("mean_finished") or 0) / 1e9 or None,
            "p50_ms": (t.get("p50") or 0) / 1e9 or None,
            "p99_ms": (t.get("p99") or 0) / 1e9 or None,
            "total_s": (it.get("total_ps") or 0) / 1e12,
            "drops": buffer_drops(s),
        })
    df = pl.DataFrame(rows)
    ctx.write_parquet(df, "fig7")
    tdf = pl.DataFrame(times, schema={"transport": pl.Utf8, "iteration_ms": pl.Float64})
    ctx.write_parquet(tdf, "fig7_iterations")

    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.8))
    for label, _ in VARIANTS:
        v = sorted(tdf.filter(pl.col("transport") == label)["iteration_ms"].to_list())
        if v:
            ax.step(v, [(i + 1) / len(v) for i in range(len(v))], where="post", label=label)
    ax.axvline(BOUND_MS, color="k", ls=":", lw=1, label=f"bound {BOUND_MS:.1f} ms")
    ax.set_xlabel("iteration time (ms)")
    ax.set_ylabel("CDF")
    ax.legend(fontsize=8, loc="lower right")
    ax.set_title(f"Fig. 7: VGG16 shuffle, 4 workers → 2 servers, {iterations} iterations", fontsize=10)
    fig.tight_layout()
    ctx.save(fig, "fig7")

    def f(x: float | None, d: int = 1) -> str:
        return "–" if x is None else f"{x:.{d}f}"

    trows = [
        [r["transport"], f"{r['finished']} of {iterations}", f(r["mean_ms"]), f(r["p50_ms"]), f(r["p99_ms"]), f(r["total_s"], 2) if r["finished"] else "–",
         PAPER[r["transport"]][0], PAPER[r["transport"]][1], r["drops"]]
        for r in rows
    ]
    by = {r["transport"]: r for r in rows}
    pl2_nl, rds = by["PL2, low_load = false"], by["RDS"]
    ratio = rds["total_s"] / pl2_nl["total_s"] if pl2_nl["finished"] == iterations and rds["finished"] == iterations else None
    md = [
        f"{iterations} iterations, seed {seed} (the iterations are the samples). Iteration time: from the workers' start to "
        f"the last push delivered. Bound: {BOUND_MS:.2f} ms (each server's downlink carries 4 × 276.7 MB).",
        "",
        table(["transport", "iterations", "mean ms", "p50 ms", "p99 ms", "total s", "paper total s (100 it.)", "paper p99 ms", "frames dropped"], trows),
        "",
        "**Where we differ and why.**",
    ]
    default = by["PL2 (K = 4, t = 15)"]
    ctx.claim("PL2 (K = 4, t = 15) finishes every iteration without loss", "no loss",
              f"{default['finished']} of {iterations}, {default['drops']} drops", default["finished"] == iterations and default["drops"] == 0)
    ctx.claim("RDS takes 1.26× PL2's total time (12 / 9.5 s; ±0.1)", "1.26×", f"{ratio:.2f}× (PL2 low_load = false)" if ratio else "–",
              ratio is not None and abs(ratio - 1.26) <= 0.1 if ratio else None)
    tail = rds["p99_ms"] / pl2_nl["p99_ms"] if rds["p99_ms"] and pl2_nl["p99_ms"] else None
    ctx.claim("RDS's p99 iteration well above PL2's (321 / 222 ms = 1.45×; at least 1.2×)", "1.45×",
              f"{tail:.2f}×" if tail else "–", tail >= 1.2 if tail else None)
    if default["finished"] < iterations:
        md.append(
            "- PL2 as configured everywhere else (K = 4, t = 15, low-load optimisation on) loses frames "
            f"({default['drops']}) and finishes {default['finished']} of {iterations} iterations: with two threads per worker "
            "the senders' chosen slots stay below t, nearly every burst goes unsolicited, and the T check (reservation "
            "counters) lets an unpaced 4:2 incast overflow the 1.5 MB ports; raw Ethernet underneath never resends. With "
            "`low_load = false` every burst is reserved."
        )
    if ratio:
        slow = rds["p99_ms"] is not None and rds["p99_ms"] > 1.5 * BOUND_MS
        md.append(
            f"- RDS / PL2 total time: {ratio:.2f} (paper 12 / 9.5 = 1.26). "
            + ("RDS's slow iterations take about twice the bound: both servers grant the same worker (SRPT ties), unaware "
               "of its other grants, as the paper explains." if slow else
               "No RDS iteration here was slow; over 100 iterations (full mode) some take twice the bound, when both "
               "servers grant the same worker (SRPT ties), unaware of its other grants, as the paper explains.")
        )
    md.append(
        "- Our absolute times and tails are smaller than the testbed's (no host scheduling noise, memory copies or NIC "
        "limits beyond the calibrated delays): PL2's p99 is within a few % of the bound, the paper's 222 ms is 2.4× it."
    )
    return "\n".join(md)
