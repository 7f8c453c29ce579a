#!/usr/bin/env python3
"""Figures for PL2's issue note (issue 4): runs scenarios with the Rust runner and writes
experiments/pl2/results.md.

Reproduce (from the repository root, < 2 min on 2 cores):
    cargo build --release -p pl2-scenario --bin pl2-run
    python3 experiments/pl2/run_figures.py

Every scenario is examples/pl2-incast-testbed.toml's testbed profile (6 hosts at 100G,
MTU 1500, the measured switch latency, 1.5 MB per port, host delays calibrated to the idle
RSV-GRT exchange) with K = 4, t = 15 unless a sweep changes them. Runs last 10 ms; goodput
is measured from 1 ms to 9.8 ms (closed-loop messages in flight at the end never finish).
Nothing is tuned: every parameter not named in a table is the default of Pl2Config.
"""

import json
import os
import subprocess
import sys
import tempfile
import time

import polars as pl

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
RUN = os.path.join(ROOT, "target", "release", "pl2-run")
OUT_MD = os.path.join(ROOT, "experiments", "pl2", "results.md")
WORK = tempfile.mkdtemp(prefix="pl2-figures-")

CTL_WIRE = 84  # a 64 B RSV/GRT frame + preamble/SFD + IFG
FRAME_WIRE = 1542  # a full frame on the wire

HEADER = """
name = "{name}"
seed = {seed}

[run]
duration = "{duration}"
warmup = "{warmup}"
measure_until = "{until}"

[network]
mtu = "1500B"
topology = {{ kind = "single_rack", hosts = 6 }}
link = {{ rate = "100Gbps", delay = "100ns" }}

[network.host]
threads = 12
send_latency = "224ns"
recv_latency = {{ kind = "quantiles", points = [[0.0, "223280ps"], [0.5, "282280ps"], [0.9, "303280ps"], [0.99, "423280ps"], [0.999, "1223280ps"], [0.9999, "12223280ps"], [1.0, "13223280ps"]] }}

[network.switch]
latency = {{ kind = "quantiles", points = [[0.0, "346ns"], [0.5, "347ns"], [0.9, "349ns"], [0.99, "352ns"], [0.999, "356ns"], [0.9999, "508ns"], [1.0, "508ns"]] }}
cut_through = true
buffer = "9MB"
dynamic_thresholds = false
port_limit = "1500000B"

[metrics]
drop_records = false
window = "{window}"

[transport]
kind = "{kind}"
"""


def scenario(name, workload, transport=None, kind="pl2", duration_ms=10, seed=1, window="10us"):
    toml = HEADER.format(
        name=name,
        seed=seed,
        duration=f"{duration_ms}ms",
        warmup="1ms",
        until=f"{duration_ms - 0.2}ms",
        kind=kind,
        window=window,
    )
    for k, v in (transport or {}).items():
        toml += f"{k} = {json.dumps(v) if isinstance(v, str) else str(v).lower() if isinstance(v, bool) else v}\n"
    return toml + workload


def incast_workload(n, size, receiver=5, threads=12):
    return f"""
[[workload]]
kind = "persistent"
senders = "0..{n}"
receiver = {receiver}
size = "{size}B"
threads = {threads}
"""


def outcast_workload(r, size=6000, duration_ms=10):
    """Host 0's 12 threads each keep a queue of messages to receivers 1..r (thread i to
    receiver 1 + i mod r): enough queued at time 0 to stay busy for the whole run, which
    is a closed loop (a thread takes its next message when the previous is handed over)."""
    path = os.path.join(WORK, f"outcast{r}.csv")
    per_thread = int(duration_ms * 1e-3 * 100e9 / 8 / size / 12 * 1.5) + 10
    with open(path, "w") as f:
        f.write("time,src,dst,size,thread,priority\n")
        for _ in range(per_thread):
            for t in range(12):
                f.write(f"0,0,{1 + t % r},{size},{t},0\n")
    return f'\n[[workload]]\nkind = "list"\nfile = "{path}"\n'


