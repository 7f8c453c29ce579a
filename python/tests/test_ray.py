"""The Ray executor: a sweep of 4 tiny runs, and `pl2 reproduce` of the smallest figure,
on a local Ray (2 CPUs, no dashboard) give the same results as the local process pool,
into the same kind of store. Needs Ray and the real native module."""

from __future__ import annotations

from pathlib import Path

import pytest

ray = pytest.importorskip("ray")

from pl2 import Scenario, open_store  # noqa: E402
from pl2.executors import LocalExecutor  # noqa: E402
from pl2.ray_executor import RayExecutor  # noqa: E402
from pl2.sweep import Sweep, run_sweep  # noqa: E402

pytestmark = pytest.mark.real_native
DATA = Path(__file__).parent / "data"


def test_ray_sweep_matches_the_local_pool(tmp_path: Path) -> None:
    sw = Sweep(Scenario.from_file(DATA / "real_small.toml"), grid={"workload.0.load": [0.2, 0.4]}, seeds=[1, 2], name="ray")
    try:
        by_ray = run_sweep(sw, open_store(tmp_path / "ray"), RayExecutor(num_cpus=2), progress=False)
    finally:
        ray.shutdown()
    local = run_sweep(sw, open_store(tmp_path / "local"), LocalExecutor(2), progress=False)
    assert by_ray.height == 4 and (by_ray["status"] == "done").all(), by_ray["error"].to_list()
    cols = ["run_id", "msg_count", "latency_p50_ps", "latency_p99_ps", "drops_total"]
    assert by_ray.select(cols).sort("run_id").equals(local.select(cols).sort("run_id"))
    for run_id in by_ray["run_id"]:
        a = open_store(tmp_path / "ray").run_dir(run_id)
        b = open_store(tmp_path / "local").run_dir(run_id)
        assert (a / "summary.json").read_bytes() == (b / "summary.json").read_bytes()


def test_reproduce_on_ray_matches_local(tmp_path: Path) -> None:
    """The smallest figure (fig10, 3 quick runs, seed 1) on a local Ray gives the same
    rows, report and stored runs as on local worker processes."""
    from repro_helpers import same_figure

    from pl2 import reproduce as rep

    quiet = lambda *_: None  # noqa: E731
    try:
        rep.reproduce(["fig10"], out=tmp_path / "ray", quick=True, log=quiet, executor=RayExecutor(num_cpus=2))
    finally:
        ray.shutdown()
    rep.reproduce(["fig10"], out=tmp_path / "local", quick=True, log=quiet, executor=LocalExecutor(2))
    same_figure(tmp_path / "ray", tmp_path / "local", "fig10")
    assert "(3 runs, 0 reused from the store)" in (tmp_path / "ray" / "paper" / "report.md").read_text(encoding="utf-8")
