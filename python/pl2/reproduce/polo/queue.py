"""Polo slides, "Controlling the queue well": many-to-one on one 1 Gbps switch, ECN
threshold 5, every flow 100 KB starting at 0.1 s; the bottleneck queue (the switch port
towards the receiver) over time for the four designs."""

from __future__ import annotations

import polars as pl

from pl2.reproduce.common import Context, Job, table
from pl2.reproduce.polo.common import COLORS, DESIGNS, ECN_THRESHOLD_B, FLOW_B, PORT_LIMIT_B, build, counters, polo_timeouts

NAME = "polo-queue"
TITLE = "Polo: controlling the queue (N-to-1, 1 Gbps, ECN threshold 5 packets, 100 KB flows from 0.1 s)"
START_MS = 100.0
#: The ports table's window (`build`'s default, 10 µs), in ps.
WINDOW_PS = 10_000_000
#: A data frame and its adjoint on the wire, bytes (1542 + 84).
PAIR_B = 1626
#: Packets the path holds in one epoch without a queue (≈ 76 µs × 1 Gbps / PAIR_B; the
#: D paragraph of the report derives it).
PATH_PACKETS = 6
#: Bins of D (sum over the receiver's active flows) for the queue it holds.
D_BINS = [(1, 10), (10, 15), (15, 20), (20, 30), (30, 10**9)]


