"""Test setup: every test runs against the fake native module (tests/fake_native.py)
unless marked `real_native`, which uses the compiled `pl2._native` and is skipped when
it is not built."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import fake_native  # noqa: E402

from pl2 import Scenario  # noqa: E402

DATA = Path(__file__).resolve().parent / "data"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "real_native: needs the compiled pl2._native (skipped when it is not built)")


@pytest.fixture(autouse=True)
def native(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    """The native module in use: the fake, or the real one for `real_native` tests."""
    if request.node.get_closest_marker("real_native"):
        yield pytest.importorskip("pl2._native", reason="pl2._native is not built (maturin develop)")
    else:
        monkeypatch.setitem(sys.modules, "pl2._native", fake_native)
        yield fake_native


@pytest.fixture
def toy(tmp_path: Path) -> Scenario:
    """A valid scenario for the fake, written to a file."""
    p = tmp_path / "toy.toml"
    p.write_text('name = "toy"\nseed = 7\n\n[network.link]\nrate = "100Gbps"\n\n[[workload]]\nload = 0.5\n\n[[workload]]\nload = 0.2\n', encoding="utf-8")
    return Scenario.from_file(p)
