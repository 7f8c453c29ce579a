"""The Polo family's shared settings (issue 20, "The evaluation, reproduced"): the four
designs with the slides' settings, the network every experiment builds on, and helpers
that read a run into the numbers the sections report.

Every choice the slides leave open is a constant here, stated in the family's report
(`preamble`) and the same for the four designs:

- All links 1 Gbps. Base RTT 50 µs: the link delays of the longest host-to-host path sum
  to 25 µs one way (switch pipeline latency, pl2's default 350 ns per switch, and
  serialisation come on top).
- Every switch egress port holds at most 86 KB (86,000 B, a static port limit counting
  all its priority queues; dynamic thresholds off). Step ECN marking at 5 packets (the
  slides' "ECN threshold is 5": `step_packets`, frames of the arriving frame's priority
  queue counted whatever their size) on ECN-capable frames only: Polo's data; the
  baselines send none.
- NDP's switches trim (NDP cannot run without): each port's data FIFO holds 72,000 B and
  its header FIFO (priority 1, the preset's control class) 14,000 B, so a port still
  holds at most 86 KB and NDP trims where the others drop.
- Polo and pHost hash each flow onto one path (per-flow ECMP); Homa and NDP spray, as
  their presets say.
- The core bottleneck's background: one raw UDP flow of 1472 B payloads (1542 B on the
  wire) every 61.68 µs = 200 Mbps of wire bytes, at priority 0 (the lowest data
  priority), between two hosts that share only the core link with the experiment.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from pl2.scenario import Scenario

LINK = "1Gbps"
LINK_BPS = 1e9
PORT_LIMIT_B = 86_000
ECN_THRESHOLD_PACKETS = 5
#: The same threshold in bytes of full frames, for plots and text.
ECN_THRESHOLD_B = ECN_THRESHOLD_PACKETS * 1542
FRAME_WIRE = 1542
ADJOINT_WIRE = 84  # a minimum 64 B frame + preamble/SFD + IFG
FLOW_B = 100_000
ONE_WAY_US = 25.0
BG_PAYLOAD_B = 1472
BG_INTERVAL_NS = 61_680  # 1542 B × 8 / 200 Mbps
NDP_DATA_LIMIT_B = 72_000
NDP_HEADER_LIMIT_B = PORT_LIMIT_B - NDP_DATA_LIMIT_B

#: The four designs with the slides' settings ("Scheme"): each baseline's `preset = "polo"`.
DESIGNS: dict[str, dict[str, Any]] = {
    "Polo": {"kind": "polo"},
    "Homa": {"kind": "homa", "preset": "polo"},
    "NDP": {"kind": "ndp", "preset": "polo"},
    "pHost": {"kind": "phost", "preset": "polo", "paths": "per_flow"},
}
#: Payload bytes per full data frame (1500 B IP MTU) of each design's headers.
PAYLOAD: dict[str, int] = {"Polo": 1500, "Homa": 1456, "NDP": 1472, "pHost": 1500}
#: Header-sized frames each design sends per data packet across the data's path.
COLORS = {"Polo": "tab:blue", "Homa": "tab:red", "NDP": "tab:green", "pHost": "tab:orange",
          "Homa 5 ms": "tab:pink", "NDP rearm": "tab:olive", "Polo no pause": "tab:gray", "Polo receiver D": "tab:olive",
          "Polo pause to finish": "tab:pink", "Polo D bounded": "tab:cyan", "Polo no pause D bounded": "tab:purple", "Polo^a": "tab:cyan", "Polo^b": "tab:purple", "Polo^c": "tab:brown"}

#: Diagnostic Polo variants (not the slides' designs): each one open choice of
#: `docs/model.md` ("Polo") set the other way, to measure what that choice does.
VARIANTS: dict[str, dict[str, Any]] = {
    "Polo no pause": {"kind": "polo", "pause": False},
    # The two readings pl2 used before they were measured over the family (issue 20).
    "Polo receiver D": {"kind": "polo", "d_scope": "receiver"},
    "Polo pause to finish": {"kind": "polo", "pause_end": "flow_finish"},
    # Not in the slides: D grows only in an epoch that used at least half of it (RFC
    # 7661's validation of cwnd, `d_bound = "validated"`), the causal check of the
    # leaf–spine gap's measured mechanism (D without bound).
    "Polo D bounded": {"kind": "polo", "d_bound": "validated"},
    "Polo no pause D bounded": {"kind": "polo", "pause": False, "d_bound": "validated"},
}

#: Polo's ablations (issue 20): each a `[transport]` switch.
ABLATIONS: dict[str, dict[str, Any]] = {
    "Polo": {"kind": "polo"},
    "Polo^a": {"kind": "polo", "redirect_wasted_driving": False},
    "Polo^b": {"kind": "polo", "recovery_idle": False},
    "Polo^c": {"kind": "polo", "recovery_gap": False},
}


def preamble() -> list[str]:
    """The family index's settings lines."""
    return [
        "- Source: the Polo slides (`../shared/seeds/001_eef3ede4c86ec7b6.txt`, \"Evaluation\"); issue 20 fixes the "
        "settings the slides leave out. Designs: Polo (pl2 defaults, `docs/model.md` \"Polo\"), Homa `preset = \"polo\"` "
        "(8 priorities, overcommitment 2, spraying, 1 ms RESEND timeout, RTTbytes 12 packets), NDP `preset = \"polo\"` "
        "(2 priority queues, 1 ms RTO floor, initial window 12), pHost `preset = \"polo\"` (round-robin tokens, 12 free "
        "packets). Nothing is tuned to the slides.",
        "- Network, the same for all four: every link 1 Gbps; link delays sum to 25 µs one way on the longest path "
        "(base RTT 50 µs of propagation; pl2's 350 ns switch latency and serialisation on top); every egress port holds "
        f"at most {PORT_LIMIT_B:,} B (static port limit over all its priority queues, dynamic thresholds off); step ECN "
        f"marking at {ECN_THRESHOLD_PACKETS} packets queued at the frame's priority (`step_packets`, whatever their size) "
        "on ECN-capable frames, which only Polo's data are (the baselines' frames pass it unmarked and are not dropped "
        "by it). NDP's switches trim: data FIFO "
        f"{NDP_DATA_LIMIT_B:,} B, header FIFO {NDP_HEADER_LIMIT_B:,} B at priority 1, so a port still holds at most 86 KB "
        "and NDP trims where the others drop. Polo and pHost use per-flow ECMP, Homa and NDP spray.",
        f"- Flows are {FLOW_B // 1000} KB unless an experiment says otherwise; the core bottleneck's background is one "
        f"raw UDP flow of {BG_PAYLOAD_B} B payloads every {BG_INTERVAL_NS / 1000:.2f} µs (200 Mbps of wire bytes) at "
        "priority 0, the lowest data priority, crossing only the core link.",
        "- Hosts have no send or receive latency or CPU cost (pl2's defaults); one application thread each, except in the "
        "leaf–spine (256, so that no flow waits for a thread: pl2's Polo holds its sending thread until a flow's last "
        "packet is handed over, the others release it at once). Seeds change only random choices (NDP's paths and "
        "trimming draws, Homa's spraying, Polo's recovery 2 picking a random active flow, Poisson arrivals); the "
        "synchronised incasts make none for Homa and pHost (one path, no random draw in these designs, every sender starts "
        "at the same instant with no send-path jitter), so their seeds repeat (intervals ± 0), and Polo's differ only "
        "where recovery 2 fires.",
        "- Goodput is application payload delivered to the receiver per second; its upper bound for each design is the "
        "available bandwidth × payload / wire bytes of a full frame (Polo: × 1500 / (1542 + 84), its adjoint packet "
        "crosses the same bottleneck).",
    ]


