"""The CoT strategy's two steps (paper section 4): ask for base data, run the query in memory.

Step 1, ``plan``: for every table the query reads, the base query ``select attributes from table
(where conditions)``: the attributes are all columns of that table the query uses (projection,
conditions, joins, grouping, ordering), so the rest of the query can run on them; the conditions are
the WHERE conjuncts that are *simple*: they test only this table's columns against literals
(comparisons, LIKE, IN lists, BETWEEN, IS NULL and their AND/OR/NOT combinations). Everything else
(joins, nested queries, functions, aggregates, ordering, limits) is left to step 2.

Step 2, ``execute``: the model's rows become typed tables (same names and column types as the
source database) in an in-memory DuckDB, and the original SQL runs on them.

The paper notes that its CoT "does not yet support joins over multiple tables"; here each table is
retrieved on its own and the join happens in memory, which is the natural extension.
"""

from __future__ import annotations

import functools
import math
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import duckdb
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.qualify import qualify

from structbench.benchmarks.rfqa.database import NUMERIC_TYPES, SCHEMA, new_connection, quote
from structbench.benchmarks.rfqa.engine import parse, to_duckdb
from structbench.benchmarks.rfqa.gold import json_value
from structbench.benchmarks.rfqa.metrics import align_columns
from structbench.benchmarks.rfqa.normalize import normalize_cell
from structbench.benchmarks.rfqa.prompts import cot_query

if TYPE_CHECKING:
    import pyarrow as pa

_SIMPLE_PREDICATES = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.Like, exp.ILike, exp.Between, exp.Is)


@dataclass(frozen=True)
class BaseQuery:
    """One table's base data request."""

    table: str
    columns: list[str]
    types: list[str]
    conditions: str | None = None
    """The simple WHERE conditions on this table, as PostgreSQL text without table qualifiers."""

    @property
    def text(self) -> str:
        """``select a, b from t where ...`` as shown to the model (Figure 7)."""
        return cot_query(self.table, self.columns, self.conditions)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> BaseQuery:
        return cls(
            table=data["table"],
            columns=list(data["columns"]),
            types=list(data["types"]),
            conditions=data.get("conditions"),
        )


def _is_value(node: exp.Expr) -> bool:
    if isinstance(node, exp.Literal | exp.Null | exp.Boolean):
        return True
    if isinstance(node, exp.Neg):
        return _is_value(node.this)
    return isinstance(node, exp.Tuple) and all(_is_value(e) for e in node.expressions)


def _simple_on(node: exp.Expr, alias: str) -> bool:
    """Whether ``node`` only tests columns of ``alias`` against literals."""
    if isinstance(node, exp.Paren):
        return _simple_on(node.this, alias)
    if isinstance(node, exp.And | exp.Or):
        return _simple_on(node.left, alias) and _simple_on(node.right, alias)
    if isinstance(node, exp.Not):
        return _simple_on(node.this, alias)
    if isinstance(node, exp.In):
        return (
            isinstance(node.this, exp.Column)
            and node.this.table == alias
            and not node.args.get("query")
            and all(_is_value(e) for e in node.expressions)
        )
    if isinstance(node, _SIMPLE_PREDICATES):
        operands = [v for k, v in node.args.items() if isinstance(v, exp.Expr) and k != "escape"]
        columns = [o for o in operands if isinstance(o, exp.Column)]
        return (
            len(columns) == 1
            and columns[0].table == alias
            and all(isinstance(o, exp.Column) or _is_value(o) for o in operands)
        )
    return False


def _conjuncts(where: exp.Expr | None) -> list[exp.Expr]:
    if where is None:
        return []
    node = where.this if isinstance(where, exp.Where) else where
    return list(node.flatten()) if isinstance(node, exp.And) else [node]


def _unqualified(node: exp.Expr) -> str:
    copy = node.copy()
    for col in copy.find_all(exp.Column):
        col.set("table", None)
    return copy.sql(dialect="postgres")


