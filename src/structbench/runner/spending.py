"""``spent.jsonl``: every call a run paid for, one line each, appended as it returns, by the process that made it.

A call answered by the model is paid for by the run whatever happens next: its sample may be recorded in a later
session (the answer read back from the response cache, where the record calls it reused), or never (the run
stopped, was killed). So what a run spent is read from here, not from its records: ``Budget.start`` counts every
earlier session's calls against the budget, the manifest's ``usage`` and each session's ``spent`` are summed from it
(a session killed with -9 included), and an answer another run paid for, read from a shared cache, is in no line of
this run's log: it stays free. Each line is one ``write`` to a file opened for appending, so a process killed at any
moment leaves whole lines (a torn last line, from a crash of the machine, is skipped).

A crash of the machine (power lost) keeps what was synced to the disk, so the lines are synced too: on an event loop
once per turn of it (``loop.call_soon`` when a turn's first line is written: one ``fdatasync`` for every call
answered in that turn, before the loop waits for anything else), elsewhere at once; the first sync after a log
creates the file syncs the run directory too (once a file: a new file's entry is lost to a crash until then, with
every line synced in it). A call's line is written before its answer goes to the response cache, whose commit is
queued (``call_soon``) after that sync: a crash cannot keep an answer whose line it lost, which a resumed run would
reuse as free. A process killed at once after a sync loses nothing; what a crash of the machine can still lose is
the lines of the turn it interrupts.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterable
from pathlib import Path

import orjson

from structbench.backends.usage import TOKEN_FIELDS, CallUsage, Usage, UsageKey, plus_counts, summed
from structbench.core.atomic import fsync_dir, fsync_if_file
from structbench.core.errors import StorageError
from structbench.core.regular import read_regular
from structbench.core.trusted import trusted
from structbench.runfiles.runformat import SPENT

BEFORE_LOG = -1
"""The session of the lines a run written before the log existed is seeded with (its records' calls)."""


class SpendLog:
    """This session's lines of ``<run>/spent.jsonl`` (``session``: its index in the manifest's ``sessions``)."""

    def __init__(self, run_dir: Path, session: int) -> None:
        self.path = run_dir / SPENT
        self.session = session
        self._fd: int | None = None
        self._unsynced = False
        """Lines written since the last sync."""
        self._created = False
        """This log created the file, whose entry in the run directory the next sync syncs (once: not a line's cost)."""
        self._sync_due = False
        """A sync waits for the end of the event loop's turn."""
        self._failed: StorageError | None = None
        """Why a sync at the end of a turn failed (raised by the next ``add``)."""

    def add(self, call: CallUsage) -> None:
        """Append one paid call (the line ``write`` gives ``Usage() + call``, without building it: every call of a
        run passes here), synced at the end of this turn of the event loop (at once outside one); a file that cannot be
        written or synced is a ``StorageError`` (a budget must not be lost)."""
        if self._failed is not None:
            raise self._failed
        self._append(orjson.dumps({
            "session": self.session, "model": call.model, "batch": call.batch, "calls": 1,
            "prompt_tokens": call.prompt_tokens, "completion_tokens": call.completion_tokens,
            "reasoning_tokens": call.reasoning_tokens, "cached_tokens": call.cached_tokens,
            "unknown": int(not call.known)}) + b"\n")
        if self._sync_due:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.sync()
            return
        self._sync_due = True
        loop.call_soon(self._end_of_turn)

    def write(self, groups: Iterable[tuple[UsageKey, Usage]]) -> None:
        """Append groups of paid calls (one line each), synced before it returns."""
        self._append(b"".join(orjson.dumps({"session": self.session, "model": key[0], "batch": key[1],
                                            **usage.model_dump()}) + b"\n" for key, usage in groups))
        self.sync()

    def _append(self, data: bytes) -> None:
        if not data:
            return
        try:
            if self._fd is None:
                self._fd, self._created = _open(self.path)
            if os.write(self._fd, data) != len(data):
                raise OSError("short write")
        except OSError as err:
            raise StorageError(f"{self.path}: cannot be written ({err.strerror or err}): what the run spends could "
                               "not be recorded") from err
        self._unsynced = True

    def sync(self) -> None:
        """Sync the lines written so far to the disk (``StorageError`` when it cannot be)."""
        if not self._unsynced or self._fd is None:
            return
        try:
            fsync_if_file(self._fd)
            if self._created:  # a new file: its lines are lost to a crash with it until its entry is synced too
                fsync_dir(self.path.parent)
                self._created = False
        except OSError as err:
            raise StorageError(f"{self.path}: cannot be synced ({err.strerror or err}): what the run spent could "
                               "be lost to a crash") from err
        self._unsynced = False

    def _end_of_turn(self) -> None:
        self._sync_due = False
        try:
            self.sync()
        except StorageError as err:
            self._failed = err

    def close(self) -> None:
        """Sync and close (``StorageError`` when the last lines cannot be synced; the file is closed all the same)."""
        if self._fd is None:
            return
        try:
            self.sync()
        finally:
            os.close(self._fd)
            self._fd = None


def _open(path: Path) -> tuple[int, bool]:
    """A descriptor appending to ``path``, and whether this call created the file (one more ``open`` only when a
    session first writes to a log that exists: which process made the file, of a run's workers, is the one that
    syncs its directory entry)."""
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT
    try:
        return os.open(path, flags | os.O_EXCL, 0o644), True
    except FileExistsError:
        return os.open(path, flags, 0o644), False


def read_spent(run_dir: Path) -> list[tuple[int, UsageKey, Usage]]:
    """The run's log summed per session and (model, batch, False): (session, key, usage) of each (its lines, one a
    call, checked by hand and summed as numbers, one ``Usage`` a group: a model a line cost the run's end 12 µs a
    call, a third of it with no validation); none when there is no log. A line that is not one of the log's (a torn
    last line) is skipped."""
    path = run_dir / SPENT
    if not path.exists():
        return []
    sums: dict[tuple[int, UsageKey], list[int | None]] = {}
    for raw in read_regular(path).splitlines():  # (a FIFO there is named, not waited on)
        try:
            row = orjson.loads(raw)
            session, key = row["session"], (row["model"], row["batch"], False)
            counts = [row[name] for name in _FIELDS]
        except (orjson.JSONDecodeError, KeyError, TypeError):
            continue
        calls, unknown, *tokens = counts  # orjson reads an int as an int, never a bool
        if not (type(session) is int and session >= BEFORE_LOG and type(key[0]) is str and type(key[1]) is bool
                and type(calls) is int and calls >= 0 and type(unknown) is int and unknown >= 0
                and all(c is None or (type(c) is int and c >= 0) for c in tokens)):
            continue
        total = sums.get((session, key))
        if total is None:
            sums[(session, key)] = counts
        else:
            sums[(session, key)] = [plus_counts(a, b) for a, b in zip(total, counts, strict=True)]
    return [(session, key, trusted(Usage, dict(zip(_FIELDS, total, strict=True))))
            for (session, key), total in sums.items()]


_FIELDS = ("calls", "unknown", *TOKEN_FIELDS)


def grouped(lines: Iterable[tuple[int, UsageKey, Usage]]) -> dict[UsageKey, Usage]:
    """Lines summed per (model, batch, False): what a cost is computed from."""
    parts: dict[UsageKey, list[Usage]] = {}
    for _, key, usage in lines:
        parts.setdefault(key, []).append(usage)
    return {key: summed(usages) for key, usages in parts.items()}
