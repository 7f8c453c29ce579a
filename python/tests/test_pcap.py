"""`pl2 pcap`: captures read back by a reader pl2 did not write (scapy's pcap reader),
checked against the run's own records and against TCP's semantics: every byte of every
message crosses the captured port in some data segment, and each connection's last ACK
acknowledges the whole message."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import pl2
from pl2 import Scenario
from pl2.cli import app
from pl2.pcap import PcapError

scapy_all = pytest.importorskip("scapy.all")
pytestmark = pytest.mark.real_native

MSG = 100 * 1024
SENDERS = 3

TCP_INCAST = f"""
name = "pcap-tcp"
seed = 1
[run]
duration = "1200us"
stop_when_delivered = false
[network]
topology = {{ kind = "single_rack", hosts = {SENDERS + 1} }}
link = {{ rate = "10Gbps", delay = "1us" }}
switch = {{ latency = "500ns", buffer = "60KiB", ecn = {{ kind = "step", threshold = "20KiB" }} }}
[transport]
kind = "tcp"
cc = "dctcp"
[[workload]]
kind = "incast"
senders = "0..{SENDERS}"
receiver = {SENDERS}
size = "{MSG}B"
count = 1
interval = "100us"
[metrics.trace]
nodes = ["s0"]
"""


def _run(tmp_path: Path, text: str, name: str = "run") -> Path:
    out = tmp_path / name
    pl2.run(Scenario.from_toml(text), progress=False, out=out)
    return out


def test_tcp_capture_matches_the_trace_and_tcp(tmp_path: Path) -> None:
    run_dir = _run(tmp_path, TCP_INCAST)
    r = CliRunner().invoke(app, ["pcap", str(run_dir)])
    assert r.exit_code == 0, r.output
    packets = scapy_all.rdpcap(str(run_dir / "capture.pcap"))
    tx = pl2.RunResult.load(run_dir).trace.filter(event="tx").sort("time_ps", maintain_order=True)
    assert len(packets) == tx.height > 0
    # Times to the nanosecond (the format's resolution), lengths: the frame without FCS.
    assert [int(p.time * 10**9 + 0.5) for p in packets] == [t // 1000 for t in tx["time_ps"]]
    assert [p.wirelen for p in packets] == [b - 4 for b in tx["frame_bytes"]]
    assert all(len(p) <= p.wirelen for p in packets)
    TCP, IP = scapy_all.TCP, scapy_all.IP
    covered: dict[tuple[str, int], list[tuple[int, int]]] = {}
    last_ack: dict[tuple[str, int], int] = {}
    for p, row in zip(packets, tx.iter_rows(named=True)):
        assert TCP in p, p.summary()
        ip, tcp = p[IP], p[TCP]
        if row["kind"] == "data":
            assert ip.dst == f"10.0.0.{SENDERS}" and tcp.seq == row["seq"] and not tcp.flags.A
            assert ip.len == 40 + row["payload_bytes"]
            covered.setdefault((ip.src, tcp.sport), []).append((tcp.seq, tcp.seq + row["payload_bytes"]))
            assert (ip.tos & 3) == (3 if row["engine_flags"] & 4 else 2)  # DCTCP data is ECT, CE where marked
        else:
            assert ip.src == f"10.0.0.{SENDERS}" and tcp.flags.A and tcp.ack == row["seq"]
            last_ack[(ip.dst, tcp.dport)] = tcp.ack
            sack = [o for o in tcp.options if o[0] == "SAck"]
            assert bool(sack) == bool(row["aux"] & 0xFFFFFFFF)
            if sack:
                left, right = sack[0][1]
                assert left > tcp.ack and right - left == row["aux"] & 0xFFFFFFFF
            assert bool(tcp.flags.E) == bool(row["engine_flags"] & 4)
    assert len(covered) == SENDERS and len(last_ack) == SENDERS
    for conn, spans in covered.items():
        reach = 0
        for a, b in sorted(spans):
            assert a <= reach, f"{conn}: bytes {reach}..{a} never crossed the port"
            reach = max(reach, b)
        assert reach == MSG
        assert last_ack[conn] == MSG
    assert any(p[IP].tos & 3 == 3 for p in packets), "the 20 KiB marking threshold was never crossed: the test lost its CE check"


def test_pause_frames_are_mac_control_frames(tmp_path: Path) -> None:
    text = """
