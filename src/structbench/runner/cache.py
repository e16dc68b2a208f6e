"""The response cache: SQLite in WAL mode, keyed by ``backends.base.cache_key``.

Each response is committed as soon as it arrives and before the strategy sees it, so a response that was used is
never lost to a crash or ``kill -9`` (WAL with ``synchronous=NORMAL`` survives process death; only an OS crash can
lose the last commits). An answer the run paid for is stored with the session that paid and its call's line in the
run's spend log (``runner.spending.Paid``): a later session of that run adds back the lines a crash of the machine
took from the log (``paid_lines``, ``runner.spending.restore``), so the commit need not wait for the log's sync.
``aget`` and ``aput`` never make the event loop wait for a lock. The lookups, and the responses to store, that come
in one turn of the event loop go together: at the end of the turn, one read transaction looks them all up, and one
transaction commits them all (a wave of replies is one commit and one lock, not one each, #44). Each batch is first
tried on a connection that does not wait (a lookup in WAL mode, or a commit while no other connection holds the
write lock: tens of microseconds, where handing it to a thread and back cost several times that in CPU), and goes to
a thread of its own when SQLite says it would have to wait (another process holding the write lock delays this
process's writes, never its requests); what comes while that thread is busy goes in its next batch. Other processes
may read and write the same file; SQLite serializes them, and a write waits up to ``lock_wait`` seconds for the lock
before it counts as failed.

Only usable responses are stored, and an entry that is not usable (written by an older version) reads as a miss, so
a bad reply can never become permanent. Responses that could not be stored are kept in a ``Spill`` file in the run
directory and added to the cache by the next run that can write it."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import shutil
import sqlite3
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar

import orjson

from structbench.backends.base import Response, unusable_reason
from structbench.core.errors import StorageError
from structbench.core.redact import redact

if TYPE_CHECKING:
    from structbench.runner.spending import Paid

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    request BLOB NOT NULL,
    response TEXT NOT NULL,
    created REAL NOT NULL,
    paid_by TEXT,
    paid_line BLOB
)
"""
_PAID_COLUMNS = {"paid_by": "TEXT", "paid_line": "BLOB"}
"""Who paid for an answer (``runner.spending.Paid``), added to a cache an older structbench made."""
_PAID_INDEX = "CREATE INDEX IF NOT EXISTS responses_paid_by ON responses (paid_by) WHERE paid_by IS NOT NULL"
T = TypeVar("T")
R = TypeVar("R")
_INSERT = ("INSERT OR REPLACE INTO responses (key, model, request, response, created, paid_by, paid_line) "
           "VALUES (?, ?, ?, ?, ?, ?, ?)")

CHECKPOINT_BYTES = 4 * 2**20
"""Bytes of responses committed on the event loop's connection between two checkpoints, which the write thread runs:
that connection never checkpoints itself, so the event loop never copies the WAL into the database nor syncs it."""
LOCK_WAIT = 300.0
"""Seconds a cache write waits for another process's write lock before it counts as a storage failure."""


_Row = tuple[str, str, bytes, str, float, str | None, bytes | None]
"""A response as the cache stores it: key, model, request fields, the response's JSON (redacted), when, the session
that paid for it and its call's line in that run's spend log (None, None: not known)."""


def _row(key: str, model: str, request_fields: bytes, response: Response, paid: Paid | None = None) -> _Row:
    """``response`` as stored; a ``ValueError`` for an unusable one, which is never cached."""
    problem = unusable_reason(response)
    if problem is not None:
        raise ValueError(f"an unusable response is never cached: {problem}")
    return (key, model, request_fields, redact(orjson.dumps(response.to_json()).decode()), time.time(),
            None if paid is None else paid.payer, None if paid is None else paid.line)


class _WouldWait(Exception):
    """SQLite would have had to wait for a lock (the event loop's connection never does)."""


class ResponseStore(Protocol):
    """What a model caller needs of a response cache: this file's ``ResponseCache``, or a Ray worker's view of
    the run machine's cache (``runner.cluster``)."""

    hits: int

    async def aget(self, key: str) -> Response | None: ...

    async def aput(self, key: str, model: str, request_fields: bytes, response: Response,
                   paid: Paid | None = None) -> None: ...


