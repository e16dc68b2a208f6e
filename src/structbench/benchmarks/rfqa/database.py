"""Load an RFQA source database (one CSV per table) into DuckDB with PostgreSQL-like typing.

The original runs imported every table into PostgreSQL (schema ``target``) with the column types
declared in the dbunibas/galois experiment configs (``column_types.json``, copied from the dataset's
``galois_column_types.json``). We reproduce that in DuckDB:

- declared ``INTEGER``/``REAL``/``BOOLEAN``/``STRING`` become ``BIGINT``/``DOUBLE``/``BOOLEAN``/``VARCHAR``;
  columns without a declaration (one table, and a few columns whose CSV header differs from the
  config) are inferred from the values, restricted to those four types;
- column names are trimmed and lower-cased (PostgreSQL folds unquoted identifiers);
- empty fields and the pandas artefact ``nan`` in numeric columns are NULL; a value that does not
  cast to its declared type becomes NULL and is reported in ``Database.issues``;
- tables live in schema ``target``, which is also the default schema, so ``target.t`` and ``t`` both
  resolve, as in the galois runs;
- NULLs sort as PostgreSQL sorts them, larger than any value: last in ascending order, first in
  descending order (DuckDB's default puts them last in both; it changes the gold of bird_51).

Query-side semantics (``'1'`` vs ``1``, integer division) are handled in ``engine.py``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path

import duckdb

from structbench.errors import DataError

SCHEMA = "target"
DECLARED_TYPES = {"STRING": "VARCHAR", "INTEGER": "BIGINT", "REAL": "DOUBLE", "BOOLEAN": "BOOLEAN"}
"""galois config type -> DuckDB type."""
_INFERRED = {
    "BIGINT": "BIGINT",
    "INTEGER": "BIGINT",
    "SMALLINT": "BIGINT",
    "TINYINT": "BIGINT",
    "HUGEINT": "BIGINT",
    "UBIGINT": "BIGINT",
    "DOUBLE": "DOUBLE",
    "FLOAT": "DOUBLE",
    "BOOLEAN": "BOOLEAN",
}
FOLDER_ALIASES = {"galois/world1": "galois/world_1"}
"""``dataset/db_id`` keys whose folder is named differently in the release."""
NUMERIC_TYPES = frozenset({"BIGINT", "DOUBLE", "INTEGER", "HUGEINT", "DECIMAL", "FLOAT", "SMALLINT", "TINYINT"})


def column_key(name: str) -> str:
    """A column name as PostgreSQL sees it unquoted: trimmed and lower-cased."""
    return name.strip().lower()


def quote(name: str) -> str:
    """A DuckDB identifier literal."""
    return '"' + name.replace('"', '""') + '"'


def db_folder(dataset: str, db_id: str) -> str:
    """The folder (under ``dataset/data``) holding the tables of ``dataset``/``db_id``."""
    key = f"{dataset}/{db_id}"
    return FOLDER_ALIASES.get(key, key)


@cache
def declared_types() -> dict[str, dict[str, dict[str, str]]]:
    """``{"dataset/db_id": {table: {column: galois type}}}`` with names folded by ``column_key``."""
    raw = json.loads(resources.files(__package__).joinpath("column_types.json").read_text(encoding="utf-8"))
    return {
        db: {column_key(t): {column_key(c): ty for c, ty in cols.items()} for t, cols in tables.items()}
        for db, tables in raw.items()
    }


@dataclass
class Database:
    """One loaded database: an in-memory DuckDB connection and the typed schema of its tables."""

    key: str
    """``dataset/db_id`` as in the queries file."""
    connection: duckdb.DuckDBPyConnection
    tables: dict[str, dict[str, str]] = field(default_factory=dict)
    """Table -> column -> DuckDB type, in CSV column order."""
    issues: list[str] = field(default_factory=list)
    """Loading problems worth knowing (values that did not cast to the declared type, inferred columns)."""

    def execute(self, sql: str) -> tuple[list[str], list[str], list[tuple[object, ...]]]:
        """Run ``sql``: output column names, their DuckDB types and the rows."""
        rel = self.connection.sql(sql)
        if rel is None:
            return [], [], []
        return list(rel.columns), [str(t) for t in rel.types], rel.fetchall()


def new_connection() -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB with schema ``target`` as the default schema, PostgreSQL's NULL ordering,
    single-threaded."""
    con = duckdb.connect(":memory:")
    con.execute("SET threads = 1")
    con.execute("SET default_null_order = 'nulls_last_on_asc_first_on_desc'")
    con.execute(f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}")
    con.execute(f"SET schema = '{SCHEMA}'")
    return con


