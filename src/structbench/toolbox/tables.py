"""A sample's tables as the tools see them: a name SQL and Python can use, unique column names, the cells as text."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from structbench.data.csvdb import column_key

_IDENTIFIER = re.compile(r"[^0-9a-z_]+")


def table_names(count: int) -> list[str]:
    """Names for a sample's ``count`` tables: ``t`` for one, ``t1``, ``t2`` ... for several."""
    return ["t"] if count == 1 else [f"t{i + 1}" for i in range(count)]


def column_names(header: Sequence[str]) -> list[str]:
    """The header as unique column names: trimmed and lower-cased (as ``csvdb`` folds them), an empty one named
    ``column_N``, a repeated one numbered (``score``, ``score_2``)."""
    names: list[str] = []
    seen: set[str] = set()
    for j, title in enumerate(header):
        base = column_key(str(title)) or f"column_{j + 1}"
        name, k = base, 2
        while name in seen:
            name, k = f"{base}_{k}", k + 1
        seen.add(name)
        names.append(name)
    return names


def python_name(name: str) -> str:
    """``name`` as a Python identifier (a table's DataFrame variable)."""
    text = _IDENTIFIER.sub("_", name.lower()).strip("_") or "table"
    return f"t_{text}" if text[0].isdigit() else text


@dataclass(frozen=True)
class NamedTable:
    """One table a tool queries: its name, unique column names, and its cells as text (None: empty)."""

    name: str
    header: list[str]
    rows: list[list[str | None]]
    title: str | None = None
    """A caption shown with the schema (SciTab's), never queried."""
    display: list[str] = field(default_factory=list)
    """The header as written, where it differs from the column names."""

    @classmethod
    def of(cls, name: str, header: Sequence[str], rows: Sequence[Sequence[object]], title: str | None = None
           ) -> NamedTable:
        """A table whose header may repeat or leave names empty (``column_names``), rows padded or cut to it."""
        columns = column_names(header)
        width = len(columns)
        cells = [[None if v is None else str(v) for v in list(row)[:width]] + [None] * (width - len(row))
                 for row in rows]
        shown = [str(h).strip() for h in header]
        return cls(name=name, header=columns, rows=cells, title=title,
                   display=shown if shown != columns else [])

    def csv_text(self) -> str:
        """The table as CSV (header first): what a Python program reads into a DataFrame."""
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(self.header)
        writer.writerows(["" if v is None else v for v in row] for row in self.rows)
        return out.getvalue()
