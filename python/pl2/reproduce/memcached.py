"""Shared pieces of Figs. 3–4 and 5–6 (§6.2.1–6.2.2): memcached GETs from one client
against one server while 0–4 other hosts send background traffic into the client's
downlink, with and without PL2.

Setup (both figures):

- *memcached*: the `rpc` workload, client h0, server h1, 8 connections (threads 4–11 on
  both hosts), binary-protocol GETs (88 B requests, 4124 B responses: 4 KiB values, the
  values the paper's graphs show). The server's service time is 1.5 µs plus an
  exponential with mean 0.5 µs, the constant of examples/memcached-rpc.toml: the paper
  does not give one, and it was **not fitted** to any point of the figures. 8
  outstanding requests: the paper does not say how many its client keeps; 8 keeps
  memcached at tens of Gbps on an idle 100G link (~55 Gbps here, the paper reports 2–3
  Gbps for its VMA client, whose per-request processing we do not model) without
  filling the client's 12 threads.
- *background*: n = 0–4 hosts, each with 4 threads that always have a 64 KiB message for
  the client (persistent, closed loop: the worst case the paper describes as persistent
  congestion). The first background host is the memcached server h1 itself, as in the
  paper ("the memcached host also sends background traffic that utilizes around 50% of
  the downlink"); the others are h2, h3, h4. The background uses threads 0–3.
- A pl2 scenario has one transport for all its traffic (`[transport]`; a workload cannot
  choose its own), so memcached and the background always share one.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from pl2.reproduce.common import Context, Job, buffer_drops, fmt_ci, fmt_us, mean_ci, program_drops, scenario, table

CLIENT = 0
SERVER = 1
BACKGROUND_HOSTS = [1, 2, 3, 4]
CONCURRENCY = 8
RESPONSE_BYTES = 4124
SERVICE = {"kind": "exponential", "min": "1500ns", "mean_extra": "500ns"}
BG_THREADS = 4
BG_SIZE = "64KiB"
PL2 = {"k": 4, "t": 15}
PL2_FIXED = {**PL2, "decrement_at": "dequeue", "improved": True}


def workloads(n_bg: int) -> list[dict[str, Any]]:
    w: list[dict[str, Any]] = [{"kind": "rpc", "clients": [CLIENT], "servers": [SERVER], "concurrency": CONCURRENCY,
                                "first_thread": BG_THREADS, "service": SERVICE}]
    if n_bg:
        w.append({"kind": "persistent", "senders": BACKGROUND_HOSTS[:n_bg], "receiver": CLIENT, "size": BG_SIZE,
                  "threads": BG_THREADS})
    return w


def windows(ctx: Context) -> tuple[float, float, float]:
    """(warm-up, measurement window, drain) in ms. The drain lets RPCs started in the
    window finish (a TCP retransmission timeout is ≥ 1 ms); those still unfinished at
    the end count as infinitely slow."""
    return (0.5, 2.0, 1.0) if ctx.quick else (1.0, 10.0, 3.0)


def points(ctx: Context) -> list[int]:
    return [0, 2, 4] if ctx.quick else [0, 1, 2, 3, 4]


def _us(ps: float | None) -> float:
    return float("inf") if ps is None else ps / 1e6


def sweep(ctx: Context, name: str, schemes: Mapping[str, Mapping[str, Any]]) -> pl.DataFrame:
    """Runs every (scheme, background hosts, seed) and returns one row per run."""
    warm, win, drain = windows(ctx)
    jobs: list[Job] = []
    for scheme, transport in schemes.items():
        for n in points(ctx):
            sc = scenario(f"{name}-{scheme.replace(' ', '-').replace('/', '-')}-{n}bg", transport, workloads(n),
                          warmup_ms=warm, until_ms=warm + win, duration_ms=warm + win + drain)
            jobs += [Job(sc, {"figure": name, "scheme": scheme, "background_hosts": n}, seed, name) for seed in ctx.seeds]
    rows = []
    for job, res in zip(jobs, ctx.run_many(jobs), strict=True):
        scheme, n, seed = job.params["scheme"], job.params["background_hosts"], job.seed
        s = res.summary
        r = s.get("rpcs") or {}
        lat = r.get("latency_ps") or {}
        count = int(r.get("count", 0))
        tps = float(r.get("tps", 0.0))
        into_client = float((s.get("goodput_gbps") or {}).get(f"h{CLIENT}", 0.0))
        rpcs = res.rpcs
        done = rpcs.filter(pl.col("finish_ps").is_not_null()) if rpcs is not None else None
        last = None if done is None or done.height == 0 else int(done["finish_ps"].max()) / 1e6
        tcp = s.get("tcp") or {}
        rows.append({
            "scheme": scheme, "background_hosts": n, "seed": seed,
            "rpcs": count, "finished": int(r.get("finished", 0)),
            "tps": tps,
            # With no RPC started in the window (every connection stalled on a
            # lost message before it), latencies are infinite.
            "p50_us": _us(lat.get("p50")) if count else float("inf"),
            "p99_us": _us(lat.get("p99")) if count else float("inf"),
            "rpcs_total": 0 if rpcs is None else rpcs.height,
            "rpcs_finished_total": 0 if done is None else done.height,
            "last_finish_us": last,
            "client_goodput_gbps": into_client,
            # Payload into the client minus memcached's responses in the window.
            "background_gbps": max(0.0, into_client - tps * RESPONSE_BYTES * 8 / 1e9),
            "buffer_drops": buffer_drops(s), "program_drops": program_drops(s),
            "tcp_retransmissions": tcp.get("retransmissions"), "tcp_timeouts": tcp.get("timeouts"),
        })
    return pl.DataFrame(rows)


def aggregate(df: pl.DataFrame) -> dict[tuple[str, int], dict[str, Any]]:
    agg = {}
    for (scheme, n), g in df.group_by(["scheme", "background_hosts"], maintain_order=True):
        retx = None if g["tcp_retransmissions"].null_count() == g.height else int(g["tcp_retransmissions"].sum())
        rto = None if g["tcp_timeouts"].null_count() == g.height else int(g["tcp_timeouts"].sum())
        agg[(scheme, int(n))] = dict(
            tps=mean_ci([x / 1e3 for x in g["tps"].to_list()]),
            p50=_mean_inf(g["p50_us"].to_list()), p99=_mean_inf(g["p99_us"].to_list()),
            bg=mean_ci(g["background_gbps"].to_list()),
            drops=int(g["buffer_drops"].sum() + g["program_drops"].sum()),
            retx=retx, rto=rto,
            rpcs=int(g["rpcs"].sum()), finished=int(g["finished"].sum()),
            total=int(g["rpcs_total"].sum()), total_done=int(g["rpcs_finished_total"].sum()),
            last=max((x for x in g["last_finish_us"].to_list() if x is not None), default=None),
        )
    return agg


def _mean_inf(xs: Sequence[float]) -> tuple[float | None, float | None]:
    """Mean ± 95% interval over seeds; ∞ if any seed's percentile fell on an unfinished RPC."""
    if any(math.isinf(x) for x in xs):
        return float("inf"), None
    return mean_ci(xs)


