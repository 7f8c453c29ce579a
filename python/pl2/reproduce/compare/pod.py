"""Experiment 3 of issue 26: a leaf–spine pod. 4 racks of 16 hosts at 100 Gbps, 8 spines
with 100 Gbps uplinks from every leaf (2:1 oversubscribed: 16 × 100 G down, 8 × 100 G
up), pl2's default switch (12 MiB shared buffer, dynamic thresholds α = 1, 350 ns
pipeline), 16 threads per host. Workloads: W3 and W5 between all hosts (Poisson, each
host offering 50 % or 80 % of its link), and a 60-to-1 incast (hosts 4–63 each send one
100 KB message to host 0 at once: 12 in the receiver's rack, 48 across the spines).

PL2 schedules within each rack with inter-rack traffic through its external share (§7,
`transport/pl2/switch.rs`): every leaf runs its own scheduler; a burst to another rack
reserves its sender's port and the leaf's uplinks (one port of 8 × 100 Gbps), crosses
the spines unscheduled, and enters the destination rack into the 10 % of each downlink
the share keeps free (the destination leaf forwards it without touching its counters).
Nothing coordinates two racks' bursts to one host: that is §7's stated limit, and the
section measures what it costs.
"""

from __future__ import annotations

import math
from typing import Any

from pl2.reproduce.common import Context
from pl2.reproduce.compare import common as C
from pl2.reproduce.compare import fluid
from pl2.reproduce.compare import polo_tail as PT
from pl2.reproduce.compare.designs import designs

NAME = "compare-pod"
TITLE = "Every design in a leaf–spine pod (4 racks × 16 hosts, 100 Gbps, 2:1 oversubscribed)"
#: The pod: leaves of hosts, spines (every leaf joined to every spine).
LEAVES, PER_LEAF, SPINES = 4, 16, 8
HOSTS = LEAVES * PER_LEAF
#: Diagnostic for NDP's incast: htsim's default, headers the header FIFO cannot hold
#: dropped rather than returned to their sender (`designs.py`).
HDROP = "NDP header drop"
#: Diagnostic for PL2 across racks: uplinks taken in turn, not by a per-flow hash.
ECMP_RR = "PL2 uplinks round robin"
#: Diagnostics of pHost's unfinished W5 messages: its tokens given in turn, not by SRPT;
#: YAPS's two timers (a token's life, the re-grant wait) raised to 1000 MTU times.
PHOST_RR = "pHost round robin"
PHOST_TIMERS = "pHost both timers"
PHOST_WINDOW = "pHost window 64"
#: pHost's W5 diagnostics and how the text names each change.
PHOST_W5 = {PHOST_RR: "the receiver's tokens given in turn instead of by SRPT",
            PHOST_TIMERS: "YAPS's two timers (a token's life, the re-grant wait) at 1000 MTU times",
            PHOST_WINDOW: "a flow's token window at 64 instead of YAPS's 8"}
#: Cap of a run that carries one message alone (its FCT is the message's own pace).
ALONE_CAP_MS = 20.0
#: Diagnostic of SFC's incast goodput: every signal's pause fixed at the suppression period.
SFC_FIXED = "SFC pause 6us"


def topology() -> dict[str, Any]:
    return {"kind": "leaf_spine", "leaves": LEAVES, "spines": SPINES, "hosts_per_leaf": PER_LEAF,
            "uplink": {"rate": "100Gbps", "delay": "500ns"}}


def base(part: str, wl: str, load: float, warm_ms: float, until_ms: float, cap_ms: float) -> dict[str, Any]:
    d: dict[str, Any] = {
        "name": f"compare-pod-{part}",
        "run": {"duration": f"{round(cap_ms * 1000)}us", "stop_when_delivered": True},
        "network": {"topology": topology(), "link": {"rate": "100Gbps", "delay": "100ns"}, "host": {"threads": 16}},
        "metrics": {"window": "10us", "drop_records": False, "probes": False},
    }
    if part == "incast":
        d["workload"] = [{"kind": "incast", "senders": f"4..{HOSTS}", "receiver": 0, "size": "100KB", "count": 1}]
    else:
        d["run"].update({"warmup": f"{round(warm_ms * 1000)}us", "measure_until": f"{round(until_ms * 1000)}us"})
        d["workload"] = [{"kind": "poisson", "load": load, "sizes": wl, "stop": f"{round(until_ms * 1000)}us"}]
    return d


def settings(quick: bool) -> dict[str, Any]:
    """Windows in ms; `shared`: the long-flow diagnostic's numbers of flows, message size
    and designs."""
    if quick:
        return {"replay": {"w3": 0.05}, "loads": [0.5], "warm": 0.02,
                "shared": {"n": [2], "bytes": 1_000_000, "designs": ["Polo", "Polo ECN 65"]}}
    return {"replay": {"w3": 0.5, "w5": 1.5}, "loads": [0.5, 0.8], "warm": 0.1,
            "shared": {"n": [1, 2, 4], "bytes": 10_000_000, "designs": PT.SHARED_DESIGNS}}


