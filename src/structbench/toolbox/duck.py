"""The ``sql`` tool over a sample's tables: DuckDB, each of the model's queries run in the sandbox.

The tables are loaded with ``csvdb``'s typing and NULL rules (so a cell means the same as everywhere else in
structbench) into an in-memory connection, which shows the prompt its schema, and written once to a database file.
Each query of the model runs in a sandboxed program (``sandbox.run_python``: no network, nothing of the host but the
file, mounted read-only; capped address space, CPU and wall time) that opens the file read-only and closes the
connection to the world before it runs the query: external access off (``read_csv('/etc/passwd')``, ``COPY ...
TO``, ``ATTACH``, ``INSTALL``/``LOAD``, ``glob`` all fail), no spilling to a temporary directory, extensions neither
installed nor loaded, one thread, DuckDB's memory limit, and the configuration locked. Only a single ``SELECT``
statement is run (``DESCRIBE``, ``SHOW TABLES`` and CTEs are SELECTs to DuckDB); anything else is refused before it
runs. DuckDB's memory limit does not count a value built inside one expression (``repeat('a', 10**9)``), and its
interrupt is not checked while one is built: in the run's process such a query grew to 21 GB; in the sandbox it ends
at the address-space limit or the CPU limit, and the model is told so. About a quarter of a second a query.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from structbench.data.csvdb import SCHEMA, Database, load_rows, quote
from structbench.sandbox import Limits, NamespaceMode, run_python
from structbench.toolbox.base import (
    Tool,
    ToolLimits,
    ToolResult,
    clip,
    past_memory,
    past_time,
    query_report,
    show_rows,
)
from structbench.toolbox.tables import NamedTable

if TYPE_CHECKING:
    import duckdb  # imported where a connection is made: a run whose strategy has no SQL tool does without it

_PLAIN = re.compile(r"[a-z_][a-z0-9_]*")
SHOWN_ROWS = 3
"""Rows of each table the schema shows (the prompt never holds the whole table)."""
COUNT_CHUNK = 10_000
ENGINE_MB = 1024
"""Address space the sandboxed program needs beside DuckDB's memory limit (the interpreter and DuckDB's own)."""
MARKER = "\x1estructbench-duck\x1e"
"""Precedes the program's one JSON line of results."""

PROGRAM = r"""
import json, sys, threading
import duckdb

cfg = json.loads(sys.stdin.read())
con = duckdb.connect("tables.duckdb", read_only=True, config={
    "threads": 1, "memory_limit": f"{cfg['memory_mb']}MB", "temp_directory": "",
    "autoinstall_known_extensions": False, "autoload_known_extensions": False, "allow_community_extensions": False})
con.execute("SET default_null_order = 'nulls_last_on_asc_first_on_desc'")
con.execute(f"SET schema = '{cfg['schema']}'")
con.execute("SET max_temp_directory_size = '0B'")
con.execute("SET enable_external_access = false")
con.execute("SET lock_configuration = true")


def plain(value):
    if value is None or isinstance(value, (bool, int, float, str)):
        return value[: cfg["max_chars"]] if isinstance(value, str) else value
    if isinstance(value, (bytes, bytearray, memoryview)):
        return f"<{len(value)} bytes>"
    return str(value)[: cfg["max_chars"]]


timer = threading.Timer(cfg["seconds"], con.interrupt)
timer.start()
try:
    cursor = con.execute(cfg["query"])
    columns = [d[0] for d in cursor.description or ()]
    rows = cursor.fetchmany(cfg["max_rows"] + 1) if columns else []
    total = len(rows)
    if len(rows) > cfg["max_rows"]:
        while chunk := cursor.fetchmany(COUNT_CHUNK):
            total += len(chunk)
    out = {"columns": columns, "rows": [[plain(v) for v in row] for row in rows[: cfg["max_rows"]]], "total": total}
except duckdb.InterruptException:
    out = {"error": "interrupted"}
except duckdb.OutOfMemoryException:
    out = {"error": "memory"}
except duckdb.Error as err:
    out = {"error": "engine", "message": str(err)}
finally:
    timer.cancel()
print(MARKER + json.dumps(out))
"""


def _connection(limits: ToolLimits) -> duckdb.DuckDBPyConnection:
    """In memory, one thread, ``csvdb``'s schema and NULL order; no temporary directory, no extension loading."""
    import duckdb

    con = duckdb.connect(":memory:", config={
        "threads": 1,
        "memory_limit": f"{limits.memory_mb}MB",
        "temp_directory": "",
        "autoinstall_known_extensions": False,
        "autoload_known_extensions": False,
        "allow_community_extensions": False,
    })
    con.execute("SET default_null_order = 'nulls_last_on_asc_first_on_desc'")
    con.execute(f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}")
    con.execute(f"SET schema = '{SCHEMA}'")
    return con


def lock_down(con: duckdb.DuckDBPyConnection) -> None:
    """Close the connection to the file system and the network, and lock its configuration."""
    con.execute("SET max_temp_directory_size = '0B'")
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")


