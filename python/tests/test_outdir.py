"""pl2 never deletes, moves or overwrites a file it did not write (`pl2.outdir`). Each
test puts a user's files in a scratch directory, runs a command that writes output,
and asserts every one of the user's files is still there byte for byte, with the
documented exit code and one-line message."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

import pl2
from pl2 import outdir
from pl2 import reproduce as rep
from pl2.cli import EXIT_INVALID, app
from pl2.errors import OutputPathError
from pl2.store import open_store

runner = CliRunner()

SCENARIO = 'name = "toy"\nseed = 7\n\n[network.link]\nrate = "100Gbps"\n\n[[workload]]\nload = 0.5\n'


def _snapshot(root: Path) -> dict[str, bytes]:
    """Every file below `root` with its bytes."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A user's directory, the working directory, holding keep.txt, sub/thesis.tex and
    the scenario: the issue's table."""
    d = tmp_path / "user"
    (d / "sub").mkdir(parents=True)
    (d / "keep.txt").write_text("keep me\n")
    (d / "sub" / "thesis.tex").write_text("\\chapter{Results}\n")
    (d / "toy.toml").write_text(SCENARIO)
    monkeypatch.chdir(d)
    return d


def _assert_kept(before: dict[str, bytes], root: Path) -> None:
    after = _snapshot(root)
    for name, data in before.items():
        assert after.get(name) == data, f"{name} was changed or removed"


def _refused(args: list[str], fragment: str) -> str:
    r = runner.invoke(app, args)
    assert r.exit_code == EXIT_INVALID, r.output
    err = r.output.strip()
    assert err.startswith("error: ") and len(err.splitlines()) == 1, err
    assert "Traceback" not in r.output
    assert fragment in err, err
    return err


# The table: each of these deleted the user's files before.

@pytest.mark.parametrize(
    ("out", "fragment"),
    [
        (".", "working directory"),
        ("", "output path is empty"),
        ("./sub/..", "contains '..'"),
        ("sub", "holds files pl2 did not write (sub/thesis.tex)"),
    ],
)
def test_run_refuses_the_users_directories(home: Path, out: str, fragment: str) -> None:
    before = _snapshot(home)
    err = _refused(["run", "toy.toml", "--out", out, "-q"], fragment)
    assert "choose" in err or "give" in err, "the message names the fix"
    _assert_kept(before, home)
    assert _snapshot(home) == before, "nothing was added either"


def test_the_message_names_the_path_and_the_fix(home: Path) -> None:
    err = _refused(["run", "toy.toml", "--out", "sub", "-q"], "output path sub exists")
    assert "choose a new path, or add --force" in err


@pytest.mark.parametrize("out", [".", "./", "sub/..", "..", "/", "~"])
def test_force_never_acts_on_protected_places(home: Path, out: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(home))
    target = str(home) if out == "~" else out
    before = _snapshot(home)
    r = runner.invoke(app, ["run", "toy.toml", "--out", target, "-q", "--force"])
    assert r.exit_code == EXIT_INVALID, r.output
    _assert_kept(before, home)
    assert _snapshot(home) == before


