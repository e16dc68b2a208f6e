"""Gold tables by execution: run every query on its database and check the annotated tuple count.

The release stores no gold tables; the expected answer of a query is the result of its SQL over its
source database. ``execute_gold`` runs one; the benchmark's ``GoldReport`` accounts for
every query: ``ok``, ``count_mismatch`` (executed, but the row count differs from the CSV's
``tuples``), ``missing_table`` (a table file the query reads is absent from the release) or
``error`` (the SQL failed); ``unchecked`` is only for generated items whose tables are not at hand
(``generated.py``). Nothing is dropped silently: the benchmark excludes the queries without a
gold table and records why.
"""

from __future__ import annotations

import datetime as dt
import decimal
from collections import Counter
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import duckdb
from sqlglot.errors import SqlglotError

from structbench.benchmarks.rfqa.database import NUMERIC_TYPES, DatabaseCache
from structbench.benchmarks.rfqa.engine import output_columns, referenced_tables, to_duckdb
from structbench.benchmarks.rfqa.queries import Query
from structbench.core.errors import DataError


class GoldStatus(StrEnum):
    """What happened when computing a query's gold table."""

    OK = "ok"
    COUNT_MISMATCH = "count_mismatch"
    MISSING_TABLE = "missing_table"
    ERROR = "error"
    UNCHECKED = "unchecked"
    """``generated`` items read from JSONL whose source tables are not at hand: gold from the file."""


@dataclass
class GoldTable:
    """An executed result: PostgreSQL-style column names, DuckDB column types and JSON-able rows."""

    columns: list[str]
    types: list[str]
    rows: list[list[Any]]

    @property
    def numeric_columns(self) -> list[bool]:
        """Per column, whether its type is numeric."""
        return [t.split("(")[0].upper() in NUMERIC_TYPES for t in self.types]


@dataclass
class GoldResult:
    """The outcome for one query."""

    qid: str
    status: GoldStatus
    expected_tuples: int | None
    """The ``tuples`` annotation in the release."""
    tuples: int | None = None
    """Rows returned by the execution (None when it did not run)."""
    reason: str = ""
    table: GoldTable | None = None


@dataclass
class GoldReport:
    """Every query's outcome, in file order."""

    results: list[GoldResult] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        """Number of queries per status (all statuses present, zeros included)."""
        c = Counter(r.status.value for r in self.results)
        return {s.value: c.get(s.value, 0) for s in GoldStatus}

    def problems(self) -> list[GoldResult]:
        """Every result that is not ``ok``."""
        return [r for r in self.results if r.status is not GoldStatus.OK]

    def by_id(self) -> dict[str, GoldResult]:
        return {r.qid: r for r in self.results}

    def to_json(self) -> dict[str, Any]:
        """A JSON-able summary: the counts and each problem with its reason."""
        return {
            "counts": self.counts(),
            "problems": [
                {
                    "qid": r.qid,
                    "status": r.status.value,
                    "expected_tuples": r.expected_tuples,
                    "tuples": r.tuples,
                    "reason": r.reason,
                }
                for r in self.problems()
            ],
        }


def json_value(value: Any) -> Any:
    """A database value as a JSON-able Python value."""
    kind = type(value)
    if kind is str or kind is int or value is None:  # most cells (every cell of a CoT oracle's base rows comes here)
        return value
    if isinstance(value, decimal.Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dt.date | dt.datetime | dt.time):
        return value.isoformat()
    if isinstance(value, float) and value != value:
        return None
    return value


def execute_gold(query: Query, cache: DatabaseCache) -> GoldResult:
    """Run one query and compare its row count with the annotation."""
    try:
        tables = referenced_tables(query.sql)
    except SqlglotError as err:
        return GoldResult(query.qid, GoldStatus.ERROR, query.tuples, reason=f"SQL does not parse: {err}")
    missing = [t for t in tables if not cache.table_exists(query.dataset, query.db_id, t)]
    if missing:
        return GoldResult(
            query.qid,
            GoldStatus.MISSING_TABLE,
            query.tuples,
            reason="table file(s) absent from the release: "
            + ", ".join(f"{query.dataset}/{query.db_id}/{t}.csv" for t in missing),
        )
    try:
        db = cache.get(query.dataset, query.db_id)
        names, types, rows = db.execute(to_duckdb(query.sql, db.tables))
    except (duckdb.Error, SqlglotError, DataError) as err:
        return GoldResult(query.qid, GoldStatus.ERROR, query.tuples, reason=f"execution failed: {err}")
    pg_names = output_columns(query.sql)
    columns = pg_names if pg_names is not None and len(pg_names) == len(names) else [n.lower() for n in names]
    table = GoldTable(columns=columns, types=types, rows=[[json_value(v) for v in row] for row in rows])
    if query.tuples is not None and len(rows) != query.tuples:
        return GoldResult(
            query.qid,
            GoldStatus.COUNT_MISMATCH,
            query.tuples,
            tuples=len(rows),
            reason=f"executed {len(rows)} row(s), the release annotates {query.tuples}",
            table=table,
        )
    return GoldResult(query.qid, GoldStatus.OK, query.tuples, tuples=len(rows), table=table)
