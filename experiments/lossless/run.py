"""PFC + DCQCN beside DCTCP on the same flows (issue 21): a 32-to-1 incast and a
permutation on a k = 8 fat tree (128 hosts, 100 Gb/s, 1 µs links, 12 MiB shared buffer
per switch), three designs:

- `dctcp`: TCP with DCTCP, step marking at 100 KB (65 full frames, as benchmark 5);
- `dcqcn+pfc`: RoCE with DCQCN (HPCC's "Mellanox" preset: CNP on marked ACKs, no byte
  counter) over PFC on priority 3 (XOFF at 100 KB per ingress port and priority, default
  headroom), RED marking at dequeue 5 KB / 200 KB / 1 % (the DCQCN paper's);
- `dcqcn-lossy`: the same RoCE with no PFC: the buffer drops and go-back-N recovers (a
  1 ms local ACK timeout for lost last frames, which no NACK reports: the NIC default,
  67.1 ms, would add that much to a message whose tail is lost).

Completion times are per message (send call to delivery). Queue depth is the largest
byte count ever queued at any switch port. Every number in results.md comes from one run
of this script (seed 1); nothing is tuned.

    python experiments/lossless/run.py            # writes experiments/lossless/results.md
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

NETWORK = """
[network]
topology = { kind = "fat_tree", k = 8 }
link = { rate = "100Gbps", delay = "1us" }
"""

DESIGNS = {
    "dctcp": """
[network.switch]
ecn = { kind = "step", threshold = "100000B" }
[transport]
kind = "tcp"
cc = "dctcp"
""",
    "dcqcn+pfc": """
[network.switch]
ecn = { kind = "red", min = "5KB", max = "200KB", p_max = 0.01, at_dequeue = true }
pfc = { priorities = [3], xoff = { bytes = "100KB" } }
[transport]
kind = "roce"
preset = "hpcc_mellanox"
""",
    "dcqcn-lossy": """
[network.switch]
ecn = { kind = "red", min = "5KB", max = "200KB", p_max = 0.01, at_dequeue = true }
[transport]
kind = "roce"
preset = "hpcc_mellanox"
rto = "1ms"
""",
}

WORKLOADS = {
    "incast 32→1 × 1 MB": """
[[workload]]
kind = "incast"
senders = "32..64"
receiver = 0
size = "1MB"
""",
    "permutation × 1 MB": """
[[workload]]
kind = "permutation"
size = "1MB"
""",
}


def scenario(design: str, workload: str) -> str:
    return f'name = "{design} / {workload}"\nseed = 1\n[run]\nduration = "200ms"\n' + NETWORK + DESIGNS[design] + WORKLOADS[workload]


def run(design: str, workload: str) -> dict:
    import pl2

    sc = pl2.Scenario.from_toml(scenario(design, workload), tempfile.gettempdir())
    t0 = time.perf_counter()
    r = pl2.run(sc, progress=False)
    wall = time.perf_counter() - t0
    s = r.summary
    m = s["messages"]["latency_ps"]
    pfc = s.get("pfc") or {}
    roce = s.get("roce") or {}
    tcp = s.get("tcp") or {}
    return {
        "design": design,
        "workload": workload,
        "finished": f"{s['messages']['finished']} / {s['messages']['count']}",
        "p50 µs": m["p50"] / 1e6 if m.get("p50") is not None else None,
        "p99 µs": m["p99"] / 1e6 if m.get("p99") is not None else None,
        "max µs": m["max_finished"] / 1e6 if m.get("max_finished") is not None else None,
        "max queue KB": max(s["max_queue_bytes"].values(), default=0) / 1e3,
        "drops": s["counters"]["packets_dropped"],
        "PAUSE / XON": f"{pfc.get('pause_frames', 0)} / {pfc.get('xon_frames', 0)}" if pfc else "–",
        "paused ms": pfc.get("paused_ps", 0) / 1e9 if pfc else None,
        "resent frames": roce.get("retransmissions", tcp.get("retransmissions")),
        "wall s": wall,
    }


def fmt(v) -> str:
    if v is None:
        return "–"
    if isinstance(v, float):
        return f"{v:,.1f}" if abs(v) >= 10 else f"{v:.3f}"
    return str(v)


def main() -> None:
    rows = [run(d, w) for w in WORKLOADS for d in DESIGNS]
    cols = list(rows[0])
    lines = ["| " + " | ".join(cols) + " |", "|" + " --- |" * len(cols)]
    lines += ["| " + " | ".join(fmt(r[c]) for c in cols) + " |" for r in rows]
    table = "\n".join(lines)
    print(table)
    out = HERE / "results.md"
    text = out.read_text(encoding="utf-8") if out.exists() else ""
    marker = "<!-- table -->"
    if marker in text:
        head, _, rest = text.partition(marker)
        _, _, tail = rest.partition(marker)
        out.write_text(head + marker + "\n" + table + "\n" + marker + tail, encoding="utf-8")
    else:
        print(f"\n(no {marker} pair in {out}: table not written)", file=sys.stderr)


if __name__ == "__main__":
    main()
