"""Fig. 10: outcast. Host 0's 12 threads send 6000 B messages to 1–4 receivers (thread i
to receiver 1 + i mod r), closed loop; goodput and PL2's control overhead (RSVs on h0's
uplink, GRTs on its downlink, relative to the data h0 sends)."""

from __future__ import annotations

import polars as pl

from pl2.reproduce.common import CTL_WIRE, FRAME_WIRE, Context, Job, buffer_drops, fmt_ci, kib, max_queue, mean_ci, program_drops, scenario, table

NAME = "fig10"
TITLE = "Fig. 10: outcast, 1–4 receivers, and control overhead (§7)"
SIZE = 6000


def _csv(ctx: Context, r: int, duration_ms: float) -> str:
    """Enough queued messages at time 0 to keep every thread busy for the whole run."""
    name = f"outcast{r}-{duration_ms:g}ms.csv"
    p = ctx.file(name)
    if not p.exists():
        per_thread = int(duration_ms * 1e-3 * 100e9 / 8 / SIZE / 12 * 1.5) + 10
        lines = ["time,src,dst,size,thread,priority"]
        row = [f"0,0,{1 + t % r},{SIZE},{t},0" for t in range(12)]
        lines += row * per_thread
        p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return name


def run(ctx: Context) -> str:
    dur, warm = (2.0, 0.2) if ctx.quick else (11.2, 1.0)
    receivers = [1, 2, 4] if ctx.quick else [1, 2, 3, 4]
    jobs: list[Job] = []
    for r in receivers:
        csv = _csv(ctx, r, dur)
        sc = scenario(f"fig10-outcast-{r}", {"kind": "pl2", "k": 4, "t": 15}, [{"kind": "list", "file": csv}],
                      warmup_ms=warm, until_ms=dur - 0.2, duration_ms=dur, drop_records=False, base_dir=ctx.out)
        jobs += [Job(sc, {"figure": NAME, "receivers": r}, seed, NAME) for seed in ctx.seeds]
    rows = []
    for job, res in zip(jobs, ctx.run_many(jobs), strict=True):
        r, seed = job.params["receivers"], job.seed
        s = res.summary
        ports = res.ports
        up = int(ports.filter((pl.col("node") == "h0") & (pl.col("peer") == "s0"))["tx_bytes"].sum())
        down = int(ports.filter((pl.col("node") == "s0") & (pl.col("peer") == "h0"))["tx_bytes"].sum())
        rsv_b = s["pl2"]["rsvs"] * CTL_WIRE
        grt_b = s["pl2"]["switch"]["grants"] * CTL_WIRE
        data_b = max(up - rsv_b, 1)
        rows.append({
            "receivers": r, "seed": seed,
            "goodput_gbps": sum(v for k, v in s["goodput_gbps"].items() if k != "h0"),
            "rsv_overhead_pct": 100 * rsv_b / data_b, "grt_overhead_pct": 100 * grt_b / data_b,
            "buffer_drops": buffer_drops(s), "program_drops": program_drops(s),
            "max_queue_bytes": max(max_queue(s, f"s0->h{h}") for h in range(1, r + 1)),
            "downlink_bytes": down, "uplink_bytes": up,
        })
    df = pl.DataFrame(rows)
    ctx.write_parquet(df, "fig10")

    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(1, 2, figsize=(10, 3.8))
    agg = df.group_by("receivers", maintain_order=True).agg(pl.col("goodput_gbps", "rsv_overhead_pct", "grt_overhead_pct")).sort("receivers")
    stats = {r: (mean_ci(g), mean_ci(o1), mean_ci(o2)) for r, g, o1, o2 in agg.iter_rows()}
    xs = list(stats)
    ax[0].errorbar(xs, [stats[r][0][0] for r in xs], yerr=[stats[r][0][1] or 0 for r in xs], marker="o", capsize=3, label="pl2 (PL2)")
    ax[0].axhline(90, color="tab:red", ls="--", lw=1, label="paper: ≤ 90 Gbps")
    ax[0].axhline(100 * 1500 / 1542, color="k", ls=":", lw=1, label="line rate, full payloads")
    ax[0].set_xlabel("receivers")
    ax[0].set_ylabel("goodput from h0 (Gbps)")
    ax[0].set_ylim(0, 100)
    ax[0].set_xticks(xs)
    ax[0].legend(fontsize=8, loc="lower right")
    ax[0].set_title("(a) outcast goodput")
    ax[1].plot(xs, [stats[r][1][0] for r in xs], marker="o", label="RSV / data, uplink")
    ax[1].plot(xs, [stats[r][2][0] for r in xs], marker="s", ls="--", label="GRT / data, downlink")
    ax[1].axhline(2.0, color="tab:red", ls="--", lw=1, label="paper: ≥ 2 % (128 B per 4 MTU)")
    ax[1].set_xlabel("receivers")
    ax[1].set_ylabel("control bytes / data bytes (%)")
    ax[1].set_ylim(0, 3)
    ax[1].set_xticks(xs)
    ax[1].legend(fontsize=8)
    ax[1].set_title("(b) control overhead")
    fig.suptitle(f"Fig. 10: outcast from h0, 12 threads × {SIZE} B, PL2 K = 4, t = 15 ({len(ctx.seeds)} seed(s))", fontsize=10)
    fig.tight_layout()
    ctx.save(fig, "fig10")

    trows = []
    for r in xs:
        sub = df.filter(pl.col("receivers") == r)
        trows.append([r, fmt_ci(*stats[r][0]), "≤ 90", f"{stats[r][1][0]:.3f}", f"{stats[r][2][0]:.3f}", "≥ 2 (one direction)",
                      int(sub["buffer_drops"].sum()), int(sub["program_drops"].sum()), kib(int(sub["max_queue_bytes"].max()))])
    g = [stats[r][0][0] for r in xs]
    expected = 100 * CTL_WIRE / (4 * FRAME_WIRE)
    ctx.claim("outcast goodput stays at or below 90 Gbps for 1–4 receivers", "≤ 90 Gbps", f"{min(g):.1f}–{max(g):.1f} Gbps",
              max(g) <= 90)
    both = [stats[r][1][0] + stats[r][2][0] for r in xs]
    ctx.claim("control overhead (RSV + GRT per burst, against the burst's data) at least 2 %", "≥ 2 %",
              f"{min(both):.2f}–{max(both):.2f} %", min(both) >= 2.0)
    md = [
        f"Host 0's 12 threads keep a queue of {SIZE} B messages (4 full payloads, one K = 4 burst) to receivers "
        "1..r, closed loop. Goodput is the sum over receivers (mean ± 95% interval over seeds); overhead is RSV "
        "wire bytes on h0's uplink and GRT wire bytes on its downlink, each relative to the data wire bytes h0 sent.",
        "",
        table(["receivers", "goodput Gbps", "paper Gbps", "RSV/data %", "GRT/data %", "paper overhead %", "buffer drops", "program drops", "max queue KiB"], trows),
        "",
        "**Where we differ and why.**",
        f"- Goodput {min(g):.2f}–{max(g):.2f} Gbps for every receiver count, above the paper's ≤ 90 Gbps "
        f"(+{min(g) - 90:.1f} Gbps): our hosts have no per-packet or per-RSV CPU cost (the testbed profile "
        "calibrates only the RSV-GRT exchange), so 12 blocking threads keep the NIC busy; the paper's cap is host "
        "software. The sender is the bottleneck, so the receiver count does not matter.",
        f"- Control overhead is exactly 84 / (4 · 1542) = {expected:.3f} % of data bytes for RSVs on the sender's "
        "uplink and for GRTs on its downlink. The paper's ≥ 2 % counts 128 B (RSV + GRT) per burst on one "
        "direction; we count each 64 B frame on the wire (84 B with preamble and gap) on the link it uses.",
    ]
    return "\n".join(md)
