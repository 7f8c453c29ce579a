"""pl2's TCP against the committed ns-3 references (validation/ns3/reference/*.csv).

Runs pl2's side of a small subset (validation/ns3/ns3_common.SMALL: DCTCP with 4 long flows
on a dumbbell, the DCTCP 8 × 1 MB incast, and one DCTCP flow beside one CUBIC flow under
both settings of `switch.non_ect`; seeds 1-10, and 1-50 where a count is rare; a few
seconds) through the Python API and checks every target of validation/ns3/compare.py:
completion time and queue p50/p99 within 10%, retransmissions and drops within their 95%
intervals, DCTCP's share of the link within 0.05, and counts below 5 per run (timeouts)
within 25% over 50 seeds. ns-3 itself never runs here; the references are regenerated
by validation/ns3/scenarios.py. Skipped when the reference CSVs are absent.

KNOWN_MISSES lists the targets pl2 misses today, each with its reason; they are strict
xfails, so a change that brings them into agreement shows up as XPASS (then drop the
entry).

`test_agrees_with_ns3_under_ns3s_rules` runs every scenario with pl2 set to ns-3's rules
where the two models differ (pl2_side.py --ns3-rules: ns-3's point-to-point framing, its
bytes in flight, Linux's CUBIC α, its DCTCP CE-change ACK), which is what explains
the default misses; KNOWN_MISSES_NS3_RULES is what is left. It runs seeds 1-10 only, so
its rare counts are not checked here (they would need 50 seeds of every scenario):
`compare.py --ns3-rules` compares them over 50 and RESULTS.md reports it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

VALIDATION = Path(__file__).resolve().parents[2] / "validation" / "ns3"
sys.path.insert(0, str(VALIDATION))

pytestmark = pytest.mark.real_native

common = pytest.importorskip("ns3_common", reason="validation/ns3 is missing")

#: (scenario, metric) → why pl2 and ns-3 differ (see validation/ns3/README.md).
KNOWN_MISSES: dict[tuple[str, str], str] = {
    ("dumbbell-dctcp-4", "timeouts"): "rare count, unresolved: 0.02 vs 0.14 per run over 50 seeds (1 vs 7 timeouts), intervals overlap (validation/ns3/RESULTS.md)",
    ("incast-dctcp-8x1MB", "timeouts"): "rare count, unresolved: 0.30 vs 0.70 per run over 50 seeds, intervals overlap; not traced (validation/ns3/RESULTS.md)",
    ("mixed-dctcp-cubic-drop", "timeouts"): "CUBIC, held at the threshold, times out 5.4 times per run in pl2 and 7.6 in ns-3 (-28%); with ns-3's rules 6.5 (-14%); see validation/ns3/RESULTS.md",
    ("mixed-dctcp-cubic-pass", "timeouts"): "ns-3's DCTCP lets cwnd fall below one segment and waits for the RTO (12.4 per run); pl2 floors it at 2 segments as Linux does (0.72); see validation/ns3/RESULTS.md for ns-3 with the floor",
}


#: What pl2 still misses with ns-3's rules among the targets checked here (seeds 1-10;
#: validation/ns3/RESULTS.md): nothing.
KNOWN_MISSES_NS3_RULES: dict[tuple[str, str], str] = {}


def _targets(names: list[str] | None = None) -> list[tuple[str, str]]:
    import compare

    out = []
    for name in names or common.SMALL:
        out += [(name, m) for m, _kind, target in compare.metrics(name) if target]
    return out


_CACHE: dict[tuple[str, bool], list] = {}


def _checks(name: str, ns3_rules: bool = False) -> dict[str, object]:
    import compare
    from pl2_side import run_pl2

    if (name, ns3_rules) not in _CACHE:
        ref = common.reference_path(name)
        if not ref.exists():
            pytest.skip(f"no ns-3 reference {ref} (generate it with validation/ns3/scenarios.py)")
        rows, comments = common.read_rows(ref)
        assert any("ns-3 version" in c for c in comments), "the reference must name its ns-3 version"
        spec = common.SCENARIOS[name]
        pl2_rows = [run_pl2(spec, s, ns3_rules=ns3_rules) for s in common.SEEDS]
        if not ns3_rules and compare.rare(name, rows, pl2_rows):
            pl2_rows += [run_pl2(spec, int(r["seed"])) for r in rows if int(r["seed"]) not in common.SEEDS]
        _CACHE[(name, ns3_rules)] = compare.compare(name, rows, pl2_rows)
    return {c.metric: c for c in _CACHE[(name, ns3_rules)]}


@pytest.mark.parametrize(
    ("scenario", "metric"),
    [
        pytest.param(s, m, marks=pytest.mark.xfail(strict=True, reason=KNOWN_MISSES[(s, m)])) if (s, m) in KNOWN_MISSES else (s, m)
        for s, m in _targets()
    ],
)
def test_agrees_with_ns3(scenario: str, metric: str) -> None:
    import compare

    c = _checks(scenario)[metric]
    assert c.ok, "\n" + compare.table([c])


@pytest.mark.parametrize(
    ("scenario", "metric"),
    [
        pytest.param(s, m, marks=pytest.mark.xfail(strict=True, reason=KNOWN_MISSES_NS3_RULES[(s, m)])) if (s, m) in KNOWN_MISSES_NS3_RULES else (s, m)
        for s, m in _targets(list(common.SCENARIOS))
    ],
)
def test_agrees_with_ns3_under_ns3s_rules(scenario: str, metric: str) -> None:
    import compare

    c = _checks(scenario, ns3_rules=True)[metric]
    if c.rule.startswith("rare"):
        pytest.skip(f"{scenario} {metric}: a rare count, compared over 50 seeds by compare.py --ns3-rules (RESULTS.md)")
    assert c.ok, "\n" + compare.table([c])


def test_references_are_pinned() -> None:
    for name in common.SCENARIOS:
        ref = common.reference_path(name)
        if not ref.exists():
            pytest.skip(f"no ns-3 reference {ref}")
        rows, comments = common.read_rows(ref)
        assert f"ns-3 version: {common.NS3_VERSION}" in "\n".join(comments), name
        assert len(rows) >= 10, f"{name}: {len(rows)} seeds; the issue asks for at least 10"
        assert [int(r["seed"]) for r in rows] == common.RARE_SEEDS, f"{name}: rare counts need seeds 1-50 (issue 24)"
        assert "counted in bytes" in "\n".join(comments), f"{name}: the queue disc must count bytes, as pl2 does"


def test_rare_counts_need_50_seeds_and_25_percent() -> None:
    """compare.py's rule for counts below 5 per run, on hand-made rows (issue 24): with
    10 seeds the old rule (95% intervals overlap) passed 0.3 vs 0.7 timeouts per run."""
    import compare

    def rows(per_seed: list[int]) -> list[dict]:
        return [{"seed": s, "timeouts": float(v), "retransmissions": 1.0, "segments_sent": 100.0, "drops": 1.0} for s, v in zip(common.RARE_SEEDS, per_seed)]

    def verdict(ref: list[int], pl2: list[int]) -> str:
        return {c.metric: c for c in compare.compare("dumbbell-dctcp-4", rows(ref), rows(pl2))}["timeouts"].verdict

    low = [1, 0, 0, 1, 0, 0, 1, 0, 0, 0] * 5  # 0.3 per run
    high = [1, 1, 0, 1, 1, 0, 1, 1, 1, 0] * 5  # 0.7 per run
    near = [1, 0, 0, 1, 0, 0, 1, 0, 0, 1] * 5  # 0.4 per run: +33%
    assert verdict(low, low) == "ok"
    assert verdict([3, 4] * 25, [4, 4] * 25) == "ok"  # 3.5 vs 4.0: +14%
    assert verdict(low, high) == "MISS"  # 2.3x, the 50-seed intervals apart
    assert verdict(low, near) == "unresolved"  # +33%, the intervals overlap
    assert verdict(low[:10], low[:10]) == "unresolved"  # 10 seeds cannot decide
    assert verdict([6] * 50, [20] * 50) == "MISS"  # not rare: the interval rule, on seeds 1-10
