"""``export --format parquet|hf``: export lines as a typed Arrow table, a Parquet file, or a Hugging Face
``datasets`` folder that ``datasets.load_dataset(FOLDER)`` reads.

Each field of the export lines becomes a column whose Arrow type is inferred from all rows (strings, numbers,
lists, structs such as the chat ``prompt`` and the ``gold``); a field whose rows disagree on a type (a table cell
that is a number in one row and a string in another) is kept as a JSON string column, and the dataset card lists
those columns. Parquet has no struct without fields, so an empty mapping (an export without options) is null.

The files are written ``BATCH`` rows (one row group) at a time: the lines go once to a temporary JSON-lines file,
each column's type is unified over the batches, and the batches are read back and written with that type, so an
export of any size is written in bounded memory.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import pyarrow as pa
import pyarrow.parquet as pq

from structbench.core.atomic import atomic_path, write_text_atomic

SPLIT = "test"
"""The one split of an exported benchmark variant: evaluation data."""
BATCH = 2048
"""Rows of a Parquet row group, and of what is held at once while writing."""


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


def _column(values: list[Any], kind: pa.DataType | None = None) -> pa.Array | None:
    """``values`` as an Arrow array (of type ``kind``, else inferred, all-null types made strings); None when they
    share no type Parquet can write."""
    try:
        array = pa.array(values, type=kind)
        if kind is None:
            array = array.cast(_no_nulls(array.type))
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, OverflowError):
        return None
    return array if _storable(array.type) else None


def _as_json(values: list[Any]) -> pa.Array:
    return pa.array([None if v is None else json.dumps(v, ensure_ascii=False, sort_keys=True) for v in values],
                    type=pa.string())


def to_table(lines: Iterable[dict[str, Any]]) -> tuple[pa.Table, list[str]]:
    """The lines as a table (columns in first-seen order) and the names of the columns kept as JSON text."""
    rows = list(lines)
    names = list(dict.fromkeys(k for row in rows for k in row))
    columns, as_json = [], []
    for name in names:
        values = [_empty_maps_as_null(row.get(name)) for row in rows]
        array = _column(values)
        if array is None:
            array = _as_json(values)
            as_json.append(name)
        columns.append(array)
    return pa.table(columns, names=names), as_json


@dataclass
class Written:
    """What a streamed write wrote: the schema, the columns kept as JSON text, the rows."""

    schema: pa.Schema
    as_json: list[str]
    rows: int


class _Spill:
    """The lines in a temporary JSON-lines file (empty mappings already null), read back ``BATCH`` at a time."""

    def __init__(self, lines: Iterable[dict[str, Any]], fh: IO[bytes]) -> None:
        self.fh = fh
        self.names: dict[str, None] = {}
        self.rows = 0
        for line in lines:
            self.names.update(dict.fromkeys(line))
            fh.write(json.dumps(_empty_maps_as_null(line), ensure_ascii=False).encode() + b"\n")
            self.rows += 1

    def batches(self) -> Iterator[list[dict[str, Any]]]:
        self.fh.seek(0)
        batch: list[dict[str, Any]] = []
        for raw in self.fh:
            batch.append(json.loads(raw))
            if len(batch) == BATCH:
                yield batch
                batch = []
        if batch:
            yield batch


def _schema(spill: _Spill) -> tuple[pa.Schema, list[str]]:
    """Each column's type as inferred from all rows: inferred per batch, then unified (null with anything, ints
    with floats, structs' fields merged); a column whose batches share none, or one Parquet cannot write, is JSON
    text."""
    kinds: dict[str, list[pa.DataType]] = {name: [] for name in spill.names}
    as_json: set[str] = set()
    for batch in spill.batches():
        for name in spill.names:
            if name not in as_json:
                try:
                    kinds[name].append(pa.array([row.get(name) for row in batch]).type)
                except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, OverflowError):
                    as_json.add(name)
    fields = []
    for name in spill.names:
        kind: pa.DataType = pa.string()
        if name not in as_json:
            try:
                kind = _no_nulls(pa.unify_schemas([pa.schema([pa.field(name, k)]) for k in kinds[name]],
                                                  promote_options="permissive").field(name).type)
            except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
                as_json.add(name)
            if not _storable(kind):
                as_json.add(name)
        fields.append(pa.field(name, pa.string() if name in as_json else kind))
    return pa.schema(fields), [name for name in spill.names if name in as_json]


class _Retry(Exception):
    """A batch's column does not take the unified type: write the file again with the column as JSON text."""


def _write_batches(spill: _Spill, path: Path) -> Written:
    """The spilled lines as one Parquet file, a row group per batch."""
    schema, as_json = _schema(spill)
    while True:
        try:
            with atomic_path(path) as tmp, pq.ParquetWriter(tmp, schema) as writer:
                for batch in spill.batches():
                    columns = []
                    for f in schema:
                        values = [row.get(f.name) for row in batch]
                        array = _as_json(values) if f.name in as_json else _column(values, f.type)
                        if array is None:
                            raise _Retry(f.name)
                        columns.append(array)
                    writer.write_table(pa.Table.from_arrays(columns, schema=schema))
            return Written(schema, as_json, spill.rows)
        except _Retry as retry:
            name = str(retry)
            as_json.append(name)
            schema = schema.set(schema.get_field_index(name), pa.field(name, pa.string()))


def write_lines(lines: Iterable[dict[str, Any]], path: Path) -> Written:
    """The lines as one Parquet file, written ``BATCH`` rows at a time (see the module); a temporary name first, so
    a failure leaves nothing half-written."""
    with tempfile.TemporaryFile() as fh:
        return _write_batches(_Spill(lines, fh), path)


def read_parquet(path: Path) -> list[dict[str, Any]]:
    """The rows of a Parquet file as dicts; a file Parquet cannot read is a ``DataError`` naming it."""
    from structbench.core.errors import DataError

    try:
        return list(pq.read_table(path).to_pylist())
    except (pa.ArrowException, OSError) as err:
        raise DataError(f"{path}: not a readable Parquet file ({err})") from None


def write_parquet(lines: Iterable[dict[str, Any]], path: Path) -> Written:
    """One Parquet file, written a row group at a time; a temporary name first, so a failure leaves nothing
    half-written."""
    return write_lines(lines, path)


def write_hf_dataset(lines: Iterable[dict[str, Any]], folder: Path, *, title: str, description: str) -> Written:
    """A ``datasets`` folder: ``data/test-00000-of-00001.parquet`` and a dataset card (``README.md``) whose
    header names the split, so ``datasets.load_dataset(str(folder))`` loads it without a script."""
    written = write_lines(lines, folder / "data" / f"{SPLIT}-00000-of-00001.parquet")
    fields = "\n".join(f"| `{f.name}` | `{f.type}`{' (JSON text)' if f.name in written.as_json else ''} |"
                       for f in written.schema)
    card = (
        "---\n"
        "configs:\n"
        "- config_name: default\n"
        "  data_files:\n"
        f"  - split: {SPLIT}\n"
        f"    path: data/{SPLIT}-*.parquet\n"
        "---\n\n"
        f"# {title}\n\n{description}\n\n"
        f"{written.rows} rows, split `{SPLIT}`. Written by `structbench export --format hf`.\n\n"
        "| column | type |\n|---|---|\n"
        f"{fields}\n"
    )
    write_text_atomic(folder / "README.md", card)
    return written
