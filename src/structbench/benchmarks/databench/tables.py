"""A dataset's table as the prompts show it: read from its Parquet file, each cell as text.

A cell reads as Python prints the value pandas holds (``True``, ``3.5``, ``2021-03-04 00:00:00+00:00``, ``['a',
'b']``); a missing value (null, NaN) is an empty cell. Tables are read once per process and kept while a few others
are (their questions come together); the size of one is known from the file's metadata without reading it, so a
table too large to show is refused before it is read.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from structbench.core.errors import DataError
from structbench.data.evidence import Table

KEPT_TABLES = 4
"""Tables kept in memory per process (a dataset's 20 questions come one after another)."""


@dataclass(frozen=True)
class Shape:
    """A table's size: rows and columns."""

    rows: int
    columns: int

    @property
    def cells(self) -> int:
        return self.rows * self.columns


def shape(path: Path) -> Shape:
    """The size of the table in the Parquet file ``path``, from its metadata."""
    import pyarrow.parquet as pq

    try:
        meta = pq.ParquetFile(path).metadata
    except (OSError, ValueError) as err:
        raise DataError(f"{path}: not a readable Parquet file ({err})") from err
    return Shape(meta.num_rows, len(meta.schema.names) - _index_columns(path))


def _index_columns(path: Path) -> int:
    """How many of the file's columns are a stored pandas index (not shown, as pandas does not show them)."""
    return len(_pandas_index(path))


def _pandas_index(path: Path) -> list[str]:
    import pyarrow.parquet as pq

    meta = pq.read_schema(path).pandas_metadata or {}
    return [c for c in meta.get("index_columns", []) if isinstance(c, str)]


def columns(path: Path) -> list[str]:
    """The names of the table's columns (as ``list(df.columns)`` gives them), from the file's schema."""
    import pyarrow.parquet as pq

    try:
        names = pq.read_schema(path).names
    except (OSError, ValueError) as err:
        raise DataError(f"{path}: not a readable Parquet file ({err})") from err
    hidden = set(_pandas_index(path))
    return [str(n) for n in names if n not in hidden]


def cell(value: Any) -> str:
    """A cell's text: ``str`` of the value, ``""`` for a missing one."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return str(value)


@lru_cache(maxsize=KEPT_TABLES)
def _read(path: str, mtime_ns: int) -> Table:
    import pyarrow.parquet as pq

    try:
        data = pq.read_table(path)
    except (OSError, ValueError) as err:
        raise DataError(f"{path}: not a readable Parquet file ({err})") from err
    hidden = set(_pandas_index(Path(path)))
    names = [n for n in data.column_names if n not in hidden]
    columns = [data.column(n).to_pylist() for n in names]
    rows = [[cell(column[i]) for column in columns] for i in range(data.num_rows)]
    return Table(header=[str(n) for n in names], rows=rows)


def read_table(path: Path) -> Table:
    """The table in the Parquet file ``path``, every cell as text (see the module docstring)."""
    try:
        mtime = path.stat().st_mtime_ns
    except OSError as err:
        raise DataError(f"{path}: cannot read the table ({err.strerror or err})") from err
    return _read(str(path), mtime)
