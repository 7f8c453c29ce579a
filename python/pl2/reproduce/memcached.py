"""Shared pieces of Figs. 3–4 and 5–6 (§6.2.1–6.2.2): memcached GETs from one client
against one server while 0–4 other hosts send background traffic into the client's
downlink, with and without PL2.

Setup (both figures):

- *memcached*: the `rpc` workload, client h0, server h1, 8 connections (threads 4–11 on
  both hosts), binary-protocol GETs with 64 B keys (88 B requests) for 4 KiB values
  (4124 B responses, the values the paper's graphs show) and 1 KiB values (1052 B
  responses; the paper: "the same trend"). The server's service time is 1.5 µs plus an
  exponential with mean 0.5 µs, the constant of examples/memcached-rpc.toml: the paper
  does not give one, and it was **not fitted** to any point of the figures. 8
  outstanding requests: the paper does not say how many its client keeps; 8 keeps
  memcached at tens of Gbps on an idle 100G link (~55 Gbps here, the paper reports 2–3
  Gbps for its VMA client, whose per-request processing we do not model) without
  filling the client's 12 threads.
- *TCP retransmission timeout*: pl2's RFC 6298 timer with its datacenter defaults
  (initial and minimum RTO 1 ms, doubling per timeout), not VMA's user-space stack's,
  which the paper does not give (its 5 s p99 without PL2 points to timeouts of the
  order of a second). Our runs last milliseconds, so a lost segment shows as an RPC
  that waits ≥ 1 ms or does not finish, not as seconds.
- *background*: n = 0–4 hosts, each with 4 threads that always have a 64 KiB message for
  the client (persistent, closed loop: the worst case the paper describes as persistent
  congestion). The first background host is the memcached server h1 itself, as in the
  paper ("the memcached host also sends background traffic that utilizes around 50% of
  the downlink"); the others are h2, h3, h4. The background uses threads 0–3.
- *transports*: a scheme names memcached's transport and, if different, the
  background's (`[transports.bg]`): Figs. 3–4 run both over one TCP, Figs. 5–6 TCP
  memcached beside a UDP background, as the paper pairs them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from pl2.reproduce.common import Context, Job, buffer_drops, fmt_ci, fmt_us, mean_ci, program_drops, scenario, table

CLIENT = 0
SERVER = 1
BACKGROUND_HOSTS = [1, 2, 3, 4]
CONCURRENCY = 8
RESPONSE_HEADER_BYTES = 28  # a binary GET response's 24 B header and 4 B flags
VALUES = [4096, 1024]  # value sizes: the paper's graphs show 4 KiB, its text adds 1 KiB
SERVICE = {"kind": "exponential", "min": "1500ns", "mean_extra": "500ns"}
BG_THREADS = 4
BG_SIZE = "64KiB"
PL2 = {"k": 4, "t": 15}
PL2_FIXED = {**PL2, "decrement_at": "dequeue", "improved": True}


def response_bytes(value: int) -> int:
    return value + RESPONSE_HEADER_BYTES


def workloads(n_bg: int, value: int = VALUES[0], bg_transport: str | None = None) -> list[dict[str, Any]]:
    """memcached with `value`-byte values, and `n_bg` background hosts (over the named
    transport, or memcached's when None)."""
    w: list[dict[str, Any]] = [{"kind": "rpc", "clients": [CLIENT], "servers": [SERVER], "concurrency": CONCURRENCY,
                                "first_thread": BG_THREADS, "service": SERVICE,
                                "response_size": f"{response_bytes(value)}B"}]
    if n_bg:
        bg: dict[str, Any] = {"kind": "persistent", "senders": BACKGROUND_HOSTS[:n_bg], "receiver": CLIENT,
                              "size": BG_SIZE, "threads": BG_THREADS}
        if bg_transport:
            bg["transport"] = bg_transport
        w.append(bg)
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
    """Runs every (scheme, value size, background hosts, seed) and returns one row per
    run. A scheme is `{"memcached": transport table, "background": transport table}`,
    the background's omitted when it shares memcached's."""
    warm, win, drain = windows(ctx)
    jobs: list[Job] = []
    for scheme, spec in schemes.items():
        bg = spec.get("background")
        for value in VALUES:
            for n in points(ctx):
                label = f"{name}-{scheme.replace(' ', '-').replace('/', '-')}-{value}B-{n}bg"
                sc = scenario(label, spec["memcached"], workloads(n, value, "bg" if bg else None),
                              transports={"bg": bg} if bg else None,
                              warmup_ms=warm, until_ms=warm + win, duration_ms=warm + win + drain)
                params = {"figure": name, "scheme": scheme, "value_bytes": value, "background_hosts": n}
                jobs += [Job(sc, params, seed, name) for seed in ctx.seeds]
    rows = []
    for job, res in zip(jobs, ctx.run_many(jobs), strict=True):
        scheme, value, n, seed = job.params["scheme"], job.params["value_bytes"], job.params["background_hosts"], job.seed
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
            "scheme": scheme, "value_bytes": value, "background_hosts": n, "seed": seed,
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
            "background_gbps": max(0.0, into_client - tps * response_bytes(value) * 8 / 1e9),
            "buffer_drops": buffer_drops(s), "program_drops": program_drops(s),
            "tcp_retransmissions": tcp.get("retransmissions"), "tcp_timeouts": tcp.get("timeouts"),
        })
    return pl.DataFrame(rows)


