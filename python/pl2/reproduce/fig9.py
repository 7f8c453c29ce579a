"""Fig. 9: incast goodput. n = 1–5 senders × 12 threads, each thread always holding a
message for host 5 (closed loop), 6000 B (4 full payloads: one K = 4 burst) and 6144 B
(6 KiB: 4 full frames + 144 B); PL2 (Algorithm 1, and the decrement-at-dequeue ablation)
and raw Ethernet (no transport control) for contrast."""

from __future__ import annotations

import polars as pl

from pl2.reproduce.common import Context, Job, buffer_drops, fmt_ci, kib, max_queue, mean_ci, program_drops, scenario, table

NAME = "fig9"
TITLE = "Fig. 9: incast goodput, 1–5 senders × 12 threads"
TRANSPORTS = {
    "pl2": {"kind": "pl2", "k": 4, "t": 15},
    "pl2 dequeue": {"kind": "pl2", "k": 4, "t": 15, "decrement_at": "dequeue"},
    "raw": {"kind": "raw"},
    "cubic": {"kind": "tcp", "cc": "cubic"},
    "tcp/pl2": {"kind": "tcp", "scheduler": "pl2", "pl2": {"k": 4, "t": 15}},
}
LINE_RATE_FULL = 100 * 1500 / 1542


