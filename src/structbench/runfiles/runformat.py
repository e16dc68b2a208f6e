"""The run directory's files and the version of their format.

A run directory holds ``manifest.json`` (``manifest.Manifest``), ``samples.jsonl`` (one ``records.SampleRecord`` a
line) and ``metrics.json`` (``results.MetricsFile``); while a session runs, also ``progress.json``
(``heartbeat.Heartbeat``). The manifest and the metrics carry ``format_version``, ``MAJOR.MINOR``: a minor version
only adds fields, so a reader takes any file of its own major version (a manifest's unknown fields are kept as they
are; metrics.json fields it does not know are named in the error if they stop it); a major version changes what fields
mean, and a reader refuses a newer one rather than misread it. A file without ``format_version`` was written before
versions existed: format 1.0, read as such.
"""

from __future__ import annotations

from pathlib import Path

from structbench.core.errors import DataError

FORMAT_VERSION = "1.4"
"""The format this structbench writes, and the newest it reads. 1.1 added a sweep's fields: the configuration's
``sweeps``, each record's and result entry's ``cell`` and metrics.json's ``robustness`` (absent: no sweep). 1.2 added
the tool loop's: the configuration's ``max_turns``, a record's ``error_kind`` ``turns`` and a result entry's
``turn_limit``. 1.3 added the robustness figures' intervals and the drop's test (``drop``, ``intervals``, ``p_drop``,
``drop_significant``, ``shared``). 1.4 scored the tool loop's turn limit by default (the configuration's
``turn_limit``, a record's ``turn_limit`` and a result entry's ``turn_limit_scored``; a 1.3 run's samples at the limit
are all ``error_kind`` ``turns``, counted apart) and added a record's and a result entry's ``replies_unclosed``
(replies the model ended without closing their thought) and the manifest's and a session's ``sandbox`` (the isolation
its sandboxed programs got)."""
UNVERSIONED = "1.0"
"""The format of files written before ``format_version`` existed (the same fields as 1.0)."""

MANIFEST = "manifest.json"
SAMPLES = "samples.jsonl"
METRICS = "metrics.json"
PROGRESS = "progress.json"
"""What the running session is doing now (``heartbeat.Heartbeat``): advisory, rewritten about once a second, read by
``structbench view``; a reader that does not know it ignores it, so it needs no format version."""
SPENT = "spent.jsonl"
"""Every call the run paid for, a line each, appended as it returns (``runner.spending``): what its budget and the
manifest's ``usage`` count, whatever became of the call's sample."""
LOCK = ".lock"
"""Held (``flock``) by the process filling the run directory, for as long as it does."""
BATCH_LEDGER = "batches/ledger.json"
"""The run's batches (``--batch``, ``runner.batch.ledger``): a run without ``--batch`` looks for it before it sends a
request directly."""


def parse_version(text: str, path: Path) -> tuple[int, int]:
    """``"1.0"`` -> ``(1, 0)``; anything else is a ``DataError`` naming the file."""
    major, dot, minor = str(text).partition(".")
    if not (major.isdigit() and dot and minor.isdigit()):
        raise DataError(f"{path}: format_version {text!r}: expected MAJOR.MINOR, e.g. {FORMAT_VERSION}")
    return int(major), int(minor)


def check_format(version: object, path: Path) -> tuple[int, int]:
    """The (major, minor) of a file's ``format_version`` (None: the unversioned format); a newer major version than
    this structbench reads is a ``DataError`` (exit 2) that says to upgrade."""
    found = parse_version(UNVERSIONED if version is None else str(version), path)
    ours = parse_version(FORMAT_VERSION, path)
    if found[0] > ours[0]:
        raise DataError(f"{path}: written in run format {version}, newer than the {FORMAT_VERSION} this structbench "
                        "reads; upgrade structbench (pip install -U structbench) to read it")
    return found


def newer_minor(found: tuple[int, int]) -> bool:
    """Whether a file of version ``found`` (of this major version) may hold fields this structbench does not know."""
    return found > parse_version(FORMAT_VERSION, Path())
