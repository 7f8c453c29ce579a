"""The receiver-driven family's shared settings (issue 19, "Slowdown by message size"):
the Homa paper's network as the Homa simulator builds it, the five transports with
their own recommended settings, the per-workload windows, and the size binning of the
Homa paper's slowdown figures.

The network (`PlatformLab/HomaSimulation` @ ab09ecb, `homatransport/src/dcntopo/`
`homaTransportConfig.ini:21-32`, `DcnTopo.ned:62-63,78-85,132-137`; notes in
`/work/notes/homa-phost-reference.md` §A1):

- 9 ToRs × 16 hosts = 144 hosts on 10 Gbps links; 4 spines (`numAggSwitches =
  16·10G / 40G`), every ToR linked to every spine at 40 Gbps.
- Every switch store-and-forward (`isFabricCutThrough = false`), no pipeline latency of
  its own: the simulator's `switchFixDelay = 0.25 µs` is the propagation delay of the
  ToR→host channel and of both directions of every ToR↔spine channel, and
  `hostNicSxThinkTime = 0.5 µs` that of the host→ToR channel. pl2's leaf–spine host
  links are symmetric, so each direction gets 375 ns (the same 0.75 µs over the two host
  links of any path, hence the same one-way and round-trip times); uplinks 250 ns.
- `hostSwTurnAroundTime = 0.5 µs` on the way out (before the NIC queue) and on the way
  in (after the frame's reception): pl2's `send_latency` and `recv_latency`.
- Cross-rack fixed one-way delay 0.5 + 0.375 + 0.25 + 0.25 + 0.375 + 0.5 = 2.25 µs, as in
  the simulator; serialisation on top, once per hop.

Switch queues: the simulator's are unbounded; pl2's switches get a 64 MiB shared buffer
with dynamic thresholds off and no port limit (no transport comes near it; drops are
counted and reported), eight strict priorities. Two transports need their own queue
discipline, so the switch is per run: NDP runs on trimming queues (8 full frames per
data FIFO, htsim's `-q 8`, the NDP paper's 8-packet queues), DCTCP on step ECN marking at K = 65 full frames
(the value of the DCTCP paper's 10 Gbps experiments, Alizadeh et al., SIGCOMM 2010). Everything else is identical.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from pl2.scenario import Scenario

LEAVES, PER_LEAF, SPINES = 9, 16, 4
HOSTS = LEAVES * PER_LEAF
HOST_RATE, FABRIC_RATE = "10Gbps", "40Gbps"
HOST_LINK_BPS = 10e9
#: Host-link propagation delay each way (the simulator's 500 ns up + 250 ns down, split evenly).
HOST_LINK_DELAY = "375ns"
#: ToR↔spine propagation delay (`switchFixDelay`).
UPLINK_DELAY = "250ns"
#: `hostSwTurnAroundTime`, on the send and on the receive path.
HOST_DELAY = "500ns"
BUFFER = "64MiB"
FRAME_WIRE = 1542  # a full 1500 B IP packet on the wire (802.1Q tag, FCS, preamble, IFG)
NDP_DATA_FRAMES = 8
DCTCP_K_FRAMES = 65
#: RTTbytes of RDS: the Homa simulator's rttBytes (`homaTransportConfig.ini:36`), the
#: round trip of a full frame one way and a grant back in this network (9.6 KB, rounded up).
RDS_RTT_BYTES = "10000B"

TRANSPORTS = ["Homa", "pHost", "NDP", "DCTCP", "RDS"]
COLORS = {"Homa": "tab:red", "pHost": "tab:orange", "NDP": "tab:green", "DCTCP": "tab:blue", "RDS": "tab:purple"}
WORKLOADS = ["w1", "w2", "w3", "w4", "w5"]
LOADS = [0.5, 0.8]

#: Each transport's recommended settings (docs/scenario-reference.md for every default).
_TRANSPORT: dict[str, dict[str, Any]] = {
    # The Homa simulator's configuration: RTTbytes derived from this network, unscheduled
    # levels and cut-offs from the workload (crates/pl2-scenario/src/homa.rs), spraying.
    "Homa": {"kind": "homa", "preset": "reference"},
    # YAPS's pHost: ≤ 8-packet flows unsolicited, SRPT tokens, per-packet spraying.
    "pHost": {"kind": "phost", "preset": "yaps"},
    # pl2's NDP defaults, htsim's (initial window 23, the largest of the NDP paper's incast
    # runs; 5 ms RTO floor, `DEFAULT_RTO_MIN`), paths
    # permuted per packet (source routing).
    "NDP": {"kind": "ndp"},
    # TCP with DCTCP (RFC 8257), pl2's TCP defaults (SACK, delayed ACKs, IW 10, 1 ms
    # minimum RTO), per-flow ECMP.
    "DCTCP": {"kind": "tcp", "cc": "dctcp"},
    # The PL2 paper's RDS (4 packets per grant, overcommitment 1, round robin), RTTbytes
    # of this network.
    "RDS": {"kind": "rds", "rtt_bytes": RDS_RTT_BYTES},
}

#: How each transport's data spread over the four spines.
PATHS = {"Homa": "packet spraying", "pHost": "packet spraying", "NDP": "per-packet source routes (permutation)",
         "DCTCP": "per-flow ECMP", "RDS": "per-flow ECMP"}


def transport(name: str) -> dict[str, Any]:
    return copy.deepcopy(_TRANSPORT[name])


def switch(name: str) -> dict[str, Any]:
    """The switch of a run of `name`: the same for all, plus NDP's trimming queues or
    DCTCP's ECN marking."""
    sw: dict[str, Any] = {"buffer": BUFFER, "dynamic_thresholds": False, "cut_through": False, "latency": "0ns"}
    if name == "NDP":
        sw["queue"] = {"kind": "trimming", "data_limit": {"frames": NDP_DATA_FRAMES}}
    if name == "DCTCP":
        sw["ecn"] = {"kind": "step", "threshold": f"{DCTCP_K_FRAMES * FRAME_WIRE}B"}
    return sw


