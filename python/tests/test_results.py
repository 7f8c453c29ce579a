"""RunResult: conversions, deterministic writing (byte-identical files), loading."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

import pl2
from pl2 import RunResult, Scenario


@pytest.fixture
def result(toy: Scenario) -> RunResult:
    return pl2.run(toy, progress=False)


def test_tables_are_polars(result: RunResult) -> None:
    assert set(result.tables) == {"messages", "drops", "ports", "goodput"}
    assert isinstance(result.messages, pl.DataFrame)
    assert result.messages.schema["latency_ps"] == pl.UInt64
    assert result.drops.height == 30 and result.ports.height > 0 and result.goodput.height > 0
    assert result.scenario == result.summary["scenario"]
    assert len(result.scenario_hash) == 16


def test_missing_table_names_the_others(result: RunResult) -> None:
    with pytest.raises(KeyError, match="no 'flows' table; it has: drops, goodput, messages, ports"):
        result.table("flows")


def test_write_is_byte_identical(result: RunResult, toy: Scenario, tmp_path: Path) -> None:
    a = result.write(tmp_path / "a")
    b = pl2.run(toy, progress=False).write(tmp_path / "b")
    assert [p.name for p in a] == ["drops.parquet", "goodput.parquet", "messages.parquet", "ports.parquet", "summary.json", "scenario.toml"]
    for pa_, pb in zip(a, b):
        assert pa_.read_bytes() == pb.read_bytes(), pa_.name
    loaded = RunResult.load(tmp_path / "a")
    c = loaded.write(tmp_path / "c")
    for pa_, pc in zip(a, c):
        assert pa_.read_bytes() == pc.read_bytes(), f"{pa_.name} changes after a load/write round trip"


def test_summary_file_format(result: RunResult, tmp_path: Path) -> None:
    result.write(tmp_path / "run")
    text = (tmp_path / "run" / "summary.json").read_text()
    assert text == json.dumps(result.summary, sort_keys=True, indent=2) + "\n"
    assert (tmp_path / "run" / "scenario.toml").read_text() == result.scenario


def test_load_round_trip(result: RunResult, tmp_path: Path) -> None:
    result.write(tmp_path / "run")
    back = RunResult.load(tmp_path / "run")
    assert back.summary == result.summary
    for name, df in result.tables.items():
        assert back.tables[name].equals(df), name


def test_load_of_a_non_run_dir(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="is not a run directory"):
        RunResult.load(tmp_path)


def test_files_round_trip_keeps_the_bytes(result: RunResult, tmp_path: Path) -> None:
    """A result made from a run directory's files writes those very bytes."""
    written = result.write(tmp_path / "a")
    files = {p.name: p.read_bytes() for p in written}
    back = RunResult.from_files(files)
    assert back.arrow["messages"].equals(result.arrow["messages"]) and back.summary == result.summary
    again = back.write(tmp_path / "b")
    assert {p.name: p.read_bytes() for p in again} == files


def test_to_pandas(result: RunResult) -> None:
    pytest.importorskip("pandas")
    assert len(result.to_pandas("messages")) == result.messages.height


_HEAVY = ("polars", "pyarrow", "matplotlib", "duckdb")


def _imported_after(code: str) -> list[str]:
    """The heavy libraries a fresh interpreter has imported after running `code`."""
    import subprocess
    import sys

    probe = f"{code}\nimport sys\nprint(','.join(m for m in {_HEAVY!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.strip()
    return [m for m in out.split(",") if m]


def test_the_command_line_starts_without_the_table_and_plot_libraries() -> None:
    # `pl2 run`, `validate` and `--help` need none of them: importing them took four
    # fifths of a short run's wall time.
    assert _imported_after("import pl2.cli") == []
    assert _imported_after("import pl2; pl2.Store, pl2.summarise") == ["polars", "duckdb"]


def test_a_loaded_run_reads_its_tables_on_first_use(result: RunResult, tmp_path: Path) -> None:
    result.write(tmp_path / "run")
    code = f"from pl2 import RunResult\nr = RunResult.load({str(tmp_path / 'run')!r})\nassert r.summary == {result.summary!r}"
    assert _imported_after(code) == []
    loaded = RunResult.load(tmp_path / "run")
    assert sorted(loaded.arrow) == sorted(result.arrow)
    assert all(loaded.arrow[n].equals(result.arrow[n]) for n in result.arrow)
    assert loaded.messages.equals(result.messages)