def switch(design: str) -> dict[str, Any]:
    """The switch every experiment uses, with NDP's trimming queue for NDP."""
    sw: dict[str, Any] = {
        "dynamic_thresholds": False,
        "port_limit": f"{PORT_LIMIT_B}B",
        "ecn": {"kind": "step_packets", "threshold_packets": ECN_THRESHOLD_PACKETS},
    }
    if design == "NDP":
        sw["queue"] = {"kind": "trimming", "data_limit": {"bytes": f"{NDP_DATA_LIMIT_B}B"},
                       "header_limit": {"bytes": f"{NDP_HEADER_LIMIT_B}B"}, "header_prio": 1}
    return sw


def transport(design: str) -> dict[str, Any]:
    if design in DESIGNS:
        return copy.deepcopy(DESIGNS[design])
    if design in ABLATIONS:
        return copy.deepcopy(ABLATIONS[design])
    if design == "Homa 5 ms":
        return {"kind": "homa", "preset": "polo", "resend_timeout": "5ms"}
    if design in VARIANTS:
        return copy.deepcopy(VARIANTS[design])
    if design == "NDP rearm":
        # Diagnostic, not the slides': a timed-out resend may time out again (htsim's
        # NDP cannot, `rto_rearm = false`).
        return {"kind": "ndp", "preset": "polo", "rto_rearm": True}
    raise KeyError(design)


