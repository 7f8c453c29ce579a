"""The one place pl2 calls its compiled core, `pl2._native`. The module is looked up on
every call (not cached at import), so tests can inject a fake, and the native
`ScenarioError` is re-raised as `pl2.errors.ScenarioError`."""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

from pl2.errors import NativeUnavailableError, ScenarioError

_BUILD_HINT = (
    "pl2's compiled core (pl2._native) is not importable: build and install it with "
    "`maturin develop --release` from the repository root (or `pip install .`)"
)


def native() -> ModuleType:
    """The native module; raises `NativeUnavailableError` with the build command."""
    try:
        return importlib.import_module("pl2._native")
    except ImportError as e:
        raise NativeUnavailableError(f"{_BUILD_HINT} ({e})") from None


def call(name: str, *args: Any) -> Any:
    """Calls `pl2._native.<name>(*args)`, mapping its ScenarioError to ours."""
    mod = native()
    try:
        return getattr(mod, name)(*args)
    except mod.ScenarioError as e:
        raise ScenarioError(str(e)) from None


def code_hash() -> str:
    """Hash of the simulator's sources (`build_info()["source_hash"]`): results from
    different code never share a store entry."""
    return str(call("build_info")["source_hash"])
