"""What a generated question asserts, as data: the record's ``QUERY`` field.

A claim is a small expression tree over the evidence. Two evaluators read it: the generator compiles it
to SQL over the rows and columns it put in the evidence (``execute.py``), and the independent check
reads it against the EVIDENCE strings alone (``verify.py``). Both follow these semantics, which are what
the label means:

- Evaluation is three-valued: a statement is true (``YES``), false (``NO``) or unknown (``NOT SURE
  ENOUGH``); ``and`` is Kleene's (false if any part is false, else unknown if any part is unknown).
- ``cell(table, key, entity, column)`` is the value of ``column`` for the entity whose ``key`` is
  ``entity``, wherever the evidence states it: a row of the Markdown table captioned ``table`` (a
  header may be an abbreviation spelled out in a list titled ``Abbreviations``), an infobox titled
  ``entity``, a list titled ``entity`` (``column: value`` items), a triple ``(entity, column, value)``,
  or a sentence ``The column of entity is value.``. It is unknown when nothing states it or the cell
  holds a missing-value marker (``MISSING_MARKERS``). ``entity`` may itself be a value (multi-hop).
- ``aggregate`` (sum, avg, max, min), ``count`` and ``best`` read every row of the Markdown table
  captioned ``table``; they are unknown when the column is absent or any row's value is missing.
  ``best`` is the ``key`` of the row with the largest (``max``) or smallest (``min``) value.
- ``year`` is the year of a date or the value of a year number; ``arith`` is ``sub`` (left - right),
  ``absdiff`` (|left - right|) or ``share`` (100 * left / right).
- ``compare`` compares as ``number`` (cells read as numbers: ``$``, ``%``, ``+`` and thousands commas
  dropped; ``=`` and ``!=`` within ``tol``), ``date`` (ISO ``YYYY-MM-DD``; cells may be written
  ``1937-12-21``, ``Dec 21, 1937``, ``December 21, 1937`` or ``21 December 1937``) or ``text`` (exact).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

Cmp = Literal["=", "!=", "<", ">", "<=", ">="]
Kind = Literal["number", "date", "text"]

MISSING_MARKERS = frozenset({"", "N/A", "n/a", "—", "–", "-"})
"""Cells that state that a value is unknown; a source cell holding one of them has no value."""
ABBREVIATIONS = "Abbreviations"
"""The title of the list that spells out abbreviated column headers (``Abbr.: column``)."""


class _Node(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Const(_Node):
    """A number or a string (text, or an ISO date)."""

    op: Literal["const"] = "const"
    value: float | str


class Cell(_Node):
    """One table cell, found by its entity."""

    op: Literal["cell"] = "cell"
    table: str
    key: str
    entity: Value
    column: str


class Aggregate(_Node):
    """A column's sum, mean, maximum or minimum over every row of a table."""

    op: Literal["aggregate"] = "aggregate"
    fn: Literal["sum", "avg", "max", "min"]
    table: str
    column: str


class Count(_Node):
    """How many rows of a table have a column value ``cmp`` ``value``."""

    op: Literal["count"] = "count"
    table: str
    column: str
    cmp: Cmp
    value: float


class Best(_Node):
    """The key of the table's row with the largest or smallest column value (a tie is an error)."""

    op: Literal["best"] = "best"
    fn: Literal["max", "min"]
    table: str
    key: str
    column: str


class Arith(_Node):
    """``sub``, ``absdiff`` or ``share`` (percent) of two numbers."""

    op: Literal["arith"] = "arith"
    fn: Literal["sub", "absdiff", "share"]
    left: Value
    right: Value


class Year(_Node):
    """The year of a date (or of a year number)."""

    op: Literal["year"] = "year"
    of: Value


Value = Annotated[Const | Cell | Aggregate | Count | Best | Arith | Year, Field(discriminator="op")]


class Compare(_Node):
    """``left cmp right`` read as ``kind``."""

    op: Literal["compare"] = "compare"
    left: Value
    cmp: Cmp
    right: Value
    kind: Kind
    tol: float = 0.0
    """Numbers within ``tol`` of each other are equal."""


class And(_Node):
    """Every part holds."""

    op: Literal["and"] = "and"
    parts: list[Claim]


Claim = Annotated[Compare | And, Field(discriminator="op")]

for _model in (Cell, Arith, Year, Compare, And):
    _model.model_rebuild()

CLAIM: TypeAdapter[Compare | And] = TypeAdapter(Claim)


def to_json(claim: Compare | And) -> dict[str, Any]:
    """The claim as a JSON object (the record's ``QUERY``)."""
    data: dict[str, Any] = claim.model_dump(mode="json")
    return data


def from_json(data: Any) -> Compare | And:
    """A claim from its JSON object; raises ``pydantic.ValidationError`` when malformed."""
    return CLAIM.validate_python(data)


def cell(table: str, key: str, entity: str | Value, column: str) -> Cell:
    return Cell(table=table, key=key, entity=Const(value=entity) if isinstance(entity, str) else entity, column=column)


def compare(left: Value, cmp: Cmp, right: Value | float | str, kind: Kind, tol: float = 0.0) -> Compare:
    target = right if isinstance(right, _Node) else Const(value=right)
    return Compare(left=left, cmp=cmp, right=target, kind=kind, tol=tol)


def tables_read_whole(claim: Compare | And | Value) -> set[str]:
    """Tables whose every row a claim reads (aggregates, counts, superlatives)."""
    found: set[str] = set()
    if isinstance(claim, Aggregate | Count | Best):
        found.add(claim.table)
    for child in _children(claim):
        found |= tables_read_whole(child)
    return found


def columns_read(claim: Compare | And | Value) -> set[tuple[str, str]]:
    """(table, column) of every column a claim reads, keys included."""
    found: set[tuple[str, str]] = set()
    if isinstance(claim, Cell | Best):
        found |= {(claim.table, claim.key), (claim.table, claim.column)}
    elif isinstance(claim, Aggregate | Count):
        found.add((claim.table, claim.column))
    for child in _children(claim):
        found |= columns_read(child)
    return found


def _children(node: Any) -> list[Any]:
    if isinstance(node, Cell):
        return [node.entity]
    if isinstance(node, Arith | Compare):
        return [node.left, node.right]
    if isinstance(node, Year):
        return [node.of]
    if isinstance(node, And):
        return list(node.parts)
    return []
