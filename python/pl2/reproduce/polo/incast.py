"""Synchronised many-to-one rounds, the setting of the core-bottleneck, edge-bottleneck
and ablation experiments: N senders each push one 100 KB flow to one receiver at once
(`kind = "ps_shuffle"`, one parameter server, global barrier), the next round when the
last flow of the round has arrived; `rounds` rounds.

- `edge`: N senders and the receiver on one switch (links 12.5 µs: 25 µs one way); the
  receiver's 1 Gbps downlink is the bottleneck.
- `core`: senders and the background's sender on switch s0, the receiver and the
  background's receiver on s1; host links 5 µs, the s0–s1 link 15 µs (25 µs one way);
  the core link carries 200 Mbps of background, so 800 Mbps are available.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import polars as pl

from pl2.reproduce.common import Context, Job
from pl2.reproduce.polo.common import BG_INTERVAL_NS, FLOW_B, LINK_BPS, build, counters, goodput_bound_mbps, pct, background


def topology(where: str, n: int) -> tuple[dict[str, Any], int, str | None]:
    """The topology of `n` senders, the receiver's host index and the default link delay."""
    if where == "edge":
        return {"kind": "single_rack", "hosts": n + 1}, n, "12500ns"
    # core: h0..h(n-1) senders, hn background sender on s0; h(n+1) receiver, h(n+2)
    # background receiver on s1.
    links = [{"a": f"h{i}", "b": "s0"} for i in range(n + 1)]
    links += [{"a": f"h{n + 1}", "b": "s1"}, {"a": f"h{n + 2}", "b": "s1"}, {"a": "s0", "b": "s1", "delay": "15us"}]
    return {"kind": "custom", "hosts": n + 3, "switches": 2, "links": links}, n + 1, "5us"


def available_bps(where: str, bg_share: float = 1.0) -> float:
    """The bottleneck's bandwidth left to the experiment: 1 Gbps less the background's
    200 Mbps × the share of its frames delivered (core only)."""
    return LINK_BPS - (bg_share * 1542 * 8 / (BG_INTERVAL_NS * 1e-9) if where == "core" else 0.0)


def jobs(ctx: Context, sweep: str, where: str, designs: Sequence[str], senders: Sequence[int], rounds: int) -> list[Job]:
    out: list[Job] = []
    for n in senders:
        topo, recv, delay = topology(where, n)
        # Generous cap: every round at a tenth of the available bandwidth, plus 20 ms.
        cap_ms = rounds * n * FLOW_B * 8 / (0.1 * available_bps(where)) * 1e3 + 20
        for design in designs:
            wls: list[dict[str, Any]] = [{"kind": "ps_shuffle", "workers": f"0..{n}", "servers": [recv],
                                          "gradient_size": f"{FLOW_B}B", "iterations": rounds, "barrier": "global"}]
            if where == "core":
                wls.append(background(n, n + 2, cap_ms))
            # A trace of the receiver's frames: which unfinished flows it never heard of.
            sc = build(f"{sweep}-{where}-{design.replace(' ', '').replace('^', '')}-{n}", design, topo, wls,
                       duration_ms=cap_ms, link_delay=delay, background=where == "core",
                       stop_when_delivered=where != "core", trace={"nodes": [f"h{recv}"], "max_records": 50_000_000})
            out += [Job(sc, {"figure": sweep, "where": where, "design": design, "senders": n}, seed, sweep) for seed in ctx.seeds]
    return out


