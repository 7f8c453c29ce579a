"""Where pl2 may write, and how: the one gate every command and function that writes
output goes through (`pl2 run`, `rerun`, `sweep` and the results store, `reproduce`,
`plot`, `pl2.run(out=...)`, `RunResult.write`).

The rule: pl2 never deletes, moves or overwrites a file it did not write. Every
directory pl2 makes holds a manifest, `.pl2-run` (JSON: the pl2 version, what kind of
output it is, and the paths pl2 wrote there; a path ending in `/` is a subtree pl2
owns whole, such as a results store's `runs/`). So:

- a path that does not exist is created (its parents too);
- an empty directory is written into;
- a directory whose manifest lists everything in it is pl2's own: a run replaces it
  atomically (the new run is written beside it and renamed into place), and outputs
  that grow (a reproduction, a store) add to it;
- anything else (a file, a directory with files pl2 did not write, a symbolic link)
  is refused with `OutputPathError` (exit 2 on the command line) naming the path and
  the fix, unless `force` is given: then pl2 writes beside the other files, still
  replaces only files its manifest lists, and refuses if one of its file names is
  taken by a file it did not write;
- never, even with `force`: `/`, the home directory, the working directory or one of
  its parents, a path containing `..`, an empty path.

Single files (`pl2 plot --out fig.png`) carry the mark inside: pl2's PNG and SVG files
name pl2 in their metadata, and an existing file without that mark is never replaced.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from pl2.errors import OutputPathError

#: The manifest file pl2 writes into every directory it makes.
MANIFEST = ".pl2-run"

#: The text pl2 puts into the metadata of every figure file it writes, and looks for
#: before replacing one (PNG `Software` text chunk, SVG `dc:creator`).
FIGURE_MARK = "pl2, the packet-level simulator"

#: How far into a figure file the mark is looked for (PNG text chunks and SVG metadata
#: come before the image data).
_MARK_SCAN_BYTES = 16384

_FIX = "choose a new path, or add --force to write beside the files there (pl2 still deletes nothing it did not write)"


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("pl2")
    except Exception:
        return "unknown"


def check_path_text(raw: str | os.PathLike[str]) -> Path:
    """`raw` as a Path, refusing an empty path and one with `..` (which names a
    different directory than it seems to)."""
    text = os.fspath(raw)
    if not str(text).strip():
        raise OutputPathError("output path is empty: give a directory that pl2 may create, e.g. --out out/run1")
    p = Path(text)
    if ".." in p.parts:
        raise OutputPathError(f"output path {text}: contains '..'; give the directory without '..' (e.g. its absolute path)")
    return p


def _protected(p: Path) -> str | None:
    """Why pl2 must never write into or replace `p` (even with force), or None."""
    resolved = p.resolve()
    if resolved == Path(resolved.anchor):
        return "it is the root directory"
    home = Path.home().resolve()
    if resolved == home:
        return "it is your home directory"
    cwd = Path.cwd().resolve()
    if resolved == cwd:
        return "it is the working directory"
    if resolved in cwd.parents:
        return "it is a parent of the working directory"
    return None


@dataclass
class Manifest:
    """The contents of a `.pl2-run` file."""

    kind: str
    files: set[str] = field(default_factory=set)
    version: str = field(default_factory=_version)

    @classmethod
    def read(cls, directory: Path) -> Manifest | None:
        """The manifest of `directory`, or None if it has none (or one pl2 cannot
        read, which is then not trusted)."""
        p = directory / MANIFEST
        if not p.is_file() or p.is_symlink():
            return None
        try:
            obj = json.loads(p.read_text(encoding="utf-8"))
            return cls(kind=str(obj["kind"]), files={str(f) for f in obj["files"]}, version=str(obj.get("pl2", "unknown")))
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def write(self, directory: Path) -> None:
        """Writes the manifest atomically into `directory`."""
        text = json.dumps({"pl2": self.version, "kind": self.kind, "files": sorted(self.files)}, indent=2) + "\n"
        tmp = directory / f"{MANIFEST}.tmp-{os.getpid()}"
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, directory / MANIFEST)

    def owns(self, rel: str) -> bool:
        """Whether the relative path `rel` (a file) is pl2's by this manifest."""
        if rel in self.files:
            return True
        return any(f.endswith("/") and rel.startswith(f) for f in self.files)


