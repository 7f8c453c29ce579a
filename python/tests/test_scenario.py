"""Scenario: reading, dict round trip, overrides (paths, indices, errors), and the
native calls (through the fake)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pl2 import Scenario, ScenarioError


def test_from_file_sets_base_dir(toy: Scenario, tmp_path: Path) -> None:
    assert Path(toy.base_dir) == tmp_path.resolve()
    assert toy.to_dict()["seed"] == 7
    assert toy.seed == 7


def test_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="does not exist"):
        Scenario.from_file(tmp_path / "nope.toml")


def test_bad_toml_names_the_line() -> None:
    with pytest.raises(ScenarioError, match=r"not valid TOML.*line 2"):
        Scenario.from_toml("a = 1\nb = = 2\n")


def test_from_dict_round_trip() -> None:
    d = {"seed": 2, "network": {"link": {"rate": "25Gbps"}}, "workload": [{"load": 0.1}]}
    assert Scenario.from_dict(d).to_dict() == d


def test_from_dict_rejects_none() -> None:
    with pytest.raises(ScenarioError, match="network.link.rate: TOML has no null"):
        Scenario.from_dict({"network": {"link": {"rate": None}}})


def test_overrides(toy: Scenario) -> None:
    sc = toy.with_overrides({"network.link.rate": "25Gbps", "seed": 3, "workload.0.load": 0.9, "workload.1.start": "1us"})
    d = sc.to_dict()
    assert d["network"]["link"]["rate"] == "25Gbps"
    assert d["seed"] == 3
    assert d["workload"][0]["load"] == 0.9
    assert d["workload"][1] == {"load": 0.2, "start": "1us"}
    assert sc.base_dir == toy.base_dir
    assert toy.to_dict()["seed"] == 7, "the original is unchanged"


def test_override_new_key_in_existing_table(toy: Scenario) -> None:
    assert toy.with_overrides({"network.link.delay": "1us"}).to_dict()["network"]["link"]["delay"] == "1us"


def test_override_missing_table_falls_back_to_canonical() -> None:
    sc = Scenario.from_toml("seed = 1\n").with_overrides({"network.link.rate": "25Gbps"})
    assert sc.to_dict()["network"]["link"]["rate"] == "25Gbps"


def test_override_missing_path_is_named() -> None:
    with pytest.raises(ScenarioError, match=r"override 'network\.nope\.rate': network has no 'nope' \(it has: link\)"):
        Scenario.from_toml("seed = 1\n").with_overrides({"network.nope.rate": "1Gbps"})


def test_override_index_out_of_range(toy: Scenario) -> None:
    with pytest.raises(ScenarioError, match=r"'workload\.5\.load': workload has indices 0\.\.1; index 5 does not exist"):
        toy.with_overrides({"workload.5.load": 0.1})


def test_override_non_numeric_index(toy: Scenario) -> None:
    with pytest.raises(ScenarioError, match="workload is an array; index it with a number"):
        toy.with_overrides({"workload.first.load": 0.1})


def test_override_through_a_scalar(toy: Scenario) -> None:
    with pytest.raises(ScenarioError, match="seed = 7 is not a table"):
        toy.with_overrides({"seed.x": 1})


def test_override_bad_path() -> None:
    with pytest.raises(ScenarioError, match="not a dotted path"):
        Scenario.from_toml("").with_overrides({"a..b": 1})


def test_canonical_hash_validate(toy: Scenario) -> None:
    c = toy.canonical()
    assert "duration_ps" in c
    h = toy.hash()
    assert len(h) == 16 and int(h, 16) >= 0
    assert Scenario.from_toml(c).hash() == h, "the canonical form has the same hash"
    assert toy.validate() is toy


def test_native_error_becomes_pl2_error() -> None:
    with pytest.raises(ScenarioError, match=r"workload\[0\]\.load: 2 is not allowed"):
        Scenario.from_toml("[[workload]]\nload = 2\n").validate()


def test_native_missing_is_explained(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from pl2 import NativeUnavailableError

    monkeypatch.setitem(sys.modules, "pl2._native", None)
    with pytest.raises(NativeUnavailableError, match="maturin develop"):
        Scenario.from_toml("").validate()
