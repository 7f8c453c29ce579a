"""Experiment 1 of issue 26, the rack (PL2's home): every design on PL2's testbed profile
(6 hosts at 100 Gbps, 1.5 MB static port limit, measured switch and host delays).

- *Incast* (Fig. 9's setup): n = 1–5 senders, 12 threads each, into host 5. pl2's
  `persistent` workload (each thread always holding a message) only suits transports
  that hold the sending thread until the message is on the wire (PL2, RDS, TCP, Polo):
  Homa, NDP, pHost and RoCE release the thread at once, so a persistent stream creates
  messages without end at one instant (the native run overflows its stack). So every sender instead gets a backlog released
  at once: 12 threads × `per_thread` messages of 6000 B (4 full payloads, one K = 4
  burst), thread i carrying messages i, i + 12, …; goodput is the backlog's payload over
  the time the last message arrived, and latency runs from the release (so it includes
  each design's own queueing of the backlog, on the thread or in the transport).
- *Trace replay* (Fig. 8's setup): hosts 0–2 with 11 threads each send W3, W4 or W5
  messages (Poisson arrivals, open loop) to host 3 at 30–90 % of its link.
"""

from __future__ import annotations

import copy
from typing import Any

import polars as pl

from pl2.reproduce.common import Context, testbed
from pl2.reproduce.compare import common as C
from pl2.reproduce.compare.designs import designs

NAME = "compare-rack"
TITLE = "Every design in the rack: PL2's testbed (6 hosts, 100 Gbps), incasts and W3–W5 replay"
SIZE = 6000
THREADS = 12


def names() -> list[str]:
    return C.designs_in()


def incast_base(n: int, per_thread: int, file: str, cap_ms: float) -> dict[str, Any]:
    d = copy.deepcopy(testbed())
    d["name"] = f"compare-rack-incast-{n}"
    d["run"] = {"duration": f"{round(cap_ms * 1000)}us", "stop_when_delivered": True}
    d["metrics"] = {"window": "10us", "drop_records": False, "probes": False}
    d["workload"] = [{"kind": "list", "file": file}]
    return d


def incast_csv(ctx: Context, n: int, per_thread: int) -> str:
    name = f"incast-{n}x{THREADS}x{per_thread}.csv"
    p = ctx.file(name)
    lines = ["time,src,dst,size,thread,priority"]
    for src in range(n):
        for i in range(THREADS * per_thread):
            lines.append(f"0,{src},5,{SIZE},{i % THREADS},0")
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return name


def replay_base(wl: str, load: float, warm_ms: float, until_ms: float, cap_ms: float) -> dict[str, Any]:
    d = copy.deepcopy(testbed())
    d["name"] = f"compare-rack-{wl}-{round(load * 100)}"
    d["run"] = {"duration": f"{round(cap_ms * 1000)}us", "warmup": f"{round(warm_ms * 1000)}us",
                "measure_until": f"{round(until_ms * 1000)}us", "stop_when_delivered": True}
    d["metrics"] = {"window": "10us", "drop_records": False, "probes": False}
    d["network"]["host"]["threads"] = 11
    d["workload"] = [{"kind": "poisson", "hosts": [0, 1, 2], "dests": [3], "load": round(load / 3, 6), "sizes": wl,
                      "stop": f"{round(until_ms * 1000)}us"}]
    return d


def settings(quick: bool) -> dict[str, Any]:
    if quick:
        return {"senders": [2, 5], "per_thread": 6, "replay": {"w3": 0.5}, "loads": [0.5, 0.9]}
    return {"senders": [1, 2, 3, 4, 5], "per_thread": 40, "replay": {"w3": 10.0, "w4": 30.0, "w5": 100.0},
            "loads": [0.3, 0.5, 0.7, 0.9]}