RUNS = []

FINDINGS = """
- **Incast, 4 full payloads (6000 B):** 97.05–97.24 Gbps for 3–5 senders (line rate for
  full payloads is 97.28 Gbps = 100 · 1500/1542), max queue 57–71 KiB, no buffer drops: the
  paper's 96–97 Gbps and < 200 KiB. Exception: **2 senders × 12 threads overflow the 1.5 MB
  port (15,432 port-limit drops)** under Algorithm 1 (decrement at ingress): the counters
  cannot see packets already queued. The cause is start-up counter drift, not early arrival
  (issue 24, measured in experiments/zero_loss/results.md): 16 packets of unsolicited bursts
  pass the T rule (2 x 12 threads x K = 96 <= T) and are resent, each decrementing twice;
  with `low_load = false` or `suppress_excess_decrements = true` the run loses nothing. Decrementing at dequeue bounds every case (45–69 KiB, no loss) at
  a cost of ~1 Gbps. The 16 "program drops" are unsolicited packets refused by the T rule and
  resent (4 bursts, 0 unrecovered).
- **One sender:** 95.27 Gbps, not the paper's ~80 Gbps (+15.3 Gbps). Our hosts have no
  per-packet or per-RSV CPU cost (the testbed profile calibrates only the RSV-GRT exchange),
  so 12 blocking threads keep the NIC busy; the paper's cap is host software. With 6144 B
  messages (4 + 1 packets) goodput drops to 79.3–84.7 Gbps because the 144 B tail packet
  takes a whole slot: 6144 · 8 / (5 · 123.36 ns) = 79.7 Gbps. So the paper's incast numbers
  (96–97) imply 4-MTU messages; its "6 KiB" cannot reach them under PL2's slot accounting.
- **Outcast:** 95.27 Gbps for 1–4 receivers (paper 90 Gbps, +5.3 Gbps, same reason: no host
  CPU cost in the model; the sender is the bottleneck, so the receiver count does not
  matter). Control overhead is exactly 84 / (4 · 1542) = 1.362 % of data bytes for RSVs on
  the sender's uplink and for GRTs on its downlink (the paper's ~2 % counts 128 B per burst
  on one direction).
- **K:** K = 1 and 2 overflow the port under the ingress decrement (41,337 / 15,917 drops
  with 6000 B) and are fine at dequeue; K ≥ 4 is bounded either way. We do not see the
  paper's throughput loss at small K (no per-exchange host cost); the paper's "K = 4 best"
  is reproduced only in the sense that K < 4 loses packets under Algorithm 1.
- **t:** with 12 threads per sender the load keeps chosen ≥ t, so t hardly matters (2–5
  unsolicited bursts in 20,300). With 1 thread per sender (~190 % offered) almost every
  burst goes unsolicited for every t ≥ 10 (37,419 / 37,423) and the port overflows
  (67,659 drops): the T rule (T = 128) reads the same counters that do not see the queue.
  The paper reports loss only at t = 35; we see it for all t at this load.
- **Variants:** with 12 threads the holes never open (counter_drift 0, unrecovered 0) and
  faithful / improved / ideal differ by < 1 Gbps and < 7 KiB. With 1 thread per sender the
  low-load optimisation dominates: faithful+dequeue shows the drift hole (6,666 packets,
  885 saturations); improved+dequeue is the only variant with the optimisation on that
  stays bounded (36 KiB, 0 drops, 0 drift); the ideal switch with unsolicited bursts still
  overflows (unsolicited data bypasses its schedule), without them it keeps 10.5 KiB.
- **Equation (1):** reading (a) grows the queue without bound for 3–5 senders under the
  ingress decrement (e.g. 3 senders: 321 KiB after 5 ms, the 1.5 MB limit after ~25 ms),
  reading (b) stays at 51–78 KiB over 40 ms (3–5 senders); both are bounded at dequeue. Reading (a)
  subtracts the NIC backlog from the wait although the burst also waits behind that
  backlog, so it arrives early by it, and nothing in the counters corrects that. Default: (b).
- **Why 2 senders diverge under (b) and the ingress decrement** (answered since: counter
  drift, above; what follows is the earlier analysis). Measured after 1 ms:
  mean chosen slot 72.5 with 2 × 12 threads (of 96 packets the threads can hold reserved),
  137.4 with 3 × 12 (of 144) and 185.4 with 4 × 12 (of 192); exchange ≈ 1.1 µs in all.
  With ingress decrements `out[dst]` = grant rate × mean lead from RSV to arrival, so the
  grant rate equals the line rate only if bursts arrive exactly at their slots; any average
  earliness ε slots gives rate = C / (C − ε) of the line and a queue the counters never see.
  2 senders at 2, 3, 4, 6, 8, 10, 12 threads all overflow (65,328 … 15,432 drops in 10 ms).
  The per-burst arrival-vs-slot error probe the issue asks for is not published yet, so
  the earliness is inferred, not measured.
"""


