"""The ``sql`` tool over a whole SQLite database file (ClaimDB's), each query run in the sandbox.

A database of millions of rows is queried where it lies: the file is mounted read-only into a sandboxed program
(``sandbox.run_python``: no network, nothing of the host but the file, capped memory, CPU and wall time) that opens
it read-only and immutable, runs the one statement under an authorizer that allows reading and nothing else (no
``ATTACH``, no writing ``PRAGMA``, no temporary tables, no extension loading), stops it at the time limit, and
prints at most ``max_rows`` rows and their count. A huge cross join runs out of time or memory inside the sandbox,
never in the run's process; sorts that spill go to the sandbox's own directory (at most ``SPILL_MB``: in namespaces a
tmpfs, host memory), deleted after the call.

A query's result is kept in the process (a ``core.memo.Memo``) and given again without a sandbox when the same query is
asked of the same file (its identity: path, device, inode, size and modification time) under the same limits, if it
is known to be deterministic: it succeeded, and neither its text nor the database's schema (its views' and generated
columns' expressions) names a function whose value can change between two runs (``VOLATILE``: ``random()``, the
date and time functions, which read the clock for ``'now'``, ``changes()`` ...). An agent asks each claim's database
for its tables first: a run of many claims over few databases runs that query once per database.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from structbench.core.memo import Memo
from structbench.sandbox import Limits, NamespaceMode, run_python
from structbench.toolbox.base import (
    Tool,
    ToolLimits,
    ToolResult,
    clip,
    json_rows,
    past_memory,
    past_time,
    query_report,
    show_rows,
)

MARKER = "\x1estructbench-sql\x1e"
"""Precedes the program's one JSON line of results (anything else it printed is the engine's noise)."""
SPILL_MB = 1024
"""What a query's sorts may spill to the sandbox's directory, in MiB (its ``file_size_mb`` and ``disk_mb``)."""
VOLATILE = r"random|changes|last_insert_rowid|date|time|julianday|strftime|unixepoch|current_|now"
"""Text naming a function of SQLite whose value may differ between two runs of one query over one file (randomness,
the clock, the connection's counters); matched anywhere, case aside, so a column called ``birth_date`` counts too: a
query or schema that matches is run each time it is asked."""

PROGRAM = r"""
import json, re, sqlite3, sys, time

cfg = json.loads(sys.stdin.read())
deadline = time.monotonic() + cfg["seconds"]
READS = {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION, sqlite3.SQLITE_RECURSIVE}
DENIED_FUNCTIONS = {"load_extension", "fts3_tokenizer"}  # (a tokenizer's native address: one less for an exploit)
PRAGMAS = {"table_info", "table_xinfo", "table_list", "index_list", "index_info", "foreign_key_list"}


def authorize(action, arg1, arg2, db, trigger):
    if action in READS:
        return sqlite3.SQLITE_DENY if action == sqlite3.SQLITE_FUNCTION and (arg2 or "").lower() in DENIED_FUNCTIONS \
            else sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_PRAGMA and (arg1 or "").lower() in PRAGMAS:  # reading pragmas: no setting among them
        return sqlite3.SQLITE_OK
    return sqlite3.SQLITE_DENY


con = sqlite3.connect("file:database.sqlite?mode=ro&immutable=1", uri=True)
con.set_authorizer(authorize)
con.set_progress_handler(lambda: time.monotonic() > deadline, 20000)
out = {"columns": [], "rows": [], "total": 0, "volatile": True}
try:
    volatile = re.compile(cfg["volatile"], re.IGNORECASE)
    out["volatile"] = any(volatile.search(sql or "") for (sql,) in con.execute("SELECT sql FROM sqlite_master"))
    cursor = con.execute(cfg["query"])
    out["columns"] = [d[0] for d in cursor.description or ()]
    rows = cursor.fetchmany(cfg["max_rows"] + 1) if out["columns"] else []
    total = len(rows)
    if total > cfg["max_rows"]:
        while True:
            chunk = cursor.fetchmany(10000)
            if not chunk:
                break
            total += len(chunk)
    out["rows"] = [[v if isinstance(v, (int, float, str)) or v is None else repr(v) for v in r]
                   for r in rows[: cfg["max_rows"]]]
    out["total"] = total
except sqlite3.OperationalError as err:
    out["error"] = "interrupted" if str(err) == "interrupted" else str(err)
except (sqlite3.Error, sqlite3.Warning, ValueError) as err:
    out["error"] = str(err)
except MemoryError:
    out["error"] = "memory"
print(MARKER + json.dumps(out))
"""


class SqliteDatabase(Tool):
    """``sql`` over one SQLite database file, each query in its own sandboxed program."""

    kind = "sql"
    argument_description = "One SQLite SELECT statement over the database."

    def __init__(self, path: Path, limits: ToolLimits | None = None, namespaces: NamespaceMode = "auto", *,
                 name: str = "sql", argument: str = "query", description: str = "", argument_description: str = "",
                 json_rows: bool = False) -> None:
        self.path = Path(path)
        self.limits = limits or ToolLimits()
        self.namespaces = namespaces
        self.name, self.argument, self.description = name, argument, description
        self.argument_description = argument_description or self.argument_description
        self.json_rows = json_rows
        """Results as a JSON list of row objects (what MCP Toolbox's ``sqlite-execute-sql`` returns), else ``a | b``
        lines."""

    def run(self, argument: str) -> ToolResult:
        started = time.perf_counter()
        limits = self.limits
        key = self._memo_key(argument)
        out = _MEMO.get(key) if key is not None else None
        if out is None:
            found = self._query(argument, started)
            if isinstance(found, ToolResult):
                return found
            out = found
            if key is not None and not out.get("error") and out.get("volatile") is False:
                _MEMO.put(key, out)
        seconds = time.perf_counter() - started
        error = out.get("error")
        if error == "interrupted":
            return ToolResult.failed(past_time(limits), seconds)
        if error == "memory":
            return ToolResult.failed(past_memory(limits), seconds)
        if error:
            if "not authorized" in error:
                error = f"{error}: only reading queries are run (the database is read-only)"
            return ToolResult.failed(clip(error, 400)[0], seconds)
        text, cut = (json_rows(out["columns"], out["rows"], limits, out["total"]) if self.json_rows else
                     show_rows(out["columns"], out["rows"], False, limits, out["total"]))
        return ToolResult(text=text, seconds=seconds, rows=out["total"], truncated=cut)

    def _memo_key(self, argument: str) -> str | None:
        """What decides the query's result, hashed; None when the query's text names a ``VOLATILE`` function (or the
        file cannot be read: the sandbox says why)."""
        if re.search(VOLATILE, argument, re.IGNORECASE):
            return None
        try:
            real = os.path.realpath(self.path)
            stat = os.stat(real)
        except OSError:
            return None
        identity = [real, stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns]
        text = json.dumps([identity, argument, asdict(self.limits), self.namespaces])
        return hashlib.sha256(text.encode()).hexdigest()

    def _query(self, argument: str, started: float) -> dict[str, Any] | ToolResult:
        """The sandbox's result of the query (its columns, rows, total, error, whether the schema is volatile), or
        the failure the model is told of when the sandbox reported nothing."""
        limits = self.limits
        sandbox = Limits(cpu_seconds=max(1, int(-(-limits.seconds // 1))) + 1, wall_seconds=limits.seconds + 5,
                         memory_mb=limits.memory_mb, max_processes=1, file_size_mb=SPILL_MB,
                         disk_mb=SPILL_MB)
        config = {"query": argument, "seconds": limits.seconds, "max_rows": limits.max_rows, "volatile": VOLATILE}
        result = run_python(PROGRAM.replace("MARKER", repr(MARKER)), stdin=json.dumps(config), limits=sandbox,
                            mounts={"database.sqlite": os.fspath(self.path)}, namespaces=self.namespaces)
        out = query_report(result, MARKER, limits, sandbox.max_output_bytes)
        return ToolResult.failed(out, time.perf_counter() - started) if isinstance(out, str) else out


_MEMO: Memo[str, dict[str, Any]] = Memo(4096)
"""Deterministic queries' results by ``SqliteDatabase._memo_key``."""
