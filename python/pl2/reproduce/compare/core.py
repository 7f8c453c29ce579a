"""Experiment 4 of issue 26: Polo's 1 Gbps core-bottleneck incast (`reproduce/polo/core.py`)
with every design. N senders on switch s0, the receiver on s1; the s0–s1 link (1 Gbps,
15 µs) also carries a 200 Mbps raw UDP background at priority 0; host links 1 Gbps, 5 µs
(a 50 µs base RTT); every port holds at most 86 KB. Rounds: every sender sends one
100 KB flow, the next round once the receiver has them all.

PL2 runs here as it does across racks (§7): s0 and s1 are two racks, s0's ToR books its
senders' ports and its uplink (the 1 Gbps core link) as one more port, and every
reservation counts 1/(1 − share) slots so the share stays free for traffic no ToR
schedules. The background is such traffic. PL2 is run with §7's default share (10 %,
below the background's 20 %) and, as diagnostic rows, with the share set to the
background's 20 %.
"""

from __future__ import annotations

import copy
import math
from typing import Any

import polars as pl

from pl2.reproduce.common import Context, table
from pl2.reproduce.compare import common as C
from pl2.reproduce.compare.designs import Design, designs
from pl2.reproduce.polo.common import FLOW_B, PORT_LIMIT_B, background
from pl2.reproduce.polo.incast import topology

NAME = "compare-core"
TITLE = "Every design across Polo's congested core (1 Gbps, 200 Mbps background, RTT 50 µs, 86 KB), PL2 included"
BG_SHARE_PPM = 200_000
#: PL2 with its external share set to the background's (diagnostic rows).
SHARE_ROWS = {
    "PL2, share 20%": {"kind": "pl2", "k": 4, "t": 15, "external_share_ppm": BG_SHARE_PPM},
    "PL2 deq+imp, share 20%": {"kind": "pl2", "k": 4, "t": 15, "decrement_at": "dequeue", "improved": True,
                               "external_share_ppm": BG_SHARE_PPM},
}


def senders(quick: bool) -> list[int]:
    return [8, 32] if quick else [8, 16, 32, 64]


def rounds(quick: bool) -> int:
    return 2 if quick else 5


def base(n: int, r: int) -> tuple[dict[str, Any], int]:
    """The core scenario and the receiver's index."""
    cap_ms = r * n * FLOW_B * 8 / (0.1 * 0.8e9) * 1e3 + 20
    topo, recv, delay = topology("core", n)
    bg = background(n, n + 2, cap_ms)
    d = {
        "name": f"compare-core-{n}",
        "run": {"duration": f"{round(cap_ms * 1000)}us", "stop_when_delivered": False},
        "network": {"topology": topo, "link": {"rate": "1Gbps", "delay": delay},
                    "switch": {"dynamic_thresholds": False, "port_limit": f"{PORT_LIMIT_B}B"}},
        "metrics": {"window": "10us", "drop_records": False, "probes": False},
        "transports": {"bg": {"kind": "raw", "headers": "udp", "priority": 0}},
        "workload": [{"kind": "ps_shuffle", "workers": f"0..{n}", "servers": [recv], "gradient_size": f"{FLOW_B}B",
                      "iterations": r, "barrier": "global"}, bg],
    }
    return d, recv


