"""pl2's pHost against YAPS's numbers in reference/: runs pl2 (`pl2-run`) on each seed's
flow list with scenarios/phost-yaps.toml, computes slowdowns with YAPS's oracle as the
denominator on both sides, and prints, per size bucket, p50 / p99 / mean slowdown of both
simulators averaged over the seeds, their ratio, and the worst seed.

    python3 validation/yaps/flows.py --out /tmp/yaps-flows --seeds 1-10
    cargo build --release -p pl2-scenario --bin pl2-run
    python3 validation/yaps/compare.py --flows /tmp/yaps-flows --work /tmp/yaps-pl2

`--work` keeps each seed's pl2 output (`seed-N/out/`); a seed already run there is read,
not run again. `--variant KEY=VALUE` sets a `[transport]` key for a what-if run (e.g.
`--variant 'paths="per_packet"'`), written to a separate work directory.
"""

import argparse
import csv
import json
import os
import shutil
import subprocess
import sys

import pyarrow.parquet as pq

import common

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def run_pl2(pl2_run, flows_dir, work, seed, variants):
    d = os.path.join(work, f"seed-{seed}")
    out = os.path.join(d, "out")
    if not os.path.exists(os.path.join(out, "summary.json")):
        os.makedirs(d, exist_ok=True)
        shutil.copy(os.path.join(flows_dir, f"pl2-{seed}.csv"), os.path.join(d, "flows.csv"))
        text = open(os.path.join(HERE, "scenarios", "phost-yaps.toml")).read()
        for v in variants:
            key = v.split("=")[0].strip()
            text = "".join(line for line in text.splitlines(keepends=True) if line.split("=")[0].strip() != key)
            text = text.replace('kind = "phost"\n', f'kind = "phost"\n{v}\n')
        open(os.path.join(d, "scenario.toml"), "w").write(text)
        if os.path.exists(out):
            shutil.rmtree(out)
        with open(os.path.join(d, "run.log"), "w") as log:
            subprocess.run([pl2_run, os.path.join(d, "scenario.toml"), out], stdout=log, stderr=subprocess.STDOUT, check=True)
    msgs = pq.read_table(os.path.join(out, "messages.parquet"), columns=["id", "src", "dst", "size_bytes"]).to_pylist()
    probes = pq.read_table(os.path.join(out, "probes.parquet"), columns=["flow", "name", "value"]).to_pylist()
    fct_ns = {p["flow"]: p["value"] for p in probes if p["name"] == "phost_sender_fct_ns"}
    missing = [m["id"] for m in msgs if m["id"] not in fct_ns]
    if missing:
        raise SystemExit(f"seed {seed}: {len(missing)} flows without an ACK at the sender, e.g. {missing[:5]}")
    rows = [(m["size_bytes"] // common.MSS, fct_ns[m["id"]] / 1e3 / common.oracle_us(m["size_bytes"], m["src"], m["dst"])) for m in msgs]
    summary = json.load(open(os.path.join(out, "summary.json")))
    return rows, summary


def read_reference():
    ref = {}
    with open(os.path.join(HERE, "reference", "yaps-summary.csv")) as f:
        for r in csv.DictReader(line for line in f if not line.startswith("#")):
            ref[(int(r["seed"]), r["bucket"])] = (int(r["flows"]), float(r["p50"]), float(r["p99"]), float(r["mean"]))
    return ref


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--flows", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--seeds", default="1-10")
    ap.add_argument("--pl2-run", default=os.path.join(ROOT, "target", "release", "pl2-run"))
    ap.add_argument("--variant", action="append", default=[])
    a = ap.parse_args()
    ref = read_reference()
    lo, _, hi = a.seeds.partition("-")
    seeds = list(range(int(lo), int(hi or lo) + 1))
    ours = {}
    for seed in seeds:
        rows, summary = run_pl2(a.pl2_run, a.flows, a.work, seed, a.variant)
        for b, v in common.stats(rows).items():
            ours[(seed, b)] = v
        ph = summary["phost"]
        print(f"seed {seed}: {len(rows)} flows, {summary['counters']['packets_dropped']} frames dropped, "
              f"{ph['data_sent']} data packets sent, {ph['regrants']} re-grants, {ph['rts_resent']} RTS resent", file=sys.stderr)
    names = ["all"] + [b for b, _, _ in common.BUCKETS]
    print("| bucket (packets) | flows | p50 YAPS | p50 pl2 | ratio | p99 YAPS | p99 pl2 | ratio | mean YAPS | mean pl2 | ratio | worst seed (stat, ratio) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    ok = True
    for b in names:
        n = sum(ref[(s, b)][0] for s in seeds)
        cells = []
        worst = (0.0, "", 1.0)
        for k, stat in [(1, "p50"), (2, "p99"), (3, "mean")]:
            y = sum(ref[(s, b)][k] for s in seeds) / len(seeds)
            o = sum(ours[(s, b)][k] for s in seeds) / len(seeds)
            cells += [f"{y:.3f}", f"{o:.3f}", f"{o / y:.3f}"]
            ok &= abs(o / y - 1) <= 0.10
            for s in seeds:
                r = ours[(s, b)][k] / ref[(s, b)][k]
                if abs(r - 1) > abs(worst[2] - 1):
                    worst = (s, stat, r)
        print(f"| {b} | {n} | " + " | ".join(cells) + f" | {worst[0]} ({worst[1]}, {worst[2]:.3f}) |")
    print("all seed-averaged statistics within 10%" if ok else "some seed-averaged statistic is more than 10% off")


if __name__ == "__main__":
    main()
