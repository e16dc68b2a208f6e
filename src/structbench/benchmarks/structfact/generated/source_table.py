"""One source table of generated questions (``SourceTable``) and how raw cells and names become its shown form.

Where the tables come from (releases, CSV files, the synthetic world) is ``tables`` and ``synthetic``; both build
their tables here.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

MAX_ROWS = 3000
"""Rows kept per table (the first ones): evidence shows a few dozen at most, and profiling stays fast."""
NULL_CELLS = frozenset({"", "null", "NULL", "nan", "NaN", "None", "N/A", "n/a", "—", "–", "-"})
"""Source cells read as "no value"."""


@dataclass(frozen=True)
class SourceTable:
    """One table: where it comes from (the record's ``SOURCE``), name (the evidence caption), header, rows."""

    source: str
    name: str
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    """Cells with whitespace collapsed; ``""`` is no value."""
    database: str = ""
    """Tables of one database may be joined (foreign keys); defaults to ``source``."""

    @property
    def group(self) -> str:
        return self.database or self.source


def clean_cell(text: str) -> str:
    """A cell with its whitespace collapsed, or ``""`` for a null."""
    text = " ".join(text.split())
    return "" if text in NULL_CELLS else text


def display_name(raw: str) -> str:
    """A table or column name as shown: underscores as spaces, whitespace collapsed."""
    return " ".join(raw.replace("_", " ").split())


def make_table(
    source: str, name: str, header: Sequence[str], rows: Iterable[Sequence[str]], database: str = ""
) -> SourceTable:
    """A ``SourceTable`` with shown names; columns with a duplicate name are dropped, unnamed ones numbered."""
    names: list[str] = []
    keep: list[int] = []
    seen: set[str] = set()
    for j, raw in enumerate(header):
        shown = display_name(raw) or f"Column {j + 1}"
        if shown.lower() in seen:
            continue
        seen.add(shown.lower())
        names.append(shown)
        keep.append(j)
    kept_rows: list[tuple[str, ...]] = []
    for row in rows:
        if len(kept_rows) >= MAX_ROWS:
            break
        kept_rows.append(tuple(clean_cell(row[j]) if j < len(row) else "" for j in keep))
    shown = display_name(name).rstrip("# ") or "table"  # a Markdown heading drops trailing '#'
    return SourceTable(source=source, name=shown, header=tuple(names), rows=tuple(kept_rows), database=database)