def run(ctx: Context) -> str:
    ns, r = senders(ctx.quick), rounds(ctx.quick)
    ds = C.designs_in()
    reg = designs(1.0)
    for k, t in SHARE_ROWS.items():
        reg[k] = Design(k, t, {}, (), {"PL2, share 20%": "midnightblue"}.get(k, "teal"))
    js, refused, bases = [], {}, {}
    for n in ns:
        b, recv = base(n, r)
        bases[n] = b
        for d in ds:
            j, ref = C.jobs(ctx, NAME, [d], b, {"net": "core", "senders": n}, link_gbps=1.0)
            js += j
            refused.update(ref)
        for k in SHARE_ROWS:
            sc = C.build(b, reg[k], f"{NAME}-{n}-{k.replace(' ', '').replace(',', '').replace('%', '').replace('+', '')}")
            js += [C.Job(sc, {"figure": NAME, "net": "core", "senders": n, "design": k}, s, NAME) for s in ctx.seeds]
    rows, pooled = [], {}
    for job, res in zip(js, ctx.run_many(js), strict=True):
        p = job.params
        n = p["senders"]
        recv = n + 1
        bg_dst = n + 2
        m = res.messages.filter((pl.col("dst") == recv) & (pl.col("src") < n))
        it = res.iterations
        done = it.filter(pl.col("finish_ps").is_not_null())
        t = float(done["time_ps"].sum()) if done.height else 0.0
        good = float(done["bytes"].sum()) * 8 / (t * 1e-12) / 1e6 if t > 0 else 0.0
        fin = m.filter(pl.col("finish_ps").is_not_null())
        lat = sorted(float(x) / 1e6 for x in fin["latency_ps"].to_list())
        bg_share = None
        if done.height:
            t0, t1 = int(it["start_ps"].min()), int(done["finish_ps"].max())
            bg = res.messages.filter((pl.col("dst") == bg_dst) & (pl.col("size_bytes") == 1472) & (pl.col("start_ps") >= t0) & (pl.col("start_ps") < t1))
            bg_share = float(bg["finish_ps"].is_not_null().sum() / bg.height) if bg.height else None
        c = C.measure(res, [recv])
        row = {"net": p["net"], "design": p["design"], "senders": n, "seed": job.seed, "rounds_done": done.height,
               "rounds": it.height, "goodput_mbps": good, "p99_fct_us": C.pct(lat, m.height, 0.99) if m.height >= 100 else (
                   (lat[math.ceil(0.99 * m.height) - 1] if math.ceil(0.99 * m.height) <= len(lat) else math.inf) if m.height else None),
               "flows": m.height, "unfinished": m.height - fin.height, "bg_delivered": bg_share,
               **{k: v for k, v in c.items() if k not in ("latencies_us", "goodput_gbps", "messages", "unfinished")}}
        rows.append(row)
    df = pl.DataFrame(rows, infer_schema_length=None)
    ctx.write_parquet(df, "core")

    def A(net: str, d: str, n: int) -> dict[str, Any] | None:
        g = df.filter((pl.col("net") == net) & (pl.col("design") == d) & (pl.col("senders") == n))
        if not g.height:
            return None
        p99 = g["p99_fct_us"].to_list()
        return {"good": float(g["goodput_mbps"].mean()), "p99": math.inf if any(x is None or math.isinf(x) for x in p99) else sum(p99) / len(p99),
                "rounds": f"{int(g['rounds_done'].sum())}/{int(g['rounds'].sum())}", "unf": int(g["unfinished"].sum()),
                "flows": int(g["flows"].sum()), "bg": g["bg_delivered"].mean() if g["bg_delivered"].null_count() < g.height else None,
                "q": int(g["max_queue_bytes"].max()), "drops": int(g["buffer_drops"].sum()), "prog": int(g["program_drops"].sum()),
                "trims": int(g["trims"].sum()), "ctl": float(g["control_share"].mean()), "resends": int(g["resends"].sum()),
                "timeouts": int(g["timeouts"].sum()), "pauses": int(g["pause_frames"].sum()), "marks": int(g["ecn_marks"].sum()),
                "hdrop": int(g["headroom_drops"].sum()), "sfc": int(g["sfc_signals"].sum()),
                "lost": int(g["messages_lost"].sum()), "dp": int(g["drops_port_limit"].sum()), "xout": int(g["pl2_inter_out"].sum()),
                "xin": int(g["pl2_inter_in"].sum())}

    head = ["senders", "design", "goodput Mbps (rounds done)", "p99 FCT µs", "unfinished flows", "background delivered",
            "max queue KB", "drops", "T-rule drops / trims", "control share", "ECN marks", "resends / timeouts", "PFC pauses"]
    trows = []
    for n in ns:
        for d in ds + list(SHARE_ROWS):
            a = A("core", d, n)
            if a is None:
                trows.append([n, d, f"cannot run: {refused.get(d, 'not run')}"] + ["–"] * (len(head) - 3))
                continue
            trows.append([n, d, f"{a['good']:.0f} ({a['rounds']})", C.us(a["p99"]), f"{a['unf']} of {a['flows']}",
                          "–" if a["bg"] is None else f"{a['bg']:.3f}", f"{a['q'] / 1000:.1f}", a["drops"], f"{a['prog']} / {a['trims']}",
                          f"{100 * a['ctl']:.1f}%", a["marks"], f"{a['resends']} / {a['timeouts']}", a["pauses"]])
    _plot(ctx, ns, ds, A, reg)
    big = ns[-1]
    md = [
        "Setting (`reproduce/polo/core.py`'s network): N senders on s0, the receiver on s1, the s0–s1 link 1 Gbps "
        "shared with a 200 Mbps raw UDP flow at priority 0 (host links 5 µs, core link 15 µs); every egress port holds "
        f"at most {PORT_LIMIT_B:,} B (static limit, dynamic thresholds off); {r} synchronised rounds of one 100 KB flow "
        "per sender. Designs at 1 Gbps with the changes the table below lists (DCTCP's K is the DCTCP paper's 20 "
        "packets at 1 Gbps; the others as at 100 Gbps: Polo's 5-frame threshold is the slides' own 1 Gbps value; "
        "DCQCN's and SFC's byte thresholds exceed the 86 KB port, which lossless frames may, since PFC admits them by "
        "its ingress counters). Goodput: payload of the completed rounds over their summed durations (the "
        "available bandwidth is 800 Mbps less what a design takes from the background); p99: nearest-rank FCT over "
        "the flows of all rounds (unfinished = ∞); background delivered: share of the UDP flow's frames that "
        "arrived while rounds ran.",
        "",
        table(head, trows),
        "",
        "**PL2 across a congested core.** s0 and s1 are two racks to PL2 (§7): s0's ToR schedules its senders' "
        "ports and its uplink, the 1 Gbps core link, as one more port; the frames cross the core unscheduled and s1's "
        "ToR forwards them without touching its counters. PL2 knows nothing of the 200 Mbps background: it keeps "
        "free only its external share of every port (every reservation counts 1/(1 − share) slots), §7's 10 % by "
        "default, and the rows *…, share 20%* (diagnostic) set it to the background's 20 % "
        f"(`external_share_ppm = {BG_SHARE_PPM}`).",
        "",
        C.how_same(ds, 1.0), "", C.base_block(f"Base scenario ({big} senders)", bases[big]), "",
    ]
    md += _claims_and_why(ctx, ns, ds, A)
    return "\n".join(md)