def rows(ctx: Context, js: Sequence[Job]) -> pl.DataFrame:
    """One row per run: goodput over the rounds, FCT percentiles, losses and recovery."""
    out = []
    for job, res in zip(js, ctx.run_many(js), strict=True):
        p = job.params
        n, where, design = p["senders"], p["where"], p["design"]
        _, recv, _ = topology(where, n)
        m = res.messages.filter(pl.col("dst") == recv)
        it = res.iterations
        done = it.filter(pl.col("finish_ps").is_not_null())
        fin = m.filter(pl.col("finish_ps").is_not_null())
        # Goodput: the payload of the completed rounds over their summed durations.
        t = float(done["time_ps"].sum()) if done.height else 0.0
        good = float(done["bytes"].sum()) * 8 / (t * 1e-12) / 1e6 if t > 0 else 0.0
        lat = [float(x) / 1e6 for x in fin["latency_ps"].to_list()] + [math.inf] * (m.height - fin.height)
        c = counters(res.summary, design)
        s = res.summary
        # The background actually delivered during the rounds: a design whose queue
        # fills the shared FIFO takes bandwidth from it (UDP never resends).
        bg_share: float | None = 1.0
        if where == "core" and not done.height:
            bg_share = None  # no round completed: no span to measure it over
        elif where == "core":
            t0, t1 = int(it["start_ps"].min()), int(done["finish_ps"].max())
            bg = res.messages.filter((pl.col("dst") == n + 2) & (pl.col("start_ps") >= t0) & (pl.col("start_ps") < t1))
            bg_share = bg["finish_ps"].is_not_null().sum() / bg.height if bg.height else 1.0
        # Share of the rounds' time the receiver's downlink sent nothing (every frame
        # counts, adjoints and control included): 1 − its wire bytes over 1 Gbps × span.
        idle: float | None = None
        if done.height:
            t0, t1 = int(it["start_ps"].min()), int(done["finish_ps"].max())
            down = res.ports.filter((pl.col("node") == ("s0" if where == "edge" else "s1")) & (pl.col("peer") == f"h{recv}")
                                    & (pl.col("window_start_ps") >= t0) & (pl.col("window_start_ps") < t1))
            idle = 1 - float(down["tx_bytes"].sum()) * 8 / (LINK_BPS * (t1 - t0) * 1e-12)
        drops = s.get("drops") or {}
        # Unfinished flows no data packet of which (from their start on) reached the
        # receiver: a receiver-driven design cannot learn of them.
        arr = res.trace.filter((pl.col("event") == "arrive") & (pl.col("kind") == "data") & (pl.col("node") == f"h{recv}"))
        first_arrival = arr.group_by("src").agg(pl.col("time_ps").max().alias("last_ps"))
        unf = m.filter(pl.col("finish_ps").is_null()).join(first_arrival, on="src", how="left")
        never = int(unf.filter(pl.col("last_ps").is_null() | (pl.col("last_ps") < pl.col("start_ps"))).height)
        out.append({
            "where": where, "design": design, "senders": n, "seed": job.seed,
            "rounds_done": done.height, "rounds": it.height,
            "goodput_mbps": good, "bound_mbps": goodput_bound_mbps(design, available_bps(where, 1.0 if bg_share is None else bg_share)),
            "bg_delivered_share": bg_share if where == "core" else None, "receiver_link_idle": idle,
            "drops_port_limit": int(drops.get("port_limit", 0)), "drops_queue_limit": int(drops.get("queue_limit", 0)),
            "fct_p50_us": pct(lat, 0.5), "fct_p99_us": pct(lat, 0.99), "fct_max_us": max(lat) if lat else None,
            "flows": m.height, "unfinished": m.height - fin.height, "unfinished_never_heard": never,
            "max_queue_bytes": int(max((s.get("max_queue_bytes") or {}).values(), default=0)),
            **c,
        })
    return pl.DataFrame(out)


def aggregate(df: pl.DataFrame) -> dict[tuple[str, int], dict[str, Any]]:
    """Per (design, senders): mean ± interval of goodput and p99 over seeds, sums of the
    counters."""
    from pl2.reproduce.common import mean_ci

    agg: dict[tuple[str, int], dict[str, Any]] = {}
    for (design, n), g in df.group_by(["design", "senders"], maintain_order=True):
        agg[(str(design), int(n))] = {
            "good": mean_ci(g["goodput_mbps"].to_list()),
            "bound": float(g["bound_mbps"].mean()),
            "bg": float(g["bg_delivered_share"].mean()) if g["bg_delivered_share"].null_count() < g.height else None,
            "bg_unknown": bool(g["where"][0] == "core" and g["bg_delivered_share"].null_count() == g.height),
            "dq": int(g["drops_queue_limit"].sum()),
            "p99": mean_ci([x for x in g["fct_p99_us"].to_list() if x is not None and math.isfinite(x)]),
            "p99_inf": any(x is None or not math.isfinite(x) for x in g["fct_p99_us"].to_list()),
            "unfinished": int(g["unfinished"].sum()), "flows": int(g["flows"].sum()), "never": int(g["unfinished_never_heard"].sum()),
            "drops": int(g["drops"].sum()), "trims": int(g["trims"].sum()), "timeouts": int(g["timeouts"].sum()),
            "retx": int(g["retransmissions"].sum()), "aborted": int(g["aborted"].sum()),
            "q": int(g["max_queue_bytes"].max()),
            "rounds": f"{int(g['rounds_done'].sum())}/{int(g['rounds'].sum())}",
            "idle": float(g["receiver_link_idle"].mean()) if "receiver_link_idle" in g.columns and g["receiver_link_idle"].null_count() < g.height else None,
        }
    return agg


