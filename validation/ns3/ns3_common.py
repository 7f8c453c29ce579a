"""What both sides share: the scenario set, the seeds and the per-seed start offsets,
the measurement definitions, and the CSV format of the references.

Every scenario is defined once here (`SCENARIOS`); `scenarios.py` builds it in ns-3,
`pl2_side.py` writes it as a pl2 TOML. Both sides measure the same way:

- throughput: bytes delivered to the receiving application in [warmup, duration], per
  flow, in Gbps; fairness is Jain's index over the flows;
- cwnd: each flow's congestion window sampled and held on a 10 µs grid over
  [warmup, duration]; mean, p50 and p99 over all flows' samples;
- queue: the maximum backlog of the bottleneck port in each 10 µs window (windows in
  which the port saw an event, as pl2's `ports` table records them), in pl2's unit:
  wire bytes (frame + preamble + IFG) including the frame being serialised; p50 and p99;
- incast: per-message completion time from the first data segment sent to the last
  byte delivered; p50 and p99 over the 8 messages of every seed; drops, retransmitted
  segments and retransmission timeouts per run;
- mixed (one DCTCP and one CUBIC flow): the DCTCP flow's share of the bytes delivered
  in [warmup, duration] (`flow0_share`), with the dumbbell's metrics.

Units: the bottleneck's port limit and marking threshold are given in full frames and
counted in bytes on both sides (pl2: × WIRE_FULL wire bytes, ns-3's queue disc:
× NS3_IP_FULL IP bytes), so a SYN or an ACK takes its own few bytes, not a full slot.
"""

from __future__ import annotations

import csv
import math
import random
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REFERENCE = HERE / "reference"

#: The ns-3 release the references come from (PyPI wheel `ns3==NS3_VERSION`).
NS3_VERSION = "3.44.post0"

#: Wire bytes of a full-MSS frame in pl2 (1460 + TCP 20 + IPv4 20 + Ethernet 14 + FCS 4
#: + preamble/SFD 8 + IFG 12; no 802.1Q tag in these scenarios).
WIRE_FULL = 1538
#: Bytes ns-3's PointToPointNetDevice serialises for the same segment (IP 1500 + PPP 2).
NS3_FULL = 1502
#: IP bytes of the same segment: the unit ns-3's queue discs count in byte mode.
NS3_IP_FULL = 1500
#: Wire overhead pl2 adds to an IP packet (Ethernet header, FCS, preamble, IFG).
WIRE_OVERHEAD = 38
WINDOW_NS = 10_000
#: The seeds of every target (issue 6: at least 10).
SEEDS = list(range(1, 11))
#: The seeds of rare counts (issue 24: a count below 5 per run needs at least 50 seeds
#: on both sides); the references hold all of them.
RARE_SEEDS = list(range(1, 51))


@dataclass(frozen=True)
class Spec:
    name: str
    kind: str  # "dumbbell" or "incast"
    cc: str  # "new_reno", "cubic", "dctcp": every flow's, unless `ccs` names each flow's
    flows: int
    host_gbps: float
    bottleneck_gbps: float
    delay_ns: int
    #: Static limit of the bottleneck port, in full frames (pl2: × WIRE_FULL bytes).
    limit_frames: int
    #: DCTCP marking threshold in full frames (pl2: × WIRE_FULL bytes); 0 = no ECN.
    ecn_frames: int
    duration_ns: int
    warmup_ns: int = 0
    msg_bytes: int = 0  # incast message size
    jitter_ns: int = 0  # start offsets are uniform in [0, jitter_ns), drawn per seed
    #: Per-flow congestion control (mixed scenarios); empty: every flow runs `cc`.
    ccs: tuple[str, ...] = ()
    #: Non-ECN-capable frames over the marking threshold: "drop" (ns-3: RED with ECN;
    #: pl2: `switch.non_ect = "drop"`) or "pass" (ns-3: a mark-only step queue;
    #: pl2: `non_ect = "pass"`). Only where `ecn_frames` > 0.
    non_ect: str = "drop"
    tags: tuple[str, ...] = field(default=())

    def flow_cc(self, flow: int) -> str:
        return self.ccs[flow] if self.ccs else self.cc

    def starts_ns(self, seed: int) -> list[int]:
        """Per-flow start offsets, identical on both sides for a seed."""
        rng = random.Random(f"{self.name}/{seed}")
        return [rng.randrange(self.jitter_ns) if self.jitter_ns else 0 for _ in range(self.flows)]


def _dumbbell(cc: str, flows: int) -> Spec:
    return Spec(
        name=f"dumbbell-{cc}-{flows}",
        kind="dumbbell",
        cc=cc,
        flows=flows,
        host_gbps=25.0,
        bottleneck_gbps=10.0,
        delay_ns=1_000,
        limit_frames=100,
        ecn_frames=65 if cc == "dctcp" else 0,
        duration_ns=20_000_000,
        warmup_ns=5_000_000,
        jitter_ns=100_000,
    )