def test_force_never_writes_into_a_parent_of_the_working_directory(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(home / "sub")
    before = _snapshot(home)
    _refused(["run", "../toy.toml", "--out", str(home), "-q", "--force"], "parent of the working directory")
    assert _snapshot(home) == before


def test_force_writes_beside_the_users_files(home: Path) -> None:
    before = _snapshot(home)
    r = runner.invoke(app, ["run", "toy.toml", "--out", "sub", "-q", "--force"])
    assert r.exit_code == 0, r.output
    _assert_kept(before, home)
    assert (home / "sub" / "messages.parquet").is_file()
    manifest = json.loads((home / "sub" / outdir.MANIFEST).read_text())
    assert "thesis.tex" not in manifest["files"] and "summary.json" in manifest["files"]
    # Again with --force: pl2 replaces its own files there, still not the user's.
    r = runner.invoke(app, ["run", "toy.toml", "--out", "sub", "-q", "--force", "--seed", "9"])
    assert r.exit_code == 0, r.output
    _assert_kept(before, home)


def test_force_refuses_a_name_taken_by_a_users_file(home: Path) -> None:
    (home / "mine").mkdir()
    (home / "mine" / "summary.json").write_text("{\"mine\": true}\n")
    before = _snapshot(home)
    r = runner.invoke(app, ["run", "toy.toml", "--out", "mine", "-q", "--force"])
    assert r.exit_code == EXIT_INVALID and "summary.json exists and pl2 did not write it" in r.output
    assert _snapshot(home) == before
    assert not any(p.name.startswith(".mine.partial") for p in home.iterdir()), "the staging directory is gone"


def test_an_existing_file_is_refused(home: Path) -> None:
    before = _snapshot(home)
    _refused(["run", "toy.toml", "--out", "keep.txt", "-q"], "exists and is not a directory")
    _refused(["run", "toy.toml", "--out", "keep.txt", "-q", "--force"], "exists and is not a directory")
    assert _snapshot(home) == before


@pytest.mark.parametrize(("out", "fragment"), [("/dev/null/x", "/dev/null is not a directory"), ("keep.txt/x", "is not a directory")])
def test_a_path_below_a_file_is_refused(home: Path, out: str, fragment: str) -> None:
    before = _snapshot(home)
    _refused(["run", "toy.toml", "--out", out, "-q"], fragment)
    assert _snapshot(home) == before


def test_proc_is_refused(home: Path) -> None:
    if not Path("/proc/self").exists():
        pytest.skip("no /proc here")
    _refused(["run", "toy.toml", "--out", "/proc/x", "-q"], "/proc/x")
    assert not Path("/proc/x").exists()


@contextlib.contextmanager
def _read_only_dir(path: Path) -> Iterator[Path]:
    """A directory pl2 cannot write in: a read-only tmpfs when running as root (which
    ignores permission bits), else a directory without write permission."""
    path.mkdir()
    if os.geteuid() != 0:
        path.chmod(0o555)
        try:
            yield path
        finally:
            path.chmod(0o755)
        return
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", str(path)], capture_output=True, check=False)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a read-only file system here: {r.stderr.decode().strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", str(path)], check=False)


def test_a_read_only_file_system_is_refused(home: Path, tmp_path: Path) -> None:
    with _read_only_dir(tmp_path / "ro") as ro:
        _refused(["run", "toy.toml", "--out", str(ro / "run"), "-q"], "cannot write in")
        _refused(["run", "toy.toml", "--out", str(ro), "-q", "--force"], "cannot write in")


# pl2's own directories.

def test_a_run_replaces_an_earlier_run_whole(home: Path) -> None:
    assert runner.invoke(app, ["run", "toy.toml", "--out", "out/r", "-q"]).exit_code == 0
    first = _snapshot(home / "out" / "r")
    assert outdir.MANIFEST in first and set(json.loads(first[outdir.MANIFEST])["files"]) == set(first) - {outdir.MANIFEST}
    assert runner.invoke(app, ["run", "toy.toml", "--out", "out/r", "-q", "--seed", "3"]).exit_code == 0
    second = _snapshot(home / "out" / "r")
    assert set(second) == set(first) and second["summary.json"] != first["summary.json"]
    assert sorted(p.name for p in (home / "out").iterdir()) == ["r"], "no staging or old directory left"


def test_a_run_with_a_users_file_added_is_not_replaced(home: Path) -> None:
    assert runner.invoke(app, ["run", "toy.toml", "--out", "out/r", "-q"]).exit_code == 0
    (home / "out" / "r" / "notes.md").write_text("my notes\n")
    before = _snapshot(home)
    _refused(["run", "toy.toml", "--out", "out/r", "-q"], "notes.md")
    assert _snapshot(home) == before
    assert runner.invoke(app, ["run", "toy.toml", "--out", "out/r", "-q", "--force", "--seed", "4"]).exit_code == 0
    _assert_kept({"out/r/notes.md": b"my notes\n"}, home)


def test_a_directory_without_a_manifest_is_not_replaced(home: Path) -> None:
    """A run directory from before manifests existed looks like anyone's directory."""
    assert runner.invoke(app, ["run", "toy.toml", "--out", "out/r", "-q"]).exit_code == 0
    (home / "out" / "r" / outdir.MANIFEST).unlink()
    before = _snapshot(home)
    _refused(["run", "toy.toml", "--out", "out/r", "-q"], "holds files pl2 did not write")
    assert _snapshot(home) == before


def test_an_empty_directory_is_written_into(home: Path) -> None:
    (home / "empty").mkdir()
    assert runner.invoke(app, ["run", "toy.toml", "--out", "empty", "-q"]).exit_code == 0
    assert (home / "empty" / "summary.json").is_file()


def test_a_symbolic_link_is_refused(home: Path) -> None:
    (home / "link").symlink_to(home / "sub")
    before = _snapshot(home)
    _refused(["run", "toy.toml", "--out", "link", "-q", "--force"], "symbolic link")
    assert _snapshot(home) == before