def shared_base(n: int, size: int) -> dict[str, Any]:
    """Hosts `PER_LEAF` to `PER_LEAF` + `n` − 1 (rack 1) each send one `size`-byte message to host 0 (rack 0)
    at once, nothing else: `n` long flows sharing host 0's link, with probes on (Polo's D)."""
    d = base("incast", "", 0, 0, 0, 20.0)
    d["name"] = "compare-pod-shared"
    d["workload"] = [{"kind": "incast", "senders": f"{PER_LEAF}..{PER_LEAF + n}", "receiver": 0, "size": f"{size}B", "count": 1}]
    d["metrics"]["probes"] = True
    return d


def run(ctx: Context) -> str:
    st = settings(ctx.quick)
    ds = C.designs_in()
    js, refused, bases = [], {}, {}
    b = base("incast", "", 0, 0, 0, 20.0)
    bases["incast"] = b
    j, ref = C.jobs(ctx, NAME, ds + [HDROP], b, {"part": "incast", "workload": "60-to-1", "x": 0.0})
    js += j
    refused.update(ref)
    for wl, win in st["replay"].items():
        for load in st["loads"]:
            b = base(wl, wl, load, st["warm"], st["warm"] + win, st["warm"] + win + 10.0)
            bases[(wl, load)] = b
            j, ref = C.jobs(ctx, NAME, ds, b, {"part": "replay", "workload": wl, "x": load})
            js += j
            refused.update(ref)
    # Diagnostic (seed 1 only): PL2 with the uplinks taken in turn instead of by a
    # per-flow hash, to measure what ECMP collisions on the uplinks a leaf books as one
    # port cost (§7).
    for k, b in bases.items() if not ctx.quick else ():
        part, wl, x = ("incast", "60-to-1", 0.0) if k == "incast" else ("replay", k[0], k[1])
        js += C.jobs(ctx, NAME, [ECMP_RR] + ([PT.POLO_NP, SFC_FIXED] if part == "incast" else []), b,
                     {"part": part, "workload": wl, "x": x}, seeds=[ctx.seeds[0]])[0]
    # Diagnostic (every seed; the text's details from the first): where Polo's W5 tail
    # is spent, against Homa's, and what each of seven Polo settings changes (first burst,
    # pause, D's bound, spraying, ECN threshold, D's scope, short messages' priority), then
    # the first four together; pHost's unfinished W5 messages against three pHost settings.
    tail: dict[str, Any] = {}
    by_seed: dict[int, dict[str, Any]] = {}
    alone: PT.Alone | None = None
    if "w5" in st["replay"]:
        tb = base("w5", "w5", st["loads"][0], st["warm"], st["warm"] + st["replay"]["w5"], st["warm"] + st["replay"]["w5"] + 10.0)
        tb["metrics"]["breakdown"] = True
        tj = C.jobs(ctx, NAME, ["Polo", "Homa"] + PT.TAIL_DIAG + ["pHost"] + list(PHOST_W5), tb,
                    {"part": "tail", "workload": "w5", "x": st["loads"][0]})[0]
        # Each flow's D (probe `polo_flow_d`) in the runs of the diagnostic with every change
        # that helps; probes change no result.
        tj = [j._replace(scenario=j.scenario.with_overrides({"metrics.probes": True})) if j.params["design"] == PT.THREE_FIXED else j
              for j in tj]
        by_seed = {seed: _tails(ctx, [j for j in tj if j.seed == seed]) for seed in ctx.seeds}
        tail = by_seed[ctx.seeds[0]]
        # Each measured message of Polo's and Homa's run again alone in the pod (same
        # source, destination and size, nothing else sent): the p99 slowdown each design
        # would have with no contention at all, its own pace.
        alone = _alone_tails(ctx, by_seed)
    # Diagnostic (seed 1): Polo's long flows alone, n of them sharing one receiver's link.
    sh = st["shared"]
    shared = PT.shared(ctx, [j for n in sh["n"] for j in C.jobs(
        ctx, NAME, sh["designs"], shared_base(n, sh["bytes"]), {"part": "shared", "workload": f"{n} flows", "x": float(n)},
        seeds=[ctx.seeds[0]])[0]], sh["bytes"])
    ctx.write_parquet(shared, "pod_shared")
    df, pooled = C.collect(ctx, js, lambda j: [0] if j.params["part"] == "incast" else None)
    ctx.write_parquet(df, "pod")
    A = lambda part, wl, x, d: C.agg(pooled, {"part": part, "workload": wl, "x": x, "design": d})  # noqa: E731

    def S1(part: str, wl: str, x: float, d: str) -> dict[str, Any] | None:
        """The first seed's run row of a point."""
        acc = pooled.get(tuple(sorted({"part": part, "workload": wl, "x": x, "design": d}.items())))
        return next((r for r in acc["rows"] if r["seed"] == ctx.seeds[0]), None) if acc else None

    _plot(ctx, st, ds, A)
    md = [
        "Setting: 4 leaves × 16 hosts at 100 Gbps, 8 spines, every leaf joined to every spine at 100 Gbps (2:1 "
        "oversubscription), host links 100 ns, uplinks 500 ns; pl2's default switch (12 MiB shared buffer, dynamic "
        "thresholds α = 1, 350 ns pipeline, cut-through, per-flow ECMP unless the design sprays); 16 threads per "
        "host. *Incast*: hosts 4–63 each send 100 KB to host 0 at once (goodput into h0; latency of the 60 "
        "messages). *Replay*: W3/W5 between all hosts, Poisson, each host offering the load as a share of its link "
        "(wire bytes, so designs with more header bytes are offered slightly fewer messages); goodput summed over all hosts; messages arriving in the window after "
        f"{st['warm'] * 1000:g} µs of warm-up measured (windows " + ", ".join(f"{wl} {w * 1000:g} µs" for wl, w in st["replay"].items())
        + "), each run lasting until they arrive or 10 ms more. Columns as in the rack.",
        "",
        "**The experiment in one table** (every design; the tables below give every column):", "",
        _headline(st, ds, A, refused), "", "<details><summary>Every configuration</summary>", "",
        "**60-to-1 incast** (last row: a diagnostic, NDP with htsim's default of dropping headers the header FIFO cannot hold; see below)", "",
        C.table(C.HEAD, [C.row(d, A("incast", "60-to-1", 0.0, d), refused) for d in ds + [HDROP]]), "",
    ]
    for wl in st["replay"]:
        for load in st["loads"]:
            md += [f"**{wl.upper()} at {load:.0%} (all-to-all)**", "",
                   C.table(C.HEAD, [C.row(d, A("replay", wl, load, d), refused) for d in ds]), ""]
    md += ["</details>", ""]
    md += [
        "**How PL2 runs across racks (§7).** Each leaf runs its own PL2 scheduler over its 16 host ports and one more "
        "port standing for its 8 uplinks (800 Gbps: a packet reserves 1/8 of a slot there). A sender's RSV to a host "
        "in another rack is answered by its own leaf, which reserves the sender's port and the uplinks; the burst "
        "then crosses a spine unscheduled, and the destination leaf forwards it without touching its counters (it "
        "never reserved it: no T rule, no decrement). What keeps room for those frames is the external share: every "
        "reservation counts 1/(1 − 0.1) slots, so each leaf schedules its own traffic into 90 % of each downlink "
        "(`external_share_ppm`, §7's example, pl2's default with several racks). Nothing limits what other racks "
        "send to one host to that 10 %.",
        "",
        *_pl2_across(st, A, S1),
        "",
        C.how_same(ds), "", C.base_block("Base scenario: 60-to-1 incast", bases["incast"]), "",
        C.base_block("Base scenario: replay (" + next(iter(st["replay"])) + f", {st['loads'][0]:.0%})", bases[(next(iter(st["replay"])), st["loads"][0])]), "",
    ]
    md += _why(ctx, st, ds, A, tail, S1, by_seed, alone, PT.shared_text(shared, sh["bytes"], ctx.seeds[0]))
    return "\n".join(md)


