"""Flows sharing the receiver's link: N senders of one rack each start a 4-packet flow
(sent whole on free tokens) to host 15 at the same instant, on YAPS's network at 100 Gbps
(100 ns links). YAPS's re-grant timer of a flow sent whole is 2 x its packets MTU times
after its RTS (`ext/capabilityflow.cpp:259-266`), whatever the number of flows sharing
the link; with N >= 2 a flow's last packet can still wait in the ToR when it fires, and
the packet is granted and sent again (README.md, "Flows sharing the receiver's link").

    python3 validation/yaps/shared_link.py --simulator /path/to/simulator   # rewrites reference/yaps-shared-link.csv
    python3 validation/yaps/shared_link.py                                  # pl2's side, beside YAPS's numbers

The pl2 side is also a test: `python/tests/test_yaps_reference.py`.
"""

import argparse
import csv
import os
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REFERENCE = os.path.join(HERE, "reference", "yaps-shared-link.csv")
SENDERS = (1, 2, 3, 5)
PKTS = 4
MSS = 1460
DST = 15


def yaps_conf(trace):
    """The template of yaps_side.py at 100 Gbps with 100 ns links."""
    import yaps_side  # YAPS's side only: the pl2 side (and its test) need neither it nor its `common`

    c = yaps_side.CONF.format(trace=trace)
    c = c.replace("bandwidth: 10000000000.0", "bandwidth: 100000000000.0")
    return c.replace("propagation_delay: 0.0000002", "propagation_delay: 0.0000001")


def run_yaps(simulator, n, work):
    trace = os.path.join(work, f"shared-{n}.trace")
    with open(trace, "w") as f:
        f.writelines(f"{i} 1.0 0 0 {PKTS} 0 0 {i} {DST}\n" for i in range(n))
    conf = os.path.join(work, f"shared-{n}.conf")
    with open(conf, "w") as f:
        f.write(yaps_conf(trace))
    out = subprocess.run([simulator, "1", conf], capture_output=True, text=True, check=True).stdout
    import yaps_side

    flows = yaps_side.parse(out)
    assert len(flows) == n, out
    return {i: (flows[i]["fct_us"], flows[i]["sent"]) for i in flows}


def pl2_scenario(n, work):
    """pl2's scenario text for `n` senders (scenarios/phost-yaps.toml at 100 Gbps)."""
    path = os.path.join(work, f"shared-{n}.csv")
    with open(path, "w") as f:
        f.write("time,src,dst,size,thread,priority\n")
        f.writelines(f"0,{s},{DST},{PKTS * MSS},0,0\n" for s in range(n))
    with open(os.path.join(HERE, "scenarios", "phost-yaps.toml"), encoding="utf-8") as f:
        text = f.read()
    for a, b in [('duration = "500ms"', 'duration = "50us"'),
                 ('uplink = { rate = "40Gbps", delay = "200ns" }', 'uplink = { rate = "400Gbps", delay = "100ns" }'),
                 ('link = { rate = "10Gbps", delay = "200ns" }', 'link = { rate = "100Gbps", delay = "100ns" }'),
                 ('file = "flows.csv"', f'file = "{path}"')]:
        assert a in text, a
        text = text.replace(a, b)
    return text


def run_pl2(n, work):
    """Per flow: (FCT at the sender in µs, data packets sent), and pl2's pHost counters."""
    import pl2

    r = pl2.run(pl2.Scenario.from_toml(pl2_scenario(n, work), work), progress=False)
    fct = {f: v / 1e3 for f, name, v in r.table("probes").select("flow", "name", "value").iter_rows() if name == "phost_sender_fct_ns"}
    return fct, r.summary["phost"]


def read_reference(path=REFERENCE):
    """{senders: {flow: (fct_us, sent)}} from YAPS's committed numbers."""
    ref = {}
    with open(path) as f:
        for r in csv.DictReader(line for line in f if not line.startswith("#")):
            ref.setdefault(int(r["senders"]), {})[int(r["flow"])] = (float(r["fct_us"]), int(r["sent"]))
    return ref


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--simulator", help="a YAPS binary: rewrite the reference with its numbers")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as work:
        if a.simulator:
            with open(REFERENCE, "w") as f:
                f.write("# YAPS (NetSys/simulator 179b64e): N senders x one 4-packet flow to host 15 at 100 Gbps; see README.md\n")
                f.write("senders,flow,fct_us,sent\n")
                for n in SENDERS:
                    for i, (fct, sent) in sorted(run_yaps(a.simulator, n, work).items()):
                        f.write(f"{n},{i},{fct:.4f},{sent}\n")
        ref = read_reference()
        print("| senders | FCTs µs (sorted), YAPS | pl2 | data packets sent, YAPS | pl2 | re-grants, pl2 |")
        print("|---|---|---|---|---|---|")
        for n in SENDERS:
            fct, st = run_pl2(n, work)
            y = ref[n]
            print(f"| {n} | {' '.join(f'{v:.4f}' for v in sorted(f for f, _ in y.values()))} | {' '.join(f'{v:.4f}' for v in sorted(fct.values()))} "
                  f"| {sum(s for _, s in y.values())} | {st['data_sent']} | {st['regrants']} |")


if __name__ == "__main__":
    main()
