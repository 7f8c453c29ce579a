"""`pl2.run`: one simulation in this process. The native core runs with the GIL released
and calls back about 10 times a second; the callback draws progress and turns Ctrl-C
into a clean stop (the run is interrupted, then `KeyboardInterrupt` is raised here).
During a run, SIGINT only sets a flag that the next callback reads: an exception raised
on entry to the callback could otherwise be lost inside the native code."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from types import FrameType
from typing import ContextManager

from pl2 import _ffi, outdir
from pl2._progress import ProgressArg, ProgressFn, SimBar, SimLog, wanted
from pl2.results import RunResult
from pl2.scenario import Scenario


class _Guard:
    """Wraps the user's progress function for the native callback: never lets an
    exception cross into the native code; remembers it and asks the run to stop."""

    def __init__(self, inner: ProgressFn | None) -> None:
        self._inner = inner
        self.interrupted = False
        self.terminated = False
        self.error: BaseException | None = None

    def __call__(self, sim_ps: int, end_ps: int, events: int, wall_s: float) -> bool:
        if self.interrupted or self.error is not None:
            return False
        try:
            return self._inner is None or self._inner(sim_ps, end_ps, events, wall_s) is not False
        except KeyboardInterrupt as e:
            self.interrupted = True
            self.terminated |= isinstance(e, Terminated)
        except BaseException as e:
            self.error = e
        return False

    def writing(self) -> bool:
        """The simulation is over: whether to write the tables (not if the run was
        interrupted or the callback failed, since the result is then discarded). Tells the
        user's progress object, if it has a `writing()` method, when they are written."""
        announce = getattr(self._inner, "writing", None)
        if callable(announce) and not self.interrupted and self.error is None:
            try:
                announce()
            except KeyboardInterrupt:
                self.interrupted = True
            except BaseException as e:
                self.error = e
        return not self.interrupted and self.error is None

    def reraise(self) -> None:
        """Raises what the callback caught: KeyboardInterrupt (Terminated for SIGTERM)
        first."""
        if self.interrupted:
            raise Terminated if self.terminated else KeyboardInterrupt
        if self.error is not None:
            raise self.error


class Terminated(KeyboardInterrupt):
    """The process was asked to stop with SIGTERM (a batch system's or `kill`'s polite
    stop): handled like Ctrl-C, so nothing is left half-written."""


def raise_terminated(signum: int, frame: FrameType | None) -> None:
    """SIGTERM handler that the command line installs: raises Terminated where the main
    thread is, as Ctrl-C raises KeyboardInterrupt; during a run, `sigint_sets_flag`
    turns it into a clean stop instead."""
    raise Terminated


@contextmanager
def sigint_sets_flag(guard: _Guard) -> Iterator[None]:
    """While active (main thread only), Ctrl-C marks `guard` interrupted instead of
    raising, unless SIGINT is ignored (a process started in the background keeps
    ignoring it); SIGTERM does the same where the command line asked for that (its
    handler is `raise_terminated`), whether or not SIGINT is ignored."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_signal(signum: int, frame: FrameType | None) -> None:
        guard.interrupted = True
        guard.terminated |= signum == signal.SIGTERM

    take_int = signal.getsignal(signal.SIGINT) is not signal.SIG_IGN
    take_term = signal.getsignal(signal.SIGTERM) is raise_terminated
    previous = signal.signal(signal.SIGINT, on_signal) if take_int else None
    if take_term:
        signal.signal(signal.SIGTERM, on_signal)
    try:
        yield
    finally:
        if take_int:
            signal.signal(signal.SIGINT, previous)
        if take_term:
            signal.signal(signal.SIGTERM, raise_terminated)


def as_scenario(scenario: Scenario | str | os.PathLike[str]) -> Scenario:
    """A Scenario, or a path to a scenario file."""
    return scenario if isinstance(scenario, Scenario) else Scenario.from_file(scenario)


def run(
    scenario: Scenario | str | os.PathLike[str],
    *,
    progress: ProgressArg = True,
    seed: int | None = None,
    out: str | os.PathLike[str] | None = None,
    force: bool = False,
) -> RunResult:
    """Runs one simulation and returns its result.

    `scenario` is a Scenario or a scenario file path; `seed` overrides its seed.
    With `out`, the core keeps every table on disk as it runs (memory stays bounded
    on long runs), writes `<table>.parquet`, `summary.json`, `scenario.toml` and the
    manifest `.pl2-run` in a temporary directory beside `out`, put in place only when
    the run ends (an interrupted or failed run leaves nothing); the result is then
    loaded from there. `out` must be new, empty, or an earlier pl2 run (replaced);
    anything else raises OutputPathError before the run starts, unless `force`, which
    writes beside the files there and still replaces only files pl2 wrote (see
    `pl2.outdir`). The command line's `pl2 run` does exactly this, so both give
    byte-identical files.
    `progress`: True draws a bar on stderr if it is a terminal and otherwise writes a
    plain line there every 10 s (simulated time, events/s, time left), "always" draws a
    bar regardless, False draws none, and a callable `f(sim_ps, end_ps, events, wall_s)` is
    called instead (return False to stop the run early; the result then covers the
    simulated time so far); with `out`, a callable's `writing()` method, if it has one,
    is called when the simulation is over and the Parquet files are being written. Ctrl-C stops the run and raises KeyboardInterrupt.
    Raises ScenarioError if the scenario is invalid."""
    sc = as_scenario(scenario)
    if seed is not None:
        sc = sc.with_overrides({"seed": seed})
    bar: ContextManager[ProgressFn | None]
    if callable(progress):
        bar = nullcontext(progress)
    elif wanted(progress):
        bar = SimBar()
    elif progress is True:
        bar = SimLog()
    else:
        bar = nullcontext(None)
    if out is not None:
        return _run_to_dir(sc, out, bar, force)
    with bar as inner:
        guard = _Guard(inner)
        with sigint_sets_flag(guard):
            summary_json, tables = _ffi.call("run", sc.text, sc.base_dir, guard)
    guard.reraise()
    return RunResult.from_native(summary_json, tables)


def _run_to_dir(sc: Scenario, out: str | os.PathLike[str], bar: ContextManager[ProgressFn | None], force: bool) -> RunResult:
    """Runs into a staging directory beside `out` and puts it in place once done, by
    the rules of `pl2.outdir` (checked before the run starts)."""
    target = outdir.prepare(out, "run", force=force)
    tmp = outdir.staging_dir(target)
    try:
        with bar as inner:
            guard = _Guard(inner)
            with sigint_sets_flag(guard):
                _ffi.call("run_to_dir", sc.text, sc.base_dir, os.fspath(tmp), guard, guard.writing)
        guard.reraise()
        outdir.commit(target, tmp)
    finally:
        if tmp.exists():
            outdir.remove_owned_tree(tmp)
    return RunResult.load(target.path)