def _headline(st: dict, ds: list[str], A, refused: dict) -> str:
    head = ["design", "incast: goodput Gbps", "incast: slowest µs", "incast: max queue KB", "incast: drops"]
    keys = [(wl, x) for wl in st["replay"] for x in st["loads"]]
    head += [f"{wl.upper()} {x:.0%}: p99 µs" for wl, x in keys] + ["replays: goodput Gbps (all hosts, top load)", "replays: most drops / max queue KB"]
    rows = []
    for d in ds:
        a = A("incast", "60-to-1", 0.0, d)
        if a is None:
            rows.append([d, "cannot run: " + refused.get(d, "not run")] + ["–"] * (len(head) - 2))
            continue
        r = [A("replay", wl, x, d) for wl, x in keys]
        rows.append([d, f"{a['good']:.1f}", C.us(a["p99"]), f"{a['q'] / 1000:.0f}", str(a["drops"])]
                    + [C.us(x["p99"]) + (f" ({x['unfinished']} unf.)" if x["unfinished"] else "") for x in r]
                    + [f"{A('replay', keys[-1][0], keys[-1][1], d)['good']:.0f}", f"{max(x['drops'] for x in r)} / {max(x['q'] for x in r) / 1000:.0f}"])
    return C.table(head, rows)


def _pl2_across(st: dict, A, S1) -> list[str]:
    """What PL2 did across racks, from its counters (summed over seeds; `S1`: the first
    seed's run row, for the diagnostic run on that seed only)."""
    out = []
    keys = [("incast", "60-to-1", 0.0)] + [("replay", wl, x) for wl in st["replay"] for x in st["loads"]]
    for d in ("PL2", "PL2 deq+imp"):
        parts = []
        for k in keys:
            a = A(*k, d)
            if a is None:
                continue
            label = "60-to-1 incast" if k[0] == "incast" else f"{k[1].upper()} {k[2]:.0%}"
            share = f" ({100 * a['xout'] / a['frames']:.0f} % of the {a['frames']:,} scheduled)" if a["frames"] else ""
            parts.append(f"{label}: {a['xout']:,} frames left their rack through a leaf's booked uplinks{share} and "
                         f"{a['xin']:,} entered their destination rack unscheduled ({a['xout'] - a['xin']} lost between "
                         f"the ToRs); {a['drops']} buffer drops, max queue {a['q_host'] / 1000:.0f} KB at a port to a host "
                         f"and {a['q_fabric'] / 1000:.0f} KB at a port between switches, "
                         f"{a['unfinished']} of {a['n']} measured messages unfinished")
        if parts:
            out.append(f"- **{d}** (sums over seeds): " + "; ".join(parts) + ".")
    inc = A("incast", "60-to-1", 0.0, "PL2")
    if inc:
        out.append(
            "- In the 60-to-1 incast 48 of the 60 senders are in other racks. Their leaves book only their own uplinks, "
            "so 48 × 100 KB reach h0's leaf through the spines at up to 800 Gbps, uncoordinated with each other and "
            "with the 12 local senders, whom h0's leaf schedules into 90 % of h0's downlink: the external 10 % "
            f"cannot hold them. They queue at the spines' ports into h0's leaf (up to {inc['q_fabric'] / 1000:.0f} KB) "
            f"and at h0's downlink (up to {inc['q_host'] / 1000:.0f} KB)" + (f", {inc['drops']} frames dropped" if inc["drops"] else
            ", no drop: the 12 MiB shared buffer holds the 4.8 MB they bring") + ". This is §7's stated limit: traffic "
            "into a rack is not coordinated with other racks' traffic to it; the leaf's schedule stays exact, but its "
            "frames wait behind the external ones in the same queue.")
    rr = {k: (S1(*k, "PL2"), S1(*k, ECMP_RR)) for k in keys}
    if all(a and b for a, b in rr.values()):
        lab = lambda k: "60-to-1 incast" if k[0] == "incast" else f"{k[1].upper()} {k[2]:.0%}"  # noqa: E731
        out.append(
            "- *ECMP on the uplinks.* A leaf books its 8 uplinks as one 800 Gbps port (`docs/model.md` \"PL2 across "
            "racks\": the scheduler does not know which uplink a frame's hash will pick), so a slot's reservations fit "
            "the 8 together but not necessarily the one uplink per-flow ECMP sends a flow on: two flows hashed onto one "
            "uplink queue there, unscheduled. Largest queue at a leaf's uplink port in seed 1, per-flow ECMP (the pod's "
            "default) against every switch taking its next hops in turn (diagnostic, `" + ECMP_RR + "`): "
            + "; ".join(f"{lab(k)} {a['max_queue_tor_up_bytes'] / 1000:.0f} against {b['max_queue_tor_up_bytes'] / 1000:.0f} KB"
                        for k, (a, b) in rr.items())
            + "; largest queue at any port between switches: "
            + "; ".join(f"{lab(k)} {a['max_queue_to_switch_bytes'] / 1000:.0f} against {b['max_queue_to_switch_bytes'] / 1000:.0f} KB"
                        for k, (a, b) in rr.items())
            + "; buffer drops: " + "; ".join(f"{lab(k)} {a['buffer_drops']:,} against {b['buffer_drops']:,}" for k, (a, b) in rr.items())
            + ". Largest over all seeds, PL2 with per-flow ECMP: " + "; ".join(f"{lab(k)} {A(*k, 'PL2')['q_up'] / 1000:.0f} KB" for k in keys)
            + ". Algorithm 1 as written also releases a reservation when a frame enters the leaf, not when it leaves "
            "the uplink, so its counters do not see the uplink's queue; PL2 deq+imp, whose counters release it when the "
            "frame leaves the leaf's queue (`compare-core`), has with per-flow ECMP "
            + "; ".join(f"{lab(k)} {A(*k, 'PL2 deq+imp')['q_up'] / 1000:.0f} KB" for k in keys if A(*k, "PL2 deq+imp"))
            + " at a leaf's uplink. pl2 models neither a "
            "coordination of two racks' schedules (§7 proposes none; no RSV crosses the fabric) nor a scheduler that "
            "books the uplink the hash will pick.")
    lossy = [(wl, x) for wl in st["replay"] for x in st["loads"] if (A("replay", wl, x, "PL2") or {}).get("drops")]
    if lossy:
        out.append(
            "- In the replays destinations are uniform over the other 63 hosts, so 48/63 of what each host receives "
            "comes from other racks (the counters above: that share of the scheduled frames left their rack), i.e. "
            "38 % of a downlink at 50 % load and 61 % at 80 %, against the 10 % the share keeps free. Where bursts from "
            "several racks meet at one host, nothing defers them: the downlink's queue reaches the buffer's limit "
            "for one port and frames are dropped there, at the destination leaf (the frames lost between the ToRs "
            "are a small part of the drops), and raw PL2 never resends a dropped frame, so those messages stay "
            "unfinished (" + ", ".join(f"{wl.upper()} {x:.0%}: {A('replay', wl, x, 'PL2')['drops']:,} drops, "
                                       f"{A('replay', wl, x, 'PL2')['unfinished']} unfinished" for wl, x in lossy)
            + "). §7's static share assumes inter-rack traffic is a small part of a rack's; in an all-to-all pod it is "
            "most of it, and PL2's guarantees then hold only for the traffic the leaves schedule.")
    return out


