"""Run RFQA's PostgreSQL queries on DuckDB with PostgreSQL semantics.

DuckDB already behaves like PostgreSQL where RFQA's queries need it: identifiers are
case-insensitive, string comparison and ``LIKE`` are case-sensitive, a quoted literal compared with a
typed column is cast to the column's type (``int_col = '1'`` matches 1), and comparing a text column
with a bare number is refused or fails (PostgreSQL refuses it too). The one difference is ``/``:
PostgreSQL divides integers as integers (``7 / 2 = 3``), DuckDB returns 3.5. Queries containing a
division are therefore typed with sqlglot against the database schema, and every division whose two
operands are integers is rewritten to DuckDB's integer division ``//``.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.annotate_types import annotate_types
from sqlglot.optimizer.qualify import qualify

from structbench.benchmarks.rfqa.database import SCHEMA

Schema = Mapping[str, Mapping[str, str]]
"""Table -> column -> DuckDB type."""

INTEGER_TYPES = frozenset(
    {exp.DataType.Type.INT, exp.DataType.Type.BIGINT, exp.DataType.Type.SMALLINT, exp.DataType.Type.TINYINT}
)


@lru_cache(maxsize=4096)
def _parsed(sql: str) -> exp.Expr:
    tree = sqlglot.parse_one(sql.strip().rstrip(";"), read="postgres")
    for table in tree.find_all(exp.Table):
        if table.db.lower() == SCHEMA:
            table.set("db", None)
    return tree


def parse(sql: str) -> exp.Expr:
    """Parse one PostgreSQL query (a fresh tree each call; parses are cached); the ``target.``
    schema qualifier is dropped (it is the default schema)."""
    return _parsed(sql).copy()


def parsed(sql: str) -> exp.Expr:
    """The cached parse of ``sql`` itself, not a copy: for a caller that only reads it (a copy of a large query's
    tree costs more than reading it, and loading reads each query's several times)."""
    return _parsed(sql)


def referenced_tables(sql: str) -> list[str]:
    """Base tables the query reads (lower case, CTE names excluded), in order of appearance."""
    return list(_referenced_tables(sql))


@lru_cache(maxsize=4096)
def _referenced_tables(sql: str) -> tuple[str, ...]:
    """``referenced_tables``, kept per query (loading asks it four times a query)."""
    tree = parsed(sql)
    ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
    names: list[str] = []
    for table in tree.find_all(exp.Table):
        name = table.name.lower()
        if name and name not in ctes and name not in names:
            names.append(name)
    return tuple(names)


def _has_integer_type(node: exp.Expr) -> bool:
    return node.type is not None and node.type.this in INTEGER_TYPES


def to_duckdb(sql: str, schema: Schema) -> str:
    """The DuckDB text of a PostgreSQL query: unchanged unless it divides, else with ``//`` for ints."""
    if "/" not in sql:
        return sql.strip().rstrip(";")
    tree = parse(sql)
    if not tree.find(exp.Div):
        return sql.strip().rstrip(";")
    sg_schema: dict[str, object] = {t: dict(cols) for t, cols in schema.items()}
    try:
        qualified = qualify(tree, schema=sg_schema, dialect="postgres", quote_identifiers=False)
        typed = annotate_types(qualified, schema=sg_schema)
    except SqlglotError:
        typed = annotate_types(tree)
    for div in list(typed.find_all(exp.Div)):
        if _has_integer_type(div.this) and _has_integer_type(div.expression):
            div.replace(exp.IntDiv(this=div.this.copy(), expression=div.expression.copy()))
    return typed.sql(dialect="duckdb")


def _postgres_name(projection: exp.Expr) -> str:
    if isinstance(projection, exp.Alias):
        return projection.alias
    if isinstance(projection, exp.Column):
        return projection.name
    if isinstance(projection, exp.Func):
        return projection.sql_name().lower()
    return "?column?"


def output_columns(sql: str) -> list[str] | None:
    """The names PostgreSQL gives the query's output columns (alias, column, function name or
    ``?column?``), made unique with ``_2``, ``_3`` ... suffixes; None when the query selects ``*``."""
    tree = parsed(sql)
    if not isinstance(tree, exp.Query):
        return None
    names: list[str] = []
    for projection in tree.selects:
        if isinstance(projection, exp.Star) or (
            isinstance(projection, exp.Column) and isinstance(projection.this, exp.Star)
        ):
            return None
        base = _postgres_name(projection).lower() if not _is_quoted(projection) else _postgres_name(projection)
        name, n = base, 1
        while name in names:
            n += 1
            name = f"{base}_{n}"
        names.append(name)
    return names


def _is_quoted(projection: exp.Expr) -> bool:
    ident = projection.args.get("alias") if isinstance(projection, exp.Alias) else projection.args.get("this")
    return isinstance(ident, exp.Identifier) and bool(ident.quoted)
