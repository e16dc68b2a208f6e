"""The ``sql`` tool over a sample's tables: DuckDB in memory, locked down before the model's first query.

The tables are loaded with ``csvdb``'s typing and NULL rules (so a cell means the same as everywhere else in
structbench), then the connection is closed to the world: external access off (no file is read or written:
``read_csv('/etc/passwd')``, ``COPY ... TO``, ``ATTACH``, ``INSTALL``/``LOAD``, ``glob`` all fail), no spilling to a
temporary directory, extensions neither installed nor loaded, one thread, a memory limit, and the configuration
locked (``SET`` cannot undo any of it). Only a single ``SELECT`` statement is run (``DESCRIBE``, ``SHOW TABLES`` and
CTEs are SELECTs to DuckDB); anything else is refused before it runs. A query past the time limit is interrupted.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from structbench.data.csvdb import SCHEMA, Database, load_rows, quote
from structbench.toolbox.base import Tool, ToolLimits, ToolResult, clip, show_rows
from structbench.toolbox.tables import NamedTable

if TYPE_CHECKING:
    import duckdb  # imported where a connection is made: a run whose strategy has no SQL tool does without it

_PLAIN = re.compile(r"[a-z_][a-z0-9_]*")
SHOWN_ROWS = 3
"""Rows of each table the schema shows (the prompt never holds the whole table)."""
COUNT_CHUNK = 10_000


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

    def __init__(self, tables: Sequence[NamedTable], limits: ToolLimits | None = None) -> None:
        self.limits = limits or ToolLimits()
        self.tables = list(tables)
        self.db = Database(key="tools", connection=_connection(self.limits))
        for table in self.tables:
            load_rows(self.db, table.name, table.header, table.rows)
        lock_down(self.db.connection)
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
        import duckdb

        con = self.db.connection
        timer = threading.Timer(self.limits.seconds, con.interrupt)
        timer.start()
        try:
            cursor = con.execute(query)
            columns = [d[0] for d in cursor.description or ()]
            rows = cursor.fetchmany(self.limits.max_rows + 1) if columns else []
            total = len(rows)
            if len(rows) > self.limits.max_rows:
                while chunk := cursor.fetchmany(COUNT_CHUNK):
                    total += len(chunk)
        except duckdb.InterruptException:
            return ToolResult.failed(f"the query ran past the {self.limits.seconds:g} s limit and was stopped",
                                     time.perf_counter() - started)
        except duckdb.OutOfMemoryException:
            return ToolResult.failed(f"the query needs more than the {self.limits.memory_mb} MiB it may use",
                                     time.perf_counter() - started)
        except duckdb.Error as err:
            return ToolResult.failed(_first_lines(str(err)), time.perf_counter() - started)
        finally:
            timer.cancel()
            timer.join()
        text, cut = show_rows(columns, rows, False, self.limits, total)
        return ToolResult(text=text, seconds=time.perf_counter() - started, rows=total, truncated=cut)

    def close(self) -> None:
        self.db.connection.close()


def sql_name(name: str) -> str:
    """A column as a query names it: bare when it is a plain identifier, else double-quoted."""
    return name if _PLAIN.fullmatch(name) else quote(name)


def refuse(con: duckdb.DuckDBPyConnection, query: str) -> str | None:
    """Why ``query`` is not run (not exactly one SELECT statement, or unparsable), or None."""
    import duckdb

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
