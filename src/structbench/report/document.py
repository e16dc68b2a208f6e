"""A report as data (sections of tables and figures), rendered by ``markdown`` and ``html`` alike."""

from __future__ import annotations

import re
from dataclasses import dataclass, field


@dataclass
class TableBlock:
    """A table of already formatted cells; ``bold`` marks cells (row, column) to emphasise."""

    columns: list[str]
    rows: list[list[str]]
    caption: str = ""
    bold: set[tuple[int, int]] = field(default_factory=set)
    note: str = ""


@dataclass
class FigureBlock:
    """A figure as SVG markup (no XML prolog), with a caption and a file stem for the Markdown twin."""

    svg: str
    caption: str
    name: str


@dataclass
class TextBlock:
    """A paragraph of plain text."""

    text: str


Block = TableBlock | FigureBlock | TextBlock


@dataclass
class Section:
    """A titled group of blocks and subsections."""

    title: str
    blocks: list[Block] = field(default_factory=list)
    children: list[Section] = field(default_factory=list)
    collapsed: bool = False
    """Shown folded in HTML (details that the tables above summarise)."""

    @property
    def anchor(self) -> str:
        return slug(self.title)


@dataclass
class Document:
    """The whole report."""

    title: str
    sections: list[Section]
    notes: list[str] = field(default_factory=list)


def slug(text: str) -> str:
    """An HTML id from a title."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "section"
