"""Compares pl2's NDP with the committed htsim references, per (scenario, n, IW), over
the seeds both sides ran: the means of the last and the median per-flow completion time
(receiver side) within 5%, trims and retransmissions within 10% (htsim_common.FCT_TOL,
COUNT_TOL). Counts are compared only where htsim's mean is at least 20 (below that a
10% band is less than two events); they are printed regardless.

    python validation/htsim/htsim_compare.py                          # runs pl2 on every run, prints the table
    python validation/htsim/htsim_compare.py --pl2 out/htsim-pl2/runs.csv   # reads htsim_pl2.py's rows instead
    python validation/htsim/htsim_compare.py --markdown > table.md
"""

from __future__ import annotations

import argparse
import csv
import statistics
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from htsim_common import COUNT_TOL, FCT_TOL, all_runs, reference_runs  # noqa: E402

#: Counts below this htsim mean are shown but not judged.
MIN_COUNT = 20

METRICS = [
    ("last FCT (µs)", "last_fct_rx_us", "last_fct_rx_us", FCT_TOL),
    ("median FCT (µs)", "median_fct_rx_us", "median_fct_rx_us", FCT_TOL),
    ("trims", "trims", "trims", COUNT_TOL),
    ("retransmissions", "rtx", "rtx", COUNT_TOL),
]


def _rtx(row: dict) -> float:
    return float(row["rtx_pull"] or 0) + float(row["rtx_rto"] or 0)


def compare(pl2_rows: list[dict]) -> list[dict]:
    """One row per (scenario, n, IW, metric): htsim's and pl2's means, the relative
    difference and whether it is within tolerance (None: not judged)."""
    ref = reference_runs()
    groups: dict[tuple, list[tuple[dict, dict]]] = defaultdict(list)
    for r in pl2_rows:
        key = (r["scenario"], int(r["n"]), int(r["iw"]), int(r["seed"]))
        if key in ref:
            groups[key[:3]].append((ref[key], r))
    out = []
    for (sc, n, iw), pairs in sorted(groups.items()):
        for label, hk, pk, tol in METRICS:
            def val(row: dict, k: str) -> float:
                return _rtx(row) if k == "rtx" else float(row[k])

            h = statistics.mean(val(a, hk) for a, _ in pairs)
            p = statistics.mean(val(b, pk) for _, b in pairs)
            diff = (p - h) / h if h else (0.0 if p == h else float("inf"))
            judged = tol == FCT_TOL or h >= MIN_COUNT
            out.append({"scenario": sc, "n": n, "iw": iw, "seeds": len(pairs), "metric": label, "htsim": h, "pl2": p, "diff": diff, "ok": (abs(diff) <= tol) if judged else None})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pl2", help="htsim_pl2.py's CSV (default: run pl2 now)")
    ap.add_argument("--markdown", action="store_true")
    a = ap.parse_args()
    if a.pl2:
        with open(a.pl2, newline="") as f:
            rows = list(csv.DictReader(f))
    else:
        from htsim_pl2 import run_pl2

        rows = [run_pl2(r) for r in all_runs()]
    table = compare(rows)
    if a.markdown:
        print("| scenario | n | IW | metric | htsim | pl2 | diff | within |")
        print("| --- | ---: | ---: | --- | ---: | ---: | ---: | --- |")
    for t in table:
        ok = {True: "yes", False: "**no**", None: "–"}[t["ok"]]
        if a.markdown:
            print(f"| {t['scenario']} | {t['n']} | {t['iw']} | {t['metric']} | {t['htsim']:.1f} | {t['pl2']:.1f} | {t['diff']:+.1%} | {ok} |")
        else:
            print(f"{t['scenario']:6} n={t['n']:<3} iw={t['iw']:<2} {t['metric']:16} htsim {t['htsim']:11.1f}  pl2 {t['pl2']:11.1f}  {t['diff']:+7.1%}  {ok}")
    misses = [t for t in table if t["ok"] is False]
    print(f"\n{len(table) - len(misses)} of {len(table)} within tolerance" + (f"; misses: {len(misses)}" if misses else ""))


if __name__ == "__main__":
    main()
