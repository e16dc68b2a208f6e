"""CSV tables as one in-memory DuckDB database, with one set of typing and NULL rules for every benchmark.

RelationalFactQA runs its SQL on the release's CSV tables, and SKA-Bench builds questions from the same
tables (or any folder of CSVs); both load them here, so a cell means the same thing to both:

- **NULL.** A field that is empty, or whose trimmed text is ``nan`` or ``null`` in any case (the
  pandas and SQLite export artefacts of the release), is NULL, whatever the column's type. A value
  that does not cast to its column's declared type is NULL too, and reported in ``Database.issues``.
- **Types.** A declared type wins (``DECLARED_TYPES``: the galois configs' ``INTEGER``/``REAL``/
  ``BOOLEAN``/``STRING`` become ``BIGINT``/``DOUBLE``/``BOOLEAN``/``VARCHAR``). Without one, a column is
  ``BIGINT`` when every non-NULL value is a plain integer without leading zeros that fits 64 bits,
  ``DOUBLE`` when every one is a plain decimal number (``1.5``, ``-.5``, ``2e3``; again no leading
  zeros, so codes such as ``007`` stay text), ``BOOLEAN`` when every one is ``true``/``false``, and
  ``VARCHAR`` otherwise (also when it has no value at all).
- **Names.** Table and column names are trimmed and lower-cased (``column_key``), as PostgreSQL folds
  unquoted identifiers; the header as written is kept in ``Database.headers`` for display.
- Tables live in schema ``target``, which is also the default schema (``target.t`` and ``t`` both
  resolve, as in the RFQA runs), and NULLs sort as in PostgreSQL: last ascending, first descending.
  Row order is file order: ``rowid`` numbers the rows from 0.

``keep_text=True`` also keeps every cell's text as written (``None`` where the cell is NULL), for
benchmarks that show cells to a model exactly as the file has them.
"""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from structbench.core.errors import DataError

if TYPE_CHECKING:
    import duckdb  # imported where a connection is made: a run whose benchmark queries no table does without it

SCHEMA = "target"
NULL_TEXTS = ("", "nan", "null")
"""Cell texts read as NULL (compared trimmed and lower-cased)."""
DECLARED_TYPES = {"STRING": "VARCHAR", "INTEGER": "BIGINT", "REAL": "DOUBLE", "BOOLEAN": "BOOLEAN"}
"""Declared (galois config) type -> DuckDB type."""
NUMERIC_TYPES = frozenset({"BIGINT", "DOUBLE", "INTEGER", "HUGEINT", "DECIMAL", "FLOAT", "SMALLINT", "TINYINT"})
_INTEGER = r"[+-]?(0|[1-9][0-9]*)"
_DECIMAL = r"[+-]?((0|[1-9][0-9]*)?\.[0-9]+([eE][+-]?[0-9]+)?|(0|[1-9][0-9]*)\.?([eE][+-]?[0-9]+)?)"


def column_key(name: str) -> str:
    """A table or column name as PostgreSQL sees it unquoted: trimmed and lower-cased."""
    return name.strip().lower()


def quote(name: str) -> str:
    """A DuckDB identifier literal."""
    return '"' + name.replace('"', '""') + '"'


