"""The SciTab release: ``dataset/sci_tab.json``, one record per claim with the table it is about.

SciTab verifies its claims against these tables, and StructFact's and SKA-Bench's generators build questions
from the same tables, so the file, its reader and its cell markers (``markup``) are described here, in the
data layer, and no benchmark reads them from another.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from structbench.core.errors import DataError
from structbench.data.datasets import DatasetSource, RemoteFile, read_data_text

COMMIT = "217cfbd71ebf39ba26a0938f0d87a9fce560e0fe"
"""Snapshot of github.com/XinyuanLu00/SciTab (2023-12-21)."""
DATA_FILE = "dataset/sci_tab.json"

SOURCE = DatasetSource(
    name="scitab",
    homepage="https://github.com/XinyuanLu00/SciTab",
    files=(
        RemoteFile(
            path=DATA_FILE,
            url=f"https://raw.githubusercontent.com/XinyuanLu00/SciTab/{COMMIT}/{DATA_FILE}",
            sha256="883843572567e6e2457870c349be83dfc2392fe4d13d89317d06ccf908d21573",
        ),
    ),
    license="MIT",
)

Label = Literal["supports", "refutes", "not enough info"]
SUPPORTS: Label = "supports"
REFUTES: Label = "refutes"
NEI: Label = "not enough info"
LABELS: tuple[Label, ...] = (SUPPORTS, REFUTES, NEI)
"""The three veracity labels, in the order of SciTab's zero-shot options A, B, C (Appendix H.1)."""


class ClaimRecord(BaseModel):
    """One claim of ``sci_tab.json`` with its table (the README's ``table_cpation`` is ``table_caption``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    claim: str
    label: Label
    paper: str
    paper_id: str
    table_id: str
    table_caption: str
    table_column_names: list[str]
    table_content_values: list[list[str]]


def read_claims(path: Path) -> list[ClaimRecord]:
    """All records of ``path``, validated; malformed input raises ``DataError`` naming the record and field."""
    try:
        raw = json.loads(read_data_text(path))
    except json.JSONDecodeError as err:
        raise DataError(f"{path}:{err.lineno}: not valid JSON: {err.msg}") from err
    if not isinstance(raw, list):
        raise DataError(f"{path}: expected a JSON list of claim records, got {type(raw).__name__}")
    records: list[ClaimRecord] = []
    seen: set[str] = set()
    for index, item in enumerate(raw):
        where = f"{path}: record {index}"
        if isinstance(item, dict) and "id" in item:
            where += f" (id {item['id']})"
        try:
            record = ClaimRecord.model_validate(item)
        except ValidationError as err:
            first = err.errors()[0]
            field = ".".join(str(p) for p in first["loc"]) or "record"
            raise DataError(f"{where}: field {field}: {first['msg']}") from None
        width = len(record.table_column_names)
        for r, row in enumerate(record.table_content_values):
            if len(row) != width:
                raise DataError(f"{where}: field table_content_values.{r}: {len(row)} cells for {width} columns")
        if record.id in seen:
            raise DataError(f"{where}: duplicate id")
        seen.add(record.id)
        records.append(record)
    return records


__all__ = [
    "COMMIT",
    "DATA_FILE",
    "LABELS",
    "NEI",
    "REFUTES",
    "SOURCE",
    "SUPPORTS",
    "ClaimRecord",
    "Label",
    "read_claims",
]
