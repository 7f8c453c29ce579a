"""Comparing two `pl2 reproduce` output directories (for tests that run a figure on
different executors)."""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl


def report_body(path: Path) -> str:
    """A report without its wall times (they differ from run to run)."""
    return re.sub(r"[Ww]all time[^\n]*", "", path.read_text(encoding="utf-8"))


def same_figure(a: Path, b: Path, figure: str) -> None:
    """`figure`'s data, the report and every stored run file are the same in `a` and `b`."""
    from pl2.reproduce import family

    fam = family(figure)
    parquets = sorted((a / fam / figure).glob("*.parquet"))
    assert parquets
    for p in parquets:
        assert pl.read_parquet(p).equals(pl.read_parquet(b / fam / figure / p.name)), p.name
    assert report_body(a / fam / "report.md") == report_body(b / fam / "report.md")
    runs = sorted((a / "store" / "runs").iterdir())
    assert runs and [d.name for d in runs] == sorted(d.name for d in (b / "store" / "runs").iterdir())
    for d in runs:
        for f in sorted(d.iterdir()):
            assert f.read_bytes() == (b / "store" / "runs" / d.name / f.name).read_bytes(), f"{d.name}/{f.name}"
