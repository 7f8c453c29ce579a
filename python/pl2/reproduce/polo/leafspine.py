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
from pl2.reproduce.polo.common import COLORS, FRAME_WIRE, PORT_LIMIT_B, build, counters, pct

NAME = "polo-leafspine"
TITLE = "Polo: leaf–spine at 0.5 load, web search and data mining (p99 slowdown by size)"
LEAVES, SPINES, PER_LEAF = 4, 12, 25
#: Threads per host: enough that no flow waits for one. Homa, NDP and pHost release the
#: sending thread at once; pl2's Polo holds it until the flow's last packet is handed to
#: the NIC, so with one thread a host's Polo flows would go one after another (a 3.7 KB
#: flow measured 377 ms behind a long one): the slides' designs start every flow when it
#: arrives.
THREADS = 256
#: The four designs, then diagnostics (not the slides'): Polo without its pause
#: mechanism, with the pause held until an active flow finishes, and both Polo and Polo
#: without pause with D's growth bounded (`d_bound = "validated"`, RFC 7661), the causal
#: check of the measured mechanism of Polo's tail (`d_mechanism`).
RUN = ["Polo", "Homa", "NDP", "pHost", "Polo no pause", "Polo pause to finish", "Polo D bounded", "Polo no pause D bounded"]
#: The bounded variants and the unbounded run each is compared with.
BOUNDED = {"Polo D bounded": "Polo", "Polo no pause D bounded": "Polo no pause"}
#: Full frames one egress port's buffer holds: a flow whose D is above it can fill the
#: port on its own, whatever the other flows do.
BUFFER_FRAMES = PORT_LIMIT_B // FRAME_WIRE
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
        for d in RUN:
            wl = {"kind": "poisson", "load": 0.5, **w, "stop": f"{until:g}ms"}
            sc = build(f"{NAME}-{wname.replace(' ', '')}-{d.replace(' ', '')}", d, topo(), [wl], duration_ms=dur, link_delay="6250ns",
                       warmup_ms=warm, until_ms=until, stop_when_delivered=True, window="1ms", threads=THREADS)
            if d.startswith("Polo"):
                # D at every epoch's end (probe `polo_d`) and where each frame was dropped:
                # the mechanism of Polo's tail (`d_diagnostic`).
                sc = sc.with_overrides({"metrics.probes": True, "metrics.drop_records": True})
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
                     "polo_pauses": int((res.summary.get("polo") or {}).get("pauses", 0)),
                     **counters(res.summary, d), **d_diagnostic(res, d, m)})
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
        for i, d in enumerate(RUN):
            ys = []
            for lab in labels:
                g = bf.filter((pl.col("workload") == w) & (pl.col("design") == d) & (pl.col("bin") == lab))
                v = [x for x in g["p99_slowdown"].to_list() if x is not None]
                ys.append(sum(v) / len(v) if v and all(math.isfinite(x) for x in v) else float("nan"))
            width = 0.9 / len(RUN)
            xs = [j + (i - (len(RUN) - 1) / 2) * width for j in range(len(labels))]
            a.bar(xs, ys, width=width, color=COLORS[d], label=d)
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
    agg_fct: dict = {}
    for w in workloads:
        for d in RUN:
            g = df.filter((pl.col("workload") == w) & (pl.col("design") == d))
            agg[(w, d)] = mean(g["p99_slowdown"].to_list())
            trows.append([w, d, int(g["flows"].sum()), int(g["unfinished"].sum()), _f(mean(g["p50_slowdown"].to_list())),
                          _f(agg[(w, d)]), _f(mean(g["p99_fct_us"].to_list()), 0), int(g["drops"].sum()), int(g["trims"].sum()),
                          int(g["timeouts"].sum()), int(g["retransmissions"].sum()), int(g["aborted"].sum())])
            agg_fct[(w, d)] = mean(g["p99_fct_us"].to_list())
            for lab in labels:
                b = bf.filter((pl.col("workload") == w) & (pl.col("design") == d) & (pl.col("bin") == lab))
                brows.append([w, d, lab, int(b["flows"].sum()), int(b["unfinished"].sum()), _f(mean(b["p99_slowdown"].to_list()))])
    for w in workloads:
        p = agg[(w, "Polo")]
        rh, rp = agg[(w, "Homa")] / p if p else float("nan"), agg[(w, "pHost")] / p if p else float("nan")
        ctx.claim(f"{w}: Polo's p99 slowdown 2.2× better than Homa's and 3.1× better than pHost's (each ratio within ±30 %)",
                  "2.2× / 3.1×", f"{_ratio(agg[(w, 'Homa')], p)} / {_ratio(agg[(w, 'pHost')], p)}",
                  abs(rh - 2.2) <= 0.66 and abs(rp - 3.1) <= 0.93 if math.isfinite(rh) and math.isfinite(rp) else False)
    claim = []
    for w in workloads:
        p = agg[(w, "Polo")]
        f = agg_fct[(w, "Polo")]
        claim.append(f"{w}: p99 slowdown Homa / Polo = {_ratio(agg[(w, 'Homa')], p)}, pHost / Polo = {_ratio(agg[(w, 'pHost')], p)}; "
                     f"p99 FCT Homa / Polo = {_ratio(agg_fct[(w, 'Homa')], f)}, pHost / Polo = {_ratio(agg_fct[(w, 'pHost')], f)} "
                     f"(Polo without pause: p99 slowdown {_f(agg[(w, 'Polo no pause')])}; with the pause until an active flow "
                     f"finishes: {_f(agg[(w, 'Polo pause to finish')])}); with D bounded (not in the slides): Homa / Polo = "
                     f"{_ratio(agg[(w, 'Homa')], agg[(w, 'Polo D bounded')])}, pHost / Polo = {_ratio(agg[(w, 'pHost')], agg[(w, 'Polo D bounded')])}")
    why = ["", "**Where ours differs, and why (measured).**", ""]
    for w in workloads:
        g = df.filter((pl.col("workload") == w) & (pl.col("design") == "Polo"))
        small = {d: mean(bf.filter((pl.col("workload") == w) & (pl.col("design") == d) & (pl.col("bin") == labels[0]))["p99_slowdown"].to_list())
                 for d in RUN}
        why.append(
            f"- {w}: Polo paused {int(g['polo_pauses'].sum())} flows over {g.height} seed(s); its p99 slowdown is "
            f"{_f(agg[(w, 'Polo')])} with the pause mechanism (a paused flow resumes at an unmarked epoch while D has room), "
            f"{_f(agg[(w, 'Polo pause to finish')])} when a paused flow waits for an active one to finish, and "
            f"{_f(agg[(w, 'Polo no pause')])} without pause (flows ≤ 100 KB: {_f(small['Polo'])}, "
            f"{_f(small['Polo pause to finish'])} and {_f(small['Polo no pause'])}; Homa {_f(small['Homa'])}, NDP "
            f"{_f(small['NDP'])}, pHost {_f(small['pHost'])}). Waiting for an active flow to finish, a short flow that "
            "reaches a receiver after a mark while a long flow is active there waits for the long one.")
        why.append(residual_gap(w, agg, bf))
        why.append(d_mechanism(w, df))
        why.append(bound_effect(w, df, bf, agg))
    hu = df.filter(pl.col("design") == "Homa")
    why.append(
        "- Unfinished flows count as infinitely slow, so a design with any unfinished flow in a size bin has no finite "
        f"p99 there. Homa left {int(hu['unfinished'].sum())} flows unfinished, {int(hu['aborted'].sum())} of them aborted "
        "by its receiver after 5 RESEND rounds without an answer; a message all of whose unscheduled packets are "
        "dropped is never heard of at all (the edge and large-incast sections count those from the receiver's trace).")
    md = [
        f"Setting: leaf–spine of {LEAVES} leaves × {PER_LEAF} hosts and {SPINES} spines, every link 1 Gbps "
        f"(oversubscription {PER_LEAF}:{SPINES} = {PER_LEAF / SPINES:.2f}:1; at 0.5 load and {LEAVES - 1}/{LEAVES} of the "
        f"traffic leaving its rack the mean uplink load is {PER_LEAF * 0.5 * (LEAVES - 1) / LEAVES / SPINES:.2f}); host "
        "links and uplinks 6.25 µs (25 µs one way between racks). Poisson arrivals at every host at 0.5 of its link (wire "
        f"bytes), destinations uniform over the other hosts; flows arriving in [{warm:g}, {until:g}) ms are measured (arrivals stop at {until:g} ms), "
        f"the run goes on until every flow is delivered (at most {dur / 1000:g} s); an unfinished flow counts as infinitely slow. Slowdown "
        "= FCT / the flow's ideal FCT alone in the network. The slides compare p99 tail latency; we give p99 slowdown "
        "(FCT varies over five orders of magnitude with size) overall and by size, and p99 FCT. Every host has "
        f"{THREADS} threads so that no flow waits for one (pl2's Polo holds a sending thread until the flow's last "
        "packet is handed over; the others release it at once). `Polo no pause` and `Polo pause to finish` are "
        "diagnostics, not designs of the slides: Polo with `pause = false`, and with `pause_end = \"flow_finish\"` (a "
        "paused flow resumes only when an active flow finishes, pl2's reading before issue 20's measurement). "
        "`Polo D bounded` and `Polo no pause D bounded` (\"Polo, D bounded\": not in the slides) are Polo and Polo "
        "without pause with `d_bound = \"validated\"`: an unmarked epoch grows D only if at least half of D arrived "
        "in it (RFC 7661's validation of cwnd, `docs/model.md` \"Polo\"), the causal check of the mechanism measured "
        "below; the slides' rule (no bound) stays the headline.",
        "",
        table(["workload", "design", "flows", "unfinished", "p50 slowdown", "p99 slowdown", "p99 FCT µs", "drops", "trims",
               "timeouts", "retransmissions", "aborted"], trows),
        "",
        table(["workload", "design", "size", "flows", "unfinished", "p99 slowdown"], brows),
        "",
        "| slide claim | ours |",
        "|---|---|",
        "| \"Polo improves the tail latency by 2.2× and 3.1×\" over Homa and pHost (ratios > 1: Polo better) | " + "; ".join(claim) + " |",
        *why,
    ]
    return "\n".join(md)