def queue_by_d(dv: pl.DataFrame, series: pl.DataFrame) -> pl.DataFrame:
    """The queue D holds: each epoch end's D (`polo_d`) joined with the maximum queue of
    the 10 µs window it falls in (`queue_series`, Polo's rows), over all seeds; per bin of
    D, the epochs, the median D and the median window maximum, beside what a window of D
    packets per epoch leaves queued beyond the path's `PATH_PACKETS`: (D − 6) × 1626 B."""
    j = dv.with_columns((pl.col("time_ps") // WINDOW_PS * WINDOW_PS).alias("window_start_ps")).join(
        series.filter(pl.col("design") == "Polo").select("seed", "window_start_ps", "max_queue_bytes"),
        on=["seed", "window_start_ps"], how="inner")
    rows = []
    for lo, hi in D_BINS:
        b = j.filter((pl.col("d") >= lo) & (pl.col("d") < hi))
        if b.height:
            d50 = float(b["d"].median())
            rows.append({"d_lo": lo, "d_hi": hi, "epochs": b.height, "d_median": d50,
                         "queue_median_bytes": float(b["max_queue_bytes"].median()),
                         "excess_bytes": max(0.0, d50 - PATH_PACKETS) * PAIR_B})
    return pl.DataFrame(rows)


def n_senders(quick: bool) -> int:
    return 16 if quick else 32


def _incast_windows(res, n: int) -> tuple[pl.DataFrame, pl.DataFrame, int | None]:
    """The switch port to the receiver's windows, those from 100 ms to the last flow's
    delivery, and that delivery's time (None when no flow finished)."""
    q = res.ports.filter((pl.col("node") == "s0") & (pl.col("peer") == f"h{n}")).sort("window_start_ps")
    fin = res.messages.filter((pl.col("dst") == n) & pl.col("finish_ps").is_not_null())
    last_ps = int(fin["finish_ps"].max()) if fin.height else None
    active = q.filter((pl.col("window_start_ps") >= int(START_MS * 1e9)) & (pl.col("window_start_ps") <= (last_ps or 0)))
    return q, active, last_ps


def _p50_window_max(res, n: int) -> float:
    """Median over the incast's windows of the largest queue towards the receiver, bytes."""
    return float(_incast_windows(res, n)[1]["max_queue_bytes"].median() or 0.0)


def run(ctx: Context) -> str:
    n = n_senders(ctx.quick)
    dur = START_MS + n * FLOW_B * 8 / 1e9 * 1e3 * 10 + 20
    jobs = []
    for d in DESIGNS:
        wl = {"kind": "incast", "senders": f"0..{n}", "receiver": n, "size": f"{FLOW_B}B", "count": 1, "start": f"{START_MS:g}ms"}
        # Polo's runs keep a full trace: its timeouts are classified from it.
        sc = build(f"{NAME}-{d}-{n}", d, {"kind": "single_rack", "hosts": n + 1}, [wl], duration_ms=dur, link_delay="12500ns",
                   trace={"max_records": 5_000_000} if d == "Polo" else None)
        if d == "Polo":  # D at every epoch's end (probe `polo_d`)
            sc = sc.with_overrides({"metrics.probes": True})
        jobs += [Job(sc, {"figure": NAME, "design": d, "senders": n}, seed, NAME) for seed in ctx.seeds]
    # Polo with one D shared by the receiver's flows (a diagnostic): its spurious timeouts.
    wl = {"kind": "incast", "senders": f"0..{n}", "receiver": n, "size": f"{FLOW_B}B", "count": 1, "start": f"{START_MS:g}ms"}
    shared_jobs = [Job(build(f"{NAME}-Polo-receiverD-{n}", "Polo receiver D", {"kind": "single_rack", "hosts": n + 1}, [wl],
                             duration_ms=dur, link_delay="12500ns"), {"figure": NAME, "design": "Polo receiver D", "senders": n}, seed, NAME)
                   for seed in ctx.seeds]
    shared_res = list(ctx.run_many(shared_jobs))
    shared = [(r.summary.get("polo") or {}) for r in shared_res]
    shared_p50 = sum(_p50_window_max(r, n) for r in shared_res) / len(shared_res)
    shared_to, shared_dup = sum(int(s.get("timeouts", 0)) for s in shared), sum(int(s.get("duplicates", 0)) for s in shared)
    series, rows, touts, adjoint_drops, d_values = [], [], [], [], []
    for job, res in zip(jobs, ctx.run_many(jobs), strict=True):
        d = job.params["design"]
        if d == "Polo":
            touts.append(polo_timeouts(res.trace, n).with_columns(pl.lit(job.seed).alias("seed")))
            adjoint_drops.append(res.trace.filter((pl.col("event") == "drop") & (pl.col("kind") == "ack")).height)
            dser = res.probes.filter(pl.col("name") == "polo_d").sort("time_ps")
            d_values.append(dser.select(pl.lit(job.seed).alias("seed"), "time_ps", pl.col("value").alias("d")))
        q, active, last_ps = _incast_windows(res, n)
        m = res.messages.filter(pl.col("dst") == n)
        fin = m.filter(pl.col("finish_ps").is_not_null())
        series.append(q.select(pl.lit(d).alias("design"), pl.lit(job.seed).alias("seed"), "window_start_ps", "max_queue_bytes"))
        # Share of the incast's time the receiver's link was idle: 1 − the wire bytes it
        # sent (every frame) over what 1 Gbps sends from 100 ms to the last delivery.
        span_s = max(1, (last_ps or 0) - int(START_MS * 1e9)) * 1e-12
        busy = float(active["tx_bytes"].sum()) / (span_s * 1e9 / 8)
        rows.append({
            "design": d, "seed": job.seed, "senders": n, "link_idle_share": 1 - busy,
            "max_queue_bytes": int(q["max_queue_bytes"].max() or 0),
            "mean_window_max_bytes": float(active["max_queue_bytes"].mean() or 0.0),
            "p50_window_max_bytes": float(active["max_queue_bytes"].median() or 0.0),
            "completion_ms": (last_ps / 1e9 - START_MS) if last_ps else None,
            "unfinished": m.height - fin.height,
            **counters(res.summary, d),
        })
    ts = pl.concat(series)
    df = pl.DataFrame(rows)
    to = pl.concat(touts)
    dv = pl.concat(d_values)
    ctx.write_parquet(df, "queue")
    ctx.write_parquet(dv, "polo_d")
    ctx.write_parquet(to, "polo_timeouts")
    ctx.write_parquet(ts, "queue_series")

    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(DESIGNS), 1, figsize=(9, 2.1 * len(DESIGNS)), sharex=True)
    first = ts.filter(pl.col("seed") == ctx.seeds[0])
    for ax, d in zip(axes, DESIGNS, strict=True):
        s = first.filter(pl.col("design") == d)
        ax.step((s["window_start_ps"].to_numpy() / 1e9), s["max_queue_bytes"].to_numpy() / 1000, where="post", color=COLORS[d], lw=0.8)
        ax.axhline(ECN_THRESHOLD_B / 1000, color="k", ls=":", lw=0.8, label="ECN threshold (5 frames)")
        ax.axhline(PORT_LIMIT_B / 1000, color="k", ls="--", lw=0.8, label="port limit 86 KB")
        ax.set_ylabel(f"{d}\nqueue KB")
        ax.set_ylim(0, PORT_LIMIT_B / 1000 * 1.1)
        ax.legend(fontsize=6, loc="upper right")
    last = float(df["completion_ms"].drop_nulls().max() or 10.0)
    axes[-1].set_xlim(START_MS - 1, START_MS + last * 1.05 + 1)
    axes[-1].set_xlabel("time (ms)")
    fig.suptitle(f"Queue at the switch port to the receiver, {n}-to-1, max per 10 µs window (seed {ctx.seeds[0]})", fontsize=10)
    fig.tight_layout()
    ctx.save(fig, "queue")

    trows = []
    for d in DESIGNS:
        g = df.filter(pl.col("design") == d)
        trows.append([d, f"{g['max_queue_bytes'].max() / 1000:.1f}", f"{g['mean_window_max_bytes'].mean() / 1000:.1f}",
                      f"{g['p50_window_max_bytes'].mean() / 1000:.1f}", f"{g['completion_ms'].mean():.2f}" if g["completion_ms"].drop_nulls().len() else "–",
                      f"{g['link_idle_share'].mean():.1%}",
                      int(g["unfinished"].sum()), int(g["drops"].sum()), int(g["trims"].sum()), int(g["timeouts"].sum())])
    polo = df.filter(pl.col("design") == "Polo")
    p50_q = float(polo["p50_window_max_bytes"].mean())
    ctx.claim(f"Polo controls the queue well (median window maximum within 2× the ECN threshold, {ECN_THRESHOLD_B / 1000:.2f} KB)",
              "near the threshold", f"{p50_q / 1000:.1f} KB", p50_q <= 2 * ECN_THRESHOLD_B)
    n_to = int(polo["timeouts"].sum())
    tail = to.filter(pl.col("tail_lost"))
    spur = to.filter(pl.col("spurious"))
    first = to.filter(pl.col("tail_lost")).head(1).to_dicts()
    ex = (f" Example (seed {first[0]['seed']}): sender h{first[0]['sender']}'s timer was armed at "
          f"{first[0]['armed_ps'] / 1e6:.3f} µs, its last adjoint; the receiver had its packets up to {first[0]['highest_received']}, "
          f"the rest of its first burst up to {first[0]['resent_seq']} was dropped at the full port, the receiver sent it "
          f"{first[0]['receiver_frames_to_sender']} frames and received {first[0]['other_data_arrivals']} data packets of other "
          f"senders during the 1 ms, and the timeout at {first[0]['fired_ps'] / 1e6:.3f} µs resent packet {first[0]['resent_seq']}, "
          "whose arrival exposed the gap to recovery 1.") if first else ""
    d1 = dv.filter(pl.col("seed") == ctx.seeds[0])["d"].to_list()
    qd = queue_by_d(dv, ts)
    per_seed = dv.group_by("seed").agg(pl.col("d").median().alias("d50")).join(
        polo.select("seed", "p50_window_max_bytes"), on="seed").sort("seed")
    bins_txt = "; ".join(
        f"D {r['d_lo']}–{r['d_hi'] - 1 if r['d_hi'] < 10**9 else '…'}: {r['epochs']} epochs, median D {r['d_median']:.0f}, "
        f"queue {r['queue_median_bytes'] / 1000:.1f} KB (excess {r['excess_bytes'] / 1000:.1f} KB)" for r in qd.to_dicts())
    why = [
        "",
        f"**Polo's D** (probe `polo_d`: D summed over the receiver's active flows, each flow's own D, table "
        f"`polo_d.parquet`): over the incast, seed {ctx.seeds[0]}, it was between {min(d1) if d1 else 0:.0f} and "
        f"{max(d1) if d1 else 0:.0f} at the end of {len(d1)} epochs; its first 40 values: "
        f"{', '.join(f'{x:.0f}' for x in d1[:40])}. A window of D packets per epoch fills the 1 Gbps link only when D is at "
        "least the round trip's worth of packets (about 76 µs: 50 µs of propagation, a data frame serialised on two 1 Gbps links, 12.3 µs each, and the driving packet's way back; 76 µs × 1 Gbps / (1542 + 84) B ≈ 6 packets); after "
        "marks each flow's D falls by ⌈M/2⌉ of its own marks in each epoch that still sees marks and then grows by one per epoch, so the link idles "
        f"while D climbs back (column *receiver link idle*: Polo {df.filter(pl.col('design') == 'Polo')['link_idle_share'].mean():.0%}).",
        "**Why the queue stays above the threshold** (measured: `queue_by_d` over the tables `polo_d.parquet` and "
        "`queue_series.parquet`): the queue grows with D as the part of D's window the path cannot hold does. Each epoch's end, joined with "
        "the maximum queue of its 10 µs window, binned by D (excess: (D − 6) × 1626 B, what D packets per epoch leave "
        f"queued beyond the ≈ 6 the path holds): {bins_txt}. Per seed, the median D and the median window maximum rise "
        "together: " + ", ".join(f"seed {r['seed']}: D {r['d50']:.0f}, {r['p50_window_max_bytes'] / 1000:.1f} KB"
                                  for r in per_seed.to_dicts()) + ". Each active flow's D grows by one per epoch "
        "without its own marks and never falls below 1, so with many active flows the sum seldom falls to the path's 6: "
        f"D > 6 at {(dv['d'] > PATH_PACKETS).mean():.0%} of the epoch ends. With one D shared "
        f"by the receiver's flows (`Polo receiver D`, the same incast and seeds) the median window maximum is {shared_p50 / 1000:.1f} KB "
        "(`docs/model.md`, Polo, \"D per flow\", has both readings measured over the family).",
        f"**Why Polo's sender times out** (the open item of `examples/polo-incast.toml`, whose 16-sender incast is this "
        f"experiment's quick setting; measured from a full trace of Polo's runs with `common.polo_timeouts`, table "
        f"`polo_timeouts.parquet`). Of {n_to} timeouts (`polo.timeouts`), the trace identifies {to.height} as a data frame sent exactly 1 ms after "
        f"the sender's previous frame or the receiver's last frame to it; the other {n_to - to.height} are resends that "
        f"do not match that pattern in the trace and are not classified here. Of those identified, {tail.height} are **tail losses "
        f"of a first burst**: {n} senders × 12 packets ({n * 12 * 1542 / 1000:.0f} KB) arrive at once at a port that holds "
        "86 KB, the port drops the tail of some bursts, so no later packet of that flow arrives to expose the gap "
        "(recovery 1 needs one), and recovery 2 never fires because the other flows keep delivering (it needs two epochs "
        "with no data from any active flow; during these waits the receiver got "
        f"{int(tail['other_data_arrivals'].min()) if tail.height else 0} or more data packets of other senders, column "
        "`other_data_arrivals`); only recovery 3 is left. "
        f"{spur.height} are **spurious**: the packet the sender resends had already arrived (`polo.duplicates` counts them "
        "at the receiver); the sender had sent everything it was driven to send and heard nothing new for 1 ms (the receiver "
        f"sent it {int(spur['receiver_frames_to_sender'].max()) if spur.height else 0} frames at most while it waited, "
        f"{(spur['receiver_frames_to_sender'] == 0).sum() if spur.height else 0} of them none at all, column "
        "`receiver_frames_to_sender`), "
        "while it was active. With one D shared by the receiver's flows (`Polo receiver D`, the reading pl2 used before "
        "measuring it over this family) an arrival draws a driving packet only when it frees a place under the shared D, "
        "so while other active flows' outstanding packets (first bursts, dropped packets not yet recovered) fill D a "
        f"flow's arrivals draw none: in this experiment it times out {shared_to} times, {shared_dup} of its resends "
        f"already received (with D per flow: {n_to} and {int(polo['duplicates'].sum())}). "
        f"Adjoints dropped in these runs (the slides' recovery 3 case): {sum(adjoint_drops)} (adjoints are "
        "84 B at priority 7, but the port limit counts every priority); identified timeouts that are neither a tail loss nor spurious: "
        f"{to.height - tail.height - spur.height}." + ex,
    ]
    md = [
        f"Setting: {n} senders and the receiver on one switch (links 12.5 µs), every sender one 100 KB flow at 100 ms. "
        "Queue: the largest queue of the switch port to the receiver in each 10 µs window (all priorities); \"mean\" and "
        "\"median\" are over the windows from 100 ms to the last flow's completion, averaged over seeds; completion is "
        "the last flow's, from 100 ms.",
        "",
        table(["design", "max queue KB", "mean window max KB", "median window max KB", "completion ms",
               "receiver link idle", "unfinished",
               "drops", "trims", "timeouts"], trows),
        "",
        "| slide claim | ours |",
        "|---|---|",
        f"| Polo \"controls the queue well\" (queue-over-time figure; ECN threshold 5 packets = {ECN_THRESHOLD_B / 1000:.2f} KB) | "
        f"Polo's median window max {polo['p50_window_max_bytes'].mean() / 1000:.1f} KB, max {polo['max_queue_bytes'].max() / 1000:.1f} KB "
        f"(the port holds {PORT_LIMIT_B / 1000:.0f} KB) |",
        *why,
    ]
    return "\n".join(md)