# Every other command and function that writes.

def test_python_run_and_write_follow_the_rule(home: Path) -> None:
    before = _snapshot(home)
    for out in (".", "", "sub", "keep.txt", "sub/.."):
        with pytest.raises(OutputPathError):
            pl2.run("toy.toml", out=out, progress=False)
    assert _snapshot(home) == before
    res = pl2.run("toy.toml", progress=False)
    for out in (".", "sub", "keep.txt"):
        with pytest.raises(OutputPathError):
            res.write(out)
    assert _snapshot(home) == before
    written = res.write("sub", force=True)
    assert {p.name for p in written} >= {"summary.json", "scenario.toml"}
    _assert_kept(before, home)
    res.write("fresh")
    res.write("fresh")


def test_rerun_follows_the_rule(home: Path) -> None:
    assert runner.invoke(app, ["run", "toy.toml", "--out", "out/r", "-q"]).exit_code == 0
    before = _snapshot(home)
    _refused(["rerun", "out/r", "--out", "sub", "-q"], "sub/thesis.tex")
    _refused(["rerun", "out/r", "--out", ".", "-q"], "working directory")
    assert _snapshot(home) == before
    r = runner.invoke(app, ["rerun", "out/r", "--out", "out/r2", "-q"])
    assert r.exit_code == 0 and "identical" in r.output and ".pl2-run" not in r.output