def plot(ctx: Context, agg: dict[tuple[str, int], dict[str, Any]], designs: Sequence[str], senders: Sequence[int],
         name: str, title: str, available_mbps: float) -> None:
    import matplotlib.pyplot as plt

    from pl2.reproduce.polo.common import COLORS

    fig, ax = plt.subplots(1, 2, figsize=(11, 4))
    for d in designs:
        g = [agg[(d, n)] for n in senders]
        ax[0].errorbar(senders, [a["good"][0] for a in g], yerr=[a["good"][1] or 0 for a in g], marker="o", capsize=3,
                       color=COLORS.get(d), label=d)
        ax[1].plot(senders, [a["p99"][0] if not a["p99_inf"] else float("nan") for a in g], marker="o", color=COLORS.get(d), label=d)
    ax[0].axhline(available_mbps, color="k", ls="--", lw=0.8, label=f"available {available_mbps:.0f} Mbps")
    ax[0].set_ylim(0, 1050)  # the link: NDP and pHost exceed 800 Mbps at the core by taking the background's share
    ax[0].set_ylabel("goodput (Mbps)")
    ax[1].set_ylabel("p99 flow completion time (µs)")
    ax[1].set_yscale("log")
    for a in ax:
        a.set_xscale("log", base=2)
        a.set_xlabel("senders")
        a.legend(fontsize=7)
    fig.suptitle(f"{title} ({len(ctx.seeds)} seed(s))", fontsize=10)
    fig.tight_layout()
    ctx.save(fig, name)


def table_rows(agg: dict[tuple[str, int], dict[str, Any]], designs: Sequence[str], senders: Sequence[int]) -> list[list[Any]]:
    from pl2.reproduce.common import fmt_ci

    rows = []
    for n in senders:
        for d in designs:
            a = agg[(d, n)]
            p99 = "∞ (unfinished)" if a["p99_inf"] else fmt_ci(*a["p99"], digits=0)
            rows.append([n, d, fmt_ci(*a["good"], digits=1), f"{a['bound']:.1f}", "– (no round done)" if a["bg_unknown"] else "–" if a["bg"] is None else f"{a['bg']:.3f}",
                         p99, a["rounds"], f"{a['unfinished']}/{a['flows']} ({a['never']})", a["drops"], a["trims"], a["timeouts"], a["retx"],
                         a["aborted"], f"{a['q'] / 1000:.1f}"])
    return rows


HEAD = ["senders", "design", "goodput Mbps", "bound Mbps", "background delivered", "p99 FCT µs", "rounds done", "unfinished flows (of them, never heard of by the receiver)", "drops",
        "trims", "timeouts", "retransmissions", "aborted", "max queue KB"]


def p99s(a: dict[str, Any]) -> str:
    """An aggregate's p99 as text (∞ when it falls on an unfinished flow)."""
    return "∞ (unfinished)" if a["p99_inf"] else f"{a['p99'][0]:.0f} µs"


def failures(agg: dict[tuple[str, int], dict[str, Any]], designs: Sequence[str], senders: Sequence[int]) -> str:
    """Where designs left flows unfinished, with how many the receiver never heard of."""
    parts = [f"{d} at N = {n}: {a['unfinished']} of {a['flows']} flows unfinished, {a['never']} of them never heard of "
             f"by the receiver, {a['aborted']} aborted" for n in senders for d in designs if (a := agg[(d, n)])["unfinished"]]
    return "; ".join(parts) if parts else "none"


