"""SFC slides, "SFC Benefits": background traffic (Google RPC sizes, 50% load, all-to-all
Poisson) and recurring 120-to-1 incasts of 256 KB messages (8% of the hosts' summed link
capacity) on the 320-host three-tier network; background FCT by size bucket, incast FCT,
switch queue depth by tier, pauses and drops, for PFC, SFC and SFC with the ToR proxy
(and DCQCN alone for context)."""

from __future__ import annotations

import math
from typing import Any

import polars as pl

from pl2.reproduce.common import Context, Job, table
from pl2.reproduce.sfc.common import COLORS, DESIGNS, HOSTS, LINK_BPS, fmt, frame, pct, scenario, tier_of, transport

NAME = "sfc-benefit"
TITLE = "SFC: background FCT, incast FCT and queueing with 120-to-1 incasts over a 50% background (320 hosts)"

BUCKETS = [("< 10 KB", 0, 10_000), ("10 KB – 1 MB", 10_000, 1_000_000), ("> 1 MB", 1_000_000, 1 << 62)]
INCAST_B = 256_000
BG_LOAD = 0.5
INCAST_LOAD = 0.08


def settings(quick: bool) -> dict[str, Any]:
    """Fan-in and times (µs): arrivals from 0 until `stop`, statistics over messages that
    arrive in [warmup, stop), then up to `drain` more for the last of them to finish."""
    if quick:
        return {"fan_in": 30, "warmup": 100, "stop": 400, "drain": 2000}
    return {"fan_in": 120, "warmup": 300, "stop": 1500, "drain": 4000}


def incast_gap_us(fan_in: int) -> float:
    """Mean time between incasts: fan_in × 256 KB of payload per 8% of 320 × 100 Gbps."""
    return fan_in * INCAST_B * 8 / (INCAST_LOAD * HOSTS * LINK_BPS) * 1e6


def jobs(ctx: Context) -> list[Job]:
    s = settings(ctx.quick)
    run = {"duration": f"{s['stop'] + s['drain']}us", "warmup": f"{s['warmup']}us", "measure_until": f"{s['stop']}us"}
    wls = [
        {"kind": "poisson", "load": BG_LOAD, "sizes": "google_rpc_2008", "stop": f"{s['stop']}us"},
        {"kind": "poisson_incast", "transport": "incast", "fan_in": s["fan_in"], "size": f"{INCAST_B}B",
         "load": INCAST_LOAD, "stop": f"{s['stop']}us"},
    ]
    out = []
    for design in DESIGNS:
        sc = scenario(f"{NAME}-{design.replace(' ', '-')}", design, wls, run=run, transports={"incast": transport(design)})
        out += [Job(sc, {"figure": NAME, "design": design, "fan_in": s["fan_in"]}, seed, NAME) for seed in ctx.seeds]
    return out


