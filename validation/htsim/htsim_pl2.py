"""pl2's side of the NDP cross-check: runs each scenario of htsim_common through the
Python API (`pl2.run`) and writes one row per run with the reference's columns.

Completion time is the receiver side's on both simulators (htsim: the sink's cumulative
ACK reaches the flow's last byte; pl2: the message's delivery, `finish_ps`), from the
flow's start at t = 0. Retransmissions are NDP's pulled and timed-out resends.

    python validation/htsim/htsim_pl2.py                     # every run → out/htsim-pl2/runs.csv
    python validation/htsim/htsim_pl2.py --only incast --n 100 --iw 23 --seeds 1 2
    python validation/htsim/htsim_pl2.py --print-toml --n 10 --iw 1 --seeds 1
"""

from __future__ import annotations

import argparse
import csv
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from htsim_common import Run, all_runs, median, scenario_toml, flows_csv  # noqa: E402

FIELDS = ["scenario", "n", "iw", "seed", "wall_s", "last_fct_rx_us", "median_fct_rx_us", "trims", "rtx_pull", "rtx_rto", "header_drops", "unfinished_flows", "pulls", "nacks"]


def run_pl2(run: Run) -> dict:
    """One pl2 run → a row of FIELDS."""
    import pl2

    with tempfile.TemporaryDirectory() as d:
        csv_path = Path(d) / "flows.csv"
        csv_path.write_text(flows_csv(run), encoding="utf-8")
        sc = pl2.Scenario.from_toml(scenario_toml(run, str(csv_path)), d)
        t0 = time.perf_counter()
        r = pl2.run(sc, progress=False)
        wall = time.perf_counter() - t0
    s = r.summary
    msgs = r.table("messages")
    fin = [f / 1e6 for f in msgs["finish_ps"].to_list() if f is not None]
    ndp = s.get("ndp") or {}
    return {
        "scenario": run.scenario,
        "n": run.n,
        "iw": run.iw,
        "seed": run.seed,
        "wall_s": round(wall, 3),
        "last_fct_rx_us": max(fin) if fin else None,
        "median_fct_rx_us": median(fin) if fin else None,
        "trims": s["counters"]["trims"],
        "rtx_pull": ndp.get("retransmissions_pulled"),
        "rtx_rto": ndp.get("retransmissions_rto"),
        "header_drops": s["drops"]["queue_limit"],
        "unfinished_flows": len(msgs) - len(fin),
        "pulls": ndp.get("pulls_sent"),
        "nacks": ndp.get("nacks_received"),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", choices=["incast", "perm"])
    ap.add_argument("--n", type=int, nargs="*")
    ap.add_argument("--iw", type=int, nargs="*")
    ap.add_argument("--seeds", type=int, nargs="*")
    ap.add_argument("--out", default="out/htsim-pl2/runs.csv")
    ap.add_argument("--print-toml", action="store_true", help="print each scenario instead of running it")
    a = ap.parse_args()
    runs = [r for r in all_runs() if (not a.only or r.scenario == a.only) and (not a.n or r.n in a.n) and (not a.iw or r.iw in a.iw) and (not a.seeds or r.seed in a.seeds)]
    if a.print_toml:
        for r in runs:
            print(scenario_toml(r, "flows.csv"))
        return
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", newline="") as f:
        w = csv.DictWriter(f, FIELDS)
        w.writeheader()
        for r in runs:
            row = run_pl2(r)
            w.writerow(row)
            f.flush()
            print(f"{r.scenario} n={r.n} iw={r.iw} seed={r.seed}: last {row['last_fct_rx_us']:.3f} µs, median {row['median_fct_rx_us']:.3f} µs, trims {row['trims']}, rtx {row['rtx_pull']}+{row['rtx_rto']}, {row['wall_s']} s", flush=True)


if __name__ == "__main__":
    main()
