"""`Scenario`: the text of a scenario TOML file plus the directory its relative file paths
are resolved against. Parsing, overrides and serialisation are pure Python; validation,
the canonical form and the hash come from the native core."""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from pl2 import _ffi, _overrides, _toml
from pl2.errors import ScenarioError


@dataclass(frozen=True)
class Scenario:
    """A scenario: `text` is TOML, `base_dir` resolves relative paths inside it
    (workload files). Immutable; `with_overrides` returns a new one."""

    text: str
    base_dir: str = "."

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> Scenario:
        """Reads a scenario file; its directory becomes `base_dir`."""
        p = Path(path)
        try:
            text = p.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise ScenarioError(f"scenario file {str(p)!r} does not exist; check the path") from None
        except (IsADirectoryError, UnicodeDecodeError) as e:
            raise ScenarioError(f"scenario file {str(p)!r} cannot be read as UTF-8 TOML text: {e}") from None
        return cls.from_toml(text, base_dir=str(p.resolve().parent), source=str(p))

    @classmethod
    def from_toml(cls, text: str, base_dir: str | os.PathLike[str] = ".", source: str = "scenario") -> Scenario:
        """A scenario from TOML text; checks the TOML syntax (not the contents)."""
        try:
            tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise ScenarioError(f"{source}: not valid TOML: {e} (hint: check quotes, brackets and `key = value` lines)") from None
        return cls(text, str(base_dir))

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], base_dir: str | os.PathLike[str] = ".") -> Scenario:
        """A scenario from a nested dict (as `to_dict` returns)."""
        try:
            return cls(_toml.dumps(d), str(base_dir))
        except _toml.TomlWriteError as e:
            raise ScenarioError(f"scenario dict: {e}") from None

    def to_dict(self) -> dict[str, Any]:
        """The scenario as written (not canonical) as a nested dict."""
        return tomllib.loads(self.text)

    def with_overrides(self, overrides: Mapping[str, Any]) -> Scenario:
        """A new scenario with dotted-path overrides applied, e.g.
        `{"network.link.rate": "25Gbps", "seed": 3, "workload.0.load": 0.5}`. Paths are
        resolved in the scenario as written; if a table on a path is missing there (it
        was left at its defaults), all overrides are applied to the canonical form
        instead, which has every table (this needs the native module)."""
        if not overrides:
            return self
        try:
            return Scenario.from_dict(_overrides.apply(self.to_dict(), overrides), self.base_dir)
        except _overrides.MissingPathError as first:
            try:
                canonical = tomllib.loads(self.canonical())
            except ScenarioError as e:
                raise ScenarioError(f"{first} (the canonical form is unavailable: {e})") from None
            return Scenario.from_dict(_overrides.apply(canonical, overrides), self.base_dir)

    def canonical(self) -> str:
        """The canonical TOML: validated, defaults filled, normalised. Raises
        `ScenarioError` naming the bad field."""
        return self._canonical_text

    @cached_property
    def _canonical_text(self) -> str:
        return str(_ffi.call("validate", self.text, self.base_dir))

    def validate(self) -> Scenario:
        """Raises `ScenarioError` if the scenario cannot run; returns self."""
        self.canonical()
        return self

    def hash(self) -> str:
        """16-hex-digit stable hash of the canonical form: the scenario's identity."""
        return str(_ffi.call("scenario_hash", self.text, self.base_dir))

    @property
    def seed(self) -> int:
        """The master seed as written (1 if absent, the native default)."""
        return int(self.to_dict().get("seed", 1))
