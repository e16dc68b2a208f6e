"""The independent check: a question's label re-derived from its EVIDENCE strings and QUERY alone.

This evaluator shares nothing with the generator but the claim format's semantics (``claims.py``): it
parses the evidence with the benchmark's own reader (``structfact.evidence.parse_evidence``, as every
strategy sees it), finds values the way a careful reader would (Markdown tables by caption and header,
infoboxes, ``column: value`` lists, triples, sentences), and evaluates the plain JSON claim in Python.
The generator instead executes SQL over the cells it chose to show. A question whose two labels differ
is a bug in one of them; ``Ambiguous`` means the evidence states two values for one fact.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from structbench.benchmarks.structfact.evidence import parse_evidence
from structbench.benchmarks.structfact.generated.claims import ABBREVIATIONS, MISSING_MARKERS
from structbench.benchmarks.structfact.loader import LABELS
from structbench.data.evidence import Graph, ItemList, Table, Text

YES, NO, NEI = LABELS
_DATE_FORMATS = ("%Y-%m-%d", "%b %d, %Y", "%B %d, %Y", "%d %B %Y")
_DIGITS = re.compile(r"\d+(\.\d+)?")
_FULL_STOP = re.compile(r"\.(?=\s|$)")
_ORDER: dict[str, Callable[[Any, Any], bool]] = {
    "<": lambda a, b: a < b,
    ">": lambda a, b: a > b,
    "<=": lambda a, b: a <= b,
    ">=": lambda a, b: a >= b,
    "=": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
}


class Ambiguous(Exception):
    """The evidence states two different values for one fact, or a superlative is tied."""


def read_number(value: Any) -> float | None:
    """A number, or a cell read as one (``-$1,234.5``, ``+0.2%``); None when it is not one."""
    if isinstance(value, int | float):
        return float(value)
    if not isinstance(value, str):
        return None
    text = value.strip()
    negative = text.startswith("-")
    text = text.lstrip("+-").removeprefix("$").removesuffix("%").replace(",", "")
    if not _DIGITS.fullmatch(text):
        return None
    return -float(text) if negative else float(text)


def read_date(value: Any) -> str | None:
    """A date cell as ISO ``YYYY-MM-DD``; None when it is not one."""
    if not isinstance(value, str):
        return None
    for fmt in _DATE_FORMATS:
        try:
            return datetime.strptime(value.strip(), fmt).date().isoformat()
        except ValueError:
            continue
    return None


class Reader:
    """What a question's evidence states, read from its strings."""

    def __init__(self, strings: Sequence[str]) -> None:
        pieces = [piece for s in strings for piece in parse_evidence(s)]
        self.tables: list[Table] = []
        self.boxes: list[Table] = []
        self.lists: list[ItemList] = []
        self.triples: list[tuple[str, str, str]] = []
        texts: list[str] = []
        self.legend: dict[str, str] = {}
        for piece in pieces:
            if isinstance(piece, Table):
                (self.boxes if not any(piece.header) else self.tables).append(piece)
            elif isinstance(piece, ItemList):
                if piece.title == ABBREVIATIONS:
                    for item in piece.items:
                        short, _, full = item.partition(": ")
                        self.legend[short] = full
                else:
                    self.lists.append(piece)
            elif isinstance(piece, Graph):
                self.triples.extend(piece.triples)
            elif isinstance(piece, Text):
                texts.append(piece.text)
        self.text = "\n".join(texts)

    # --- finding values ---------------------------------------------------------------------------

    def column(self, table: Table, name: str) -> int | None:
        """The position of column ``name`` in ``table`` (its header, or an abbreviation of it)."""
        found = [j for j, h in enumerate(table.header) if h == name or self.legend.get(h) == name]
        if len(found) > 1:
            raise Ambiguous(f"two columns {name!r}")
        return found[0] if found else None

    def table(self, caption: str) -> Table | None:
        found = [t for t in self.tables if t.caption == caption]
        if len(found) > 1:
            raise Ambiguous(f"two tables captioned {caption!r}")
        return found[0] if found else None

    def cell(self, caption: str, key: str, entity: str, column: str) -> str | None:
        """The value of ``column`` for ``entity`` wherever the evidence states it (None: nowhere)."""
        values: list[str] = []
        for table in self.tables:
            if table.caption != caption:
                continue
            k, c = self.column(table, key), self.column(table, column)
            if k is not None and c is not None:
                values += [row[c] for row in table.rows if row[k] == entity]
        for box in self.boxes:
            if box.caption == entity:
                values += [row[1] for row in box.rows if row[0] == column]
        for items in self.lists:
            if items.title == entity:
                values += [item[len(column) + 2 :] for item in items.items if item.startswith(column + ": ")]
        values += [o for s, r, o in self.triples if s == entity and r == column]
        if self.text:
            values += self.sentences(f"The {column} of {entity} is ")
        known = {v.strip() for v in values} - MISSING_MARKERS
        if len(known) > 1:
            raise Ambiguous(f"{entity!r} has {column!r} {sorted(known)}")
        return known.pop() if known else None

    def sentences(self, start: str) -> list[str]:
        """What follows ``start`` up to the sentence's full stop, in every sentence of the text beginning so."""
        found, at = [], self.text.find(start)
        while at >= 0:
            if at == 0 or self.text[at - 1].isspace():
                rest = self.text[at + len(start) :]
                stop = _FULL_STOP.search(rest)
                if stop is not None:
                    found.append(rest[: stop.start()])
            at = self.text.find(start, at + 1)
        return found

    def whole_column(self, caption: str, column: str, key: str | None = None) -> list[tuple[str, float]] | None:
        """(key, number) of every row of the table, or None if the column is absent or any value missing."""
        table = self.table(caption)
        if table is None or not table.rows:
            return None
        c = self.column(table, column)
        k = self.column(table, key) if key is not None else c
        if c is None or k is None:
            return None
        numbers = [(row[k], read_number(row[c])) for row in table.rows]
        if any(n is None for _, n in numbers):
            return None
        return [(name, n) for name, n in numbers if n is not None]

    # --- evaluating -------------------------------------------------------------------------------

    def value(self, node: Mapping[str, Any]) -> Any:
        op = node["op"]
        if op == "const":
            return node["value"]
        if op == "cell":
            entity = self.value(node["entity"])
            if entity is None:
                return None
            if isinstance(entity, float) and entity.is_integer():
                entity = str(int(entity))
            return self.cell(node["table"], node["key"], str(entity), node["column"])
        if op == "year":
            inner = self.value(node["of"])
            date = read_date(inner)
            if date is not None:
                return int(date[:4])
            number = read_number(inner)
            return int(number) if number is not None else None
        if op == "arith":
            left, right = read_number(self.value(node["left"])), read_number(self.value(node["right"]))
            if left is None or right is None:
                return None
            if node["fn"] == "sub":
                return left - right
            if node["fn"] == "absdiff":
                return abs(left - right)
            return None if right == 0 else left * 100.0 / right
        if op in ("aggregate", "count"):
            rows = self.whole_column(node["table"], node["column"])
            if rows is None:
                return None
            numbers = [n for _, n in rows]
            if op == "count":
                return float(sum(1 for n in numbers if _ORDER[node["cmp"]](n, node["value"])))
            fn = node["fn"]
            if fn == "sum":
                return math.fsum(numbers)
            if fn == "avg":
                return math.fsum(numbers) / len(numbers)
            return max(numbers) if fn == "max" else min(numbers)
        if op == "best":
            rows = self.whole_column(node["table"], node["column"], node["key"])
            if rows is None:
                return None
            extreme = (max if node["fn"] == "max" else min)(n for _, n in rows)
            winners = [name for name, n in rows if n == extreme]
            if len(winners) > 1:
                raise Ambiguous(f"tie for the {node['fn']} of {node['column']!r}: {winners}")
            return winners[0]
        raise ValueError(f"unknown value op {op!r}")

    def truth(self, claim: Mapping[str, Any]) -> bool | None:
        """True, False or None (unknown) for a claim."""
        if claim["op"] == "and":
            parts = [self.truth(p) for p in claim["parts"]]
            if any(p is False for p in parts):
                return False
            return None if any(p is None for p in parts) else True
        if claim["op"] != "compare":
            raise ValueError(f"unknown claim op {claim['op']!r}")
        left, right = self.value(claim["left"]), self.value(claim["right"])
        kind, cmp = claim["kind"], claim["cmp"]
        if kind == "number":
            a, b = read_number(left), read_number(right)
            if a is None or b is None:
                return None
            if cmp in ("=", "!="):
                return (abs(a - b) <= claim.get("tol", 0.0)) == (cmp == "=")
            return _ORDER[cmp](a, b)
        if kind == "date":
            a_date, b_date = read_date(left), read_date(right)
            return None if a_date is None or b_date is None else _ORDER[cmp](a_date, b_date)
        if left is None or right is None:
            return None
        return _ORDER[cmp](str(left), str(right))


def verify(evidence: Sequence[str], query: Mapping[str, Any]) -> str:
    """The label (``YES``, ``NO`` or ``NOT SURE ENOUGH``) of ``query`` over ``evidence``."""
    truth = Reader(evidence).truth(query)
    return NEI if truth is None else YES if truth else NO