def _plot(ctx: Context, st: dict, ds: list[str], A) -> None:
    import matplotlib.pyplot as plt

    reg = designs()
    run_ds = [d for d in ds if A("incast", "60-to-1", 0.0, d) is not None]
    keys = [("incast", "60-to-1", 0.0)] + [("replay", wl, x) for wl in st["replay"] for x in st["loads"]]
    fig, ax = plt.subplots(1, 2, figsize=(13, 4.8))
    w = 0.8 / max(len(run_ds), 1)
    for i, d in enumerate(run_ds):
        xs = [k + (i - len(run_ds) / 2) * w for k in range(len(keys))]
        p99 = [A(*k, d)["p99"] if A(*k, d) else None for k in keys]
        ax[0].bar(xs, [y if y is not None and not math.isinf(y) else 0 for y in p99], w, color=reg[d].color, label=d)
        ax[1].bar(xs, [max(A(*k, d)["q"], 1) / 1000 if A(*k, d) else 0 for k in keys], w, color=reg[d].color)
    labels = ["60-to-1 incast"] + [f"{wl.upper()} {x:.0%}" for _, wl, x in keys[1:]]
    for a in ax:
        a.set_xticks(range(len(keys)), labels)
        a.set_yscale("log")
        a.grid(True, axis="y", alpha=0.3)
    ax[0].set_title("(a) p99 latency (µs; no bar: unfinished or too few messages)")
    ax[1].set_title("(b) largest switch queue (KB)")
    fig.legend(*ax[0].get_legend_handles_labels(), loc="lower center", ncol=len(run_ds), fontsize=8, frameon=False)
    fig.suptitle(f"Leaf–spine pod, 4 × 16 hosts at 100 Gbps, 2:1 (PL2: per-rack scheduling, §7's 10 % external share; {len(ctx.seeds)} seed(s))", fontsize=10)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    ctx.save(fig, "pod")


