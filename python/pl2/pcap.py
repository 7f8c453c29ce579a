"""Packet captures: a run's traced frames written as a nanosecond pcap file that
Wireshark, tcpdump and any libpcap reader open.

pl2 models frames, not bytes: this module synthesises each frame's headers from its
record in the run's `trace` table (which `[metrics.trace]` fills; filter there which
nodes, ports and flows to record). One pcap record per `tx` event, i.e. per frame leaving
a port, timestamped when its first bit leaves (serialisation start). The headers:

- **Ethernet**: addresses `02:00:00:xx:xx:xx` for host *n* and `02:00:01:xx:xx:xx` for
  switch *n* (the low 24 bits of the index); an 802.1Q tag carrying the frame's priority
  (VLAN 0) when the network's framing has tags; PAUSE frames as real 802.3 MAC control
  frames (EtherType 0x8808, opcode 0x0101, class-enable vector and per-class times in
  quanta, to 01:80:c2:00:00:01, untagged).
- **IPv4** for transports with L3 headers: node *n* is `10.a.b.c` with a.b.c its index
  (host indices, and switch node indices for frames switches generate); ECN bits from the
  frame's ECT / CE flags; DF set; TTL 64; header checksum computed.
- **TCP** for pl2's TCP (`kind = "tcp"`) data and acknowledgements: ports 10000 + the
  sending thread (the connection's initiator) and 5001 (its peer); sequence and
  acknowledgement numbers exactly as pl2's TCP carries them (low 32 bits; the SYN at
  2^32 − 1 so data starts at 0); data segments carry no acknowledgement (pl2's TCP
  streams are one-way) and PSH on a message's last segment; ACKs carry ACK, ECE when
  they echo CE, and their SACK block as a real SACK option; SYN and SYN-ACK their
  flags. The TCP checksum is left 0 (the payload is not captured).
- **UDP** with **pl2's header** for every other frame with L3 headers (PL2's RSV/GRT,
  Homa, pHost, NDP, Polo, RoCE, SFC signals): source port 49152 + (flow mod 16384),
  destination port 7007; raw-Ethernet frames carry pl2's header straight after the
  Ethernet header with EtherType 0x88B5 (IEEE local experimental). pl2's header, 24
  bytes big-endian: kind (0 data, 1 ack, 2 control, 3 pause, 4 sfc), engine flags,
  protocol flags, priority, `seq` (4 B), `flow` (4 B), `aux` (8 B), message slot (4 B).

No payload: each record's captured length stops after the headers (and never passes the
frame's length), its original length is the modelled frame from Ethernet header to the
end of the payload (the FCS excluded, as capture points see it), so sizes and timings
read true while the payload shows as "not captured". A frame the model shrinks to the 64
B minimum holds only the first bytes of pl2's header. Networks with `link = "ppp"` write
linktype PPP with ns-3's 2-byte protocol field instead of Ethernet."""

from __future__ import annotations

import os
import struct
import tomllib
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pl2.errors import ScenarioError

if TYPE_CHECKING:
    from pl2.results import RunResult

#: pcap file magic for nanosecond timestamps (libpcap's `pcap-savefile(5)`).
MAGIC_NS = 0xA1B23C4D
LINKTYPE_ETHERNET = 1
LINKTYPE_PPP = 9
SNAPLEN = 65535

ETH_HEADER = 14
VLAN_TAG = 4
FCS = 4
MIN_FRAME = 64
IPV4_HEADER = 20
TCP_HEADER = 20
UDP_HEADER = 8
PPP_HEADER = 2
#: Bytes of pl2's own header (see the module docs).
PL2_HEADER = 24
#: EtherType of raw-Ethernet frames (IEEE 802 local experimental EtherType 1).
ETHERTYPE_PL2 = 0x88B5
PL2_UDP_PORT = 7007
TCP_INITIATOR_PORT0 = 10000
TCP_PEER_PORT = 5001

