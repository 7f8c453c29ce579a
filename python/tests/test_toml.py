"""The minimal TOML writer: output parses back with tomllib to the same document."""

from __future__ import annotations

import datetime as dt
import math
import tomllib

import pytest

from pl2 import _toml

DOCS = [
    {},
    {"a": 1, "b": -2.5, "c": True, "d": "x", "e": [1, 2, 3], "f": []},
    {"s": 'quote " backslash \\ tab \t newline \n bell \x07 unicode µs', "weird key": 1, "dotted.key": 2, "": 3},
    {"big": 2**63 - 1, "tiny": 1e-300, "huge": 1e300, "whole": 3.0, "neg0": -0.0, "inf": math.inf, "ninf": -math.inf},
    {"network": {"link": {"rate": "25Gbps", "delay": "100ns"}, "topology": {"kind": "leaf_spine", "leaves": 4}, "empty": {}}},
    {"seed": 3, "workload": [{"kind": "poisson", "load": 0.5, "hosts": [0, 1]}, {"kind": "incast", "senders": "0..4"}]},
    {"a": [{"b": [{"c": 1}, {"c": 2, "d": {"e": "f"}}], "g": {"h": 1}}, {"b": [{"c": 3}]}]},
    {"mixed": [1, "two", [3, 4], {"five": 5}], "nested": [[1, 2], ["a"]], "inline_tables": [[{"x": 1}]]},
    {"top": 1, "t": {"x": 1, "sub": {"y": 2}, "arr": [{"z": 3}], "after": "scalar after tables"}},
    {"when": dt.datetime(2024, 1, 2, 3, 4, 5), "day": dt.date(2024, 1, 2), "time": dt.time(3, 4, 5)},
]


@pytest.mark.parametrize("doc", DOCS)
def test_round_trip(doc: dict) -> None:
    text = _toml.dumps(doc)
    assert tomllib.loads(text) == doc
    assert _toml.dumps(tomllib.loads(text)) == text


def test_nan_round_trips() -> None:
    assert math.isnan(tomllib.loads(_toml.dumps({"x": math.nan}))["x"])


def test_arrays_of_tables_use_double_brackets() -> None:
    text = _toml.dumps({"workload": [{"load": 0.5}, {"load": 0.2}]})
    assert text == "[[workload]]\nload = 0.5\n\n[[workload]]\nload = 0.2\n"


def test_scalars_before_tables() -> None:
    text = _toml.dumps({"t": {"sub": {"y": 2}, "x": 1}})
    assert text == "[t]\nx = 1\n\n[t.sub]\ny = 2\n"


def test_none_names_the_path() -> None:
    with pytest.raises(_toml.TomlWriteError, match=r"network\.switch\.port_limit: TOML has no null"):
        _toml.dumps({"network": {"switch": {"port_limit": None}}})


def test_unsupported_type_names_the_path() -> None:
    with pytest.raises(_toml.TomlWriteError, match=r"a\.b: cannot write set"):
        _toml.dumps({"a": {"b": {1}}})
