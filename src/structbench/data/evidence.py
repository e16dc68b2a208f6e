"""Structured evidence: the knowledge a question is asked over, kept typed so it can be re-serialized."""

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field


class _Evidence(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


class Table(_Evidence):
    """A relational table: the header is kept apart from the rows."""

    kind: Literal["table"] = "table"
    header: list[str]
    """Column names, in order."""
    rows: list[list[str]]
    """Cell values as strings, one list per row, aligned with ``header``."""
    caption: str | None = None
    """Caption or title shown with the table (SciTab keeps the paper's caption here)."""


class Graph(_Evidence):
    """A knowledge graph as (subject, relation, object) triples."""

    kind: Literal["graph"] = "graph"
    triples: list[tuple[str, str, str]]


class ItemList(_Evidence):
    """An ordered list of items (StructFact's list evidence)."""

    kind: Literal["list"] = "list"
    items: list[str]
    title: str | None = None


class Tree(_Evidence):
    """A tree (or forest) as parent -> child edges; every node without a parent is a root."""

    kind: Literal["tree"] = "tree"
    edges: list[tuple[str, str]]


class Text(_Evidence):
    """Free text (a paragraph, a passage, a verbalized row)."""

    kind: Literal["text"] = "text"
    text: str


class StructuredText(_Evidence):
    """Raw structure-rich text in a named language (json, yaml, xml, csv, tree, markdown, latex, org)."""

    kind: Literal["structured_text"] = "structured_text"
    language: str
    text: str


Evidence = Annotated[
    Table | Graph | ItemList | Tree | Text | StructuredText,
    Field(discriminator="kind"),
]
"""Any one piece of evidence; the ``kind`` field tells which."""
