"""Executors: results and exceptions per item, worker crashes isolated to the item that
causes them, and workers that die with their driver."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import exec_helpers as h
import pytest

from pl2 import LocalExecutor, SerialExecutor
from pl2.executors import WorkerDied


def test_serial_results_and_errors() -> None:
    out = dict(SerialExecutor().map(h.fail_on_three, [1, 2, 3, 4]))
    assert out[1] == 1 and out[4] == 4 and isinstance(out[3], ValueError)


def test_local_results_and_errors() -> None:
    out = dict(LocalExecutor(2).map(h.fail_on_three, range(6)))
    assert sorted(out) == list(range(6))
    assert isinstance(out[3], ValueError) and "three" in str(out[3])
    assert [out[i] for i in (0, 1, 2, 4, 5)] == [0, 1, 2, 4, 5]


def test_a_crash_fails_only_its_item() -> None:
    out = dict(LocalExecutor(2).map(h.crash_on_three, range(8)))
    assert sorted(out) == list(range(8))
    assert isinstance(out[3], WorkerDied)
    assert all(out[i] == i for i in range(8) if i != 3), out


def test_workers_serve_every_map_inside_with() -> None:
    """Inside `with`, a map reuses the workers of the previous one; they stop at the end."""
    with LocalExecutor(2) as ex:
        first = {pid for _, pid in ex.map(h.pid_after_a_nap, range(4))}
        second = {pid for _, pid in ex.map(h.pid_after_a_nap, range(4))}
        assert first & second, (first, second)
        assert ex._kept is not None
    assert ex._kept is None
    for pid in first | second:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    with LocalExecutor(2) as ex:
        pids = {pid for _, pid in ex.map(h.pid_after_a_nap, range(4))}
        for pid in pids:
            os.kill(pid, signal.SIGKILL)
        time.sleep(0.2)
        assert sorted(dict(ex.map(h.square, range(4))).values()) == [0, 1, 4, 9], "kept workers that died are replaced"
    plain = LocalExecutor(2)
    assert dict(plain.map(h.square, [3])) == {3: 9}
    assert plain._kept is None, "outside `with`, a map stops its workers"


def test_bad_worker_count() -> None:
    with pytest.raises(ValueError, match="at least 1 worker"):
        LocalExecutor(0)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux only")
def test_workers_die_with_the_driver(tmp_path: Path) -> None:
    pid_file = tmp_path / "worker.pid"
    driver = (
        "import sys; sys.path[:0] = sys.argv[1:3]\n"
        "import exec_helpers as h\nfrom pl2 import LocalExecutor\n"
        "list(LocalExecutor(1).map(h.report_pid_and_sleep, [sys.argv[3]]))\n"
    )
    here = Path(__file__).resolve().parent
    log = tmp_path / "driver.log"
    with log.open("w") as err:
        p = subprocess.Popen([sys.executable, "-c", driver, str(here), str(here.parent), str(pid_file)], stderr=err)
    try:
        deadline = time.monotonic() + 60
        while not pid_file.exists() or not pid_file.read_text():
            assert time.monotonic() < deadline and p.poll() is None, f"the worker never started: {log.read_text()}"
            time.sleep(0.1)
        worker = int(pid_file.read_text())
    finally:
        os.kill(p.pid, signal.SIGKILL)
        p.wait()
    deadline = time.monotonic() + 10
    while _alive(worker):
        assert time.monotonic() < deadline, "the worker outlived its driver"
        time.sleep(0.05)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="uses /proc")
def test_ctrl_c_stops_driver_and_workers(tmp_path: Path) -> None:
    pid_file = tmp_path / "worker.pid"
    driver = (
        "import sys; sys.path[:0] = sys.argv[1:3]\n"
        "import exec_helpers as h\nfrom pl2 import LocalExecutor\n"
        "try:\n    list(LocalExecutor(1).map(h.report_pid_and_sleep, [sys.argv[3]]))\n"
        "except KeyboardInterrupt:\n    sys.exit(130)\n"
    )
    here = Path(__file__).resolve().parent
    p = subprocess.Popen([sys.executable, "-c", driver, str(here), str(here.parent), str(pid_file)], stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not pid_file.exists() or not pid_file.read_text():
        assert time.monotonic() < deadline and p.poll() is None, "the worker never started"
        time.sleep(0.1)
    worker = int(pid_file.read_text())
    p.send_signal(signal.SIGINT)
    try:
        _, err = p.communicate(timeout=15)
    finally:
        p.kill()
    assert p.returncode == 130, err
    assert not _alive(worker), "the worker was stopped"
    assert "Traceback" not in err, err


def test_unguarded_script_gets_a_clear_error(tmp_path: Path) -> None:
    here = Path(__file__).resolve().parent
    script = tmp_path / "unguarded.py"
    script.write_text(
        f"import sys; sys.path[:0] = [{str(here)!r}, {str(here.parent)!r}]\n"
        "import exec_helpers as h\nfrom pl2 import LocalExecutor\n"
        "print(list(LocalExecutor(1).map(h.square, [2])))\n"
    )
    p = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert p.returncode == 1 and "WorkersCannotStart" in p.stderr and 'if __name__ == "__main__":' in p.stderr


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False
