"""Issue 19, "Slowdown by message size": p50 and p99 slowdown by message size for Homa,
pHost, NDP, DCTCP and RDS on the Homa paper's workloads W1–W5 at 50% and 80% load, in
the Homa paper's network (`common.py`), binned by the workload's size deciles as the
Homa paper's slowdown figures lay out their x axis."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import polars as pl

from pl2.reproduce.common import Context, Job, table
from pl2.reproduce.receiver_driven import common as c

NAME = "homa-slowdown"
TITLE = "Slowdown by message size, W1–W5 at 50% and 80% load (Homa, pHost, NDP, DCTCP, RDS)"

#: Arrivals per seed, µs (full mode): each window holds ~10⁵ or more messages for the
#: small-message workloads and as many of the long ones as the time budget allows (W4's
#: mean message is 128 KB, W5's 2.5 MB). Warm-up: the first 10% of the arrivals.
FULL_WINDOW_US = {"w1": 300.0, "w2": 500.0, "w3": 3000.0, "w4": 15000.0, "w5": 20000.0}
#: Quick mode (CI): W3 and W5 at 80% load only, short windows, every transport.
QUICK_WINDOW_US = {"w3": 200.0, "w5": 4000.0}
QUICK_LOADS = [0.8]
WARMUP_SHARE = 0.1
#: The run goes on after the last arrival until every message is delivered, at most this long.
DRAIN_US = 200_000.0
QUICK_DRAIN_US = 50_000.0
#: Tail composition: messages at or above the bin's p99 slowdown.
COLS = ["size_bytes", "slowdown", "latency_ps", "ideal_ps", "transport_wait_ps", "nic_queue_ps", "switch_queue_ps"]


def plan(quick: bool) -> tuple[dict[str, float], list[float], float]:
    """(arrival window per workload in µs, loads, drain cap in µs)."""
    return (dict(QUICK_WINDOW_US), list(QUICK_LOADS), QUICK_DRAIN_US) if quick else (dict(FULL_WINDOW_US), list(c.LOADS), DRAIN_US)


def jobs(ctx: Context) -> list[Job]:
    windows, loads, drain = plan(ctx.quick)
    out = []
    for w, until in windows.items():
        for load in loads:
            for tp in c.TRANSPORTS:
                sc = c.build(f"{NAME}-{w}-{int(load * 100)}-{tp}", tp, w, load, warmup_us=until * WARMUP_SHARE,
                             until_us=until, duration_us=until + drain)
                out += [Job(sc, {"figure": NAME, "workload": w, "load": load, "transport": tp}, s, NAME) for s in ctx.seeds]
    return out


def run_row(res: Any, params: Mapping[str, Any], seed: int) -> dict[str, Any]:
    """One run's totals: messages, unfinished, loss and recovery, control overhead, queues."""
    s = res.summary
    tp = params["transport"]
    m = res.messages
    mw = m.filter(pl.col("in_window"))
    cnt = s.get("counters") or {}
    mq = s.get("max_queue_bytes") or {}
    down = [v for k, v in mq.items() if k.startswith("s") and "->h" in k]
    up = [v for k, v in mq.items() if k.startswith("s") and "->s" in k]
    homa = s.get("homa") or {}
    return {
        "workload": params["workload"], "load": params["load"], "transport": tp, "seed": seed,
        "messages": mw.height, "unfinished": int(mw["finish_ps"].null_count()),
        "messages_all": m.height, "unfinished_all": int(m["finish_ps"].null_count()),
        "payload_bytes": int(mw["size_bytes"].sum() or 0),
        "sim_time_ps": int(s.get("sim_time_ps") or 0), "stop_reason": str(s.get("stop_reason")),
        "packets_created": int(cnt.get("packets_created", 0)), "packets_delivered": int(cnt.get("packets_delivered", 0)),
        "packets_dropped": int(cnt.get("packets_dropped", 0)), "packets_consumed": int(cnt.get("packets_consumed", 0)),
        "packets_in_flight": int(cnt.get("packets_in_flight", 0)),
        "data_wire_bytes": int(cnt.get("data_wire_bytes", 0)), "control_wire_bytes": int(cnt.get("control_wire_bytes", 0)),
        "max_queue_down_bytes": int(max(down, default=0)), "max_queue_up_bytes": int(max(up, default=0)),
        "homa_scheduled_packets": int(homa.get("scheduled_packets", 0) or 0),
        "homa_unscheduled_packets": int(homa.get("unscheduled_packets", 0) or 0),
        "tcp_ce_received": int((s.get("tcp") or {}).get("ce_received", 0) or 0),
        "tcp_segments_received": int((s.get("tcp") or {}).get("segments_received", 0) or 0),
        **c.counters(s, tp),
    }