def topology() -> dict[str, Any]:
    return {"kind": "leaf_spine", "leaves": LEAVES, "spines": SPINES, "hosts_per_leaf": PER_LEAF,
            "uplink": {"rate": FABRIC_RATE, "delay": UPLINK_DELAY}}


#: Threads per host: enough that no message waits for one (every transport here releases
#: the sending thread when the message is handed over, TCP when it is in the send buffer).
THREADS = 64


def build(name: str, tp: str, workload: str, load: float, *, warmup_us: float, until_us: float,
          duration_us: float) -> Scenario:
    """All-to-all Poisson arrivals of `workload` at `load` of every host's link, carried by
    transport `tp`; arrivals stop at `until_us`; messages that arrive in
    [`warmup_us`, `until_us`) are measured; the run lasts until they are all delivered or
    `duration_us`."""
    d: dict[str, Any] = {
        "name": name,
        "run": {"duration": _ns(duration_us), "warmup": _ns(warmup_us), "measure_until": _ns(until_us),
                "stop_when_delivered": True},
        "network": {
            "topology": topology(),
            "link": {"rate": HOST_RATE, "delay": HOST_LINK_DELAY},
            "host": {"threads": THREADS, "send_latency": HOST_DELAY, "recv_latency": HOST_DELAY},
            "switch": switch(tp),
        },
        "metrics": {"window": "100us", "drop_records": False, "probes": False, "breakdown": True},
        "transport": transport(tp),
        "workload": [{"kind": "poisson", "load": load, "sizes": workload, "stop": _ns(until_us)}],
    }
    return Scenario.from_dict(d)


#: Message sizes sent alone (one at a time, cross-rack h0 → h100) to measure each
#: transport's own completion time alone in this network against pl2's ideal.
ALONE_SIZES = [100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000]
ALONE_GAP_US = 20_000.0
#: Diagnostics of the alone runs (not the transports' recommended settings): what
#: removes each one's gap to the ideal.
ALONE_DIAGNOSTICS: dict[str, tuple[str, dict[str, Any], dict[str, Any]]] = {
    "pHost, no host delays": ("pHost", {}, {"send_latency": "0ns", "recv_latency": "0ns"}),
    "pHost, window 16 tokens": ("pHost", {"window_tokens": 16}, {}),
    "RDS, RTTbytes 20000 B": ("RDS", {"rtt_bytes": "20000B"}, {}),
}


def build_alone(name: str, tp: str, overrides: Mapping[str, Any] | None = None,
                host: Mapping[str, Any] | None = None) -> Scenario:
    """One message of each of ALONE_SIZES from host 0 to host 100 (another rack), each
    sent ALONE_GAP_US after the previous one, long after it is delivered."""
    sc = build(name, tp, "w3", 0.5, warmup_us=0, until_us=ALONE_GAP_US * len(ALONE_SIZES),
               duration_us=ALONE_GAP_US * (len(ALONE_SIZES) + 1))
    d = sc.to_dict()
    d["transport"].update(overrides or {})
    d["network"]["host"].update(host or {})
    d["workload"] = [{"kind": "incast", "senders": [0], "receiver": 100, "size": f"{s}B", "count": 1,
                      "start": _ns(i * ALONE_GAP_US)} for i, s in enumerate(ALONE_SIZES)]
    return Scenario.from_dict(d)


def _ns(us: float) -> str:
    return f"{round(us * 1000)}ns"


def pct(xs: Sequence[float], q: float) -> float | None:
    """Nearest-rank percentile; inf counts (an unfinished message); None if empty."""
    v = sorted(xs)
    if not v:
        return None
    k = max(1, math.ceil(q * len(v)))
    return v[k - 1]


