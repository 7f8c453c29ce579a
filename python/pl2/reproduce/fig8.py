"""Fig. 8: W3–W5 trace replay (§6.3). (a–c) raw Ethernet over PL2 in a 3-way incast
against raw Ethernet (optimal) between two servers; (d–f) the same 3-way incast with TCP
over PL2 (congestion control off, segments scheduled by PL2) against TCP Cubic.

Messages arrive open loop (Poisson) with sizes from Homa's W3 (Google all-RPC), W4
(Facebook Hadoop) and W5 (DCTCP web search). Each sending server replays them through
a fixed pool of threads: a message that arrives while all of its server's threads are
busy waits for one, and its one-way latency (arrival at the sending application to
delivery at the receiving one) includes that wait.

- *PL2, 3-way incast*: hosts 0, 1, 2 with 11 threads each send to host 3, with
  Algorithm 1 as written (decrement at ingress, the default) and with the two changes
  that close its holes (decrement at dequeue and the improved unsolicited admission).
- *Raw Ethernet (optimal)*: host 0 alone, with the same 33 threads, sends to host 3 at
  the same total load; no contention, no transport control, so its latencies are the
  paper's "close to optimal" reference.

The paper does not give W3–W5's offered load, only that the incast achieved 40–90 Gbps:
we sweep the total offered load into host 3 (a fraction of its 100 Gbps link, counted in
wire bytes as every pl2 load is) and report where the paper's throughputs fall. TCP runs
one connection per (thread, destination) with the TCP defaults (Cubic: 1 ms minimum
RTO, SACK); TCP over PL2 uses the same PL2 settings as the raw PL2 scheme it is named
after.
"""

from __future__ import annotations

import math
import textwrap

import polars as pl

from pl2.reproduce.common import Context, Job, buffer_drops, fmt_ci, fmt_us, mean_ci, program_drops, scenario, table

NAME = "fig8"
TITLE = "Fig. 8: W3–W5 trace replay, 3-way incast: raw Ethernet over PL2 vs raw optimal (a–c), TCP over PL2 vs TCP Cubic (d–f)"
WORKLOADS = {"w3": "W3 all RPC", "w4": "W4 Hadoop", "w5": "W5 web search"}
THREADS_PER_SENDER = 11
SENDERS = 3
RECEIVER = 3
#: Schemes: transport table, sending hosts, threads per sending host.
PL2 = {"k": 4, "t": 15}
PL2_FIXED = {**PL2, "decrement_at": "dequeue", "improved": True}
INCAST = list(range(SENDERS))
SCHEMES = {
    "pl2": ({"kind": "pl2", **PL2}, INCAST, THREADS_PER_SENDER),
    "pl2 dequeue+improved": ({"kind": "pl2", **PL2_FIXED}, INCAST, THREADS_PER_SENDER),
    "raw optimal": ({"kind": "raw"}, [0], SENDERS * THREADS_PER_SENDER),
    "tcp/pl2": ({"kind": "tcp", "scheduler": "pl2", "pl2": PL2}, INCAST, THREADS_PER_SENDER),
    "tcp/pl2 dequeue+improved": ({"kind": "tcp", "scheduler": "pl2", "pl2": PL2_FIXED}, INCAST, THREADS_PER_SENDER),
    "tcp cubic": ({"kind": "tcp", "cc": "cubic"}, INCAST, THREADS_PER_SENDER),
}
#: Panels: (a–c) raw Ethernet schemes, (d–f) TCP schemes.
PANELS = {
    "raw Ethernet": ["pl2", "pl2 dequeue+improved", "raw optimal"],
    "TCP": ["tcp/pl2", "tcp/pl2 dequeue+improved", "tcp cubic"],
}
#: The paper's Fig. 8 throughputs (Gbps) where its text gives them.
PAPER_GBPS = {("w4", "pl2"): 86.0, ("w4", "raw optimal"): 89.0, ("w3", "tcp/pl2"): 81.0, ("w3", "tcp cubic"): 43.0}


def _scenario(scheme: str, wl: str, load: float, warm: float, until: float, dur: float):
    transport, hosts, threads = SCHEMES[scheme]
    per_host = load / len(hosts)
    workloads = [{"kind": "poisson", "hosts": hosts, "dests": [RECEIVER], "load": per_host, "sizes": wl}]
    sc = scenario(f"fig8-{wl}-{scheme.replace(' ', '-')}-{round(load * 100)}", transport, workloads,
                  warmup_ms=warm, until_ms=until, duration_ms=dur, drop_records=False, stop_when_delivered=False)
    return sc.with_overrides({"network.host.threads": threads})