def messages(res: Any, params: Mapping[str, Any], seed: int) -> pl.DataFrame:
    """The measured messages of a run (unfinished ones have a null slowdown)."""
    m = res.messages.filter(pl.col("in_window")).select(COLS)
    return m.with_columns(pl.lit(params["load"]).alias("load"), pl.lit(params["transport"]).alias("transport"),
                          pl.lit(seed).alias("seed"))


def bin_rows(w: str, msgs: pl.DataFrame, bins: list[tuple[int, int, str]]) -> list[dict[str, Any]]:
    """p50 and p99 slowdown per (load, transport, size bin), seeds pooled; an unfinished
    message counts as infinitely slow. With the tail's composition: the mean transport
    wait, NIC queueing and switch queueing of the messages at or above the p99."""
    out = []
    for (load, tp), g in msgs.group_by(["load", "transport"], maintain_order=True):
        for i, (lo, hi, label) in enumerate(bins):
            b = g.filter((pl.col("size_bytes") > lo) & (pl.col("size_bytes") <= hi))
            sl = [math.inf if x is None else float(x) for x in b["slowdown"].to_list()]
            p99 = c.pct(sl, 0.99)
            tail = b.filter(pl.col("slowdown").is_null() | (pl.col("slowdown") >= (p99 if p99 is not None and math.isfinite(p99) else math.inf)))
            fin = tail.filter(pl.col("slowdown").is_not_null())

            def mean_us(col: str, df: pl.DataFrame = fin) -> float | None:
                v = df[col].mean() if df.height else None
                return None if v is None else float(v) / 1e6

            out.append({
                "workload": w, "load": load, "transport": tp, "bin": i, "lo_bytes": lo, "hi_bytes": hi, "label": label,
                "messages": b.height, "unfinished": int(b["slowdown"].null_count()),
                "p50_slowdown": c.pct(sl, 0.5), "p99_slowdown": p99,
                "min_slowdown": float(b["slowdown"].min()) if b["slowdown"].drop_nulls().len() else None,
                "tail_messages": tail.height, "tail_ideal_us": mean_us("ideal_ps"), "tail_latency_us": mean_us("latency_ps"),
                "tail_transport_wait_us": mean_us("transport_wait_ps"), "tail_nic_queue_us": mean_us("nic_queue_ps"),
                "tail_switch_queue_us": mean_us("switch_queue_ps"),
            })
    return out


def run(ctx: Context) -> str:
    windows, loads, drain = plan(ctx.quick)
    js = jobs(ctx)
    runs, bins_all = [], []
    edges: dict[str, list[tuple[int, int, str]]] = {}
    by_w: dict[str, list[pl.DataFrame]] = {}
    homa_cfg: dict[str, dict[str, Any]] = {}
    for job, res in zip(js, ctx.run_many(js), strict=True):
        w = job.params["workload"]
        runs.append(run_row(res, job.params, job.seed))
        by_w.setdefault(w, []).append(messages(res, job.params, job.seed))
        if job.params["transport"] == "Homa" and w not in homa_cfg:
            import tomllib

            t = tomllib.loads(job.scenario.canonical())["transport"]
            homa_cfg[w] = {k: t.get(k) for k in ("rtt_bytes", "unscheduled_levels", "scheduled_levels", "unscheduled_cutoffs")}
        if len(by_w[w]) == len(loads) * len(c.TRANSPORTS) * len(ctx.seeds):
            msgs = pl.concat(by_w.pop(w))
            edges[w] = c.size_bins(msgs["size_bytes"])
            bins_all += bin_rows(w, msgs, edges[w])
            del msgs
    rf, bf = pl.DataFrame(runs), pl.DataFrame(bins_all)
    ctx.write_parquet(rf, "runs")
    ctx.write_parquet(bf, "bins")
    af = alone(ctx)
    ctx.write_parquet(af, "alone")
    for load in loads:
        plot(ctx, bf, list(windows), load)
    top = 0.8 if 0.8 in loads else loads[-1]
    for tp in ("pHost", "NDP"):
        won, total = (int(x) for x in _wins(bf, top, tp).split("/"))
        ctx.claim(f"Homa's p99 slowdown better than {tp}'s for almost all message sizes and workloads (at least 90 % of "
                  f"the size bins, {int(top * 100)}% load)", "almost all", f"{won} of {total} bins",
                  total > 0 and won >= 0.9 * total)
    return section(ctx, rf, bf, windows, loads, drain, homa_cfg) + "\n" + alone_section(af)


