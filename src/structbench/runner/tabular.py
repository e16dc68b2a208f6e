"""``export --format parquet|hf``: export lines as a typed Arrow table, a Parquet file, or a Hugging Face
``datasets`` folder that ``datasets.load_dataset(FOLDER)`` reads.

Each field of the export lines becomes a column whose Arrow type is inferred from all rows (strings, numbers,
lists, structs such as the chat ``prompt`` and the ``gold``); a field whose rows disagree on a type (a table cell
that is a number in one row and a string in another) is kept as a JSON string column, and the dataset card lists
those columns. Parquet has no struct without fields, so an empty mapping (an export without options) is null.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from structbench.atomic import atomic_path, write_text_atomic

SPLIT = "test"
"""The one split of an exported benchmark variant: evaluation data."""


def _storable(t: pa.DataType) -> bool:
    """Whether Parquet can write ``t`` (no struct without fields, at any depth; no all-null type)."""
    if pa.types.is_null(t):
        return False
    if pa.types.is_struct(t):
        return t.num_fields > 0 and all(_storable(t.field(i).type) for i in range(t.num_fields))
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return _storable(t.value_type)
    return True


def _no_nulls(t: pa.DataType) -> pa.DataType:
    """``t`` with every all-null type (a field no row sets, an empty list) made a string type."""
    if pa.types.is_null(t):
        return pa.string()
    if pa.types.is_struct(t):
        return pa.struct([pa.field(t.field(i).name, _no_nulls(t.field(i).type)) for i in range(t.num_fields)])
    if pa.types.is_list(t):
        return pa.list_(_no_nulls(t.value_type))
    return t


def _empty_maps_as_null(value: Any) -> Any:
    """Parquet has no struct without fields: an empty mapping (no options) is stored as null."""
    if isinstance(value, dict):
        return {k: _empty_maps_as_null(v) for k, v in value.items()} or None
    if isinstance(value, list):
        return [_empty_maps_as_null(v) for v in value]
    return value


def to_table(lines: Iterable[dict[str, Any]]) -> tuple[pa.Table, list[str]]:
    """The lines as a table (columns in first-seen order) and the names of the columns kept as JSON text."""
    rows = list(lines)
    names = list(dict.fromkeys(k for row in rows for k in row))
    columns, as_json = [], []
    for name in names:
        values = [_empty_maps_as_null(row.get(name)) for row in rows]
        try:
            array = pa.array(values)
            array = array.cast(_no_nulls(array.type))
            ok = _storable(array.type)
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, OverflowError):
            ok = False
        if not ok:
            array = pa.array([None if v is None else json.dumps(v, ensure_ascii=False, sort_keys=True)
                              for v in values], type=pa.string())
            as_json.append(name)
        columns.append(array)
    return pa.table(columns, names=names), as_json


def _atomic_parquet(table: pa.Table, path: Path) -> None:
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp)


def read_parquet(path: Path) -> list[dict[str, Any]]:
    """The rows of a Parquet file as dicts; a file Parquet cannot read is a ``DataError`` naming it."""
    from structbench.errors import DataError

    try:
        return list(pq.read_table(path).to_pylist())
    except (pa.ArrowException, OSError) as err:
        raise DataError(f"{path}: not a readable Parquet file ({err})") from None


def write_parquet(lines: Iterable[dict[str, Any]], path: Path) -> pa.Table:
    """One Parquet file; written to a temporary name first, so a failure leaves nothing half-written."""
    table, _ = to_table(lines)
    _atomic_parquet(table, path)
    return table


def write_hf_dataset(lines: Iterable[dict[str, Any]], folder: Path, *, title: str, description: str) -> pa.Table:
    """A ``datasets`` folder: ``data/test-00000-of-00001.parquet`` and a dataset card (``README.md``) whose
    header names the split, so ``datasets.load_dataset(str(folder))`` loads it without a script."""
    table, as_json = to_table(lines)
    _atomic_parquet(table, folder / "data" / f"{SPLIT}-00000-of-00001.parquet")
    fields = "\n".join(f"| `{f.name}` | `{f.type}`{' (JSON text)' if f.name in as_json else ''} |"
                       for f in table.schema)
    card = (
        "---\n"
        "configs:\n"
        "- config_name: default\n"
        "  data_files:\n"
        f"  - split: {SPLIT}\n"
        f"    path: data/{SPLIT}-*.parquet\n"
        "---\n\n"
        f"# {title}\n\n{description}\n\n"
        f"{table.num_rows} rows, split `{SPLIT}`. Written by `structbench export --format hf`.\n\n"
        "| column | type |\n|---|---|\n"
        f"{fields}\n"
    )
    write_text_atomic(folder / "README.md", card)
    return table
