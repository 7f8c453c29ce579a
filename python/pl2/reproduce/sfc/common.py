"""The SFC family's shared settings (issue 22, seed `003_eda4436261382f03`, the IEEE 802.1
May 2022 slides "Source Flow Control Simulation Results: Fairness and Performance"): the
network every experiment builds on, the four designs' switch settings, and helpers that
read a run into the numbers the sections report.

Every choice the slides leave open is a constant here, stated in the family's report
(`preamble`):

- Network (slides, "System Configuration"): a 3-tier Clos, 320 hosts on 20 ToRs (16 each,
  100 Gbps), 5 pods of 4 ToRs and 4 aggregation switches, 16 cores; every ToR has one
  400 Gbps link to each aggregation switch of its pod, every aggregation switch one to
  each core: 56 switches of radix 20. Links 0.5 µs. MTU 1024 B: the IP packet (RoCEv2's
  IP, UDP, BTH and ICRC headers, 44 B, included), Ethernet framing on top.
- Base RTT 12 µs (slides): the links give 6 × 0.5 µs × 2 = 6 µs host to host across
  the core and back; the other 6 µs are ours to place: 600 ns per switch pipeline (5
  switches each way). Not in the hosts: when this was set up, RoCE's pacer handed over
  one frame at a time, so a 250 ns send latency capped a flow at 1062 B per 335 ns =
  25.4 Gbps (measured), and the time went into the switches; the pacer now pipelines
  the send path (`tx_pipeline_frames`). Serialisation comes on top (85 ns per full
  frame at 100 Gbps).
- DCQCN: the slides' parameters (`preset = "sfc_seed"`), step ECN marking at 50 KB at
  dequeue on every switch.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from pl2.scenario import Scenario

HOSTS = 320
HOSTS_PER_TOR = 16
TORS = 20
AGGS = 20
CORES = 16
LINK_BPS = 100e9
MTU_B = 1024
BUFFER_B = 16_000_000
GUARANTEED_B = 50_000
PORTS = 20

TOPOLOGY: dict[str, Any] = {
    "kind": "three_tier", "pods": 5, "tors_per_pod": 4, "aggs_per_pod": 4, "cores": CORES, "hosts_per_tor": HOSTS_PER_TOR,
    "tor_uplink": {"rate": "400Gbps", "delay": "500ns"},
}

#: The designs: the slides' three and DCQCN alone (for context, with the SFC runs' buffer).
DESIGNS = ["PFC", "SFC", "SFC proxy", "DCQCN lossy"]
COLORS = {"PFC": "tab:red", "SFC": "tab:blue", "SFC proxy": "tab:green", "DCQCN lossy": "tab:gray"}


def tier_expr(node: str = "node") -> pl.Expr:
    """Tier of the switch named `s<i>` in column `node` (ToRs, then aggs, then cores)."""
    i = pl.col(node).str.slice(1).cast(pl.Int64)
    return pl.when(i < TORS).then(pl.lit("tor")).when(i < TORS + AGGS).then(pl.lit("agg")).otherwise(pl.lit("core"))


def switch(design: str, fairness: bool = False) -> dict[str, Any]:
    """The `[network.switch]` table of a design. Benefit runs (slides, "Switch
    Configuration Parameters"): SFC and lossy runs share a 16 MB egress pool (50 KB
    guaranteed per port, dynamic threshold α = 1; ingress accounting disabled, so egress
    drops are possible); PFC runs a static ingress limit of 16 MB / 20 ports = 800 KB per
    port with XOFF at 650 KB and no egress pool (no egress drops). Fairness runs (slides,
    "Fairness Simulation Settings"): ingress α 0.5, egress α 2.0, 16 MB egress pool, 50 KB
    guaranteed on both sides; PFC's ingress pool 9 MB with XOFF at α 0.5 of its free space;
    SFC's target 64 KB."""
    sw: dict[str, Any] = {
        "latency": "600ns",
        "buffer": f"{BUFFER_B}B",
        "ecn": {"kind": "step", "threshold": "50KB", "at_dequeue": True},
    }
    # The pool's shared part: 16 MB less the ports' guarantees.
    shared = f"{BUFFER_B - PORTS * GUARANTEED_B}B"
    egress = {"size": shared, "guaranteed": f"{GUARANTEED_B}B", "limit": {"alpha": 2.0 if fairness else 1.0}}
    if design == "PFC":
        if fairness:
            sw["pools"] = {"ingress": {"size": "9MB", "guaranteed": f"{GUARANTEED_B}B", "limit": {"alpha": 0.5}}, "egress": egress}
            sw["pfc"] = {"priorities": [3], "xoff": {"alpha": 0.5}}
        else:
            sw["pools"] = {"ingress": {"size": f"{BUFFER_B}B", "limit": {"bytes": f"{BUFFER_B // PORTS}B"}}}
            sw["pfc"] = {"priorities": [3], "xoff": {"bytes": "650KB"}}
    else:
        sw["pools"] = {"egress": egress}
    if design.startswith("SFC"):
        sw["sfc"] = {"trigger": "100KB", "target": "64KB" if fairness else "50KB", "suppression": "6us",
                     "proxy": design == "SFC proxy"}
    return sw