def alone(ctx: Context) -> pl.DataFrame:
    """Each transport (and the diagnostics) with one message of each size alone in the
    network: its completion time against pl2's ideal (one seed: nothing is random)."""
    variants = {tp: (tp, {}, {}) for tp in c.TRANSPORTS} | dict(c.ALONE_DIAGNOSTICS)
    js = [Job(c.build_alone(f"{NAME}-alone-{v}", tp, ov, host), {"figure": NAME, "alone": v}, ctx.seeds[0], NAME)
          for v, (tp, ov, host) in variants.items()]
    rows = []
    for job, res in zip(js, ctx.run_many(js), strict=True):
        s = res.summary.get("phost") or res.summary.get("rds") or {}
        for r in res.messages.sort("start_ps").iter_rows(named=True):
            rows.append({"variant": job.params["alone"], "size_bytes": r["size_bytes"], "latency_us": (r["latency_ps"] or 0) / 1e6,
                         "ideal_us": r["ideal_ps"] / 1e6, "alone_slowdown": r["slowdown"],
                         "tokens_expired": int(s.get("tokens_expired", 0) or 0), "tokens_sent": int(s.get("tokens_sent", 0) or 0)})
    return pl.DataFrame(rows)


def alone_section(af: pl.DataFrame) -> str:
    sizes = sorted(set(af["size_bytes"].to_list()))
    rows = []
    for (v,), g in af.group_by(["variant"], maintain_order=True):
        cells = []
        for sz in sizes:
            x = g.filter(pl.col("size_bytes") == sz)["alone_slowdown"]
            cells.append(_f(x[0], 3) if x.len() and x[0] is not None else "unfinished")
        exp = int(g["tokens_expired"][0])
        rows.append([v, *cells, f"{exp} of {int(g['tokens_sent'][0])}" if v.startswith("pHost") else "–"])
    def get(v: str, sz: int) -> str:
        x = af.filter((pl.col("variant") == v) & (pl.col("size_bytes") == sz))["alone_slowdown"]
        return _f(x[0], 2) if x.len() and x[0] is not None else "–"
    md = [
        "**Each transport alone in this network.** The issue defines slowdown against the same message's completion "
        "time alone in the same network; pl2's ideal is the same for every transport (headers aside). To show how "
        "far apart the two are, one message of each size goes alone from h0 to h100 (another rack), with each "
        "transport's settings above; the table gives its completion time over pl2's ideal. A transport's slowdown "
        "against its own alone time is the slowdown above divided by this factor (for sizes near these).",
        "",
        table(["transport"] + [c.human(sz) for sz in sizes] + ["pHost tokens expired (run total)"], rows),
        "",
        f"- pHost alone needs {get('pHost', 1_000_000)}× the ideal for 1 MB, and tokens expire at its sender (last "
        "column, all sizes of the run together). The Homa simulator's 0.5 µs host send and receive delays cause it: "
        f"without them pHost alone is at {get('pHost, no host delays', 1_000_000)}× and no token expires (YAPS, pHost's "
        "reference simulator, has no host delays, and its token lifetime of 1.5 MTU times and window of 8 tokens are "
        f"sized for that); a 16-token window with the delays gives {get('pHost, window 16 tokens', 1_000_000)}×. "
        "This, not queueing, is why pHost's large messages are about 3× slower than the ideal at every load (their "
        "tail messages' time is transport wait in the table above).",
        f"- RDS alone needs {get('RDS', 1_000_000)}× for 1 MB with RTTbytes = 10,000 B; with 20,000 B it is at "
        f"{get('RDS, RTTbytes 20000 B', 1_000_000)}×. RDS grants 4 packets (6.2 KB on the wire) at a time against a cap "
        "of RTTbytes in flight, and this network's round trip is 9.69 KB at 10 Gbps (Homa's derived RTTbytes): 10,000 B "
        "leaves no room for a grant's 4 packets beyond the round trip. (The PL2 paper's 61 KiB at 100 Gbps is ten of "
        "its 4-packet grants.)",
        "- Homa, NDP and DCTCP reach the ideal alone (within spraying's gain); small messages pay only their header "
        "difference and, for pHost, the RTS that precedes the data.",
    ]
    return "\n".join(md)