def queue_stats(ports: pl.DataFrame, t0_ps: int, t1_ps: int, window_ps: int) -> dict[str, dict[str, float]]:
    """Per tier of the switch that owns the port: the per-window maxima of every switch
    egress port over the measurement span, windows without a row counted as 0 (a port
    with no row in a window sent nothing and held nothing): mean, p99 and max, in KB."""
    sw = ports.filter(pl.col("node").str.starts_with("s") & (pl.col("window_start_ps") >= t0_ps) & (pl.col("window_start_ps") < t1_ps))
    n_windows = max(1, (t1_ps - t0_ps) // window_ps)
    all_ports = ports.filter(pl.col("node").str.starts_with("s")).select("port", "node").unique()
    out: dict[str, dict[str, float]] = {}
    for tier in ("tor", "agg", "core"):
        mine = all_ports.filter(pl.col("node").map_elements(tier_of, return_dtype=pl.Utf8) == tier)
        ids = set(mine["port"].to_list())
        vals = sw.filter(pl.col("port").is_in(list(ids)))["max_queue_bytes"].to_list()
        total = len(ids) * n_windows
        vals = vals + [0] * max(0, total - len(vals))
        out[tier] = {"mean_kb": sum(vals) / len(vals) / 1e3 if vals else 0.0, "p99_kb": (pct(vals, 0.99) or 0) / 1e3,
                     "max_kb": max(vals, default=0) / 1e3}
    return out


def rows(ctx: Context, js: list[Job]) -> list[dict[str, Any]]:
    s = settings(ctx.quick)
    t0, t1 = s["warmup"] * 1_000_000, s["stop"] * 1_000_000
    out = []
    for job, res in zip(js, ctx.run_many(js), strict=True):
        m = res.messages.filter(pl.col("in_window"))
        bg = m.filter(pl.col("transport") == "default")
        inc = m.filter(pl.col("transport") == "incast")
        r: dict[str, Any] = {"design": job.params["design"], "seed": job.seed, "fan_in": job.params["fan_in"]}
        for label, lo, hi in BUCKETS:
            b = bg.filter((pl.col("size_bytes") >= lo) & (pl.col("size_bytes") < hi))
            lat = [x / 1e6 for x in b["latency_ps"].drop_nulls().to_list()]
            unfinished = b.height - len(lat)
            lat_all = lat + [float("inf")] * unfinished
            r[f"bg {label} n"] = b.height
            r[f"bg {label} unfinished"] = unfinished
            r[f"bg {label} p50 us"] = pct(lat_all, 0.5)
            r[f"bg {label} p99 us"] = pct(lat_all, 0.99)
        lat = [x / 1e6 for x in inc["latency_ps"].drop_nulls().to_list()] + [float("inf")] * inc["latency_ps"].null_count()
        r["incast msgs"] = inc.height
        r["incast msg p50 us"] = pct(lat, 0.5)
        r["incast msg p99 us"] = pct(lat, 0.99)
        # One incast: the messages to one receiver that arrived at the same instant; its
        # completion time runs to its last message's delivery.
        ev = inc.group_by(["dst", "start_ps"]).agg(
            (pl.col("finish_ps").max() - pl.col("start_ps").first()).alias("ct"), pl.col("finish_ps").null_count().alias("open"))
        cts = [float("inf") if o else c / 1e6 for c, o in zip(ev["ct"].to_list(), ev["open"].to_list(), strict=True)]
        r["incasts"] = ev.height
        r["incasts unfinished"] = sum(1 for o in ev["open"].to_list() if o)
        r["incast ct p50 us"] = pct(cts, 0.5)
        r["incast ct p99 us"] = pct(cts, 0.99)
        window_ps = 10_000_000
        q = queue_stats(res.ports, t0, t1, window_ps)
        for tier, v in q.items():
            for k, x in v.items():
                r[f"queue {tier} {k}"] = x
        summ = res.summary
        pfc = summ.get("pfc") or {}
        sfc = summ.get("sfc") or {}
        drops = summ.get("drops") or {}
        r["pause frames"] = int(pfc.get("pause_frames", 0))
        r["paused ms"] = pfc.get("paused_ps", 0) / 1e9
        r["drops buffer"] = int(drops.get("buffer_full", 0))
        r["drops total"] = int(summ["counters"]["packets_dropped"])
        r["sfc signals"] = int(sfc.get("signals_sent", 0))
        r["sfc suppressed"] = int(sfc.get("signals_suppressed", 0))
        r["sfc proxied"] = int(sfc.get("signals_proxied", 0))
        roce = summ.get("roce") or {}
        r["retransmissions"] = int(roce.get("retransmissions", 0))
        r["timeouts"] = int(roce.get("timeouts", 0))
        r["duplicates"] = int(roce.get("duplicates", 0))
        c = summ["counters"]
        for k in ("packets_created", "packets_delivered", "packets_consumed", "packets_dropped", "packets_in_flight", "hops", "events"):
            r[k] = int(c[k])
        r["messages"] = int(summ["messages"]["count"])
        r["finished"] = int(summ["messages"]["finished"])
        out.append(r)
    return out


def plot(ctx: Context, df: pl.DataFrame) -> None:
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 4, figsize=(16, 3.6))
    labels = [b[0] for b in BUCKETS] + ["incast 256 KB"]
    cols = [f"bg {b[0]} p99 us" for b in BUCKETS] + ["incast msg p99 us"]
    for ax, lab, col in zip(axes, labels, cols, strict=True):
        ds = [d for d in DESIGNS if d in df["design"].to_list()]
        vals = [df.filter(pl.col("design") == d)[col].mean() for d in ds]
        p50 = [df.filter(pl.col("design") == d)[col.replace("p99", "p50")].mean() for d in ds]
        x = range(len(ds))
        ax.bar([i - 0.2 for i in x], p50, 0.4, label="p50", color=[COLORS[d] for d in ds], alpha=0.5)
        ax.bar([i + 0.2 for i in x], vals, 0.4, label="p99", color=[COLORS[d] for d in ds])
        ax.set_xticks(list(x), ds, rotation=20)
        ax.set_yscale("log")
        ax.set_title(f"FCT {lab} (µs; light p50, dark p99)", fontsize=9)
    fig.tight_layout()
    ctx.save(fig, "fct")
    fig, ax = plt.subplots(figsize=(6, 3.6))
    tiers = ["tor", "agg", "core"]
    ds = [d for d in DESIGNS if d in df["design"].to_list()]
    for i, d in enumerate(ds):
        v = [df.filter(pl.col("design") == d)[f"queue {t} p99_kb"].mean() for t in tiers]
        ax.bar([j + (i - 1.5) * 0.2 for j in range(3)], v, 0.2, label=d, color=COLORS[d])
    ax.set_xticks(range(3), ["ToR", "aggregation", "core"])
    ax.set_ylabel("p99 of per-port 10 µs queue maxima (KB)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    ctx.save(fig, "queues")


def run(ctx: Context) -> str:
    js = jobs(ctx)
    rs = rows(ctx, js)
    df = frame(rs)
    ctx.write_parquet(df, "benefit")
    plot(ctx, df)
    claims(ctx, df)
    return section(df, settings(ctx.quick), ctx.quick)


def claims(ctx: Context, df: pl.DataFrame) -> None:
    """The slides' claims (charts, no numbers): SFC against PFC, each judged from our runs
    with the margin the claim's text states."""
    def less(a: float | None, b: float | None, factor: float) -> bool:
        return a is not None and b is not None and not math.isinf(a) and (math.isinf(b) or a <= factor * b)

    pfc99, sfc99 = _m(df, "PFC", "bg < 10 KB p99 us"), _m(df, "SFC", "bg < 10 KB p99 us")
    ctx.claim("SFC significantly reduces background FCT (p99 of messages < 10 KB at most half of PFC's)", "chart",
              f"SFC {_ratio(sfc99, pfc99)} of PFC's", less(sfc99, pfc99, 0.5))
    tiers = [(t, _m(df, "PFC", f"queue {t} p99_kb"), _m(df, "SFC", f"queue {t} p99_kb")) for t in ("tor", "agg", "core")]
    ctx.claim("SFC significantly reduces in-network queueing (p99 queue at every tier at most half of PFC's)", "chart",
              "; ".join(f"{t} {_ratio(s, p)}" for t, p, s in tiers), all(less(s, p, 0.5) for _, p, s in tiers))
    pi, si = _m(df, "PFC", "incast ct p99 us"), _m(df, "SFC", "incast ct p99 us")
    ctx.claim("SFC does not hurt incast FCT (incast completion p99 at most 10 % above PFC's)", "chart",
              f"SFC {_ratio(si, pi)} of PFC's", less(si, pi, 1.1))


def _m(df: pl.DataFrame, design: str, col: str) -> float | None:
    v = df.filter(pl.col("design") == design)[col].to_list()
    v = [x for x in v if x is not None]
    return sum(v) / len(v) if v else None


def _ratio(a: float | None, b: float | None) -> str:
    if a is None or b is None or b == 0:
        return "–"
    if math.isinf(a) or math.isinf(b):
        return "– (a percentile falls on an unfinished message)"
    return f"{a / b:.2f}×"


def why(df: pl.DataFrame, ds: list[str]) -> list[str]:
    """The measured mechanisms behind the differences, one line each."""
    out = ["Mechanisms, as measured in these runs:", ""]
    if "PFC" in ds:
        out.append(f"- PFC: {_m(df, 'PFC', 'pause frames'):,.0f} PAUSE frames, {fmt(_m(df, 'PFC', 'paused ms'), 1)} ms of paused "
                   "(port, priority) time in total; the incasts' backlog spreads upstream (aggregation-tier p99 queue "
                   f"{fmt(_m(df, 'PFC', 'queue agg p99_kb'))} KB, core {fmt(_m(df, 'PFC', 'queue core p99_kb'))} KB) and "
                   "background messages that share a paused port wait behind it. "
                   + (f"Nothing is dropped, but pauses last longer than RoCE's local ACK timeout (`rto`), which fires "
                      f"{_m(df, 'PFC', 'timeouts'):,.0f} times: {_m(df, 'PFC', 'retransmissions'):,.0f} frames resent, "
                      f"{_m(df, 'PFC', 'duplicates'):,.0f} arriving as duplicates, load the paused network carries on top."
                      if _m(df, 'PFC', 'timeouts') else
                      "Nothing is dropped, and no pause outlasts RoCE's local ACK timeout (`rto`, default 4.096 µs × 2^14 = "
                      "67.1 ms, perftest's; with 1 ms it fired 334,757 times in the full run of 7c18914 and resent "
                      "414,386 frames)."))
    if "SFC" in ds:
        out.append(f"- SFC: {_m(df, 'SFC', 'sfc signals'):,.0f} signals ({_m(df, 'SFC', 'sfc suppressed'):,.0f} enqueues "
                   "suppressed) pause the flows that fill a queue at their sources, so the backlog stays at the hosts and the "
                   f"receivers' ToR ports (ToR p99 {fmt(_m(df, 'SFC', 'queue tor p99_kb'))} KB) and never builds in the "
                   f"aggregation and core tiers (p99 {fmt(_m(df, 'SFC', 'queue agg p99_kb'))} / "
                   f"{fmt(_m(df, 'SFC', 'queue core p99_kb'))} KB); egress drops {_m(df, 'SFC', 'drops buffer'):,.0f}.")
    if "SFC proxy" in ds:
        out.append(f"- SFC with the proxy: each of the {_m(df, 'SFC proxy', 'sfc proxied'):,.0f} proxied signals becomes a PFC "
                   "PAUSE to the source's NIC, which stops every flow of the data class on that host, not only the signalled "
                   f"one ({fmt(_m(df, 'SFC proxy', 'paused ms'), 1)} ms of NIC pause in total): the background's short messages "
                   "from a host that also sends incast data wait behind the pause — the slides' \"small chance for "
                   "head-of-line blocking at sender NIC\", which at 8% incast load on 120 of 320 senders per incast is not "
                   "small here.")
    if "DCQCN lossy" in ds:
        out.append(f"- DCQCN alone: {_m(df, 'DCQCN lossy', 'drops buffer'):,.0f} egress drops and "
                   f"{_m(df, 'DCQCN lossy', 'retransmissions'):,.0f} go-back-N resends; ToR queues up to "
                   f"{fmt(_m(df, 'DCQCN lossy', 'queue tor max_kb'), 0)} KB (the egress pool's dynamic threshold).")
    return out


def section(df: pl.DataFrame, s: dict[str, Any], quick: bool) -> str:
    ds = [d for d in DESIGNS if d in df["design"].to_list()]
    fan = s["fan_in"]
    gap = 1e6 / 1e6 * (fan * INCAST_B * 8 / (INCAST_LOAD * HOSTS * LINK_BPS) * 1e6)
    drain = fan * INCAST_B * 8 / LINK_BPS * 1e6
    head = ["design"] + [f"{b[0]} p50 / p99 (n)" for b in BUCKETS] + ["incast msg p50 / p99", "incast done p50 / p99 (n, open)"]
    body = []
    for d in ds:
        row = [d]
        for b in BUCKETS:
            k = f"bg {b[0]}"
            row.append(f"{fmt(_m(df, d, k + ' p50 us'))} / {fmt(_m(df, d, k + ' p99 us'))} ({_m(df, d, k + ' n'):,.0f}"
                       + (f", {_m(df, d, k + ' unfinished'):,.0f} open" if _m(df, d, k + " unfinished") else "") + ")")
        row.append(f"{fmt(_m(df, d, 'incast msg p50 us'))} / {fmt(_m(df, d, 'incast msg p99 us'))}")
        row.append(f"{fmt(_m(df, d, 'incast ct p50 us'))} / {fmt(_m(df, d, 'incast ct p99 us'))} ({_m(df, d, 'incasts'):.0f}, {_m(df, d, 'incasts unfinished'):.0f})")
        body.append(row)
    qhead = ["design"] + [f"{t} mean / p99 / max KB" for t in ("ToR", "agg", "core")] + ["PAUSE frames", "paused (ms, Σ ports)", "egress drops", "SFC signals (suppressed, proxied)", "go-back-N resends"]
    qbody = []
    for d in ds:
        row = [d]
        for t in ("tor", "agg", "core"):
            row.append(f"{fmt(_m(df, d, f'queue {t} mean_kb'))} / {fmt(_m(df, d, f'queue {t} p99_kb'))} / {fmt(_m(df, d, f'queue {t} max_kb'), 0)}")
        row += [f"{_m(df, d, 'pause frames'):,.0f}", fmt(_m(df, d, "paused ms"), 2), f"{_m(df, d, 'drops buffer'):,.0f}",
                f"{_m(df, d, 'sfc signals'):,.0f} ({_m(df, d, 'sfc suppressed'):,.0f}, {_m(df, d, 'sfc proxied'):,.0f})",
                f"{_m(df, d, 'retransmissions'):,.0f}"]
        qbody.append(row)

    def claim_fct(bucket: str) -> str:
        pfc50, pfc99 = _m(df, "PFC", f"bg {bucket} p50 us"), _m(df, "PFC", f"bg {bucket} p99 us")
        parts = []
        for d in ("SFC", "SFC proxy"):
            if d in ds:
                parts.append(f"{d}: p50 {_ratio(_m(df, d, f'bg {bucket} p50 us'), pfc50)}, p99 {_ratio(_m(df, d, f'bg {bucket} p99 us'), pfc99)} of PFC's")
        return "; ".join(parts)

    def claim_q() -> str:
        parts = []
        for t in ("tor", "agg", "core"):
            parts.append(f"{t}: PFC p99 {fmt(_m(df, 'PFC', f'queue {t} p99_kb'))} KB, SFC {fmt(_m(df, 'SFC', f'queue {t} p99_kb'))} KB, "
                         f"proxy {fmt(_m(df, 'SFC proxy', f'queue {t} p99_kb'))} KB")
        return "; ".join(parts)

    md = [
        f"Setting: the 320-host three-tier network (see the family's settings). Background: every host a Poisson source "
        f"at {BG_LOAD:.0%} of its link rate (wire bytes), sizes from the Google RPC distribution (`google_rpc_2008`, the "
        "same points as Homa's W3; pl2 samples sizes by linear interpolation within a CDF step), destinations uniform over "
        f"the other hosts. Incast (`kind = \"poisson_incast\"`): {fan}-to-1 incasts of {INCAST_B // 1000} KB messages at Poisson "
        f"times, receiver and senders uniform, payload = {INCAST_LOAD:.0%} of 320 × 100 Gbps: one incast every "
        f"{gap:.1f} µs on average, each needing ≥ {drain:,.0f} µs of the receiver's link, so about {drain / gap:.0f} overlap. "
        f"Arrivals until {s['stop'] / 1000:g} ms; statistics over messages that arrive in [{s['warmup'] / 1000:g}, "
        f"{s['stop'] / 1000:g}) ms, run until all are delivered or {(s['stop'] + s['drain']) / 1000:g} ms (an unfinished "
        "message counts as ∞ in its percentiles and is counted as open). FCT: from the send call to the last byte's "
        "delivery (µs, nearest-rank percentiles). Incast done: one incast's completion, its first arrival to its last "
        "message's delivery.",
        "",
        table(head, body),
        "",
        "Queue depth: every switch egress port's largest byte count in each 10 µs window of the measurement span (pl2's "
        "`ports` table; a port without a row in a window held nothing), by the tier of the switch that owns the port: the "
        "mean and p99 over (port, window) and the largest. It is a per-window maximum, not a time average: the mean "
        "over-states the time-weighted mean by the variation within a window. PAUSE frames and paused time: summed over "
        "all ports and priorities (with the proxy they are the proxied PAUSEs to NICs). Egress drops: frames the egress "
        "pool refused.",
        "",
        table(qhead, qbody),
        "",
        "| slide claim | slides | ours |",
        "|---|---|---|",
        "| \"SFC can significantly reduce FCT for background traffic\" (< 10 KB) | bar charts, no numbers in the text | "
        + claim_fct("< 10 KB") + " |",
        "| same, 10 KB – 1 MB | – | " + claim_fct("10 KB – 1 MB") + " |",
        "| same, > 1 MB | – | " + claim_fct("> 1 MB") + " |",
        "| \"SFC can significantly reduce queueing in the network\" | chart only | " + claim_q() + " |",
        "| \"SFC does not negatively affect the incast FCT\" | chart only | incast message p99: "
        + ", ".join(f"{d} {fmt(_m(df, d, 'incast msg p99 us'))} µs" for d in ds) + "; incast completion p99: "
        + ", ".join(f"{d} {fmt(_m(df, d, 'incast ct p99 us'))} µs" for d in ds) + " |",
        "| (not in the slides) egress drops under SFC | \"we can have egress drops\" | "
        + ", ".join(f"{d} {_m(df, d, 'drops buffer'):,.0f}" for d in ds) + " frames |",
        "",
        *why(df, ds),
    ]
    if quick:
        md.insert(0, f"*Quick mode: {fan}-to-1 incasts and {s['stop'] / 1000:g} ms of arrivals; not the committed numbers.*\n")
    else:
        md.insert(0, f"*Size: {(s['stop'] - s['warmup']) / 1000:g} ms of measured arrivals, one seed — what this 2-core machine, "
                  "shared with two other jobs (load average ≈ 11), ran in the time there was. The counts (n) in the table are "
                  "what the percentiles rest on: every measured incast completed, the short-message percentiles rest on "
                  "hundreds of thousands of messages, the > 1 MB bucket on a few hundred, so its p99 is the coarsest number "
                  "here. A longer run is `settings()` in `python/pl2/reproduce/sfc/benefit.py`.*\n")
    return "\n".join(md)
