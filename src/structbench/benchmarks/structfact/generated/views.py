"""Evidence as the release writes it: which rows and columns of a source table are shown, and in what form.

A ``View`` is one table's contribution to a question's evidence. Its ``form`` says how it is written,
each form one EVIDENCE string (or one per entity) in the release's Markdown:

- ``table``: a pipe table under a ``### <table name>`` heading, cells padded as in the demo;
- ``infobox``: one two-column table per entity whose single title cell spans both columns;
- ``list``: one ``* column: value`` list per entity under a ``### <entity>`` heading;
- ``graph``: ``(entity, column, value)`` triples, one per line;
- ``text``: sentences ``The column of entity is value.``, a paragraph per entity.

The generator's lineage is the set of cells a view shows (``View.shown``): a cell that is masked (a
missing-value marker written in its place), hidden (left out of a per-entity form) or outside the
view's rows and columns is not in the evidence. ``Evidence.strings`` fails (``Unrenderable``) when a
form cannot state its facts so that they read back unchanged (a comma in a triple's subject, say).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from structbench.backends.tokens import TokenCounter
from structbench.benchmarks.structfact.generated.claims import ABBREVIATIONS
from structbench.benchmarks.structfact.generated.profile import Column, Profile

Form = Literal["table", "infobox", "list", "graph", "text"]


class Unrenderable(Exception):
    """The evidence cannot be written so that it reads back as the generator means it."""


def sentence(column: str, entity: str, value: str) -> str:
    """How ``text`` views state one fact."""
    return f"The {column} of {entity} is {value}."


@dataclass
class View:
    """Rows and columns of one source table shown in one form."""

    profile: Profile
    key: Column
    """The column naming the rows (shown as a column in a table, as the subject elsewhere)."""
    rows: list[int]
    """Source rows in display order; their ``key`` values are distinct."""
    columns: list[Column]
    """Shown columns besides ``key``, in display order."""
    form: Form = "table"
    masked: dict[tuple[int, int], str] = field(default_factory=dict)
    """(row, column index) -> the missing-value marker written instead of the value."""
    hidden: set[tuple[int, int]] = field(default_factory=set)
    """(row, column index) facts left out of a per-entity form."""
    abbreviations: dict[int, str] = field(default_factory=dict)
    """Column index -> abbreviated header (table form; spelled out in an ``Abbreviations`` list)."""

    @property
    def name(self) -> str:
        return self.profile.name

    def text(self, row: int, column: Column) -> str:
        return self.profile.cell(row, column)

    def shown(self, row: int, column: Column) -> bool:
        """Whether the evidence states this cell's value: the cell is in one of the view's rows and in its key or
        one of its columns, and is ``stated`` there."""
        return (row in self.rows and (column is self.key or column in self.columns)
                and self.stated(row, column.index))

    def stated(self, row: int, index: int) -> bool:
        """Whether the evidence states the cell (row, column index) of one of the view's rows and columns: it is
        filled and, unless it is the key's, neither masked nor hidden. ``shown`` with the membership known, so
        ``shown_rows`` and ``facts``, which walk the view's own rows and columns, skip its two list searches."""
        return bool(self.profile.table.rows[row][index]) and (
            index == self.key.index or ((row, index) not in self.masked and (row, index) not in self.hidden))

    def shown_rows(self, column: Column) -> set[int]:
        """The rows whose ``column`` cell the evidence states (``shown`` of every row at once)."""
        if column is not self.key and column not in self.columns:
            return set()
        stated, j = self.stated, column.index
        return {r for r in self.rows if stated(r, j)}

    def facts(self) -> list[tuple[str, str, str]]:
        """(entity, column, value) of every value shown besides the key (``shown``, for the view's own rows and
        columns: the rendering's inner loop)."""
        cells, key, stated = self.profile.table.rows, self.key.index, self.stated
        out = []
        for r in self.rows:
            row = cells[r]
            for c in self.columns:
                if stated(r, c.index):
                    out.append((row[key], c.name, row[c.index]))
        return out

    # --- rendering --------------------------------------------------------------------------------

    def strings(self) -> list[str]:
        """The view's EVIDENCE strings."""
        return {
            "table": self._table,
            "infobox": self._infoboxes,
            "list": self._lists,
            "graph": self._graph,
            "text": self._text,
        }[self.form]()

    def _cell(self, row: int, column: Column) -> str:
        return self.masked.get((row, column.index), self.text(row, column))

    def _table(self) -> list[str]:
        columns = [self.key, *self.columns]
        header = [self.abbreviations.get(c.index, c.name) for c in columns]
        body = [[self._cell(r, c) for c in columns] for r in self.rows]
        out = [f"### {_heading(self.name)}\n{pipe_table(header, body)}"]
        if self.abbreviations:
            items = []
            for c in columns:
                if c.index in self.abbreviations:
                    abbreviation = self.abbreviations[c.index]
                    if ": " in abbreviation or abbreviation.endswith(":"):
                        raise Unrenderable(f"abbreviation {abbreviation!r}")
                    items.append(f"* {abbreviation}: {c.name}")
            out.append(f"### {ABBREVIATIONS}\n" + "\n".join(items))
        return out

    def _infoboxes(self) -> list[str]:
        out = []
        for r in self.rows:
            lines = [[c.name, self._cell(r, c)] for c in self.columns if (r, c.index) not in self.hidden]
            title = _escape(self.text(r, self.key))
            body = "\n".join(f"| {_escape(k)} | {_escape(v)} |" for k, v in lines)
            out.append(f"| {title} |\n| --- | --- |\n{body}")
        return out

    def _lists(self) -> list[str]:
        out = []
        for r in self.rows:
            items = []
            for c in self.columns:
                if self.shown(r, c):
                    if ": " in c.name or c.name.endswith(":"):
                        raise Unrenderable(f"column {c.name!r} in a list")
                    items.append(f"* {c.name}: {self.text(r, c)}")
            if items:
                out.append(f"### {_heading(self.text(r, self.key))}\n" + "\n".join(items))
        return out

    def _graph(self) -> list[str]:
        lines = []
        for entity, column, value in self.facts():
            if _TRIPLE_PART.search(entity) or _TRIPLE_PART.search(column) or "(" in value or ")" in value:
                raise Unrenderable(f"triple ({entity}, {column}, {value})")
            lines.append(f"({entity}, {column}, {value})")
        return ["\n".join(lines)] if lines else []

    def _text(self) -> list[str]:
        paragraphs: dict[str, list[str]] = {}
        for entity, column, value in self.facts():
            if ". " in value or value.endswith("."):
                raise Unrenderable(f"sentence value {value!r}")
            paragraphs.setdefault(entity, []).append(sentence(column, entity, value))
        return ["\n".join(" ".join(p) for p in paragraphs.values())] if paragraphs else []