def plot(ctx: Context, bf: pl.DataFrame, workloads: list[str], load: float) -> None:
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(workloads), figsize=(4.2 * len(workloads), 4.2), squeeze=False)
    for ax, w in zip(axes[0], workloads, strict=True):
        g = bf.filter((pl.col("workload") == w) & (pl.col("load") == load))
        labels: list[str] = []
        for tp in c.TRANSPORTS:
            t = g.filter(pl.col("transport") == tp).sort("bin")
            labels = t["label"].to_list() or labels
            xs = t["bin"].to_list()
            for col, style in (("p99_slowdown", "-"), ("p50_slowdown", ":")):
                ys = [y if y is not None and math.isfinite(y) else float("nan") for y in t[col].to_list()]
                ax.plot(xs, ys, style, marker="o" if style == "-" else None, ms=3, color=c.COLORS[tp],
                        label=f"{tp} {'p99' if style == '-' else 'p50'}")
        ax.set_yscale("log")
        ax.set_xticks(range(len(labels)), labels, rotation=60, fontsize=7)
        ax.set_xlabel("message size (bin upper edge, workload deciles)")
        ax.set_title(w.upper())
        ax.grid(True, which="both", alpha=0.3)
    axes[0][0].set_ylabel("slowdown (solid p99, dotted p50)")
    axes[0][-1].legend(fontsize=6, ncol=2)
    fig.suptitle(f"Slowdown by message size at {int(load * 100)}% load, 144 hosts, 10/40 Gbps (gaps: a percentile falls on "
                 "an unfinished message)", fontsize=10)
    fig.tight_layout()
    ctx.save(fig, f"slowdown_{int(load * 100)}")


def _f(x: float | None, d: int = 2) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    if math.isinf(x):
        return "∞"
    return f"{x:.{d}f}" if x < 100 else f"{x:.0f}"