def _files_under(directory: Path) -> list[str]:
    """Every non-directory entry below `directory` (symbolic links included, not
    followed), as relative POSIX paths, the manifest excluded."""
    found = []
    for root, dirs, files in os.walk(directory, followlinks=False):
        base = Path(root)
        for name in files + [d for d in dirs if (base / d).is_symlink()]:
            rel = (base / name).relative_to(directory).as_posix()
            if rel != MANIFEST:
                found.append(rel)
    return sorted(found)


def foreign_files(directory: Path, manifest: Manifest | None) -> list[str]:
    """The files in `directory` that pl2 did not write (by its manifest)."""
    return [f for f in _files_under(directory) if manifest is None or not manifest.owns(f)]


def _describe(names: list[str]) -> str:
    shown = ", ".join(names[:3])
    return shown + (f" and {len(names) - 3} more" if len(names) > 3 else "")


@dataclass
class Target:
    """An output directory that has passed the checks: what is there now and how the
    new output may go in (see `prepare`)."""

    path: Path
    kind: str
    #: "new" (nothing there), "empty" (an empty directory), "ours" (pl2's directory,
    #: nothing else in it), "beside" (with force, or a growing output of pl2's with other
    #: files in it: write beside them).
    state: str
    manifest: Manifest

    def claim(self, rel: str) -> Path:
        """The path of the file `rel` inside this directory, once it is sure pl2 may
        write it (it is new, or pl2 wrote it); records it in the manifest (call `save`
        to write the manifest)."""
        dest = self.path / rel
        if dest.exists() or dest.is_symlink():
            if not self.manifest.owns(rel):
                raise OutputPathError(f"{dest} exists and pl2 did not write it; move it away or choose another output path")
        self.manifest.files.add(rel)
        return dest

    def save(self) -> None:
        """Writes the manifest (creating the directory if needed)."""
        self.path.mkdir(parents=True, exist_ok=True)
        self.manifest.write(self.path)


def prepare(raw: str | os.PathLike[str], kind: str, *, force: bool = False, grows: bool = False) -> Target:
    """Checks that pl2 may write its `kind` of output at `raw` (see the module doc).
    `grows`: the output adds files to an existing directory of the same kind (a
    reproduction, a store) rather than replacing it. Raises OutputPathError with the
    path and the fix."""
    p = check_path_text(raw)
    why = _protected(p)
    if p.is_symlink():
        raise OutputPathError(f"output path {p} is a symbolic link; give the directory itself, or a new path")
    if not p.exists():
        _check_parent(p)
        return Target(p, kind, "new", Manifest(kind))
    if not p.is_dir():
        raise OutputPathError(f"output path {p} exists and is not a directory; choose a new path")
    if why is not None:
        raise OutputPathError(f"output path {p}: pl2 will not write there ({why}); choose a new directory, e.g. {p / 'out'}")
    _check_writable(p)
    manifest = Manifest.read(p)
    if manifest is not None and grows and manifest.kind == kind:
        return Target(p, kind, "ours", manifest)
    foreign = foreign_files(p, manifest)
    if manifest is None and not foreign and not any(p.iterdir()):
        return Target(p, kind, "empty", Manifest(kind))
    if manifest is not None and manifest.kind != kind and not force:
        raise OutputPathError(f"output path {p} holds a pl2 {manifest.kind} output, not a {kind}; choose a new path")
    if manifest is not None and not foreign:
        return Target(p, kind, "ours", manifest)
    if not force:
        what = f"files pl2 did not write ({_describe([(p / f).as_posix() for f in foreign])})" if foreign else "no pl2 manifest (.pl2-run)"
        raise OutputPathError(f"output path {p} exists and holds {what}; {_FIX}")
    return Target(p, kind, "beside", manifest or Manifest(kind))


def _check_parent(p: Path) -> None:
    """The nearest existing ancestor of the new path `p` must be a directory pl2 can
    write in."""
    parent = p.absolute().parent
    while not parent.exists() and not parent.is_symlink():
        parent = parent.parent
    if not parent.is_dir():
        raise OutputPathError(f"output path {p}: {parent} is not a directory; choose a path inside a directory")
    _check_writable(parent)