def run(ctx: Context) -> str:
    st = settings(ctx.quick)
    ds = names()
    js, bases = [], {}
    for n in st["senders"]:
        f = incast_csv(ctx, n, st["per_thread"])
        b = incast_base(n, st["per_thread"], f, 20.0)
        bases[("incast", n)] = b
        j, _ = C.jobs(ctx, NAME, ds, b, {"part": "incast", "workload": "6000B", "x": n}, base_dir=str(ctx.out))
        js += j
    # Diagnostic (not an experiment of the issue): one sender, the testbed's 224 ns send
    # path set to 0, to measure what that per-hand-over delay costs each design.
    f = incast_csv(ctx, 1, st["per_thread"])
    diag = incast_base(1, st["per_thread"], f, 20.0)
    diag["network"]["host"]["send_latency"] = "0ns"
    js += C.jobs(ctx, NAME, ds, diag, {"part": "diag", "workload": "6000B, send path 0", "x": 1}, base_dir=str(ctx.out))[0]
    for wl, win in st["replay"].items():
        for load in st["loads"]:
            b = replay_base(wl, load, 0.5, 0.5 + win, 0.5 + win + 20.0)
            bases[(wl, load)] = b
            j, _ = C.jobs(ctx, NAME, ds, b, {"part": "replay", "workload": wl, "x": load})
            js += j
    # Diagnostic: the top load of the first workload again with the latency breakdown on,
    # to measure how much of each design's tail is waiting for a sending thread.
    wl0, top = next(iter(st["replay"])), st["loads"][-1]
    wb = replay_base(wl0, top, 0.5, 0.5 + st["replay"][wl0], 0.5 + st["replay"][wl0] + 20.0)
    wb["metrics"]["breakdown"] = True
    wait_jobs = C.jobs(ctx, NAME, ds, wb, {"part": "wait", "workload": wl0, "x": top})[0]
    waits = _waits(ctx, wait_jobs)
    df, pooled = C.collect(ctx, js, lambda j: [3] if j.params["part"] == "replay" else [5])
    ctx.write_parquet(df, "rack")
    A = lambda part, wl, x, d: C.agg(pooled, {"part": part, "workload": wl, "x": x, "design": d})  # noqa: E731
    _plot(ctx, st, ds, A)

    md = [
        "Setting: PL2's testbed profile (`pl2/reproduce/testbed.toml`), every design at 100 Gbps with its own "
        "settings (table below). *Incast*: n senders × 12 threads, each sender a backlog of "
        f"{THREADS * st['per_thread']} messages of 6000 B released at t = 0 (thread i carries messages i, i + 12, …; "
        "pl2's `persistent` workload cannot drive Homa, NDP, pHost and RoCE, which release the sending thread at once: it recurses without end); goodput = payload over "
        "the time the last message arrived; latency from the release. *Replay*: hosts 0–2 (11 threads each) send "
        "W3–W5 messages to host 3, Poisson, the offered load a share of host 3's link in wire bytes (so a design "
        "with more header bytes per frame is offered slightly fewer messages: compare the tables' message counts); messages "
        "arriving in the window after 0.5 ms of warm-up are measured (windows "
        + ", ".join(f"{wl} {w:g} ms" for wl, w in st["replay"].items()) + "), the run lasts until they are all "
        "delivered or 20 ms more. Latency quantiles pool every seed's measured messages, unfinished ones as ∞ "
        "(p99.9 needs ≥ 1000 messages, p99 ≥ 100). Drops are buffer drops (port limit, PFC headroom); PL2's T-rule "
        "drops of unsolicited bursts (resent) and NDP's trims are counted apart. Control share = control wire "
        "bytes / all wire bytes the hosts sent.",
        "",
    ]
    big, top = st["senders"][-1], st["loads"][-1]
    head = [f"design", f"incast {big}×12: goodput Gbps", "incast: max queue KB", "incast: drops", "incast: p99 µs"]
    head += [f"{wl.upper()} {top:.0%}: p99 µs (unfinished)" for wl in st["replay"]]
    head += ["replays: most drops / max queue KB", f"control share ({next(iter(st['replay'])).upper()} {top:.0%})"]
    hrows = []
    for d in ds:
        a = A("incast", "6000B", big, d)
        r = [A("replay", wl, x, d) for wl in st["replay"] for x in st["loads"]]
        row = [d, f"{a['good']:.1f}", f"{a['q'] / 1000:.0f}", str(a["drops"]), C.us(a["p99"])]
        for wl in st["replay"]:
            t = A("replay", wl, top, d)
            row.append(f"{C.us(t['p99'])}" + (f" ({t['unfinished']})" if t["unfinished"] else ""))
        row += [f"{max(x['drops'] for x in r)} / {max(x['q'] for x in r) / 1000:.0f}",
                f"{100 * A('replay', next(iter(st['replay'])), top, d)['ctl']:.1f}%"]
        hrows.append(row)
    md += ["**The experiment in one table** (every design; the per-configuration tables below give every column for every point):",
           "", C.table(head, hrows), "", "<details><summary>Every configuration</summary>", ""]
    for n in st["senders"]:
        md += [f"**Incast, {n} sender(s) × 12 threads, 6000 B**", "", C.table(C.HEAD, [C.row(d, A("incast", "6000B", n, d)) for d in ds]), ""]
    for wl in st["replay"]:
        for load in st["loads"]:
            md += [f"**Replay {wl.upper()} at {load:.0%}**", "", C.table(C.HEAD, [C.row(d, A("replay", wl, load, d)) for d in ds]), ""]
    md += ["**Diagnostic: one sender, the send path set to 0** (not an experiment of the issue; see below)", "",
           C.table(C.HEAD, [C.row(d, A("diag", "6000B, send path 0", 1, d)) for d in ds]), "", "</details>", ""]
    md += [C.how_same(ds), "", C.base_block("Base scenario: incast (5 senders)", bases[("incast", st["senders"][-1])]),
           "", C.base_block(f"Base scenario: replay ({next(iter(st['replay']))}, {st['loads'][-1]:.0%})",
                            bases[(next(iter(st["replay"])), st["loads"][-1])]), ""]
    md += _claims_and_why(ctx, st, ds, A)
    md += ["", f"- **Where the replay's tail is spent** (diagnostic: {wl0.upper()} at {top:.0%} rerun with "
           "`metrics.breakdown = true`): p99 of latency / p99 of latency less its *transport wait*, µs: "
           + ", ".join(f"{d} {C.us(w[0])} / {C.us(w[1])}" for d, w in waits.items()) + ". The transport wait runs from "
           "a message's arrival to the creation of its last frame (waiting for one of the host's 11 threads, for a "
           "reservation, a window, a rate pacer, tokens or a retransmission timeout: `sim/breakdown.rs`); the rest is "
           "the last frame's send path, NIC and switch queues, wire and receive path. Where the two columns differ "
           "most, the tail is made at the sender, not in the network."]
    return "\n".join(md)


