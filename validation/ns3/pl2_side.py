"""The validation scenarios in pl2: the same networks as scenarios.py, written as pl2
TOMLs (host send/receive latencies and CPU costs at zero, switch pipeline latency zero
and store-and-forward like an ns-3 node, no 802.1Q tag, connections opened with a
three-way handshake as ns-3's are), run through the Python API (`pl2.run`) or, with
--cli, the `pl2-run` binary.

Completion time is measured as on the ns-3 side: from the flow's first data segment
(its first transmission at the sender's port, from the frame trace) to the delivery of
its last byte, so the handshake's round trip is not part of it on either side.
`--no-handshake` runs pre-established connections instead (the setting before the
handshake existed in pl2).

`--ns3-rules` runs pl2 with ns-3's own rules where the two models differ (RESULTS.md,
"Remaining misses"): ns-3's point-to-point framing (`framing.link = "ppp"` at ns-3's
scaled link rate, so every frame, ACKs and SYNs included, takes ns-3's time on the wire;
port limit and marking threshold in the same frames), ns-3's bytes in flight
(`sacked_retransmissions_in_flight`), CUBIC's Reno-friendly α as Linux and ns-3 have it
(`cubic_alpha = "linux"`) and ns-3's CE-change ACK (`ce_change_ack = "ns3"`). Queue
occupancy is then reported in Ethernet wire bytes again (× WIRE_FULL / NS3_FULL: the
bottleneck queue holds full data frames), the unit of the references.

    python validation/ns3/pl2_side.py                       # all scenarios × 10 seeds → out/pl2/*.csv
    python validation/ns3/pl2_side.py --only dumbbell-dctcp-4 --seeds 1 --print-toml
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ns3_common import HERE, NS3_FULL, SCENARIOS, SEEDS, WINDOW_NS, WIRE_FULL, Spec, jain, quantile, sample_and_hold, write_rows  # noqa: E402

#: Persistent-workload message size: whole segments (45 × 1460 B), so the stream is
#: never cut short of a full segment and per-flow delivered bytes are fine-grained.
PERSISTENT_MSG = 45 * 1460


def _tcp(cc: str, handshake: bool, ns3_rules: bool) -> list[str]:
    """A [transport] table's lines: TCP with `cc` and ns-3's settings."""
    lines = [
        'kind = "tcp"',
        f'cc = "{cc}"',
        # ns-3's sockets connect with a three-way handshake. The SYN timeouts differ
        # (pl2 syn_rto 1 ms, ns-3 ConnTimeout 3 s) but never fire: no SYN is lost in
        # any scenario and seed here
        f"handshake = {'true' if handshake else 'false'}",
        # ns-3's TcpNewReno counts ACKs (RFC 5681 eqs. 2 and 3), its TcpCubic and TcpDctcp
        # count bytes as pl2's default does (README: "ns-3 defaults changed")
        f"byte_counting = {'false' if cc == 'new_reno' else 'true'}",
        "sack = true",
        "initial_window = 10",
        "delayed_ack = true",
        'delayed_ack_timeout = "40us"',
        # ns-3 ACKs the first data segment after the handshake at once
        # (TcpSocketBase::ProcessSynRcvd sets m_delAckCount = m_delAckMaxCount), then every
        # second segment: pl2's quick_acks = 1 (README: "ns-3 defaults changed")
        "quick_acks = 1",
        'min_rto = "1ms"',
        'initial_rto = "1ms"',
        'receive_window = "16MiB"',
        'send_buffer = "16MiB"',
    ]
    if ns3_rules:
        lines += [
            "sacked_retransmissions_in_flight = true",
            'cubic_alpha = "linux"',
            'ce_change_ack = "ns3"',
        ]
    return lines


def toml(spec: Spec, seed: int, handshake: bool = True, ns3_rules: bool = False) -> str:
    """The pl2 scenario for one seed (`handshake`: open connections with a SYN exchange,
    as ns-3 does; README "Model differences"; `ns3_rules`: see the module docstring)."""
    # A full frame on the wire, and the link rate scale: with ns-3's rules pl2 frames as
    # ns-3 does (IP packet + 2 B) at ns-3's link rate (scaled by NS3_FULL / WIRE_FULL in
    # scenarios.py so that a full frame takes as long as pl2's Ethernet frame).
    full, scale = (NS3_FULL, NS3_FULL / WIRE_FULL) if ns3_rules else (WIRE_FULL, 1.0)
    ecn = f'{{ kind = "step", threshold = "{spec.ecn_frames * full}B" }}' if spec.ecn_frames else '{ kind = "off" }'
    host_bps = int(spec.host_gbps * 1e9 * scale)  # as ns-3: uint64_t(bps * rateScale)
    if spec.kind == "dumbbell":
        topo = (
            f'{{ kind = "dumbbell", hosts_per_side = {spec.flows}, '
            f'bottleneck = {{ rate = "{int(spec.bottleneck_gbps * 1e9 * scale)}bps", delay = "{spec.delay_ns}ns" }} }}'
        )
    else:
        topo = f'{{ kind = "single_rack", hosts = {spec.flows + 1} }}'
    # What a non-ECT frame over the threshold meets. ns-3's DCTCP sends every packet ECT
    # (SYN, pure ACK and FIN too, as Linux's DCTCP does), so its RED never meets a non-ECT
    # packet where every flow is DCTCP (no such drop in any reference); pl2's DCTCP sets
    # ECT on data only, so there it passes its SYNs and ACKs, as ns-3's are marked and
    # pass. With a non-ECN flow beside it, the scenario's setting (README).
    ecn_only = all(spec.flow_cc(f) == "dctcp" for f in range(spec.flows))
    non_ect = f', non_ect = "{"pass" if ecn_only else spec.non_ect}"' if spec.ecn_frames else ""
    lines = [
        f'name = "{spec.name}"',
        f"seed = {seed}",
        "",
        "[run]",
        f'duration = "{spec.duration_ns}ns"',
        "stop_when_delivered = true",
        "",
        "[network]",
        'mtu = "1500B"',
        'framing = { vlan_tag = false, link = "ppp" }' if ns3_rules else "framing = { vlan_tag = false }",
        f"topology = {topo}",
        f'link = {{ rate = "{host_bps}bps", delay = "{spec.delay_ns}ns" }}',
        "host = { threads = 1, send_latency = \"0ns\", recv_latency = \"0ns\" }",
        f'switch = {{ latency = "0ns", cut_through = false, dynamic_thresholds = false, buffer = "64MiB", '
        f'port_limit = "{spec.limit_frames * full}B", ecn = {ecn}{non_ect} }}',
        "",
        "[transport]",
        *_tcp(spec.flow_cc(0), handshake, ns3_rules),
    ]
    # mixed scenarios: every further algorithm as a named transport (its workloads select it)
    for cc in sorted({spec.flow_cc(f) for f in range(spec.flows)} - {spec.flow_cc(0)}):
        lines += ["", f"[transports.{cc}]", *_tcp(cc, handshake, ns3_rules)]
    lines += [
        "",
        "[metrics]",
        f'window = "{WINDOW_NS}ns"',
        "probes = true",
        "drop_records = false",
    ]
    if spec.kind != "dumbbell":
        # the senders' transmissions, for each flow's first data segment (completion time)
        senders = ", ".join(f'"h{i}"' for i in range(spec.flows))
        lines += ["", "[metrics.trace]", f"nodes = [{senders}]"]
    starts = spec.starts_ns(seed)
    if spec.kind == "dumbbell":
        receiver = spec.flows  # first host on the right
        for i in range(spec.flows):
            lines += ["", "[[workload]]", 'kind = "persistent"', f"senders = [{i}]", f"receiver = {receiver}", f'size = "{PERSISTENT_MSG}B"', f'start = "{starts[i]}ns"']
            if spec.flow_cc(i) != spec.flow_cc(0):
                lines.append(f'transport = "{spec.flow_cc(i)}"')
    else:
        receiver = spec.flows
        for i in range(spec.flows):
            lines += ["", "[[workload]]", 'kind = "incast"', f"senders = [{i}]", f"receiver = {receiver}", f'size = "{spec.msg_bytes}B"', "count = 1", f'start = "{starts[i]}ns"']
    return "\n".join(lines) + "\n"


TABLES = ("messages", "ports", "probes", "trace")


def _run_api(text: str):
    import pl2

    sc = pl2.Scenario.from_toml(text, tempfile.gettempdir())
    t0 = time.perf_counter()
    r = pl2.run(sc, progress=False)
    wall = time.perf_counter() - t0
    return r.summary, {k: r.table(k) for k in TABLES}, wall


def _run_cli(text: str, binary: str):
    import polars as pl

    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "s.toml"
        p.write_text(text, encoding="utf-8")
        t0 = time.perf_counter()
        subprocess.run([binary, str(p), str(Path(d) / "out")], check=True, capture_output=True)
        wall = time.perf_counter() - t0
        summary = json.loads((Path(d) / "out" / "summary.json").read_text())
        tables = {k: pl.read_parquet(Path(d) / "out" / f"{k}.parquet") for k in TABLES}
    return summary, tables, wall


def run_pl2(spec: Spec, seed: int, cli: str | None = None, handshake: bool = True, ns3_rules: bool = False) -> dict:
    """One pl2 run → the metric row of ns3_common.FIELDS."""
    text = toml(spec, seed, handshake, ns3_rules)
    summary, t, wall = _run_cli(text, cli) if cli else _run_api(text)
    return summarise(spec, seed, summary, t, wall, WIRE_FULL / NS3_FULL if ns3_rules else 1.0)


def summarise(spec: Spec, seed: int, summary: dict, t: dict, wall: float, queue_scale: float = 1.0) -> dict:
    """`queue_scale` converts the port's bytes to Ethernet wire bytes (PPP framing)."""
    import polars as pl

    ps = 1000  # ps per ns
    row: dict = {"scenario": spec.name, "seed": seed, "wall_s": wall}
    msgs = t["messages"]
    receiver = spec.flows
    if spec.kind == "dumbbell":
        t0, t1 = spec.warmup_ns * ps, spec.duration_ns * ps
        done = msgs.filter(pl.col("finish_ps").is_not_null() & (pl.col("finish_ps") > t0) & (pl.col("finish_ps") <= t1))
        tputs = []
        for f in range(spec.flows):
            b = done.filter(pl.col("src") == f)["size_bytes"].sum()
            tputs.append(b * 8 / ((t1 - t0) / ps))
        row["throughput_gbps"] = sum(tputs)
        row["jain"] = jain(tputs)
        row["flow0_share"] = tputs[0] / sum(tputs) if sum(tputs) else math.nan
        cw = t["probes"].filter(pl.col("name") == "tcp_cwnd")
        samples: list[float] = []
        for f in range(spec.flows):
            pts = [(int(a) // ps, float(v)) for a, v in cw.filter(pl.col("host") == f).select("time_ps", "value").iter_rows()]
            samples += sample_and_hold(pts, spec.warmup_ns, spec.duration_ns, WINDOW_NS)
        row["cwnd_mean_bytes"] = sum(samples) / len(samples) if samples else math.nan
        row["cwnd_p50_bytes"] = quantile(samples, 0.5)
        row["cwnd_p99_bytes"] = quantile(samples, 0.99)
        port = t["ports"].filter((pl.col("node") == "s0") & (pl.col("peer") == "s1"))
        port = port.filter((pl.col("window_start_ps") >= t0) & (pl.col("window_start_ps") < t1))
    else:
        # ns-3's span (scenarios.py): first data segment sent → last byte delivered. The
        # messages table counts from the send call, which with the handshake is one
        # SYN round trip earlier; the row keeps that too (fct_from_send_*, not a target).
        tr = t["trace"].filter((pl.col("event") == "tx") & (pl.col("kind") == "data") & (pl.col("payload_bytes") > 0))
        first = dict(tr.group_by("src").agg(pl.col("time_ps").min()).iter_rows())
        done = msgs.filter(pl.col("finish_ps").is_not_null())
        lat = [(f - first[s]) / 1e6 for s, f in done.select("src", "finish_ps").iter_rows()]
        row["fct_p50_us"] = quantile(lat, 0.5)
        row["fct_p99_us"] = quantile(lat, 0.99)
        row["fct_max_us"] = max(lat) if lat else math.nan
        lat_send = [v / 1e6 for v in done["latency_ps"].to_list()]
        row["fct_from_send_p50_us"] = quantile(lat_send, 0.5)
        row["fct_from_send_p99_us"] = quantile(lat_send, 0.99)
        port = t["ports"].filter((pl.col("node") == "s0") & (pl.col("peer") == f"h{receiver}"))
    q = [float(v) * queue_scale for v in port["max_queue_bytes"].to_list()]
    row["queue_p50_bytes"] = quantile(q, 0.5)
    row["queue_p99_bytes"] = quantile(q, 0.99)
    row["drops"] = sum(summary["drops"].values())
    row["nonect_drops"] = summary["drops"].get("non_ect", 0)
    tcp = summary.get("tcp") or {}
    row["retransmissions"] = tcp.get("retransmissions", math.nan)
    row["timeouts"] = tcp.get("timeouts", math.nan)
    row["segments_sent"] = tcp.get("segments_sent", math.nan)
    return row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--seeds", nargs="*", type=int, default=SEEDS)
    ap.add_argument("--out", type=Path, default=HERE / "out" / "pl2")
    ap.add_argument("--cli", default=None, help="run the pl2-run binary at this path instead of the Python API")
    ap.add_argument("--no-handshake", action="store_true", help="pre-established connections (pl2's default) instead of ns-3's handshake")
    ap.add_argument("--ns3-rules", action="store_true", help="pl2 with ns-3's framing and TCP rules where the models differ (see above)")
    ap.add_argument("--print-toml", action="store_true")
    a = ap.parse_args(argv)
    for name in a.only or list(SCENARIOS):
        spec = SCENARIOS[name]
        if a.print_toml:
            print(toml(spec, a.seeds[0], not a.no_handshake, a.ns3_rules))
        rows = []
        for seed in a.seeds:
            r = run_pl2(spec, seed, a.cli, not a.no_handshake, a.ns3_rules)
            rows.append(r)
            print(f"{name} seed {seed}: " + ", ".join(f"{k}={v:.4g}" for k, v in r.items() if isinstance(v, float)), flush=True)
        write_rows(a.out / f"{name}.csv", rows, f"pl2 side of validation scenario {name}\ngenerated by validation/ns3/pl2_side.py")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
