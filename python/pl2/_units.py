"""Formatting of simulated quantities for people: times given in picoseconds, sizes in
bytes, rates in Gbps."""

from __future__ import annotations

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