def _waits(ctx: Context, js: list) -> dict[str, tuple[float | None, float | None]]:
    """Per design: p99 of latency and of latency less the wait for a thread, all seeds pooled."""
    acc: dict[str, tuple[list[float], list[float], int]] = {}
    for job, res in zip(js, ctx.run_many(js), strict=True):
        m = res.messages.filter(pl.col("in_window") & (pl.col("dst") == 3))
        f = m.filter(pl.col("latency_ps").is_not_null())
        lat, net, n = acc.setdefault(job.params["design"], ([], [], 0))
        lat += (f["latency_ps"] / 1e6).to_list()
        net += ((f["latency_ps"] - f["transport_wait_ps"].fill_null(0)) / 1e6).to_list()
        acc[job.params["design"]] = (lat, net, n + m.height)
    return {d: (C.pct(sorted(a), n, 0.99), C.pct(sorted(b), n, 0.99)) for d, (a, b, n) in acc.items()}


def _plot(ctx: Context, st: dict, ds: list[str], A) -> None:
    import matplotlib.pyplot as plt

    reg = designs()
    wls = list(st["replay"])
    fig, axes = plt.subplots(1, 2 + len(wls), figsize=(4.2 * (2 + len(wls)), 4.4), squeeze=False)
    ax = axes[0]
    ns = st["senders"]
    for d in ds:
        c = reg[d].color
        ls = "--" if d in ("PL2 deq+imp", "Cubic", "SFC") else "-"
        ax[0].plot(ns, [A("incast", "6000B", n, d)["good"] for n in ns], marker="o", color=c, ls=ls, label=d)
        ax[1].plot(ns, [max(A("incast", "6000B", n, d)["q"], 1) / 1000 for n in ns], marker="o", color=c, ls=ls)
        for i, wl in enumerate(wls):
            ys = [A("replay", wl, x, d)["p99"] for x in st["loads"]]
            ax[2 + i].plot([100 * x for x in st["loads"]], [y if y is not None and y != float("inf") else float("nan") for y in ys],
                           marker="o", color=c, ls=ls)
    ax[0].set_title("(a) incast goodput into h5 (Gbps)")
    ax[0].set_xlabel("senders (12 threads each)")
    ax[0].set_xticks(ns)
    ax[1].set_xticks(ns)
    ax[1].set_title("(b) incast: largest switch queue (KB)")
    ax[1].set_yscale("log")
    ax[1].axhline(1500, color="k", ls=":", lw=0.8)
    ax[1].set_xlabel("senders")
    for i, wl in enumerate(wls):
        ax[2 + i].set_title(f"({chr(99 + i)}) {wl.upper()} replay: p99 latency (µs)")
        ax[2 + i].set_yscale("log")
        ax[2 + i].set_xlabel("offered load into h3 (%)")
    for a in ax:
        a.grid(True, alpha=0.3)
    fig.legend(*ax[0].get_legend_handles_labels(), loc="lower center", ncol=min(len(ds), 11), fontsize=8, frameon=False)
    fig.suptitle(f"Every design in PL2's rack (6 hosts, 100 Gbps; {len(ctx.seeds)} seed(s)); missing points: p99 unfinished (∞)", fontsize=10)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    ctx.save(fig, "rack")