Key = tuple[str, int, int]  # (scheme, value bytes, background hosts)


def aggregate(df: pl.DataFrame) -> dict[Key, dict[str, Any]]:
    agg = {}
    for (scheme, value, n), g in df.group_by(["scheme", "value_bytes", "background_hosts"], maintain_order=True):
        retx = None if g["tcp_retransmissions"].null_count() == g.height else int(g["tcp_retransmissions"].sum())
        rto = None if g["tcp_timeouts"].null_count() == g.height else int(g["tcp_timeouts"].sum())
        agg[(scheme, int(value), int(n))] = dict(
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


def results_table(agg: Mapping[Key, Mapping[str, Any]], paper: Mapping[tuple[str, int], str], value: int) -> str:
    """The rows of one value size; `paper` is keyed by (scheme, background hosts)."""
    rows = []
    for (scheme, v, n), a in agg.items():
        if v != value:
            continue
        rows.append([scheme, n, fmt_ci(*a["tps"], digits=0), _fmt_lat(a["p50"]), _fmt_lat(a["p99"]),
                     paper.get((scheme, n), "–"), fmt_ci(*a["bg"], digits=1), a["drops"],
                     "–" if a["retx"] is None else f"{a['retx']} / {a['rto']}", f"{a['finished']}/{a['rpcs']}",
                     fmt_us(a["last"]) if a["rpcs"] == 0 and a["last"] is not None else "–"])
    return table(["scheme", "bg hosts", "k transactions/s", "p50 µs", "p99 µs", "paper", "background Gbps",
                  "drops", "TCP retx / RTOs", "finished/RPCs in window", "last response µs (if none in window)"], rows)


def within(x: float | None, target: float, rel: float) -> bool:
    """Whether the finite value `x` lies within ±`rel` (a fraction) of `target`."""
    return x is not None and not math.isinf(x) and abs(x - target) <= rel * target


def _fmt_lat(mc: tuple[float | None, float | None]) -> str:
    m, ci = mc
    if m is None:
        return "–"
    if math.isinf(m):
        return "∞"
    return fmt_ci(m, ci, digits=1)


def plot(ctx: Context, agg: Mapping[Key, Mapping[str, Any]], schemes: Sequence[str], colors: Mapping[str, str],
         name: str, title: str, background_panel: bool, paper_band: tuple[float, float, str] | None = None) -> None:
    """One row of panels per value size: transactions/s, p50/p99 latency and (with
    `background_panel`) the background's goodput into the client."""
    import matplotlib.pyplot as plt

    values = [v for v in VALUES if any(k[1] == v for k in agg)]
    ns = sorted({n for _, _, n in agg})
    panels = 3 if background_panel else 2
    fig, grid = plt.subplots(len(values), panels, figsize=(5.2 * panels, 4.0 * len(values)), squeeze=False)
    width = 0.8 / len(schemes)
    for row, value in zip(grid, values, strict=True):
        for i, scheme in enumerate(schemes):
            cell = {n: agg[(scheme, value, n)] for n in ns if (scheme, value, n) in agg}
            xs = [n + (i - (len(schemes) - 1) / 2) * width for n in cell]
            row[0].bar(xs, [c["tps"][0] or 0.0 for c in cell.values()], width,
                       yerr=[c["tps"][1] or 0.0 for c in cell.values()], color=colors[scheme], label=scheme)
            for key, ls, mk in (("p99", "-", "o"), ("p50", ":", ".")):
                pts = [(n, c[key][0]) for n, c in cell.items() if c[key][0] is not None and not math.isinf(c[key][0])]
                if pts:
                    row[1].plot([p[0] for p in pts], [p[1] for p in pts], ls=ls, marker=mk, color=colors[scheme],
                                label=f"{scheme} {key}")
                inf_ns = [n for n, c in cell.items() if c[key][0] is not None and math.isinf(c[key][0])]
                if inf_ns and key == "p99":
                    row[1].scatter([n + (i - (len(schemes) - 1) / 2) * 0.1 for n in inf_ns], [1e4] * len(inf_ns),
                                   marker="^", color=colors[scheme], label=f"{scheme} p99 ∞ (unfinished; drawn at 10⁴ µs)")
            if background_panel:
                row[2].plot(list(cell), [c["bg"][0] for c in cell.values()], marker="o", color=colors[scheme], label=scheme)
        kib = f"{value // 1024} KiB values"
        row[0].set_ylabel(f"memcached k transactions/s ({kib})")
        row[1].set_ylabel(f"two-way RPC latency (µs, {kib})")
        row[1].set_yscale("log")
        if background_panel:
            if paper_band:
                row[2].axhspan(paper_band[0], paper_band[1], color="tab:gray", alpha=0.2, label=paper_band[2])
            row[2].set_ylabel("background goodput into the client (Gbps)")
            row[2].set_ylim(0, 100)
        for ax in row:
            ax.set_xlabel("hosts sending background traffic")
            ax.set_xticks(ns)
            ax.legend(fontsize=6)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    ctx.save(fig, name)


@dataclass
class Report:
    """What both figures' reports start from: the aggregate, the schemes present, the
    background-host points, and the Markdown so far (setup and both value sizes' tables)."""

    agg: dict[Key, dict[str, Any]]
    schemes: list[str]
    seeds: int
    ns: list[int]
    md: list[str]

    @property
    def top(self) -> int:
        return self.ns[-1]

    def at(self, scheme: str, n: int) -> dict[str, Any] | None:
        """The 4 KiB cell (the values the paper's graphs show)."""
        return self.agg.get((scheme, VALUES[0], n))


def report_head(ctx: Context, df: pl.DataFrame, name: str, schemes: Sequence[str], colors: Mapping[str, str],
                title: str, paper: Mapping[tuple[str, int], str], intro: str = "",
                paper_band: tuple[float, float, str] | None = None) -> Report:
    """Plots the figure (`title` gets the seed count) and starts its report: `intro`, the
    setup, one results table per value size, and the heading of the comparison."""
    agg = aggregate(df)
    present = [s for s in schemes if any(k[0] == s for k in agg)]
    seeds = df["seed"].n_unique()
    plot(ctx, agg, present, colors, name, f"{title} ({seeds} seed(s))", background_panel=True, paper_band=paper_band)
    md = [intro + setup_text(), "", "4 KiB values (the paper's graphs):", "", results_table(agg, paper, 4096), "",
          "1 KiB values:", "", results_table(agg, {}, 1024), "", "**Beside the paper, and where we differ.**"]
    return Report(agg, present, seeds, sorted({n for _, _, n in agg}), md)


def value_summary(agg: Mapping[Key, Mapping[str, Any]], schemes: Sequence[str], value: int) -> str:
    """One line comparing the schemes at the most background hosts for `value`-byte values."""
    top = max((n for _, v, n in agg if v == value), default=None)
    if top is None:
        return ""
    cells = [(s, agg[(s, value, top)]) for s in schemes if (s, value, top) in agg]
    desc = "; ".join(f"`{s}` {c['tps'][0]:.0f} k/s, p99 {_fmt_lat(c['p99'])} µs, {c['drops']} drops" for s, c in cells)
    return f"- {value // 1024} KiB values (the paper: \"the same trend\") at {top} background hosts: {desc}."


def setup_text() -> str:
    return (f"memcached: client h{CLIENT}, server h{SERVER}, {CONCURRENCY} outstanding GETs (88 B requests; 4124 B "
            "responses for 4 KiB values, 1052 B for 1 KiB), TCP retransmission timeout pl2's RFC 6298 defaults (1 ms "
            "minimum and initial, doubling; the paper's user-space stack's is not given), service time 1.5 µs + exponential(0.5 µs) (examples/memcached-rpc.toml; the paper "
            "gives none, and it was not fitted to any point). Background: n hosts × 4 threads, each always holding a 64 KiB "
            "message for the client; the first background host is the memcached server h1 (as in the paper), then h2–h4. "
            "Latency is two-way (request send call to response delivery); RPCs unfinished at the end count as infinitely "
            "slow (∞), and with no RPC started in the window (every connection stalled on a lost message) both percentiles "
            "are ∞. Transactions/s count responses delivered in the window; background Gbps is payload into the client "
            "minus the responses'. Drops are frames lost at the switch.")
