"""Shared pieces of the `compare` family: one base scenario per experiment, every design
run on it (`jobs`), the same measurements read from every run (`measure`), the pooled
table, the plot, and the report's "same scenario" block (`base_block`)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import polars as pl

from pl2.reproduce.common import Context, Job, table
from pl2.reproduce.compare.designs import ORDER, Design, apply, designs, settings_table
from pl2.scenario import Scenario

#: Each transport's summary key and its loss-recovery counters (resends, timeouts).
RECOVERY: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "pl2": (("resent_bursts",), ("retries",)),
    "rds": (("retransmissions",), ("timeouts", "receiver_timeouts", "sender_timeouts")),
    "tcp": (("retransmissions",), ("timeouts",)),
    "homa": (("retransmissions",), ("resend_timeouts",)),
    "ndp": (("retransmissions_pulled", "retransmissions_rto", "retransmissions_returned"), ("timeouts",)),
    "phost": (("data_resent",), ("rts_resent",)),
    "polo": (("retransmissions",), ("timeouts",)),
    "roce": (("retransmissions",), ("timeouts",)),
}


def build(base: Mapping[str, Any], d: Design, name: str) -> Scenario:
    return Scenario.from_dict(apply(base, d, name))


def jobs(ctx: Context, sweep: str, names: Sequence[str], base: Mapping[str, Any], params: Mapping[str, Any],
         link_gbps: float = 100.0, base_dir: str | None = None, seeds: Sequence[int] | None = None) -> tuple[list[Job], dict[str, str]]:
    """One job per (design, seed) on `base`; designs that cannot run on it (PL2 outside a
    single rack) are left out and returned with the error the scenario gives."""
    reg = designs(link_gbps)
    out: list[Job] = []
    refused: dict[str, str] = {}
    tag = "-".join(str(v) for v in params.values())
    for n in names:
        d = reg[n]
        sc = Scenario.from_dict(apply(base, d, f"{sweep}-{tag}-{n.replace(' ', '').replace('+', '')}"),
                                base_dir=base_dir or ".")
        if d.rack_only and (base.get("network", {}).get("topology", {}).get("kind") != "single_rack"):
            refused[n] = _refusal(sc)
            continue
        out += [Job(sc, {"figure": sweep, **params, "design": n}, seed, sweep) for seed in (seeds or ctx.seeds)]
    return out, refused


def _refusal(sc: Scenario) -> str:
    """The error pl2 gives when it builds `sc` (a design that cannot run there)."""
    from pl2 import runner

    d = sc.to_dict()
    d["run"] = {"duration": "1us"}
    d["workload"] = [{"kind": "incast", "senders": [1], "receiver": 0, "size": "1B"}]
    d.pop("transports", None)
    try:
        runner.run(Scenario.from_dict(d), progress=False)
    except Exception as e:  # noqa: BLE001 - the error text is the result
        return str(e).strip().splitlines()[-1]
    return "ran"


def _sum(t: Mapping[str, Any], keys: Sequence[str]) -> int:
    return int(sum(int(t.get(k, 0) or 0) for k in keys))


def measure(res: Any, receivers: Sequence[int] | None = None) -> dict[str, Any]:
    """The numbers every table reports, read the same way from every run: goodput into
    `receivers` (all hosts if None), latency quantiles of the measured messages
    (unfinished ones count as ∞), the largest switch queue, drops by cause, trims,
    control wire bytes as a share of all wire bytes hosts sent, loss recovery, PFC and
    SFC activity."""
    s = res.summary
    g = s.get("goodput_gbps") or {}
    goodput = sum(float(v) for k, v in g.items() if receivers is None or k in {f"h{r}" for r in receivers})
    m = res.messages.filter(pl.col("in_window"))
    if receivers is not None:
        m = m.filter(pl.col("dst").is_in(list(receivers)))
    lat = sorted((m.filter(pl.col("latency_ps").is_not_null())["latency_ps"] / 1e6).to_list())
    c = s.get("counters") or {}
    drops = s.get("drops") or {}
    queues = s.get("max_queue_bytes") or {}
    ctl, data = int(c.get("control_wire_bytes", 0)), int(c.get("data_wire_bytes", 0))
    resend, timeouts = 0, 0
    for key, (rk, tk) in RECOVERY.items():
        t = s.get(key)
        if t:
            resend += _sum(t, rk)
            timeouts += _sum(t, tk)
    # The queue at the (first) receiver's downlink once start-up is over: its time
    # average over the second half of the run (the per-port series' exact window means).
    late_q = 0.0
    if receivers:
        q = res.ports.filter(pl.col("peer") == f"h{receivers[0]}")
        half = int(s.get("sim_time_ps", 0) or 0) // 2
        q = q.filter(pl.col("window_start_ps") >= half)
        late_q = float(q["mean_queue_bytes"].mean() or 0.0) if q.height else 0.0
    pfc = s.get("pfc") or {}
    sfc = s.get("sfc") or {}
    marks = int((s.get("tcp") or {}).get("ce_received", 0) or 0) + int((s.get("roce") or {}).get("marked_packets", 0) or 0) \
        + int((s.get("polo") or {}).get("marked_packets", 0) or 0)
    tors = {k.split("->")[0] for k in queues if k.startswith("s") and "->h" in k}
    return {
        "goodput_gbps": goodput,
        "messages": m.height, "unfinished": m.height - len(lat), "latencies_us": lat,
        "max_queue_bytes": max((int(v) for k, v in queues.items() if k.startswith("s")), default=0),
        # Where it was: a switch's port to a host, or to another switch ("s0->h0", "s4->s0").
        "max_queue_to_host_bytes": max((int(v) for k, v in queues.items() if k.startswith("s") and "->h" in k), default=0),
        "max_queue_to_switch_bytes": max((int(v) for k, v in queues.items() if k.startswith("s") and "->s" in k), default=0),
        # A ToR's (a switch with hosts) ports to other switches: its uplinks.
        "max_queue_tor_up_bytes": max((int(v) for k, v in queues.items() if "->s" in k and k.split("->")[0] in tors), default=0),
        "buffer_drops": int(sum(v for k, v in drops.items() if k != "program" and isinstance(v, (int, float)))),
        "program_drops": int(drops.get("program", 0) or 0),
        "trims": int(c.get("trims", 0) or 0),
        "control_share": ctl / (ctl + data) if ctl + data else 0.0,
        "resends": resend, "timeouts": timeouts,
        "pause_frames": int(pfc.get("pause_frames", 0) or 0), "headroom_drops": int(pfc.get("headroom_drops", 0) or 0),
        "sfc_signals": int(sfc.get("signals_sent", 0) or 0), "ecn_marks": marks,
        # Counters the sections' explanations cite.
        "duplicates": int(sum(int((s.get(k) or {}).get("duplicates", 0) or 0) for k in RECOVERY)),
        "tokens_expired": int((s.get("phost") or {}).get("tokens_expired", 0) or 0),
        "tokens_received": int((s.get("phost") or {}).get("tokens_received", 0) or 0),
        "sfc_paused_ps": int((s.get("roce") or {}).get("sfc_paused_ps", 0) or 0),
        "pfc_paused_ps": int(pfc.get("paused_ps", 0) or 0),
        "messages_lost": int(c.get("messages_lost", 0) or 0),
        "sim_ms": float(s.get("sim_time_ps", 0) or 0) / 1e9,
        "late_mean_queue_bytes": late_q,
        "drops_queue_limit": int(drops.get("queue_limit", 0) or 0), "drops_port_limit": int(drops.get("port_limit", 0) or 0),
        "data_wire_bytes": data,
        "pl2_bursts": int((s.get("pl2") or {}).get("bursts", 0) or 0),
        "pl2_unsolicited": int((s.get("pl2") or {}).get("unsolicited_bursts", 0) or 0),
        "pl2_inter_out": int((s.get("pl2") or {}).get("inter_rack_out_frames", 0) or 0),
        "pl2_inter_in": int((s.get("pl2") or {}).get("inter_rack_in_frames", 0) or 0),
        "pl2_frames": int(((s.get("pl2") or {}).get("switch") or {}).get("data_packets", 0) or 0),
    }


def pct(lat: Sequence[float], n: int, q: float) -> float | None:
    """Nearest-rank quantile over `n` messages of which `lat` (sorted) finished; the
    unfinished count as ∞. None when too few messages for the quantile."""
    if n == 0 or (q > 0.99 and n < 1000) or (q > 0.9 and n < 50):
        return None
    k = math.ceil(q * n) - 1
    return lat[k] if k < len(lat) else math.inf


def collect(ctx: Context, js: Sequence[Job], receivers: Callable[[Job], Sequence[int] | None]) -> tuple[pl.DataFrame, dict]:
    """Runs the jobs; returns the per-run table (without latencies) and, per (params
    without seed), the pooled latencies and the run rows."""
    rows, pooled = [], {}
    for job, res in zip(js, ctx.run_many(js), strict=True):
        r = measure(res, receivers(job))
        key = tuple(sorted((k, v) for k, v in job.params.items() if k != "figure"))
        acc = pooled.setdefault(key, {"lat": [], "n": 0, "rows": []})
        acc["lat"] += r["latencies_us"]
        acc["n"] += r["messages"]
        row = {**{k: v for k, v in job.params.items() if k != "figure"}, "seed": job.seed,
               **{k: v for k, v in r.items() if k != "latencies_us"}}
        acc["rows"].append(row)
        rows.append(row)
    for acc in pooled.values():
        acc["lat"].sort()
        acc["p50"], acc["p99"], acc["p999"] = (pct(acc["lat"], acc["n"], q) for q in (0.5, 0.99, 0.999))
    return pl.DataFrame(rows, infer_schema_length=None), pooled


def agg(pooled: Mapping, key: Mapping[str, Any]) -> dict[str, Any] | None:
    k = tuple(sorted(key.items()))
    acc = pooled.get(k)
    if acc is None:
        return None
    rs = acc["rows"]
    mean = lambda f: sum(r[f] for r in rs) / len(rs)  # noqa: E731
    tot = lambda f: sum(r[f] for r in rs)  # noqa: E731
    return {"good": mean("goodput_gbps"), "p50": acc["p50"], "p99": acc["p99"], "p999": acc["p999"], "n": acc["n"],
            "unfinished": tot("unfinished"), "q": max(r["max_queue_bytes"] for r in rs), "drops": tot("buffer_drops"),
            "prog": tot("program_drops"), "trims": tot("trims"), "ctl": mean("control_share"), "resends": tot("resends"),
            "timeouts": tot("timeouts"), "pauses": tot("pause_frames"), "hdrop": tot("headroom_drops"), "sfc": tot("sfc_signals"),
            "marks": tot("ecn_marks"), "dups": tot("duplicates"), "tok_exp": tot("tokens_expired"),
            "tok_rx": tot("tokens_received"), "sfc_ps": tot("sfc_paused_ps"), "pfc_ps": tot("pfc_paused_ps"),
            "lost": tot("messages_lost"), "sim_ms": mean("sim_ms"), "dq": tot("drops_queue_limit"),
            "dp": tot("drops_port_limit"), "data_b": tot("data_wire_bytes"), "bursts": tot("pl2_bursts"),
            "unsol": tot("pl2_unsolicited"), "xout": tot("pl2_inter_out"), "xin": tot("pl2_inter_in"), "frames": tot("pl2_frames"),
            "q_late": max(r["late_mean_queue_bytes"] for r in rs),
            "q_host": max(r["max_queue_to_host_bytes"] for r in rs), "q_fabric": max(r["max_queue_to_switch_bytes"] for r in rs),
            "q_up": max(r["max_queue_tor_up_bytes"] for r in rs)}


def us(x: float | None) -> str:
    if x is None:
        return "–"
    if math.isinf(x):
        return "∞"
    return f"{x:.1f}" if x < 100 else f"{x:.0f}"


def slowdown(x: float | None) -> str:
    """A slowdown to one decimal; ∞ for an unfinished percentile (and for one with too
    few messages to have it)."""
    return "∞" if x is None or math.isinf(x) else f"{x:.1f}"


HEAD = ["design", "goodput Gbps", "p50 µs", "p99 µs", "p99.9 µs", "unfinished", "max queue KB", "drops (buffer)",
        "PL2 T-rule drops / NDP trims", "control share", "ECN marks", "resends / timeouts", "PFC pauses / SFC signals"]


def row(name: str, a: Mapping[str, Any] | None, refused: Mapping[str, str] | None = None) -> list[str]:
    if a is None:
        why = (refused or {}).get(name, "not run")
        return [name, f"cannot run: {why}"] + ["–"] * (len(HEAD) - 2)
    return [name, f"{a['good']:.2f}", us(a["p50"]), us(a["p99"]), us(a["p999"]), f"{a['unfinished']} of {a['n']}",
            f"{a['q'] / 1000:.1f}", str(a["drops"]), f"{a['prog']} / {a['trims']}", f"{100 * a['ctl']:.1f}%", str(a["marks"]),
            f"{a['resends']} / {a['timeouts']}", f"{a['pauses']} / {a['sfc']}"]


def base_block(title: str, base: Mapping[str, Any]) -> str:
    """The experiment's base scenario as TOML in a collapsible block, for the report."""
    from pl2 import _toml

    text = _toml.dumps(_plain(dict(base)))
    return f"<details><summary>{title}</summary>\n\n```toml\n{text}```\n\n</details>"