def residual_gap(w: str, agg: dict, bf: pl.DataFrame) -> str:
    """The part of Polo's tail that the pause does not explain: Polo without pause
    against the best of Homa, NDP and pHost, overall and in the size bin where the ratio
    is largest (p99 slowdown, mean over seeds; bins with an unfinished flow are left out)."""
    def bin_p99(d: str, lab: str) -> float:
        v = bf.filter((pl.col("workload") == w) & (pl.col("design") == d) & (pl.col("bin") == lab))["p99_slowdown"].to_list()
        v = [x for x in v if x is not None]
        return sum(v) / len(v) if v else math.nan

    others = [d for d in ("Homa", "NDP", "pHost") if math.isfinite(agg[(w, d)])]
    best = min(others, key=lambda d: agg[(w, d)]) if others else None
    nop = agg[(w, "Polo no pause")]
    if best is None or not math.isfinite(nop) or nop <= agg[(w, best)]:
        return f"- {w}: without the pause Polo's p99 slowdown ({_f(nop)}) is no worse than the other designs'."
    ratios = []
    for _, _, lab in BINS:
        a, b = bin_p99("Polo no pause", lab), bin_p99(best, lab)
        if math.isfinite(a) and math.isfinite(b) and b > 0:
            ratios.append((a / b, lab, a, b))
    worst = max(ratios) if ratios else None
    by_bin = (f"; by size the gap is largest for flows of {worst[1]} ({_f(worst[2])} against {_f(worst[3])}, "
              f"{worst[0]:.3g}×)") if worst else ""
    return (f"- {w}: without the pause Polo's p99 slowdown is still {nop / agg[(w, best)]:.3g}× {best}'s, the best of the "
            f"others ({_f(nop)} against {_f(agg[(w, best)])}){by_bin}. The pause does not explain this part.")