def base_design(design: str) -> str:
    for b in ("Homa", "Polo", "NDP"):
        if design.startswith(b):
            return b
    return design


def build(name: str, design: str, topology: Mapping[str, Any], workloads: Sequence[Mapping[str, Any]], *,
          duration_ms: float, link_delay: str | None = None, warmup_ms: float = 0.0, until_ms: float | None = None,
          background: bool = False, stop_when_delivered: bool = True, window: str = "10us",
          trace: Mapping[str, Any] | None = None, threads: int = 1) -> Scenario:
    """A scenario of the family: `topology` and `workloads` for `design`'s transport on
    the family's switch; `background` adds the raw UDP transport `bg`."""
    d: dict[str, Any] = {
        "name": name,
        "run": {"duration": _us(duration_ms * 1000), "warmup": _us(warmup_ms * 1000),
                "stop_when_delivered": stop_when_delivered},
        "network": {"topology": dict(topology), "link": {"rate": LINK, **({"delay": link_delay} if link_delay else {})},
                    "switch": switch(base_design(design)), **({"host": {"threads": threads}} if threads != 1 else {})},
        "metrics": {"window": window, "drop_records": False, "probes": False},
        "transport": transport(design),
        "workload": [dict(w) for w in workloads],
    }
    if until_ms is not None:
        d["run"]["measure_until"] = _us(until_ms * 1000)
    if background:
        d["transports"] = {"bg": {"kind": "raw", "headers": "udp", "priority": 0}}
    if trace is not None:
        d["metrics"]["trace"] = dict(trace)
    return Scenario.from_dict(d)


def _us(x: float) -> str:
    return f"{round(x * 1000)}ns"


def background(sender: int, receiver: int, duration_ms: float) -> dict[str, Any]:
    """The 200 Mbps constant-rate UDP flow: one frame every BG_INTERVAL_NS."""
    count = int(duration_ms * 1e6 / BG_INTERVAL_NS) + 1
    return {"kind": "incast", "senders": [sender], "receiver": receiver, "size": f"{BG_PAYLOAD_B}B",
            "count": count, "interval": f"{BG_INTERVAL_NS}ns", "transport": "bg"}


def goodput_bound_mbps(design: str, available_bps: float) -> float:
    """The most payload a design can deliver through `available_bps` of a bottleneck:
    full frames only, plus Polo's adjoint packet per data packet on the same path."""
    d = base_design(design)
    wire = FRAME_WIRE + (ADJOINT_WIRE if d == "Polo" else 0)
    return available_bps * PAYLOAD[d] / wire / 1e6


def flows(res: Any, receiver: int) -> pl.DataFrame:
    """The experiment's messages into `receiver` (the background goes elsewhere)."""
    m = res.messages
    return m.filter(pl.col("dst") == receiver)


def pct(xs: Sequence[float], q: float) -> float | None:
    """Nearest-rank percentile; inf counts (an unfinished flow); None if empty."""
    v = sorted(xs)
    if not v:
        return None
    k = max(1, math.ceil(q * len(v)))
    return v[k - 1]


