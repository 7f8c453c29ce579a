#!/usr/bin/env python3
"""PL2 paper Fig. 1 (§2): 5-way incast at ~18 Gbps per sender, RDS vs PL2.

Usage (from the repository root):
    cargo build --release -p pl2-scenario --bin pl2-run
    python3 experiments/fig1/run.py [--seeds N] [--jobs J] [--bin PATH]

Writes experiments/fig1/scenarios/*.toml (the seed-1 scenarios, for reading),
experiments/fig1/out/<config>/s<seed>/ (scenario, arrivals, Parquet, summary),
experiments/fig1/results.md and experiments/fig1/*.png.

Experiment A (what the issue asks for): smooth open-loop Poisson arrivals, each of
hosts 0-4 offers 18% of its 100G link (wire bytes) to host 5: 90 Gbps of wire load
into one 100G port. Sizes: fixed 6 KiB, W3 truncated at 61 KiB, and two sensitivity
sizes (6000 B = exactly 4 MTU payloads, one K = 4 PL2 burst; 61 KiB = the largest
message that fits in one RTT).

Experiment B (labelled separately; a burstier arrival process, not from the paper):
batch Poisson.  Each sender's application releases a batch of 12 messages at once
(one per thread of the testbed's 12-thread pool, e.g. a compute step finishing and
shipping its results); batch instants are Poisson, independent per sender, with the
batch rate set so the mean is the same 18 Gbps of wire bytes per sender.  Message
sizes 61 KiB (largest one-RTT message) or 6 KiB.  Nothing here is tuned to the
paper's numbers: the batch size is the thread count of the profile and the sizes are
the two named above.
"""
import argparse
import json
import math
import os
import random
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
MTU = 1500
WIRE_OVERHEAD = 42  # Ethernet header 14 + 802.1Q 4 + FCS 4 + preamble 8 + IFG 12
LINK_BPS = 100e9
PORT_LIMIT = 1_500_000
LOAD = 0.18  # of a 100G link, in wire bytes: 18 Gbps per sender

NETWORK = """
[network]
mtu = "1500B"
topology = { kind = "single_rack", hosts = 6 }
link = { rate = "100Gbps", delay = "100ns" }

[network.host]
threads = 12
send_latency = "224ns"
recv_latency = { kind = "quantiles", points = [[0.0, "223280ps"], [0.5, "282280ps"], [0.9, "303280ps"], [0.99, "423280ps"], [0.999, "1223280ps"], [0.9999, "12223280ps"], [1.0, "13223280ps"]] }

[network.switch]
latency = { kind = "quantiles", points = [[0.0, "346ns"], [0.5, "347ns"], [0.9, "349ns"], [0.99, "352ns"], [0.999, "356ns"], [0.9999, "508ns"], [1.0, "508ns"]] }
cut_through = true
buffer = "9MB"
dynamic_thresholds = false
port_limit = "1500000B"
"""

TRANSPORT = {
    "rds": """
[transport]
kind = "rds"
rtt_bytes = "61KiB"
grant_packets = 4
receiver_timeout = "1ms"
sender_timeout = "1ms"
""",
    "pl2": """
[transport]
kind = "pl2"
k = 4
t = 15
""",
    # diagnostic only (experiment B): PL2 without the low-load optimisation (§4.4), i.e.
    # no unsolicited bursts, hence no resent-unsolicited duplicates.
    "pl2-nolowload": """
[transport]
kind = "pl2"
k = 4
t = 15
low_load = false
""",
}
TRANSPORTS = {"A": ("rds", "pl2"), "B": ("rds", "pl2", "pl2-nolowload")}


def wire_bytes(size):
    frames = math.ceil(size / MTU)
    last = size - (frames - 1) * MTU
    return (frames - 1) * (MTU + WIRE_OVERHEAD) + max(last, 42) + WIRE_OVERHEAD


