"""Runs a locally built YAPS (NetSys/simulator @ 179b64e, built outside this repository as
README.md says) on each seed's flow trace and writes YAPS's numbers to reference/:
`yaps-summary.csv` (per seed and size bucket: flows, p50, p99 and mean slowdown) and
`yaps-flows-<seed>.csv` (per flow: id, size, FCT, YAPS's own slowdown, packets sent,
drops).

    python3 validation/yaps/flows.py --out /tmp/yaps-flows --seeds 1-10
    python3 validation/yaps/yaps_side.py --simulator /work/peer/yaps/simulator --flows /tmp/yaps-flows
"""

import argparse
import os
import subprocess

import common

HERE = os.path.dirname(os.path.abspath(__file__))

# The pHost template of py/run_experiments.py:54-99 with the changes README.md lists:
# bandwidth 10 Gbps, store-and-forward, flows from a trace.
CONF = """init_cwnd: 2
max_cwnd: 6
retx_timeout: 9.50003e-06
queue_size: 36864
propagation_delay: 0.0000002
bandwidth: 10000000000.0
queue_type: 2
flow_type: 112
num_flow: 100000000
flow_trace: {trace}
cut_through: 0
mean_flow_size: 0
load_balancing: 0
preemptive_queue: 0
big_switch: 0
host_type: 12
traffic_imbalance: 0
load: 0.6
reauth_limit: 3
magic_trans_slack: 1.1
magic_delay_scheduling: 1
use_flow_trace: 1
smooth_cdf: 1
burst_at_beginning: 0
capability_timeout: 1.5
capability_resend_timeout: 9
capability_initial: 8
capability_window: 8
capability_window_timeout: 25
ddc: 0
ddc_cpu_ratio: 0.33
ddc_mem_ratio: 0.33
ddc_disk_ratio: 0.34
ddc_normalize: 2
ddc_type: 0
deadline: 0
schedule_by_deadline: 0
avg_deadline: 0.0001
capability_third_level: 1
capability_fourth_level: 0
magic_inflate: 1
interarrival_cdf: none
num_host_types: 13
permutation_tm: 0
"""


def parse(text):
    """Finished-flow lines (event.cpp:299-331): id size src dst start_us finish_us fct_us
    oracle_us slowdown sent/pkts//received drops/ackdrops/... first_byte_us."""
    flows = {}
    for line in text.splitlines():
        f = line.split()
        if len(f) < 11 or not f[0].isdigit():
            continue
        sent = int(f[9].split("/")[0])
        drops = int(f[10].split("/")[0])
        flows[int(f[0])] = dict(id=int(f[0]), size=int(f[1]), src=int(f[2]), dst=int(f[3]), start_us=float(f[4]),
                                fct_us=float(f[6]), yaps_slowdown=float(f[8]), sent=sent, drops=drops)
    return flows


def run_seed(simulator, flows_dir, seed):
    trace = os.path.join(flows_dir, f"yaps-{seed}.trace")
    conf = os.path.join(flows_dir, f"yaps-{seed}.conf")
    with open(conf, "w") as f:
        f.write(CONF.format(trace=trace))
    out = subprocess.run([simulator, "1", conf], capture_output=True, text=True, check=True).stdout
    n_trace = sum(1 for _ in open(trace))
    flows = parse(out)
    if len(flows) != n_trace:
        raise SystemExit(f"seed {seed}: YAPS finished {len(flows)} of {n_trace} flows")
    return flows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--simulator", required=True)
    ap.add_argument("--flows", required=True)
    ap.add_argument("--seeds", default="1-10")
    ap.add_argument("--out", default=os.path.join(HERE, "reference"))
    ap.add_argument("--per-flow-seeds", default="1", help="seeds whose per-flow numbers are written (comma list)")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    lo, _, hi = a.seeds.partition("-")
    with open(os.path.join(a.out, "yaps-summary.csv"), "w") as summ:
        summ.write("# YAPS (NetSys/simulator 179b64e) pHost, slowdown = FCT / YAPS oracle; see README.md\n")
        summ.write("seed,bucket,flows,p50,p99,mean\n")
        for seed in range(int(lo), int(hi or lo) + 1):
            flows = run_seed(a.simulator, a.flows, seed)
            rows = []
            per_flow = str(seed) in a.per_flow_seeds.split(",")
            with open(os.path.join(a.out, f"yaps-flows-{seed}.csv") if per_flow else os.devnull, "w") as f:
                f.write(f"# YAPS per-flow results, seed {seed}; see README.md\n")
                f.write("id,size,fct_us,yaps_slowdown,sent,drops\n")
                for i in sorted(flows):
                    r = flows[i]
                    f.write(f"{i},{r['size']},{r['fct_us']:.4f},{r['yaps_slowdown']:.4f},{r['sent']},{r['drops']}\n")
                    sd = r["fct_us"] / common.oracle_us(r["size"], r["src"], r["dst"])
                    # Our oracle is YAPS's: its slowdown column agrees to its 4 decimals.
                    assert abs(sd - r["yaps_slowdown"]) < 1e-3 * sd, (r, sd)
                    rows.append((r["size"] // common.MSS, sd))
            for b, (n, p50, p99, mean) in common.stats(rows).items():
                summ.write(f"{seed},{b},{n},{p50:.4f},{p99:.4f},{mean:.4f}\n")
            print(f"seed {seed}: {len(flows)} flows, {sum(r['sent'] for r in flows.values())} data packets sent, "
                  f"{sum(r['drops'] for r in flows.values())} dropped")


if __name__ == "__main__":
    main()
