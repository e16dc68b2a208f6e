"""The response cache: SQLite in WAL mode with one writer, keyed by ``backends.base.cache_key``.

Writes happen on the event-loop thread right after a response arrives and before the strategy sees
it, each in its own committed transaction, so a response that was used is never lost to a crash or
``kill -9`` (WAL with ``synchronous=NORMAL`` survives process death; only an OS crash can lose the last
commits). Other processes may read and write the same file; SQLite serializes them with a busy timeout.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import orjson

from structbench.backends.base import Response
from structbench.errors import UsageError

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    request BLOB NOT NULL,
    response TEXT NOT NULL,
    created REAL NOT NULL
)
"""


class ResponseCache:
    """A persistent map from request key to response."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(path, timeout=30.0, isolation_level=None, check_same_thread=False)
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.execute(_SCHEMA)
        except (OSError, sqlite3.Error) as err:
            raise UsageError(f"response cache {path}: {err}") from err
        self.hits = 0
        self.misses = 0

    def get(self, key: str) -> Response | None:
        """The stored response, or None (entries other processes wrote since opening included)."""
        row = self._conn.execute("SELECT response FROM responses WHERE key = ?", (key,)).fetchone()
        if row is None:
            self.misses += 1
            return None
        self.hits += 1
        return Response.from_json(orjson.loads(row[0]))

    def put(self, key: str, model: str, request_fields: bytes, response: Response) -> None:
        """Store and commit at once (autocommit mode), before the caller uses the response.

        ``request_fields`` is the canonical JSON the key hashes (``backends.base.cache_fields``)."""
        self._conn.execute(
            "INSERT OR REPLACE INTO responses (key, model, request, response, created) VALUES (?, ?, ?, ?, ?)",
            (key, model, request_fields, orjson.dumps(response.to_json()).decode(), time.time()),
        )

    def __len__(self) -> int:
        return int(self._conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        self._conn.close()