def network(design: str, fairness: bool = False) -> dict[str, Any]:
    return {
        "topology": dict(TOPOLOGY),
        "link": {"rate": "100Gbps", "delay": "500ns"},
        "mtu": f"{MTU_B}B",
        "switch": switch(design, fairness),
    }


TRANSPORT: dict[str, Any] = {"kind": "roce", "preset": "sfc_seed", "probes": False}

#: RoCE's local ACK timeout in the designs that can drop (every design but PFC: their
#: buffers have no ingress accounting, the slides' configuration). A lost last frame
#: leaves no gap to NACK, and the NIC default (4.096 µs × 2^14 = 67.1 ms) would leave it
#: unrecovered past the run's drain; lossy RoCE NICs retransmit sooner (NVIDIA's adaptive
#: retransmission). 1 ms: pl2's former default, kept so these designs' results stand as
#: they were (InfiniBand's n = 8, 1.05 ms, is what mlx5's own steering QPs use). PFC keeps
#: the default: its pauses outlast 1 ms, and a 1 ms timeout made it resend 414,386 frames
#: that were only paused.
LOSSY_RTO = "1ms"


def transport(design: str) -> dict[str, Any]:
    """The `[transport]` table of a design: `TRANSPORT`, with `LOSSY_RTO` where frames
    can be dropped."""
    t = dict(TRANSPORT)
    if design != "PFC":
        t["rto"] = LOSSY_RTO
    return t


def scenario(name: str, design: str, workloads: Sequence[Mapping[str, Any]], *, run: Mapping[str, Any],
             fairness: bool = False, window: str = "10us", transports: Mapping[str, Any] | None = None) -> Scenario:
    d: dict[str, Any] = {
        "name": name,
        "run": dict(run),
        "network": network(design, fairness),
        "transport": transport(design),
        "metrics": {"window": window, "drop_records": False, "probes": False},
        "workload": [dict(w) for w in workloads],
    }
    if transports:
        d["transports"] = {k: dict(v) for k, v in transports.items()}
    return Scenario.from_dict(d, base_dir=".")


