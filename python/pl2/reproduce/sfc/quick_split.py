"""SFC benefit experiment, quick mode's queueing against the full run's: which of quick
mode's two differences (30-to-1 incasts instead of 120-to-1; 0.3 ms of measured arrivals
instead of 1.2 ms) moves the ToR tier's SFC/PFC ratio. The two crossed settings, PFC and
SFC, one seed: the quick window with the full run's incasts, and the full window with
quick mode's incasts; the time-weighted mean queue per ToR port (all, toward hosts,
toward aggregation switches) and per aggregation port, as the benefit section measures it.

`python -m pl2.reproduce.sfc.quick_split DIR [SEED] [WORKERS]` runs them (into, or reusing,
the store `DIR/store`; seed 1, one worker by default) and
prints the table the benefit section's quick-mode note quotes (`benefit.QUICK_SPLIT`).
"""

from __future__ import annotations

import sys
from typing import Any

from pl2.reproduce.common import Context, Job, table
from pl2.reproduce.sfc import benefit
from pl2.reproduce.sfc.common import fmt

DESIGNS = ["PFC", "SFC"]
TIERS = ["tor", "tor_down", "tor_up", "agg"]


def crossed() -> dict[str, dict[str, Any]]:
    """The two crossed settings: each takes one of quick mode's differences alone."""
    q, f = benefit.settings(True), benefit.settings(False)
    return {
        "quick window, 120-to-1": {**q, "fan_in": f["fan_in"]},
        "full window, 30-to-1": {**f, "fan_in": q["fan_in"]},
    }


def jobs(seed: int) -> list[Job]:
    out = []
    for label, s in crossed().items():
        for j in benefit.jobs_for(s, [seed]):
            if j.params["design"] in DESIGNS:
                out.append(Job(j.scenario, {**j.params, "figure": "sfc-quick-split", "setting": label}, j.seed, "sfc-quick-split"))
    return out


def measure(ctx: Context, seed: int) -> list[dict[str, Any]]:
    """Per setting and design: the time-weighted mean queue per port of each tier (KB)."""
    js = jobs(seed)
    rows = []
    for job, res in zip(js, ctx.run_many(js), strict=True):
        s = crossed()[job.params["setting"]]
        q = benefit.queue_stats(res.ports, s["warmup"] * 1_000_000, s["stop"] * 1_000_000, 10_000_000)
        rows.append({"setting": job.params["setting"], "design": job.params["design"],
                     **{t: q[t]["tw_mean_kb"] for t in TIERS}})
    return rows


def render(rows: list[dict[str, Any]]) -> str:
    body = []
    for label in crossed():
        p = next(r for r in rows if r["setting"] == label and r["design"] == "PFC")
        s = next(r for r in rows if r["setting"] == label and r["design"] == "SFC")
        body.append([label] + [f"{fmt(s[t])} / {fmt(p[t])} ({s[t] / p[t]:.2f}×)" if p[t] else "–" for t in TIERS])
    return table(["setting", "ToR SFC / PFC (KB)", "ToR → host", "ToR → agg", "agg"], body)


def main(argv: list[str]) -> None:
    from pathlib import Path

    from pl2.executors import LocalExecutor
    from pl2.store import Store

    root = Path(argv[0])
    seed = int(argv[1]) if len(argv) > 1 else 1
    workers = int(argv[2]) if len(argv) > 2 else 1
    ctx = Context(out=root / "quick-split", store=Store(root / "store"), seeds=[seed], quick=False,
                  executor=LocalExecutor(workers))
    print(render(measure(ctx, seed)))


if __name__ == "__main__":
    main(sys.argv[1:])
