"""The builder's view of a database: each table's cells as written and as typed, queryable with SQL.

Tables are loaded by the shared CSV-database layer (``structbench.data.csvdb``), so its typing and NULL rules
are RelationalFactQA's: declared types where the release has them, else inferred (plain integers and
decimals without leading zeros are numbers, so codes like ``007`` stay text), and empty, ``nan`` and
``null`` cells are NULL. Questions and knowledge units show the cells' text as written; SQL sees the typed
values. A table's row identity is its 0-based position in the file (DuckDB's ``rowid``), which the
builder exposes to queries as ``__row``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from structbench.core.errors import DataError
from structbench.data import csvdb

ROW_ID = "__row"
"""The column under which a query over ``t`` sees each row's position in its table."""
NUMERIC = frozenset({"BIGINT", "DOUBLE"})

Value = int | float | str | bool | None
quote = csvdb.quote


@dataclass
class Relation:
    """One table: column names as written, their SQL names and types, and its cells row by row."""

    name: str
    """The table's SQL name."""
    columns: list[str]
    """Column names as the file writes them (shown in questions and table headers)."""
    keys: list[str]
    """Column names as SQL sees them."""
    types: list[str]
    """DuckDB type of each column: BIGINT, DOUBLE, BOOLEAN or VARCHAR."""
    cells: list[list[str | None]]
    """Cells as written (None = NULL)."""
    values: list[tuple[Value, ...]] = field(repr=False)
    """Cells as typed in the database."""

    def numeric(self, column: int) -> bool:
        return self.types[column] in NUMERIC

    def value(self, row: int, column: int) -> Value:
        return self.values[row][column]


@dataclass
class Database:
    """Relations of one ``csvdb.Database``."""

    name: str
    relations: dict[str, Relation]
    store: csvdb.Database = field(repr=False)

    @classmethod
    def from_store(cls, store: csvdb.Database, name: str | None = None) -> Database:
        """The tables of a loaded database (``sqlite_*`` bookkeeping tables left out); needs ``keep_text``."""
        relations: dict[str, Relation] = {}
        for table, schema in store.tables.items():
            if table.startswith("sqlite_"):
                continue
            if table not in store.text:
                raise ValueError(f"{store.key}/{table}: loaded without keep_text")
            if "rowid" in schema:
                raise DataError(f"{store.key}/{table}: a column named 'rowid' hides the row position")
            relations[table] = Relation(
                name=table,
                columns=store.headers[table],
                keys=list(schema),
                types=list(schema.values()),
                cells=store.text[table],
                values=store.rows(table),
            )
        return cls(name=name or store.key, relations=relations, store=store)

    @classmethod
    def from_tables(cls, name: str, tables: Mapping[str, tuple[Sequence[str], Sequence[Sequence[Any]]]]) -> Database:
        """A database from ``{table: (header, rows)}``; cells are taken as text."""
        store = csvdb.Database(key=name)
        for table, (header, rows) in tables.items():
            csvdb.load_rows(store, table, header, rows, keep_text=True)
        return cls.from_store(store)

    @classmethod
    def from_csv_folder(cls, folder: Path, name: str | None = None, tables: Sequence[str] | None = None) -> Database:
        """Every ``*.csv`` in ``folder`` (or the named ``tables``) as a table of the same name."""
        return cls.from_store(csvdb.load_folder(folder, key=name or folder.name, tables=tables, keep_text=True))

    def execute(self, sql: str, params: Sequence[Value] = ()) -> list[tuple[Value, ...]]:
        return self.store.execute(sql, params)[2]

    @staticmethod
    def rows_sql(relation: str, where: str = "") -> str:
        """``SELECT`` of a table's rows with their position as ``__row`` (what queries read as ``t``)."""
        return f"SELECT rowid AS {quote(ROW_ID)}, * FROM {csvdb.SCHEMA}.{quote(relation)}{where}"
