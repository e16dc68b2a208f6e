"""StructFact's EVIDENCE strings -> typed evidence (tables, lists, graphs, text) that can be re-serialized.

An EVIDENCE entry is Markdown as crawled from Wikipedia: pipe tables (regular ones, and infoboxes whose
first row is a single title cell), ``* item`` lists, and free text, sometimes mixed in one string. Each
string is cut into blocks of consecutive lines of one kind:

- **table**: lines starting with ``|``. The second line must be a separator (``| --- | :-: |``); its cell
  count is the column count. A first row with another cell count is a title row and becomes the caption
  (cells joined by `` | ``), with untitled columns (``""``). Short rows are padded with ``""``; surplus
  empty cells are dropped. A block that does not fit (no separator, surplus non-empty cells) stays
  Markdown text (``StructuredText("markdown")``), so nothing is lost.
- **list**: lines starting with ``*``, ``-`` or ``+`` and a space.
- **text**: anything else; a text block whose every line is ``(subject, relation, object)`` is a graph.

A Markdown heading (``# ...``) right before a table or list becomes its caption or title.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from structbench.data.evidence import Evidence, Graph, ItemList, StructuredText, Table, Text

_SEPARATOR_CELL = re.compile(r":?-+:?")
_CELL_SPLIT = re.compile(r"(?<!\\)\|")
_BULLET = re.compile(r"^\s*[*+-]\s+(.*)$")
_HEADING = re.compile(r"^\s*#{1,6}\s+(.*?)\s*#*\s*$")
_TRIPLE = re.compile(r"^\s*\(\s*([^,()]+?)\s*,\s*([^,()]+?)\s*,\s*([^()]+?)\s*\)\s*$")


def split_cells(line: str) -> list[str]:
    """The cells of one pipe-table line, stripped; ``\\|`` is a literal pipe inside a cell."""
    body = line.strip()
    if body.startswith("|"):
        body = body[1:]
    if body.endswith("|") and not body.endswith("\\|"):
        body = body[:-1]
    if "\\" not in body:  # no escaped pipe: a plain split (most lines; the pattern's split costs twice as much)
        return [cell.strip() for cell in body.split("|")]
    return [cell.strip().replace("\\|", "|") for cell in _CELL_SPLIT.split(body)]


def parse_table(lines: Sequence[str], heading: str | None = None) -> Table | None:
    """A pipe table from its lines, or None when they do not form one (see the module docstring)."""
    if len(lines) < 2:
        return None
    separator = split_cells(lines[1])
    if not all(_SEPARATOR_CELL.fullmatch(cell) for cell in separator):
        return None
    width = len(separator)
    first = split_cells(lines[0])
    title: str | None = None
    if len(first) == width:
        header = first
    else:
        header = [""] * width
        title = " | ".join(cell for cell in first if cell) or None
    rows = []
    for line in lines[2:]:
        cells = split_cells(line)
        if len(cells) > width:
            if any(cells[width:]):
                return None
            cells = cells[:width]
        rows.append(cells + [""] * (width - len(cells)))
    caption = "\n".join(part for part in (heading, title) if part) or None
    return Table(header=header, rows=rows, caption=caption)


def _kind(line: str) -> str:
    stripped = line.strip()
    if stripped.startswith("|"):
        return "table"
    if _BULLET.match(line):
        return "list"
    if _HEADING.match(line):
        return "heading"
    return "blank" if not stripped else "text"


def _text(lines: list[str]) -> Evidence | None:
    body = "\n".join(lines).strip()
    if not body:
        return None
    triples = [_TRIPLE.match(line) for line in body.splitlines() if line.strip()]
    if all(triples):
        return Graph(triples=[(m.group(1), m.group(2), m.group(3)) for m in triples if m])
    return Text(text=body)


def parse_evidence(raw: str) -> list[Evidence]:
    """Typed pieces of one EVIDENCE string, in order."""
    lines = raw.strip("\n").splitlines()
    pieces: list[Evidence] = []
    pending: list[str] = []  # text lines not yet emitted (a heading waits here for what follows it)

    def flush(keep_last_heading: bool) -> str | None:
        heading = None
        if keep_last_heading and pending and _HEADING.match(pending[-1]):
            match = _HEADING.match(pending.pop())
            heading = match.group(1) if match else None
        piece = _text(pending)
        if piece is not None:
            pieces.append(piece)
        pending.clear()
        return heading

    kinds = [_kind(line) for line in lines]
    i = 0
    while i < len(lines):
        kind = kinds[i]
        if kind not in ("table", "list"):
            pending.append(lines[i])
            i += 1
            continue
        j = i
        while j < len(lines) and kinds[j] == kind:
            j += 1
        block = lines[i:j]
        heading = flush(keep_last_heading=True)
        if kind == "table":
            table = parse_table(block, heading)
            if table is not None:
                pieces.append(table)
            else:
                head = [f"# {heading}"] if heading else []
                pieces.append(StructuredText(language="markdown", text="\n".join([*head, *block])))
        else:
            items = [m.group(1).strip() for m in map(_BULLET.match, block) if m]
            pieces.append(ItemList(items=items, title=heading))
        i = j
    flush(keep_last_heading=False)
    return pieces


def structure_of(pieces: Sequence[Evidence]) -> str:
    """The kinds of evidence present, e.g. ``list+table``, for per-structure breakdowns."""
    kinds = sorted({"text" if p.kind == "structured_text" else p.kind for p in pieces})
    return "+".join(kinds) or "none"
