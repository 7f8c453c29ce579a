"""The results store: a directory holding one directory per finished run,
`runs/<scenario_hash>-<code_hash>/` (the files `RunResult.write` makes plus `run.json`),
one file per failed run, `failed/<run_id>.json`, and a DuckDB catalogue,
`catalogue.duckdb`, indexing both. Runs are written into `tmp/` and renamed into place,
so a killed writer never leaves a partial run. The run files are the truth: the
catalogue can always be rebuilt from them. Only one process (the sweep driver) writes."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import sys
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from pl2 import _catalogue as cat
from pl2 import outdir
from pl2.errors import StoreError
from pl2.results import RunResult

RUN_FILE = "run.json"
CATALOGUE_FILE = "catalogue.duckdb"
_RUN_ID = re.compile(r"^[0-9A-Za-z_]+-[0-9A-Za-z_.]+$")
_LOCK_WAIT_S = 10.0


#: What a store holds: pl2 owns these names in its root, and nothing else there.
STORE_ENTRIES = (CATALOGUE_FILE, f"{CATALOGUE_FILE}.wal", "corrupt/", "failed/", "runs/", "tmp/")


class Store:
    """A results store rooted at `root`. See the module doc. `root` must be new, empty
    or a store (its manifest `.pl2-run` says so; a store made before manifests existed,
    holding only the store's own entries, is recognised and given one); anything else
    raises OutputPathError, unless `force`: the store is then made beside the files
    there, and still touches nothing but its own entries (see `pl2.outdir`)."""

    def __init__(self, root: str | os.PathLike[str], *, force: bool = False) -> None:
        _adopt_legacy(Path(root))
        target = outdir.prepare(root, "store", force=force, grows=True)
        for name in STORE_ENTRIES:
            target.claim(name)
        try:
            target.save()
        except OSError as e:
            raise outdir.os_error(target.path, e) from None
        self.root = target.path.resolve()
        self.runs_dir = self.root / "runs"
        self.failed_dir = self.root / "failed"
        self.tmp_dir = self.root / "tmp"
        self.catalogue_path = self.root / CATALOGUE_FILE
        for d in (self.runs_dir, self.failed_dir, self.tmp_dir):
            d.mkdir(parents=True, exist_ok=True)
        self._heal_catalogue()

    def _heal_catalogue(self) -> None:
        """Makes the catalogue agree with the run files, which are the truth: rebuilt
        when it is missing, unreadable (the bad file is kept in `corrupt/`) or stale (it
        lacks a stored run or failure, or lists one that is gone); each time said on
        stderr."""
        missing = not self.catalogue_path.exists()
        try:
            with self._connect() as con:
                con.execute(cat.CREATE)
                cat.refresh_wide_view(con)
                listed = {r[0] for r in con.execute("SELECT run_id FROM runs").fetchall()}
        except (duckdb.Error, StoreError) as e:
            if isinstance(e, StoreError) and "lock" in str(e).lower():
                raise
            aside = self.root / "corrupt" / f"{CATALOGUE_FILE}.{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}"
            aside.parent.mkdir(exist_ok=True)
            os.replace(self.catalogue_path, aside)
            Path(f"{self.catalogue_path}.wal").unlink(missing_ok=True)
            n = self.rebuild_catalogue()
            print(f"pl2: the catalogue of {self.root} could not be read ({type(e).__name__}); kept it as {aside} "
                  f"and rebuilt it from the run files: {n} runs", file=sys.stderr)
            return
        on_disk = {p.name for p in self.runs_dir.iterdir() if p.is_dir()} | {p.stem for p in self.failed_dir.glob("*.json")}
        if listed != on_disk:
            n = self.rebuild_catalogue()
            if missing or listed:
                why = "missing" if missing else "out of date with the run files"
                print(f"pl2: the catalogue of {self.root} was {why}; rebuilt it from the run files: {n} runs", file=sys.stderr)

    def __repr__(self) -> str:
        return f"Store({str(self.root)!r})"

    @contextlib.contextmanager
    def _connect(self, read_only: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
        """A short-lived catalogue connection; waits up to 10 s while another process
        holds the file's lock."""
        deadline = time.monotonic() + _LOCK_WAIT_S
        while True:
            try:
                con = duckdb.connect(str(self.catalogue_path), read_only=read_only)
                break
            except duckdb.IOException as e:
                if "lock" not in str(e).lower() or time.monotonic() > deadline:
                    raise StoreError(f"cannot open the catalogue {self.catalogue_path}: {e}") from None
                time.sleep(0.05)
        try:
            yield con
        finally:
            con.close()

    def run_dir(self, run_id: str) -> Path:
        """Where the finished run `run_id` lives (whether or not it exists)."""
        if not _RUN_ID.match(run_id):
            raise StoreError(f"run id {run_id!r} is not <scenario_hash>-<code_hash> (letters, digits, '_')")
        return self.runs_dir / run_id

    def failed_file(self, run_id: str) -> Path:
        """Where the record of the failed run `run_id` lives."""
        return self.failed_dir / f"{self.run_dir(run_id).name}.json"

    def has(self, run_id: str) -> bool:
        """Whether `run_id` finished (its directory exists)."""
        return self.run_dir(run_id).is_dir()

    def load(self, run_id: str) -> RunResult:
        """The finished run `run_id`."""
        if not self.has(run_id):
            raise StoreError(f"run {run_id} is not in the store {self.root} (see store.load_all())")
        return RunResult.load(self.run_dir(run_id))

    def record_done(self, run_id: str, result: RunResult, params: Mapping[str, Any], sweep: str | None = None) -> Path:
        """Stores a finished run atomically and catalogues it; returns its directory. If
        the run is already stored its files are kept (same id, same results)."""
        final, row = self.store_run(run_id, result, params, sweep)
        self._upsert([row])
        return final

    def store_run(self, run_id: str, result: RunResult, params: Mapping[str, Any], sweep: str | None = None) -> tuple[Path, dict[str, Any]]:
        """`record_done` without the catalogue update: stores the run's files
        atomically (`has` sees it at once) and returns its directory and catalogue row,
        for `catalogue(rows)` to add many runs in one transaction. A row never added is
        added by `ensure_catalogued` (or `rebuild_catalogue`)."""
        scenario_hash, code_hash = cat.split_run_id(run_id)
        if result.scenario_hash and result.scenario_hash != scenario_hash:
            raise StoreError(f"run {run_id}: the result's scenario_hash is {result.scenario_hash}; the run id and result do not belong together")
        ran = (result.summary.get("build") or {}).get("source_hash")
        if ran and ran != code_hash:
            raise StoreError(f"run {run_id}: it ran on code {ran}, not {code_hash}; the native module changed during the sweep, so run the sweep again")
        final = self.run_dir(run_id)
        if not final.is_dir():
            tmp = self.tmp_dir / f"{os.getpid()}-{uuid.uuid4().hex}"
            tmp.mkdir()
            names = result._write_files(tmp)
            _write_json(tmp / RUN_FILE, {"run_id": run_id, "params": dict(params), "sweep": sweep})
            outdir.Manifest("run", {*names, RUN_FILE}).write(tmp)
            try:
                os.rename(tmp, final)
            except OSError:
                if not final.is_dir():
                    raise
                shutil.rmtree(tmp, ignore_errors=True)
        self.failed_file(run_id).unlink(missing_ok=True)
        return final, cat.done_row(run_id, result.summary, _stored_params(final, params), _stored_sweep(final, sweep), _rel(final, self.root))

    def catalogue(self, rows: Sequence[Mapping[str, Any]]) -> None:
        """Adds (or replaces) catalogue rows made by `store_run`, in one transaction."""
        self._upsert(rows)

    def record_failed(self, run_id: str, params: Mapping[str, Any], error: str, seed: int | None = None, sweep: str | None = None) -> None:
        """Records a failed run (kept in `failed/<run_id>.json`). A run that already
        finished stays finished."""
        if self.has(run_id):
            return
        path = self.failed_file(run_id)
        record = {"run_id": run_id, "params": dict(params), "error": error, "seed": seed, "sweep": sweep}
        tmp = self.tmp_dir / f"{os.getpid()}-{uuid.uuid4().hex}.json"
        _write_json(tmp, record)
        os.replace(tmp, path)
        self._upsert([cat.failed_row(run_id, params, error, seed, sweep, _rel(path, self.root))])

    def ensure_catalogued(self, run_ids: Sequence[str]) -> int:
        """Catalogues finished runs whose row is missing or not 'done' (a writer killed
        between the rename and the catalogue update); returns how many were added."""
        done = set(self.query("SELECT run_id FROM runs WHERE status = 'done'")["run_id"].to_list())
        rows = [_row_from_dir(self.run_dir(r), self.root) for r in run_ids if r not in done and self.has(r)]
        self._upsert(rows)
        return len(rows)

    def _upsert(self, rows: Sequence[Mapping[str, Any]]) -> None:
        if not rows:
            return
        with self._connect() as con:
            con.execute("BEGIN TRANSACTION")
            con.executemany(cat.UPSERT, [cat.values(r) for r in rows])
            cat.refresh_wide_view(con)
            con.execute("COMMIT")

    def query(self, sql: str, parameters: Sequence[Any] | None = None) -> pl.DataFrame:
        """Runs SQL on the catalogue and returns the result: table `runs` (parameters as
        one JSON column, `params`) or view `runs_wide` (the same plus one column per
        parameter, so SQL can filter and order by them: `SELECT * FROM runs_wide WHERE
        "workload.0.load" > 0.5 ORDER BY "workload.0.load"`)."""
        with self._connect(read_only=True) as con:
            rel = con.sql(sql, params=list(parameters) if parameters else None)
            table = rel.to_arrow_table() if hasattr(rel, "to_arrow_table") else rel.arrow()
        df = pl.from_arrow(table)
        assert isinstance(df, pl.DataFrame)
        return df

    def rows(self, run_ids: Sequence[str]) -> pl.DataFrame:
        """The catalogue rows of `run_ids` (those catalogued), ordered by run id."""
        ids = list(run_ids)
        if not ids:
            return self.query("SELECT * FROM runs WHERE false")
        return self.query("SELECT * FROM runs WHERE list_contains(?, run_id) ORDER BY run_id", [ids])

    def load_all(self) -> pl.DataFrame:
        """The whole catalogue, one column per parameter (see `expand_params`)."""
        return expand_params(self.query("SELECT * FROM runs ORDER BY run_id"))

    def rebuild_catalogue(self) -> int:
        """Rebuilds the catalogue from the run directories and failure records; returns
        the number of rows."""
        rows = {}
        for f in sorted(self.failed_dir.glob("*.json")):
            r = json.loads(f.read_text(encoding="utf-8"))
            rows[r["run_id"]] = cat.failed_row(r["run_id"], r.get("params") or {}, r.get("error") or "", r.get("seed"), r.get("sweep"), _rel(f, self.root))
        for d in sorted(p for p in self.runs_dir.iterdir() if p.is_dir()):
            rows[d.name] = _row_from_dir(d, self.root)
        with self._connect() as con:
            con.execute(cat.CREATE)
            con.execute("BEGIN TRANSACTION")
            con.execute("DELETE FROM runs")
            if rows:
                con.executemany(cat.UPSERT, [cat.values(r) for r in rows.values()])
            cat.refresh_wide_view(con)
            con.execute("COMMIT")
        return len(rows)

    def clean_tmp(self) -> int:
        """Removes leftovers in `tmp/` of writers that are no longer running; returns
        how many."""
        removed = 0
        for p in self.tmp_dir.iterdir():
            pid = p.name.split("-", 1)[0]
            if pid.isdigit() and _alive(int(pid)):
                continue
            if p.is_dir():
                shutil.rmtree(p, ignore_errors=True)
            else:
                p.unlink(missing_ok=True)
            removed += 1
        return removed


def open_store(root: str | os.PathLike[str], *, force: bool = False) -> Store:
    """Opens (creating if needed) the results store at `root`; see `Store`."""
    return Store(root, force=force)


def _adopt_legacy(root: Path) -> None:
    """Gives a manifest to a store made before manifests existed: a directory holding
    the catalogue and nothing but the store's own entries."""
    if root.is_symlink() or not root.is_dir() or (root / outdir.MANIFEST).exists():
        return
    names = {p.name + ("/" if p.is_dir() and not p.is_symlink() else "") for p in root.iterdir()}
    if CATALOGUE_FILE in names and names <= set(STORE_ENTRIES):
        outdir.Manifest("store", set(STORE_ENTRIES)).write(root)


def expand_params(df: pl.DataFrame) -> pl.DataFrame:
    """`df` with one column per key of its `params` JSON column (named by the override
    path, e.g. "network.link.rate"; prefixed "params." if that name is taken)."""
    if "params" not in df.columns or df.height == 0:
        return df
    decoded = [json.loads(p) if p else {} for p in df["params"].to_list()]
    keys: dict[str, None] = {}
    for d in decoded:
        keys.update(dict.fromkeys(d))
    columns = [_param_series(k if k not in df.columns else f"params.{k}", [d.get(k) for d in decoded]) for k in keys]
    return df.with_columns(columns) if columns else df


def _param_series(name: str, values: list[Any]) -> pl.Series:
    kinds = {type(v) for v in values if v is not None}
    if kinds == {bool}:
        return pl.Series(name, values, dtype=pl.Boolean)
    if kinds == {int}:
        return pl.Series(name, values, dtype=pl.Int64)
    if kinds and kinds <= {int, float}:
        return pl.Series(name, [None if v is None else float(v) for v in values], dtype=pl.Float64)
    return pl.Series(name, [v if v is None or isinstance(v, str) else json.dumps(v) for v in values], dtype=pl.Utf8)


def _row_from_dir(d: Path, root: Path) -> dict[str, Any]:
    summary = json.loads((d / "summary.json").read_text(encoding="utf-8"))
    return cat.done_row(d.name, summary, _stored_params(d, {}), _stored_sweep(d, None), _rel(d, root))


def _run_meta(d: Path) -> dict[str, Any]:
    p = d / RUN_FILE
    return json.loads(p.read_text(encoding="utf-8")) if p.is_file() else {}


def _stored_params(d: Path, default: Mapping[str, Any]) -> Mapping[str, Any]:
    return _run_meta(d).get("params", default)


def _stored_sweep(d: Path, default: str | None) -> str | None:
    meta = _run_meta(d)
    return meta.get("sweep") if meta else default


def _rel(p: Path, root: Path) -> str:
    return p.relative_to(root).as_posix()


def _write_json(path: Path, obj: Any) -> None:
    path.write_text(json.dumps(obj, sort_keys=True, indent=2) + "\n", encoding="utf-8")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