_KINDS = {"data": 0, "ack": 1, "control": 2, "pause": 3, "sfc": 4}
# Engine flags (crates/pl2-sim/src/packet.rs, `flags`).
_ECT = 1 << 1
_CE = 1 << 2
# pl2's TCP (crates/pl2-sim/src/transport/tcp/wire.rs): `aux` tags of handshake frames.
_AUX_SYN = 1 << 32
_AUX_SYN_ACK = 2 << 32
_AUX_HANDSHAKE_ACK = 3 << 32
_TCP_FIN, _TCP_SYN, _TCP_PSH, _TCP_ACK, _TCP_ECE = 0x01, 0x02, 0x08, 0x10, 0x40


class PcapError(ScenarioError):
    """A capture that cannot be written: the run traced nothing, or the filters leave
    nothing (the fix is in the scenario's `[metrics.trace]` or the filters)."""


def _scenario_info(scenario_toml: str) -> tuple[dict[str, tuple[str, bool]], bool, bool]:
    """Per transport name as the trace gives it: its kind and whether its frames carry
    L3 headers (all but raw Ethernet without `headers = "udp"`); whether frames carry an
    802.1Q tag; whether the link layer is PPP."""
    sc = tomllib.loads(scenario_toml) if scenario_toml else {}

    def info(t: dict[str, Any]) -> tuple[str, bool]:
        kind = str(t.get("kind", "raw"))
        return kind, kind != "raw" or t.get("headers", "none") == "udp"

    transports = {"default": info(sc.get("transport", {}))}
    for name, t in sc.get("transports", {}).items():
        transports[name] = info(t)
    framing = sc.get("network", {}).get("framing", {})
    return transports, bool(framing.get("vlan_tag", True)), framing.get("link", "ethernet") == "ppp"


def _mac(node: str) -> bytes:
    n = int(node[1:]) & 0xFFFFFF
    return bytes((0x02, 0x00, 0x01 if node.startswith("s") else 0x00)) + n.to_bytes(3, "big")


def _ip(n: int) -> bytes:
    return (10).to_bytes(1, "big") + (n & 0xFFFFFF).to_bytes(3, "big")


def _ipv4_checksum(header: bytes) -> int:
    s = sum(struct.unpack(f"!{len(header) // 2}H", header))
    while s > 0xFFFF:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def _ipv4(src: int, dst: int, proto: int, total: int, ecn: int) -> bytes:
    h = struct.pack("!BBHHHBBH4s4s", 0x45, ecn, total & 0xFFFF, 0, 0x4000, 64, proto, 0, _ip(src), _ip(dst))
    return h[:10] + struct.pack("!H", _ipv4_checksum(h)) + h[12:]


def _pl2_header(r: dict[str, Any]) -> bytes:
    return struct.pack("!BBBBIIQI", _KINDS.get(r["kind"], 255), r["engine_flags"], r["proto_flags"], r["priority"],
                       r["seq"], r["flow"], r["aux"], r["msg"])