def plan(sql: str, schema: Mapping[str, Mapping[str, str]]) -> list[BaseQuery]:
    """The base queries for ``sql`` over a database with ``schema`` (table -> column -> type)."""
    sg_schema: dict[str, object] = {t: dict(cols) for t, cols in schema.items()}
    try:
        tree = qualify(parse(sql), schema=sg_schema, dialect="postgres", quote_identifiers=False)
    except SqlglotError:
        tree = parse(sql)
    alias_of: dict[str, str] = {}
    order: list[str] = []
    occurrences: dict[str, int] = {}
    for table in tree.find_all(exp.Table):
        name = table.name.lower()
        occurrences[name] = occurrences.get(name, 0) + 1
        alias_of[(table.alias or table.name).lower()] = name
        if name not in order and name in schema:
            order.append(name)
    used: dict[str, set[str]] = {t: set() for t in order}
    for col in tree.find_all(exp.Column):
        owner = alias_of.get(col.table.lower()) if col.table else None
        if owner is None:
            owners = [t for t in order if col.name.lower() in schema[t]]
            owner = owners[0] if len(owners) == 1 else None
        if owner is not None and owner in used:
            used[owner].add(col.name.lower())
    outer_where = tree.args.get("where") if isinstance(tree, exp.Select) else None
    bases: list[BaseQuery] = []
    for name in order:
        cols = [c for c in schema[name] if c in used[name]] or [next(iter(schema[name]))]
        aliases = [a for a, t in alias_of.items() if t == name]
        conditions = (
            [_unqualified(c) for c in _conjuncts(outer_where) if any(_simple_on(c, a) for a in aliases)]
            if occurrences[name] == 1  # a table read twice (self-join, subquery) needs all its rows
            else []
        )
        bases.append(
            BaseQuery(
                table=name,
                columns=cols,
                types=[schema[name][c] for c in cols],
                conditions=" and ".join(conditions) or None,
            )
        )
    return bases


def _number(value: Any) -> float | None:
    """``normalize_cell(value).number``, without the cell's text for a value that is a number already."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        try:
            number = float(value)
        except OverflowError:  # an integer beyond any float (JSON has no limit on digits)
            return None
        return number if math.isfinite(number) else None
    return normalize_cell(value).number


def _base_type(db_type: str) -> str:
    """A column type without its parameters, in upper case (``decimal(10,2)`` -> ``DECIMAL``)."""
    return db_type.split("(")[0].upper()


def _coerce(value: Any, base: str) -> Any:
    """A JSON value from the model as a value of a column of ``base`` type (``_base_type``; None when it does not
    fit)."""
    if value is None or isinstance(value, dict | list):
        return None
    if base == "BOOLEAN":
        text = str(value).strip().lower()
        return True if text in ("true", "t", "yes", "1") else False if text in ("false", "f", "no", "0") else None
    if base in NUMERIC_TYPES:
        number = _number(value)
        if number is None:
            return None
        return int(number) if base != "DOUBLE" and number == int(number) else number
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and math.isfinite(value) and value == int(value):  # JSON's Infinity and NaN
        return str(int(value))
    return str(value)


_EXACT = 2**53
"""Integers below this in magnitude are exact as floats."""


@functools.lru_cache(maxsize=256)
def _column_coercer(db_type: str) -> Callable[[Any], Any]:
    """``_coerce`` for a column of ``db_type``, answering the values a table mostly holds without ``_coerce``'s
    tests (a large base table is coerced cell by cell): a string in a text column is itself; an integer or finite
    float in a numeric one is what ``_coerce`` makes of it. Any other value takes ``_coerce``'s way."""
    base = _base_type(db_type)
    slow = functools.partial(_coerce, base=base)
    if base in NUMERIC_TYPES:
        double = base == "DOUBLE"

        def number(value: Any) -> Any:
            kind = type(value)
            if kind is int and -_EXACT < value < _EXACT:
                return float(value) if double else value
            if kind is float and math.isfinite(value):
                return int(value) if not double and value.is_integer() else value
            return slow(value)

        return number
    if base == "BOOLEAN":
        return slow

    def text(value: Any) -> Any:
        return value if type(value) is str else slow(value)

    return text


def execute(
    sql: str, bases: Sequence[BaseQuery], rows: Mapping[str, Sequence[Mapping[str, Any]]], columns: Sequence[str]
) -> list[dict[str, Any]]:
    """Run ``sql`` over the model's rows for each base table; the result as records keyed by ``columns``.

    Raises ``duckdb.Error`` when the query cannot run on the returned data, or runs past ``SCRATCH_SECONDS`` (the
    rows are the model's: a join of as many as it wrote grows as their product).
    """
    with _SCRATCH_LOCK:
        con = _scratch()
        timer = threading.Timer(SCRATCH_SECONDS, con.interrupt)
        timer.start()
        try:
            return _execute(con, sql, bases, rows, columns)
        finally:
            timer.cancel()
            timer.join()


SCRATCH_SECONDS = 30.0
"""How long the query over a reply's rows may run: the released queries over any rows a reply can hold take
milliseconds; a reply of a hundred thousand rows joined with itself would hold every other sample's step for
minutes."""