def run(ctx: Context) -> str:
    dur, warm = (2.0, 0.2) if ctx.quick else (11.2, 1.0)
    senders = [1, 2, 3, 4, 5]
    jobs: list[Job] = []
    for size in (6000, 6144):
        for n in senders:
            for tr, tcfg in TRANSPORTS.items():
                wl = {"kind": "persistent", "senders": f"0..{n}", "receiver": 5, "size": f"{size}B", "threads": 12}
                sc = scenario(f"fig9-{tr.replace(' ', '-')}-{size}-{n}", tcfg, [wl], warmup_ms=warm, until_ms=dur - 0.2,
                              duration_ms=dur, drop_records=False)
                jobs += [Job(sc, {"figure": NAME, "transport": tr, "size": size, "senders": n}, seed, NAME) for seed in ctx.seeds]
    rows = []
    for job, res in zip(jobs, ctx.run_many(jobs), strict=True):
        tr, size, n, seed = job.params["transport"], job.params["size"], job.params["senders"], job.seed
        s = res.summary
        ports = res.ports
        sent = int(ports.filter(pl.col("node").is_in([f"h{i}" for i in range(n)]) & (pl.col("peer") == "s0"))["tx_bytes"].sum())
        got = int(ports.filter((pl.col("node") == "s0") & (pl.col("peer") == "h5"))["tx_bytes"].sum())
        st = s.get("pl2") or {}
        lat = (s.get("messages") or {}).get("latency_ps") or {}
        rows.append({
            "size": size, "senders": n, "transport": tr, "seed": seed,
            "goodput_gbps": float((s.get("goodput_gbps") or {}).get("h5", 0.0)),
            # Payload delivered to h5 over the whole run, per second of it.
            "run_goodput_gbps": float(res.goodput.filter(pl.col("host") == 5)["payload_bytes"].sum()) * 8 / (dur * 1e-3) / 1e9,
            "delivered_share": got / sent if sent else None,
            "buffer_drops": buffer_drops(s), "program_drops": program_drops(s),
            "max_queue_bytes": max_queue(s),
            "latency_p50_us": lat["p50"] / 1e6 if lat.get("p50") is not None else None,
            "unsolicited_bursts": st.get("unsolicited_bursts"), "bursts": st.get("bursts"),
            "resent_bursts": st.get("resent_bursts"),
            "drift_packets": (st.get("switch") or {}).get("counter_drift_packets"),
            "messages_finished": int((s.get("counters") or {}).get("messages_finished", 0)),
            "tcp_retransmissions": (s.get("tcp") or {}).get("retransmissions"),
            "tcp_timeouts": (s.get("tcp") or {}).get("timeouts"),
        })
    df = pl.DataFrame(rows)
    ctx.write_parquet(df, "fig9")

    agg = {}
    for (size, n, tr), g in df.group_by(["size", "senders", "transport"], maintain_order=True):
        agg[(size, n, tr)] = dict(
            good=mean_ci(g["goodput_gbps"].to_list()),
            share=mean_ci(g["delivered_share"].to_list()),
            bd=int(g["buffer_drops"].sum()), pd=int(g["program_drops"].sum()),
            q=int(g["max_queue_bytes"].max()),
            p50=mean_ci(g["latency_p50_us"].to_list()),
            uns=f"{int(g['unsolicited_bursts'].sum())}/{int(g['bursts'].sum())}" if tr.startswith("pl2") else "–",
            drift=int(g["drift_packets"].fill_null(0).sum()) if "drift_packets" in g.columns else None,
            retx=(1e6 * float(g["tcp_retransmissions"].sum()) / max(1, int(g["messages_finished"].sum()))) if tr in ("cubic", "tcp/pl2") else None,
        )

    import matplotlib.pyplot as plt

    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    fig, ax = plt.subplots(1, 3, figsize=(15, 5))
    colors = {"pl2": "tab:blue", "pl2 dequeue": "tab:cyan", "raw": "tab:gray", "cubic": "tab:red", "tcp/pl2": "tab:purple"}
    styles = {6000: "-", 6144: "--"}
    for size in (6000, 6144):
        for tr in TRANSPORTS:
            m = [agg[(size, n, tr)] for n in senders]
            ax[0].errorbar(senders, [a["good"][0] for a in m], yerr=[a["good"][1] or 0 for a in m], ls=styles[size], color=colors[tr], marker="o", capsize=3)
            ax[1].plot(senders, [max(a["q"], 1) / 1024 for a in m], ls=styles[size], color=colors[tr], marker="o")
            ax[2].plot(senders, [a["share"][0] for a in m], ls=styles[size], color=colors[tr], marker="o")
    ax[0].axhspan(96, 97, color="tab:green", alpha=0.2)
    ax[0].axhline(80, color="tab:red", lw=0.8, ls="-.")
    ax[0].set_ylim(0, 100)
    ax[0].set_title("(a) goodput into h5 (Gbps)")
    ax[1].axhline(1_500_000 / 1024, color="k", ls="-.", lw=0.8)
    ax[1].axhline(200, color="tab:green", ls=":", lw=1)
    ax[1].set_yscale("log")
    ax[1].set_title("(b) max queue at s0→h5 (KiB)")
    ax[2].plot(senders, [1 / n for n in senders], color="k", ls=":")
    ax[2].set_title("(c) bytes delivered / bytes sent")
    for a in ax:
        a.set_xlabel("senders (12 threads each)")
        a.set_xticks(senders)
    # One legend under the panels, so none covers data: colour = transport, line = size,
    # then the published references.
    handles = [Line2D([], [], color=colors[tr], marker="o", label=tr) for tr in TRANSPORTS]
    handles += [Line2D([], [], color="k", ls=styles[size], label=f"{size} B messages") for size in (6000, 6144)]
    handles += [Patch(color="tab:green", alpha=0.2, label="(a) paper: PL2 96–97 Gbps"),
                Line2D([], [], color="tab:red", lw=0.8, ls="-.", label="(a) paper: 1 sender ~80 Gbps"),
                Line2D([], [], color="tab:green", ls=":", label="(b) paper: < 200 KiB"),
                Line2D([], [], color="k", lw=0.8, ls="-.", label="(b) port limit 1.5 MB"),
                Line2D([], [], color="k", ls=":", label="(c) paper, raw: 1/n")]
    fig.legend(handles=handles, loc="lower center", ncol=7, fontsize=8, frameon=False)
    fig.suptitle(f"Fig. 9: n-way incast into h5, PL2 K = 4, t = 15 vs raw Ethernet ({len(ctx.seeds)} seed(s))", fontsize=10)
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    ctx.save(fig, "fig9")

    trows = []
    for size in (6000, 6144):
        for n in senders:
            for tr in TRANSPORTS:
                a = agg[(size, n, tr)]
                paper = ("~80" if n == 1 else "96–97, no loss") if tr.startswith("pl2") else f"1/{n} delivered" if tr == "raw" else "no retx" if tr == "tcp/pl2" else (
                    {2: "233 retx / 24 M msgs (≈ 10 per 10⁶)", 3: "313 retx / 24 M (≈ 13 per 10⁶)", 4: "404 retx / 24 M (≈ 17 per 10⁶)"}.get(n, "–"))
                retx = f"{a['retx']:.0f}" if a["retx"] is not None else "–"
                trows.append([size, n, tr, fmt_ci(*a["good"]), f"{a['share'][0]:.3f}", paper, a["bd"], a["pd"], kib(a["q"]), fmt_ci(*a["p50"], digits=1), a["uns"], retx])
    def g(size: int, n: int, tr: str = "pl2") -> float:
        return agg[(size, n, tr)]["good"][0] or 0.0
    big = [n for n in senders if n >= 3]
    two = agg.get((6000, 2, "pl2"))
    gb = [g(6000, n) for n in big]
    ctx.claim("PL2 goodput 96–97 Gbps with 3–5 senders, 6000 B (±1 Gbps)", "96–97 Gbps", f"{min(gb):.2f}–{max(gb):.2f} Gbps",
              all(95 <= x <= 98 for x in gb))
    multi = [n for n in senders if n >= 2]
    drops = sum(agg[(6000, n, "pl2")]["bd"] for n in multi)
    ctx.claim("PL2 loses nothing with 2–5 senders (6000 B, buffer drops)", "0", str(drops), drops == 0)
    q = max(agg[(6000, n, "pl2")]["q"] for n in senders)
    ctx.claim("PL2's queue stays below 200 KiB (6000 B, 1–5 senders)", "< 200 KiB", f"{kib(q)} KiB", q < 200 * 1024)
    ctx.claim("one sender with 12 threads reaches ~80 Gbps (±5)", "~80 Gbps", f"{g(6000, 1):.1f} Gbps", abs(g(6000, 1) - 80) <= 5)
    raw = [(n, agg[(6000, n, "raw")]["share"][0] or 0.0) for n in multi]
    ctx.claim("raw Ethernet delivers 1/n of what n senders send (±10 %)", "1/n", ", ".join(f"{n}: {x:.3f}" for n, x in raw),
              all(abs(x * n - 1) <= 0.1 for n, x in raw))
    md = [
        "Goodput into h5 over the measurement window (mean ± 95% interval over seeds); drops summed over seeds; max queue "
        "the largest over seeds. Paper (§6.4, Fig. 9): raw Ethernet delivers 1/n with n senders; PL2 no loss, up to "
        "96–97 Gbps, one sender ~80 Gbps with 12 flows, stable low queue (< 200 KiB).",
        "",
        table(["size B", "senders", "transport", "goodput Gbps", "delivered/sent", "paper", "buffer drops", "program drops", "max queue KiB", "p50 µs", "unsolicited/bursts", "TCP retx per 10⁶ msgs"], trows),
        "",
        "**Where we differ and why.**",
        f"- **6000 B, 3–5 senders:** PL2 {min(g(6000, n) for n in big):.2f}–{max(g(6000, n) for n in big):.2f} Gbps "
        f"(line rate for full payloads {LINE_RATE_FULL:.2f}), max queue ≤ {kib(max(agg[(6000, n, 'pl2')]['q'] for n in big))} KiB, "
        f"{sum(agg[(6000, n, 'pl2')]['bd'] for n in big)} buffer drops: the paper's 96–97 Gbps and < 200 KiB. Program drops are "
        "unsolicited packets refused by the T rule and resent (none unrecovered).",
        f"- **2 senders × 12 threads** under Algorithm 1 (decrement at ingress): {two['bd'] if two else '–'} buffer drops, max "
        f"queue {kib(two['q']) if two else '–'} KiB. This is counter drift ({two['drift'] if two else '–'} packets over the "
        "seeds), not early arrival: in the first microseconds a few threads whose first GRT said chosen < t send their "
        "next burst unsolicited (4 bursts per run), and with 2 × 12 threads × K = 96 reserved slots ≤ T = 128 they pass "
        "the T rule; their GRTs then say chosen > t, so they are resent, and each resent "
        "packet decrements both counters a second time. The counters stay that many packets below the true backlog for "
        "good, the switch grants more than the port carries, and the queue grows to the port limit. With 3–5 senders the "
        "start-up backlog exceeds T, the T rule drops those unsolicited packets (the program drops) and nothing drifts. "
        "With the low-load optimisation off, or with the drift fix `suppress_excess_decrements`, the same incast loses "
        "nothing (experiments/zero_loss/results.md); decrementing at dequeue (`pl2 dequeue` rows) also bounds it, at "
        "~1 Gbps. The paper reports no loss.",
        f"- **One sender:** {g(6000, 1):.2f} Gbps (6000 B), not the paper's ~80 Gbps: our hosts have no per-packet or per-RSV "
        "CPU cost (the profile calibrates only the RSV-GRT exchange), so 12 blocking threads keep the NIC busy; the "
        "paper's cap is host software.",
        f"- **6144 B (6 KiB):** PL2 {min(g(6144, n) for n in senders if n >= 2):.1f}–{max(g(6144, n) for n in senders if n >= 2):.1f} Gbps "
        "for 2–5 senders: the 144 B tail packet takes a whole slot, 6144 · 8 / (5 · 123.36 ns) = 79.7 Gbps. So the "
        "paper's 96–97 Gbps imply 4-MTU messages; its \"6 KiB\" cannot reach them under PL2's slot accounting. With one "
        f"sender ({g(6144, 1):.1f} Gbps) many bursts go unsolicited (low-load optimisation, §4.4), which books no slot.",
        "- **Raw Ethernet** keeps the receiver link full (≈ line rate) but delivers ≈ 1/n of what the senders put on "
        "the wire (column delivered/sent), dropping the rest at the 1.5 MB port limit: the paper's 1/n.",
        f"- **Cubic** (TCP, `kind = \"tcp\"`, defaults: SACK, 1 ms min RTO, 16 MiB buffers, 12 connections per sender): "
        + ", ".join("%d senders %s retransmissions per 10⁶ messages" % (n, f"{agg[(6000, n, 'cubic')]['retx']:.0f}") for n in (2, 3, 4) if n in senders)
        + " (6000 B) against the paper's 233/313/404 per 24 M messages (≈ 10/13/17 per 10⁶); PL2 resends only the "
        "unsolicited bursts the T rule refuses (column unsolicited/bursts) and loses nothing when it is bounded. Our Cubic "
        "fills the 1.5 MB static port every congestion cycle, and 12 connections per sender each need their own losses to "
        "back off; the paper's testbed stack (and its dynamic buffer sharing, offloads and pacing) is not modelled, and "
        "we have not analysed the gap further, so read the retransmission rate as a model result, not a match. Our window "
        "is ≥ 10 ms, not 24 M messages, and counts retransmissions of the whole run (including start-up).",
    ]
    md.append(
        "- **TCP over PL2** (`kind = \"tcp\"`, `scheduler = \"pl2\"`, congestion control off, Algorithm 1 defaults): "
        + ", ".join("%d senders %s retransmissions per 10⁶ messages" % (n, f"{agg[(6000, n, 'tcp/pl2')]['retx']:.0f}") for n in senders)
        + f" (6000 B). The paper reports none; where ours are non-zero they are Algorithm 1's ingress-decrement overflow "
        "seen above for raw PL2, repaired by TCP. Goodput at 3–5 senders "
        f"({min(g(6000, n, 'tcp/pl2') for n in big):.1f}–{max(g(6000, n, 'tcp/pl2') for n in big):.1f} Gbps) sits at the "
        "slot bound: a 6000 B message is 5 TCP segments (MSS 1460), a K = 4 burst plus a 160 B tail that takes a whole "
        "slot, 6000 · 8 / (5 · 123.36 ns) = 77.8 Gbps."
    )
    tcp_cap = 100 * 1460 / 1542
    over = [(size, n, a["good"][0]) for (size, n, tr), a in agg.items() if tr == "cubic" and (a["good"][0] or 0) > tcp_cap]
    if over:
        whole = [float(x) for x in df.filter(pl.col("transport") == "cubic")["run_goodput_gbps"].to_list()]
        md.append(
            f"- **Cubic's window goodput exceeds the wire's TCP capacity** ({', '.join('%d B × %d: %.2f' % o for o in over)} Gbps; "
            f"100 · 1460 / 1542 = {tcp_cap:.1f} Gbps), while over each whole run it stays below it "
            f"({min(whole):.1f}–{max(whole):.1f} Gbps). Goodput counts payload when TCP delivers it in order to the "
            "application, and in-order delivery lets bytes that crossed the wire before the window (during the 1 ms "
            "warm-up, behind a lost segment) count inside it once the retransmission arrives. Read Cubic's window "
            "goodput as a delivery rate; its start-up losses outlast the warm-up."
        )
    md += [
    ]
    return "\n".join(md)