def _claims_and_why(ctx: Context, st: dict, ds: list[str], A) -> list[str]:
    import math

    ns = st["senders"]
    multi = [n for n in ns if n >= 2]
    pl2 = [A("incast", "6000B", n, "PL2") for n in multi]
    pl2q = max(a["q"] for a in pl2)
    pl2d = sum(a["drops"] for a in pl2)
    ctx.claim("PL2 (paper §6.4): no loss in a rack incast (2–5 senders, buffer drops)", "0", str(pl2d), pl2d == 0)
    ctx.claim("PL2 (paper §6.4): queue stays below 200 KiB (2–5 senders)", "< 200 KiB", f"{pl2q / 1024:.1f} KiB", pl2q < 200 * 1024)
    big = ns[-1]
    a5 = {d: A("incast", "6000B", big, d) for d in ds}
    dq = a5["DCTCP"]["q"]
    ctx.claim(f"DCTCP (paper): the queue stays near K = 100 KB (incast of {big} senders: max queue ≤ 2 K)", "≈ K",
              f"{dq / 1000:.0f} KB", dq <= 2 * 100_230)
    wl0, top = next(iter(st["replay"])), st["loads"][-1]
    r = {d: A("replay", wl0, top, d) for d in ds}
    p99 = {d: (r[d]["p99"] if r[d]["p99"] is not None else math.inf) for d in ds}
    ctx.claim(f"Homa (paper, evaluation): lower tail latency than pHost and NDP for short messages ({wl0.upper()} at {top:.0%}, p99)",
              "Homa < pHost, NDP", f"Homa {C.us(p99['Homa'])}, pHost {C.us(p99['pHost'])}, NDP {C.us(p99['NDP'])} µs",
              p99["Homa"] < p99["pHost"] and p99["Homa"] < p99["NDP"])
    po = a5["Polo"]
    ctx.claim(f"Polo (slides, \"controlling the queue well\"): the bottleneck queue stays short (incast of {big} senders: "
              "max queue ≤ 10 × its 7.7 KB ECN threshold)", "short queue", f"{po['q'] / 1000:.0f} KB", po["q"] <= 77_100)
    sf, ro = a5["SFC"], a5["RoCE+PFC"]
    ctx.claim(f"SFC (slides): fewer PFC pauses than DCQCN over PFC alone (incast of {big} senders)", "SFC < RoCE+PFC",
              f"SFC {sf['pauses']}, RoCE+PFC {ro['pauses']} PAUSE frames", sf["pauses"] < ro["pauses"])

    lines = ["", "**What surprised us, and why (measured; every clause is a counter of these runs)**", ""]
    order = sorted(ds, key=lambda d: -a5[d]["good"])
    lines.append(f"- Incast of {big} senders × 12 threads: goodput " + ", ".join(f"{d} {a5[d]['good']:.1f}" for d in order)
                 + " Gbps (the wire's bound for 1500 B payloads: 97.3).")
    for d in ds:
        a = a5[d]
        if a["good"] < 0.7 * 97.3:
            lines.append(f"- **{d}** reaches only {a['good']:.1f} Gbps in the {big}-sender incast: {C.facts(d, a, 1_500_000)}.")
    lines.append("- Why Homa and RDS collapse in the incast: both send a message below RTTbytes (6000 B ≪ Homa's derived "
                 "RTTbytes and RDS's 61 KiB) entirely unscheduled, at line rate, so 5 senders' backlogs arrive at 5 × 100 "
                 "Gbps into one 100 Gbps port and fill its 1.5 MB (DCTCP and Cubic send at most their initial windows, "
                 "60 × 10 segments = 876 KB, before the receiver's ACKs clock them). The losses are then recovered "
                 "only by timers: Homa's reference RESEND timeout is 10 ms (set for a simulator without loss), RDS's "
                 "1 ms. Their papers' latency claims assume switches that absorb the unscheduled bytes.")
    ph = a5["pHost"]
    if ph["tok_rx"]:
        lines.append(f"- pHost at 100 Gbps: {100 * ph['tok_exp'] / ph['tok_rx']:.0f} % of tokens expire unused and "
                     f"{ph['dups']} resent packets are duplicates. YAPS's timers are counted in MTU wire times (token life "
                     "1.5, regrant after 9): 185 ns and 1.1 µs at 100 Gbps, below this rack's round trip (the host's "
                     "receive path alone is 0.22–1.2 µs), so tokens die while the sender's NIC is busy and the receiver "
                     "regrants packets still in flight.")
    one = A("incast", "6000B", 1, "RoCE+PFC") or A("incast", "6000B", ns[0], "RoCE+PFC")
    n1 = 1 if A("incast", "6000B", 1, "RoCE+PFC") else ns[0]
    slow = [d for d in ("Polo", "RoCE+PFC", "SFC") if A("incast", "6000B", n1, d)["good"] < 0.7 * 97.3]
    if slow:
        dg = {d: A("diag", "6000B, send path 0", 1, d) for d in ds}
        lines.append(f"- With {n1} sender(s), " + ", ".join(f"{d} {A('incast', '6000B', n1, d)['good']:.1f}" for d in slow)
                     + " Gbps with no queue to speak of (RoCE+PFC: " + f"{one['q'] / 1000:.1f} KB, {one['pauses']} pauses). The "
                     "diagnostic run with the testbed's 224 ns send path set to 0 (one sender; `part = diag` in the data) "
                     "gives " + ", ".join(f"{d} {dg[d]['good']:.1f}" for d in slow) + " Gbps: these designs pay the send path "
                     "on every frame (Polo keeps one data packet in its NIC and hands the next over when it has left, "
                     "`docs/model.md` \"Polo\"), one 1542 B frame per ≈ 123 + 224 ns (≈ 35 Gbps of wire) per sender; PL2 "
                     "hands over K = 4 frames per burst (one sample of the send path each) and RoCE's pacer keeps "
                     "`tx_pipeline_frames` frames in the send path (`docs/model.md` \"RoCE\"), so neither is held back. A "
                     "cost of this profile's host model, not of the designs' congestion control.")
    lines.append(f"- SFC against RoCE+PFC ({big} senders): SFC {C.facts('SFC', sf)}; RoCE+PFC {C.facts('RoCE+PFC', ro)}. "
                 f"SFC asked for {sf['sfc_ps'] / 1e6:.0f} µs of flow pauses, yet goodput ({sf['good']:.1f} against {ro['good']:.1f} Gbps), "
                 f"largest queue and PFC pauses ({sf['pauses']} against {ro['pauses']}) hardly move: "
                 "pl2's RoCE makes one flow (QP) per message and releases the thread at once, so each sender has its "
                 f"whole backlog ({THREADS * st['per_thread']} messages) as flows side by side; SFC pauses the flow whose "
                 "frame crossed the trigger, and the NIC's round robin sends the sender's next flow instead. Per-flow "
                 "source pausing needs few flows per source; with many, only a per-source pause (`suppress_per = "
                 "\"source\"` still pauses one flow; `proxy = true` pauses the NIC) can slow the host.")
    hd = [(n, d, A("incast", "6000B", n, d)["hdrop"]) for n in ns for d in ("RoCE+PFC", "SFC") if A("incast", "6000B", n, d)["hdrop"]]
    if hd:
        lines.append("- **Lossless RoCE loses frames**: PFC headroom overflows in the incast (" + ", ".join(f"{d} {n} senders: {k}" for n, d, k in hd)
                     + " frames over headroom, the only drops these designs have). pl2's default headroom (`docs/model.md` "
                     "\"PFC\") bounds what can arrive after XOFF, so this is a fault in the model to trace, not a property "
                     "of DCQCN or PFC (the last one found: a PAUSE queued behind the host's receive path).")
    lines.append(f"- Polo's queue in the incast ({po['q'] / 1000:.0f} KB against its 7.7 KB threshold): a 6000 B message is 4 "
                 "packets, inside Polo's first burst of 12 (`initial_window_packets`, `docs/model.md` \"Polo\"), which "
                 "leaves before any mark can return, and Polo frees the sending thread once a message is handed to the "
                 "NIC, so each thread's next message follows at once: Polo's receiver-driven control never gets to act "
                 f"on these messages ({C.facts('Polo', po, 1_500_000)}).")
    dc = a5["DCTCP"]
    lines.append(f"- DCTCP's queue in the incast ({dc['q'] / 1000:.0f} KB ≫ K = 100 KB): 60 connections × the initial window "
                 "of 10 segments = 876 KB of payload leave before any ECN echo can return; DCTCP controls a queue only "
                 "once windows are what limits the senders.")
    same = [(w, x) for w in st["replay"] for x in st["loads"]
            if A("replay", w, x, "DCTCP")["good"] == A("replay", w, x, "Cubic")["good"]]
    if same:
        lines.append("- DCTCP and Cubic give the same goodput (to the last digit) in " + ", ".join(f"{w.upper()} {x:.0%}" for w, x in same)
                     + ": their messages fit in the initial window of 10 segments on connections that stay open, so "
                     "neither algorithm's window ever limits them (DCTCP's ECN marks change only its later windows).")
    bad = [(w, x) for w in st["replay"] for x in st["loads"] if A("replay", w, x, "PL2")["unfinished"] or A("replay", w, x, "PL2")["drops"]]
    if bad:
        lines.append("- **PL2 as written (Algorithm 1) loses frames in the replays** — buffer drops / unfinished messages / "
                     "largest queue KB, against PL2 deq+imp: " + "; ".join(
                         f"{w.upper()} {x:.0%}: {A('replay', w, x, 'PL2')['drops']} / {A('replay', w, x, 'PL2')['unfinished']} / "
                         f"{A('replay', w, x, 'PL2')['q'] / 1000:.0f} against {A('replay', w, x, 'PL2 deq+imp')['drops']} / "
                         f"{A('replay', w, x, 'PL2 deq+imp')['unfinished']} / {A('replay', w, x, 'PL2 deq+imp')['q'] / 1000:.0f}" for w, x in bad)
                     + ". Most bursts go unsolicited in the replays (e.g. "
                     + f"{A('replay', bad[-1][0], bad[-1][1], 'PL2')['unsol']} of {A('replay', bad[-1][0], bad[-1][1], 'PL2')['bursts']} at "
                     f"{bad[-1][0].upper()} {bad[-1][1]:.0%}), and Algorithm 1's ingress decrement stops counting a frame once it "
                     "enters the switch, so the T rule never sees the queue those bursts build (`docs/model.md`, \"Which PL2 "
                     "to run\"; results/paper Fig. 8); raw PL2 never resends, so each drop leaves a message unfinished. With "
                     "decrement at dequeue and improved admission PL2 loses nothing and keeps its queue at tens of KB.")
    qn = max(multi, key=lambda n: A("incast", "6000B", n, "PL2")["q"])
    aq, bq = A("incast", "6000B", qn, "PL2"), A("incast", "6000B", qn, "PL2 deq+imp")
    if aq["q"] >= 200 * 1024:
        lines.append(f"- PL2's incast queue exceeds 200 KiB with {qn} senders ({aq['q'] / 1000:.0f} KB, no drop; deq+imp "
                     f"{bq['q'] / 1000:.0f} KB): the overflow of Algorithm 1's ingress decrement with few senders that "
                     "`reproduce/fig9.py` reports for Fig. 9 (the counters cannot see packets already queued).")
    return lines