def results_table(agg: Mapping[tuple[str, int], Mapping[str, Any]], paper: Mapping[tuple[str, int], str]) -> str:
    rows = []
    for (scheme, n), a in agg.items():
        rows.append([scheme, n, fmt_ci(*a["tps"], digits=0), _fmt_lat(a["p50"]), _fmt_lat(a["p99"]),
                     paper.get((scheme, n), "–"), fmt_ci(*a["bg"], digits=1), a["drops"],
                     "–" if a["retx"] is None else f"{a['retx']} / {a['rto']}", f"{a['finished']}/{a['rpcs']}",
                     fmt_us(a["last"]) if a["rpcs"] == 0 and a["last"] is not None else "–"])
    return table(["scheme", "bg hosts", "k transactions/s", "p50 µs", "p99 µs", "paper", "background Gbps",
                  "drops", "TCP retx / RTOs", "finished/RPCs in window", "last response µs (if none in window)"], rows)


def _fmt_lat(mc: tuple[float | None, float | None]) -> str:
    m, ci = mc
    if m is None:
        return "–"
    if math.isinf(m):
        return "∞"
    return fmt_ci(m, ci, digits=1)


def plot(ctx: Context, agg: Mapping[tuple[str, int], Mapping[str, Any]], schemes: Sequence[str], colors: Mapping[str, str],
         name: str, title: str, background_panel: bool, paper_band: tuple[float, float, str] | None = None) -> None:
    import matplotlib.pyplot as plt

    ns = sorted({n for _, n in agg})
    panels = 3 if background_panel else 2
    fig, axes = plt.subplots(1, panels, figsize=(5.2 * panels, 4.2))
    width = 0.8 / len(schemes)
    for i, scheme in enumerate(schemes):
        xs = [n + (i - (len(schemes) - 1) / 2) * width for n in ns]
        tps = [agg[(scheme, n)]["tps"][0] or 0.0 for n in ns]
        err = [agg[(scheme, n)]["tps"][1] or 0.0 for n in ns]
        axes[0].bar(xs, tps, width, yerr=err, color=colors[scheme], label=scheme)
        for key, ls, mk in (("p99", "-", "o"), ("p50", ":", ".")):
            vals = [agg[(scheme, n)][key][0] for n in ns]
            pts = [(n, v) for n, v in zip(ns, vals, strict=True) if v is not None and not math.isinf(v)]
            if pts:
                axes[1].plot([p[0] for p in pts], [p[1] for p in pts], ls=ls, marker=mk, color=colors[scheme],
                             label=f"{scheme} {key}")
            inf_ns = [n for n, v in zip(ns, vals, strict=True) if v is not None and math.isinf(v)]
            if inf_ns and key == "p99":
                axes[1].scatter([n + (i - (len(schemes) - 1) / 2) * 0.1 for n in inf_ns], [1e4] * len(inf_ns), marker="^",
                                color=colors[scheme], label=f"{scheme} p99 ∞ (unfinished; drawn at 10⁴ µs)")
        if background_panel:
            axes[2].plot(ns, [agg[(scheme, n)]["bg"][0] for n in ns], marker="o", color=colors[scheme], label=scheme)
    axes[0].set_ylabel("memcached k transactions/s")
    axes[1].set_ylabel("two-way RPC latency (µs)")
    axes[1].set_yscale("log")
    if background_panel:
        if paper_band:
            axes[2].axhspan(paper_band[0], paper_band[1], color="tab:gray", alpha=0.2, label=paper_band[2])
        axes[2].set_ylabel("background goodput into the client (Gbps)")
        axes[2].set_ylim(0, 100)
    for ax in axes:
        ax.set_xlabel("hosts sending background traffic")
        ax.set_xticks(ns)
        ax.legend(fontsize=6)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    ctx.save(fig, name)


def setup_text() -> str:
    return (f"memcached: client h{CLIENT}, server h{SERVER}, {CONCURRENCY} outstanding GETs (88 B requests, 4124 B "
            "responses: 4 KiB values), service time 1.5 µs + exponential(0.5 µs) (examples/memcached-rpc.toml; the paper "
            "gives none, and it was not fitted to any point). Background: n hosts × 4 threads, each always holding a 64 KiB "
            "message for the client; the first background host is the memcached server h1 (as in the paper), then h2–h4. "
            "Latency is two-way (request send call to response delivery); RPCs unfinished at the end count as infinitely "
            "slow (∞), and with no RPC started in the window (every connection stalled on a lost message) both percentiles "
            "are ∞. Transactions/s count responses delivered in the window; background Gbps is payload into the client "
            "minus the responses'. Drops are frames lost at the switch.")
