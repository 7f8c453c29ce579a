"""Dotted-path overrides on a parsed TOML document: `"network.link.rate"`, `"seed"`,
`"workload.0.load"` (an integer component indexes an array of tables). Every table on
the path must exist; the last key may be new if its parent is a table."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from pl2.errors import ScenarioError


class MissingPathError(ScenarioError):
    """An override path that does not exist in the document."""


def split_path(path: str) -> list[str]:
    """The components of a dotted path; rejects empty components."""
    parts = path.split(".")
    if not path or any(p == "" for p in parts):
        raise ScenarioError(f"override {path!r}: not a dotted path; write e.g. \"network.link.rate\" or \"workload.0.load\"")
    return parts


def apply(doc: Mapping[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    """A deep copy of `doc` with every override applied, in order."""
    out: dict[str, Any] = copy.deepcopy(dict(doc))
    for path, value in overrides.items():
        set_path(out, path, copy.deepcopy(value))
    return out


def set_path(doc: dict[str, Any], path: str, value: Any) -> None:
    """Sets `path` in `doc` in place; raises `MissingPathError` naming the first missing
    component."""
    parts = split_path(path)
    node: Any = doc
    for depth, part in enumerate(parts):
        last = depth == len(parts) - 1
        where = ".".join(parts[:depth]) or "the top level"
        if isinstance(node, list):
            node = _index(node, part, path, where, value if last else None, last)
            continue
        if not isinstance(node, dict):
            raise ScenarioError(f"override {path!r}: {where} = {node!r} is not a table; shorten the path")
        if last:
            node[part] = value
            return
        if part not in node:
            keys = ", ".join(sorted(node)) or "none"
            raise MissingPathError(f"override {path!r}: {where} has no {part!r} (it has: {keys}); add the table to the base scenario or fix the path")
        node = node[part]


def _index(node: list[Any], part: str, path: str, where: str, value: Any, last: bool) -> Any:
    if not part.isdigit():
        raise ScenarioError(f"override {path!r}: {where} is an array; index it with a number, e.g. {where}.0")
    i = int(part)
    if i >= len(node):
        have = f"indices 0..{len(node) - 1}" if node else "no entries"
        raise MissingPathError(f"override {path!r}: {where} has {have}; index {i} does not exist")
    if last:
        node[i] = value
        return None
    return node[i]
