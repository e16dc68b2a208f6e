"""A folder of CSV tables as an in-memory SQLite database, keeping each cell's original text.

Each CSV file ``<name>.csv`` becomes table ``<name>``; its first line is the header. A column is
numeric (INTEGER or REAL) when every non-null cell is a plain number (no leading zeros, so codes like
``007`` stay text); otherwise TEXT. Null cells are empty or ``null``/``NULL``. Every table gets a
column ``__row`` with the row's 0-based position in the file, which the builder uses as row identity.
"""

from __future__ import annotations

import csv
import re
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from structbench.errors import DataError

NULLS = frozenset({"", "null", "NULL", "nan"})
ROW_ID = "__row"
_INT = re.compile(r"^[+-]?(0|[1-9]\d*)$")
_REAL = re.compile(r"^[+-]?(0|[1-9]\d*)?\.\d+([eE][+-]?\d+)?$|^[+-]?(0|[1-9]\d*)[eE][+-]?\d+$")

Value = int | float | str | None


def quote(identifier: str) -> str:
    """A SQL identifier in double quotes."""
    return '"' + identifier.replace('"', '""') + '"'


def _column_type(cells: Sequence[str | None]) -> str:
    values = [c for c in cells if c is not None]
    if not values:
        return "TEXT"
    if all(_INT.match(v) for v in values):
        return "INTEGER" if all(abs(int(v)) < 2**63 for v in values) else "TEXT"
    if all(_INT.match(v) or _REAL.match(v) for v in values):
        return "REAL"
    return "TEXT"


def _typed(cell: str | None, kind: str) -> Value:
    if cell is None:
        return None
    if kind == "INTEGER":
        return int(cell)
    if kind == "REAL":
        return float(cell)
    return cell


@dataclass
class Relation:
    """One table: column names and types, and its cells as text (None = null), row by row."""

    name: str
    columns: list[str]
    types: list[str]
    """SQLite type of each column: INTEGER, REAL or TEXT."""
    cells: list[list[str | None]]

    def numeric(self, column: int) -> bool:
        return self.types[column] != "TEXT"

    def value(self, row: int, column: int) -> Value:
        return _typed(self.cells[row][column], self.types[column])


@dataclass
class Database:
    """Relations loaded into one in-memory SQLite connection."""

    name: str
    relations: dict[str, Relation]
    connection: sqlite3.Connection = field(repr=False)

    @classmethod
    def from_tables(cls, name: str, tables: Mapping[str, tuple[Sequence[str], Sequence[Sequence[Any]]]]) -> Database:
        """A database from ``{table: (header, rows)}``; cells are taken as text."""
        connection = sqlite3.connect(":memory:", check_same_thread=False)
        relations: dict[str, Relation] = {}
        for table, (header, rows) in tables.items():
            columns = [str(h) for h in header]
            if table.lower().startswith("sqlite_"):
                raise DataError(f"{name}/{table}: table names starting with 'sqlite_' are reserved")
            if len(set(columns)) != len(columns) or ROW_ID in columns:
                raise DataError(f"{name}/{table}: duplicate or reserved column names in {columns}")
            cells = [[None if c is None or str(c) in NULLS else str(c) for c in row] for row in rows]
            types = [_column_type([r[j] for r in cells]) for j in range(len(columns))]
            relation = Relation(table, columns, types, cells)
            cols_sql = ", ".join(f"{quote(c)} {t}" for c, t in zip(columns, types, strict=True))
            connection.execute(f"CREATE TABLE {quote(table)} ({quote(ROW_ID)} INTEGER PRIMARY KEY, {cols_sql})")
            marks = ", ".join("?" * (len(columns) + 1))
            connection.executemany(
                f"INSERT INTO {quote(table)} VALUES ({marks})",
                ([i, *(_typed(c, t) for c, t in zip(row, types, strict=True))] for i, row in enumerate(cells)),
            )
            relations[table] = relation
        connection.commit()
        return cls(name=name, relations=relations, connection=connection)

    @classmethod
    def from_csv_folder(cls, folder: Path, name: str | None = None, tables: Sequence[str] | None = None) -> Database:
        """Every ``*.csv`` in ``folder`` (or the named ``tables``) as a table of the same name; files named
        ``sqlite_*`` (SQLite bookkeeping dumped with the data) are skipped."""
        if tables is None:
            paths = sorted(p for p in folder.glob("*.csv") if not p.stem.startswith("sqlite_"))
        else:
            paths = [folder / f"{t}.csv" for t in tables]
        if not paths:
            raise DataError(f"{folder}: no CSV files")
        loaded = {p.stem: read_csv(p) for p in paths}
        return cls.from_tables(name or folder.name, loaded)

    def execute(self, sql: str, params: Sequence[Value] = ()) -> list[tuple[Value, ...]]:
        return self.connection.execute(sql, tuple(params)).fetchall()


def read_csv(path: Path) -> tuple[list[str], list[list[str]]]:
    """Header and rows of a CSV file; a ragged row raises ``DataError`` naming the file and line."""
    try:
        with path.open(newline="", encoding="utf-8-sig") as fh:
            reader = csv.reader(fh)
            header = next(reader, None)
            if header is None:
                raise DataError(f"{path}: empty CSV file")
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