name = "pcap-pfc"
seed = 1
[run]
duration = "200us"
[network]
topology = { kind = "single_rack", hosts = 5 }
link = { rate = "100Gbps", delay = "1us" }
switch = { pfc = { xoff = { bytes = "40KB" } } }
[transport]
kind = "roce"
preset = "dcqcn_paper"
[[workload]]
kind = "incast"
senders = "0..4"
receiver = 4
size = "1MB"
count = 1
interval = "1ms"
[metrics.trace]
nodes = ["s0"]
"""
    run_dir = _run(tmp_path, text)
    res = pl2.RunResult.load(run_dir)
    pauses = res.trace.filter(event="tx", kind="pause")
    assert pauses.height > 0
    n = res.to_pcap(tmp_path / "pfc.pcap", nodes=["s0"])
    packets = scapy_all.rdpcap(str(tmp_path / "pfc.pcap"))
    assert len(packets) == n
    raw = [bytes(p) for p in packets if bytes(p)[12:14] == b"\x88\x08"]
    assert len(raw) == pauses.height
    for b, row in zip(raw, pauses.sort("time_ps", maintain_order=True).iter_rows(named=True)):
        assert b[:6] == bytes.fromhex("0180c2000001") and b[14:16] == b"\x01\x01"
        cev = int.from_bytes(b[16:18], "big")
        assert cev == row["seq"] and cev == 1 << 3  # RoCE's lossless class
        assert int.from_bytes(b[18 + 2 * 3:20 + 2 * 3], "big") == row["aux"]
    udp = [p for p in packets if scapy_all.UDP in p]
    assert udp and all(p[scapy_all.UDP].dport == 7007 for p in udp)


def test_raw_ethernet_frames_carry_pl2s_header(tmp_path: Path) -> None:
    text = TCP_INCAST.replace('kind = "tcp"\ncc = "dctcp"', 'kind = "raw"')
    run_dir = _run(tmp_path, text)
    tx = pl2.RunResult.load(run_dir).trace.filter(event="tx").sort("time_ps", maintain_order=True)
    pl2.RunResult.load(run_dir).to_pcap(tmp_path / "raw.pcap", flows=[int(tx["flow"][0])])
    packets = scapy_all.rdpcap(str(tmp_path / "raw.pcap"))
    first = tx.filter(flow=tx["flow"][0])
    assert len(packets) == first.height
    for p, row in zip(packets, first.iter_rows(named=True)):
        b = bytes(p)
        assert b[12:14] == b"\x81\x00" and b[16:18] == b"\x88\xb5"
        assert b[18] == 0 and int.from_bytes(b[22:26], "big") == row["seq"] and int.from_bytes(b[26:30], "big") == row["flow"]


def test_bad_requests_name_the_fix_and_replace_nothing(tmp_path: Path) -> None:
    no_trace = _run(tmp_path, TCP_INCAST.replace('[metrics.trace]\nnodes = ["s0"]', ""), "plain")
    with pytest.raises(PcapError, match=r"\[metrics.trace\]"):
        pl2.RunResult.load(no_trace).to_pcap(tmp_path / "x.pcap")
    traced = _run(tmp_path, TCP_INCAST, "traced")
    mine = tmp_path / "mine.pcap"
    mine.write_bytes(b"my capture")
    r = CliRunner().invoke(app, ["pcap", str(traced), "--out", str(mine)])
    assert r.exit_code == 2 and "exists" in r.output and mine.read_bytes() == b"my capture"
    r = CliRunner().invoke(app, ["pcap", str(traced), "--node", "h9"])
    assert r.exit_code == 2 and "no traced frame" in r.output
    # The default file is the run directory's own: a second capture replaces it.
    for _ in range(2):
        r = CliRunner().invoke(app, ["pcap", str(traced), "--node", "s0"])
        assert r.exit_code == 0 and (traced / "capture.pcap").stat().st_size > 24, r.output
