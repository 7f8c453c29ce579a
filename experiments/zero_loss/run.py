"""Issue 24, item 2: the hypotheses for the PL2 paper's zero loss, each a configuration
measured on the cells where Algorithm 1 as written loses frames in pl2.

    PYTHONPATH=python python3 experiments/zero_loss/run.py [--quick] [--workers N]

Writes experiments/zero_loss/results.parquet (one row per run) and prints the tables
results.md quotes. `--quick` runs one seed and skips Fig. 7 (CI-sized); the committed
numbers are from the default (seeds 1-3, Fig. 7 with seed 1).

Hypotheses (each alone, on top of the cell's own settings; none is on by default in pl2):

- `as written`: Algorithm 1 and 2 as the paper writes them (pl2's defaults).
- `(a) slower hosts`: the host CPU model of experiments/host_cpu, frozen at its one
  calibration: `network.host.cpu = "thread"`, `send_cpu_per_packet = 438ns`.
- `(b) unsolicited bypass`: unsolicited packets that pass the T rule do not decrement
  the counters (`unsolicited_bypass = true`).
- `(c) no double decrement`: a burst's packets beyond its reservation (the resent copy
  of an unsolicited burst whose original passed) do not decrement
  (`suppress_excess_decrements = true`), the drift fix a Tofino could run.
- `(c') improved`: the protocol crate's improved variant (`improved = true`): the same
  suppression plus admission of the unsolicited copy decided at the RSV and carried in
  the GRT (the sender resends iff not admitted).
- `(d) lighter load`: closed-loop cells with a quarter of the sending threads (12 -> 3,
  memcached's background 4 -> 1), the t sweep (already one thread per sender) with 2
  senders instead of 4, Fig. 8 at half its offered load. Fig. 7 has no lighter variant
  (its load is the model's gradient).
- `(a)+(c)`: slower hosts and the drift fix together.
- `ref: no unsolicited`: the low-load optimisation off (`low_load = false`), the
  reference that isolates the unsolicited bursts.

Cells (testbed profile, K = 4, t = 15 unless named):

- `fig9 2x12`: Fig. 9's incast, 2 senders x 12 threads of 6000 B into h5, 11.2 ms (full).
- `K=1`, `K=2`: the K sweep's 4 x 12 incast of 6000 B, 11.2 ms (full).
- `t=5` ... `t=35 1thr`: the t sweep's 4 x 1 incast of 6000 B, 11.2 ms (full).
- `fig3_4 4bg`: TCP over PL2 memcached (4 KiB values) with 4 TCP-over-PL2 background
  hosts, the reproduction's quick windows (0.5 ms warm-up, 2 ms measured, 1 ms drain).
- `fig5_6 4bg`: TCP over PL2 memcached with 4 UDP-over-PL2 background hosts, same windows.
- `fig8 W4 50%`: raw PL2, W4 at 50 % into h3 from 3 senders x 11 threads, the
  reproduction's quick window (10 ms of arrivals + 5 ms drain), and `fig8 W3 90% tcp`:
  TCP over PL2 on W3 at 90 % (the TCP claim's point), same window.
- `fig7 1 it`: one iteration of the VGG16 shuffle (4 workers -> 2 servers, 2.2 GB).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import polars as pl

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))

import pl2  # noqa: E402
from pl2.reproduce import memcached as mc  # noqa: E402
from pl2.reproduce.common import buffer_drops, max_queue, program_drops, scenario  # noqa: E402

PL2 = {"k": 4, "t": 15}
CPU = {"network.host.cpu": "thread", "network.host.send_cpu_per_packet": "438ns"}
HYPOTHESES: dict[str, dict[str, Any]] = {
    "as written": {},
    "(a) slower hosts": {"host": CPU},
    "(b) unsolicited bypass": {"pl2": {"unsolicited_bypass": True}},
    "(c) no double decrement": {"pl2": {"suppress_excess_decrements": True}},
    "(c') improved": {"pl2": {"improved": True}},
    "(d) lighter load": {"light": True},
    "(a)+(c)": {"host": CPU, "pl2": {"suppress_excess_decrements": True}},
    "ref: no unsolicited": {"pl2": {"low_load": False}},
}
FULL = dict(warmup_ms=1.0, until_ms=11.0, duration_ms=11.2)


def _pl2(tcfg: dict, extra: dict) -> dict:
    """`tcfg` with `extra` merged into its PL2 settings (raw PL2 or TCP over PL2)."""
    t = dict(tcfg)
    if t.get("kind") == "pl2":
        t.update(extra)
    elif t.get("scheduler") == "pl2":
        t["pl2"] = {**t.get("pl2", {}), **extra}
    return t


def build(cell: str, hyp: str) -> pl2.Scenario:
    h = HYPOTHESES[hyp]
    extra, light = h.get("pl2", {}), h.get("light", False)
    if cell in ("fig9 2x12", "K=1", "K=2") or cell.endswith("1thr"):
        k = int(cell[2]) if cell.startswith("K=") else 4
        t = int(cell.split()[0][2:]) if cell.startswith("t=") else 15
        senders, threads = (2, 12) if cell.startswith("fig9") else (4, 12) if cell.startswith("K=") else (4, 1)
        if light:
            senders, threads = (senders // 2, 1) if threads == 1 else (senders, threads // 4)
        wl = {"kind": "persistent", "senders": f"0..{senders}", "receiver": 5, "size": "6000B", "threads": threads}
        sc = scenario(f"zl-{cell}-{hyp}", _pl2({"kind": "pl2", "k": k, "t": t}, extra), [wl], drop_records=False, **FULL)
    elif cell.startswith("fig3_4") or cell.startswith("fig5_6"):
        warm, win, drain = 0.5, 2.0, 1.0
        tcp = _pl2({"kind": "tcp", "scheduler": "pl2", "pl2": PL2}, extra)
        bg = None if cell.startswith("fig3_4") else _pl2({"kind": "pl2", "headers": "udp", **PL2}, extra)
        wls = mc.workloads(4, 4096, "bg" if bg else None)
        if light:
            wls[1]["threads"] = 1
        sc = scenario(f"zl-{cell}-{hyp}", tcp, wls, transports={"bg": bg} if bg else None,
                      warmup_ms=warm, until_ms=warm + win, duration_ms=warm + win + drain)
    elif cell.startswith("fig8"):
        tcfg = {"kind": "tcp", "scheduler": "pl2", "pl2": PL2} if cell.endswith("tcp") else {"kind": "pl2", **PL2}
        load = int(cell.split()[2].rstrip("%")) / 100 / (2 if light else 1)
        wl = {"kind": "poisson", "hosts": [0, 1, 2], "dests": [3], "load": load / 3, "sizes": cell.split()[1].lower()}
        sc = scenario(f"zl-{cell}-{hyp}", _pl2(tcfg, extra), [wl], warmup_ms=1.0, until_ms=11.0, duration_ms=16.0,
                      drop_records=False, stop_when_delivered=False).with_overrides({"network.host.threads": 11})
    elif cell.startswith("fig7"):
        from pl2.reproduce.fig7 import BOUND_MS
        dur = 2.5 * BOUND_MS + 50.0
        wl = {"kind": "ps_shuffle", "workers": "0..4", "servers": "4..6", "iterations": 1}
        sc = scenario(f"zl-{cell}-{hyp}", _pl2({"kind": "pl2", **PL2}, extra), [wl], warmup_ms=0, until_ms=dur,
                      duration_ms=dur, window="1ms", drop_records=False)
    else:
        raise ValueError(cell)
    return sc.with_overrides(h["host"]) if "host" in h else sc


RECEIVER = {"fig3_4": 0, "fig5_6": 0, "fig8": 3, "fig7": 4}


def measure(job: tuple[str, str, int]) -> dict[str, Any]:
    cell, hyp, seed = job
    t0 = time.perf_counter()
    res = pl2.run(build(cell, hyp).with_overrides({"seed": seed}), progress=False)
    s = res.summary
    recv = RECEIVER.get(cell.split()[0], 5)
    st = s.get("pl2") or {}
    sw = st.get("switch") or {}
    row: dict[str, Any] = {
        "cell": cell, "hypothesis": hyp, "seed": seed,
        "buffer_drops": buffer_drops(s), "program_drops": program_drops(s),
        "max_queue_kib": max_queue(s, f"s0->h{recv}") / 1024,
        "goodput_gbps": float((s.get("goodput_gbps") or {}).get(f"h{recv}", 0.0)),
        "drift_packets": int(sw.get("counter_drift_packets", 0)),
        "suppressed_decrements": int(sw.get("suppressed_decrements", 0)),
        "unsolicited_bursts": int(st.get("unsolicited_bursts", 0) or 0), "bursts": int(st.get("bursts", 0) or 0),
        "tcp_retransmissions": (s.get("tcp") or {}).get("retransmissions"),
        "wall_s": time.perf_counter() - t0,
    }
    if cell.startswith(("fig3_4", "fig5_6")):
        r = s.get("rpcs") or {}
        lat = r.get("latency_ps") or {}
        row |= {"p50_us": _us(lat.get("p50")) if r.get("count") else float("inf"),
                "p99_us": _us(lat.get("p99")) if r.get("count") else float("inf"),
                "ktps": float(r.get("tps", 0.0)) / 1e3}
    elif cell.startswith("fig7"):
        it = s.get("iterations") or {}
        row |= {"iterations_finished": int(it.get("finished") or 0),
                "iteration_ms": ((it.get("time_ps") or {}).get("mean_finished") or 0) / 1e9 or None}
    else:
        lat = (s.get("messages") or {}).get("latency_ps") or {}
        row |= {"p50_us": _us(lat.get("p50")), "p99_us": _us(lat.get("p99"))}
    return row


def _us(ps: float | None) -> float:
    return float("inf") if ps is None else ps / 1e6


def cells(quick: bool) -> list[str]:
    c = ["fig9 2x12", "K=1", "K=2"] + [f"t={t} 1thr" for t in (5, 10, 15, 25, 35)]
    c += ["fig3_4 4bg", "fig5_6 4bg", "fig8 W4 50%", "fig8 W3 90% tcp"]
    return c if quick else c + ["fig7 1 it"]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", default=os.path.join(HERE, "results.parquet"))
    a = ap.parse_args()
    seeds = [1] if a.quick else [1, 2, 3]
    jobs = [(c, h, s) for c in cells(a.quick) for h in HYPOTHESES for s in (seeds if not c.startswith("fig7") else [1])
            if not (c.startswith("fig7") and h == "(d) lighter load")]
    t0 = time.perf_counter()
    with ProcessPoolExecutor(a.workers) as ex:
        rows = list(ex.map(measure, jobs))
    df = pl.DataFrame(rows, infer_schema_length=None)
    df.write_parquet(a.out)
    print(f"{len(jobs)} runs, {time.perf_counter() - t0:.0f} s wall, {df['wall_s'].sum():.0f} s of runs")
    report(df)
    return 0


def report(df: pl.DataFrame) -> None:
    """Prints the drops table (cells x hypotheses) and the cost table."""
    hyps = list(HYPOTHESES)
    agg = df.group_by(["cell", "hypothesis"], maintain_order=True).agg(
        pl.col("buffer_drops").sum(), pl.col("program_drops").sum(), pl.col("max_queue_kib").max(),
        pl.col("goodput_gbps").mean(), pl.col("drift_packets").sum(),
        *[pl.col(c).mean() for c in ("p50_us", "p99_us", "ktps") if c in df.columns],
        *[pl.col(c).sum() for c in ("tcp_retransmissions",) if c in df.columns])
    print("\nbuffer drops (summed over seeds) / drift packets\n")
    print("| cell | " + " | ".join(hyps) + " |")
    print("|---" * (len(hyps) + 1) + "|")
    for cell in dict.fromkeys(agg["cell"].to_list()):
        cols = []
        for h in hyps:
            r = agg.filter((pl.col("cell") == cell) & (pl.col("hypothesis") == h))
            cols.append("–" if r.height == 0 else f"{r['buffer_drops'][0]} / {r['drift_packets'][0]}")
        print(f"| {cell} | " + " | ".join(cols) + " |")
    print("\ncosts: goodput Gbps, p50 / p99 µs (memcached: k transactions/s), max queue KiB\n")
    print("| cell | hypothesis | goodput Gbps | p50 µs | p99 µs | k tps | max queue KiB | TCP retx |")
    print("|---|---|---|---|---|---|---|---|")
    for r in agg.iter_rows(named=True):
        f = lambda x, d=1: "–" if x is None else ("∞" if x == float("inf") else f"{x:.{d}f}")  # noqa: E731
        print(f"| {r['cell']} | {r['hypothesis']} | {f(r['goodput_gbps'], 2)} | {f(r.get('p50_us'))} | {f(r.get('p99_us'))} | "
              f"{f(r.get('ktps'), 0)} | {f(r['max_queue_kib'])} | {'–' if r.get('tcp_retransmissions') is None else r['tcp_retransmissions']} |")


if __name__ == "__main__":
    sys.exit(main())