def _sql_string(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _cast_expr(raw: str, ty: str) -> str:
    col = quote(raw)
    if ty == "VARCHAR":
        return col
    guarded = f"CASE WHEN lower(trim({col})) IN ('', 'nan', 'null') THEN NULL ELSE trim({col}) END"
    if ty == "BIGINT":
        return f"COALESCE(TRY_CAST({guarded} AS BIGINT), TRY_CAST(TRY_CAST({guarded} AS DOUBLE) AS BIGINT))"
    return f"TRY_CAST({guarded} AS {ty})"


def load_table(db: Database, name: str, path: Path, declared: Mapping[str, str] | None = None) -> None:
    """Create ``target.<name>`` in ``db`` from the CSV at ``path``, typed by ``declared`` where given."""
    con = db.connection
    csv = f"read_csv({_sql_string(str(path))}, header = true, delim = ',', quote = '\"'"
    raw = quote(f"__raw_{name}")
    try:
        con.execute(f"CREATE TEMP TABLE {raw} AS SELECT * FROM {csv}, all_varchar = true)")
    except duckdb.Error as err:
        raise DataError(f"{path}: cannot read as CSV: {err}") from err
    try:
        raw_columns = [r[0] for r in con.execute(f"DESCRIBE {raw}").fetchall()]
        declared = declared or {}
        inferred: dict[str, str] = {}
        if any(column_key(c) not in declared for c in raw_columns):
            for col_name, col_type, *_ in con.execute(f"DESCRIBE SELECT * FROM {csv})").fetchall():
                inferred[col_name] = _INFERRED.get(str(col_type).upper(), "VARCHAR")
        columns: dict[str, str] = {}
        exprs = []
        for column in raw_columns:
            key = column_key(column)
            if key in declared:
                ty = DECLARED_TYPES.get(declared[key].upper())
                if ty is None:
                    raise DataError(f"column_types.json: {db.key}.{name}.{key}: unknown type {declared[key]!r}")
            else:
                ty = inferred.get(column, "VARCHAR")
                if declared:
                    db.issues.append(f"{name}.{key}: no declared type, inferred {ty}")
            columns[key] = ty
            exprs.append(f"{_cast_expr(column, ty)} AS {quote(key)}")
        con.execute(f"CREATE TABLE {SCHEMA}.{quote(name)} AS SELECT {', '.join(exprs)} FROM {raw}")
        db.tables[name] = columns
        present = "lower(trim({col})) NOT IN ('', 'nan', 'null')"
        checks = [
            f"count(*) FILTER (WHERE {present.format(col=quote(c))} AND {_cast_expr(c, ty)} IS NULL)"
            for c, ty in zip(raw_columns, columns.values(), strict=True)
            if ty != "VARCHAR"
        ]
        if checks:
            lost = con.execute(f"SELECT {', '.join(checks)} FROM {raw}").fetchall()[0]
            typed = [(k, ty) for k, ty in columns.items() if ty != "VARCHAR"]
            for (key, ty), n in zip(typed, lost, strict=True):
                if n:
                    db.issues.append(f"{name}.{key}: {n} value(s) not castable to {ty} loaded as NULL")
    finally:
        con.execute(f"DROP TABLE IF EXISTS {raw}")


def load_database(root: Path, dataset: str, db_id: str) -> Database:
    """Load every table CSV of ``dataset``/``db_id`` from the release folder ``root`` (holding ``dataset/``)."""
    key = f"{dataset}/{db_id}"
    folder = root / "dataset" / "data" / db_folder(dataset, db_id)
    if not folder.is_dir():
        raise DataError(f"{folder}: database folder for {key} not found")
    db = Database(key=key, connection=new_connection())
    types = declared_types().get(key.replace("world_1", "world1"), {})
    for path in sorted(folder.glob("*.csv")):
        name = column_key(path.stem)
        load_table(db, name, path, types.get(name))
    return db


class DatabaseCache:
    """Loads each database of a release folder once, on first use."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._loaded: dict[str, Database] = {}

    def get(self, dataset: str, db_id: str) -> Database:
        key = f"{dataset}/{db_id}"
        if key not in self._loaded:
            self._loaded[key] = load_database(self.root, dataset, db_id)
        return self._loaded[key]

    def table_exists(self, dataset: str, db_id: str, table: str) -> bool:
        """Whether the table's CSV is present (without loading the database)."""
        folder = self.root / "dataset" / "data" / db_folder(dataset, db_id)
        return any(column_key(p.stem) == table for p in folder.glob("*.csv"))