def _tcp(r: dict[str, Any]) -> tuple[bytes, int]:
    """The TCP header of a pl2 TCP frame and its length (with options)."""
    thread = r["flow"] & 0xFF
    aux = r["aux"]
    opts = b""
    if r["kind"] == "data":
        sport, dport = TCP_INITIATOR_PORT0 + thread, TCP_PEER_PORT
        seq, ack, fl = r["seq"], 0, _TCP_PSH if aux & 1 else 0
    elif aux == _AUX_SYN:
        sport, dport = TCP_INITIATOR_PORT0 + thread, TCP_PEER_PORT
        seq, ack, fl = r["seq"], 0, _TCP_SYN
        opts = bytes((1,)) * 20  # Linux's 20 B of SYN options, shown as NOPs (the model only counts them)
    elif aux == _AUX_SYN_ACK:
        sport, dport = TCP_PEER_PORT, TCP_INITIATOR_PORT0 + thread
        seq, ack, fl = 0, r["seq"], _TCP_SYN | _TCP_ACK
        opts = bytes((1,)) * 20
    elif aux == _AUX_HANDSHAKE_ACK:
        sport, dport = TCP_INITIATOR_PORT0 + thread, TCP_PEER_PORT
        seq, ack, fl = 0, r["seq"], _TCP_ACK
    else:
        # A pure ACK from the peer: its own stream holds only the SYN-ACK's SYN (seq 0).
        sport, dport = TCP_PEER_PORT, TCP_INITIATOR_PORT0 + thread
        seq, ack, fl = 1, r["seq"], _TCP_ACK
        if r["engine_flags"] & _CE:
            fl |= _TCP_ECE
        length = aux & 0xFFFFFFFF
        if length:
            left = (r["seq"] + (aux >> 32)) & 0xFFFFFFFF
            opts = struct.pack("!BBBBII", 1, 1, 5, 10, left, (left + length) & 0xFFFFFFFF)
    hlen = TCP_HEADER + len(opts)
    return struct.pack("!HHIIBBHHH", sport, dport, seq & 0xFFFFFFFF, ack & 0xFFFFFFFF, (hlen // 4) << 4, fl, 0xFFFF, 0, 0) + opts, hlen


def _frame(r: dict[str, Any], kinds: dict[str, str], vlan: bool, ppp: bool) -> tuple[bytes, int]:
    """Synthesised header bytes of one traced frame and its original length (Ethernet
    header to payload end, FCS excluded; PPP: header and packet)."""
    frame = r["frame_bytes"]
    if r["kind"] == "pause":
        cev = r["seq"] & 0xFF
        times = [r["aux"] & 0xFFFF if cev >> p & 1 else 0 for p in range(8)]
        body = struct.pack("!6s6sHHH8H", bytes.fromhex("0180c2000001"), _mac(r["node"]), 0x8808, 0x0101, cev, *times)
        orig = max(frame - FCS, len(body)) if not ppp else frame
        return body, orig
    tag = VLAN_TAG if vlan and not ppp else 0
    l2 = PPP_HEADER if ppp else ETH_HEADER + tag
    orig = frame if ppp else frame - FCS
    payload = r["payload_bytes"]
    # The model's L3/L4 header bytes: what the frame holds beyond L2 and the payload (a
    # frame padded to the 64 B minimum holds padding there too).
    l34 = orig - l2 - payload
    kind, l3 = kinds.get(r["transport"], ("raw", False))
    if ppp:
        l2_bytes = struct.pack("!H", 0x0021)
    else:
        l2_bytes = _mac(f"h{r['dst']}") + _mac(f"h{r['src']}") + (struct.pack("!HH", 0x8100, r["priority"] << 13) if tag else b"")
    ip_type = b"" if ppp else struct.pack("!H", 0x0800)
    ecn = 3 if r["engine_flags"] & _CE else 2 if r["engine_flags"] & _ECT else 0
    if kind == "tcp" and r["kind"] in ("data", "ack"):
        tcp, hlen = _tcp(r)
        # pl2's TCP never sends ACKs ECT; CE on an ACK is its ECN-Echo (the TCP flag).
        ip = _ipv4(r["src"], r["dst"], 6, IPV4_HEADER + hlen + payload, 0 if r["kind"] == "ack" else ecn)
        body = l2_bytes + ip_type + ip + tcp
    elif l3:
        udp_len = max(l34 if frame > MIN_FRAME else 0, IPV4_HEADER + UDP_HEADER) - IPV4_HEADER + payload
        ip = _ipv4(r["src"], r["dst"], 17, IPV4_HEADER + udp_len, ecn)
        udp = struct.pack("!HHHH", 49152 + r["flow"] % 16384, PL2_UDP_PORT, udp_len, 0)
        body = l2_bytes + ip_type + ip + udp + _pl2_header(r)
    else:
        body = l2_bytes + (b"" if ppp else struct.pack("!H", ETHERTYPE_PL2)) + _pl2_header(r)
    return body[:orig], orig


def write_pcap(
    run: RunResult,
    path: str | os.PathLike[str],
    *,
    nodes: Iterable[str] = (),
    ports: Iterable[int] = (),
    flows: Iterable[int] = (),
) -> int:
    """Writes the frames the run traced leaving ports (`tx` events), optionally only at
    `nodes` (names like `"s0"`, `"h3"`), global `ports` or `flows`, to the nanosecond
    pcap file `path`; returns how many records it wrote. Raises PcapError if the run has
    no trace, or if a filter leaves nothing."""
    import polars as pl

    trace = run.trace
    if trace.height == 0:
        raise PcapError("the run traced no frames: add [metrics.trace] to the scenario (e.g. `nodes = [\"s0\"]`) and run it again")
    missing = {"frame_bytes", "aux", "msg", "transport", "engine_flags", "proto_flags"} - set(trace.columns)
    if missing:
        raise PcapError(f"the trace lacks the columns {sorted(missing)}: it was written by an older pl2; run the scenario again")
    t = trace.filter(pl.col("event") == "tx")
    nodes, ports, flows = list(nodes), list(ports), list(flows)
    if nodes:
        t = t.filter(pl.col("node").is_in(nodes))
    if ports:
        t = t.filter(pl.col("port").is_in(ports))
    if flows:
        t = t.filter(pl.col("flow").is_in(flows))
    if t.height == 0:
        raise PcapError("no traced frame leaves a port under these filters (nodes, ports, flows); check them against the trace "
                        "table (`pl2.RunResult.load(RUN).trace`, its `node`, `port` and `flow` columns) and the scenario's [metrics.trace]")
    kinds, vlan, ppp = _scenario_info(run.scenario)
    out = Path(path)
    tmp = out.with_name(f".{out.name}.partial-{os.getpid()}")
    try:
        with tmp.open("wb") as f:
            f.write(struct.pack("<IHHiIII", MAGIC_NS, 2, 4, 0, 0, SNAPLEN, LINKTYPE_PPP if ppp else LINKTYPE_ETHERNET))
            for r in t.sort("time_ps", maintain_order=True).iter_rows(named=True):
                body, orig = _frame(r, kinds, vlan, ppp)
                ns = r["time_ps"] // 1000
                f.write(struct.pack("<IIII", ns // 1_000_000_000, ns % 1_000_000_000, len(body), orig))
                f.write(body)
        tmp.replace(out)
    finally:
        tmp.unlink(missing_ok=True)
    return t.height


#: Where `pl2 pcap` writes by default, inside the run directory (listed in its manifest).
DEFAULT_NAME = "capture.pcap"


def capture_path(run_dir: str | os.PathLike[str], out: str | os.PathLike[str] | None) -> Path:
    """The file a capture of the run in `run_dir` may be written to: `out` if it does
    not exist yet (pl2 replaces no file it cannot tell it wrote), or by default
    `run_dir/capture.pcap`, recorded in the run's manifest so that a later capture may
    replace it. Raises OutputPathError naming the path and the fix."""
    from pl2 import outdir
    from pl2.errors import OutputPathError

    if out is not None:
        p = outdir.check_path_text(out)
        if p.exists() or p.is_symlink():
            raise OutputPathError(f"{p} exists; pl2 writes a capture only to a new file (or by default into the run directory): "
                                  "choose another path or move that file away")
        if not p.absolute().parent.is_dir():
            raise OutputPathError(f"{p}: {p.absolute().parent} is not a directory; choose a path inside an existing directory")
        return p
    target = outdir.prepare(run_dir, "run", grows=True)
    dest = target.claim(DEFAULT_NAME)
    target.save()
    return dest
