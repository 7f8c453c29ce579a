"""The validation scenarios in ns-3, through its Python bindings (`pip install
ns3==3.44.post0`; cppyy JIT-compiles the model below once per process).

    python validation/ns3/scenarios.py            # every scenario × 50 seeds → reference/*.csv
    python validation/ns3/scenarios.py --only incast-dctcp-8x1MB --seeds 1 2

The scenario definitions live in ns3_common.py; README.md lists every ns-3 default changed
here and why. The C++ below only builds the network, installs the applications and
records raw traces; Python turns them into the metrics of ns3_common.py.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ns3_common import (  # noqa: E402
    NS3_FULL,
    NS3_IP_FULL,
    NS3_VERSION,
    RARE_SEEDS,
    SCENARIOS,
    WINDOW_NS,
    WIRE_FULL,
    Spec,
    jain,
    quantile,
    reference_path,
    sample_and_hold,
    write_rows,
)

CPP = r"""
#include "ns3/core-module.h"
#include "ns3/network-module.h"
#include "ns3/internet-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/applications-module.h"
#include "ns3/traffic-control-module.h"
#include <sstream>
#include <map>
#include <vector>

namespace pl2v {
using namespace ns3;

// A mark-only step marker (pl2's `non_ect = "pass"`): RED's step rule as configured below
// (mark when the queue disc holds at least `th` before the packet joins, as RED with
// QW = 1 and MinTh = MaxTh) for ECN-capable packets; a packet that is not ECN-capable
// passes unmarked where RED with ECN would drop it. Drop-tail at `MaxSize`.
class StepMarkQueueDisc : public QueueDisc {
public:
  static TypeId GetTypeId() {
    static TypeId tid = TypeId("pl2v::StepMarkQueueDisc").SetParent<QueueDisc>().SetGroupName("TrafficControl")
      .AddConstructor<StepMarkQueueDisc>()
      .AddAttribute("MaxSize", "limit", QueueSizeValue(QueueSize("100p")),
                    MakeQueueSizeAccessor(&QueueDisc::SetMaxSize, &QueueDisc::GetMaxSize), MakeQueueSizeChecker())
      .AddAttribute("Threshold", "marking threshold in the queue's unit", DoubleValue(1),
                    MakeDoubleAccessor(&StepMarkQueueDisc::m_th), MakeDoubleChecker<double>());
    return tid;
  }
  StepMarkQueueDisc() : QueueDisc(QueueDiscSizePolicy::SINGLE_INTERNAL_QUEUE) {}
  double m_th = 1;
private:
  bool DoEnqueue(Ptr<QueueDiscItem> item) override {
    uint32_t n = GetInternalQueue(0)->GetCurrentSize().GetValue();
    if (n >= m_th && n > 1) Mark(item, "Step mark");  // false (no mark) for a non-ECT packet
    return GetInternalQueue(0)->Enqueue(item);          // the internal queue drops at MaxSize
  }
  Ptr<QueueDiscItem> DoDequeue() override { return GetInternalQueue(0)->Dequeue(); }
  bool CheckConfig() override {
    if (GetNInternalQueues() == 0)
      AddInternalQueue(CreateObjectWithAttributes<DropTailQueue<QueueDiscItem>>("MaxSize", QueueSizeValue(GetMaxSize())));
    return GetNInternalQueues() == 1;
  }
  void InitializeParams() override {}
};

struct Rec {
  std::ostringstream out;          // "kind,flow,time_ns,value" lines
  // bottleneck port occupancy, in pl2 wire bytes, per-window maxima
  Ptr<QueueDisc> qd; Ptr<Queue<Packet>> devq; uint64_t inTx = 0;
  int64_t window = 10000; int64_t curWin = -1; uint64_t winMax = 0; bool active = false;
  std::vector<uint64_t> rxBytes; std::vector<int64_t> firstTx; std::vector<int64_t> done;
  uint64_t msgBytes = 0; uint32_t remaining = 0; uint64_t drops = 0; uint64_t nonEctDrops = 0;
  std::vector<uint32_t> highTx; std::vector<uint64_t> retx, rto, segs;
  std::map<uint32_t, uint32_t> ipToFlow;
};
static Rec* R = nullptr;

static uint64_t Occupancy() {
  uint64_t b = 0;
  if (R->qd) b += R->qd->GetNBytes() + 38ull * R->qd->GetNPackets();
  if (R->devq) b += R->devq->GetNBytes() + 36ull * R->devq->GetNPackets();
  return b + R->inTx;
}
static void Touch() {
  int64_t now = Simulator::Now().GetNanoSeconds();
  int64_t w = now / R->window;
  uint64_t occ = Occupancy();
  if (w != R->curWin) {
    if (R->active) R->out << "q,0," << R->curWin * R->window << "," << R->winMax << "\n";
    R->curWin = w; R->winMax = occ; R->active = true;
  }
  if (occ > R->winMax) R->winMax = occ;
}
static void OnU32(uint32_t, uint32_t) { Touch(); }
static void OnTxBegin(Ptr<const Packet> p) { R->inTx = p->GetSize() + 36; Touch(); }
static void OnTxEnd(Ptr<const Packet>) { R->inTx = 0; Touch(); }
static void OnDrop(Ptr<const QueueDiscItem>) { R->drops++; }
// RED drops a packet that is not ECN-capable where it would mark one that is ("Forced
// drop" / "Unforced drop"); the limit's drops come from the internal queue.
static void OnDropBefore(Ptr<const QueueDiscItem> item, const char* reason) {
  std::string r(reason);
  if (r == "Forced drop" || r == "Unforced drop") R->nonEctDrops++;
}

static void OnCwnd(uint32_t flow, uint32_t, uint32_t v) {
  R->out << "c," << flow << "," << Simulator::Now().GetNanoSeconds() << "," << v << "\n";
}
// Every expiry of the retransmission timer, as pl2 counts `timeouts`: ns-3's
// ReTxTimeout doubles m_rto (RFC 6298 5.5), and nothing else doubles it (an RTT sample
// sets it to max(srtt + 4 rttvar, MinRto) = 1 ms here). Counting entries into CA_LOSS
// instead (as before issue 24) misses the backed-off expiries of one episode, since a
// traced value fires only when it changes (mixed-dctcp-cubic-drop seed 1: 4 entries,
// 10 expiries).
static void OnRto(uint32_t flow, Time o, Time n) {
  if (n == o + o) R->rto[flow]++;
}
static void OnSockTx(uint32_t flow, Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase>) {
  if (p->GetSize() == 0) return;
  uint32_t s = h.GetSequenceNumber().GetValue();
  uint32_t e = s + p->GetSize();
  if (R->firstTx[flow] < 0) R->firstTx[flow] = Simulator::Now().GetNanoSeconds();
  if (e <= R->highTx[flow] && R->segs[flow] > 0) R->retx[flow]++; else { R->segs[flow]++; R->highTx[flow] = e; }
}
static void Hook(Ptr<BulkSendApplication> app, uint32_t flow) {
  Ptr<TcpSocketBase> s = DynamicCast<TcpSocketBase>(app->GetSocket());
  s->TraceConnectWithoutContext("CongestionWindow", MakeBoundCallback(&OnCwnd, flow));
  s->TraceConnectWithoutContext("RTO", MakeBoundCallback(&OnRto, flow));
  s->TraceConnectWithoutContext("Tx", MakeBoundCallback(&OnSockTx, flow));
}
static void OnRx(Ptr<const Packet> p, const Address& from) {
  uint32_t ip = InetSocketAddress::ConvertFrom(from).GetIpv4().Get();
  auto it = R->ipToFlow.find(ip);
  if (it == R->ipToFlow.end()) return;
  uint32_t f = it->second;
  R->rxBytes[f] += p->GetSize();
  R->out << "r," << f << "," << Simulator::Now().GetNanoSeconds() << "," << R->rxBytes[f] << "\n";
  if (R->msgBytes && R->done[f] < 0 && R->rxBytes[f] >= R->msgBytes) {
    R->done[f] = Simulator::Now().GetNanoSeconds();
    if (--R->remaining == 0) Simulator::Stop();
  }
}

// kind 0 = dumbbell (flows senders left, one receiver right), 1 = incast (star).
// ccs: each sender's congestion control; limitPkts / ecnPkts: the port limit and marking
// threshold in full frames, counted in bytes (fullBytes = 1500 IP bytes each) or, with
// fullBytes = 0, in packets; nonEctDrop: RED with ECN (true) or the mark-only step queue.
std::string Run(int kind, std::vector<std::string> ccs, uint32_t flows, double hostBps, double bnBps, int64_t delayNs,
                uint32_t limitPkts, uint32_t ecnPkts, int64_t durationNs, uint64_t msgBytes,
                std::vector<int64_t> startsNs, uint32_t seed, double rateScale, uint32_t fullBytes, bool nonEctDrop) {
  Rec rec; R = &rec; rec.msgBytes = msgBytes; rec.remaining = flows;
  rec.rxBytes.assign(flows, 0); rec.firstTx.assign(flows, -1); rec.done.assign(flows, -1);
  rec.highTx.assign(flows, 0); rec.retx.assign(flows, 0); rec.rto.assign(flows, 0); rec.segs.assign(flows, 0);
  RngSeedManager::SetSeed(1); RngSeedManager::SetRun(seed);

  // --- TCP: datacenter settings (README lists each change from the ns-3 default) ---
  auto tidOf = [](const std::string& cc) {
    return TypeId::LookupByName(cc == "new_reno" ? "ns3::TcpNewReno" : cc == "cubic" ? "ns3::TcpCubic" : "ns3::TcpDctcp");
  };
  // the first flow's algorithm everywhere (the receiver's sockets too: DCTCP's receiver
  // side lives in TcpDctcp), then each sender's own below
  Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(tidOf(ccs[0])));
  Config::SetDefault("ns3::TcpL4Protocol::RecoveryType", TypeIdValue(TcpClassicRecovery::GetTypeId()));
  Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1460));
  Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
  Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(2));
  Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(MicroSeconds(40)));
  Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(16u << 20));
  Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(16u << 20));
  Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(1)));
  Config::SetDefault("ns3::TcpSocketBase::ClockGranularity", TimeValue(NanoSeconds(1)));
  Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(false));
  Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(true));
  Config::SetDefault("ns3::TcpSocketBase::WindowScaling", BooleanValue(true));
  Config::SetDefault("ns3::RttEstimator::InitialEstimation", TimeValue(MilliSeconds(1)));
  Config::SetDefault("ns3::TcpCubic::HyStart", BooleanValue(false));

  // --- nodes and links ---
  NodeContainer senders, receivers, switches;
  senders.Create(flows);
  receivers.Create(kind == 0 ? flows : 1);
  switches.Create(kind == 0 ? 2 : 1);
  InternetStackHelper stack;
  stack.InstallAll();
  for (uint32_t i = 0; i < flows; i++)
    senders.Get(i)->GetObject<TcpL4Protocol>()->SetAttribute("SocketType", TypeIdValue(tidOf(ccs[i])));

  // A plain FIFO (or RED as DCTCP's step marker) sized like pl2's port limit; the
  // device queue holds 1 packet, so the backlog lives in the queue disc.
  TrafficControlHelper fifo;
  fifo.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", QueueSizeValue(QueueSize("100000p")));
  TrafficControlHelper bottleneckTc;
  // pl2 counts the device queue slot and the frame in service in its port limit, ns-3's
  // queue disc does not: 2 full frames less
  auto size = [&](uint32_t frames) {
    return QueueSize(fullBytes ? std::to_string(uint64_t(frames) * fullBytes) + "B" : std::to_string(frames) + "p");
  };
  QueueSize qdLimit = size(limitPkts > 2 ? limitPkts - 2 : 1);
  if (ecnPkts > 0) {
    // RED compares the queue disc's length before the arriving packet is enqueued; pl2
    // compares its port's bytes with the arriving frame added, device slot and frame in
    // service included: pl2 marks with K - 1 frames ahead, so RED's threshold is K - 3.
    double th = ecnPkts > 3 ? ecnPkts - 3 : 1;
    if (fullBytes) th *= fullBytes;
    if (nonEctDrop) {
      bottleneckTc.SetRootQueueDisc("ns3::RedQueueDisc",
        "MaxSize", QueueSizeValue(qdLimit),
        "MinTh", DoubleValue(th), "MaxTh", DoubleValue(th), "QW", DoubleValue(1.0),
        "UseEcn", BooleanValue(true), "UseHardDrop", BooleanValue(false), "Gentle", BooleanValue(false),
        "MeanPktSize", UintegerValue(1500));
    } else {
      StepMarkQueueDisc::GetTypeId();
      bottleneckTc.SetRootQueueDisc("pl2v::StepMarkQueueDisc", "MaxSize", QueueSizeValue(qdLimit), "Threshold", DoubleValue(th));
    }
  } else {
    bottleneckTc.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", QueueSizeValue(qdLimit));
  }

  auto link = [&](Ptr<Node> a, Ptr<Node> b, double bps) {
    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", DataRateValue(DataRate(uint64_t(bps * rateScale))));
    p2p.SetChannelAttribute("Delay", TimeValue(NanoSeconds(delayNs)));
    p2p.SetQueue("ns3::DropTailQueue", "MaxSize", QueueSizeValue(QueueSize("1p")));
    return p2p.Install(a, b);
  };
  Ipv4AddressHelper addr;
  uint32_t subnet = 0;
  auto assign = [&](NetDeviceContainer d) {
    std::ostringstream net; net << "10." << (subnet / 256) << "." << (subnet % 256) << ".0"; subnet++;
    addr.SetBase(net.str().c_str(), "255.255.255.0");
    return addr.Assign(d);
  };

  std::vector<Ipv4Address> sndIp(flows); Ipv4Address rcvIp;
  Ptr<NetDevice> bnDev;
  if (kind == 0) {
    for (uint32_t i = 0; i < flows; i++) {
      NetDeviceContainer d = link(senders.Get(i), switches.Get(0), hostBps);
      fifo.Install(d); sndIp[i] = assign(d).GetAddress(0);
    }
    for (uint32_t i = 0; i < flows; i++) {
      NetDeviceContainer d = link(switches.Get(1), receivers.Get(i), hostBps);
      fifo.Install(d); Ipv4InterfaceContainer ic = assign(d); if (i == 0) rcvIp = ic.GetAddress(1);
    }
    NetDeviceContainer b = link(switches.Get(0), switches.Get(1), bnBps);
    QueueDiscContainer q = bottleneckTc.Install(b.Get(0)); fifo.Install(b.Get(1));
    assign(b); bnDev = b.Get(0); rec.qd = q.Get(0);
  } else {
    for (uint32_t i = 0; i < flows; i++) {
      NetDeviceContainer d = link(senders.Get(i), switches.Get(0), hostBps);
      fifo.Install(d); sndIp[i] = assign(d).GetAddress(0);
    }
    NetDeviceContainer d = link(receivers.Get(0), switches.Get(0), hostBps);
    fifo.Install(d.Get(0)); QueueDiscContainer q = bottleneckTc.Install(d.Get(1));
    rcvIp = assign(d).GetAddress(0); bnDev = d.Get(1); rec.qd = q.Get(0);
  }
  Ipv4GlobalRoutingHelper::PopulateRoutingTables();
  for (uint32_t i = 0; i < flows; i++) rec.ipToFlow[sndIp[i].Get()] = i;

  // bottleneck port occupancy
  Ptr<PointToPointNetDevice> pd = DynamicCast<PointToPointNetDevice>(bnDev);
  rec.devq = pd->GetQueue();
  rec.qd->TraceConnectWithoutContext("PacketsInQueue", MakeCallback(&OnU32));
  rec.qd->TraceConnectWithoutContext("Drop", MakeCallback(&OnDrop));
  rec.qd->TraceConnectWithoutContext("DropBeforeEnqueue", MakeCallback(&OnDropBefore));
  rec.devq->TraceConnectWithoutContext("PacketsInQueue", MakeCallback(&OnU32));
  pd->TraceConnectWithoutContext("PhyTxBegin", MakeCallback(&OnTxBegin));
  pd->TraceConnectWithoutContext("PhyTxEnd", MakeCallback(&OnTxEnd));
  rec.window = 10000;

  // applications: one connection per sender, all to one receiver port
  uint16_t port = 5000;
  PacketSinkHelper sinkH("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
  ApplicationContainer sink = sinkH.Install(receivers.Get(0));
  sink.Start(Seconds(0));
  sink.Get(0)->TraceConnectWithoutContext("Rx", MakeCallback(&OnRx));
  for (uint32_t i = 0; i < flows; i++) {
    BulkSendHelper bs("ns3::TcpSocketFactory", InetSocketAddress(rcvIp, port));
    bs.SetAttribute("MaxBytes", UintegerValue(msgBytes));
    bs.SetAttribute("SendSize", UintegerValue(1460 * 64));
    ApplicationContainer a = bs.Install(senders.Get(i));
    a.Start(NanoSeconds(startsNs[i]));
    Ptr<BulkSendApplication> app = DynamicCast<BulkSendApplication>(a.Get(0));
    Simulator::Schedule(NanoSeconds(startsNs[i] + 1), &Hook, app, i);
  }
  Simulator::Stop(NanoSeconds(durationNs));
  Simulator::Run();
  if (rec.active) rec.out << "q,0," << rec.curWin * rec.window << "," << rec.winMax << "\n";
  for (uint32_t i = 0; i < flows; i++)
    rec.out << "f," << i << "," << rec.firstTx[i] << "," << rec.done[i] << "," << rec.retx[i] << "," << rec.rto[i] << "," << rec.segs[i] << "\n";
  rec.out << "d,0,0," << rec.drops << "," << rec.nonEctDrops << "\n";
  rec.out << "t,0,0," << Simulator::Now().GetNanoSeconds() << "\n";
  Simulator::Destroy();
  R = nullptr;
  return rec.out.str();
}
}  // namespace pl2v
"""

_loaded = False


def _load():
    global _loaded
    from ns import ns  # noqa: F401  (loads every ns-3 library and its headers)
    import cppyy

    if not _loaded:
        cppyy.cppdef(CPP)
        _loaded = True
    return cppyy.gbl.pl2v


def ns3_version() -> str:
    from importlib.metadata import version

    return version("ns3")


def run_ns3(spec: Spec, seed: int, unit: str = "bytes") -> dict:
    """One ns-3 run → the metric row of ns3_common.FIELDS. `unit`: how the bottleneck's
    queue disc counts its limit and marking threshold, "bytes" (the references; pl2 counts
    bytes) or "packets" (the references before issue 24, where a SYN or an ACK took a full
    slot)."""
    import cppyy

    m = _load()
    starts = cppyy.gbl.std.vector["int64_t"]()
    for s in spec.starts_ns(seed):
        starts.push_back(s)
    ccs = cppyy.gbl.std.vector["std::string"]()
    for f in range(spec.flows):
        ccs.push_back(spec.flow_cc(f))
    t0 = time.perf_counter()
    raw = str(
        m.Run(
            0 if spec.kind == "dumbbell" else 1,
            ccs,
            spec.flows,
            spec.host_gbps * 1e9,
            spec.bottleneck_gbps * 1e9,
            spec.delay_ns,
            spec.limit_frames,
            spec.ecn_frames,
            spec.duration_ns,
            spec.msg_bytes,
            starts,
            seed,
            NS3_FULL / WIRE_FULL,
            NS3_IP_FULL if unit == "bytes" else 0,
            spec.non_ect == "drop",
        )
    )
    wall = time.perf_counter() - t0
    return metrics_from_raw(spec, seed, raw, wall)


def metrics_from_raw(spec: Spec, seed: int, raw: str, wall: float) -> dict:
    cwnd: dict[int, list[tuple[int, float]]] = {}
    rx: dict[int, list[tuple[int, float]]] = {}
    queue: list[tuple[int, float]] = []
    flows: list[list[int]] = []
    drops = nonect = 0
    for line in raw.splitlines():
        k, a, b, *rest = line.split(",")
        if k == "c":
            cwnd.setdefault(int(a), []).append((int(b), float(rest[0])))
        elif k == "r":
            rx.setdefault(int(a), []).append((int(b), float(rest[0])))
        elif k == "q":
            queue.append((int(b), float(rest[0])))
        elif k == "f":
            flows.append([int(x) for x in (b, *rest)])
        elif k == "d":
            drops, nonect = int(rest[0]), int(rest[1])
    row = summarise(spec, seed, cwnd, rx, queue, flows, drops, wall)
    row["nonect_drops"] = nonect
    return row


def summarise(spec, seed, cwnd, rx, queue, flows, drops, wall) -> dict:
    """Raw series → one row. `flows`: per flow [first_tx_ns, done_ns, retransmissions,
    timeouts, segments]; `rx`: per flow (time_ns, cumulative bytes delivered)."""
    row: dict = {"scenario": spec.name, "seed": seed, "wall_s": wall}
    t0, t1 = spec.warmup_ns, spec.duration_ns
    if spec.kind == "dumbbell":
        tputs = []
        for f in range(spec.flows):
            pts = rx.get(f, [])
            before = max([v for t, v in pts if t <= t0], default=0.0)
            after = max([v for t, v in pts if t <= t1], default=0.0)
            tputs.append((after - before) * 8 / (t1 - t0))  # bits/ns = Gbps
        row["throughput_gbps"] = sum(tputs)
        row["jain"] = jain(tputs)
        row["flow0_share"] = tputs[0] / sum(tputs) if sum(tputs) else float("nan")
        samples: list[float] = []
        for f in range(spec.flows):
            samples += sample_and_hold(sorted(cwnd.get(f, [])), t0, t1, WINDOW_NS)
        row["cwnd_mean_bytes"] = sum(samples) / len(samples) if samples else float("nan")
        row["cwnd_p50_bytes"] = quantile(samples, 0.5)
        row["cwnd_p99_bytes"] = quantile(samples, 0.99)
        q = [v for t, v in queue if t0 <= t < t1]
    else:
        fcts = [(d - s) / 1e3 for s, d, *_ in flows if d >= 0 and s >= 0]
        row["fct_p50_us"] = quantile(fcts, 0.5)
        row["fct_p99_us"] = quantile(fcts, 0.99)
        row["fct_max_us"] = max(fcts) if fcts else float("nan")
        q = [v for t, v in queue]
    row["queue_p50_bytes"] = quantile(q, 0.5)
    row["queue_p99_bytes"] = quantile(q, 0.99)
    row["drops"] = drops
    row["retransmissions"] = sum(f[2] for f in flows)
    row["timeouts"] = sum(f[3] for f in flows)
    row["segments_sent"] = sum(f[4] for f in flows)
    return row


def header(spec: Spec, version: str, unit: str = "bytes") -> str:
    ccs = "+".join(spec.flow_cc(f) for f in range(spec.flows)) if spec.ccs else spec.cc
    qdisc = ("RED with ECN (non-ECT dropped)" if spec.non_ect == "drop" else "mark-only step (non-ECT passes)") if spec.ecn_frames else "FIFO"
    return (
        f"ns-3 reference for pl2 validation scenario {spec.name}\n"
        f"ns-3 version: {version} (PyPI wheel ns3=={version})\n"
        f"generated by validation/ns3/scenarios.py; settings in validation/ns3/README.md\n"
        f"cc={ccs} flows={spec.flows} host={spec.host_gbps}Gbps bottleneck={spec.bottleneck_gbps}Gbps "
        f"delay={spec.delay_ns}ns limit={spec.limit_frames}frames ecn={spec.ecn_frames}frames "
        f"duration={spec.duration_ns}ns warmup={spec.warmup_ns}ns msg={spec.msg_bytes}B\n"
        f"bottleneck queue disc: {qdisc}, limit and threshold counted in {unit}"
        + (f" ({NS3_IP_FULL} B per frame)" if unit == "bytes" else "")
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", nargs="*", default=None, help="scenario names (default: all)")
    ap.add_argument("--seeds", nargs="*", type=int, default=RARE_SEEDS)
    ap.add_argument("--out", type=Path, default=None, help="directory for the CSVs (default: reference/)")
    ap.add_argument("--unit", choices=("bytes", "packets"), default="bytes", help="the queue disc's unit (packets: as before issue 24, for comparison)")
    a = ap.parse_args(argv)
    version = ns3_version()
    if version != NS3_VERSION:
        print(f"warning: ns-3 {version} installed, references are pinned to {NS3_VERSION}", file=sys.stderr)
    for name in a.only or list(SCENARIOS):
        spec = SCENARIOS[name]
        rows = []
        for seed in a.seeds:
            r = run_ns3(spec, seed, a.unit)
            rows.append(r)
            print(f"{name} seed {seed}: " + ", ".join(f"{k}={v:.4g}" for k, v in r.items() if isinstance(v, float)), flush=True)
        path = (a.out / f"{name}.csv") if a.out else reference_path(name)
        write_rows(path, rows, header(spec, version, a.unit))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
