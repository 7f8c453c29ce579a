"""pl2: a packet-level datacenter network simulator. The simulation runs in a compiled
Rust core (`pl2._native`); this package gives scenarios, runs, results, plots, a results
store and parameter sweeps.

    import pl2
    result = pl2.run(pl2.Scenario.from_file("scenario.toml"))
    result.messages            # polars DataFrame; times in ps
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from pl2.errors import NativeUnavailableError, ScenarioError, StoreError
from pl2.executors import LocalExecutor, SerialExecutor
from pl2.results import RunResult
from pl2.runner import run
from pl2.scenario import Scenario

if TYPE_CHECKING:
    from pl2.stats import summarise
    from pl2.store import Store, open_store
    from pl2.sweep import Sweep, run_sweep

    __version__: str

#: Names whose modules load polars or DuckDB, imported on first use (PEP 562), so that
#: `import pl2` and the `pl2` command start without them.
_LAZY = {
    "summarise": "pl2.stats",
    "Store": "pl2.store",
    "open_store": "pl2.store",
    "Sweep": "pl2.sweep",
    "run_sweep": "pl2.sweep",
}


def __getattr__(name: str) -> Any:
    if name == "__version__":
        from importlib import metadata

        try:
            value: Any = metadata.version("pl2")
        except metadata.PackageNotFoundError:
            value = "0.1.0"
    elif name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
    else:
        raise AttributeError(f"module 'pl2' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


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
