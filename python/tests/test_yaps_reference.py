"""pl2's pHost against the committed YAPS references (validation/yaps/reference/).

Runs pl2's side of seed 1 (about 5,400 flows of YAPS's IMC10 workload at 60% load on
YAPS's 144-host network, a few seconds) through the Python API and checks the slowdown of
all flows (FCT at the sender over YAPS's oracle, as validation/yaps/compare.py computes
it): p50 and mean within 10% of YAPS's for the same seed. p99 is left to the full
comparison (ten seeds): one seed's tail swings with single flows. YAPS itself never runs
here; validation/yaps/README.md says how the references were made.
"""

from __future__ import annotations

import csv
import importlib.util
import tempfile
from pathlib import Path

import pytest

VALIDATION = Path(__file__).resolve().parents[2] / "validation" / "yaps"

pytestmark = pytest.mark.real_native


def _load(name: str):
    """validation/yaps/NAME.py under a name of its own (its `common` is a common name)."""
    import sys

    sys.path.insert(0, str(VALIDATION))
    spec = importlib.util.spec_from_file_location(f"yaps_{name}", VALIDATION / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    sys.modules.setdefault(f"yaps_{name}", mod)
    return mod


def test_seed_one_slowdowns_agree_with_yaps() -> None:
    import pl2

    if not (VALIDATION / "reference" / "yaps-summary.csv").exists():
        pytest.skip("validation/yaps is missing")
    common = _load("common")
    flows = _load("flows")
    with open(VALIDATION / "reference" / "yaps-summary.csv") as f:
        ref = {r["bucket"]: r for r in csv.DictReader(line for line in f if not line.startswith("#")) if r["seed"] == "1"}
    with tempfile.TemporaryDirectory() as d:
        flows.write(1, 0.6, 0.010, d)
        text = (VALIDATION / "scenarios" / "phost-yaps.toml").read_text(encoding="utf-8").replace('file = "flows.csv"', f'file = "{d}/pl2-1.csv"')
        r = pl2.run(pl2.Scenario.from_toml(text, d), progress=False)
    msgs = r.table("messages")
    probes = r.table("probes")
    fct_ns = {f: v for f, n, v in probes.select("flow", "name", "value").iter_rows() if n == "phost_sender_fct_ns"}
    rows = [(size // common.MSS, fct_ns[i] / 1e3 / common.oracle_us(size, s, t)) for i, s, t, size in msgs.select("id", "src", "dst", "size_bytes").iter_rows()]
    assert len(rows) == int(ref["all"]["flows"]), "the same flows on both sides"
    ours = common.stats(rows)["all"]
    for k, name in [(1, "p50"), (3, "mean")]:
        theirs = float(ref["all"][name])
        assert abs(ours[k] / theirs - 1) <= 0.10, f"{name}: pl2 {ours[k]:.3f}, YAPS {theirs:.3f}"