def _phost_seeds(by_seed: dict[int, dict[str, Any]]) -> str:
    """pHost's unfinished W5 messages per seed, with YAPS's settings and each diagnostic."""
    if len(by_seed) < 2 or not all("pHost" in t for t in by_seed.values()):
        return ""
    rows = [("YAPS's settings", "pHost")] + [(what, d) for d, what in PHOST_W5.items()]
    return (f" Unfinished messages on seeds {PT.seeds(by_seed)}: " + "; ".join(
        f"{what} " + ", ".join(str(t[d]["unf"]) if d in t else "–" for t in by_seed.values()) for what, d in rows) + ".")


def _alone_tails(ctx: Context, by_seed: dict[int, dict[str, Any]]) -> PT.Alone:
    """Polo's and Homa's measured W5 messages, each run alone (one job per message, on
    the seed of its run)."""
    js = []
    for seed, tail in by_seed.items():
        for d in ("Polo", "Homa"):
            for mid, src, dst, size in tail[d]["msgs"]:
                b = base("incast", "", 0, 0, 0, ALONE_CAP_MS)
                b["name"] = "compare-pod-alone"
                b["workload"] = [{"kind": "incast", "senders": [src], "receiver": dst, "size": f"{size}B", "count": 1}]
                js += C.jobs(ctx, NAME, [d], b, {"part": "alone", "workload": "w5", "x": mid}, seeds=[seed])[0]
    first = next(iter(by_seed))
    sl: dict[tuple[str, bool], list[float]] = {}
    for job, res in zip(js, ctx.run_many(js), strict=True):
        r = res.messages.row(0, named=True)
        v = math.inf if r["latency_ps"] is None else r["latency_ps"] / r["ideal_ps"]
        for pooled in (False, True):
            if pooled or job.seed == first:
                sl.setdefault((job.params["design"], pooled), []).append(v)
    stats = lambda v: {"n": len(v), "s50": C.pct(sorted(v), len(v), 0.5), "s99": C.pct(sorted(v), len(v), 0.99)}  # noqa: E731
    return PT.Alone({d: stats(v) for (d, pooled), v in sl.items() if not pooled},
                 {d: stats(v) for (d, pooled), v in sl.items() if pooled},
                 {d: PT.pooled_p99(by_seed, d) for d in ("Polo", "Homa")})


def _incast_rows(S1, *designs: str) -> list[dict[str, Any]] | None:
    """Seed 1's incast run row of each of `designs`, or None if any is missing."""
    rows = [S1("incast", "60-to-1", 0.0, d) for d in designs] if S1 else []
    return rows if rows and all(rows) else None


def _sfc_incast(S1) -> str:
    """SFC's incast against the same incast with every pause fixed at 6 µs, and RoCE+PFC
    (seed 1's runs)."""
    rows = _incast_rows(S1, "SFC", SFC_FIXED, "RoCE+PFC")
    if rows is None:
        return ""
    a, b, r = rows
    ga, gb, gr = a["goodput_gbps"], b["goodput_gbps"], r["goodput_gbps"]
    verdict = (": the drain-to-target pause is what idles h0's link." if gb >= 0.95 * gr else
               f": the pause's length is {(gb - ga) / (gr - ga):.0%} of SFC's gap to RoCE+PFC." if gb - ga >= 5 and gr > ga else
               ": the pause's length is not what holds SFC's goodput down here.")
    return (f" Seed 1 with every signal's pause fixed at the 6 µs suppression period (diagnostic, `{SFC_FIXED}`): "
            f"{gb:.1f} Gbps against SFC's {ga:.1f} and RoCE+PFC's {gr:.1f}, {b['pause_frames']} PFC PAUSE frames against "
            f"{a['pause_frames']} and {r['pause_frames']}, {b['sfc_paused_ps'] / 1e6:.0f} µs of flow pauses against "
            f"{a['sfc_paused_ps'] / 1e6:.0f}{verdict}")


