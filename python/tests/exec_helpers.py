"""Module-level functions for executor tests (spawned workers import them by name), and an
executor that counts what it runs."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from pl2 import SerialExecutor


def square(x: int) -> int:
    return x * x


def fail_on_three(x: int) -> int:
    if x == 3:
        raise ValueError("three is not allowed")
    return x


def crash_on_three(x: int) -> int:
    """Kills its own worker process on 3 (like a segfault or the OOM killer)."""
    if x == 3:
        os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(0.05)
    return x


def report_pid_and_sleep(path: str) -> int:
    """Writes the worker's pid to `path`, then sleeps for a minute."""
    Path(path).write_text(str(os.getpid()))
    time.sleep(60)
    return 0


def pid_after_a_nap(x: int) -> int:
    """The worker's pid (after 50 ms, so that every worker gets items)."""
    time.sleep(0.05)
    return os.getpid()


class CountingExecutor(SerialExecutor):
    """Serial, and remembers which run ids it ran."""

    def __init__(self) -> None:
        self.ran: list[str] = []

    def map(self, fn: Callable[[Any], Any], items: Iterable[Any]) -> Iterator[tuple[Any, Any]]:
        for item, out in super().map(fn, items):
            self.ran.append(item[0])
            yield item, out