def _plain(d: Any) -> Any:
    if isinstance(d, Mapping):
        return {k: _plain(v) for k, v in d.items() if v is not None}
    if isinstance(d, (list, tuple)):
        return [_plain(x) for x in d]
    return d


def how_same(names: Sequence[str], link_gbps: float = 100.0) -> str:
    """The paragraph and table that show how one base scenario drives every design."""
    return ("**Same scenario, every design.** Every run of this experiment is the base scenario below with only "
            "`[transport]` replaced and the switch keys the design needs merged into `[network.switch]` "
            "(`pl2/reproduce/compare/designs.py`, `apply`); the table gives each design's change and its sources.\n\n"
            + settings_table(list(names), link_gbps))


def designs_in(names: Sequence[str] | None = None) -> list[str]:
    return [n for n in ORDER if names is None or n in names]


def facts(d: str, a: Mapping[str, Any], port_limit_b: int | None = None) -> str:
    """The measured counters that explain a design's result, as one sentence: each
    clause is a counter of the runs (summed over seeds), never a guess."""
    out = []
    if port_limit_b and a["q"] >= 0.95 * port_limit_b:
        out.append(f"its queue reached the port limit ({a['q'] / 1000:.0f} of {port_limit_b / 1000:.0f} KB)")
    elif a["q"]:
        out.append(f"max queue {a['q'] / 1000:.0f} KB")
    if a["drops"]:
        why = []
        if a["dp"]:
            why.append(f"{a['dp']} at the port limit")
        if a["dq"]:
            why.append(f"{a['dq']} at a FIFO's own limit (NDP: the header FIFO)")
        if a["hdrop"]:
            why.append(f"{a['hdrop']} over PFC headroom")
        out.append(f"{a['drops']} frames dropped" + (f" ({', '.join(why)})" if why else ""))
    if a["trims"]:
        pk = a["data_b"] / 1542 if a["data_b"] else 0
        out.append(f"{a['trims']} trims" + (f" (≈ {100 * a['trims'] / pk:.0f} % of data frames sent)" if pk else ""))
    if a["timeouts"]:
        out.append(f"{a['timeouts']} timeouts")
    if a["resends"]:
        out.append(f"{a['resends']} resends")
    if a["dups"]:
        out.append(f"{a['dups']} duplicate data frames received")
    if a["tok_rx"]:
        out.append(f"{a['tok_exp']} token expiries at the senders against {a['tok_rx']} tokens received")
    if a["bursts"]:
        out.append(f"{a['unsol']} of {a['bursts']} bursts sent unsolicited (the rest waited for an RSV–GRT exchange)")
    if a["marks"]:
        out.append(f"{a['marks']} ECN marks")
    if a["pauses"]:
        out.append(f"{a['pauses']} PFC PAUSE frames ({a['pfc_ps'] / 1e6:.0f} µs of pause in all)")
    if a["sfc"]:
        out.append(f"{a['sfc']} SFC signals ({a['sfc_ps'] / 1e6:.0f} µs of flow pauses requested in all)")
    if a["lost"]:
        out.append(f"{a['lost']} messages lost a frame that nothing resends")
    if a["unfinished"]:
        out.append(f"{a['unfinished']} of {a['n']} measured messages unfinished")
    return "; ".join(out) if out else "no drops, trims, timeouts or pauses"