_TRIPLE_PART = re.compile(r"[,()]")


def _escape(text: str) -> str:
    return text.replace("|", "\\|")


def _heading(text: str) -> str:
    if text != text.rstrip("#") or not text.strip():
        raise Unrenderable(f"heading {text!r}")
    return text


def pipe_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A Markdown pipe table padded to column width, as the demo's tables are."""
    cells = [[_escape(h) for h in header], *[[_escape(c) for c in row] for row in rows]]
    widths = [max(3, *(len(row[j]) for row in cells)) for j in range(len(header))]

    def line(row: Sequence[str]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) + " |"

    return "\n".join([line(cells[0]), line(["-" * w for w in widths]), *(line(r) for r in cells[1:])])


@dataclass
class Evidence:
    """A question's views, in order; text views come last unless ``text_first``."""

    views: list[View]
    text_first: bool = False

    def ordered(self) -> list[View]:
        texts = [v for v in self.views if v.form == "text"]
        others = [v for v in self.views if v.form != "text"]
        return [*texts, *others] if self.text_first else [*others, *texts]

    def strings(self) -> list[str]:
        """The EVIDENCE list; raises ``Unrenderable`` when a fact would not read back unchanged."""
        self._check_names()
        return [s for v in self.ordered() for s in v.strings()]

    def structured_strings(self) -> list[str]:
        """The evidence without its text (the release's NEW_EVIDENCE)."""
        return [s for v in self.ordered() if v.form != "text" for s in v.strings()]

    def _check_names(self) -> None:
        captions = [v.name for v in self.views if v.form == "table"]
        if len(set(captions)) != len(captions):
            raise Unrenderable("two tables with one caption")
        stated: dict[tuple[str, str], str] = {}
        sentences: list[str] = []
        for v in self.views:
            keys = [v.text(r, v.key) for r in v.rows]
            if len(set(keys)) != len(keys):
                raise Unrenderable(f"{v.name}: an entity named twice")
            for entity, column, value in v.facts():
                if stated.setdefault((entity, column), value) != value:
                    raise Unrenderable(f"two values for ({entity}, {column})")
                if v.form == "text":
                    sentences.append(sentence(column, entity, value))
        if sentences:
            paragraph = " ".join(sentences)
            for s in sentences:
                if paragraph.count(s[: s.rindex(" is ") + 4]) != 1:
                    raise Unrenderable(f"sentence start {s!r} is ambiguous")

    def tokens(self, counter: TokenCounter) -> int:
        """Tokens of the evidence as a prompt joins it."""
        return counter.count("\n".join(s.strip() for s in self.strings()))
