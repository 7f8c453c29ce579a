"""`RayExecutor`: runs sweep items as Ray tasks, on a cluster or on a Ray started in this
process. Like every executor it only computes: workers return results to the driver,
and only the driver writes the results store, so the guarantees of a local sweep hold
(atomic run directories, skipped finished runs, recorded failures, resumable after the
driver dies). A task whose worker process dies is retried by Ray (`max_retries`).

Ray is an optional dependency: `pip install '.[ray]'` from the repository (or `pip install ray`)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from pl2.executors import WorkerDied

T = TypeVar("T")
R = TypeVar("R")


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ImportError("Ray is not installed: `pip install ray` (or `pip install '.[ray]'` in the pl2 repository), or run the sweep without --ray") from None
    return ray


class RayExecutor:
    """Runs items as Ray tasks. `address`: a cluster to join (`"auto"`, `"ray://head:10001"`);
    None starts a local Ray in this process with `num_cpus` CPUs (default: all) and no
    dashboard. `max_retries`: how often a task whose worker died is re-run."""

    def __init__(self, address: str | None = None, num_cpus: int | None = None, max_retries: int = 2) -> None:
        self.address = address
        self.num_cpus = num_cpus
        self.max_retries = max_retries

    def _init(self) -> Any:
        ray = _ray()
        if not ray.is_initialized():
            if self.address is None:
                # Local workers import the same pl2 as this driver (a cluster's nodes
                # need pl2 installed).
                here = str(Path(__file__).resolve().parent.parent)
                path = os.pathsep.join(p for p in (here, os.environ.get("PYTHONPATH", "")) if p)
                ray.init(
                    num_cpus=self.num_cpus,
                    include_dashboard=False,
                    log_to_driver=False,
                    configure_logging=False,
                    runtime_env={"env_vars": {"PYTHONPATH": path}},
                )
            else:
                ray.init(address=self.address, log_to_driver=False, configure_logging=False)
        return ray

    def map(self, fn: Callable[[T], R], items: Iterable[T]) -> Iterator[tuple[T, R | BaseException]]:
        ray = self._init()
        remote = ray.remote(max_retries=self.max_retries, retry_exceptions=False)(fn)
        refs = {remote.remote(item): item for item in items}
        pending = list(refs)
        try:
            while pending:
                done, pending = ray.wait(pending, num_returns=1)
                ref = done[0]
                item = refs[ref]
                try:
                    outcome: R | BaseException = ray.get(ref)
                except ray.exceptions.RayTaskError as e:
                    outcome = e.cause if isinstance(e.cause, BaseException) else e
                except (ray.exceptions.WorkerCrashedError, ray.exceptions.NodeDiedError) as e:
                    outcome = WorkerDied(f"the Ray worker died {self.max_retries + 1} times running this item: {e}")
                yield item, outcome
        finally:
            for ref in pending:
                ray.cancel(ref, force=True)