def counters(summary: Mapping[str, Any], design: str) -> dict[str, Any]:
    """The loss and recovery counters of a run, the same columns for every design."""
    d = base_design(design)
    drops = summary.get("drops") or {}
    c = summary.get("counters") or {}
    t = summary.get({"Polo": "polo", "Homa": "homa", "NDP": "ndp", "pHost": "phost"}[d]) or {}
    if d == "Polo":
        to, rx = t.get("timeouts", 0), t.get("retransmissions", 0)
    elif d == "Homa":
        to, rx = t.get("resend_timeouts", 0), t.get("retransmissions", 0)
    elif d == "NDP":
        to = t.get("timeouts", 0)
        rx = t.get("retransmissions_pulled", 0) + t.get("retransmissions_rto", 0) + t.get("retransmissions_returned", 0)
    else:
        to, rx = t.get("rts_resent", 0), t.get("data_resent", 0)
    out = {
        "drops": int(sum(v for v in drops.values() if isinstance(v, (int, float)))),
        "trims": int(c.get("trims", 0) or 0),
        "timeouts": int(to or 0),
        "retransmissions": int(rx or 0),
        "aborted": int(t.get("aborted", 0) or 0),
        "driving_wasted": int(t.get("driving_wasted", 0) or 0) if d == "Polo" else 0,
        "gap_losses": int(t.get("gap_losses", 0) or 0) if d == "Polo" else 0,
        "idle_losses": int(t.get("idle_losses", 0) or 0) if d == "Polo" else 0,
        "duplicates": int(t.get("duplicates", 0) or 0) if d == "Polo" else 0,
    }
    return out


def polo_timeouts(trace: pl.DataFrame, receiver: int, rto_ps: int = 1_000_000_000) -> pl.DataFrame:
    """Every Polo sender timeout (recovery 3) in a full trace, classified from the frames.
    A timeout is a sender's data frame sent exactly `rto` after the later of the
    sender's previous frame and the last frame from the receiver that reached it (the
    timer's arming points). For each: the packet it resends, the highest packet of that
    sender the receiver had by then, whether every packet above that was dropped (a tail
    loss: no later packet exposes the gap to recovery 1), whether the resent packet had
    already arrived (a spurious timeout: nothing was lost, the receiver just did not
    drive this flow), how many frames the receiver sent to the sender while it waited,
    and how many data frames of other senders reached the receiver meanwhile (recovery 2
    needs two epochs with none)."""
    rx = f"h{receiver}"
    tx = trace.filter((pl.col("event") == "tx") & pl.col("node").str.starts_with("h") & (pl.col("node") != rx))
    back = trace.filter((pl.col("event") == "arrive") & (pl.col("src") == receiver) & (pl.col("node") != rx))
    arr = trace.filter((pl.col("event") == "arrive") & (pl.col("node") == rx) & (pl.col("kind") == "data"))
    drops = trace.filter((pl.col("event") == "drop") & (pl.col("kind") == "data"))
    ctl = trace.filter((pl.col("event") == "tx") & (pl.col("node") == rx))
    out = []
    for (node,), g in tx.group_by("node"):
        src = int(str(node)[1:])
        ev = sorted([(t, 0, k, q) for t, k, q in zip(g["time_ps"], g["kind"], g["seq"])]
                    + [(t, 1, "in", -1) for t in back.filter(pl.col("node") == node)["time_ps"]])
        last = None
        for t, is_in, kind, seq in ev:
            if not is_in and kind == "data" and last is not None and t - last == rto_ps:
                mine = arr.filter((pl.col("src") == src) & (pl.col("time_ps") < t))
                got = set(mine["seq"].to_list())
                high = max(got) if got else -1
                lost = set(drops.filter((pl.col("src") == src) & (pl.col("time_ps") < t))["seq"].to_list())
                out.append({
                    "sender": src, "armed_ps": last, "fired_ps": t, "resent_seq": seq, "highest_received": high,
                    "tail_lost": seq > high and all(k in lost for k in range(high + 1, seq + 1)),
                    "spurious": seq in got,
                    "receiver_frames_to_sender": ctl.filter((pl.col("dst") == src) & pl.col("time_ps").is_between(last, t)).height,
                    "other_data_arrivals": arr.filter((pl.col("src") != src) & pl.col("time_ps").is_between(last, t)).height,
                })
            last = t
    schema = {"sender": pl.Int64, "armed_ps": pl.Int64, "fired_ps": pl.Int64, "resent_seq": pl.Int64, "highest_received": pl.Int64,
              "tail_lost": pl.Boolean, "spurious": pl.Boolean, "receiver_frames_to_sender": pl.Int64, "other_data_arrivals": pl.Int64}
    return pl.DataFrame(out, schema=schema).sort("fired_ps")
