"""A minimal TOML writer (reading is `tomllib`): nested tables, arrays of tables, inline
arrays and tables, strings, integers, floats, booleans and dates/times. Output parses
back with `tomllib` to an equal document; key order is kept."""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


class TomlWriteError(ValueError):
    """A value TOML cannot express (None, an unsupported type); names its key path."""


def dumps(doc: Mapping[str, Any]) -> str:
    """The TOML text of `doc`, a mapping of str keys."""
    out: list[str] = []
    _emit_table(doc, (), out)
    return "\n".join(out).strip("\n") + "\n" if out else ""


def _is_table(v: Any) -> bool:
    return isinstance(v, Mapping)


def _is_table_array(v: Any) -> bool:
    return isinstance(v, list) and len(v) > 0 and all(isinstance(x, Mapping) for x in v)


def _key(k: Any, path: tuple[str, ...]) -> str:
    if not isinstance(k, str):
        raise TomlWriteError(f"{_dotted(path) or 'the document'}: key {k!r} is not a string")
    return k if _BARE_KEY.match(k) else _string(k)


def _dotted(path: Sequence[str]) -> str:
    return ".".join(path)


def _header(path: tuple[str, ...]) -> str:
    return ".".join(_key(k, path) for k in path)


def _emit_table(t: Mapping[str, Any], path: tuple[str, ...], out: list[str]) -> None:
    nested = []
    for k, v in t.items():
        if _is_table(v) or _is_table_array(v):
            nested.append((k, v))
        else:
            out.append(f"{_key(k, path)} = {_value(v, path + (k,))}")
    for k, v in nested:
        sub = path + (k,)
        if _is_table(v):
            out.extend(["", f"[{_header(sub)}]"])
            _emit_table(v, sub, out)
        else:
            for element in v:
                out.extend(["", f"[[{_header(sub)}]]"])
                _emit_table(element, sub, out)


def _value(v: Any, path: tuple[str, ...]) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return _float(v)
    if isinstance(v, str):
        return _string(v)
    if isinstance(v, (dt.datetime, dt.date, dt.time)):
        return v.isoformat()
    if isinstance(v, Mapping):
        items = ", ".join(f"{_key(k, path)} = {_value(x, path + (str(k),))}" for k, x in v.items())
        return f"{{ {items} }}" if items else "{}"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_value(x, path + (str(i),)) for i, x in enumerate(v)) + "]"
    if v is None:
        raise TomlWriteError(f"{_dotted(path)}: TOML has no null value; remove the key instead of setting None")
    raise TomlWriteError(f"{_dotted(path)}: cannot write {type(v).__name__} {v!r} as TOML; use str, int, float, bool, list or dict")


def _float(v: float) -> str:
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    r = repr(v)
    return r if any(c in r for c in ".e") else r + ".0"


def _string(s: str) -> str:
    body = "".join(_ESCAPES.get(c) or (f"\\u{ord(c):04x}" if ord(c) < 0x20 or ord(c) == 0x7F else c) for c in s)
    return f'"{body}"'
