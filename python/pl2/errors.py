"""Exceptions pl2 raises to users. Every message names what is wrong (a field path, a
file, a run) and how to fix it."""

from __future__ import annotations


class Pl2Error(Exception):
    """Base class of pl2's own errors."""


class ScenarioError(Pl2Error, ValueError):
    """A scenario, an override or a sweep spec that pl2 cannot run. The message names the
    field path, the bad value, what is allowed and a hint. The native module's
    `ScenarioError` is re-raised as this class with the same message."""


class NativeUnavailableError(Pl2Error, ImportError):
    """The compiled simulator (`pl2._native`) is not importable."""


class StoreError(Pl2Error):
    """A results store that is inconsistent or used wrongly."""


class OutputPathError(Pl2Error, ValueError):
    """An output path pl2 will not write to: one that holds files pl2 did not write, is
    not a directory, cannot be written, or is protected (see `pl2.outdir`). The message
    names the path and what to do instead."""