class DuckTables(Tool):
    """``sql`` over the given tables (``t``, or ``t1``, ``t2`` ...)."""

    kind = name = "sql"
    argument = "query"
    argument_description = "One SQL SELECT statement (DuckDB dialect) over the tables described in the prompt."

    def __init__(self, tables: Sequence[NamedTable], limits: ToolLimits | None = None,
                 namespaces: NamespaceMode = "auto") -> None:
        self.limits = limits or ToolLimits()
        self.namespaces = namespaces
        self.tables = list(tables)
        self.db = Database(key="tools", connection=_connection(self.limits))
        for table in self.tables:
            load_rows(self.db, table.name, table.header, table.rows)
        self._folder = Path(tempfile.mkdtemp(prefix="structbench-duck-"))
        self._folder.chmod(0o755)  # the sandbox's uid reads the file in place
        self.file = self._folder / "tables.duckdb"
        con = self.db.connection
        con.execute(f"ATTACH {_sql_text(str(self.file))} AS disk")
        con.execute("COPY FROM DATABASE memory TO disk")
        con.execute("DETACH disk")
        self.file.chmod(0o644)
        lock_down(con)
        self._lock = threading.Lock()

    def schema(self) -> str:
        """Each table's columns with their types, its row count and its first rows: what the prompt shows."""
        parts = []
        for table in self.tables:
            columns = self.db.tables[table.name]
            line = f"Table {table.name}({', '.join(f'{sql_name(c)} {t}' for c, t in columns.items())}): " \
                   f"{len(table.rows)} rows"
            if table.title:
                line = f"{line}. Caption: {table.title}"
            head, _ = show_rows(list(columns), [tuple(r) for r in self.db.execute(
                f"SELECT * FROM {SCHEMA}.{quote(table.name)} LIMIT {SHOWN_ROWS}")[2]], False,
                ToolLimits(max_rows=SHOWN_ROWS, max_chars=2000))
            parts.append(f"{line}. First rows:\n{head.rsplit(chr(10), 1)[0]}")
        return "\n\n".join(parts)

    def run(self, argument: str) -> ToolResult:
        started = time.perf_counter()
        refusal = refuse(self.db.connection, argument)
        if refusal:
            return ToolResult.failed(refusal, time.perf_counter() - started)
        with self._lock:
            return self._run(argument, started)

    def _run(self, query: str, started: float) -> ToolResult:
        out = self._query(query)
        seconds = time.perf_counter() - started
        if isinstance(out, str):
            return ToolResult.failed(out, seconds)
        error = out.get("error")
        if error is not None:
            return ToolResult.failed(self._failure(str(error), str(out.get("message", ""))), seconds)
        columns, rows, total = list(out["columns"]), [list(r) for r in out["rows"]], int(out["total"])
        text, cut = show_rows(columns, rows, False, self.limits, total)
        return ToolResult(text=text, seconds=seconds, rows=total, truncated=cut)

    def _query(self, query: str) -> dict[str, Any] | str:
        """The sandboxed program's result of ``query``, or why there is none (what the model is told)."""
        limits = self.limits
        sandbox = Limits(cpu_seconds=max(1, int(-(-limits.seconds // 1))) + 1, wall_seconds=limits.seconds + 5,
                         memory_mb=limits.memory_mb + ENGINE_MB, max_processes=16, file_size_mb=1)
        config = {"query": query, "seconds": limits.seconds, "max_rows": limits.max_rows,
                  "max_chars": limits.max_chars, "memory_mb": limits.memory_mb, "schema": SCHEMA}
        result = run_python(PROGRAM.replace("MARKER", repr(MARKER)).replace("COUNT_CHUNK", str(COUNT_CHUNK)),
                            stdin=json.dumps(config), limits=sandbox, libraries=("duckdb",),
                            mounts={"tables.duckdb": os.fspath(self.file)}, namespaces=self.namespaces)
        return query_report(result, MARKER, limits, sandbox.max_output_bytes)

    def _failure(self, kind: str, message: str) -> str:
        """What the model is told of a query the program could not finish."""
        if kind == "interrupted":
            return past_time(self.limits)
        if kind == "memory":
            return past_memory(self.limits)
        return _first_lines(message)

    def close(self) -> None:
        self.db.connection.close()
        shutil.rmtree(self._folder, ignore_errors=True)


def _sql_text(text: str) -> str:
    """``text`` as an SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def sql_name(name: str) -> str:
    """A column as a query names it: bare when it is a plain identifier, else double-quoted."""
    return name if _PLAIN.fullmatch(name) else quote(name)


MAX_QUERY_CHARS = 100_000
"""The longest query the tool parses: DuckDB's parser builds a query's whole tree in this process before any limit
applies (a 10 MB query of nested subqueries took 4 GB)."""


def refuse(con: duckdb.DuckDBPyConnection, query: str) -> str | None:
    """Why ``query`` is not run (too long, not exactly one SELECT statement, or unparsable), or None."""
    import duckdb

    if len(query) > MAX_QUERY_CHARS:
        return f"the query has {len(query):,} characters; at most {MAX_QUERY_CHARS:,} are read"
    try:
        statements = con.extract_statements(query)
    except duckdb.Error as err:
        return _first_lines(str(err))
    if len(statements) != 1:
        return f"send exactly one SQL statement per call (this has {len(statements)})"
    kind = statements[0].type
    if kind != duckdb.StatementType.SELECT:
        return f"only SELECT queries are run, not {kind.name} statements (the data is read-only)"
    return None


def _first_lines(message: str, limit: int = 400) -> str:
    """An engine's error as one short line (DuckDB's carry a caret diagram below the first lines)."""
    head = " ".join(line.strip() for line in message.splitlines()[:2] if line.strip())
    return clip(head, limit)[0]