def section(ctx: Context, rf: pl.DataFrame, bf: pl.DataFrame, windows: Mapping[str, float], loads: list[float], drain: float,
            homa_cfg: Mapping[str, Mapping[str, Any]]) -> str:
    n_seeds = rf["seed"].n_unique()
    md = [
        "**Setting.** Every host offers Poisson arrivals at the given fraction of its 10 Gbps link to uniformly random "
        "other hosts (all-to-all). pl2 counts load in **wire bytes of the transport's own data frames** (payload, its "
        "headers, Ethernet with 802.1Q tag, preamble and IFG: `crates/pl2-sim/src/workload/arrivals.rs`); control frames "
        "(grants, tokens, PULLs, ACKs) are not counted. The Homa simulator also counts wire bytes, but grants included: "
        "its generator is given `loadFactor = load × f` with f = 0.657 / 0.796 / 0.887 / 0.898 / 0.898 for W1–W5, the "
        "average payload over the average wire bytes with an 84 B grant per scheduled packet "
        "(`sizeDistributions/adjustLoadFac.py`, `homaTransportConfig.ini` per workload section). So at the same nominal "
        "load our Homa carries a little more payload than the paper's (its grants, measured below as control bytes, "
        "come on top), and because headers differ (raw Ethernet for pHost and RDS, 30/16 B for Homa, 28 B for NDP, 40 B "
        "for TCP) each transport carries a slightly different payload load at the same wire load: message counts are "
        "per transport in the table.",
        "",
        f"Windows per seed ({n_seeds} seed(s), messages pooled over seeds): arrivals for "
        + ", ".join(f"{w.upper()} {windows[w] / 1000:g} ms" for w in windows)
        + f"; messages arriving in the first {int(WARMUP_SHARE * 100)}% of the window are warm-up and not measured "
        f"(the Homa simulator has no warm-up and measures everything, `ini:9`); the run then continues without new "
        f"arrivals until every message is delivered, at most {drain / 1000:g} ms. An unfinished message counts as "
        "infinitely slow; it is counted in every table, never dropped.",
        "",
        "**Slowdown.** Completion time (arrival at the sending application to the last byte delivered to the receiving "
        "application) over the message's ideal time in pl2 (`crates/pl2-sim/src/sim/ideal.rs`): the same message alone "
        "in this network, pushed frame by frame through the same host and switch stages (send latency, serialisation "
        "per hop, store-and-forward, propagation, receive latency) with the transport's data framing, over the first "
        "equal-cost path. It is transport-independent except for the headers: it leaves out each protocol's own "
        "mechanics (pHost's RTS and token round trip for flows over 8 packets, DCTCP's slow start, RDS's grant round "
        "trip beyond RTTbytes), which therefore show in the slowdown. The Homa simulator's ideal (its \"stretch\" "
        "denominator, `WorkloadSynthesizer.cc:544-673`) is an analytic formula of the same kind but leaves out Homa's "
        "header (so its unloaded stretch is slightly above 1). A sprayed multi-packet message can beat the single-path "
        "ideal: its short last frame overtakes the full one on another spine and the ToR's store-and-forward no longer "
        "serialises them back to back; that gain is at most one frame's serialisation at 10 Gbps (1.23 µs), and is the "
        "only way a slowdown goes below 1 (column `min` below).",
        "",
        "**Bins.** As in the Homa paper's slowdown figures the x axis is message size laid out by the workload's size "
        "percentiles: we cut at the deciles of the measured messages' sizes (all runs of the workload pooled; a size "
        "the workload repeats can make bins merge) and label each bin by its upper edge.",
        "",
        "**Transports and switches** (`python/pl2/reproduce/receiver_driven/common.py`): "
        + "; ".join(f"{tp}: {c.PATHS[tp]}" for tp in c.TRANSPORTS)
        + f". Homa `preset = \"reference\"` (the Homa simulator's `homaTransportConfig.ini`: overcommitment = scheduled "
        "levels, grant pacing, tail boost; RTTbytes derived from this network, unscheduled levels and cut-offs from the "
        "workload by the simulator's estimator): "
        + "; ".join(f"{w.upper()} RTTbytes {v.get('rtt_bytes')}, {v.get('unscheduled_levels')} unscheduled / "
                    f"{v.get('scheduled_levels')} scheduled levels, cut-offs {', '.join(map(str, v.get('unscheduled_cutoffs') or [])) or 'none'}"
                    for w, v in homa_cfg.items())
        + " (the reference simulator: RTTbytes 10,000 B; W1 cut-offs 11, 125, 273, 468, 764, 1275; W2 269, 366, 512, "
        "1463; W3 433, 2339, 6756; both inputs of the estimator differ here: our frames carry a 4 B 802.1Q tag the "
        "simulator's do not, and our derived round trip is 9.69 KB). "
        "pHost `preset = \"yaps\"` (flows of ≤ 8 packets unsolicited, SRPT tokens, control at priority 7). NDP with "
        "htsim's defaults (initial window 23 packets, 5 ms RTO floor, control at 7) on **trimming switches** (each data "
        f"FIFO {c.NDP_DATA_FRAMES} full frames, header FIFO twice that). DCTCP: pl2's TCP (SACK, delayed ACKs, initial "
        f"window 10, 1 ms minimum RTO) with `cc = \"dctcp\"` and **step ECN marking at K = {c.DCTCP_K_FRAMES} full frames** "
        f"({c.DCTCP_K_FRAMES * c.FRAME_WIRE:,} B, the value of the DCTCP paper's 10 Gbps experiments; not pl2's default, which has no "
        f"ECN). RDS as in the PL2 paper (4 packets per grant, overcommitment 1, round-robin admission) with RTTbytes "
        f"{c.RDS_RTT_BYTES} (the Homa simulator's value for this network). The switch is per run; apart from NDP's queues "
        "and DCTCP's marking everything is identical: 8 strict priorities (Homa uses all 8, pHost and NDP two, DCTCP and "
        "RDS one for data), a 64 MiB shared buffer with no per-port limit (the simulator's queues are unbounded).",
        "",
    ]
    # Run totals.
    trows = []
    for (w, load, tp), g in rf.group_by(["workload", "load", "transport"], maintain_order=True):
        ctl = g["control_wire_bytes"].sum() / max(1, g["data_wire_bytes"].sum())
        sched = g["homa_scheduled_packets"].sum()
        uns = g["homa_unscheduled_packets"].sum()
        trows.append([w.upper(), f"{int(load * 100)}%", tp, int(g["messages"].sum()), int(g["unfinished"].sum()),
                      int(g["drops"].sum()), int(g["trims"].sum()), int(g["timeouts"].sum()), int(g["retransmissions"].sum()),
                      f"{100 * ctl:.1f}%", f"{load * (1 + ctl):.2f}", f"{g['max_queue_down_bytes'].max() / 1000:.0f}", f"{g['max_queue_up_bytes'].max() / 1000:.0f}",
                      f"{100 * sched / (sched + uns):.0f}%" if tp == "Homa" and sched + uns else
                      f"{100 * g['tcp_ce_received'].sum() / max(1, g['tcp_segments_received'].sum()):.2f}% CE" if tp == "DCTCP" else "–"])
    md += ["**Run totals** (seeds summed; queues: the largest over seeds at any ToR→host port and any switch→switch "
           "port; timeouts: Homa RESEND timeouts, pHost RTS resends, NDP and DCTCP retransmission timeouts, RDS sender and "
           "receiver timeouts; with no drops, a retransmission is a timer firing on a packet that was only late; host link "
           "load with control = load × (1 + control / data wire bytes): the traffic is all-to-all and symmetric, so "
           "each host's link carries its share of the control frames too, above 1.00 the host links are overloaded):", "",
           table(["workload", "load", "transport", "messages", "unfinished", "drops", "trims", "timeouts", "retransmissions",
                  "control / data wire bytes", "host link load with control", "max queue → host KB", "max queue fabric KB",
                  "Homa scheduled packets / DCTCP CE-marked segments"], trows), ""]
    # Per-bin table: p50 / p99 per transport, one row per (workload, load, bin).
    head = ["workload", "load", "size ≤"] + [f"{tp} p50 / p99" for tp in c.TRANSPORTS] + ["unfinished (H/pH/N/D/R)", "min slowdown"]
    rows = []
    for (w, load), g in bf.group_by(["workload", "load"], maintain_order=True):
        for b in sorted(set(g["bin"].to_list())):
            gb = g.filter(pl.col("bin") == b)
            cells, unf, mins = [], [], []
            label = gb["label"][0]
            for tp in c.TRANSPORTS:
                r = gb.filter(pl.col("transport") == tp)
                if r.height == 0:
                    cells.append("–")
                    unf.append("–")
                    continue
                cells.append(f"{_f(r['p50_slowdown'][0])} / {_f(r['p99_slowdown'][0])}")
                unf.append(str(int(r["unfinished"][0])))
                if r["min_slowdown"][0] is not None:
                    mins.append(float(r["min_slowdown"][0]))
            rows.append([w.upper(), f"{int(load * 100)}%", label, *cells, "/".join(unf), _f(min(mins) if mins else None, 3)])
    md += ["**Slowdown by size** (p50 / p99, seeds pooled; ∞: the percentile falls on an unfinished message):", "",
           table(head, rows), ""]
    md += published(bf, loads)
    md += why(rf, bf, loads)
    return "\n".join(md)


