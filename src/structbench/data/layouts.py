"""The table serializations HELM's ToRR study uses that structbench lacked: indexed row-major text, a pandas
DataFrame (printed, and as the code that builds it) and plain concatenation. The three ToRR has are written as
unitxt writes them for ToRR (``struct_data_operators``), byte for byte, for every table with a header.

``serialize`` registers them beside CSV, JSON, HTML, XML and triples, so every benchmark's ``serialization`` option
offers them. Conventions as in ``formats``: free text passes through; a caption (list title) is a line before the
data; a header made only of empty strings is left out where the layout allows it. Lists, graphs and trees are laid
out as the tables they stand for: one titled column, subject/relation/object, parent/child.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from structbench.data.evidence import Evidence, Graph, ItemList, StructuredText, Table, Text, Tree


def as_table(evidence: Evidence) -> Table | None:
    """The table a piece of evidence stands for; None for free text (passed through as it is)."""
    if isinstance(evidence, Text | StructuredText):
        return None
    if isinstance(evidence, Table):
        return evidence
    if isinstance(evidence, ItemList):
        return Table(header=[""], rows=[[item] for item in evidence.items], caption=evidence.title)
    if isinstance(evidence, Graph):
        return Table(header=["subject", "relation", "object"], rows=[list(t) for t in evidence.triples])
    if isinstance(evidence, Tree):
        return Table(header=["parent", "child"], rows=[list(e) for e in evidence.edges])
    raise TypeError(f"no table form for {type(evidence).__name__}")


def _has_header(table: Table) -> bool:
    return any(h.strip() for h in table.header)


def _layout(render: Callable[[Table], str]) -> Callable[[Evidence], str]:
    """A serializer from a table layout: text passes through, a caption goes on the line before."""

    def serializer(evidence: Evidence) -> str:
        table = as_table(evidence)
        if table is None:
            assert isinstance(evidence, Text | StructuredText)
            return evidence.text
        body = render(table)
        return f"{table.caption}\n{body}" if table.caption else body

    serializer.__doc__ = render.__doc__
    return serializer


def _flat(value: str) -> str:
    return " ".join(value.split())


def indexed_row_major(table: Table) -> str:
    """One line: ``col : a | b row 1 : x | y row 2 : ...``, as unitxt's ``SerializeTableAsIndexedRowMajor`` writes
    it for ToRR, byte for byte (cells as they are); a table without a header has no ``col`` part (unitxt refuses
    one)."""
    parts = [f"col : {' | '.join(table.header)}"] if _has_header(table) else []
    parts += [f"row {i} : {' | '.join(row)}" for i, row in enumerate(table.rows, start=1)]
    return " ".join(parts).strip()


def concatenation(table: Table) -> str:
    """Every header name and cell in order, separated by single spaces, as unitxt's
    ``SerializeTableAsConcatenation`` writes it for ToRR, byte for byte (an empty cell leaves its two spaces)."""
    return " ".join([" ".join(table.header), *(" ".join(row) for row in table.rows)]).strip()


def _column_names(table: Table) -> list[str]:
    """Column names a DataFrame can hold: untitled columns numbered, repeated names suffixed ``_1``, ``_2``."""
    names = [h.strip() or str(j) for j, h in enumerate(table.header)]
    seen: dict[str, int] = {}
    out = []
    for name in names:
        count = seen.get(name, 0)
        seen[name] = count + 1
        out.append(f"{name}_{count}" if count else name)
    return out


def _columns(table: Table) -> list[list[str]]:
    width = len(table.header)
    return [[row[j] if j < len(row) else "" for row in table.rows] for j in range(width)]


def dataframe(table: Table) -> str:
    """The table as ``print(pandas.DataFrame(rows, columns=header))`` shows it (``DataFrame.to_string()``): the row
    index left-aligned, then every column right-aligned to its widest entry, each value with pandas' leading space."""
    names = _column_names(table)
    index = [str(i) for i in range(len(table.rows))]
    index_width = max((len(i) for i in index), default=0)
    columns = [[" " + _flat(c) for c in col] for col in _columns(table)]
    widths = [max([len(n), *(len(c) for c in col)]) for n, col in zip(names, columns, strict=True)]
    lines = [" " * index_width + "".join(f" {n:>{w}}" for n, w in zip(names, widths, strict=True))]
    for i, label in enumerate(index):
        cells = "".join(f" {col[i]:>{w}}" for col, w in zip(columns, widths, strict=True))
        lines.append(f"{label:<{index_width}}{cells}")
    return "\n".join(lines)


def _torr_names(header: list[str]) -> list[str]:
    """unitxt's names for a DataFrame's columns: a repeated name gets ``_<how many times it came before>``."""
    return [f"{name}_{header[:i].count(name)}" if header[:i].count(name) else name for i, name in enumerate(header)]


def df_loader(table: Table) -> str:
    """The pandas code that builds the table: ``pd.DataFrame({"a": [...], ...},`` then ``index=[0, 1, ...])``, as
    unitxt's ``SerializeTableAsDFLoader`` writes it for ToRR, byte for byte (JSON with non-ASCII escaped; a name
    repeated after renaming keeps its first place and its last column, as a dict of the frame's columns does)."""
    data: dict[str, list[str]] = {}
    for name, column in zip(_torr_names(table.header), _columns(table), strict=True):
        data[name] = column
    body = json.dumps(data)[1:-1]
    return f"pd.DataFrame({{\n{body}}},\nindex={list(range(len(table.rows)))})"


LAYOUTS: dict[str, Callable[[Evidence], str]] = {
    "indexed_row_major": _layout(indexed_row_major),
    "dataframe": _layout(dataframe),
    "df_loader": _layout(df_loader),
    "concat": _layout(concatenation),
}
"""The serializations this module offers; ``serialize`` registers them in ``SERIALIZERS``."""