def why_text(agg: dict[tuple[str, int], dict[str, Any]], designs: Sequence[str], senders: Sequence[int]) -> list[str]:
    """The measured reasons shared by the core and edge sections."""
    lossless = [n for n in senders if agg[("Polo", n)]["drops"] == 0 and agg[("Polo", n)]["timeouts"] == 0]
    ln = lossless[0] if lossless else None
    out = ["**Where ours differs, and why (measured).**", ""]
    if ln is not None:
        a = agg[("Polo", ln)]
        out.append(
            f"- **Polo below its bound even without loss**: at N = {ln} Polo drops nothing and never times out, yet reaches "
            f"{a['good'][0]:.0f} of {a['bound']:.0f} Mbps ({a['good'][0] / a['bound']:.0%}). The receiver's link idles: "
            "each flow's D, its driving packets per epoch, follows a sawtooth that falls towards its floor of 1 after a "
            "congestion event (marks keep arriving for several epochs while the queue drains, and each epoch subtracts "
            "⌈M/2⌉) and then grows by one per epoch; see the D trace in the queue section (`polo-queue`). Measured here "
            "(column `receiver_link_idle` of the Parquet: the share of the rounds' time the receiver's downlink sent "
            f"nothing, all frames counted) at N = {ln}: " + ", ".join(
                f"{d} {agg[(d, ln)]['idle']:.1%}" for d in designs if agg[(d, ln)].get("idle") is not None) +
            "; Polo at every N: " + ", ".join(
                f"{n}: {agg[('Polo', n)]['idle']:.1%}" for n in senders if agg[("Polo", n)].get("idle") is not None) +
            ". The rounds' barriers idle the link alike for every design; with no loss and no timeout a Polo sender with data left sends only when driven, so Polo's extra idle time is its driving window below what the path holds.")
    out.append(
        "- **Polo's timeouts** (column timeouts) are recovery 3 firing after a tail loss of a first burst, or for a flow "
        "not driven for 1 ms; each costs that flow 1 ms, and a round lasts until its last flow. The queue section "
        "classifies every one from a trace and compares a D shared by the receiver's flows (`docs/model.md`, Polo, has "
        "both readings of D and of the pause measured on these incasts).")
    out.append(
        "- **Unfinished flows** (a round that never ends stops the whole run: goodput 0): " + failures(agg, designs, senders) + ".")
    homa = [agg[(d, n)] for d in designs if d.startswith("Homa") for n in senders]
    hu, hn = sum(a["unfinished"] for a in homa), sum(a["never"] for a in homa)
    if hu:
        out.append(
            f"  Homa: {hn} of its {hu} unfinished flows never got a packet to the receiver. Homa's receiver learns of a "
            "message only from its packets; when all of a message's unscheduled packets are dropped at the full port (N × "
            "12 packets arrive at once at a port that holds 55 full frames), nothing reaches the receiver, and pl2's Homa, "
            "like the Homa simulator, has no sender-side timeout that would resend it (`docs/model.md`, Homa, \"Loss\"). "
            "The others it heard of, and gave up on after 5 RESEND rounds without an answer (`aborted`).")
    ndp = [agg[("NDP", n)] for n in senders if "NDP" in designs]
    nu, nn = sum(a["unfinished"] for a in ndp), sum(a["never"] for a in ndp)
    if nu:
        txt = (f"  NDP: {nu} unfinished flows, {nn} of them never heard of. NDP's timeout resends an overdue packet once and "
               "never again (`rto_rearm = false`, htsim's rule), so a flow whose resend is lost again (its header dropped "
               "at the full header FIFO, column drops) stalls for good.")
        if "NDP rearm" in designs:
            ru = sum(agg[("NDP rearm", n)]["unfinished"] for n in senders)
            txt += (f" With `rto_rearm = true` (row `NDP rearm`, a diagnostic, not the slides' setting) {ru} flows stay "
                    "unfinished at the same N: " + "; ".join(f"{n}: {agg[('NDP rearm', n)]['good'][0]:.0f} Mbps"
                                                              for n in senders) + ".")
        out.append(txt)
    return out
