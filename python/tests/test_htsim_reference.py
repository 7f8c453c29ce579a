"""pl2's NDP against the committed htsim references (validation/htsim/reference/runs.csv).

Runs pl2's side of a small subset (validation/htsim/htsim_common.QUICK: the 100-to-1
incast with initial window 23 over three seeds, the 400-to-1 incast where headers are
dropped and only the RTO recovers them, and a 432-host permutation; well under a minute)
and checks every target of validation/htsim/htsim_compare.py: last and median completion time
within 5%, trims and retransmissions within 10%. htsim itself never runs here; the
references are regenerated as validation/htsim/README.md says.

KNOWN_MISSES lists the targets pl2 misses today, each with its reason; they are strict
xfails, so a change that brings them into agreement shows up as XPASS (then drop the
entry).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

VALIDATION = Path(__file__).resolve().parents[2] / "validation" / "htsim"
sys.path.insert(0, str(VALIDATION))

pytestmark = pytest.mark.real_native

common = pytest.importorskip("htsim_common", reason="validation/htsim is missing")

#: (scenario, n, IW, metric) → why pl2 and htsim differ (see validation/htsim/README.md).
KNOWN_MISSES: dict[tuple[str, int, int, str], str] = {}


@pytest.fixture(scope="module")
def table() -> list[dict]:
    from htsim_compare import compare
    from htsim_pl2 import run_pl2

    return compare([run_pl2(r) for r in common.QUICK])


def _cases() -> list:
    keys = sorted({r.key for r in common.QUICK})
    metrics = ["last FCT (µs)", "median FCT (µs)", "trims", "retransmissions"]
    out = []
    for sc, n, iw in keys:
        for m in metrics:
            why = KNOWN_MISSES.get((sc, n, iw, m))
            marks = [pytest.mark.xfail(reason=why, strict=True)] if why else []
            out.append(pytest.param(sc, n, iw, m, marks=marks, id=f"{sc}-n{n}-iw{iw}-{m.split()[0]}"))
    return out


@pytest.mark.parametrize(("scenario", "n", "iw", "metric"), _cases())
def test_agrees_with_htsim(table: list[dict], scenario: str, n: int, iw: int, metric: str) -> None:
    row = next(t for t in table if (t["scenario"], t["n"], t["iw"], t["metric"]) == (scenario, n, iw, metric))
    assert row["ok"] is not False, f"{scenario} n={n} IW={iw} {metric}: htsim {row['htsim']:.1f}, pl2 {row['pl2']:.1f} ({row['diff']:+.1%})"
