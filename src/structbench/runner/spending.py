"""``spent.jsonl``: every call a run paid for, one line each, appended as it returns, by the process that made it.

A call answered by the model is paid for by the run whatever happens next: its sample may be recorded in a later
session (the answer read back from the response cache, where the record calls it reused), or never (the run
stopped, was killed). So what a run spent is read from here, not from its records: ``Budget.start`` counts every
earlier session's calls against the budget, the manifest's ``usage`` and each session's ``spent`` are summed from it
(a session killed with -9 included), and an answer another run paid for, read from a shared cache, is in no line of
this run's log: it stays free. Each line is one ``write`` to a file opened for appending, before the call's answer
goes to the response cache, so a process killed at any moment leaves whole lines and never an answer without its
line (a torn last line, from a crash of the machine, is skipped).

A crash of the machine (power lost) keeps only what was synced to the disk. The lines are synced every
``SYNC_EVERY`` seconds while calls come (on an event loop, ``loop.call_later``; elsewhere at once) and when the log
is closed, not once a call: a sync on the event loop took 100–150 µs, once a call, and the disk's journal more (#44).
The first sync after a log creates the file syncs the run directory too. The response cache commits an answer
without waiting for that sync, but with the session that paid for it (``Session.id``) and its call's line; a later
session of the run appends the lines of the answers its earlier sessions paid for that the cache kept and the log
lost (``restore``), so a crash never makes a paid answer free to a resumed run. What a crash can still lose is the
lines of the last ``SYNC_EVERY`` seconds whose answers the cache lost too (asked for, and paid for, again).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import orjson

from structbench.backends.usage import TOKEN_FIELDS, CallUsage, Usage, UsageKey, plus_counts, summed
from structbench.core.atomic import fsync_dir, fsync_if_file
from structbench.core.errors import StorageError
from structbench.core.regular import read_regular
from structbench.core.trusted import trusted
from structbench.runfiles.recordlines import torn_tail
from structbench.runfiles.runformat import SPENT

BEFORE_LOG = -1
"""The session of the lines a run written before the log existed is seeded with (its records' calls)."""
SYNC_EVERY = 0.1
"""Seconds between two syncs of the lines written on an event loop."""


@dataclass(frozen=True)
class Paid:
    """Who paid for an answer the response cache stores: the session's ``id`` and the call's line in the log."""

    payer: str
    line: bytes


class SpendLog:
    """This session's lines of ``<run>/spent.jsonl`` (``session``: its index in the manifest's ``sessions``)."""

    def __init__(self, run_dir: Path, session: int, payer: str | None = None) -> None:
        self.path = run_dir / SPENT
        self.session = session
        self.payer = payer
        """The session's ``id`` the response cache marks its answers with (None: they are not marked)."""
        self._fd: int | None = None
        self._unsynced = False
        """Lines written since the last sync."""
        self._created = False
        """This log created the file, whose entry in the run directory the next sync syncs (once: not a line's cost)."""
        self._sync_due = False
        """A sync is scheduled on the event loop."""
        self._failed: StorageError | None = None
        """Why a scheduled sync failed (raised by the next ``add``)."""

    def add(self, call: CallUsage, key: str | None = None) -> Paid | None:
        """Append one paid call (the line ``write`` gives ``Usage() + call``, without building it: every call of a
        run passes here; ``key``: its answer's key in the response cache), synced within ``SYNC_EVERY`` seconds on an
        event loop (at once outside one); a file that cannot be written or synced is a ``StorageError`` (a budget must
        not be lost). Returns what the cache stores with the answer (None for a log without a ``payer``)."""
        if self._failed is not None:
            raise self._failed
        line = _line(self.session, call, key)
        self._append(line)
        paid = Paid(self.payer, line.rstrip(b"\n")) if self.payer is not None and key is not None else None
        if self._sync_due:
            return paid
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.sync()
            return paid
        self._sync_due = True
        loop.call_later(SYNC_EVERY, self._scheduled)
        return paid

    def write(self, groups: Iterable[tuple[UsageKey, Usage]]) -> None:
        """Append groups of paid calls (one line each), synced before it returns."""
        self.write_lines(b"".join(orjson.dumps({"session": self.session, "model": key[0], "batch": key[1],
                                                **usage.model_dump()}) + b"\n" for key, usage in groups))

    def write_lines(self, data: bytes) -> None:
        """Append whole lines as they are (each keeps the session it names), synced before it returns."""
        self._append(data)
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

    def _scheduled(self) -> None:
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
    syncs its directory entry). A log that ends in a torn line (a crash of the machine mid-write) is ended first, so
    the torn line does not swallow the next."""
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT
    try:
        return os.open(path, flags | os.O_EXCL, 0o644), True
    except FileExistsError:
        fd = os.open(path, flags, 0o644)
    if torn_tail(path):
        try:
            os.write(fd, b"\n")
        except BaseException:
            os.close(fd)
            raise
    return fd, False


def _line(session: int, call: CallUsage, key: str | None) -> bytes:
    """A call's line: its ``Usage() + call`` as ``write`` gives it, and its answer's cache key where it has one."""
    row = {"session": session, "model": call.model, "batch": call.batch, "calls": 1,
           "prompt_tokens": call.prompt_tokens, "completion_tokens": call.completion_tokens,
           "reasoning_tokens": call.reasoning_tokens, "cached_tokens": call.cached_tokens,
           "unknown": int(not call.known)}
    if key is not None:
        row["key"] = key
    return orjson.dumps(row) + b"\n"


def restore(run_dir: Path, paid: Iterable[tuple[str, bytes]]) -> int:
    """Append the lines of calls whose answers the response cache kept but the log lost (``paid``: each answer's key and
    its line, as ``ResponseCache.paid_lines`` gives them for the run's earlier sessions): a crash of the machine
    after the cache committed them and before the log's sync. Synced before it returns; how many it appended."""
    rows = list(paid)
    if not rows:
        return 0
    logged = logged_keys(run_dir)
    missing = [line for key, line in rows if key not in logged and _line_of(line, key)]
    if missing:
        log = SpendLog(run_dir, BEFORE_LOG)
        try:
            log.write_lines(b"".join(line + b"\n" for line in missing))
        finally:
            log.close()
    return len(missing)


def _line_of(line: bytes, key: str) -> bool:
    """Whether ``line`` is one line of the log, the line of the call whose answer ``key`` names (a damaged cache's
    value is left out, never written into the log)."""
    if b"\n" in line or b"\r" in line:
        return False
    try:
        row = orjson.loads(line)
    except orjson.JSONDecodeError:
        return False
    return isinstance(row, dict) and row.get("key") == key


def logged_keys(run_dir: Path) -> set[str]:
    """The cache keys of the calls the log holds a line of."""
    path = run_dir / SPENT
    if not path.exists():
        return set()
    keys = set()
    for raw in read_regular(path).splitlines():
        if b'"key"' not in raw:
            continue
        try:
            key = orjson.loads(raw).get("key")
        except (orjson.JSONDecodeError, AttributeError):
            continue
        if type(key) is str:
            keys.add(key)
    return keys


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