def _incast(cc: str) -> Spec:
    return Spec(
        name=f"incast-{cc}-8x1MB",
        kind="incast",
        cc=cc,
        flows=8,
        host_gbps=10.0,
        bottleneck_gbps=10.0,
        delay_ns=1_000,
        limit_frames=100,
        ecn_frames=65 if cc == "dctcp" else 0,
        duration_ns=200_000_000,
        msg_bytes=1_000_000,
        jitter_ns=10_000,
    )


def _mixed(non_ect: str) -> Spec:
    """One DCTCP and one CUBIC flow (not ECN-capable) through the DCTCP dumbbell's
    bottleneck (issue 24): what a non-ECT frame over the marking threshold meets decides
    the DCTCP flow's share."""
    return Spec(
        name=f"mixed-dctcp-cubic-{non_ect}",
        kind="dumbbell",
        cc="dctcp",
        flows=2,
        host_gbps=25.0,
        bottleneck_gbps=10.0,
        delay_ns=1_000,
        limit_frames=100,
        ecn_frames=65,
        duration_ns=20_000_000,
        warmup_ns=5_000_000,
        jitter_ns=100_000,
        ccs=("dctcp", "cubic"),
        non_ect=non_ect,
    )


SCENARIOS: dict[str, Spec] = {
    s.name: s
    for s in [_dumbbell(cc, n) for cc in ("new_reno", "cubic", "dctcp") for n in (1, 4)]
    + [_incast("dctcp"), _incast("cubic"), _mixed("drop"), _mixed("pass")]
}

#: The subset the default test run checks (fast on the pl2 side).
SMALL = ["dumbbell-dctcp-4", "incast-dctcp-8x1MB", "mixed-dctcp-cubic-drop", "mixed-dctcp-cubic-pass"]


# --- statistics -------------------------------------------------------------------


def quantile(xs: list[float], q: float) -> float:
    """Linear-interpolation quantile (numpy's default)."""
    if not xs:
        return math.nan
    s = sorted(xs)
    pos = q * (len(s) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def mean_ci95(xs: list[float]) -> tuple[float, float, float]:
    """Mean and its 95% interval (Student t) over seeds."""
    n = len(xs)
    if n == 0:
        return (math.nan, math.nan, math.nan)
    m = sum(xs) / n
    if n == 1:
        return (m, m, m)
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (n - 1))
    t = {2: 12.706, 3: 4.303, 4: 3.182, 5: 2.776, 6: 2.571, 7: 2.447, 8: 2.365, 9: 2.306, 10: 2.262}.get(n, 1.96 + 2.4 / n)
    h = t * sd / math.sqrt(n)
    return (m, m - h, m + h)


def jain(xs: list[float]) -> float:
    return (sum(xs) ** 2) / (len(xs) * sum(x * x for x in xs)) if xs and any(xs) else math.nan


def sample_and_hold(points: list[tuple[int, float]], t0: int, t1: int, step: int) -> list[float]:
    """Values of a step function (sorted (time, value) changes) on the grid t0, t0+step, … < t1."""
    out: list[float] = []
    i, cur = 0, math.nan
    for t in range(t0, t1, step):
        while i < len(points) and points[i][0] <= t:
            cur = points[i][1]
            i += 1
        if not math.isnan(cur):
            out.append(cur)
    return out


# --- per-run result rows and the CSV files ----------------------------------------

#: One row per (scenario, seed): the metrics both sides produce.
FIELDS = [
    "scenario",
    "seed",
    "throughput_gbps",
    "jain",
    "flow0_share",
    "cwnd_mean_bytes",
    "cwnd_p50_bytes",
    "cwnd_p99_bytes",
    "queue_p50_bytes",
    "queue_p99_bytes",
    "fct_p50_us",
    "fct_p99_us",
    "fct_max_us",
    "drops",
    "nonect_drops",
    "retransmissions",
    "timeouts",
    "segments_sent",
    "wall_s",
]


def write_rows(path: Path, rows: list[dict], header: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as f:
        for line in header.strip().splitlines():
            f.write(f"# {line}\n")
        w = csv.DictWriter(f, fieldnames=FIELDS, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in r.items()})


def read_rows(path: Path) -> tuple[list[dict], list[str]]:
    """Rows (numbers as floats) and the header comment lines."""
    lines = path.read_text(encoding="utf-8").splitlines()
    comments = [ln[2:] for ln in lines if ln.startswith("#")]
    body = [ln for ln in lines if not ln.startswith("#")]
    rows = []
    for r in csv.DictReader(body):
        out: dict = {}
        for k, v in r.items():
            if k in ("scenario",):
                out[k] = v
            else:
                out[k] = float(v) if v not in ("", None) else math.nan
        rows.append(out)
    return rows, comments


def reference_path(name: str) -> Path:
    return REFERENCE / f"{name}.csv"