def _check_writable(d: Path) -> None:
    if not os.access(d, os.W_OK | os.X_OK):
        raise OutputPathError(f"output path: cannot write in {d} (permission denied or read-only file system); choose a writable path")


def os_error(p: Path, e: OSError) -> OutputPathError:
    """An OSError met while creating output at `p`, as a one-line OutputPathError."""
    reason = e.strerror or type(e).__name__
    where = Path(e.filename) if e.filename else p
    if ".partial-" in where.name:
        where = where.parent
    return OutputPathError(f"output path {p}: cannot write {where}: {reason}; choose a writable path")


def staging_dir(target: Target) -> Path:
    """A fresh, empty directory beside `target` to write a new output into before it is
    put in place (`commit`), under a name no existing entry has (so making it never
    removes anything); the caller removes it if the output is abandoned."""
    parent = target.path.absolute().parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        return Path(tempfile.mkdtemp(prefix=f".{target.path.name}.partial-", dir=parent))
    except OSError as e:
        raise os_error(target.path, e) from None


def remove_owned_tree(tmp: Path) -> None:
    """Removes a staging directory pl2 made (its name marks it as pl2's)."""
    if not tmp.name.startswith(".") or ".partial-" not in tmp.name:
        raise OutputPathError(f"refusing to remove {tmp}: not a pl2 staging directory")
    shutil.rmtree(tmp, ignore_errors=True)


def commit(target: Target, staged: Path) -> None:
    """Puts the output written in `staged` at `target.path`, with a manifest listing its
    files, by the rules of `target.state`. `staged` is gone afterwards."""
    written = _files_under(staged)
    manifest = Manifest(target.kind, set(written))
    manifest.write(staged)
    p = target.path
    if target.state == "new":
        try:
            os.rename(staged, p)
        except OSError:
            if p.exists():
                raise OutputPathError(f"output path {p} appeared while the run was writing; choose a new path") from None
            raise
        return
    if target.state == "ours":
        again = Manifest.read(p)
        if again is not None and not foreign_files(p, again):
            # A name of its own (an empty directory made here), so the rename can only
            # replace that.
            old = Path(tempfile.mkdtemp(prefix=f".{p.name}.partial-old-", dir=p.parent))
            os.rename(p, old)
            os.rename(staged, p)
            _remove_listed(old, again)
            return
        target = Target(p, target.kind, "beside", again or Manifest(target.kind))
    _move_beside(target, staged, written)


def _move_beside(target: Target, staged: Path, written: Iterable[str]) -> None:
    """Moves the files of `staged` into `target.path` one by one; every name must be free
    or pl2's (checked for all before any is moved)."""
    for rel in written:
        target.claim(rel)
    for rel in written:
        dest = target.path / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        os.replace(staged / rel, dest)
    target.save()
    remove_owned_tree(staged)


def _remove_listed(old: Path, manifest: Manifest) -> None:
    """Removes the files `manifest` lists from the replaced directory `old`, then its
    empty directories; anything else is left, with a warning."""
    for rel in _files_under(old):
        if manifest.owns(rel):
            (old / rel).unlink()
    (old / MANIFEST).unlink(missing_ok=True)
    for root, dirs, _ in sorted(os.walk(old, topdown=False), key=lambda t: -len(t[0])):
        for d in dirs:
            try:
                (Path(root) / d).rmdir()
            except OSError:
                pass
    try:
        old.rmdir()
    except OSError:
        print(f"warning: {old} kept: it holds files pl2 did not write", file=sys.stderr)


def record_in_manifest(directory: Path, names: Iterable[str]) -> None:
    """Adds files pl2 just wrote into `directory` to its manifest, if it has one (a
    figure saved into a run's directory keeps that directory pl2's own)."""
    manifest = Manifest.read(directory)
    if manifest is not None:
        manifest.files.update(names)
        manifest.write(directory)


def check_figure_file(p: Path) -> None:
    """Refuses to replace an existing figure file that pl2 did not write."""
    if p.is_symlink() or (p.exists() and not p.is_file()):
        raise OutputPathError(f"{p} exists and is not a pl2 figure; choose another output path")
    if p.exists():
        with p.open("rb") as f:
            head = f.read(_MARK_SCAN_BYTES)
        if FIGURE_MARK.encode() not in head:
            raise OutputPathError(f"{p} exists and pl2 did not write it; choose another output path")