def d_diagnostic(res, design: str, m: pl.DataFrame) -> dict:
    """For a Polo run: D at the epochs' ends (each receiver's D, summed over its active
    flows: probe `polo_d`); how many of its dropped data frames were dropped while the
    receiver of the dropped frame's flow had D above BUFFER_FRAMES (its last D before the
    drop); and the flows of 100 KB–1 MB at or above that bin's p99 slowdown (`m`: the
    measured flows): how many lost packets at a port where, meanwhile, a packet of
    another flow whose receiver had D above BUFFER_FRAMES was dropped, and how many
    more had a receiver whose D (median over their life, their own D included) was above
    BUFFER_FRAMES. Nulls for the other designs."""
    keys = ("d_p50", "d_p99", "d_max", "data_drops", "drops_d_over_buffer", "tail_flows", "tail_lost_beside_big_d", "tail_big_receiver_d",
            "tail_big_sender_peer_d")
    if not design.startswith("Polo"):
        return dict.fromkeys(keys)
    pr = res.probes.filter(pl.col("name") == "polo_d").select("time_ps", pl.col("host").alias("dst"), pl.col("value").alias("d")).sort("time_ps")
    drops = res.drops.filter(pl.col("data")).select("time_ps", "dst", "port", "msg_id").sort("time_ps")
    at = drops.join_asof(pr, on="time_ps", by="dst", strategy="backward", check_sortedness=False).with_columns(pl.col("d").fill_null(0))
    d = pr["d"]
    b = m.filter((pl.col("size_bytes") > BINS[1][0]) & (pl.col("size_bytes") <= BINS[1][1]))
    sl = [float(x) if x is not None else math.inf for x in b["slowdown"].to_list()]
    p99 = pct(sl, 0.99)
    tail = b.filter(pl.col("slowdown").is_null() | (pl.col("slowdown") >= p99)) if p99 is not None else b.clear()
    lost_beside, big_rx, big_peer = 0, 0, 0
    for f in tail.iter_rows(named=True):
        end = f["finish_ps"] if f["finish_ps"] is not None else 2**63
        ports = at.filter(pl.col("msg_id") == f["id"])["port"].unique().to_list()
        beside = at.filter(pl.col("port").is_in(ports) & (pl.col("msg_id") != f["id"]) & pl.col("time_ps").is_between(f["start_ps"], end)
                           & (pl.col("d") > BUFFER_FRAMES))
        rx = pr.filter((pl.col("dst") == f["dst"]) & pl.col("time_ps").is_between(f["start_ps"], end))["d"].median()
        if beside.height:
            lost_beside += 1
        elif rx is not None and float(rx) > BUFFER_FRAMES:
            big_rx += 1
        elif _sender_peer_big_d(res.messages, pr, f, end):
            big_peer += 1
    return {"d_p50": float(d.quantile(0.5) or 0.0), "d_p99": float(d.quantile(0.99) or 0.0), "d_max": float(d.max() or 0.0),
            "data_drops": at.height, "drops_d_over_buffer": int((at["d"] > BUFFER_FRAMES).sum()),
            "tail_flows": tail.height, "tail_lost_beside_big_d": lost_beside, "tail_big_receiver_d": big_rx,
            "tail_big_sender_peer_d": big_peer}


