"""The response cache: SQLite in WAL mode, keyed by ``backends.base.cache_key``.

Each response is committed in its own transaction as soon as it arrives and before the strategy sees
it, so a response that was used is never lost to a crash or ``kill -9`` (WAL with ``synchronous=NORMAL``
survives process death; only an OS crash can lose the last commits). Reads and writes run on two threads
of their own (``aget``/``aput``), never on the event loop: another process holding the write lock delays
this process's writes, never its requests. Other processes may read and write the same file; SQLite
serializes them, and a write waits up to ``lock_wait`` seconds for the lock before it counts as failed.

Only usable responses are stored, and an entry that is not usable (written by an older version) reads
as a miss, so a bad reply can never become permanent. Responses that could not be stored are kept in a
``Spill`` file in the run directory and added to the cache by the next run that can write it.
"""

from __future__ import annotations

import asyncio
import functools
import os
import shutil
import sqlite3
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import orjson

from structbench.backends.base import Response, unusable_reason
from structbench.errors import StorageError
from structbench.redact import redact

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    request BLOB NOT NULL,
    response TEXT NOT NULL,
    created REAL NOT NULL
)
"""
_INSERT = "INSERT OR REPLACE INTO responses (key, model, request, response, created) VALUES (?, ?, ?, ?, ?)"

LOCK_WAIT = 300.0
"""Seconds a cache write waits for another process's write lock before it counts as a storage failure."""


class CacheReadError(StorageError):
    """The response cache could not be read."""


class CacheWriteError(StorageError):
    """The response cache could not store a response (read-only, disk full, locked too long)."""


def _reason(err: sqlite3.Error) -> str:
    name = getattr(err, "sqlite_errorname", "")
    return f"{err} ({name})" if name else str(err)


def _disk_full(folder: Path) -> bool:
    try:
        return shutil.disk_usage(folder).free < 2**16
    except OSError:
        return False


def _busy(err: sqlite3.Error) -> bool:
    return str(getattr(err, "sqlite_errorname", "")).startswith(("SQLITE_BUSY", "SQLITE_LOCKED"))


class ResponseCache:
    """A persistent map from request key to response."""

    def __init__(self, path: Path, *, lock_wait: float = LOCK_WAIT) -> None:
        self.path = path
        self.lock_wait = lock_wait
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._writer = self._connect()
            self._writer.execute("PRAGMA journal_mode=WAL")
            self._writer.execute(_SCHEMA)
            self._reader = self._connect()
        except (OSError, sqlite3.Error) as err:
            reason = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
            if _disk_full(path.parent):
                reason += " (no space left on the device)"
            raise StorageError(f"response cache {path}: cannot be opened for writing: {reason}") from err
        self._reads = ThreadPoolExecutor(1, thread_name_prefix="cache-read")
        self._writes = ThreadPoolExecutor(1, thread_name_prefix="cache-write")
        self.hits = 0
        self.misses = 0
        self.unusable = 0
        """Stored entries that were not usable replies, read as misses (and replaced when answered again)."""

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=self.lock_wait, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA synchronous=NORMAL")
        return conn

    def get(self, key: str) -> Response | None:
        """The stored response, or None (entries other processes wrote since opening included)."""
        try:
            row = self._reader.execute("SELECT response FROM responses WHERE key = ?", (key,)).fetchone()
        except sqlite3.Error as err:
            raise CacheReadError(f"response cache {self.path} cannot be read: {_reason(err)}") from err
        response = None if row is None else _usable(row[0])
        if response is None:
            self.misses += 1
            self.unusable += row is not None
            return None
        self.hits += 1
        return response

    def put(self, key: str, model: str, request_fields: bytes, response: Response) -> None:
        """Store and commit at once (autocommit mode); ``request_fields`` is what the key hashes."""
        problem = unusable_reason(response)
        if problem is not None:
            raise ValueError(f"an unusable response is never cached: {problem}")
        row = (key, model, request_fields, redact(orjson.dumps(response.to_json()).decode()), time.time())
        try:
            self._writer.execute(_INSERT, row)
        except sqlite3.Error as err:
            why = f"locked by another process for over {self.lock_wait:g} s" if _busy(err) else _reason(err)
            raise CacheWriteError(f"response cache {self.path} cannot be written: {why}") from err

    async def aget(self, key: str) -> Response | None:
        """``get`` on the cache's read thread."""
        return await asyncio.get_running_loop().run_in_executor(self._reads, self.get, key)

    async def aput(self, key: str, model: str, request_fields: bytes, response: Response) -> None:
        """``put`` on the cache's write thread: the event loop goes on while it waits for a lock."""
        call = functools.partial(self.put, key, model, request_fields, response)
        await asyncio.get_running_loop().run_in_executor(self._writes, call)

    def count(self) -> int:
        """Number of stored responses (a full table scan: for tests and tools, not for every run)."""
        return int(self._reader.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def absorb(self, spill: Spill) -> int:
        """Store the responses a ``Spill`` file kept, then delete it; returns how many were stored."""
        rows = spill.read()
        for key, model, fields, response in rows:
            self.put(key, model, fields, response)
        spill.path.unlink()
        return len(rows)

    def close(self) -> None:
        """Finish pending writes, then close."""
        self._reads.shutdown(wait=True)
        self._writes.shutdown(wait=True)
        self._reader.close()
        self._writer.close()


def _usable(stored: str) -> Response | None:
    try:
        response = Response.from_json(orjson.loads(stored))
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
    return None if unusable_reason(response) is not None else response


class Spill:
    """Responses the cache could not store, as JSON lines in the run directory (``unsaved-responses.jsonl``).

    Each is written with one ``write`` and synced, so a paid answer survives a cache that failed; the
    next run with a writable cache adds them to it (``ResponseCache.absorb``)."""

    NAME = "unsaved-responses.jsonl"

    def __init__(self, run_dir: Path) -> None:
        self.path = run_dir / self.NAME
        self.kept = 0
        self.lost = 0
        """Responses that could not be written here either (the run directory failed too)."""

    def keep(self, key: str, model: str, request_fields: bytes, response: Response) -> bool:
        row = {"key": key, "model": model, "request": request_fields.decode(), "response": response.to_json()}
        line = redact(orjson.dumps(row).decode()).encode() + b"\n"
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                if os.write(fd, line) != len(line):
                    raise OSError("short write")
                os.fsync(fd)
            finally:
                os.close(fd)
        except OSError:
            self.lost += 1
            return False
        self.kept += 1
        return True

    def read(self) -> list[tuple[str, str, bytes, Response]]:
        """The kept responses; a torn last line (a crash mid-write) is skipped."""
        if not self.path.exists():
            return []
        rows = []
        for raw in self.path.read_bytes().split(b"\n"):
            try:
                row = orjson.loads(raw)
                response = Response.from_json(row["response"])
            except (ValueError, KeyError, TypeError):
                continue
            if unusable_reason(response) is None:
                rows.append((row["key"], row["model"], row["request"].encode(), response))
        return rows
