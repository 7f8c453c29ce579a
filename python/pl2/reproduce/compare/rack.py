"""Experiment 1 of issue 26, the rack (PL2's home): every design on PL2's testbed profile
(6 hosts at 100 Gbps, 1.5 MB static port limit, measured switch and host delays).

- *Incast* (Fig. 9's setup): n = 1–5 senders, 12 threads each, into host 5. pl2's
  `persistent` workload (each thread always holding a message) only suits transports
  that hold the sending thread until the message is on the wire (PL2, RDS, TCP, Polo,
  RoCE): Homa, NDP and pHost release the thread at once, so a persistent stream creates
  messages without end at one instant. So every sender instead gets a backlog released
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
    for wl, win in st["replay"].items():
        for load in st["loads"]:
            b = replay_base(wl, load, 0.5, 0.5 + win, 0.5 + win + 20.0)
            bases[(wl, load)] = b
            j, _ = C.jobs(ctx, NAME, ds, b, {"part": "replay", "workload": wl, "x": load})
            js += j
    df, pooled = C.collect(ctx, js, lambda j: [5] if j.params["part"] == "incast" else [3])
    ctx.write_parquet(df, "rack")
    A = lambda part, wl, x, d: C.agg(pooled, {"part": part, "workload": wl, "x": x, "design": d})  # noqa: E731
    _plot(ctx, st, ds, A)

    md = [
        "Setting: PL2's testbed profile (`pl2/reproduce/testbed.toml`), every design at 100 Gbps with its own "
        "settings (table below). *Incast*: n senders × 12 threads, each sender a backlog of "
        f"{THREADS * st['per_thread']} messages of 6000 B released at t = 0 (thread i carries messages i, i + 12, …; "
        "pl2's `persistent` workload cannot drive Homa, NDP and pHost, see the module's doc); goodput = payload over "
        "the time the last message arrived; latency from the release. *Replay*: hosts 0–2 (11 threads each) send "
        "W3–W5 messages to host 3, Poisson, the offered load a share of host 3's link in wire bytes; messages "
        "arriving in the window after 0.5 ms of warm-up are measured (windows "
        + ", ".join(f"{wl} {w:g} ms" for wl, w in st["replay"].items()) + "), the run lasts until they are all "
        "delivered or 20 ms more. Latency quantiles pool every seed's measured messages, unfinished ones as ∞ "
        "(p99.9 needs ≥ 1000 messages, p99 ≥ 100). Drops are buffer drops (port limit, PFC headroom); PL2's T-rule "
        "drops of unsolicited bursts (resent) and NDP's trims are counted apart. Control share = control wire "
        "bytes / all wire bytes the hosts sent.",
        "",
    ]
    for n in st["senders"]:
        md += [f"**Incast, {n} sender(s) × 12 threads, 6000 B**", "", C.table(C.HEAD, [C.row(d, A("incast", "6000B", n, d)) for d in ds]), ""]
    for wl in st["replay"]:
        for load in st["loads"]:
            md += [f"**Replay {wl.upper()} at {load:.0%}**", "", C.table(C.HEAD, [C.row(d, A("replay", wl, load, d)) for d in ds]), ""]
    md += [C.how_same(ds), "", C.base_block("Base scenario: incast (5 senders)", bases[("incast", st["senders"][-1])]),
           "", C.base_block(f"Base scenario: replay ({next(iter(st['replay']))}, {st['loads'][-1]:.0%})",
                            bases[(next(iter(st["replay"])), st["loads"][-1])]), ""]
    md += _claims_and_why(ctx, st, ds, A)
    return "\n".join(md)


def _plot(ctx: Context, st: dict, ds: list[str], A) -> None:
    import matplotlib.pyplot as plt

    reg = designs()
    wls = list(st["replay"])
    fig, axes = plt.subplots(1, 2 + len(wls), figsize=(4.2 * (2 + len(wls)), 4.4), squeeze=False)
    ax = axes[0]
    ns = st["senders"]
    for d in ds:
        c = reg[d].color
        ls = "--" if d in ("PL2 deq+imp", "Cubic") else "-"
        ax[0].plot(ns, [A("incast", "6000B", n, d)["good"] for n in ns], marker="o", color=c, ls=ls, label=d)
        ax[1].plot(ns, [max(A("incast", "6000B", n, d)["q"], 1) / 1000 for n in ns], marker="o", color=c, ls=ls)
        for i, wl in enumerate(wls):
            ys = [A("replay", wl, x, d)["p99"] for x in st["loads"]]
            ax[2 + i].plot([100 * x for x in st["loads"]], [y if y is not None and y != float("inf") else float("nan") for y in ys],
                           marker="o", color=c, ls=ls)
    ax[0].set_title("(a) incast goodput into h5 (Gbps)")
    ax[0].set_xlabel("senders (12 threads each)")
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
    ns = st["senders"]
    multi = [n for n in ns if n >= 2]
    pl2 = [A("incast", "6000B", n, "PL2") for n in multi]
    pl2q = max(a["q"] for a in pl2)
    pl2d = sum(a["drops"] for a in pl2)
    ctx.claim("PL2 (paper §6.4): no loss in a rack incast (2–5 senders, buffer drops)", "0", str(pl2d), pl2d == 0)
    ctx.claim("PL2 (paper §6.4): queue stays below 200 KiB (2–5 senders)", "< 200 KiB", f"{pl2q / 1024:.1f} KiB", pl2q < 200 * 1024)
    big = ns[-1]
    best = max(ds, key=lambda d: A("incast", "6000B", big, d)["good"])
    lines = ["", "**Observations (measured; counters from the tables above)**", ""]
    a5 = {d: A("incast", "6000B", big, d) for d in ds}
    order = sorted(ds, key=lambda d: -a5[d]["good"])
    lines.append(f"- Incast of {big} senders: goodput ranks " + ", ".join(f"{d} {a5[d]['good']:.1f}" for d in order)
                 + f" Gbps. The largest queues: " + ", ".join(f"{d} {a5[d]['q'] / 1000:.0f} KB" for d in sorted(ds, key=lambda d: -a5[d]['q'])[:4])
                 + "; PL2 and PL2 deq+imp keep theirs at " + f"{a5['PL2']['q'] / 1000:.0f} / {a5['PL2 deq+imp']['q'] / 1000:.0f} KB.")
    for d in ds:
        a = a5[d]
        if a["drops"] > 0 and a["q"] >= 1_400_000:
            lines.append(f"- **{d}** fills the 1.5 MB port (max queue {a['q'] / 1000:.0f} KB) and loses {a['drops']} frames "
                         f"({a['resends']} resends, {a['timeouts']} timeouts): its senders' first window/unscheduled bytes of "
                         f"{big} × 72 messages arrive at once and nothing holds them back before the port limit.")
    wl0 = next(iter(st["replay"]))
    top = st["loads"][-1]
    r = {d: A("replay", wl0, top, d) for d in ds}
    fin = [d for d in ds if r[d]["p99"] is not None and r[d]["p99"] != float("inf")]
    if fin:
        lo = min(fin, key=lambda d: r[d]["p99"])
        lines.append(f"- {wl0.upper()} at {top:.0%}: lowest p99 {lo} ({C.us(r[lo]['p99'])} µs); "
                     + ", ".join(f"{d} {C.us(r[d]['p99'])}" for d in ds) + " µs.")
    hd = [d for d in ds if any(A(p, w, x, d) and A(p, w, x, d)["hdrop"] for p, w, xs in
                                [("incast", "6000B", ns)] + [("replay", w, st["loads"]) for w in st["replay"]] for x in xs)]
    if hd:
        lines.append(f"- PFC headroom overflow: {', '.join(hd)} lose frames in the lossless class (`pfc.headroom_drops` > 0) "
                     "although pl2's default headroom is meant to make that impossible: see \"surprises\".")
    del best
    return lines