def _sender_peer_big_d(msgs: pl.DataFrame, pr: pl.DataFrame, f: dict, end: int) -> bool:
    """Whether another flow of `f`'s sender, alive meanwhile, had a receiver whose D
    (median over the overlap) was above BUFFER_FRAMES: a Polo sender sends each flow's
    packets as its receiver drives them, so such a flow takes the sender's link in
    proportion to its receiver's D."""
    peers = msgs.filter((pl.col("src") == f["src"]) & (pl.col("id") != f["id"]) & (pl.col("start_ps") < end)
                        & (pl.col("finish_ps").fill_null(2**63) > f["start_ps"]))
    for g in peers.iter_rows(named=True):
        lo, hi = max(f["start_ps"], g["start_ps"]), min(end, g["finish_ps"] if g["finish_ps"] is not None else 2**63)
        d = pr.filter((pl.col("dst") == g["dst"]) & pl.col("time_ps").is_between(lo, hi))["d"].median()
        if d is not None and float(d) > BUFFER_FRAMES:
            return True
    return False


def d_mechanism(w: str, df: pl.DataFrame) -> str:
    """The measured mechanism of Polo's residual tail: D far above what a port holds, and
    the drops that happen there (Polo without pause, all seeds)."""
    g = df.filter((pl.col("workload") == w) & (pl.col("design") == "Polo no pause"))
    ph = df.filter((pl.col("workload") == w) & (pl.col("design") == "pHost"))
    drops, big = int(g["data_drops"].sum()), int(g["drops_d_over_buffer"].sum())
    share = f"{100 * big / drops:.0f} %" if drops else "–"
    peer = int(g["tail_big_sender_peer_d"].sum())
    rest = int(g["tail_flows"].sum() - g["tail_lost_beside_big_d"].sum() - g["tail_big_receiver_d"].sum()) - peer
    seeds = "seed" + ("s " if g.height > 1 else " ") + ", ".join(str(x) for x in sorted(g["seed"].to_list()))
    return (f"- {w}, the measured mechanism of that gap: Polo's D is not bounded by what the network holds. At the end "
            f"of an epoch a receiver's D (summed over its active flows) has median {g['d_p50'].mean():.0f}, p99 "
            f"{g['d_p99'].mean():.0f} and maximum {g['d_max'].max():.0f} packets ({seeds}: medians and p99s averaged, the maximum over them), "
            f"where one 86 KB port holds {BUFFER_FRAMES} full frames and a 1 Gbps path about 8 more. D grows by one "
            "every epoch without a mark (an epoch is one round trip of control packets: tens of µs here), and a "
            "flow alone on its path at its sender's line rate is never marked (its bottleneck is its own NIC, which "
            "does not mark): its D grows by thousands per second for as long as it lasts. When another flow then "
            "shares a port with it, D ← D − ⌈M/2⌉ takes at most half the packets of one epoch per epoch, so the old "
            "flow keeps that port's queue at its 86 KB limit for thousands of epochs: the new flow, driven at D's "
            "floor, gets one packet per queueing delay, and loses packets at the full port with the old flow's. "
            f"Of Polo's {drops} data drops (no pause, {seeds}) {big} ({share}) came while the dropped frame's "
            f"receiver had D above {BUFFER_FRAMES}; pHost, whose receivers send one token per packet time, dropped "
            f"{int(ph['drops'].sum())}. Of the {int(g['tail_flows'].sum())} flows of 100 KB–1 MB at or above that bin's "
            f"p99 slowdown ({seeds}), {int(g['tail_lost_beside_big_d'].sum())} lost packets at a port (their receiver's, "
            "or a ToR uplink their flow hashed onto) where a flow whose receiver's D was above "
            f"{BUFFER_FRAMES} lost packets meanwhile, and {int(g['tail_big_receiver_d'].sum())} more shared a receiver whose D "
            f"(median over the flow's life) was above {BUFFER_FRAMES}; of the others, {peer} shared their sender with a concurrent flow "
            f"whose receiver's D (median over the overlap) was above {BUFFER_FRAMES} (a Polo sender sends each flow's packets as "
            f"its receiver drives them, so that flow takes the sender's link in proportion to its D), and {rest} had none of "
            f"these. Recovery 2 sent {int(g['idle_losses'].sum())} loss "
            f"packets and receivers got {int(g['duplicates'].sum())} data packets twice: two epochs of control packets at "
            "high priority can be shorter than a data packet's wait in a full port, and recovery 2 then asks again for "
            "a packet still on its way.")