def published(bf: pl.DataFrame, loads: list[float]) -> list[str]:
    """The Homa paper's numbers beside ours, where we could find them."""
    return [
        "**Beside the Homa paper.** The Homa paper (Montazeri et al., SIGCOMM 2018) gives its simulation results as plots "
        "(99th-percentile slowdown by message size per workload at 80% load, and the same with pHost, PIAS, pFabric and "
        "NDP); the paper's PDF is not among this project's seeds and we found no source quoting the plotted values, so "
        "no published per-bin number is set beside ours here. The one quantitative claim of its abstract we can set "
        "against our runs is qualitative: \"Homa's latency is roughly equal to pFabric and significantly better than "
        "pHost, PIAS, and NDP for almost all message sizes and workloads\". Ours, at 80% load, p99 of the smallest "
        "size bin (Homa against each other transport):",
        "",
        table(["workload"] + [f"{tp} / Homa" for tp in c.TRANSPORTS[1:]], _ratios(bf, 0.8 if 0.8 in loads else loads[-1])),
        "",
        "Over all size bins and workloads, the share of bins where Homa's p99 slowdown is below the other "
        "transport's (an unfinished percentile counts as infinite): "
        + "; ".join(f"{int(load * 100)}% load: " + ", ".join(f"{tp} {_wins(bf, load, tp)}" for tp in c.TRANSPORTS[1:])
                    for load in loads) + ".",
        "",
    ]


