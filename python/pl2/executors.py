"""Executors run a function over items and yield `(item, result or exception)` as each
finishes. `SerialExecutor` runs in this process; `LocalExecutor` runs in spawned worker
processes that ignore Ctrl-C (the driver stops them) and die with the driver (Linux
PR_SET_PDEATHSIG). A worker that dies (crash, out of memory, killed) does not fail its
neighbours: the runs that were in flight are retried one at a time, and only the one
that kills its worker again is reported as failed (`WorkerDied`)."""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import sys
from collections import deque
from collections.abc import Callable, Collection, Iterable, Iterator
from concurrent.futures import ALL_COMPLETED, FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from types import TracebackType
from typing import Protocol, TypeVar, Union

T = TypeVar("T")
R = TypeVar("R")
Outcome = Union[R, BaseException]
_PR_SET_PDEATHSIG = 1
_POLL_S = 0.2


class Executor(Protocol):
    """Runs `fn` on every item; yields `(item, fn(item) or the exception it raised)` in
    completion order. Closing the iterator early stops outstanding work."""

    def map(self, fn: Callable[[T], R], items: Iterable[T]) -> Iterator[tuple[T, R | BaseException]]: ...


class WorkerDied(RuntimeError):
    """The worker process running an item died, twice (the second time alone)."""


class WorkersCannotStart(RuntimeError):
    """Worker processes die while starting, before running anything."""


_CANNOT_START = (
    "worker processes die while starting. Workers are spawned and import the main "
    "script: if you run a sweep from a script, put it under `if __name__ == \"__main__\":`. "
    "Otherwise check that `import pl2` works in a fresh interpreter (see the traceback "
    "above), or use SerialExecutor() to run in this process"
)


class SerialExecutor:
    """Runs items one after another in this process (for debugging and tests)."""

    def map(self, fn: Callable[[T], R], items: Iterable[T]) -> Iterator[tuple[T, R | BaseException]]:
        for item in items:
            try:
                result: R | BaseException = fn(item)
            except Exception as e:
                result = e
            yield item, result


class LocalExecutor:
    """Runs items in `workers` spawned processes (default: one per CPU). `fn` and the
    items must be picklable; `fn` must be a module-level function. Each `map` starts
    its own workers; inside `with executor:` the workers started by one `map` serve
    the next ones too (they start once), and stop when the block ends."""

    def __init__(self, workers: int | None = None) -> None:
        n = workers if workers is not None else (os.cpu_count() or 1)
        if n < 1:
            raise ValueError(f"workers = {n}: need at least 1 worker process")
        self.workers = n
        self._keep = False
        self._kept: ProcessPoolExecutor | None = None

    def __enter__(self) -> LocalExecutor:
        self._keep = True
        return self

    def __exit__(self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        self._keep = False
        pool, self._kept = self._kept, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)

    def _take_pool(self) -> ProcessPoolExecutor:
        """The pool kept from the last `map` if its workers are still alive, or a new one."""
        pool, self._kept = self._kept, None
        if pool is not None:
            try:
                pool.submit(os.getpid).result()
                return pool
            except BrokenProcessPool:
                pool.shutdown(wait=True)
        return self._pool()

    def _pool(self) -> ProcessPoolExecutor:
        """A fresh pool whose workers are known to start (checked with one no-op task)."""
        pool = ProcessPoolExecutor(
            max_workers=self.workers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_init_worker,
            initargs=(os.getpid(),),
        )
        try:
            pool.submit(os.getpid).result()
        except BrokenProcessPool:
            pool.shutdown(wait=True)
            raise WorkersCannotStart(_CANNOT_START) from None
        return pool

    def map(self, fn: Callable[[T], R], items: Iterable[T]) -> Iterator[tuple[T, R | BaseException]]:
        todo = iter(items)
        suspects: deque[T] = deque()
        inflight: dict[Future[R], T] = {}
        pool = self._take_pool()
        finished = False
        try:
            while True:
                # Two items per worker: one running and one queued, so a worker never
                # waits while the caller handles a result.
                limit = 1 if suspects else 2 * self.workers
                while len(inflight) < limit:
                    item = suspects.popleft() if suspects else next(todo, _END)
                    if item is _END:
                        break
                    inflight[pool.submit(fn, item)] = item
                if not inflight:
                    break
                done = _wait(inflight, FIRST_COMPLETED)
                if any(isinstance(f.exception(), BrokenProcessPool) for f in done):
                    alone = len(inflight) == 1
                    _wait(inflight, ALL_COMPLETED)
                    for f, item in inflight.items():
                        if not isinstance(f.exception(), BrokenProcessPool):
                            yield item, _outcome(f)
                        elif alone:
                            yield item, WorkerDied("the worker process died while running this item, also when run alone (crash, abort, out of memory or killed)")
                        else:
                            suspects.append(item)
                    inflight.clear()
                    pool.shutdown(wait=True)
                    pool = self._pool()
                    continue
                for f in done:
                    yield inflight.pop(f), _outcome(f)
            finished = True
        finally:
            if not finished:
                _kill_workers(pool)
            if finished and self._keep:
                self._kept = pool
            else:
                pool.shutdown(wait=True, cancel_futures=True)


_END: object = object()


def _wait(futures: Collection[Future[R]], when: str) -> set[Future[R]]:
    """`concurrent.futures.wait` in short slices: a blocking wait may not wake for
    Ctrl-C when the signal lands on another thread."""
    if not futures:
        return set()
    while True:
        done, pending = wait(futures, timeout=_POLL_S, return_when=when)
        if done and (when == FIRST_COMPLETED or not pending):
            return done


def _outcome(f: Future[R]) -> R | BaseException:
    e = f.exception()
    return e if e is not None else f.result()


def _kill_workers(pool: ProcessPoolExecutor) -> None:
    """Kills the pool's workers at once (runs in progress are lost)."""
    processes = getattr(pool, "_processes", None) or {}
    for p in list(processes.values()):
        if p.is_alive():
            p.kill()


def _init_worker(parent_pid: int) -> None:
    """In each worker: leave Ctrl-C to the driver, and die when the driver dies."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent_pid:
        os._exit(1)