# config name -> (experiment, description, workload builder)
# Experiment A: warm-up 1 ms, arrivals measured until 12 ms (11 ms window), arrivals
# stop there and the run continues 3 ms so measured messages can finish.
# Experiment B: warm-up 1 ms, window 60 ms (batches are rarer: enough messages for p99.9).
CONFIGS = {
    "A-6KiB": ("A", "smooth Poisson, fixed 6 KiB (6144 B: 4 full frames + 144 B)", ("poisson", '"6KiB"', None)),
    "A-W3": ("A", "smooth Poisson, W3 truncated at 61 KiB", ("poisson", '"w3"', '"61KiB"')),
    "A-6000B": ("A", "smooth Poisson, fixed 6000 B (exactly 4 MTU payloads) [sensitivity]", ("poisson", '"6000B"', None)),
    "A-61KiB": ("A", "smooth Poisson, fixed 61 KiB (largest one-RTT message) [sensitivity]", ("poisson", '"61KiB"', None)),
    "B-61KiBx12": ("B", "batch Poisson: 12 x 61 KiB released at once per batch", ("batch", 62464, 12)),
    "B-6KiBx12": ("B", "batch Poisson: 12 x 6 KiB released at once per batch", ("batch", 6144, 12)),
    "B-6000Bx12": ("B", "batch Poisson: 12 x 6000 B released at once per batch [sensitivity]", ("batch", 6000, 12)),
}
TIMES = {"A": (1.0, 12.0, 15.0), "B": (1.0, 61.0, 64.0)}  # warmup, measure_until, duration (ms)


def batch_csv(path, size, batch, seed, until_ms):
    """Batch Poisson arrivals: per sender, Poisson batch instants, `batch` messages each."""
    mean_gap_ps = batch * wire_bytes(size) * 8 / (LOAD * LINK_BPS) * 1e12
    rows = []
    for src in range(5):
        rng = random.Random(f"fig1-batch-{seed}-{src}")
        t = rng.expovariate(1.0 / mean_gap_ps)
        while t < until_ms * 1e9:
            for th in range(batch):
                rows.append((int(t), src, th))
            t += rng.expovariate(1.0 / mean_gap_ps)
    rows.sort(key=lambda r: (r[0], r[1], r[2]))
    with open(path, "w") as f:
        f.write(f"# batch Poisson: {batch} x {size} B per batch, mean {LOAD*LINK_BPS/1e9:.0f} Gbps wire per sender, seed {seed}\n")
        f.write("time,src,dst,size,thread,priority\n")
        for t, src, th in rows:
            f.write(f"{t},{src},5,{size},{th},0\n")
    return len(rows)


def scenario_text(config, transport, seed, csv_name):
    exp, desc, wl = CONFIGS[config]
    warm, until, dur = TIMES[exp]
    s = f"""# PL2 paper Fig. 1, experiment {exp}: {desc}.
# 5-way incast: hosts 0-4 -> host 5, {LOAD*100:.0f} Gbps of wire bytes per sender on average,
# the PL2 testbed profile (examples/pl2-incast-testbed.toml [network]). Generated by run.py.
name = "fig1-{config}-{transport}"
seed = {seed}

[run]
duration = "{dur}ms"
warmup = "{warm}ms"
measure_until = "{until}ms"
stop_when_delivered = true

[metrics]
window = "10us"
{NETWORK}{TRANSPORT[transport]}
"""
    if wl[0] == "poisson":
        s += f"""[[workload]]
kind = "poisson"
hosts = "0..5"
dests = [5]
load = {LOAD}
sizes = {wl[1]}
"""
        if wl[2]:
            s += f"truncate = {wl[2]}\n"
        s += f'stop = "{until}ms"\n'
    else:
        s += f"""# Batch-Poisson arrivals, written by run.py (batch_csv) beside each per-seed copy
# of this file under out/<config>/<transport>/s<seed>/.
[[workload]]
kind = "list"
file = "{csv_name}"
"""
    return s