def _plot(ctx: Context, ns: list[int], ds: list[str], A, reg: dict) -> None:
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(1, 2, figsize=(12, 4.6))
    for d in ds + list(SHARE_ROWS):
        pts = [(n, A("core", d, n)) for n in ns]
        pts = [(n, a) for n, a in pts if a is not None]
        if not pts:
            continue
        ls = ":" if d in SHARE_ROWS else ("--" if d in ("PL2 deq+imp", "Cubic", "SFC") else "-")
        ax[0].plot([n for n, _ in pts], [a["good"] for _, a in pts], marker="o", color=reg[d].color, ls=ls, label=d)
        ax[1].plot([n for n, _ in pts], [a["p99"] if not math.isinf(a["p99"]) else float("nan") for _, a in pts], marker="o", color=reg[d].color, ls=ls)
    ax[0].axhline(800, color="k", lw=0.8, ls="-.")
    ax[0].set_title("(a) goodput over the rounds (Mbps; 800 available)")
    ax[1].set_title("(b) p99 flow completion time (µs; missing = unfinished)")
    ax[1].set_yscale("log")
    for a in ax:
        a.set_xscale("log", base=2)
        a.set_xticks(ns, [str(n) for n in ns])
        a.set_xlabel("senders")
        a.grid(True, alpha=0.3)
    fig.legend(*ax[0].get_legend_handles_labels(), loc="lower center", ncol=7, fontsize=7, frameon=False)
    fig.suptitle(f"Polo's core-bottleneck incast with every design (dotted: PL2 with its share at the background's 20 %; {len(ctx.seeds)} seed(s))", fontsize=10)
    fig.tight_layout(rect=(0, 0.12, 1, 1))
    ctx.save(fig, "core")


