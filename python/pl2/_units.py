"""Formatting of simulated quantities for people (times given in picoseconds, sizes in
bytes, rates in Gbps), and the value of a quantity string such as "256KiB" for ordering."""

from __future__ import annotations

import re

# The units a scenario accepts (crates/pl2-sim/src/units.rs), in their base unit: ps,
# bytes, bits per second. A quantity's kind is fixed by its unit.
_QUANTITY_UNITS: dict[str, tuple[str, float]] = {
    **{u: ("time", f) for u, f in (("ps", 1.0), ("ns", 1e3), ("us", 1e6), ("µs", 1e6), ("ms", 1e9), ("s", 1e12))},
    **{u: ("size", f) for u, f in (("B", 1.0), ("KB", 1e3), ("MB", 1e6), ("GB", 1e9), ("KiB", 1024.0), ("MiB", 1048576.0), ("GiB", 1073741824.0))},
    **{u: ("rate", f) for u, f in (("bps", 1.0), ("Kbps", 1e3), ("Mbps", 1e6), ("Gbps", 1e9), ("Tbps", 1e12))},
}
_QUANTITY = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([A-Za-zµ]+)\s*$")


def quantity(text: str) -> tuple[str, float] | None:
    """The kind ("time", "size", "rate") and value in the base unit (ps, bytes, bit/s)
    of a quantity string such as "256KiB" or "10us"; None if it is not one."""
    m = _QUANTITY.match(text)
    if m is None or m.group(2) not in _QUANTITY_UNITS:
        return None
    kind, scale = _QUANTITY_UNITS[m.group(2)]
    return kind, float(m.group(1)) * scale

_TIME_UNITS = ((1e12, "s"), (1e9, "ms"), (1e6, "µs"), (1e3, "ns"))


def fmt_time_ps(ps: float | None) -> str:
    """`ps` picoseconds with a readable unit, e.g. 12_500_000 -> "12.5 µs"."""
    if ps is None:
        return "–"
    for scale, unit in _TIME_UNITS:
        if abs(ps) >= scale:
            return f"{ps / scale:.4g} {unit}"
    return f"{ps:.4g} ps"


def fmt_us(ps: float | None) -> str:
    """`ps` picoseconds in microseconds with 3 decimals, e.g. "12.500"."""
    return "–" if ps is None else f"{ps / 1e6:.3f}"


def fmt_num(x: float | None, digits: int = 3) -> str:
    """A number with `digits` significant digits, or "–" if missing."""
    return "–" if x is None else f"{x:.{digits}g}"