def _polo_incast(S1) -> str:
    """Polo's incast against the same incast without its pause (seed 1's runs)."""
    rows = _incast_rows(S1, "Polo", PT.POLO_NP)
    if rows is None:
        return ""
    a, b = rows
    ga, gb = a["goodput_gbps"], b["goodput_gbps"]
    verdict = (f": without the pause Polo's goodput rises by {gb - ga:.1f} Gbps, so the pause (flows arriving after the "
               "first mark wait for an active flow to finish or for an unmarked epoch) is that much of what idles h0's link."
               if gb - ga >= 5 else ": the pause is not what holds Polo's goodput down here." if abs(gb - ga) < 5 else
               f": without the pause Polo's goodput falls by {ga - gb:.1f} Gbps.")
    return (f" Seed 1 against the same incast without Polo's pause (diagnostic, `{PT.POLO_NP}`): {ga:.1f} against {gb:.1f} Gbps, "
            f"largest queue {a['max_queue_bytes'] / 1000:.0f} against {b['max_queue_bytes'] / 1000:.0f} KB, "
            f"{a['buffer_drops']} against {b['buffer_drops']} buffer drops, {a['unfinished']} against {b['unfinished']} "
            f"messages unfinished{verdict}")


def _tails(ctx: Context, js: list) -> dict[str, dict[str, float | None]]:
    """Per design: p50 and p99 slowdown, p99 latency of messages ≤ 100 KB, and p99 of
    latency less the transport wait (arrival to the last frame's creation)."""
    import polars as pl

    out = {}
    for job, res in zip(js, ctx.run_many(js), strict=True):
        shared = PT.shares_receiver(res.messages)
        m = res.messages.filter(pl.col("in_window"))
        model = {d: fluid.slowdowns(res.messages, d) for d in fluid.DISCIPLINES} if job.params["design"] in ("Polo", "Homa") else {}
        f = m.filter(pl.col("latency_ps").is_not_null())
        sl = sorted((f["latency_ps"] / f["ideal_ps"]).to_list())
        small = m.filter(pl.col("size_bytes") <= 100_000)
        sf = small.filter(pl.col("latency_ps").is_not_null())
        net = sorted(((f["latency_ps"] - f["transport_wait_ps"].fill_null(0)) / 1e6).to_list())
        u = m.filter(pl.col("latency_ps").is_null())["size_bytes"]
        out[job.params["design"]] = {"n": m.height, "msgs": m.select("id", "src", "dst", "size_bytes").rows(), "sl": sl, "unf": u.len(), "unf_size50": float(u.median()) if u.len() else None,
                                     "size50": float(m["size_bytes"].median()) if m.height else None, "s50": C.pct(sl, m.height, 0.5), "s99": C.pct(sl, m.height, 0.99),
                                     "small99": C.pct(sorted((sf["latency_ps"] / 1e6).to_list()), small.height, 0.99),
                                     "p99": C.pct(sorted((f["latency_ps"] / 1e6).to_list()), m.height, 0.99),
                                     "net99": C.pct(net, m.height, 0.99),
                                     # (slowdown, ∞ if unfinished; shares its receiver with a larger message; size)
                                     "rx": m.select((pl.col("latency_ps") / pl.col("ideal_ps")).fill_null(math.inf),
                                                    pl.col("id").is_in(shared), "size_bytes").rows()}
        if model:
            ids = m["id"].to_list()
            out[job.params["design"]]["fluid"] = {d: [v[i] for i in ids] for d, v in model.items()}
        if job.params["design"] == "Polo" or job.params["design"] in PT.TAIL_DIAG:
            out[job.params["design"]]["by_id"] = dict(m.select("id", (pl.col("latency_ps") / pl.col("ideal_ps")).fill_null(math.inf)).rows())
        polo = res.summary.get("polo") or {}
        out[job.params["design"]].update(dups=polo.get("duplicates", 0), data=polo.get("adjoints", 0))
        if job.params["design"] in PT.SPINE_DIAG:
            out[job.params["design"]]["spines"] = PT.spine_links(m, res.table("ports"), LEAVES, PER_LEAF, SPINES)
        if job.params["design"] == PT.THREE_FIXED:
            out[PT.THREE_FIXED]["split"] = PT.rx_split(res.messages, m, res.table("goodput"))
            out[PT.THREE_FIXED]["flow_d"] = PT.flow_d(res.messages, m, res.probes)
        if job.params["design"] == "Polo":
            out["Polo"]["rx_rate"] = PT.rx_rates(m, res.table("goodput"))
            _, per_byte = fluid.line_fit(res.messages["size_bytes"].to_list(), res.messages["ideal_ps"].to_list())
            out["Polo"]["line_gbps"] = 8e3 / per_byte
    return out