def run(ctx: Context) -> str:
    # Messages arriving in [warm, until) are measured; the rest of the run lets them
    # finish (those still in flight at the end count as infinitely late in the
    # percentiles: a W4/W5 message of several MB on one blocking PL2 thread takes ms).
    # Windows are per workload so each holds enough messages for a p99: W5's mean
    # message is ~100x W3's.
    windows = {"w3": 10.0, "w4": 50.0, "w5": 200.0}
    if ctx.quick:
        windows = {"w4": 10.0}
    warm, drain = 1.0, 5.0
    loads = [0.5, 0.9] if ctx.quick else [0.3, 0.5, 0.7, 0.9]
    # TCP runs cost more (ACKs; Algorithm 1's losses make the faithful TCP/PL2 runs
    # retransmit heavily): two loads, the middle and the top of the sweep.
    tcp_loads = [0.5, 0.9]
    workloads = list(windows)
    jobs: list[Job] = []
    for wl in workloads:
        for load in loads:
            for scheme in SCHEMES:
                if SCHEMES[scheme][0]["kind"] == "tcp" and load not in tcp_loads:
                    continue
                sc = _scenario(scheme, wl, load, warm, warm + windows[wl], warm + windows[wl] + drain)
                jobs += [Job(sc, {"figure": NAME, "workload": wl, "load": load, "scheme": scheme}, seed, NAME) for seed in ctx.seeds]
    rows = []
    for job, res in zip(jobs, ctx.run_many(jobs), strict=True):
        wl, load, scheme, seed = job.params["workload"], job.params["load"], job.params["scheme"], job.seed
        s = res.summary
        m = s.get("messages") or {}
        lat = m.get("latency_ps") or {}
        rows.append({
            "workload": wl, "load": load, "scheme": scheme, "seed": seed,
            "goodput_gbps": float((s.get("goodput_gbps") or {}).get(f"h{RECEIVER}", 0.0)),
            "p50_us": _us(lat.get("p50")), "p99_us": _us(lat.get("p99")),
            "messages": int(m.get("count", 0)), "unfinished": int(m.get("unfinished", 0)),
            "buffer_drops": buffer_drops(s), "program_drops": program_drops(s),
            "tcp_retransmissions": (s.get("tcp") or {}).get("retransmissions"),
            "tcp_timeouts": (s.get("tcp") or {}).get("timeouts"),
        })
    df = pl.DataFrame(rows)
    ctx.write_parquet(df, "fig8")
    return plot_and_report(ctx, df)


def _us(ps: float | None) -> float:
    """Latency in µs; an undefined percentile (unfinished messages beyond it) is ∞."""
    return float("inf") if ps is None else ps / 1e6


