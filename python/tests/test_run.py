"""pl2.run: progress callbacks, early stop, Ctrl-C (KeyboardInterrupt from the callback)
and errors raised by a user's callback."""

from __future__ import annotations

import signal
from collections.abc import Iterator

import pytest

import pl2
from pl2 import Scenario, ScenarioError


def test_callback_sees_progress(toy: Scenario) -> None:
    seen: list[tuple[int, int, int, float]] = []
    r = pl2.run(toy, progress=lambda *a: seen.append(a))
    assert len(seen) == 3 and seen[-1][1] == 1_000_000
    assert r.summary["stop_reason"] == "EndTime"


def test_callback_false_stops_early(toy: Scenario) -> None:
    r = pl2.run(toy, progress=lambda *a: False)
    assert r.summary["stop_reason"] == "Interrupted"


def test_ctrl_c_stops_then_raises(toy: Scenario) -> None:
    calls = []

    def cb(*a: object) -> bool:
        calls.append(a)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        pl2.run(toy, progress=cb)
    assert len(calls) == 1, "the run stopped at the first callback"


@pytest.fixture
def sigint(request: pytest.FixtureRequest) -> Iterator[None]:
    """SIGINT's disposition for one test: `default_int_handler` (Ctrl-C raises
    KeyboardInterrupt), or ignored with `@pytest.mark.parametrize("sigint", ["ignored"],
    indirect=True)`; restored afterwards. A process started in the background by a
    non-interactive shell (`cmd &`, nohup) inherits SIGINT ignored, and Python then
    leaves it ignored, so the tests cannot rely on the disposition they start with."""
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN if getattr(request, "param", "") == "ignored"
                             else signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def test_sigint_during_a_run_stops_it_cleanly(toy: Scenario, sigint: None) -> None:
    calls = []

    def cb(*a: object) -> None:
        calls.append(a)
        signal.raise_signal(signal.SIGINT)  # to this thread, handled before it returns

    with pytest.raises(KeyboardInterrupt):
        pl2.run(toy, progress=cb)
    assert len(calls) == 1, "the next callback stopped the run"
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler, "the handler is restored"


@pytest.mark.parametrize("sigint", ["default", "ignored"], indirect=True)
def test_sigterm_during_a_run_stops_it_like_ctrl_c(toy: Scenario, tmp_path, sigint: None) -> None:
    """Where the command line installed its SIGTERM handler, SIGTERM during a run stops
    it cleanly: Terminated is raised, and no output or staging directory is left; also
    in a process whose SIGINT is ignored (a background job), where SIGTERM is how it is
    stopped."""
    from pl2.runner import Terminated, raise_terminated

    def cb(*a: object) -> None:
        signal.raise_signal(signal.SIGTERM)

    previous = signal.signal(signal.SIGTERM, raise_terminated)
    try:
        with pytest.raises(Terminated):
            pl2.run(toy, progress=cb, out=tmp_path / "o")
        assert signal.getsignal(signal.SIGTERM) is raise_terminated, "the handler is restored"
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert [p.name for p in tmp_path.iterdir()] == ["toy.toml"], "nothing written, no .partial directory"


@pytest.mark.parametrize("sigint", ["ignored"], indirect=True)
def test_an_ignored_sigint_leaves_the_run_going(toy: Scenario, sigint: None) -> None:
    """A process that ignores SIGINT (started with `&` or nohup) keeps ignoring it during
    a run: the run ends normally and SIGINT is still ignored after it."""
    calls = []

    def cb(*a: object) -> None:
        calls.append(a)
        signal.raise_signal(signal.SIGINT)

    res = pl2.run(toy, progress=cb)
    assert len(calls) == 3 and res.summary["stop_reason"] == "EndTime"
    assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN


def test_log_lines_when_stderr_is_not_a_terminal() -> None:
    """A plain progress line at most every 10 s of wall time, then one when writing."""
    from pl2._progress import SimLog

    lines: list[str] = []
    log = SimLog(write=lines.append)
    for wall in (0.5, 5.0, 10.2, 15.0, 20.1, 20.5):
        log(int(wall * 1e8), 10**10, int(wall * 1e6), wall)
    log.writing()
    assert len(lines) == 3, lines
    assert lines[0] == "pl2: simulated 1.02 ms of 10 ms (10%) in 10 s, 1.00 M events/s, about 90 s left", lines[0]
    assert lines[-1] == "pl2: simulation done, writing tables"


def test_callback_error_is_reraised(toy: Scenario) -> None:
    def cb(*a: object) -> bool:
        raise ZeroDivisionError("boom")

    with pytest.raises(ZeroDivisionError, match="boom"):
        pl2.run(toy, progress=cb)


def test_seed_override_and_path(toy: Scenario, tmp_path) -> None:
    r = pl2.run(tmp_path / "toy.toml", progress=False, seed=11)
    assert r.summary["seed"] == 11


def test_forced_bar_draws(toy: Scenario) -> None:
    assert pl2.run(toy, progress="always").summary["stop_reason"] == "EndTime"


def test_bad_progress_argument(toy: Scenario) -> None:
    with pytest.raises(ValueError, match="progress='sometimes'"):
        pl2.run(toy, progress="sometimes")  # type: ignore[arg-type]


def test_invalid_scenario() -> None:
    with pytest.raises(ScenarioError, match="network.link.rate"):
        pl2.run(Scenario.from_toml('[network.link]\nrate = "fast"\n'), progress=False)


def test_tables_are_written_only_for_a_result_that_is_kept() -> None:
    # The core asks before writing Parquet files: yes (telling a progress object with a
    # `writing()` method) unless Ctrl-C came or the callback failed, when the result is
    # discarded anyway.
    from pl2.runner import _Guard

    told: list[int] = []

    class Watcher:
        def __call__(self, sim_ps: int, end_ps: int, events: int, wall_s: float) -> bool:
            return True

        def writing(self) -> None:
            told.append(1)

    g = _Guard(Watcher())
    assert g.writing() is True and told == [1]
    g.interrupted = True
    assert g.writing() is False and told == [1]
    failed = _Guard(Watcher())
    failed.error = RuntimeError("callback failed")
    assert failed.writing() is False and told == [1]
    assert _Guard(None).writing() is True