def _wins(bf: pl.DataFrame, load: float, tp: str) -> str:
    won = total = 0
    for (w, b), g in bf.filter(pl.col("load") == load).group_by(["workload", "bin"]):
        h = g.filter(pl.col("transport") == "Homa")["p99_slowdown"]
        o = g.filter(pl.col("transport") == tp)["p99_slowdown"]
        if not h.len() or not o.len() or h[0] is None or o[0] is None:
            continue
        total += 1
        won += int(h[0] < o[0])
    return f"{won}/{total}"


def _ratios(bf: pl.DataFrame, load: float) -> list[list[str]]:
    out = []
    for w in bf["workload"].unique(maintain_order=True).to_list():
        g = bf.filter((pl.col("workload") == w) & (pl.col("load") == load) & (pl.col("bin") == 0))
        h = g.filter(pl.col("transport") == "Homa")["p99_slowdown"]
        hv = h[0] if h.len() else None
        cells = []
        for tp in c.TRANSPORTS[1:]:
            v = g.filter(pl.col("transport") == tp)["p99_slowdown"]
            x = v[0] if v.len() else None
            cells.append("–" if x is None or hv is None or not math.isfinite(x) or not math.isfinite(hv) or hv == 0 else f"{x / hv:.2f}×")
        out.append([w.upper(), *cells])
    return out