def plot_and_report(ctx: Context, df: pl.DataFrame) -> str:
    """Draws the figure and writes the report section from the runs' table (also used to
    regenerate the committed figure from its committed Parquet)."""
    import matplotlib.pyplot as plt

    workloads = [w for w in WORKLOADS if w in set(df["workload"].to_list())]
    present = set(df["scheme"].to_list())
    agg = {}
    for (wl, load, scheme), g in df.group_by(["workload", "load", "scheme"], maintain_order=True):
        agg[(wl, load, scheme)] = dict(
            good=mean_ci(g["goodput_gbps"].to_list()), p50=mean_ci(g["p50_us"].to_list()), p99=mean_ci(g["p99_us"].to_list()),
            drops=int(g["buffer_drops"].sum() + g["program_drops"].sum()), unfinished=int(g["unfinished"].sum()),
            retx=None if g["tcp_retransmissions"].null_count() == g.height else int(g["tcp_retransmissions"].sum()),
            rto=None if g["tcp_timeouts"].null_count() == g.height else int(g["tcp_timeouts"].sum()),
            messages=int(g["messages"].sum()),
        )
    colors = {"pl2": "tab:blue", "pl2 dequeue+improved": "tab:cyan", "raw optimal": "tab:gray",
              "tcp/pl2": "tab:blue", "tcp/pl2 dequeue+improved": "tab:cyan", "tcp cubic": "tab:red"}
    groups = [(g, [x for x in schemes if x in present]) for g, schemes in PANELS.items()]
    groups = [(g, schemes) for g, schemes in groups if schemes]
    fig, axes = plt.subplots(2 * len(groups), len(workloads), figsize=(5 * len(workloads), 3.8 * 2 * len(groups)), squeeze=False)
    for gi, (group, schemes) in enumerate(groups):
        for j, wl in enumerate(workloads):
            lat_ax, good_ax = axes[2 * gi][j], axes[2 * gi + 1][j]
            loads = sorted({k[1] for k in agg if k[0] == wl})
            for scheme in schemes:
                ran = [x for x in loads if (wl, x, scheme) in agg]
                pts = [agg[(wl, x, scheme)] for x in ran]
                xs = [100 * x for x in ran]
                lat_ax.plot(xs, [p["p99"][0] for p in pts], ls="-", marker="o", color=colors[scheme], label=f"{scheme} p99")
                lat_ax.plot(xs, [p["p50"][0] for p in pts], ls=":", marker=".", color=colors[scheme], label=f"{scheme} p50")
                good_ax.plot(xs, [p["good"][0] for p in pts], marker="o", color=colors[scheme], label=scheme)
            lat_ax.set_yscale("log")
            lat_ax.set_title(f"{WORKLOADS[wl]} ({group})")
            lat_ax.set_ylabel("one-way latency (µs)")
            lo, hi = 100 * min(loads), 100 * max(loads)
            good_ax.plot([lo, hi], [lo * 1500 / 1542, hi * 1500 / 1542], color="k", lw=0.8, ls=":", label="offered (full payloads)")
            for (w, scheme), g in PAPER_GBPS.items():
                if w == wl and scheme in schemes:
                    good_ax.axhline(g, color=colors[scheme], ls="--", lw=1, label=f"paper {scheme}: {g:g} Gbps")
            good_ax.set_ylabel("goodput into the receiver (Gbps)")
            good_ax.set_ylim(0, 100)
            for ax in (lat_ax, good_ax):
                ax.set_xlabel("offered load into the receiver (% of 100 Gbps, wire bytes)")
                ax.legend(fontsize=6)
    seeds = df["seed"].n_unique()
    title = (f"Fig. 8: 3 × {THREADS_PER_SENDER} threads into one receiver (PL2 K = 4, t = 15) vs 1 × 33 threads raw; "
             f"Poisson arrivals; ∞ latencies (unfinished messages) not drawn ({seeds} seed(s))")
    # Wrapped to the figure's width (one workload column in quick mode), so it is never cut.
    fig.suptitle(textwrap.fill(title, width=48 if len(workloads) == 1 else 65 * len(workloads)), fontsize=10)
    fig.tight_layout()
    ctx.save(fig, "fig8")

    trows = []
    for (wl, load, scheme), a in agg.items():
        paper = PAPER_GBPS.get((wl, scheme))
        trows.append([WORKLOADS[wl], f"{100 * load:.0f}", scheme, fmt_ci(*a["good"]), f"{paper:g}" if paper else "–",
                      fmt_us(a["p50"][0]), fmt_us(a["p99"][0]), a["drops"],
                      "–" if a["retx"] is None else f"{a['retx']} / {a['rto']}", f"{a['unfinished']}/{a['messages']}"])

    def drops(scheme: str) -> int:
        return sum(a["drops"] for (_, _, sch), a in agg.items() if sch == scheme)

    def short_of_offered(scheme: str) -> list[str]:
        """Cells where the scheme delivered < 90% of the offered payload rate beyond the
        95% interval (W3–W5 goodput over a window is noisy: heavy-tailed sizes)."""
        out = []
        for (wl, load, sch), a in agg.items():
            offered = 100 * load * 1500 / 1542
            if sch == scheme and a["good"][0] is not None and a["good"][0] + (a["good"][1] or 0.0) < 0.9 * offered:
                out.append(f"{WORKLOADS[wl]} at {100 * load:.0f}% ({a['good'][0]:.1f} of ~{offered:.0f} Gbps)")
        return out

    md = [
        f"Poisson arrivals, sizes from Homa's W3–W5. PL2: hosts 0–2 with {THREADS_PER_SENDER} threads each send to "
        "host 3 (3-way incast), with Algorithm 1 as written (`pl2`: decrement at ingress, the default) and with "
        "decrement at dequeue plus the improved unsolicited admission (`pl2 dequeue+improved`). Raw optimal: host 0 "
        "alone with 33 threads sends to host 3 at the same total load. Latency is one-way from arrival at the sending "
        "application (including any wait for a free thread) to delivery; messages unfinished at the end count as "
        "infinitely late (∞). Goodput is payload into host 3 over the measurement window; drops are frames lost at the "
        "switch (buffer or T rule).",
        "",
        table(["workload", "load %", "scheme", "goodput Gbps", "paper Gbps", "p50 µs", "p99 µs", "drops", "TCP retx / RTOs", "unfinished/messages"], trows),
        "",
        "**Where we differ and why.**",
        "- The paper does not state W3–W5's offered load; it reports 40–90 Gbps of incast throughput and, for W4, "
        "86 Gbps (PL2) against 89 Gbps (raw optimal). We sweep the offered load instead; compare the goodput column "
        "with those figures to see which load they correspond to.",
        f"- Algorithm 1 as written lost {drops('pl2')} frames over this sweep; with decrement at dequeue and the "
        f"improved admission, {drops('pl2 dequeue+improved')}. The cause is the low-load optimisation: 33 threads each "
        "see a small chosen slot and send unsolicited, and with the decrement at ingress a frame stops counting when it "
        "enters the switch, so the T rule never sees the receiver queue those bursts build. The paper reports no loss "
        "here; its switch program and sender are not published, so we cannot say which detail differs.",
    ]
    ctx.claim("PL2 (Algorithm 1) loses no frame on W3–W5 at any load", "no loss", f"{drops('pl2')} drops", drops("pl2") == 0)
    w4 = [(load, a) for (wl, load, sch), a in agg.items() if wl == "w4" and sch == "raw optimal" and a["good"][0] is not None]
    if w4:
        load, a = min(w4, key=lambda x: abs(x[1]["good"][0] - 89.0))
        b = agg.get(("w4", load, "pl2"))
        r = b["good"][0] / a["good"][0] if b and b["good"][0] is not None and a["good"][0] else None
        ctx.claim("W4: PL2 carries 86 Gbps where raw optimal carries 89 (PL2 / raw 0.97; 0.93–1.0)", "86 / 89 Gbps",
                  f"{b['good'][0]:.1f} / {a['good'][0]:.1f} Gbps" if r else "–", r is not None and 0.93 <= r <= 1.0)
    if w4:
        load, a = min(w4, key=lambda x: abs(x[1]["good"][0] - 89.0))
        b = agg[("w4", load, "pl2 dequeue+improved")]
        md.append(f"- W4 at {100 * load:.0f}% offered is where raw optimal delivers closest to the paper's 89 Gbps: "
                  f"{a['good'][0]:.1f} Gbps, against {b['good'][0]:.1f} Gbps for PL2 with dequeue+improved (paper: 86 for "
                  f"PL2); p99 {fmt_us(b['p99'][0])} µs against {fmt_us(a['p99'][0])} µs.")
    for scheme in ("pl2 dequeue+improved", "raw optimal"):
        short = short_of_offered(scheme)
        if short:
            md.append(f"- `{scheme}` fell short of the offered load (a saturated thread pool: waits grow without bound) in: "
                      + "; ".join(short) + ".")
    tcp = [(k, a) for k, a in agg.items() if k[2].startswith("tcp")]
    if tcp:
        retx = {sch: sum(a["retx"] or 0 for k, a in tcp if k[2] == sch) for sch in PANELS["TCP"]}
        ctx.claim("TCP over PL2 (Algorithm 1) needs no retransmission", "none", str(retx["tcp/pl2"]), retx["tcp/pl2"] == 0)
        md.append(f"- TCP (d–f): retransmissions over the sweep: TCP over PL2 with Algorithm 1 {retx['tcp/pl2']}, with "
                  f"dequeue+improved {retx['tcp/pl2 dequeue+improved']}, Cubic {retx['tcp cubic']}. The paper reports no loss "
                  "for TCP over PL2; as for raw Ethernet, Algorithm 1's ingress decrement lets unsolicited bursts overflow "
                  "the port, and TCP repairs what it loses.")
        w3 = [(load, agg.get(("w3", load, "tcp/pl2 dequeue+improved")), agg.get(("w3", load, "tcp cubic"))) for load in (0.5, 0.9)]
        w3 = [(load, a, b) for load, a, b in w3 if a and b]
        if w3:
            load, a, b = w3[-1]
            collapsed = b["good"][0] < 0.8 * a["good"][0]
            ctx.claim(f"W3: TCP over PL2 81 Gbps while Cubic collapses to 43 (Cubic below 0.8× PL2's; {100 * load:.0f}% offered)",
                      "81 vs 43 Gbps", f"{a['good'][0]:.1f} vs {b['good'][0]:.1f} Gbps", collapsed)
            verdict = ("collapses as the paper's did" if collapsed else
                       "loses frames but does not collapse: with SACK and a 1 ms minimum RTO (the TCP defaults) it "
                       "recovers mostly by fast retransmit; the paper's user-space VMA stack is not described well enough "
                       "to model its collapse")
            md.append(f"- W3 at {100 * load:.0f}% offered: TCP over PL2 (dequeue+improved) {a['good'][0]:.1f} Gbps, Cubic "
                      f"{b['good'][0]:.1f} Gbps (paper: 81 vs 43, Cubic in congestion collapse). Our Cubic {verdict}.")
    md.append("- Raw optimal sends the whole load through one 100 Gbps NIC; PL2's incast spreads it over three, so at the "
              "same total load raw optimal's sender queues more, which is why its p99 is sometimes above PL2's: the "
              "paper's \"optimal\" means no network contention, not no queueing.")
    md.append("- A blocking PL2 thread moves one K = 4 burst per RSV-GRT exchange and slot wait, while a raw thread "
              "sends a message at line rate; with W3's small messages each message pays a whole exchange, so 33 "
              "blocking threads run out before the link does. The paper's latency spikes in 8a and 8c came from its generator running out of "
              "threads; our thread pools are modelled, so the same wait appears whenever a pool is saturated.")
    return "\n".join(md)