_SCRATCH: list[duckdb.DuckDBPyConnection] = []
_SCRATCH_LOCK = threading.Lock()
"""One in-memory DuckDB reused for every in-memory step (opening one costs tens of milliseconds);
each execution gets a fresh ``target`` schema, dropped afterwards."""


def _scratch() -> duckdb.DuckDBPyConnection:
    if not _SCRATCH:
        _SCRATCH.append(new_connection())
    return _SCRATCH[0]


ARROW_ROWS = 2000
"""From this many rows on, a base table whose columns Arrow holds exactly goes in through Arrow (``_insert``)."""
_ARROW_TYPES: dict[str, tuple[str, type]] = {
    "VARCHAR": ("string", str),
    "BIGINT": ("int64", int),
    "DOUBLE": ("float64", float),
    "BOOLEAN": ("bool_", bool),
}
"""Column types whose coerced values (``_column_coercer``: this Python type or None) Arrow holds as they are."""
_ROWS_VIEW = "__structbench_cot_rows"


def _arrow_table(types: Sequence[str], values: Sequence[list[Any]]) -> pa.Table | None:
    """The columns as an Arrow table of the columns' own types; None unless each column's type is one of
    ``_ARROW_TYPES`` and every value is of its Python type or None (an integer beyond 64 bits, a float in an integer
    column ... take the list parameters' casts). pyarrow is imported here, not with the module: a run that loads
    RelationalFactQA without such a table never pays for it."""
    import pyarrow as pa

    arrays = []
    for db_type, column in zip(types, values, strict=True):
        spec = _ARROW_TYPES.get(db_type.upper())
        if spec is None or not set(map(type, column)) <= {spec[1], type(None)}:
            return None
        try:
            arrays.append(pa.array(column, type=getattr(pa, spec[0])()))
        except (pa.ArrowException, OverflowError, UnicodeError):  # beyond int64, a lone surrogate ...
            return None
    return pa.Table.from_arrays(arrays, names=[f"c{i}" for i in range(len(arrays))])


def _insert(con: duckdb.DuckDBPyConnection, table: str, types: Sequence[str], values: Sequence[list[Any]]) -> None:
    """Insert the coerced columns into ``table``: one list parameter per column, unnested side by side; a large table
    whose values Arrow holds exactly (``_arrow_table``) is scanned from Arrow instead, the same values without
    DuckDB converting each Python value of the lists (a CoT oracle's base tables: a million cells)."""
    arrow = _arrow_table(types, values) if len(values[0]) >= ARROW_ROWS else None
    if arrow is None:
        unnest = ", ".join(f"UNNEST(?::{t}[])" for t in types)
        con.execute(f"INSERT INTO {quote(table)} SELECT {unnest}", values)
        return
    con.register(_ROWS_VIEW, arrow)
    try:
        con.execute(f"INSERT INTO {quote(table)} SELECT * FROM {_ROWS_VIEW}")
    finally:
        con.unregister(_ROWS_VIEW)


def _execute(
    con: duckdb.DuckDBPyConnection,
    sql: str,
    bases: Sequence[BaseQuery],
    rows: Mapping[str, Sequence[Mapping[str, Any]]],
    columns: Sequence[str],
) -> list[dict[str, Any]]:
    con.execute(f"DROP SCHEMA IF EXISTS {SCHEMA} CASCADE")
    con.execute(f"CREATE SCHEMA {SCHEMA}")
    con.execute(f"SET schema = '{SCHEMA}'")
    try:
        schema: dict[str, dict[str, str]] = {}
        for base in bases:
            schema[base.table] = dict(zip(base.columns, base.types, strict=True))
            cols = ", ".join(f"{quote(c)} {t}" for c, t in schema[base.table].items())
            con.execute(f"CREATE TABLE {quote(base.table)} ({cols})")
            records = rows.get(base.table, ())
            if records:
                values = [list(map(_column_coercer(t), column))
                          for column, t in zip(align_columns(records, base.columns), base.types, strict=True)]
                _insert(con, base.table, base.types, values)
        try:
            query = to_duckdb(sql, schema)
        except SqlglotError as err:
            raise duckdb.InvalidInputException(str(err)) from err
        result = con.sql(query)
        out = result.fetchall() if result is not None else []
        return [dict(zip(columns, (json_value(v) for v in row), strict=False)) for row in out]
    finally:
        con.execute(f"DROP SCHEMA IF EXISTS {SCHEMA} CASCADE")
