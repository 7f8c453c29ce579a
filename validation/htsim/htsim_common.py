"""The NDP cross-check's scenarios, defined once: the flows (the same Python generator
the htsim side used, so both simulators carry exactly the same flows), the network
matched to htsim's `main_ndp` settings, the reference CSVs, and the pass criteria.

Network (htsim: `-nodes 432 -q 8 -mtu 9000 -linkspeed 10000 -hop_latency 1 -strat perm`):
a k = 12 fat tree (432 hosts, 6 per ToR, 36 per pod; pl2 numbers hosts as htsim does,
host h on ToR h / 6), 10 Gb/s everywhere, 1 µs per link, store-and-forward with no
switch latency, 9064 B data frames and 64 B headers (PPP link layer with a 62 B L3/L4
header, MTU 9062 B → 9000 B of payload), trimming queues of 72,000 B of data (7 frames)
and 144,000 B of headers on every switch port, NDP with source-chosen path
permutations, pull-rate modifier 0.99, RTO floor 5 ms.
"""

from __future__ import annotations

import csv
import random
import statistics
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
REFERENCE = HERE / "reference"
NODES = 432
K = 12
INCAST_BYTES = 270_000
#: htsim sends only full 9000 B packets: its 2,000,000 B flows carry 223 packets, so
#: pl2's permutation flows are 223 × 9000 B (README, "Flows").
PERM_BYTES = 223 * 9000
INCAST_N = (1, 10, 50, 100, 200, 400)
WINDOWS = (1, 10, 23)
SEEDS = tuple(range(1, 11))

#: Pass criteria (issue 18): per (scenario, n, IW), the means over seeds of the last and
#: the median per-flow completion time within 5%, trims and retransmissions within 10%.
FCT_TOL = 0.05
COUNT_TOL = 0.10


@dataclass(frozen=True)
class Run:
    scenario: str  # "incast" or "perm"
    n: int
    iw: int
    seed: int

    @property
    def key(self) -> tuple[str, int, int]:
        return (self.scenario, self.n, self.iw)


def incast_flows(n: int, seed: int) -> list[tuple[int, int, int]]:
    """(src, dst, bytes): receiver 0, senders `random.Random(seed).sample(range(1, 432), n)`."""
    return [(s, 0, INCAST_BYTES) for s in random.Random(seed).sample(range(1, NODES), n)]


def perm_flows(seed: int) -> list[tuple[int, int, int]]:
    """Every host to another: a uniform derangement by rejection sampling."""
    rng = random.Random(seed)
    while True:
        dst = list(range(NODES))
        rng.shuffle(dst)
        if all(dst[i] != i for i in range(NODES)):
            return [(i, dst[i], PERM_BYTES) for i in range(NODES)]


def flows(run: Run) -> list[tuple[int, int, int]]:
    return incast_flows(run.n, run.seed) if run.scenario == "incast" else perm_flows(run.seed)


def all_runs() -> list[Run]:
    runs = [Run("incast", n, iw, s) for n in INCAST_N for iw in WINDOWS for s in SEEDS]
    return runs + [Run("perm", NODES, 23, s) for s in SEEDS]


#: The CI subset (python/tests/test_htsim_reference.py): trimming, header drops and
#: RTOs, and the permutation, within a minute.
QUICK = [Run("incast", 100, 23, s) for s in (1, 2, 3)] + [Run("incast", 400, 23, 1), Run("perm", NODES, 23, 1)]


def flows_csv(run: Run) -> str:
    """The run's flows as a pl2 message list (every flow at t = 0; a host sends at most one)."""
    rows = "".join(f"0,{s},{d},{b},0,0\n" for s, d, b in flows(run))
    return "time,src,dst,size,thread,priority\n" + rows


def scenario_toml(run: Run, csv_file: str) -> str:
    """pl2's scenario for one run; `csv_file` holds `flows_csv(run)`."""
    return f"""# NDP cross-check against htsim: {run.scenario} n={run.n} IW={run.iw} seed={run.seed}
seed = {run.seed}

[network]
mtu = "9062B"
[network.topology]
kind = "fat_tree"
k = {K}
[network.link]
rate = "10Gbps"
delay = "1us"
[network.framing]
link = "ppp"
vlan_tag = false
[network.switch]
latency = "0ns"
cut_through = false
dynamic_thresholds = false
buffer = "1GiB"
[network.switch.queue]
kind = "trimming"
data_limit = {{ bytes = "72000B" }}

[transport]
kind = "ndp"
header_bytes = 62
initial_window = {run.iw}
rto_min = "5ms"
pull_rate_modifier = 0.99

[[workload]]
kind = "list"
file = "{csv_file}"

[run]
duration = "1s"
"""


def read_reference(name: str) -> list[dict]:
    with open(REFERENCE / name, newline="") as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def reference_runs() -> dict[tuple[str, int, int, int], dict]:
    return {(r["scenario"], int(r["n"]), int(r["iw"]), int(r["seed"])): r for r in read_reference("runs.csv")}


def median(xs: list[float]) -> float:
    return statistics.median(xs)
