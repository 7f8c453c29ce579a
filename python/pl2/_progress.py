"""Progress display on stderr with rich: one simulation (simulated time against the run's
end, event rate, ETA) or a sweep (runs done out of the total). Shown when asked for
with `True` and stderr is a terminal, or always with `"always"`. `SimLog` and
`LogProgress` are the plain-text forms for logs (CI, batch jobs; `True` when stderr is
not a terminal): a line now and then instead of a bar."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from types import TracebackType
from typing import Literal, Union

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from pl2._units import fmt_time_ps

# (simulated ps, end ps, events so far, wall seconds) -> False to stop the run.
ProgressFn = Callable[[int, int, int, float], Union[bool, None]]
ProgressArg = Union[bool, Literal["always"], ProgressFn]


def wanted(progress: bool | str) -> bool:
    """Whether to draw a bar: `"always"`, or `True` when stderr is a terminal."""
    if progress == "always":
        return True
    if progress is True:
        return sys.stderr.isatty()
    if progress is False:
        return False
    raise ValueError(f"progress={progress!r}: use True (when stderr is a terminal), \"always\", False or a callable")


def _console() -> Console:
    return Console(stderr=True)


class SimBar:
    """A progress bar for one run; call it as the native progress callback."""

    def __init__(self) -> None:
        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            TextColumn("{task.fields[sim]}"),
            TextColumn("{task.fields[rate]}"),
            TimeRemainingColumn(),
            console=_console(),
            transient=True,
        )
        self._task: TaskID | None = None

    def __enter__(self) -> SimBar:
        self._progress.start()
        self._task = self._progress.add_task("simulating", total=None, sim="", rate="")
        return self

    def __exit__(self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        self._progress.stop()

    def __call__(self, sim_ps: int, end_ps: int, events: int, wall_s: float) -> bool:
        assert self._task is not None
        rate = f"{events / wall_s / 1e6:.2f} M events/s" if wall_s > 0 else ""
        self._progress.update(
            self._task,
            total=end_ps or None,
            completed=sim_ps,
            sim=f"{fmt_time_ps(sim_ps)} / {fmt_time_ps(end_ps)}",
            rate=rate,
        )
        return True


    def writing(self) -> None:
        """The simulation is over; the Parquet files are being written."""
        assert self._task is not None
        self._progress.update(self._task, description="writing tables")


class SimLog:
    """Progress of one run as plain lines on stderr, for when it is not a terminal (a
    log file, a batch job): at most one line every `every_s` seconds of wall time, with
    the simulated time, the event rate and an estimate of the time left."""

    def __init__(self, every_s: float = 10.0, write: Callable[[str], object] | None = None) -> None:
        self._every_s = every_s
        self._write = write or (lambda line: print(line, file=sys.stderr, flush=True))
        self._next = every_s

    def __enter__(self) -> SimLog:
        return self

    def __exit__(self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        pass

    def __call__(self, sim_ps: int, end_ps: int, events: int, wall_s: float) -> bool:
        if wall_s < self._next:
            return True
        self._next = wall_s + self._every_s
        share = f" ({100 * sim_ps / end_ps:.0f}%)" if end_ps else ""
        eta = f", about {wall_s * (end_ps - sim_ps) / sim_ps:.0f} s left" if end_ps and sim_ps else ""
        self._write(f"pl2: simulated {fmt_time_ps(sim_ps)} of {fmt_time_ps(end_ps)}{share} in {wall_s:.0f} s, "
                    f"{events / wall_s / 1e6:.2f} M events/s{eta}")
        return True

    def writing(self) -> None:
        """The simulation is over; the Parquet files are being written."""
        self._write("pl2: simulation done, writing tables")


class SweepBar:
    """A progress bar over a sweep's runs: `advance(ok)` after each finished run."""

    def __init__(self, total: int, name: str) -> None:
        self._progress = Progress(
            TextColumn(f"[bold]{name}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[failed]} failed"),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=_console(),
        )
        self._total = total
        self._failed = 0
        self._task: TaskID | None = None

    def __enter__(self) -> SweepBar:
        self._progress.start()
        self._task = self._progress.add_task("sweep", total=self._total, failed=0)
        return self

    def __exit__(self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        self._progress.stop()

    def advance(self, ok: bool) -> None:
        assert self._task is not None
        self._failed += 0 if ok else 1
        self._progress.update(self._task, advance=1, failed=self._failed)


class LogProgress:
    """Progress over a batch of runs as log lines, for when stderr is not a terminal:
    `advance(ok)` after each finished run logs "name: k/n runs done" at most every
    `every_s` seconds (and not for the last run: the caller reports the end)."""

    def __init__(self, total: int, name: str, log: Callable[[str], object], every_s: float = 30.0) -> None:
        self._total = total
        self._name = name
        self._log = log
        self._every_s = every_s
        self._done = 0
        self._failed = 0
        self._start = self._last = time.monotonic()

    def __enter__(self) -> LogProgress:
        return self

    def __exit__(self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        pass

    def advance(self, ok: bool) -> None:
        self._done += 1
        self._failed += 0 if ok else 1
        now = time.monotonic()
        if self._done < self._total and now - self._last >= self._every_s:
            self._last = now
            failed = f", {self._failed} failed" if self._failed else ""
            self._log(f"{self._name}: {self._done}/{self._total} runs done{failed} ({now - self._start:.0f} s)")