def _sql_string(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def new_connection() -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB with schema ``target`` as the default schema, PostgreSQL's NULL ordering,
    single-threaded (so row order is file order)."""
    import duckdb

    con = duckdb.connect(":memory:")
    con.execute("SET threads = 1")
    con.execute("SET default_null_order = 'nulls_last_on_asc_first_on_desc'")
    con.execute(f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}")
    con.execute(f"SET schema = '{SCHEMA}'")
    return con


@dataclass
class Database:
    """One loaded database: an in-memory DuckDB connection and the typed schema of its tables."""

    key: str
    """A name for messages (``dataset/db_id`` for RFQA)."""
    connection: duckdb.DuckDBPyConnection = field(default_factory=new_connection, repr=False)
    tables: dict[str, dict[str, str]] = field(default_factory=dict)
    """Table -> column -> DuckDB type, in file column order (names folded by ``column_key``)."""
    headers: dict[str, list[str]] = field(default_factory=dict)
    """Table -> its header as written (trimmed), aligned with ``tables[table]``."""
    text: dict[str, list[list[str | None]]] = field(default_factory=dict)
    """Table -> cells as written, row by row (None = NULL); only for tables loaded with ``keep_text``."""
    issues: list[str] = field(default_factory=list)
    """Loading problems worth knowing (values that did not cast to the declared type, inferred columns)."""

    def execute(self, sql: str, params: Sequence[Any] = ()) -> tuple[list[str], list[str], list[tuple[Any, ...]]]:
        """Run ``sql`` (with ``?`` parameters): output column names, their DuckDB types and the rows."""
        if params:
            cursor = self.connection.execute(sql, list(params))
            if cursor.description is None:
                return [], [], []
            return [d[0] for d in cursor.description], [str(d[1]) for d in cursor.description], cursor.fetchall()
        rel = self.connection.sql(sql)
        if rel is None:
            return [], [], []
        return list(rel.columns), [str(t) for t in rel.types], rel.fetchall()

    def rows(self, table: str) -> list[tuple[Any, ...]]:
        """The typed rows of ``table`` in file order."""
        return self.connection.execute(f"SELECT * FROM {SCHEMA}.{quote(table)} ORDER BY rowid").fetchall()


def _null_guard(col: str) -> str:
    nulls = ", ".join(_sql_string(t) for t in NULL_TEXTS)
    return f"CASE WHEN lower(trim({col})) IN ({nulls}) THEN NULL ELSE {col} END"


def _cast_expr(raw: str, ty: str) -> str:
    """The SQL turning raw text column ``raw`` into type ``ty`` under the NULL rules."""
    col = quote(raw)
    if ty == "VARCHAR":
        return _null_guard(col)
    guarded = f"trim({_null_guard(col)})"
    if ty == "BIGINT":
        return f"COALESCE(TRY_CAST({guarded} AS BIGINT), TRY_CAST(TRY_CAST({guarded} AS DOUBLE) AS BIGINT))"
    return f"TRY_CAST({guarded} AS {ty})"


def _infer_types(con: duckdb.DuckDBPyConnection, raw: str, columns: Sequence[str]) -> list[str]:
    """Each raw column's type by the module's inference rule."""
    if not columns:
        return []
    checks = []
    for column in columns:
        value = f"trim({_null_guard(quote(column))})"
        checks += [
            f"bool_and({value} IS NULL OR (regexp_full_match({value}, '{_INTEGER}') "
            f"AND TRY_CAST({value} AS BIGINT) IS NOT NULL))",
            f"bool_and({value} IS NULL OR regexp_full_match({value}, '{_DECIMAL}'))",
            f"bool_and({value} IS NULL OR lower({value}) IN ('true', 'false'))",
            f"count({value})",
        ]
    flags = con.execute(f"SELECT {', '.join(checks)} FROM {raw}").fetchone()
    assert flags is not None
    types = []
    for k in range(len(columns)):
        integer, decimal, boolean, present = flags[4 * k : 4 * k + 4]
        if not present:
            types.append("VARCHAR")
        elif integer:
            types.append("BIGINT")
        elif decimal:
            types.append("DOUBLE")
        else:
            types.append("BOOLEAN" if boolean else "VARCHAR")
    return types


def _check_names(db: Database, name: str, header: Sequence[str], where: str) -> None:
    keys = [column_key(h) for h in header]
    if any(not k for k in keys) or len(set(keys)) != len(keys):
        raise DataError(f"{where}: empty or duplicate column names (case-insensitive) in {list(header)}")
    if name in db.tables:
        raise DataError(f"{where}: table {name!r} is already loaded in {db.key}")


def _raw_name(j: int) -> str:
    return f"__c{j}"


def _type_raw(
    db: Database, name: str, raw: str, header: Sequence[str], declared: Mapping[str, str] | None, keep_text: bool
) -> None:
    """Create ``target.<name>`` from the raw text table ``raw`` (columns ``__c0`` ... under ``header``):
    declared or inferred types, NULL rules."""
    con = db.connection
    raw_columns = [_raw_name(j) for j in range(len(header))]
    declared = {column_key(k): v for k, v in (declared or {}).items()}
    undeclared = [c for c, h in zip(raw_columns, header, strict=True) if column_key(h) not in declared]
    inferred = dict(zip(undeclared, _infer_types(con, raw, undeclared), strict=True))
    columns: dict[str, str] = {}
    exprs = []
    for column, title in zip(raw_columns, header, strict=True):
        key = column_key(title)
        if key in declared:
            ty = DECLARED_TYPES.get(declared[key].upper())
            if ty is None:
                raise DataError(f"{db.key}.{name}.{key}: unknown declared type {declared[key]!r}")
        else:
            ty = inferred[column]
            if declared:
                db.issues.append(f"{name}.{key}: no declared type, inferred {ty}")
        columns[key] = ty
        exprs.append(f"{_cast_expr(column, ty)} AS {quote(key)}")
    con.execute(f"CREATE TABLE {SCHEMA}.{quote(name)} AS SELECT {', '.join(exprs)} FROM {raw} ORDER BY __line")
    db.tables[name] = columns
    db.headers[name] = [h.strip() for h in header]
    typed = [(c, key, ty) for c, (key, ty) in zip(raw_columns, columns.items(), strict=True) if ty != "VARCHAR"]
    if typed:
        lost = con.execute(
            "SELECT "
            + ", ".join(
                f"count(*) FILTER (WHERE {_null_guard(quote(c))} IS NOT NULL AND {_cast_expr(c, ty)} IS NULL)"
                for c, _, ty in typed
            )
            + f" FROM {raw}"
        ).fetchone()
        assert lost is not None
        for (_, key, ty), n in zip(typed, lost, strict=True):
            if n:
                db.issues.append(f"{name}.{key}: {n} value(s) not castable to {ty} loaded as NULL")
    if keep_text:
        shown = []
        for column, ty in zip(raw_columns, columns.values(), strict=True):
            value = _null_guard(quote(column))
            shown.append(value if ty == "VARCHAR" else f"CASE WHEN {_cast_expr(column, ty)} IS NULL THEN NULL "
                         f"ELSE trim({value}) END")
        rows = con.execute(f"SELECT {', '.join(shown) or 'NULL'} FROM {raw} ORDER BY __line").fetchall()
        db.text[name] = [list(r) for r in rows] if shown else [[] for _ in rows]


def load_table(
    db: Database, name: str, path: Path, declared: Mapping[str, str] | None = None, *, keep_text: bool = False
) -> None:
    """Create ``target.<name>`` in ``db`` from the CSV at ``path`` (first line = header), typed by
    ``declared`` (column -> declared type) where given and inferred elsewhere."""
    import duckdb

    con = db.connection
    name = column_key(name)
    header = _read_header(path)
    _check_names(db, name, header, str(path))
    raw = quote(f"__raw_{name}")
    names = ", ".join(_sql_string(_raw_name(j)) for j in range(len(header)))
    reader = (
        f"read_csv({_sql_string(str(path))}, header = true, names = [{names}], delim = ',', quote = '\"', "
        "all_varchar = true, null_padding = false)"
    )
    try:
        con.execute(f"CREATE TEMP TABLE {raw} AS SELECT row_number() OVER () AS __line, * FROM {reader}")
    except duckdb.Error as err:
        raise DataError(_unreadable(path, err)) from None
    try:
        _type_raw(db, name, raw, header, declared, keep_text)
    finally:
        con.execute(f"DROP TABLE IF EXISTS {raw}")


def _unreadable(path: Path, err: Exception) -> str:
    """Why DuckDB could not read ``path``, in one line naming the line where it can: what ``read_text`` finds wrong (a
    row of another number of fields than the header's; read on this failing path only), else the engine's first line
    (its hints and the internal query it ran are not the user's to act on)."""
    try:
        read_text(path)
    except DataError as problem:
        return str(problem)
    first = next((line.strip() for line in str(err).splitlines() if line.strip()), type(err).__name__)
    return f"{path}: cannot read as CSV: {first}"


def read_text(path: Path) -> tuple[list[str], list[list[str]]]:
    """A CSV file's header (trimmed) and rows as written, without typing: for showing cells to a model.
    Blank lines are skipped; a row with another number of fields is a ``DataError`` naming the line."""
    try:
        with path.open(newline="", encoding="utf-8-sig") as fh:
            reader = csv.reader(fh)
            header = next(reader, None)
            if not header:
                raise DataError(f"{path}: empty CSV file (no header)")
            rows: list[list[str]] = []
            for row in reader:
                if not row:
                    continue
                if len(row) != len(header):
                    raise DataError(f"{path}:{reader.line_num}: {len(row)} fields, the header has {len(header)}")
                rows.append(row)
    except (OSError, UnicodeDecodeError, csv.Error) as err:
        raise DataError(f"{path}: cannot read CSV ({err})") from err
    return [h.strip() for h in header], rows


def _read_header(path: Path) -> list[str]:
    """The first line of a CSV file as column names."""
    try:
        with path.open(newline="", encoding="utf-8-sig") as fh:
            header = next(csv.reader(fh), None)
    except (OSError, UnicodeDecodeError, csv.Error) as err:
        raise DataError(f"{path}: cannot read CSV ({err})") from err
    if not header:
        raise DataError(f"{path}: empty CSV file (no header)")
    return header


def load_rows(
    db: Database,
    name: str,
    header: Sequence[str],
    rows: Sequence[Sequence[Any]],
    declared: Mapping[str, str] | None = None,
    *,
    keep_text: bool = False,
) -> None:
    """Create ``target.<name>`` from cells given in memory (taken as text, None = empty), under the same
    rules as a CSV file."""
    name = column_key(name)
    header = [str(h) for h in header]
    _check_names(db, name, header, f"{db.key}/{name}")
    for i, row in enumerate(rows):
        if len(row) != len(header):
            raise DataError(f"{db.key}/{name}: row {i + 1} has {len(row)} cells, the header {len(header)}")
    con = db.connection
    raw = quote(f"__raw_{name}")
    columns = ", ".join(f"{_raw_name(j)} VARCHAR" for j in range(len(header)))
    con.execute(f"CREATE TEMP TABLE {raw} (__line BIGINT{', ' + columns if columns else ''})")
    try:
        if rows:  # one list per column, unnested side by side: far faster than a row-by-row insert
            lists = ", ".join(["unnest(?::BIGINT[])", *["unnest(?::VARCHAR[])"] * len(header)])
            columns_of = [[None if row[j] is None else str(row[j]) for row in rows] for j in range(len(header))]
            con.execute(f"INSERT INTO {raw} SELECT {lists}", [list(range(len(rows))), *columns_of])
        _type_raw(db, name, raw, header, declared, keep_text)
    finally:
        con.execute(f"DROP TABLE IF EXISTS {raw}")


def load_folder(
    folder: Path,
    *,
    key: str | None = None,
    tables: Sequence[str] | None = None,
    declared: Mapping[str, Mapping[str, str]] | None = None,
    keep_text: bool = False,
) -> Database:
    """Every ``*.csv`` in ``folder`` (or the named ``tables``) as a table named after its file; ``declared``
    maps a table to its column types."""
    paths = sorted(folder.glob("*.csv")) if tables is None else [folder / f"{t}.csv" for t in tables]
    if not paths:
        raise DataError(f"{folder}: no CSV files")
    db = Database(key=key or folder.name)
    declared = {column_key(t): cols for t, cols in (declared or {}).items()}
    for path in paths:
        if not path.is_file():
            raise DataError(f"{path}: table file not found")
        load_table(db, path.stem, path, declared.get(column_key(path.stem)), keep_text=keep_text)
    return db