def _why(ctx: Context, st: dict, ds: list[str], A, tail: dict | None = None, S1=None,
         by_seed: dict[int, dict[str, Any]] | None = None, alone: PT.Alone | None = None, shared: str = "") -> list[str]:
    """The section's closing bullets: what surprised us and why; `shared` (the long-flow
    diagnostic's text) follows the bullet on Polo's W5 tail."""
    inc = {d: A("incast", "60-to-1", 0.0, d) for d in ds if A("incast", "60-to-1", 0.0, d)}
    nd = inc["NDP"]
    ctx.claim("NDP (paper, incast evaluation): trimming makes a large incast complete without timeouts (60-to-1, NDP timeouts)", "0",
              str(nd["timeouts"]), nd["timeouts"] == 0)
    sf, ro = inc["SFC"], inc["RoCE+PFC"]
    ctx.claim("SFC (slides): fewer PFC pauses than DCQCN over PFC alone, without loss of throughput (60-to-1)",
              "fewer pauses, same goodput", f"SFC {sf['pauses']} pauses, {sf['good']:.1f} Gbps; RoCE+PFC {ro['pauses']}, {ro['good']:.1f} Gbps",
              sf["pauses"] < ro["pauses"] and sf["good"] >= 0.95 * ro["good"])
    lines = ["**What surprised us, and why (measured; every clause is a counter of these runs)**", ""]
    lines.append("- 60-to-1 incast: goodput into h0 " + ", ".join(f"{d} {inc[d]['good']:.1f}" for d in sorted(inc, key=lambda d: -inc[d]["good"]))
                 + " Gbps; slowest message (p99 of 60) " + ", ".join(f"{d} {C.us(inc[d]['p99'])}" for d in inc) + " µs.")
    hd = A("incast", "60-to-1", 0.0, HDROP)
    lines.append(f"- NDP in the incast ({nd['good']:.1f} Gbps, slowest message {C.us(nd['p99'])} µs): {C.facts('NDP', nd)}. 60 senders "
                 "each put their initial window of 23 packets on the wire at once (1380 packets towards an 8-frame data "
                 "FIFO); the trimmed headers overflow the header FIFO (twice the data FIFO's bytes, 24.7 KB) and go back "
                 "to their senders (the NDP paper's return-to-sender, §3.2), which resend at once. The diagnostic row keeps "
                 "htsim's and pl2's default instead, `header_overflow = \"drop\"`: "
                 + (f"{hd['good']:.1f} Gbps, slowest message {C.us(hd['p99'])} µs, {C.facts(HDROP, hd)}: NDP learns of a dropped "
                    "header only by its retransmission timeout (5 ms floor by default), so the drops at a FIFO's own limit "
                    "equal the timeouts; return-to-sender is what makes a large incast complete without them." if hd else "not run."))
    lines.append(f"- SFC below RoCE+PFC in the incast ({sf['good']:.1f} against {ro['good']:.1f} Gbps): SFC {C.facts('SFC', sf)}; "
                 f"RoCE+PFC {C.facts('RoCE+PFC', ro)}. Each signal pauses its flow for the time the port would need to "
                 "drain its queue to 50 KB if nothing else arrived (`pause_time = drain_to_target`; at most "
                 f"{max(sf['q'] - 50_000, 0) * 8 / 100e9 * 1e6:.0f} µs here), and every one of the 60 flows (one per "
                 "sender here, unlike the rack's backlog) is told so in turn, each pausing as if it alone had to make "
                 f"room: {sf['sfc_ps'] / 1e6:.0f} µs of pauses in a run of {sf['sim_ms'] * 1000:.0f} µs, while the "
                 "receiver's link idles (goodput below RoCE+PFC's)." + _sfc_incast(S1))
    po = inc["Polo"]
    lines.append(f"- Polo in the incast: {po['good']:.1f} Gbps, {C.facts('Polo', po)}." + _polo_incast(S1))
    for wl in st["replay"]:
        for x in st["loads"]:
            r = {d: A("replay", wl, x, d) for d in ds if A("replay", wl, x, d)}
            fin = {d: r[d]["p99"] for d in r if r[d]["p99"] is not None and not math.isinf(r[d]["p99"])}
            if fin:
                lines.append(f"- {wl.upper()} at {x:.0%}: p99 " + ", ".join(f"{d} {C.us(fin[d])}" for d in sorted(fin, key=fin.get))
                             + " µs" + (f"; unfinished: {', '.join(d for d in r if d not in fin and r[d]['p99'] is not None)}" if len(fin) < len(r) else "") + ".")
    over = [x for x in st["loads"] if 16 * x * 100 * 48 / 63 > 800]
    if over:
        lines.append("- At " + ", ".join(f"{x:.0%}" for x in over) + " the fabric itself is overloaded: with destinations "
                     "uniform over the other 63 hosts, 48/63 of each host's traffic leaves its rack, so a leaf sends "
                     + ", ".join(f"16 × {x:.0%} × 100 × 48/63 = {16 * x * 100 * 48 / 63:.0f} Gbps" for x in over)
                     + " into 8 × 100 = 800 Gbps of uplinks (by hand). Queues then grow for as long as arrivals last, and a "
                     "design's tail there says how it shares an overload, not how it controls congestion; 50 % "
                     f"({16 * 0.5 * 100 * 48 / 63:.0f} Gbps per leaf) is within the fabric.")
    wl, x = list(st["replay"])[-1], st["loads"][0]
    r = {d: A("replay", wl, x, d) for d in ds if A("replay", wl, x, d)}
    p = {d: (r[d]["p99"] if r[d]["p99"] is not None else math.inf) for d in r}
    ctx.claim(f"Polo (slides, larger scale): lower tail than Homa and pHost ({wl.upper()} at {x:.0%}, p99)", "Polo < Homa, pHost",
              f"Polo {C.us(p['Polo'])}, Homa {C.us(p['Homa'])}, pHost {C.us(p['pHost'])} µs", p["Polo"] < p["Homa"] and p["Polo"] < p["pHost"])
    if tail and "Polo" in tail and "Homa" in tail:
        t = tail
        f = C.slowdown
        lines.append(f"- **Polo's tail in W5 at {x:.0%}** (diagnostic, seed {ctx.seeds[0]}, with the latency breakdown): p50 / p99 "
                     f"slowdown Polo {f(t['Polo']['s50'])} / {f(t['Polo']['s99'])}, Homa {f(t['Homa']['s50'])} / {f(t['Homa']['s99'])}; "
                     f"p99 latency of messages ≤ 100 KB Polo {C.us(t['Polo']['small99'])}, Homa {C.us(t['Homa']['small99'])} µs: Polo "
                     "is slower on every measure here, not only at the p99 of latency (which in W5 is the few largest messages). "
                     f"Its p99 latency less the transport wait is {C.us(t['Polo']['net99'])} µs (Homa {C.us(t['Homa']['net99'])}): "
                     "the time is spent at the sender before a message's last frame exists, waiting to be driven, not in "
                     "switch queues. Polo sends a first burst of 12 packets and then what its receiver drives, D packets "
                     "per epoch per flow, where Homa sends RTTbytes at once and is then granted at line rate; at 100 Gbps a "
                     "pod round trip holds about 3 × 12 packets. Each diagnostic changes one Polo setting (p50 / p99 "
                     "slowdown): " + "; ".join(f"{PT.DIAG_TXT[d]} {f(t[d]['s50'])} / {f(t[d]['s99'])}" for d in PT.TAIL_SINGLE)
                     + "".join(f"; {n} {f(t[d]['s50'])} / {f(t[d]['s99'])}" for d, n in PT.COMBOS.items()) + ", against "
                     f"Homa's {f(t['Homa']['s50'])} / {f(t['Homa']['s99'])}. " + PT.tail_verdict(t) + PT.alone(t, alone, x)
                     + PT.tail_seeds(by_seed or {}) + PT.receiver_sharing(by_seed or {}) + PT.fluid_check(by_seed or {}) + PT.pause_tail(by_seed or {})
                     + PT.same_messages(by_seed or {}) + PT.tail_after(by_seed or {})
                     + PT.same_messages(by_seed or {}, PT.THREE, PT.THREE_PLUS)
                     + (" (Why marking at 65 frames helps long flows: the next bullet.)" if shared else "")
                     + PT.spine_text(by_seed or {})
                     + PT.spray_resends(by_seed or {}) + PT.tail_after(by_seed or {}, PT.THREE_FIXED) + PT.equal_split(by_seed or {})
                     + PT.against_model(by_seed or {})
                     + " The slides' claim comes from their 1 Gbps leaf–spine, where 12 packets are "
                     "several round trips of data; pl2's own reproduction of it (results/polo, Homa and pHost at the slides' "
                     "settings) does not find it either.")
    if shared:
        lines.append(shared)
    if tail and "pHost" in tail:
        lines.append(_phost_w5(tail, x, ctx.seeds[0]) + _phost_seeds(by_seed or {}))
    return lines