def preamble() -> list[str]:
    return [
        "- Source: the SFC slides (`../shared/seeds/003_eda4436261382f03.txt`, IEEE 802.1 May 2022, Blendin et al., "
        "simulated on Intel's Fabsim-X) and issue 22. Designs: PFC + DCQCN, SFC + DCQCN, SFC with the ToR proxy + DCQCN "
        "(the slides' three) and DCQCN alone with the SFC runs' lossy buffer (context, not in the slides). Nothing is "
        "tuned to the slides.",
        "- Network: 3-tier Clos (`kind = \"three_tier\"`), 320 hosts on 20 ToRs at 100 Gbps, 5 pods of 4 ToRs + 4 "
        "aggregation switches, 16 cores, 400 Gbps between switches, 56 switches of radix 20, full bisection at the ToRs. "
        "Links 0.5 µs; MTU 1024 B (IP packet with RoCEv2's 44 B of IP/UDP/BTH/ICRC headers; Ethernet framing on top: "
        "1062 B on the wire). Base RTT 12 µs as the slides give it: 6 µs of links host-core-host and back and 600 ns "
        "per switch pipeline (5 each way: 6 µs); serialisation on top (`sfc_three_tier_base_rtt_is_12us_plus_serialisation`). "
        "The hosts have no send or receive delay: when this family was set up RoCE's pacer handed over one frame at a "
        "time, so a 250 ns NIC send latency capped every flow at 25.4 Gbps (1062 B per 335 ns, measured), and the time "
        "went into the switches instead (the pacer now pipelines the send path, `tx_pipeline_frames`).",
        "- Transport: RoCE with DCQCN, `preset = \"sfc_seed\"` (the slides' backup parameters: g 0.0009813, byte counter "
        "2 MiB, timer 4 µs, α timer 5 µs, AI 0.0125, hyper AI 0.025, CNP period 4 µs, window 15 µs), one flow (QP) per "
        "message; step ECN at 50 KB at dequeue. Local ACK timeout (`rto`): the NIC default 4.096 µs × 2^14 = 67.1 ms "
        "for PFC (shorter timeouts fire on flows that PFC only pauses), 1 ms for the designs that can drop, so that a "
        "lost last frame, which no NACK reports, is resent within the run (`LOSSY_RTO`).",
        "- Buffers as the slides: SFC and lossy runs a 16 MB egress pool (50 KB guaranteed per port, α 1; ingress "
        "accounting disabled); PFC runs a static 800 KB per ingress port, XOFF 650 KB, no egress pool. SFC: trigger "
        "100 KB, target 50 KB (64 KB in the fairness runs), suppression 6 µs per flow, on every switch (the proxy on "
        "every ToR).",
        "- Checked by tests (`crates/pl2-sim/tests/model/sfc.rs`, hand-worked timelines): a pause drains the queue to the "
        "target (`a_pause_drains_the_queue_to_the_target`: 52,428 B against the 50 KB target, the two frames sent while "
        "the signal travelled), suppression (`suppression_holds_repeats_for_its_period_then_the_next_crossing_signals`, "
        "`suppression_per_flow_tells_each_flow_and_per_source_one_of_them`), the proxy's PAUSE and its timing "
        "(`the_proxy_turns_the_signal_into_a_pfc_pause_at_the_senders_tor`: 2,379 quanta, sent the instant the signal "
        "clears the ToR's pipeline), egress drops counted and every frame accounted for "
        "(`sfc_without_pfc_can_drop_and_every_frame_is_accounted_for`), the seed's buffers lossless with PFC and dropping "
        "without (`tests/model/pfc.rs`, `the_sfc_seeds_buffer_settings_are_lossless_with_pfc_and_drop_at_the_egress_without`), "
        "the base RTT (above). The family's quick mode (`pl2 reproduce sfc --quick`: 30-to-1 incasts, 0.4 ms of arrivals) "
        "is `python/tests/test_reproduce_sfc.py::test_sfc_family_quick`, which asserts zero drops in every PFC run, frame "
        "conservation (created = delivered + consumed + dropped + in flight) and delivery of every incast and every "
        "message < 10 KB in every run. Speed: `bench/8-threetier320-rpc-incast-sfc.toml` (`pl2-bench`: this network "
        "and traffic under SFC, 1 ms simulated) ran at 1.83 M hops/s, 12.6 s wall (README, \"Speed\"; one run on a "
        "quiet machine at `89c96ad`).",
    ]


def pct(xs: Sequence[float], q: float) -> float | None:
    """Nearest-rank percentile (None when empty)."""
    if not xs:
        return None
    s = sorted(xs)
    return s[max(0, math.ceil(q * len(s)) - 1)]


def fmt(x: float | None, digits: int = 1) -> str:
    if x is None:
        return "–"
    if math.isinf(x):
        return "∞"
    return f"{x:,.{digits}f}"


def jain(xs: Sequence[float]) -> float | None:
    """Jain's fairness index (Σx)² / (n Σx²); None when empty or all zero."""
    s2 = sum(x * x for x in xs)
    if not xs or s2 == 0:
        return None
    return sum(xs) ** 2 / (len(xs) * s2)


def frame(rows: list[dict[str, Any]]) -> pl.DataFrame:
    return pl.DataFrame(rows, infer_schema_length=None)