def _claims_and_why(ctx: Context, ns: list[int], ds: list[str], A) -> list[str]:
    big = ns[-1]
    polo, homa, ph = A("core", "Polo", big), A("core", "Homa", big), A("core", "pHost", big)
    ctx.claim(f"Polo (slides): goodput close to the available bandwidth as N grows (≥ 90 % of 800 Mbps × 1500/1626, N = {big})",
              "close to full", f"{polo['good']:.0f} Mbps", polo["good"] >= 0.9 * 800 * 1500 / 1626)
    ok = not math.isinf(polo["p99"]) and (math.isinf(homa["p99"]) or polo["p99"] <= homa["p99"]) and (math.isinf(ph["p99"]) or polo["p99"] <= 1.25 * ph["p99"])
    ctx.claim(f"Polo (slides): tail latency at least as good as Homa's and close to pHost's (N = {big}, within 25 %)", "Polo ≤ Homa, ≈ pHost",
              f"Polo {C.us(polo['p99'])}, Homa {C.us(homa['p99'])}, pHost {C.us(ph['p99'])} µs", ok)
    lines = ["**What surprised us, and why (measured; counters from the table)**", ""]
    a = {d: A("core", d, big) for d in ds if A("core", d, big)}
    lines.append(f"- {big} senders, goodput: " + ", ".join(f"{d} {a[d]['good']:.0f}" for d in sorted(a, key=lambda d: -a[d]["good"]))
                 + " Mbps. Drops count every frame the network dropped, the background's included.")
    took = [d for d in a if a[d]["bg"] is not None and a[d]["bg"] < 0.95]
    if took:
        lines.append("- Goodput above the 800 Mbps the background leaves is taken from the background: UDP never resends, so "
                     "the share of its frames delivered measures what each design took: " + ", ".join(f"{d} {a[d]['bg']:.3f}" for d in took)
                     + ". RoCE's data is lossless: PFC admits it by ingress counters past the 86 KB port limit (RoCE+PFC's "
                     f"queue reached {a['RoCE+PFC']['q'] / 1000:.0f} KB), while the background, in the lossy class, meets the "
                     "full port and is dropped. NDP's trimmed headers and resends share the priority-0 FIFO's data limit with it.")
    ro, sf = a["RoCE+PFC"], a["SFC"]
    ctx.claim(f"SFC (slides): SFC removes the PFC pauses of DCQCN over PFC and keeps its throughput (N = {big})",
              "fewer pauses, ≥ goodput", f"SFC {sf['pauses']} pauses, {sf['good']:.0f} Mbps; RoCE+PFC {ro['pauses']}, {ro['good']:.0f} Mbps",
              sf["pauses"] < ro["pauses"] and sf["good"] >= ro["good"])
    win_b = 15e-6 * 1e9 / 8
    sig = ", ".join(f"N = {n}: {A('core', 'SFC', n)['sfc']}" for n in ns)
    lines.append(f"- RoCE+PFC at {big} senders: {ro['good']:.0f} Mbps, largest queue {ro['q'] / 1000:.0f} KB at an 86 KB port, "
                 f"{ro['pauses']} PAUSE frames, {ro['hdrop']} frames over PFC headroom (its drops are the background's), "
                 f"{ro['timeouts']} timeouts and {ro['resends']} resends. PFC's XOFF (100 KB) is per ingress port: {big} "
                 f"senders' ports each hold up to 100 KB before pausing (≈ {big * 100 / 1000:.1f} MB together) and all of it "
                 f"drains through one 1 Gbps link, {ro['q'] * 8 / 1e9 * 1e3:.0f} ms of queue; "
                 + ("RoCE's local ACK timeout (`rto`, default 4.096 µs × 2^14 = 67.1 ms without a send or ACK progress) "
                    "then fires for flows queued longer, and each go-back-N rewind resends what was already on its way."
                    if ro["timeouts"] else
                    "RoCE's local ACK timeout (`rto`, default 4.096 µs × 2^14 = 67.1 ms) is longer than that queue and "
                    "never fires."))
    lines.append(f"- The SFC design's short queue ({sf['q'] / 1000:.0f} KB at {big} senders) is mostly not SFC: SFC signals sent, "
                 f"{sig}. Its DCQCN preset (`sfc_seed`) caps each flow's bytes in flight at a 15 µs window, {win_b:.0f} B at "
                 f"1 Gbps, about one frame per flow, so N flows hold ≈ N frames in the network (the DCQCN paper's preset "
                 "has no window); only at the largest N does the egress queue of priority 3 reach SFC's 100 KB trigger. "
                 "That is why SFC beats RoCE+PFC here (the SFC slides' claim holds, for this reason).")
    po = a["Polo"]
    lines.append(f"- Polo below the bandwidth it leaves free ({po['good']:.0f} Mbps, background {po['bg']:.3f}): the same "
                 "network and Polo settings as `polo-core` (its numbers match that section's), where Polo's idle receiver "
                 "link is measured: D, the driving packets per epoch, falls to its floor after marks and regrows one per "
                 "epoch (`results/polo/`, polo-core and polo-queue). Here: " + C.facts("Polo", _as_facts(po)) + ".")
    ho = a["Homa"]
    lines.append(f"- Homa here is the reference preset (10 ms RESEND timeout, overcommitment = scheduled levels), not the "
                 f"slides' `preset = \"polo\"` (1 ms): {C.facts('Homa', _as_facts(ho))}; each of its timeouts costs a "
                 "round 10 ms, which sets its p99.")
    for n in ns:
        p10, p20, dq = A("core", "PL2", n), A("core", "PL2, share 20%", n), A("core", "PL2 deq+imp, share 20%", n)
        dq10 = A("core", "PL2 deq+imp", n)
        if not (p10 and p20 and dq and dq10):
            continue
        lines.append(
            f"- PL2 across the core, {n} senders. Share 10 % (the default): {p10['rounds']} rounds, {p10['good']:.0f} Mbps, "
            f"{C.facts('PL2', _as_facts(p10))}; of {p10['xout']} frames booked through s0's uplink {p10['xout'] - p10['xin']} never "
            "reached s1 (lost at s0's uplink port, the only queue between the two ToRs). Dequeue + improved: "
            f"{dq10['rounds']} rounds, {C.facts('PL2', _as_facts(dq10))}. Share 20 %: {p20['rounds']} rounds, {p20['good']:.0f} Mbps, "
            f"{C.facts('PL2', _as_facts(p20))}; dequeue + improved with it: {dq['rounds']} rounds, {dq['good']:.0f} Mbps, "
            f"{C.facts('PL2', _as_facts(dq))}.")
    lines.append(
        "- Why: s0's ToR books the core link as its uplink port up to 1 − share of its time, and the 200 Mbps "
        "background, which no ToR schedules, needs 20 % of it. Algorithm 1 as written releases a reservation when "
        "the frame *enters* s0, so its counters never see the uplink's queue: with the default 10 % it keeps "
        "booking 90 % of a link the background also uses, the 86 KB port fills, frames are dropped there, and raw "
        "PL2 never resends a lost frame (it relies on the schedule to lose none), so the round never completes. "
        "With the share at the background's 20 % the booked and the unbooked load fit the link and Algorithm 1 is "
        "lossless. Decrementing at dequeue (`PL2 deq+imp`) releases a reservation when the frame *leaves* the "
        "uplink's queue, so the link time the background takes delays the releases and with them the next "
        "grants: the schedule follows the link's actual drain, and even the 10 % share loses nothing (queues in "
        "the rows above). So PL2 survives a congested core when its counters see the congested port's queue (the "
        "core link is its own ToR's uplink here, and the decrement is at dequeue) or when the static share covers "
        "the unscheduled traffic, which must be known in advance (§7); a congested link further away, which no "
        "ToR schedules, would have neither.")
    return lines


def _as_facts(a: dict[str, Any]) -> dict[str, Any]:
    """The core table's aggregate in the shape `common.facts` reads."""
    return {"q": a["q"], "drops": a["drops"], "dp": 0, "dq": 0, "hdrop": a["hdrop"], "trims": a["trims"], "data_b": 0,
            "timeouts": a["timeouts"], "resends": a["resends"], "dups": 0, "tok_rx": 0, "tok_exp": 0, "bursts": 0,
            "unsol": 0, "marks": a["marks"], "pauses": a["pauses"], "pfc_ps": 0, "sfc": a["sfc"], "sfc_ps": 0, "lost": 0,
            "unfinished": a["unf"], "n": a["flows"]}
