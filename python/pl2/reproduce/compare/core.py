"""Experiment 4 of issue 26: Polo's 1 Gbps core-bottleneck incast (`reproduce/polo/core.py`)
with every design. N senders on switch s0, the receiver on s1; the s0–s1 link (1 Gbps,
15 µs) also carries a 200 Mbps raw UDP background at priority 0; host links 1 Gbps, 5 µs
(a 50 µs base RTT); every port holds at most 86 KB. Rounds: every sender sends one
100 KB flow, the next round once the receiver has them all.

PL2 cannot be built on this network: its scheduler is the ToR's program of a single
rack, and the bottleneck here is a link between two switches that no PL2 scheduler
sees. We show pl2's refusal, and the closest PL2 can run: the same senders, receiver and
background in ONE rack (links 12.5 µs, the same 50 µs RTT), where the background crosses
the receiver's downlink instead of a core link, with and without PL2's external share
(§7: every reservation counts 1/(1 − share) slots) set to the background's 20 %.
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
#: The rack stand-ins for PL2 (not the core network: see the module's doc).
STAND_INS = {
    "PL2 rack, share 0": {"kind": "pl2", "k": 4, "t": 15},
    "PL2 rack, share 20%": {"kind": "pl2", "k": 4, "t": 15, "external_share_ppm": BG_SHARE_PPM},
    "PL2 deq+imp rack, share 20%": {"kind": "pl2", "k": 4, "t": 15, "decrement_at": "dequeue", "improved": True,
                                    "external_share_ppm": BG_SHARE_PPM},
}


def senders(quick: bool) -> list[int]:
    return [8, 32] if quick else [8, 16, 32, 64]


def rounds(quick: bool) -> int:
    return 2 if quick else 5


def base(n: int, r: int, rack: bool = False) -> tuple[dict[str, Any], int]:
    """The core scenario (or, `rack`, PL2's one-rack stand-in) and the receiver's index."""
    cap_ms = r * n * FLOW_B * 8 / (0.1 * 0.8e9) * 1e3 + 20
    if rack:
        topo, recv, delay = {"kind": "single_rack", "hosts": n + 2}, n + 1, "12500ns"
        bg = background(n, n + 1, cap_ms)
    else:
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
    for k, t in STAND_INS.items():
        reg[k] = Design(k, t, {}, (), {"PL2 rack, share 0": "midnightblue", "PL2 rack, share 20%": "tab:blue"}.get(k, "tab:cyan"), True)
    js, refused, bases = [], {}, {}
    for n in ns:
        b, recv = base(n, r)
        bases[n] = b
        for d in ds:
            j, ref = C.jobs(ctx, NAME, [d], b, {"net": "core", "senders": n}, link_gbps=1.0)
            js += j
            refused.update(ref)
        rb, _ = base(n, r, rack=True)
        bases[("rack", n)] = rb
        for k in STAND_INS:
            sc = C.build(rb, reg[k], f"{NAME}-rack-{n}-{k.replace(' ', '').replace(',', '').replace('%', '')}")
            js += [C.Job(sc, {"figure": NAME, "net": "rack", "senders": n, "design": k}, s, NAME) for s in ctx.seeds]
    rows, pooled = [], {}
    for job, res in zip(js, ctx.run_many(js), strict=True):
        p = job.params
        n = p["senders"]
        recv = n + 1
        bg_dst = n + 2 if p["net"] == "core" else n + 1
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
            if p["net"] == "rack":
                bg = bg.filter(pl.col("src") == n)
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
                "hdrop": int(g["headroom_drops"].sum()), "sfc": int(g["sfc_signals"].sum())}

    head = ["senders", "design", "goodput Mbps (rounds done)", "p99 FCT µs", "unfinished flows", "background delivered",
            "max queue KB", "drops", "T-rule drops / trims", "control share", "ECN marks", "resends / timeouts", "PFC pauses"]
    trows = []
    for n in ns:
        for d in ds + list(STAND_INS):
            net = "rack" if d in STAND_INS else "core"
            a = A(net, d, n)
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
        "**PL2 across a congested core.** pl2 refuses the core network for PL2: "
        f"\"{refused.get('PL2', '?')}\". That is PL2's design, not a missing option: its scheduler lives in the ToR and "
        "books the rack's host ports (PL2 §4); a core link between two switches is a resource no PL2 scheduler "
        "reserves, so PL2 could only treat the core as external traffic (§7). The rows *PL2 rack, …* run the closest "
        "thing pl2 can: the same senders, receiver and 200 Mbps background in one rack with the same 50 µs RTT, "
        "where the background crosses the receiver's downlink (which PL2 does schedule) instead of a core link. "
        "With share 0 PL2 books the whole downlink while the background also uses it; with `external_share_ppm = "
        f"{BG_SHARE_PPM}` every reservation counts 1/(1 − 0.2) slots so 20 % of the port stays free for it.",
        "",
        C.how_same(ds, 1.0), "", C.base_block(f"Base scenario ({big} senders)", bases[big]), "",
        C.base_block(f"PL2's rack stand-in ({big} senders; `[transport]` as in the table's PL2 rows)", bases[("rack", big)]), "",
    ]
    md += _claims_and_why(ctx, ns, ds, A)
    return "\n".join(md)


def _plot(ctx: Context, ns: list[int], ds: list[str], A, reg: dict) -> None:
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(1, 2, figsize=(12, 4.6))
    for d in ds + list(STAND_INS):
        net = "rack" if d in STAND_INS else "core"
        pts = [(n, A(net, d, n)) for n in ns]
        pts = [(n, a) for n, a in pts if a is not None]
        if not pts:
            continue
        ls = ":" if d in STAND_INS else ("--" if d in ("PL2 deq+imp", "Cubic", "SFC") else "-")
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
    fig.suptitle(f"Polo's core-bottleneck incast with every design (dotted: PL2 in its one-rack stand-in; {len(ctx.seeds)} seed(s))", fontsize=10)
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
    s0, s20 = A("rack", "PL2 rack, share 0", big), A("rack", "PL2 rack, share 20%", big)
    dq = A("rack", "PL2 deq+imp rack, share 20%", big)
    if s0 and s20 and dq:
        lines.append(f"- PL2's stand-in at {big} senders. Share 0: {s0['rounds']} rounds, {C.facts('PL2', _as_facts(s0))}: PL2 books "
                     "the whole downlink while 200 Mbps of unscheduled UDP also crosses it, the port overflows, and raw PL2 "
                     f"never resends, so a round never completes. Share 20 %: {s20['rounds']} rounds, "
                     f"{s20['good']:.0f} Mbps, {C.facts('PL2', _as_facts(s20))}. Dequeue + improved with the share: {dq['rounds']} "
                     f"rounds, {dq['good']:.0f} Mbps, {C.facts('PL2', _as_facts(dq))}. PL2 works beside external traffic only "
                     "when the share it keeps free covers that traffic, and it must know the share in advance: across a real "
                     "core, where the congested link is not the ToR's, it has nothing to book.")
    lo = min(ns)
    l0, l20 = A("rack", "PL2 rack, share 20%", lo), A("rack", "PL2 deq+imp rack, share 20%", lo)
    if l0 and l20 and l0["unf"]:
        lines.append(f"- With {lo} senders even the share does not save Algorithm 1 as written ({l0['rounds']} rounds, "
                     f"{C.facts('PL2', _as_facts(l0))}); with dequeue + improved: {l20['rounds']} rounds, {C.facts('PL2', _as_facts(l20))}. "
                     "The two rows differ only in Algorithm 1's ingress decrement and unsolicited admission, whose "
                     "overflow of incast ports `docs/model.md` (\"Which PL2 to run\") describes; every unfinished message "
                     "is one that lost a frame, which raw PL2 never resends.")
    return lines


def _as_facts(a: dict[str, Any]) -> dict[str, Any]:
    """The core table's aggregate in the shape `common.facts` reads."""
    return {"q": a["q"], "drops": a["drops"], "dp": 0, "dq": 0, "hdrop": a["hdrop"], "trims": a["trims"], "data_b": 0,
            "timeouts": a["timeouts"], "resends": a["resends"], "dups": 0, "tok_rx": 0, "tok_exp": 0, "bursts": 0,
            "unsol": 0, "marks": a["marks"], "pauses": a["pauses"], "pfc_ps": 0, "sfc": a["sfc"], "sfc_ps": 0, "lost": 0,
            "unfinished": a["unf"], "n": a["flows"]}
