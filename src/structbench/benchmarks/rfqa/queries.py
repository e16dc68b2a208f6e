"""Read ``dataset/RelationalFactQA.csv``: one query per line, semicolon separated, 24 columns."""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path

from structbench.core.errors import DataError
from structbench.data.datasets import read_data_text

COLUMNS = (
    "q_id",
    "dataset",
    "db_id",
    "SQL",
    "question",
    "tuples",
    "attrs",
    "attr numerical",
    "attr categorical",
    "tables",
    "numerical conditions",
    "categorical conditions",
    "aggr",
    "join",
    "distinct",
    "group by",
    "limit",
    "order by",
    "nested",
    "like",
    "attr num & cat",
    "con num & cat",
    "cells",
    "backlinks",
)
"""The header of the release's CSV (Appendix B describes each field)."""
METADATA = COLUMNS[5:]
"""The numeric metadata columns (empty cells become None)."""


@dataclass(frozen=True)
class Query:
    """One RFQA item as released: the NL question, its SQL and the annotated metadata."""

    qid: str
    dataset: str
    """Source corpus: bird, galois, spider1 or qatch."""
    db_id: str
    sql: str
    question: str
    metadata: dict[str, int | None] = field(default_factory=dict)
    """The CSV's metadata columns by their header name (``tuples``, ``attrs``, ``aggr`` ...)."""
    line: int = 0

    @property
    def tuples(self) -> int | None:
        """The expected number of output tuples, as annotated."""
        return self.metadata.get("tuples")


def _int(value: str, path: Path, line: int, column: str) -> int | None:
    value = value.strip()
    if value == "":
        return None
    try:
        return int(float(value))
    except ValueError:
        raise DataError(f"{path}:{line}: column {column!r} is not a number: {value!r}") from None


def read_queries(path: Path) -> list[Query]:
    """All queries in the file, in order; malformed lines raise ``DataError`` naming the line."""
    text = read_data_text(path, "utf-8-sig")
    reader = csv.reader(text.splitlines(), delimiter=";")
    header = next(reader, None)
    if header is None or tuple(h.strip() for h in header) != COLUMNS:
        raise DataError(f"{path}:1: unexpected header {header!r}; expected {';'.join(COLUMNS)}")
    queries: list[Query] = []
    seen: set[str] = set()
    for row in reader:
        line = reader.line_num
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(COLUMNS):
            raise DataError(f"{path}:{line}: expected {len(COLUMNS)} fields, found {len(row)}")
        rec = dict(zip(COLUMNS, row, strict=True))
        qid = rec["q_id"].strip()
        if not qid or qid in seen:
            raise DataError(f"{path}:{line}: missing or duplicate q_id {qid!r}")
        seen.add(qid)
        if not rec["SQL"].strip():
            raise DataError(f"{path}:{line}: {qid} has no SQL")
        queries.append(
            Query(
                qid=qid,
                dataset=rec["dataset"].strip(),
                db_id=rec["db_id"].strip(),
                sql=rec["SQL"].strip(),
                question=rec["question"].strip(),
                metadata={c: _int(rec[c], path, line, c) for c in METADATA},
                line=line,
            )
        )
    return queries