def run_one(binary, config, transport, seed):
    d = HERE / "out" / config / transport / f"s{seed}"
    d.mkdir(parents=True, exist_ok=True)
    exp, _, wl = CONFIGS[config]
    csv_name = "arrivals.csv"
    if wl[0] == "batch":
        batch_csv(d / csv_name, wl[1], wl[2], seed, TIMES[exp][1])
    (d / "scenario.toml").write_text(scenario_text(config, transport, seed, csv_name))
    t0 = time.time()
    p = subprocess.run([binary, str(d / "scenario.toml"), str(d / "res")], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{config}/{transport}/s{seed}: {p.stderr[-2000:]}")
    return config, transport, seed, time.time() - t0


def pct(sorted_vals, q, n_total):
    """Quantile over all measured messages; unfinished ones count as +inf."""
    k = math.ceil(q * n_total) - 1
    return sorted_vals[k] if k < len(sorted_vals) else math.inf


def analyse(seeds):
    import polars as pl

    res = {}
    for config in CONFIGS:
        for tr in TRANSPORTS[CONFIGS[config][0]]:
            lat, per_seed, q_max, drops, data_frames, unfinished, prog_drops = [], [], 0, 0, 0, 0, 0
            queue_series, drop_series = None, None
            summaries = []
            for s in seeds:
                r = HERE / "out" / config / tr / f"s{s}" / "res"
                if not (r / "messages.parquet").exists():
                    continue
                summ = json.loads((r / "summary.json").read_text())
                summaries.append(summ)
                m = pl.read_parquet(r / "messages.parquet").filter(pl.col("in_window"))
                fin = m.filter(pl.col("latency_ps").is_not_null())["latency_ps"].sort().to_list()
                unfinished += m.height - len(fin)
                lat_s = [x / 1e6 for x in fin]
                per_seed.append(pct(lat_s, 0.999, m.height) if m.height >= 10_000 else None)
                lat += lat_s
                # every data frame handed to the wire by a sender: first copies + retransmissions
                allm = pl.read_parquet(r / "messages.parquet")
                frames = int(((allm["size_bytes"] + MTU - 1) // MTU).sum())
                rds = summ.get("rds") or {}
                pl2c = summ.get("pl2") or {}
                frames += rds.get("retransmissions", 0)
                data_frames += frames
                dr = pl.read_parquet(r / "drops.parquet")
                drops += dr.filter(pl.col("data") & pl.col("reason").is_in(["port_limit", "buffer_full"])).height
                prog_drops += dr.filter(pl.col("data") & (pl.col("reason") == "program")).height
                ports = pl.read_parquet(r / "ports.parquet").filter((pl.col("node") == "s0") & (pl.col("peer") == "h5"))
                q_max = max(q_max, int(ports["max_queue_bytes"].max() or 0))
                if s == seeds[0]:
                    queue_series = ports.select(pl.col("window_start_ps") / 1e9, pl.col("max_queue_bytes") * 8 / LINK_BPS * 1e6)
                    drop_series = dr.filter(pl.col("data") & pl.col("reason").is_in(["port_limit", "buffer_full"])).select(pl.col("time_ps") / 1e9)
            if not summaries:
                continue
            lat.sort()
            n = len(lat) + unfinished
            res[(config, tr)] = dict(
                n=n,
                unfinished=unfinished,
                p50=pct(lat, 0.5, n),
                p99=pct(lat, 0.99, n),
                p999=pct(lat, 0.999, n),
                p999_seeds=per_seed,
                drop_share=drops / max(data_frames, 1),
                drops=drops,
                prog_drops=prog_drops,
                qmax=q_max,
                goodput=sum(s_["goodput_gbps"].get("h5", 0) for s_ in summaries) / len(summaries),
                counters=summaries[0].get("rds") or summaries[0].get("pl2"),
                lat=lat,
                queue=queue_series,
                dropt=drop_series,
            )
    return res


def fmt_us(x):
    if x is None:
        return "n/a"
    if math.isinf(x):
        return "∞ (unfinished)"
    return f"{x:.1f}" if x < 100 else f"{x:.0f}"


def plot(res, seeds):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    colors = {"rds": "tab:red", "pl2": "tab:blue", "pl2-nolowload": "tab:green"}
    for config, (exp, desc, _) in CONFIGS.items():
        if (config, "rds") not in res:
            continue
        fig, ax = plt.subplots(1, 3, figsize=(16, 4.2))
        for tr in TRANSPORTS[exp]:
            r = res.get((config, tr))
            if not r:
                continue
            lat = r["lat"]
            n = r["n"]
            ys = [(i + 1) / n for i in range(len(lat))]
            ax[0].plot(lat, ys, color=colors[tr], label=f"{tr.upper()} (n={n}, {len(seeds)} seeds)")
            q = r["queue"]
            ax[1].plot(q[:, 0].to_list(), q[:, 1].to_list(), color=colors[tr], lw=0.6, label=tr.upper())
            dt = r["dropt"][:, 0].to_list() if r["dropt"].height else []
            # drops per 100 us bin
            if dt:
                import numpy as np

                bins = np.arange(0, max(dt) + 0.1, 0.1)
                h, e = np.histogram(dt, bins=bins)
                ax[2].step(e[:-1], h, where="post", color=colors[tr], label=f"{tr.upper()} ({len(dt)} drops, seed {seeds[0]})")
            else:
                ax[2].plot([], [], color=colors[tr], label=f"{tr.upper()}: no drops (seed {seeds[0]})")
        ax[0].set_xscale("log")
        ax[0].set_xlabel("message latency (µs)")
        ax[0].set_ylabel("CDF")
        ax[0].set_ylim(0.9 if False else 0, 1.0)
        ax[0].grid(True, which="both", alpha=0.3)
        ax[0].legend(fontsize=8)
        ax[0].set_title("(a) message latency CDF")
        ax[1].axhline(PORT_LIMIT * 8 / LINK_BPS * 1e6, color="k", ls="--", lw=0.8, label="port limit (1.5 MB = 120 µs)")
        ax[1].set_xlabel("time (ms)")
        ax[1].set_ylabel("queueing delay at s0→h5 (µs)\n(max queue per 10 µs / 100 Gbps)")
        ax[1].legend(fontsize=8, loc="upper right", framealpha=0.9)
        ax[1].set_title(f"(b) switch queueing delay (seed {seeds[0]})")
        ax[2].set_xlabel("time (ms)")
        ax[2].set_ylabel("data frames dropped per 100 µs")
        ax[2].legend(fontsize=8)
        ax[2].set_title("(c) drops over time")
        fig.suptitle(f"Fig. 1, experiment {exp} [{config}]: {desc}; 5 senders x 18 Gbps -> 1 receiver", fontsize=10)
        fig.tight_layout()
        fig.savefig(HERE / f"fig1_{config}.png", dpi=110)
        plt.close(fig)
        # a zoomed tail CDF (1 - CDF, log-log)
    fig, ax = plt.subplots(1, 1, figsize=(7, 4.5))
    for config in CONFIGS:
        for tr, ls in (("rds", "-"), ("pl2", "--")):
            r = res.get((config, tr))
            if not r or config not in ("A-6KiB", "A-W3", "A-6000B", "B-6KiBx12", "B-6000Bx12"):
                continue
            lat = r["lat"]
            n = r["n"]
            ax.plot(lat, [1 - (i + 1) / n + 1e-9 for i in range(len(lat))], ls=ls, label=f"{tr.upper()} {config}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylim(1e-5, 1)
    ax.set_xlabel("message latency (µs)")
    ax.set_ylabel("1 - CDF")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    ax.set_title("Latency tails, all seeds pooled")
    fig.tight_layout()
    fig.savefig(HERE / "fig1_tails.png", dpi=110)
    plt.close(fig)


def report(res, seeds, wall, sha):
    L = []
    L.append("# PL2 paper Fig. 1 reproduction: 5-way incast, ~18 Gbps per sender, RDS vs PL2\n")
    L.append(f"Generated by `python3 experiments/fig1/run.py` at code version `{sha}`; "
             f"{len(seeds)} seeds ({', '.join(map(str, seeds))}), wall time of the runs {wall:.0f} s on 2 parallel jobs. "
             "Testbed profile from `examples/pl2-incast-testbed.toml` (6 hosts, 100G, 1.5 MB static port "
             "limit = 120 µs at 100 Gbps, 12 threads per host). RDS: RTTbytes 61 KiB, 4-packet grants, "
             "1 ms receiver and sender timeouts. PL2: K = 4, t = 15 (prototype defaults).\n")
    L.append("Latency quantiles are over all measured messages of all seeds pooled (unfinished messages count "
             "as infinite); p99.9 per seed is given only where a seed has ≥ 10⁴ messages. Drop share = data frames "
             "dropped for lack of buffer (port limit) / data frames sent (first copies + retransmissions); PL2's "
             "deliberate drops of unsolicited packets by the switch's T rule (§4.4, resent by the sender) are counted "
             "separately. Max queue = largest queue at the "
             "switch port to the receiver (s0→h5) in any seed; µs = bytes / 100 Gbps.\n")
    L.append("| experiment / config | transport | messages | p50 µs | p99 µs | p99.9 µs | p99.9 per seed µs | drop share | max queue KB (µs) | goodput Gbps |")
    L.append("|---|---|---|---|---|---|---|---|---|---|")
    for config, (exp, desc, _) in CONFIGS.items():
        for tr in TRANSPORTS[exp]:
            r = res.get((config, tr))
            if not r:
                continue
            ps = [fmt_us(x) for x in r["p999_seeds"] if x is not None]
            L.append(f"| {config}: {desc} | {tr.upper()} | {r['n']}" + (f" ({r['unfinished']} unfinished)" if r['unfinished'] else "") +
                     f" | {fmt_us(r['p50'])} | {fmt_us(r['p99'])} | {fmt_us(r['p999'])} | {' / '.join(ps) or 'n/a'} | "
                     f"{r['drop_share']*100:.3f}% ({r['drops']})" + (f" + {r['prog_drops']} PL2 T-rule" if r['prog_drops'] else "") + f" | {r['qmax']/1e3:.0f} ({r['qmax']*8/LINK_BPS*1e6:.1f}) | {r['goodput']:.1f} |")
    L.append("")
    L.append("Paper (prose of §2): RDS p99 ≈ 120 µs (the switch's buffering), p99.9 two orders of magnitude higher, "
             "~0.1% of packets dropped; PL2 p99 ≈ p99.9 ≈ median, no drops, queue < 200 KiB.\n")
    L.append("Counters of seed 1 (RDS / PL2 transport objects from summary.json):\n")
    for config in CONFIGS:
        for tr in TRANSPORTS[CONFIGS[config][0]]:
            r = res.get((config, tr))
            if r:
                c = {k: v for k, v in (r["counters"] or {}).items() if not isinstance(v, dict) and v}
                sw = (r["counters"] or {}).get("switch") or {}
                c.update({f"switch.{k}": v for k, v in sw.items() if v and k in ("counter_drift_packets", "decrement_saturations", "unsolicited_passed", "unsolicited_dropped")})
                L.append(f"- {config} {tr.upper()}: `{json.dumps(c)}`")
    L.append("")
    L.append("Plots: `fig1_<config>.png` (a) latency CDF, (b) queueing delay at the receiver port over time, "
             "(c) drops over time; `fig1_tails.png` (1 − CDF, log-log).\n")
    disc = HERE / "discussion.md"
    if disc.exists():
        L.append(disc.read_text())
    return "\n".join(L)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--bin", default=os.environ.get("PL2_RUN", str(ROOT / "target" / "release" / "pl2-run")))
    ap.add_argument("--only", default=None, help="comma-separated configs")
    ap.add_argument("--no-run", action="store_true")
    a = ap.parse_args()
    seeds = list(range(1, a.seeds + 1))
    configs = a.only.split(",") if a.only else list(CONFIGS)
    (HERE / "scenarios").mkdir(exist_ok=True)
    for c in configs:
        for tr in TRANSPORTS[CONFIGS[c][0]]:
            (HERE / "scenarios" / f"{c}-{tr}.toml").write_text(
                scenario_text(c, tr, 1, "arrivals.csv"))
    t0 = time.time()
    if not a.no_run:
        jobs = [(c, tr, s) for c in configs for tr in TRANSPORTS[CONFIGS[c][0]] for s in seeds]
        with ThreadPoolExecutor(a.jobs) as ex:
            for c, tr, s, w in ex.map(lambda j: run_one(a.bin, *j), jobs):
                print(f"{c:12s} {tr} seed {s}: {w:.1f} s", flush=True)
    wall_file = HERE / "out" / "wall_s.txt"
    if not a.no_run:
        wall_file.write_text(f"{time.time() - t0:.1f}\n")
    wall = float(wall_file.read_text()) if wall_file.exists() else float("nan")
    # the version of the simulator that produced the data (from its summary), not HEAD
    b = json.loads((HERE / "out" / configs[0] / "rds" / "s1" / "res" / "summary.json").read_text())["build"]
    sha = b["git_sha"][:12] + (" (dirty)" if b.get("git_dirty") == "true" else "")
    res = analyse(seeds)
    plot(res, seeds)
    (HERE / "results.md").write_text(report(res, seeds, wall, sha))
    print((HERE / "results.md").read_text())


if __name__ == "__main__":
    main()