class CacheReadError(StorageError):
    """The response cache could not be read."""


class CacheWriteError(StorageError):
    """The response cache could not store a response (read-only, disk full, locked too long)."""


def _reason(err: sqlite3.Error) -> str:
    name = getattr(err, "sqlite_errorname", "")
    return f"{err} ({name})" if name else str(err)


def _disk_full(folder: Path) -> bool:
    """Whether ``folder``'s file system is (nearly) full; not one that reports no size at all (``/proc``)."""
    try:
        usage = shutil.disk_usage(folder)
    except OSError:
        return False
    return usage.total > 0 and usage.free < 2**16


def _add_paid_columns(conn: sqlite3.Connection) -> None:
    """Add the columns of who paid for an answer, and their index, to a cache an older structbench made (another
    process may add them at the same moment)."""
    have = {row[1] for row in conn.execute("PRAGMA table_info(responses)")}
    for name, kind in _PAID_COLUMNS.items():
        if name not in have:
            try:
                conn.execute(f"ALTER TABLE responses ADD COLUMN {name} {kind}")
            except sqlite3.OperationalError as err:
                if "duplicate column" not in str(err):
                    raise
    conn.execute(_PAID_INDEX)


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
            _add_paid_columns(self._writer)
            self._reader = self._connect()
            self._now = self._connect(wait=False)
            """The event loop's connection: it never waits for a lock (``aget``, ``aput``), nor checkpoints."""
            self._now.execute("PRAGMA wal_autocheckpoint=0")
        except (OSError, sqlite3.Error) as err:
            reason = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
            if _disk_full(path.parent):
                reason += " (no space left on the device)"
            raise StorageError(f"response cache {path}: cannot be opened for writing: {reason}") from err
        self._reads = ThreadPoolExecutor(1, thread_name_prefix="cache-read")
        self._writes = ThreadPoolExecutor(1, thread_name_prefix="cache-write")
        self._read_batch: _Batches[str, Response | None] = _Batches(self._reads, self.get_many, now=self._get_now)
        self._write_batch: _Batches[_Row, None] = _Batches(self._writes, self._commit, now=self._put_now)
        self.hits = 0
        self._closed = False
        self._unchecked = 0
        """Bytes committed on the event loop's connection since the last checkpoint was asked of the write thread."""

    def _connect(self, *, wait: bool = True) -> sqlite3.Connection:
        timeout = self.lock_wait if wait else 0.0
        conn = sqlite3.connect(self.path, timeout=timeout, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA synchronous=NORMAL")
        return conn

    def get(self, key: str) -> Response | None:
        """The stored response, or None (entries other processes wrote since opening included)."""
        return self._counted(self._get(self._reader, key))

    def _counted(self, response: Response | None) -> Response | None:
        self.hits += response is not None
        return response

    def _get(self, conn: sqlite3.Connection, key: str) -> Response | None:
        """The stored response (not yet counted as a hit: a batch may be looked up again on the thread)."""
        try:
            row = conn.execute("SELECT response FROM responses WHERE key = ?", (key,)).fetchone()
        except sqlite3.Error as err:
            if conn is self._now and _busy(err):
                raise _WouldWait from err
            raise CacheReadError(f"response cache {self.path} cannot be read: {_reason(err)}") from err
        return None if row is None else _usable(row[0])

    def get_many(self, keys: list[str]) -> list[Response | None]:
        """``get`` for each key (one read thread turn for a burst of lookups)."""
        return [self.get(key) for key in keys]

    def put(self, key: str, model: str, request_fields: bytes, response: Response) -> None:
        """Store and commit at once (autocommit mode); ``request_fields`` is what the key hashes."""
        self.put_many([(key, model, request_fields, response)])

    def put_many(self, rows: list[tuple[str, str, bytes, Response]]) -> None:
        """Store and commit several responses in one transaction (all or none)."""
        self._commit([_row(*row) for row in rows])

    def _commit(self, values: list[_Row]) -> None:
        self._put(self._writer, values)

    def _put(self, conn: sqlite3.Connection, values: list[_Row]) -> int:
        """Store and commit ``values`` on ``conn``; returns the bytes of the responses stored."""
        try:
            if len(values) == 1:
                conn.execute(_INSERT, values[0])
                return len(values[0][3])
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.executemany(_INSERT, values)
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            return sum(len(v[3]) for v in values)
        except sqlite3.Error as err:
            if conn is self._now and _busy(err):
                raise _WouldWait from err
            why = f"locked by another process for over {self.lock_wait:g} s" if _busy(err) else _reason(err)
            raise CacheWriteError(f"response cache {self.path} cannot be written: {why}") from err

    async def aget(self, key: str) -> Response | None:
        """``get``, with the other lookups of this turn of the event loop: on the loop where SQLite need not wait, else
        on the cache's read thread."""
        return await self._read_batch.submit(key)

    def _get_now(self, keys: list[str]) -> list[Response | None]:
        """``get_many`` on the event loop's connection, in one read transaction; raises ``_WouldWait`` where SQLite
        would wait (nothing counted then: the thread looks them up)."""
        if self._closed:
            raise _WouldWait
        conn = self._now
        try:
            if len(keys) == 1:
                found = [self._get(conn, keys[0])]
            else:
                conn.execute("BEGIN")
                try:
                    found = [self._get(conn, key) for key in keys]
                finally:
                    if conn.in_transaction:
                        conn.execute("COMMIT")
        except sqlite3.Error as err:  # beginning or ending the read transaction (``_get`` raises its own errors)
            if _busy(err):
                raise _WouldWait from err
            raise CacheReadError(f"response cache {self.path} cannot be read: {_reason(err)}") from err
        return [self._counted(response) for response in found]

    async def aput(self, key: str, model: str, request_fields: bytes, response: Response,
                   paid: Paid | None = None) -> None:
        """``put`` (with who ``paid`` for the answer), returning once committed, in one transaction with the other
        responses stored in this turn of the event loop (group commit): on the loop where no other connection holds
        the write lock, else on the cache's write thread, where the event loop goes on while it waits for the lock and
        responses that arrive meanwhile are committed together next."""
        row = _row(key, model, request_fields, response, paid)  # one that cannot be written fails alone, not its batch
        await self._write_batch.submit(row)

    def _put_now(self, rows: list[_Row]) -> list[None]:
        """``_commit`` on the event loop's connection; raises ``_WouldWait`` where SQLite would wait for the lock."""
        if self._closed:
            raise _WouldWait
        self._unchecked += self._put(self._now, rows)
        if self._unchecked >= CHECKPOINT_BYTES:
            self._unchecked = 0
            with contextlib.suppress(RuntimeError):  # shut down: the last connection closed checkpoints
                self._writes.submit(self._checkpoint)
        return [None] * len(rows)

    def _checkpoint(self) -> None:
        """Copy the WAL into the database as far as no reader needs it (on the write thread; never waits)."""
        with contextlib.suppress(sqlite3.Error):  # a failed checkpoint leaves the WAL longer, nothing lost
            self._writer.execute("PRAGMA wal_checkpoint(PASSIVE)")

    def paid_lines(self, payers: list[str]) -> list[tuple[str, bytes]]:
        """The key and spend-log line of each answer these sessions (``Session.id``) paid for
        (``runner.spending.restore``)."""
        rows = []
        for start in range(0, len(payers), 500):  # (an older SQLite takes at most 999 parameters)
            part = payers[start:start + 500]
            marks = ", ".join("?" * len(part))
            try:
                rows += self._reader.execute(
                    f"SELECT key, paid_line FROM responses WHERE paid_by IN ({marks}) AND paid_line IS NOT NULL",
                    part).fetchall()
            except sqlite3.Error as err:
                raise CacheReadError(f"response cache {self.path} cannot be read: {_reason(err)}") from err
        return [(key, line.encode() if isinstance(line, str) else line) for key, line in rows
                if isinstance(key, str) and isinstance(line, bytes | str)]  # (a value of another type: not one)

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

    async def drain(self) -> None:
        """Wait until every read and write handed over so far has run, also those whose caller stopped waiting
        (a task cancelled by a halt): an answer on its way into the cache is never dropped at the end of a loop."""
        await self._write_batch.drain()
        await self._read_batch.drain()

    def close(self) -> None:
        """Finish pending writes, then close (after ``drain`` when an event loop handed them over)."""
        self._closed = True
        self._reads.shutdown(wait=True)
        self._writes.shutdown(wait=True)
        self._reader.close()
        self._writer.close()
        self._now.close()


class _Batches(Generic[T, R]):
    """Items gathered over one turn of the event loop and run together: by ``now`` on the loop itself, else (it raised
    ``_WouldWait``) by ``work`` on one worker thread. One batch runs at a time, and whatever arrives meanwhile goes in
    the next. A batch that raises fails each of its items with that exception."""

    def __init__(self, executor: ThreadPoolExecutor, work: Callable[[list[T]], list[R] | None],
                 now: Callable[[list[T]], list[R]] | None = None) -> None:
        self.executor = executor
        self.work = work
        self.now = now
        self._waiting: list[tuple[T, asyncio.Future[R]]] = []
        self._busy = False
        self._idle: asyncio.Event | None = None
        """Set once the batches started since the last idle moment have all run."""

    async def submit(self, item: T) -> R:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[R] = loop.create_future()
        self._waiting.append((item, future))
        if not self._busy:
            self._busy = True
            self._idle = asyncio.Event()  # a new one each time: an event stays bound to the loop that waited on it
            loop.call_soon(self._start, loop)  # later in this turn of the loop: take every item it brings
        return await future

    @property
    def busy(self) -> bool:
        """A batch is running or waiting to (its items wait for it)."""
        return self._busy

    async def drain(self) -> None:
        """Return once every item submitted so far has been run."""
        if self._busy and self._idle is not None:
            await self._idle.wait()

    def _start(self, loop: asyncio.AbstractEventLoop) -> None:
        batch, self._waiting = self._waiting, []
        items = [item for item, _ in batch]
        if self.now is not None:
            try:
                results = self.now(items)
            except _WouldWait:
                pass  # to the thread
            except BaseException as err:  # its callers fail with it; none is left waiting, nor the batch busy
                self._done(loop, batch, None, err)
                if not isinstance(err, Exception):
                    raise  # Ctrl-C inside SQLite: out of the loop, as anywhere else
                return
            else:
                self._done(loop, batch, results, None)
                return
        try:
            done = loop.run_in_executor(self.executor, self.work, items)
        except RuntimeError as err:  # the executor was shut down: say so to whoever still waits
            for _, future in batch:
                if not future.done():
                    future.set_exception(err)
            self._stop()
            return
        done.add_done_callback(functools.partial(self._settle, loop, batch))

    def _stop(self) -> None:
        self._busy = False
        if self._idle is not None:
            self._idle.set()

    def _settle(self, loop: asyncio.AbstractEventLoop, batch: list[tuple[T, asyncio.Future[R]]],
                done: asyncio.Future[list[R] | None]) -> None:
        if done.cancelled():
            for _, future in batch:
                future.cancel()
        error = None if done.cancelled() else done.exception()
        self._done(loop, batch, None if error is not None or done.cancelled() else done.result(), error)

    def _done(self, loop: asyncio.AbstractEventLoop, batch: list[tuple[T, asyncio.Future[R]]],
              results: list[R] | None, error: BaseException | None) -> None:
        """Settle the batch's callers that still wait, then start the next batch if items came meanwhile."""
        for i, (_, future) in enumerate(batch):
            if future.done():
                continue
            if error is not None:
                future.set_exception(error)
            else:
                future.set_result(results[i] if results is not None else None)  # type: ignore[arg-type]
        if self._waiting:
            self._start(loop)
        else:
            self._stop()


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