def test_sweep_store_follows_the_rule(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import pl2.cli
    from pl2 import SerialExecutor

    monkeypatch.setattr(pl2.cli, "LocalExecutor", lambda workers: SerialExecutor())
    (home / "sweep.toml").write_text('name = "s"\nbase = "toy.toml"\nseeds = [1, 2]\n')
    before = _snapshot(home)
    _refused(["sweep", "sweep.toml", "--store", "sub", "-q"], "sub/thesis.tex")
    _refused(["sweep", "sweep.toml", "--store", ".", "-q"], "working directory")
    _refused(["sweep", "sweep.toml", "--store", "keep.txt", "-q"], "not a directory")
    assert _snapshot(home) == before
    with pytest.raises(OutputPathError):
        open_store(home)
    r = runner.invoke(app, ["sweep", "sweep.toml", "--store", "sub", "-q", "--force"])
    assert r.exit_code == 0, r.output
    _assert_kept(before, home)
    assert (home / "sub" / "runs").is_dir()
    # The store is pl2's now: opening it again needs no --force.
    r = runner.invoke(app, ["sweep", "sweep.toml", "--store", "sub", "-q"])
    assert r.exit_code == 0, r.output


def test_a_store_made_before_manifests_is_adopted(home: Path) -> None:
    store = open_store(home / "st")
    root = store.root
    (root / outdir.MANIFEST).unlink()
    again = open_store(root)
    assert again.root == root and (root / outdir.MANIFEST).is_file()


def test_plot_never_replaces_a_users_file(home: Path) -> None:
    assert runner.invoke(app, ["run", "toy.toml", "--out", "out/r", "-q"]).exit_code == 0
    (home / "fig.png").write_bytes(b"\x89PNG my own figure")
    before = _snapshot(home)
    _refused(["plot", "out/r", "--kind", "latency_cdf", "--out", "fig.png"], "fig.png exists and pl2 did not write it")
    _refused(["plot", "out/r", "--kind", "latency_cdf", "--out", "fig"], "fig.png exists and pl2 did not write it")
    _refused(["plot", "out/r", "--kind", "latency_cdf", "--out", ""], "output path is empty")
    _refused(["plot", "out/r", "--kind", "latency_cdf", "--out", "sub/../x.png"], "contains '..'")
    assert _snapshot(home) == before
    # pl2's own figure may be replaced.
    assert runner.invoke(app, ["plot", "out/r", "--kind", "latency_cdf", "--out", "mine.svg"]).exit_code == 0
    assert runner.invoke(app, ["plot", "out/r", "--kind", "latency_cdf", "--out", "mine.svg"]).exit_code == 0
    assert runner.invoke(app, ["plot", "out/r", "--kind", "latency_cdf", "--out", "both"]).exit_code == 0
    assert runner.invoke(app, ["plot", "out/r", "--kind", "latency_cdf", "--out", "both"]).exit_code == 0


def test_a_figure_saved_into_a_run_keeps_the_run_pl2s(home: Path) -> None:
    """The user guide plots into the run's directory: the run can still be replaced."""
    assert runner.invoke(app, ["run", "toy.toml", "--out", "out/r", "-q"]).exit_code == 0
    assert runner.invoke(app, ["plot", "out/r", "--kind", "latency_cdf", "--out", "out/r/latency"]).exit_code == 0
    files = json.loads((home / "out" / "r" / outdir.MANIFEST).read_text())["files"]
    assert {"latency.png", "latency.svg"} <= set(files)
    assert runner.invoke(app, ["run", "toy.toml", "--out", "out/r", "-q", "--seed", "2"]).exit_code == 0
    assert not (home / "out" / "r" / "latency.png").exists(), "replaced with the run"


# `pl2 reproduce`, with two stand-in figures that use the fake native module.

class _Fig:
    """A figure module stand-in: runs one toy scenario and writes data, a figure and a
    CSV through the context, like the real figures."""

    def __init__(self, name: str) -> None:
        self.TITLE = f"Stand-in {name}"
        self.name = name

    def run(self, ctx: object) -> str:
        import matplotlib.pyplot as plt
        import polars as pl

        from pl2.reproduce.common import Context

        assert isinstance(ctx, Context)
        res = ctx.run(pl2.Scenario.from_toml(SCENARIO), {"fig": self.name}, 1, self.name)
        ctx.write_parquet(pl.DataFrame({"x": [res.messages.height]}), self.name)
        ctx.file(f"{self.name}.csv").write_text("a,b\n1,2\n")
        fig, _ = plt.subplots()
        ctx.save(fig, self.name)
        return f"body of {self.name}"


@pytest.fixture
def figures(monkeypatch: pytest.MonkeyPatch) -> None:
    mods = {"fa": _Fig("fa"), "fb": _Fig("fb")}
    monkeypatch.setattr(rep, "FIGURES", {n: n for n in mods})
    monkeypatch.setattr(rep, "module", lambda n: mods[n])


def test_reproduce_one_figure_keeps_the_others_report(home: Path, figures: None) -> None:
    from pl2.executors import SerialExecutor

    rep.reproduce(["all"], out="repro", quick=True, log=lambda m: None, executor=SerialExecutor())
    index = (home / "repro" / "paper" / "report.md").read_text()
    assert "## Stand-in fa" in index and "## Stand-in fb" in index
    fa_section = (home / "repro" / "paper" / "fa" / "report.md").read_bytes()
    rep.reproduce(["fb"], out="repro", quick=True, log=lambda m: None, executor=SerialExecutor())
    index = (home / "repro" / "paper" / "report.md").read_text()
    assert "## Stand-in fa" in index and "## Stand-in fb" in index, "the one-figure run kept fa's section"
    assert (home / "repro" / "paper" / "fa" / "report.md").read_bytes() == fa_section
    assert "(0 runs, 1 reused from the store)" in index


def test_reproduce_follows_the_rule(home: Path, figures: None) -> None:
    from pl2.executors import SerialExecutor

    before = _snapshot(home)
    for out in (".", "sub", "keep.txt", ""):
        with pytest.raises(OutputPathError):
            rep.reproduce(["fa"], out=out, quick=True, log=lambda m: None, executor=SerialExecutor())
    _refused(["reproduce", "fa", "--quick", "--out", "sub", "--workers", "1"], "sub/thesis.tex")
    assert _snapshot(home) == before
    # A reproduction directory with the user's notes in it is still pl2's: it is added
    # to, and the notes stay.
    rep.reproduce(["fa"], out="repro", quick=True, log=lambda m: None, executor=SerialExecutor())
    (home / "repro" / "notes.md").write_text("notes\n")
    (home / "repro" / "paper" / "fb").mkdir()
    (home / "repro" / "paper" / "fb" / "fb.csv").write_text("the user's\n")
    users = {"repro/notes.md": b"notes\n", "repro/paper/fb/fb.csv": b"the user's\n"}
    with pytest.raises(OutputPathError, match="fb.csv exists and pl2 did not write it"):
        rep.reproduce(["fb"], out="repro", quick=True, log=lambda m: None, executor=SerialExecutor())
    _assert_kept(users, home)
    rep.reproduce(["fa"], out="repro", quick=True, log=lambda m: None, executor=SerialExecutor())
    _assert_kept(users, home)
    # With --force, reproducing into the user's directory adds files beside theirs.
    r = runner.invoke(app, ["reproduce", "fa", "--quick", "--out", "sub", "--workers", "1", "--force"])
    assert r.exit_code == 0, r.output
    _assert_kept(before, home)
    assert (home / "sub" / "report.md").is_file()
