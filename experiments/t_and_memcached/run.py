"""Issue 24, item 5: why pl2's t sweep does not show the paper's "loss only at t = 35"
(§4.4), and why memcached without background loses 30 % of its transactions under TCP over
PL2 against Cubic where the paper reports 8 % (§6.2.1).

    PYTHONPATH=python python3 experiments/t_and_memcached/run.py

Part 1, the t sweep: the 4-sender incast of 6000 B (K = 4, T = 128, 11.2 ms, seeds 1-2)
with 1, 2, 3, 4, 6 and 12 threads per sender, t in {5, 10, 15, 25, 35}, as written, with
the drift fix (`suppress_excess_decrements`), with the host CPU model (438 ns per packet
per thread) and with both. Reports buffer drops, the share of bursts sent unsolicited,
counter-drift packets and the goodput into h5.

Part 2, memcached without background (Figs. 3-4's setting, 4 KiB values, 8 outstanding
GETs, quick windows, seeds 1-3): transactions/s under Cubic and TCP over PL2 and the ratio,
(i) as in the reproduction, (ii) with longer server service times (a stand-in for the
paper's user-space stack, whose per-RPC time the paper does not give), (iii) with PL2's
recency window for unsolicited bursts widened (`recency_estimates`), (iv) with the host
CPU model.
"""

from __future__ import annotations

import os
import sys
from concurrent.futures import ProcessPoolExecutor
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))

import pl2  # noqa: E402
from pl2.reproduce import memcached as mc  # noqa: E402
from pl2.reproduce.common import buffer_drops, scenario  # noqa: E402

CPU = {"network.host.cpu": "thread", "network.host.send_cpu_per_packet": "438ns"}
VARIANTS = {"as written": ({}, {}), "drift fix": ({"suppress_excess_decrements": True}, {}), "slower hosts": ({}, CPU),
            "slower hosts + drift fix": ({"suppress_excess_decrements": True}, CPU)}


def t_run(job: tuple[str, int, int, int]) -> dict[str, Any]:
    var, threads, t, seed = job
    extra, host = VARIANTS[var]
    sc = scenario("t", {"kind": "pl2", "k": 4, "t": t, **extra},
                  [{"kind": "persistent", "senders": "0..4", "receiver": 5, "size": "6000B", "threads": threads}],
                  warmup_ms=1.0, until_ms=11.0, duration_ms=11.2, drop_records=False).with_overrides({"seed": seed, **host})
    s = pl2.run(sc, progress=False).summary
    st = s["pl2"]
    return {"variant": var, "threads": threads, "t": t, "seed": seed, "drops": buffer_drops(s),
            "goodput": float(s["goodput_gbps"]["h5"]), "drift": int(st["switch"]["counter_drift_packets"]),
            "unsolicited": st.get("unsolicited_bursts", 0) / max(1, st.get("bursts", 1))}


def mc_run(job: tuple[str, str, int]) -> dict[str, Any]:
    scheme, var, seed = job
    tr = {"kind": "tcp", "cc": "cubic"} if scheme == "cubic" else {"kind": "tcp", "scheduler": "pl2", "pl2": dict(mc.PL2)}
    wls = mc.workloads(0, 4096)
    over: dict[str, Any] = {"seed": seed}
    if var.startswith("service"):
        extra_us = float(var.split()[1])
        wls[0]["service"] = {"kind": "exponential", "min": f"{1.5 + extra_us}us", "mean_extra": "500ns"}
    elif var.startswith("recency") and scheme != "cubic":
        tr["pl2"]["recency_estimates"] = int(var.split()[1])
    elif var == "slower hosts":
        over |= CPU
    sc = scenario("m", tr, wls, warmup_ms=0.5, until_ms=2.5, duration_ms=3.5).with_overrides(over)
    s = pl2.run(sc, progress=False).summary
    r = s.get("rpcs") or {}
    st = s.get("pl2") or {}
    return {"scheme": scheme, "variant": var, "seed": seed, "ktps": float(r.get("tps", 0.0)) / 1e3,
            "p50_us": (r.get("latency_ps") or {}).get("p50", 0) / 1e6,
            "unsolicited": (st.get("unsolicited_bursts", 0) / max(1, st.get("bursts", 1))) if st else None}


def main() -> int:
    import polars as pl
    tjobs = [(v, th, t, s) for v in VARIANTS for th in (1, 2, 3, 4, 6, 12) for t in (5, 10, 15, 25, 35) for s in (1, 2)]
    mvars = ["as in the reproduction", "service +5", "service +10", "service +20", "recency 8", "recency 32", "slower hosts"]
    mjobs = [(sch, v, s) for sch in ("cubic", "tcp/pl2") for v in mvars for s in (1, 2, 3)]
    with ProcessPoolExecutor(2) as ex:
        tdf = pl.DataFrame(list(ex.map(t_run, tjobs)))
        mdf = pl.DataFrame(list(ex.map(mc_run, mjobs)), infer_schema_length=None)
    tdf.write_parquet(os.path.join(HERE, "t_sweep.parquet"))
    mdf.write_parquet(os.path.join(HERE, "memcached.parquet"))
    ta = tdf.group_by(["variant", "threads", "t"], maintain_order=True).agg(
        pl.col("drops").sum(), pl.col("goodput").mean(), pl.col("unsolicited").mean(), pl.col("drift").sum())
    print("t sweep: buffer drops (seeds 1-2) by threads per sender (rows) and t (columns); drift packets")
    for var in VARIANTS:
        print(f"\n{var}\n\n| threads | t = 5 | 10 | 15 | 25 | 35 |\n|---|---|---|---|---|---|")
        for th in (1, 2, 3, 4, 6, 12):
            g = ta.filter((pl.col("variant") == var) & (pl.col("threads") == th)).sort("t")
            print(f"| {th} | " + " | ".join(f"{d} ({u:.0%} uns., drift {dr}, {gp:.1f} Gbps)" for d, u, dr, gp in
                                            zip(g["drops"], g["unsolicited"], g["drift"], g["goodput"])) + " |")
    ma = mdf.group_by(["variant", "scheme"], maintain_order=True).agg(pl.col("ktps").mean(), pl.col("p50_us").mean(),
                                                                        pl.col("unsolicited").mean())
    print("\nmemcached, no background: | variant | Cubic k tps | TCP/PL2 k tps | TCP/PL2 vs Cubic | p50 µs Cubic / PL2 | PL2 unsolicited share |")
    for v in mvars:
        c = ma.filter((pl.col("variant") == v) & (pl.col("scheme") == "cubic")).row(0, named=True)
        p = ma.filter((pl.col("variant") == v) & (pl.col("scheme") == "tcp/pl2")).row(0, named=True)
        print(f"| {v} | {c['ktps']:.0f} | {p['ktps']:.0f} | {p['ktps'] / c['ktps'] - 1:+.0%} | {c['p50_us']:.1f} / {p['p50_us']:.1f} | {p['unsolicited']:.0%} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