def bound_effect(w: str, df: pl.DataFrame, bf: pl.DataFrame, agg: dict) -> str:
    """What bounding D (`d_bound = "validated"`) changes, for Polo and Polo without pause:
    p99 slowdown overall and by size, D at the epochs' ends, data drops and the share at
    a receiver whose D exceeded a port's buffer, recovery 2's loss packets and
    duplicates (all seeds)."""
    def bin_p99(d: str, lab: str) -> str:
        v = bf.filter((pl.col("workload") == w) & (pl.col("design") == d) & (pl.col("bin") == lab))["p99_slowdown"].to_list()
        v = [x for x in v if x is not None]
        return _f(sum(v) / len(v)) if v else "–"

    def facts(d: str) -> str:
        g = df.filter((pl.col("workload") == w) & (pl.col("design") == d))
        drops, big = int(g["data_drops"].sum()), int(g["drops_d_over_buffer"].sum())
        share = f" ({100 * big / drops:.0f} %)" if drops else ""
        bins = ", ".join(f"{lab} {bin_p99(d, lab)}" for _, _, lab in BINS)
        return (f"p99 slowdown {_f(agg[(w, d)])} ({bins}); D at epoch ends median {g['d_p50'].mean():.0f}, p99 "
                f"{g['d_p99'].mean():.0f}, max {g['d_max'].max():.0f}; {drops} data drops, {big}{share} at a receiver with D > "
                f"{BUFFER_FRAMES}; recovery 2 loss packets {int(g['idle_losses'].sum())}, duplicates {int(g['duplicates'].sum())}; "
                f"unfinished {int(g['unfinished'].sum())}")

    others = {d: agg[(w, d)] for d in ("Homa", "NDP", "pHost")}
    parts = [f"{d}: {facts(d)}" for pair in BOUNDED.items() for d in (pair[1], pair[0])]
    best = min((d for d in others if math.isfinite(others[d])), key=lambda d: others[d], default=None)
    ref = f"; best of the others {best} {_f(others[best])}" if best else ""
    nb = df.filter((pl.col("workload") == w) & (pl.col("design") == "Polo no pause D bounded"))
    r2 = (f" With D bounded and no pause, recovery 2 still sent {int(nb['idle_losses'].sum())} loss packets against "
          f"{int(nb['data_drops'].sum())} data drops: where it fires without a loss, D's size is not the cause.")
    return (f"- {w}, the causal check (not in the slides): D bounded by RFC 7661's validation (grow only in an epoch "
            "that used half of D). " + ". ".join(parts) + ref + "." + r2 + " Homa / Polo and pHost / Polo p99 slowdown with D "
            f"bounded: {_ratio(others['Homa'], agg[(w, 'Polo D bounded')])} and {_ratio(others['pHost'], agg[(w, 'Polo D bounded')])} "
            f"(slides 2.2× and 3.1×; without the bound {_ratio(others['Homa'], agg[(w, 'Polo')])} and "
            f"{_ratio(others['pHost'], agg[(w, 'Polo')])}).")


def _f(x: float, digits: int = 2) -> str:
    return "∞ (unfinished)" if math.isinf(x) else "–" if math.isnan(x) else f"{x:.{digits}f}"


def _ratio(a: float, b: float) -> str:
    if math.isinf(a) or math.isinf(b) or math.isnan(a) or math.isnan(b) or b == 0:
        return "– (a p99 falls on an unfinished flow)"
    r = a / b
    return f"{r:.3g}×" if r >= 1 else f"{r:.3g}× (Polo {1 / r:.3g}× worse)"