def run(name, toml):
    d = os.path.join(WORK, name)
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "scenario.toml")
    with open(path, "w") as f:
        f.write(toml)
    t0 = time.time()
    p = subprocess.run([RUN, path, d], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"{name}: pl2-run failed:\n{p.stderr}\n{p.stdout[-2000:]}")
    s = json.loads(p.stdout[: p.stdout.rindex("}") + 1])
    RUNS.append((name, time.time() - t0))
    s["_dir"] = d
    return s


def port_tx(s, node, peer):
    p = pl.read_parquet(os.path.join(s["_dir"], "ports.parquet"))
    return int(p.filter((pl.col("node") == node) & (pl.col("peer") == peer))["tx_bytes"].sum())


def queue_series(s, node, peer, chunk_ps):
    """Max queue of a port per chunk of the run."""
    p = pl.read_parquet(os.path.join(s["_dir"], "ports.parquet"))
    p = p.filter((pl.col("node") == node) & (pl.col("peer") == peer))
    p = p.with_columns((pl.col("window_start_ps") // chunk_ps).alias("chunk"))
    g = p.group_by("chunk").agg(pl.col("max_queue_bytes").max()).sort("chunk")
    return g["max_queue_bytes"].to_list()


def drops(s):
    d = s["drops"]
    return d["buffer_full"] + d["port_limit"], d["program"]


def maxq_recv(s, h=5):
    return s["max_queue_bytes"].get(f"s0->h{h}", 0)


def holes(s):
    w = s["pl2"]["switch"]
    return (
        w["counter_drift_packets"],
        w["unsolicited_unrecovered_packets"],
        w["unsolicited_unrecovered_bursts"],
        w["decrement_saturations"],
        w["suppressed_decrements"],
    )


def us(ps):
    return "-" if ps is None else f"{ps / 1e6:.1f}"


def kib(b):
    return f"{b / 1024:.1f}"


def table(head, rows):
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def main():
    if not os.path.exists(RUN):
        sys.exit("build first: cargo build --release -p pl2-scenario --bin pl2-run")
    md = ["# PL2 figures (issue 4)", "", __doc__.strip().split("\n\n", 2)[2], ""]
    md += [f"Generated by `experiments/pl2/run_figures.py`; working files in a temporary directory.", ""]

    # 1. Incast 1-5 senders, 12 threads each, two message sizes; raw Ethernet for contrast.
    rows = []
    for size in (6000, 6144):
        for n in range(1, 6):
            for kind, tr in (("pl2", {}), ("pl2 dequeue", {"decrement_at": "dequeue"}), ("raw", None)):
                s = run(f"incast-{kind.replace(' ', '-')}-{size}-{n}", scenario(f"incast {n}", incast_workload(n, size), tr, kind=kind.split()[0]))
                bd, pd = drops(s)
                lat = s["messages"]["latency_ps"]
                st = s["pl2"]
                rows.append([
                    size, n, kind, f"{s['goodput_gbps'].get('h5', 0):.2f}", bd, pd,
                    kib(maxq_recv(s)), us(lat["p50"]),
                    f"{st['unsolicited_bursts']}/{st['bursts']}" if kind != "raw" else "-",
                    st["resent_bursts"] if kind != "raw" else "-",
                ])
    md += ["## Incast: n senders × 12 threads → h5, persistent messages", "",
           "Paper (§6.4, Fig. 9): one sender capped near 80 Gbps, incast up to 96–97 Gbps, queues under 200 KiB, no loss.", "",
           table(["size B", "senders", "transport", "goodput Gbps", "buffer drops", "program drops", "max queue KiB", "p50 latency µs", "unsolicited/bursts", "resent"], rows), ""]

    # 2. Outcast and control overhead.
    rows = []
    for r in range(1, 5):
        s = run(f"outcast-{r}", scenario(f"outcast {r}", outcast_workload(r)))
        good = sum(v for k, v in s["goodput_gbps"].items() if k != "h0")
        up = port_tx(s, "h0", "s0")
        down = port_tx(s, "s0", "h0")
        rsv_b = s["pl2"]["rsvs"] * CTL_WIRE
        grt_b = s["pl2"]["switch"]["grants"] * CTL_WIRE
        data_b = up - rsv_b
        bd, pd = drops(s)
        rows.append([r, f"{good:.2f}", f"{100 * rsv_b / data_b:.3f}", f"{100 * grt_b / data_b:.3f}", f"{100 * down / (up + 1e-9) :.3f}",
                     bd, pd, kib(max(maxq_recv(s, h) for h in range(1, r + 1)))])
    md += ["## Outcast: h0 (12 threads, 6000 B messages) → 1–4 receivers", "",
           "Paper (Fig. 10): capped at 90 Gbps. Control overhead: RSV wire bytes on h0's uplink and GRT wire bytes on its downlink, "
           "each relative to the data wire bytes h0 sent; expected 84 / (4 · 1542) = 1.362 % each for 4-packet bursts.", "",
           table(["receivers", "goodput Gbps (sum)", "RSV/data % (uplink)", "GRT/data % (downlink)", "downlink/uplink bytes %", "buffer drops", "program drops", "max queue KiB"], rows), ""]

    # 3. Sweeps on the 4-sender incast.
    rows = []
    for dec in ("ingress", "dequeue"):
        for size in (6000, 65536):
            for k in (1, 2, 4, 8, 16):
                s = run(f"k{k}-{size}-{dec}", scenario(f"K={k}", incast_workload(4, size), {"k": k, "decrement_at": dec}))
                bd, pd = drops(s)
                rows.append([dec, size, k, f"{s['goodput_gbps'].get('h5', 0):.2f}", kib(maxq_recv(s)), bd, pd, us(s['messages']['latency_ps']['p99'])])
    md += ["## Sweep K (4-sender incast, 12 threads each, t = 15)", "",
           "With 6000 B messages a message is 4 packets, so K ≥ 4 gives identical bursts; the 64 KiB rows show K's effect on longer messages.", "",
           table(["decrement", "size B", "K", "goodput Gbps", "max queue KiB", "buffer drops", "program drops", "p99 latency µs"], rows), ""]
    rows = []
    for t in (5, 10, 15, 25, 35):
        s = run(f"t{t}", scenario(f"t={t}", incast_workload(4, 6000), {"t": t}))
        bd, pd = drops(s)
        st = s["pl2"]
        rows.append([t, f"{s['goodput_gbps'].get('h5', 0):.2f}", kib(maxq_recv(s)), bd, pd, f"{st['unsolicited_bursts']}/{st['bursts']}",
                     st["switch"]["unsolicited_unrecovered_packets"], st["switch"]["counter_drift_packets"]])
    for t in (5, 10, 15, 25, 35):
        s = run(f"t{t}-1thread", scenario(f"t={t}, 1 thread", incast_workload(4, 6000, threads=1), {"t": t}))
        bd, pd = drops(s)
        st = s["pl2"]
        rows.append([f"{t} (1 thread/sender)", f"{s['goodput_gbps'].get('h5', 0):.2f}", kib(maxq_recv(s)), bd, pd, f"{st['unsolicited_bursts']}/{st['bursts']}",
                     st["switch"]["unsolicited_unrecovered_packets"], st["switch"]["counter_drift_packets"]])
    md += ["## Sweep t (4-sender incast, 6000 B, K = 4; 12 threads per sender, then 1)", "",
           "Paper (§4.4): t robust from 10 to 25, loss at 35.", "",
           table(["t", "goodput Gbps", "max queue KiB", "buffer drops", "program drops", "unsolicited/bursts", "unrecovered pkts", "drift pkts"], rows), ""]

    # 4. Faithful vs improved vs ideal, decrement point, equation (1) reading.
    variants = [
        ("faithful", {}),
        ("faithful, dequeue", {"decrement_at": "dequeue"}),
        ("improved", {"improved": True}),
        ("improved, dequeue", {"improved": True, "decrement_at": "dequeue"}),
        ("ideal", {"switch_mode": "ideal"}),
        ("ideal, no low-load", {"switch_mode": "ideal", "low_load": False}),
        ("faithful, eq1 (a)", {"equation1": "a"}),
    ]
    rows = []
    for threads in (12, 1):
        for name, tr in variants:
            s = run(f"variant-{threads}-" + name.replace(" ", "").replace(",", "-").replace("(", "").replace(")", ""), scenario(name, incast_workload(4, 6000, threads=threads), tr))
            bd, pd = drops(s)
            st = s["pl2"]
            rows.append([threads, name, f"{s['goodput_gbps'].get('h5', 0):.2f}", kib(maxq_recv(s)), bd, pd, f"{st['unsolicited_bursts']}/{st['bursts']}", st["resent_bursts"], *holes(s)])
    md += ["## Scheduler variants (4-sender incast, 6000 B, 10 ms; 12 threads per sender, then 1)", "",
           table(["threads", "variant", "goodput Gbps", "max queue KiB", "buffer drops", "program drops", "unsolicited/bursts", "resent", "counter_drift pkts", "unrecovered pkts", "unrecovered bursts", "decrement saturations", "suppressed decrements"], rows), ""]

    # 5. Equation (1): queue evolution over 40 ms, 2-5 senders, max queue per 5 ms.
    rows = []
    for n in (2, 3, 4, 5):
        for eq in ("a", "b"):
            for dec in ("ingress", "dequeue"):
                s = run(f"eq1-{eq}-{dec}-{n}", scenario(f"eq1 {eq} {dec} {n}", incast_workload(n, 6000), {"equation1": eq, "decrement_at": dec}, duration_ms=40, window="100us"))
                ser = queue_series(s, "s0", "h5", 5_000_000_000)
                bd, pd = drops(s)
                rows.append([n, eq, dec, " / ".join(kib(x) for x in ser), bd, pd, f"{s['goodput_gbps'].get('h5', 0):.2f}"])
    md += ["## Equation (1), reading (a) vs (b): receiver queue over 40 ms", "",
           "n senders × 12 threads of 6000 B messages; max queue at s0→h5 in KiB per 5 ms of simulated time.", "",
           table(["senders", "reading", "decrement", "max queue per 5 ms (KiB)", "buffer drops", "program drops", "goodput Gbps"], rows), ""]

    md += ["## Findings (runs are deterministic: seed 1)", "", FINDINGS.strip(), ""]
    total = sum(t for _, t in RUNS)
    md += [f"{len(RUNS)} runs, {total:.1f} s of wall time in pl2-run.", ""]
    with open(OUT_MD, "w") as f:
        f.write("\n".join(md))
    print(f"wrote {OUT_MD}: {len(RUNS)} runs in {total:.1f} s")


if __name__ == "__main__":
    main()
