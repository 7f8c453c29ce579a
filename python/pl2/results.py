"""`RunResult`: one run's summary (a dict, as `summary.json`) and its tables (Arrow, with
polars views). Writes and loads run directories: `<table>.parquet`, `summary.json` and
`scenario.toml`, byte-identical for identical results.

polars and pyarrow are imported when a table is first used, not with this module: `pl2
run` prints its summary without them (a third of a second saved per command)."""

from __future__ import annotations

import json
import os
import re
import shutil
import tomllib
from collections.abc import Iterable, Mapping
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pl2 import _ffi, outdir
from pl2.errors import Pl2Error

if TYPE_CHECKING:
    import polars as pl
    import pyarrow as pa

SUMMARY_FILE = "summary.json"
SCENARIO_FILE = "scenario.toml"
PARQUET_SUFFIX = ".parquet"
_TABLE_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


class RunResult:
    """One run. `summary` is the parsed summary JSON (see the summary reference: keys
    `scenario`, `scenario_hash`, `seed`, `build`, `stop_reason`, `sim_time_ps`,
    `counters`, `messages`, `goodput_gbps`, `drops`, `max_queue_bytes`); `arrow` maps
    table name to a `pyarrow.Table`; `tables` gives the same as polars DataFrames. A result
    loaded from a directory (`load`) reads its Parquet files when a table is first used."""

    def __init__(self, summary: Mapping[str, Any], arrow: Mapping[str, pa.Table]) -> None:
        _check_table_names(arrow)
        self.summary: dict[str, Any] = dict(summary)
        self._arrow: dict[str, pa.Table] | None = dict(arrow)
        # With `_arrow` None: the Parquet file of each table, read on first use.
        self._arrow_files: dict[str, Path] = {}
        #: The run directory's files as the native core wrote them (name -> bytes), when
        #: the result came from them (`from_files`): `write` and the store then write these
        #: bytes, so a run's files are the same wherever it was made.
        self.files: dict[str, bytes] | None = None
        # The directory this result was loaded from: `write` copies its files.
        self._source: Path | None = None

    @classmethod
    def from_native(cls, summary_json: str, tables: Mapping[str, pa.RecordBatch | pa.Table]) -> RunResult:
        """From what `pl2._native.run` returns."""
        import pyarrow as pa

        arrow = {k: v if isinstance(v, pa.Table) else pa.Table.from_batches([v]) for k, v in tables.items()}
        return cls(json.loads(summary_json), arrow)

    @classmethod
    def from_files(cls, files: Mapping[str, bytes]) -> RunResult:
        """From a run directory's files (name -> bytes), as a worker of a sweep sends
        them; keeps the bytes (`files`)."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        summary = json.loads(files[SUMMARY_FILE])
        arrow = {n.removesuffix(PARQUET_SUFFIX): pq.read_table(pa.BufferReader(b)) for n, b in sorted(files.items()) if n.endswith(PARQUET_SUFFIX)}
        res = cls(summary, arrow)
        res.files = dict(files)
        return res

    @classmethod
    def load(cls, directory: str | os.PathLike[str]) -> RunResult:
        """Loads a run directory written by `write`."""
        d = Path(directory)
        summary_path = d / SUMMARY_FILE
        if not summary_path.is_file():
            raise FileNotFoundError(f"{d} is not a run directory: it has no {SUMMARY_FILE} (write one with `pl2 run SCENARIO --out {d}`)")
        summary = json.loads(summary_path.read_text(encoding="utf-8"))
        files = {p.name.removesuffix(PARQUET_SUFFIX): p for p in sorted(d.glob("*" + PARQUET_SUFFIX))}
        res = cls(summary, {})
        _check_table_names(files)
        res._arrow, res._arrow_files = None, files
        res._source = d
        return res

    @property
    def arrow(self) -> dict[str, pa.Table]:
        """Every table as a `pyarrow.Table`, by name (a loaded result reads its files now)."""
        if self._arrow is None:
            import pyarrow.parquet as pq

            self._arrow = {name: pq.read_table(path) for name, path in self._arrow_files.items()}
        return self._arrow

    @cached_property
    def tables(self) -> dict[str, pl.DataFrame]:
        """Every table as a polars DataFrame."""
        import polars as pl

        out: dict[str, pl.DataFrame] = {}
        for k, v in self.arrow.items():
            df = pl.from_arrow(v)
            assert isinstance(df, pl.DataFrame)
            out[k] = df
        return out

    def table(self, name: str) -> pl.DataFrame:
        """The table `name`; KeyError naming the tables there are."""
        try:
            return self.tables[name]
        except KeyError:
            raise KeyError(f"this run has no {name!r} table; it has: {', '.join(sorted(self.tables)) or 'none'}") from None

    @property
    def messages(self) -> pl.DataFrame:
        """One row per message: sizes in bytes, times and latencies in ps."""
        return self.table("messages")

    @property
    def drops(self) -> pl.DataFrame:
        """One row per dropped frame (time in ps, reason)."""
        return self.table("drops")

    @property
    def ports(self) -> pl.DataFrame:
        """Per port and window: max queue (bytes) and bytes sent."""
        return self.table("ports")

    @property
    def goodput(self) -> pl.DataFrame:
        """Per host and window: payload bytes delivered."""
        return self.table("goodput")

    @property
    def trace(self) -> pl.DataFrame:
        """Traced frame events (time in ps, event, node, port, frame fields); empty
        unless the scenario sets `[metrics.trace]`."""
        return self.table("trace")

    @property
    def probes(self) -> pl.DataFrame:
        """Values protocols published per flow over time (time in ps, host, flow, name,
        value)."""
        return self.table("probes")

    @property
    def rpcs(self) -> pl.DataFrame:
        """One row per RPC of `kind = "rpc"` workloads: client, server, thread, the
        request and response message ids, the step times and the two-way latency (ps)."""
        return self.table("rpcs")

    @property
    def iterations(self) -> pl.DataFrame:
        """One row per iteration of `kind = "ps_shuffle"` workloads: start, end of the
        push phase, end and the times (ps)."""
        return self.table("iterations")

    @property
    def scenario(self) -> str:
        """The canonical scenario TOML this run used."""
        return str(self.summary.get("scenario", ""))

    @property
    def name(self) -> str:
        """The scenario's `name`, or its hash if it has none (for titles and legends)."""
        try:
            name = tomllib.loads(self.scenario).get("name")
        except tomllib.TOMLDecodeError:
            name = None
        return str(name) if name else self.scenario_hash

    @property
    def scenario_hash(self) -> str:
        """The scenario's 16-hex-digit hash."""
        return str(self.summary.get("scenario_hash", ""))

    def to_pcap(self, path: str | os.PathLike[str], *, nodes: Iterable[str] = (), ports: Iterable[int] = (),
                flows: Iterable[int] = ()) -> int:
        """Writes the traced frames leaving ports (optionally only at `nodes`, global
        `ports` or `flows`) as a nanosecond pcap file for Wireshark or tcpdump, headers
        synthesised from each frame's record (see `pl2.pcap`); returns the number of
        frames written. The run needs `[metrics.trace]`."""
        from pl2.pcap import write_pcap

        return write_pcap(self, path, nodes=nodes, ports=ports, flows=flows)

    def to_pandas(self, name: str) -> Any:
        """The table `name` as a pandas DataFrame (needs pandas installed)."""
        self.table(name)
        try:
            import pandas  # noqa: F401
        except ImportError:
            raise ImportError("RunResult.to_pandas needs pandas: `pip install pandas` (or use the polars tables: result.tables)") from None
        return self.arrow[name].to_pandas()

    def write(self, directory: str | os.PathLike[str], *, force: bool = False) -> list[Path]:
        """Writes `<table>.parquet` per table, `summary.json`, `scenario.toml` and the
        manifest `.pl2-run` into `directory`; returns the paths of the run's files.
        Identical results give byte-identical files. `directory` must be new, empty or
        an earlier pl2 run (replaced whole, atomically); anything else raises
        OutputPathError, unless `force`, which writes beside the files there and still
        replaces only files pl2 wrote (see `pl2.outdir`)."""
        target = outdir.prepare(directory, "run", force=force)
        tmp = outdir.staging_dir(target)
        try:
            names = self._write_files(tmp)
            outdir.commit(target, tmp)
        finally:
            if tmp.exists():
                outdir.remove_owned_tree(tmp)
        return [target.path / n for n in names]

    def _write_files(self, d: Path) -> list[str]:
        """Writes the run's files into the existing directory `d`; returns their names:
        the files' very bytes when this result was loaded from them (`load`,
        `from_files`), else the tables through the native writer, as `pl2 run` writes
        them."""
        if self.files is not None:
            for name, data in sorted(self.files.items()):
                (d / name).write_bytes(data)
            return sorted(self.files)
        tables = self._arrow if self._arrow is not None else self._arrow_files
        names = [f"{n}{PARQUET_SUFFIX}" for n in sorted(tables)] + [SUMMARY_FILE, SCENARIO_FILE]
        if self._source is not None and all((self._source / n).is_file() for n in names):
            for name in names:
                shutil.copyfile(self._source / name, d / name)
            return names
        import pyarrow as pa

        names = []
        for name in sorted(self.arrow):
            table = self.arrow[name]
            batches = table.to_batches() or [pa.RecordBatch.from_pylist([], schema=table.schema)]
            _ffi.call("write_parquet", os.fspath(d / f"{name}{PARQUET_SUFFIX}"), batches)
            names.append(f"{name}{PARQUET_SUFFIX}")
        (d / SUMMARY_FILE).write_text(summary_text(self.summary), encoding="utf-8")
        (d / SCENARIO_FILE).write_text(self.scenario, encoding="utf-8")
        return names + [SUMMARY_FILE, SCENARIO_FILE]


def _check_table_names(names: Iterable[str]) -> None:
    """Every table name makes a safe file name."""
    for name in names:
        if not _TABLE_NAME.match(name):
            raise Pl2Error(f"table name {name!r} is not a lowercase identifier; it would not make a safe file name")


def summary_text(summary: Mapping[str, Any]) -> str:
    """The bytes of `summary.json`: sorted keys, two-space indent, final newline."""
    return json.dumps(summary, sort_keys=True, indent=2) + "\n"