def size_bins(sizes: pl.Series, n: int = 10) -> list[tuple[int, int, str]]:
    """Bins of message size by the workload's size percentiles, as the Homa paper's
    slowdown figures lay out their x axis: the sizes are cut at the 10th, 20th, … 100th
    percentile of the measured messages (equal message counts per bin, merged where the
    workload repeats a size). Each bin is (lo, hi], labelled by its upper size."""
    v = sorted(int(x) for x in sizes.to_list())
    if not v:
        return []
    edges: list[int] = []
    for i in range(1, n + 1):
        e = v[min(len(v) - 1, math.ceil(i / n * len(v)) - 1)]
        if not edges or e > edges[-1]:
            edges.append(e)
    out, lo = [], 0
    for e in edges:
        out.append((lo, e, human(e)))
        lo = e
    return out


def human(b: float) -> str:
    for unit, k in (("MB", 1e6), ("KB", 1e3)):
        if b >= k:
            return f"{b / k:.3g} {unit}"
    return f"{int(b)} B"


def counters(summary: Mapping[str, Any], tp: str) -> dict[str, int]:
    """Drops, trims and each transport's recovery counters, the same columns for all."""
    drops = summary.get("drops") or {}
    c = summary.get("counters") or {}
    t = summary.get({"Homa": "homa", "pHost": "phost", "NDP": "ndp", "DCTCP": "tcp", "RDS": "rds"}[tp]) or {}
    if tp == "Homa":
        to, rx = t.get("resend_timeouts", 0), t.get("retransmissions", 0)
    elif tp == "NDP":
        to = t.get("timeouts", 0)
        rx = t.get("retransmissions_pulled", 0) + t.get("retransmissions_rto", 0) + t.get("retransmissions_returned", 0)
    elif tp == "pHost":
        to, rx = t.get("rts_resent", 0), t.get("data_resent", 0)
    elif tp == "DCTCP":
        to, rx = t.get("timeouts", 0), t.get("retransmissions", 0)
    else:  # RDS: the sender's timeout resends the unscheduled packets, the receiver's NACKs
        to, rx = t.get("sender_timeouts", 0) + t.get("receiver_timeouts", 0), t.get("retransmissions", 0)
    return {
        "drops": int(sum(v for v in drops.values() if isinstance(v, (int, float)))),
        "trims": int(c.get("trims", 0) or 0),
        "timeouts": int(to or 0),
        "retransmissions": int(rx or 0),
    }


def preamble() -> list[str]:
    """The family index's settings lines."""
    return [
        "- Source: issue 19, \"Slowdown by message size\"; the network and Homa's settings are the Homa simulator's "
        "(`PlatformLab/HomaSimulation` @ ab09ecb, `homatransport/src/dcntopo/homaTransportConfig.ini`, `DcnTopo.ned`), "
        "read from the code (notes: `/work/notes/homa-phost-reference.md` §A1–A10). Nothing is tuned to the Homa paper.",
        f"- Network: leaf–spine, {LEAVES} ToRs × {PER_LEAF} hosts = {HOSTS} hosts on {HOST_RATE} links, {SPINES} spines, every "
        f"ToR linked to every spine at {FABRIC_RATE} (`numAggSwitches = 16·10G/40G`, `DcnTopo.ned:62-63`); 1500 B IP MTU, "
        "Ethernet with an 802.1Q tag (needed for priorities: 1542 B on the wire per full frame, 4 B more than the "
        "simulator's untagged 1538 B).",
        f"- Delays (`homaTransportConfig.ini:21-32`, `DcnTopo.ned:78-85,132-137`, `Lagger.cc`): host send and receive "
        f"path {HOST_DELAY} each (`hostSwTurnAroundTime`), host links {HOST_LINK_DELAY} each way (the simulator's "
        f"`hostNicSxThinkTime` = 500 ns host→ToR and `switchFixDelay` = 250 ns ToR→host, split evenly because pl2's "
        f"host links are symmetric: the same 0.75 µs over any path's two host links), ToR↔spine links {UPLINK_DELAY} "
        "(`switchFixDelay`); switches store-and-forward (`isFabricCutThrough = false`) with no pipeline latency of their "
        "own. Fixed one-way delay across racks 2.25 µs, within a rack 1.75 µs, as in the simulator; serialisation on top "
        "once per hop.",
        f"- Switches: 8 strict-priority queues per port, {BUFFER} shared buffer without dynamic thresholds or port limit "
        "(the simulator's queues are unbounded); NDP's runs on trimming queues "
        f"({NDP_DATA_FRAMES} full frames per data FIFO), DCTCP's with step ECN marking at {DCTCP_K_FRAMES} full frames. "
        "The switch is chosen per run; nothing else differs between transports.",
        f"- Hosts: {THREADS} application threads each, so that no message waits for one; no CPU cost per packet or message.",
    ]