def _phost_w5(t: dict[str, dict[str, Any]], x: float, seed: int) -> str:
    """pHost's unfinished W5 messages against the same run with one pHost setting changed
    (`PHOST_W5`): which change, if any, leaves none unfinished."""
    a = t["pHost"]
    f = C.slowdown
    kb = lambda v: "–" if v is None else f"{v / 1000:,.0f} KB"  # noqa: E731
    runs = "; ".join(f"{what} (`{d}`): {t[d]['unf']} of {t[d]['n']} unfinished, p50 / p99 slowdown {f(t[d]['s50'])} / "
                     f"{f(t[d]['s99'])}" for d, what in PHOST_W5.items() if d in t)
    fixed = [what for d, what in PHOST_W5.items() if d in t and a["unf"] and t[d]["unf"] == 0]
    verdict = ("" if not a["unf"] else f" Only with {fixed[0]} does every message finish: the setting it changes is "
               "what leaves them unfinished." if len(fixed) == 1 else f" Each of {', '.join(fixed)} lets every message finish." if fixed
               else " No setting changed here lets them finish; no diagnostic here attributes it.")
    return (f"- **pHost's unfinished messages in W5 at {x:.0%}** (diagnostic, seed {seed}): {a['unf']} of {a['n']} measured "
            f"messages unfinished after the run's 10 ms of drain (median size {kb(a['unf_size50'])}, against "
            f"{kb(a['size50'])} for all), p50 / p99 slowdown {f(a['s50'])} / {f(a['s99'])}. Each diagnostic changes one "
            f"pHost setting: {runs}.{verdict}")


