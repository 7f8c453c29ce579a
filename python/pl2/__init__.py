"""pl2: a packet-level datacenter network simulator. The simulation runs in a compiled
Rust core (`pl2._native`); this package gives scenarios, runs, results, plots, a results
store and parameter sweeps.

    import pl2
    result = pl2.run(pl2.Scenario.from_file("scenario.toml"))
    result.messages            # polars DataFrame; times in ps
"""

from __future__ import annotations

from importlib import metadata as _metadata

from pl2.errors import NativeUnavailableError, ScenarioError, StoreError
from pl2.executors import LocalExecutor, SerialExecutor
from pl2.results import RunResult
from pl2.runner import run
from pl2.scenario import Scenario
from pl2.stats import summarise
from pl2.store import Store, open_store
from pl2.sweep import Sweep, run_sweep

try:
    __version__ = _metadata.version("pl2")
except _metadata.PackageNotFoundError:
    __version__ = "0.1.0"

__all__ = [
    "LocalExecutor",
    "NativeUnavailableError",
    "RunResult",
    "Scenario",
    "ScenarioError",
    "SerialExecutor",
    "Store",
    "StoreError",
    "Sweep",
    "__version__",
    "open_store",
    "run",
    "run_sweep",
    "summarise",
]