def why(rf: pl.DataFrame, bf: pl.DataFrame, loads: list[float]) -> list[str]:
    """Where each transport's tail comes from, read off the tail messages' breakdown."""
    out = ["**Where the tails come from (measured).** For the messages at or above each bin's p99 slowdown, pl2's "
           "per-message breakdown (`metrics.breakdown`, `crates/pl2-sim/src/sim/breakdown.rs`) follows the frame that "
           "completed the message: its transport wait (the message's arrival to that frame's creation: waiting for "
           "grants, tokens, PULLs, the congestion window, retransmission, or behind the sender's other messages), its "
           "queueing at the sending NIC, and its queueing in switches (summed over hops). Smallest "
           "and largest size bin, mean over the tail messages, µs (ideal time first):", ""]
    rows = []
    for (w, load, tp), g in bf.group_by(["workload", "load", "transport"], maintain_order=True):
        g = g.sort("bin")
        for r in (g.row(0, named=True), g.row(g.height - 1, named=True)):
            rows.append([w.upper(), f"{int(load * 100)}%", tp, r["label"], _f(r["p99_slowdown"]), _f(r["tail_ideal_us"]),
                         _f(r["tail_latency_us"]), _f(r["tail_transport_wait_us"]), _f(r["tail_nic_queue_us"]),
                         _f(r["tail_switch_queue_us"])])
    out += [table(["workload", "load", "transport", "size ≤", "p99", "ideal", "latency", "transport wait", "NIC queue",
                   "switch queue"], rows), ""]
    out += ["For a message of many frames the transport wait of its last frame includes the sending of the earlier "
            "ones (which the ideal counts too), so in the largest bins it is large even alone; the alone table below "
            "separates that. In short, the largest of the three parts in the tail messages of the smallest and the "
            "largest size bin, over all workloads and loads:", ""]
    for tp in c.TRANSPORTS:
        g = bf.filter(pl.col("transport") == tp)
        parts = []
        for which, name in ((g.group_by(["workload", "load"]).agg(pl.all().sort_by("bin").first()), "smallest"),
                            (g.group_by(["workload", "load"]).agg(pl.all().sort_by("bin").last()), "largest")):
            tally: dict[str, int] = {}
            for r in which.iter_rows(named=True):
                comp = {"transport wait": r["tail_transport_wait_us"], "NIC queue": r["tail_nic_queue_us"],
                        "switch queue": r["tail_switch_queue_us"]}
                if any(v is None for v in comp.values()) or r["tail_latency_us"] is None:
                    continue
                k = max(comp, key=lambda x: comp[x] or 0.0)
                tally[k] = tally.get(k, 0) + 1
            if tally:
                top = max(tally, key=lambda x: tally[x])
                parts.append(f"{name} bin: {top} in {tally[top]} of {sum(tally.values())} (workload, load) points")
        unf = int(rf.filter(pl.col("transport") == tp)["unfinished"].sum())
        rx = int(rf.filter(pl.col("transport") == tp)["retransmissions"].sum())
        dr = int(rf.filter(pl.col("transport") == tp)["drops"].sum())
        out.append(f"- {tp}: " + "; ".join(parts) + f". Unfinished {unf}, drops {dr}, retransmissions {rx} over all its runs.")
    out.append("")
    over = []
    for (w, load, tp), g in rf.group_by(["workload", "load", "transport"], maintain_order=True):
        ctl = g["control_wire_bytes"].sum() / max(1, g["data_wire_bytes"].sum())
        if load * (1 + ctl) > 1.0:
            over.append(f"{tp} on {w.upper()} at {int(load * 100)}% ({load * (1 + ctl):.2f})")
    if over:
        out += ["Overloaded host links: counting control frames, the offered load exceeds the host link for "
                + ", ".join(over) + ". Every message of these transports adds control frames of 84 B on the wire "
                "(pHost an RTS and an ACK, NDP an ACK and PULLs, RDS a DONE and grants, TCP ACKs), which on W1's and "
                "W2's messages of a few hundred bytes are a large share of the data; Homa sends no control for a message "
                "that fits its unscheduled bytes. Where that load is above 1 the sending hosts' queues (in the transport "
                "or at the NIC) grow for the whole window, which is why these points have median slowdowns far above 1 "
                "at every size.", ""]
    rds = rf.filter(pl.col("transport") == "RDS")
    if int(rds["drops"].sum()) == 0 and int(rds["retransmissions"].sum()) > 0:
        out += [f"RDS resent {int(rds['retransmissions'].sum()):,} packets after {int(rds['timeouts'].sum()):,} "
                "timeouts with no packet dropped anywhere: its 1 ms sender and receiver timeouts (the PL2 paper's values "
                "at 100 Gbps) fire on packets that are late, not lost (at 10 Gbps with overcommitment 1 a message can wait "
                "longer than 1 ms for its grants), and the resent packets are load on top. Its largest tails are "
                "transport wait.", ""]
    homa = rf.filter(pl.col("transport") == "Homa")
    if int(homa["timeouts"].sum()) > 0:
        out += [f"Homa fired {int(homa['timeouts'].sum())} RESEND timeouts (10 ms) and resent "
                f"{int(homa['retransmissions'].sum())} packets with no drop anywhere: messages that received nothing for "
                "10 ms while the receiver granted smaller ones (SRPT), on "
                + ", ".join(sorted({f"{r['workload'].upper()} {int(r['load'] * 100)}%" for r in homa.filter(pl.col('timeouts') > 0).iter_rows(named=True)}))
                + ".", ""]
    return out
