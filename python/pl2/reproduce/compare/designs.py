"""The design registry of the `compare` family (issue 26): every transport pl2 has,
each with its own recommended settings and the switch features it needs, so that one
base scenario per experiment (network, workload, run) drives every design and only
`[transport]` and the switch keys below change.

A design is a `[transport]` table plus a dict merged into `[network.switch]`; each
setting has a one-line rationale and its source. `apply(base, design)` builds the
design's scenario dict from the experiment's base dict, and `diff(design)` lists the
keys it changes, for the report. Settings scale with the link where the source says how
(`for_link`): the ECN thresholds of DCTCP and Polo count full frames, DCQCN's and SFC's
are the byte values their sources give at 100 Gbps.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

FULL_FRAME_WIRE = 1542


@dataclass(frozen=True)
class Design:
    """One design: its `[transport]` table, the keys it merges into `[network.switch]`,
    and per setting a (value, rationale and source) line for the report."""

    name: str
    transport: dict[str, Any]
    switch: dict[str, Any] = field(default_factory=dict)
    settings: tuple[str, ...] = ()
    color: str = "k"
    #: Whether it needs a single rack (no design does since PL2 runs across racks, §7;
    #: kept so a design that cannot leave the rack is shown with pl2's refusal).
    rack_only: bool = False


def designs(link_gbps: float = 100.0) -> dict[str, Design]:
    """Every design at a link rate of `link_gbps` (100 in the rack and the pod, 1 in
    Polo's core incast)."""
    # The DCTCP paper's K: 20 packets at 1 Gbps, 65 at 10 Gbps and above.
    dctcp_frames = 20 if link_gbps < 10 else 65
    dctcp_k = dctcp_frames * FULL_FRAME_WIRE
    polo_k = 5 * FULL_FRAME_WIRE
    pfc = {"priorities": [3], "xoff": {"bytes": "100KB"}}
    dcqcn_ecn = {"kind": "red", "min": "5KB", "max": "200KB", "p_max": 0.01, "at_dequeue": True}

    def three(**more: Any) -> dict[str, Any]:
        """Polo with the three settings that help its W5 tail (first burst 36, no pause,
        short first), and `more`."""
        return {"kind": "polo", "initial_window_packets": 36, "pause": False,
                "short_first": {"max_bytes": "100KB", "priority": 2}, **more}

    def ecn65(**more: Any) -> dict[str, Any]:
        """Switch keys: step marking at 65 full frames (DCTCP's K at 10 Gbps and above), and `more`."""
        return {"ecn": {"kind": "step", "threshold": f"{65 * FULL_FRAME_WIRE}B"}, **more}

    out = [
        Design("PL2", {"kind": "pl2", "k": 4, "t": 15}, {}, (
            "K = 4 packets per burst, t = 15 (PL2 §6.1, the testbed's setting); Algorithm 1 as written (decrement at "
            "ingress, T = 128 unsolicited rule, low-load optimisation on): pl2's defaults, `docs/model.md` \"Which PL2 "
            "to run\".",
            "Switch: none beyond each ToR's PL2 program (installed by the transport). Across racks (the pod, Polo's "
            "core) each ToR schedules its hosts and its uplinks as one port; frames between racks cross the fabric "
            "unscheduled into the share of each port kept free, §7's 10 % by default with several racks "
            "(`external_share_ppm`; 0 in one rack).",
        ), "tab:blue"),
        Design("PL2 deq+imp", {"kind": "pl2", "k": 4, "t": 15, "decrement_at": "dequeue", "improved": True}, {}, (
            "PL2 with the two changes that close Algorithm 1's overflow holes (`decrement_at = \"dequeue\"`, "
            "`improved = true`; `docs/model.md` \"Which PL2 to run\", results/paper Fig. 7–9).",
        ), "tab:cyan"),
        Design("RDS", {"kind": "rds", "rtt_bytes": "61KiB", "grant_packets": 4, "receiver_timeout": "1ms", "sender_timeout": "1ms"}, {}, (
            "RTTbytes 61 KiB unscheduled, grants of 4 packets, 1 ms receiver and sender timeouts: the PL2 paper's "
            "RDS baseline (§2, Fig. 1), as `reproduce/fig1.py` runs it.",
        ), "tab:red", False),
        Design("DCTCP", {"kind": "tcp", "cc": "dctcp"}, {"ecn": {"kind": "step", "threshold": f"{dctcp_k}B"}}, (
            "TCP with DCTCP (RFC 8257, g = 1/16), SACK, 1 ms min RTO, delayed ACKs (pl2's TCP defaults).",
            f"Switch: step ECN marking at K = {dctcp_frames} full frames ({dctcp_k:,} B), the DCTCP paper's K ("
            "20 packets at 1 Gbps, 65 at 10 Gbps; at 100 Gbps 65 still satisfies its rule K > C·RTT/7 for a rack RTT "
            "< 60 µs, and matches `experiments/lossless`'s 100 KB).",
        ), "tab:green", False),
        Design("Cubic", {"kind": "tcp", "cc": "cubic"}, {}, (
            "TCP Cubic (RFC 9438), SACK, 1 ms min RTO: pl2's TCP defaults, as in `reproduce/fig8.py`/`fig9.py`. For "
            "context only: no switch support.",
        ), "tab:olive", False),
        Design("Homa", {"kind": "homa"}, {}, (
            "Homa `preset = \"reference\"` (HomaSimulation's `homaTransportConfig.ini`): 8 priority levels split by "
            "the workload, overcommitment = scheduled levels, RTTbytes = the network's base round trip × link rate "
            "(derived), packet spraying, 10 ms RESEND timeout.",
        ), "tab:purple", False),
        Design("NDP", {"kind": "ndp"},
               {"queue": {"kind": "trimming", "data_limit": {"frames": 8}, "header_overflow": "return_to_sender"}}, (
            "NDP pl2 defaults (htsim): initial window 23 packets, PULL pacing at 0.99 of the link, control at "
            "priority 7, 5 ms RTO floor, spraying.",
            "Switch: every port a trimming queue with 8-frame data FIFOs (the NDP paper's 8-packet queues, §3; "
            "htsim `-q 8`), header FIFO twice that in bytes (htsim's default), and a header the header FIFO cannot "
            "hold returned to its sender (`header_overflow = \"return_to_sender\"`, the NDP paper's return-to-sender, "
            "§3.2; htsim and pl2 drop it by default, which leaves the sender to its retransmission timeout).",
        ), "tab:brown", False),
        Design("pHost", {"kind": "phost"}, {}, (
            "pHost `preset = \"yaps\"` (the reference simulator YAPS): flows of ≤ 8 packets sent whole, SRPT tokens, "
            "8-token window, packet spraying, control at priority 7.",
        ), "tab:orange", False),
        Design("Polo", {"kind": "polo"}, {"ecn": {"kind": "step", "threshold": f"{polo_k}B"}}, (
            "Polo pl2 defaults (`docs/model.md` \"Polo\", the Polo slides).",
            f"Switch: step ECN marking at 5 full frames ({polo_k:,} B) on Polo's ECN-capable data, the slides' "
            "threshold (given at 1 Gbps; kept in frames at 100 Gbps).",
        ), "tab:gray", False),
        Design("RoCE+PFC", {"kind": "roce", "preset": "dcqcn_paper"}, {"ecn": dcqcn_ecn, "pfc": pfc}, (
            "RoCE (go-back-N) with DCQCN `preset = \"dcqcn_paper\"` (Zhu et al., SIGCOMM 2015: g = 1/256, T = 55 µs, "
            "B = 10 MB, R_AI 40 Mbps), data in the lossless class 3.",
            "Switch: RED ECN at dequeue Kmin 5 KB, Kmax 200 KB, Pmax 1 % (the DCQCN paper's, as examples/roce-dcqcn-incast.toml); PFC on priority 3 with "
            "XOFF 100 KB per (ingress port, priority) and the default headroom (`experiments/lossless`).",
        ), "tab:pink", False),
        Design("SFC", {"kind": "roce", "preset": "sfc_seed"},
               {"ecn": {"kind": "step", "threshold": "50KB", "at_dequeue": True}, "pfc": pfc,
                "sfc": {"trigger": "100KB", "target": "50KB", "suppression": "6us"}}, (
            "RoCE with DCQCN `preset = \"sfc_seed\"` (the SFC slides' backup slide) and Source Flow Control "
            "(802.1Qdw): signal at 100 KB of egress queue, pause to drain to 50 KB, 6 µs suppression per flow "
            "(the slides' values, `examples/sfc-incast.toml`).",
            "Switch: step ECN at 50 KB at dequeue (the slides), PFC on priority 3 as RoCE+PFC (SFC runs inside a "
            "lossless class; PFC is its backstop).",
        ), "k", False),
        # Diagnostic (not in ORDER): NDP with htsim's (and pl2's) default for headers the
        # header FIFO cannot hold, dropping them, instead of the paper's return-to-sender.
        Design("NDP header drop", {"kind": "ndp"}, {"queue": {"kind": "trimming", "data_limit": {"frames": 8}}}, (
            "NDP as above with htsim's default `header_overflow = \"drop\"`: a header the header FIFO cannot hold "
            "is dropped, and its sender learns of it only by its retransmission timeout.",
        ), "tab:brown", False),
        # Diagnostics of the rack incast (not in ORDER): each changes the one setting an
        # explanation of `compare-rack` blames.
        Design("Homa 1 ms RESEND", {"kind": "homa", "resend_timeout": "1ms"}, {}, (
            "Homa as above with the RESEND timeout of its `polo` preset, 1 ms, instead of the reference 10 ms.",
        ), "tab:purple", False),
        Design("pHost rack timers", {"kind": "phost", "token_ttl_mtus": 40.0, "resend_timeout_mtus": 40.0}, {}, (
            "pHost as above with a token's life and the regrant delay at 40 MTU wire times (4.9 µs at 100 Gbps, "
            "longer than the testbed rack's round trip) instead of YAPS's 1.5 and 9.",
        ), "tab:orange", False),
        Design("Polo first burst 36", {"kind": "polo", "initial_window_packets": 36}, {"ecn": {"kind": "step", "threshold": f"{polo_k}B"}}, (
            "Polo as above with a first burst of 36 packets (about one pod round trip at 100 Gbps) instead of 12.",
        ), "tab:gray", False),
        Design("Polo no pause", {"kind": "polo", "pause": False}, {"ecn": {"kind": "step", "threshold": f"{polo_k}B"}}, (
            "Polo as above without pausing new flows at a marked receiver (`pause = false`).",
        ), "tab:gray", False),
        Design("Polo D bounded", {"kind": "polo", "d_bound": "validated"}, {"ecn": {"kind": "step", "threshold": f"{polo_k}B"}}, (
            "Polo as above with D grown only while the flow's last epoch used at least half of it (`d_bound = "
            "\"validated\"`, RFC 7661's rule; `docs/model.md` \"Polo\").",
        ), "tab:gray", False),
        Design("Polo sprayed", {"kind": "polo"}, {"ecn": {"kind": "step", "threshold": f"{polo_k}B"}, "ecmp": "per_packet"}, (
            "Polo as above with every switch spraying packets over its equal-cost next hops (`ecmp = \"per_packet\"`, "
            "as Homa, NDP and pHost do) instead of pl2's per-flow hash.",
        ), "tab:gray", False),
        Design("Polo ECN 65", {"kind": "polo"}, ecn65(), (
            f"Polo as above with its switches marking at 65 full frames ({65 * FULL_FRAME_WIRE:,} B, DCTCP's K at 10 Gbps "
            "and above, as the DCTCP row) instead of the slides' 5.",
        ), "tab:gray", False),
        Design("Polo D per receiver", {"kind": "polo", "d_scope": "receiver"}, {"ecn": {"kind": "step", "threshold": f"{polo_k}B"}}, (
            "Polo as above with one D per receiver, shared by its active flows (`d_scope = \"receiver\"`), instead of "
            "one per flow (`docs/model.md` \"Polo\": the slides leave the sharing open).",
        ), "tab:gray", False),
        Design("Polo short first", {"kind": "polo", "short_first": {"max_bytes": "100KB", "priority": 2}},
               {"ecn": {"kind": "step", "threshold": f"{polo_k}B"}}, (
            "Polo as above with the first transmissions of messages of at most 100 KB at priority 2 instead of 0 "
            "(`short_first`, not in the slides: `docs/model.md` \"Polo\"), as Homa's priorities favour short messages.",
        ), "tab:gray", False),
        Design("Polo all four", {"kind": "polo", "initial_window_packets": 36, "pause": False, "d_bound": "validated"},
               {"ecn": {"kind": "step", "threshold": f"{polo_k}B"}, "ecmp": "per_packet"}, (
            "Polo as above with the four changes of `Polo first burst 36`, `Polo no pause`, `Polo D bounded` and "
            "`Polo sprayed` together.",
        ), "tab:gray", False),
        Design("Polo three that help", three(),
               {"ecn": {"kind": "step", "threshold": f"{polo_k}B"}}, (
            "Polo as above with the three changes that close part of its W5 tail gap alone, pooled over seeds "
            "(`Polo first burst 36`, `Polo no pause`, `Polo short first`), together.",
        ), "tab:gray", False),
        Design("Polo three + ECN 65", three(), ecn65(), (
            "`Polo three that help` with its switches marking at 65 full frames, as `Polo ECN 65`.",
        ), "tab:gray", False),
        Design("Polo three + ECN 65 sprayed", three(), ecn65(ecmp="per_packet"), (
            "`Polo three + ECN 65` with every switch spraying packets over its equal-cost next hops, as `Polo sprayed`.",
        ), "tab:gray", False),
        Design("Polo three + ECN 65 sprayed no gap", three(recovery_gap=False), ecn65(ecmp="per_packet"), (
            "`Polo three + ECN 65 sprayed` without recovery 1 (`recovery_gap = false`: a sequence gap, which spraying "
            "makes of reordering, is not taken for a loss; recovery 2 and the sender's timeout remain).",
        ), "tab:gray", False),
        Design("SFC pause 6us", {"kind": "roce", "preset": "sfc_seed"},
               {"ecn": {"kind": "step", "threshold": "50KB", "at_dequeue": True}, "pfc": pfc,
                "sfc": {"trigger": "100KB", "target": "50KB", "suppression": "6us",
                        "pause_time": {"kind": "fixed", "time": "6us"}}}, (
            "SFC as above with every signal's pause fixed at the 6 µs suppression period (`pause_time = { kind = "
            "\"fixed\", time = \"6us\" }`) instead of the time the port needs to drain to the target.",
        ), "k", False),
        Design("pHost long tokens", {"kind": "phost", "token_ttl_mtus": 1000.0}, {}, (
            "pHost as above with a token's life (free tokens' included) at 1000 MTU wire times (123 µs at 100 Gbps) "
            "instead of YAPS's 1.5: tokens no longer expire at a busy sender.",
        ), "tab:orange", False),
        Design("pHost late regrant", {"kind": "phost", "resend_timeout_mtus": 1000.0}, {}, (
            "pHost as above with the receiver's wait before granting again every packet still missing at 1000 MTU "
            "wire times (123 µs at 100 Gbps) instead of YAPS's 9: no re-grant of a packet still on its way.",
        ), "tab:orange", False),
        Design("pHost round robin", {"kind": "phost", "scheduling": "round_robin"}, {}, (
            "pHost as above with the receiver giving its tokens to its flows in turn (`scheduling = \"round_robin\"`, "
            "Polo's evaluation's pHost) instead of YAPS's fewest-packets-missing-first (SRPT).",
        ), "tab:orange", False),
        Design("pHost window 64", {"kind": "phost", "window_tokens": 64}, {}, (
            "pHost as above with 64 tokens a flow may have outstanding instead of YAPS's 8.",
        ), "tab:orange", False),
        Design("pHost both timers", {"kind": "phost", "token_ttl_mtus": 1000.0, "resend_timeout_mtus": 1000.0}, {}, (
            "pHost as above with `pHost long tokens` and `pHost late regrant` together: tokens living 1000 MTU wire "
            "times and the re-grant after 1000.",
        ), "tab:orange", False),
        # Diagnostic of the pod (not in ORDER): PL2 with its leaves' uplinks taken in turn
        # rather than by a per-flow hash, to measure what ECMP collisions cost it (§7).
        Design("PL2 uplinks round robin", {"kind": "pl2", "k": 4, "t": 15}, {"ecmp": "round_robin"}, (
            "PL2 as above with every switch taking its equal-cost next hops in turn (`ecmp = \"round_robin\"`) "
            "instead of by a per-flow hash, so a leaf's frames spread evenly over the 8 uplinks it books as one port.",
        ), "tab:blue", False),
        Design("PL2 drift fix", {"kind": "pl2", "k": 4, "t": 15, "suppress_excess_decrements": True}, {}, (
            "PL2 as above with `suppress_excess_decrements = true`: a burst's packets beyond its reservation (the "
            "resent copy of an unsolicited burst whose original passed) do not decrement the counters.",
        ), "tab:blue", False),
    ]
    return {d.name: d for d in out}


#: The order designs appear in tables and plots.
ORDER = ["PL2", "PL2 deq+imp", "RDS", "DCTCP", "Cubic", "Homa", "NDP", "pHost", "Polo", "RoCE+PFC", "SFC"]


def _merge(a: dict[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(a)
    for k, v in b.items():
        if isinstance(v, Mapping) and isinstance(out.get(k), dict):
            out[k] = _merge(out[k], v)
        else:
            out[k] = copy.deepcopy(v)
    return out


def apply(base: Mapping[str, Any], d: Design, name: str | None = None) -> dict[str, Any]:
    """The design's scenario dict: the experiment's `base` with `[transport]` set to the
    design's and its switch keys merged into `[network.switch]`. Nothing else changes."""
    out = copy.deepcopy(dict(base))
    out["transport"] = copy.deepcopy(d.transport)
    if d.switch:
        net = out.setdefault("network", {})
        net["switch"] = _merge(net.get("switch") or {}, d.switch)
    if name is not None:
        out["name"] = name
    return out


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return '"' + v.replace('"', '\\"') + '"'
    if isinstance(v, Mapping):
        return "{ " + ", ".join(f"{k} = {_toml_value(x)}" for k, x in v.items()) + " }"
    return "[" + ", ".join(_toml_value(x) for x in v) + "]"


def diff(d: Design) -> str:
    """The design's change to the base scenario: its `[transport]` table and the
    `[network.switch]` keys it sets, as one line of TOML-like text."""
    out = "[transport] " + ", ".join(f"{k} = {_toml_value(v)}" for k, v in d.transport.items())
    if d.switch:
        out += "; [network.switch] " + ", ".join(f"{k} = {_toml_value(v)}" for k, v in d.switch.items())
    return out


def settings_table(names: list[str], link_gbps: float = 100.0) -> str:
    """The Markdown table of the designs' settings: the scenario diff and the sources."""
    from pl2.reproduce.common import table

    reg = designs(link_gbps)
    return table(["design", "change to the base scenario", "settings, rationale and source"],
                 [[n, f"`{diff(reg[n])}`", " ".join(reg[n].settings)] for n in names])


def preamble() -> list[str]:
    """The family index's lines: what is compared, and every design's settings."""
    reg = designs()
    return [
        "- Issue 26: every transport pl2 has, each with its own recommended settings, on the same switches, links and "
        "workloads. Each experiment has ONE base scenario (network, workload, run; printed in its section); a design "
        "only replaces `[transport]` and merges the switch features it needs into `[network.switch]` "
        "(`pl2/reproduce/compare/designs.py`). Nothing is tuned to any paper.",
        "- PL2 is shown twice: Algorithm 1 as written (K = 4, t = 15, pl2's faithful default) and with decrement at "
        "dequeue + improved unsolicited admission (`PL2 deq+imp`), the variant `docs/model.md` recommends for the "
        "behaviour the paper reports. Cubic is there for context (no switch support).",
        "- Diagnostic rows are labelled as such and are not designs of the comparison: the rack's one-sender run "
        "without the testbed's send path, the reruns of its incast that each change one setting and pHost's closed "
        "loop with one thread per sender and no host or switch delay; PL2 with only its counter drift suppressed and "
        "pHost with one of YAPS's two timers raised in the microburst; NDP with htsim's default of dropping the "
        "headers its header FIFO cannot hold, Polo without its pause and SFC with every pause fixed at 6 µs in the "
        "pod's incast, PL2 with its uplinks taken in turn rather than by a per-flow hash in the pod, Polo with one "
        "of seven settings changed (then the first four together, the three that help alone together, and those three "
        "with ECN marking at 65 frames, then also sprayed, with and without recovery 1) and each of Polo's and Homa's measured messages run alone in the "
        "pod's W5 tail, Polo's long flows sharing one receiver's link in the pod (with and without those changes, Homa "
        "beside), and pHost with one of three settings changed for its unfinished W5 messages; PL2 with its "
        "external share set to the background's 20 % in Polo's core network.",
        "- Each section ends with what surprised us and why: every explanation cites counters of the runs (drops by "
        "cause, trims, timeouts, resends, expired tokens, ECN marks, PFC pauses, SFC signals, queue maxima) or a "
        "diagnostic run that changes the one setting it blames.",
        "- Designs at 100 Gbps (the rack, the microburst, the pod; Polo's core incast states its 1 Gbps changes):",
        *[f"  - **{n}**: `{diff(reg[n])}`. {' '.join(reg[n].settings)}" for n in ORDER],
    ]
