"""From a model reply to rows: JSON recovery (paper section 4 and Appendix C) and table reading.

Recovery, in order: (1) take the text between the first opening ``{``/``[`` and the matching last
closing one (the outermost braces or brackets), after dropping Markdown code fences; (2) parse it;
(3) if it is truncated (brackets still open at the end), cut back to the last complete element and
close the open brackets; (4) otherwise repair it with ``json-repair`` (missing quotes, trailing
commas, single quotes ...). A reply none of these recovers is *invalid*; the strategies then
re-prompt once for valid JSON (``prompts.INVALID_JSON``) before giving up.

Reading a table: a list of objects is the rows; an object holding a list of objects is that list; an
empty object or list is an empty answer; a single object with known attributes is one row; scalars
or lists inside a list are read by position (one attribute per value).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from structbench.benchmarks.rfqa.metrics import attribute_key
from structbench.core import untrusted

_FENCE = re.compile(r"```[a-zA-Z]*")


@dataclass(frozen=True)
class Recovered:
    """The outcome of recovery: the JSON value (None when invalid) and which step produced it."""

    value: Any
    how: str
    """``json``, ``truncated``, ``repaired`` or ``invalid``."""

    @property
    def valid(self) -> bool:
        return self.how != "invalid"


def outermost(text: str) -> str | None:
    """The text from the first ``{``/``[`` to the last ``}``/``]`` (to the end when never closed)."""
    text = _FENCE.sub("", text)
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    if not starts:
        return None
    start = min(starts)
    end = max(text.rfind("}"), text.rfind("]"))
    return text[start : end + 1] if end > start else text[start:]


def complete_truncated(text: str) -> str | None:
    """Close a JSON text cut off mid-way: keep everything up to the last element that was completed
    inside an open container, then add the missing closing brackets. None when nothing is open."""
    stack: list[str] = []
    in_string = escaped = False
    last_good = -1
    depth_at_good = 0  # after the last close only opens follow: the stack then was its first depth_at_good entries
    for i, ch in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
            continue
        if ch == '"':
            in_string = True
        elif ch in "{[":
            stack.append("}" if ch == "{" else "]")
        elif ch in "}]":
            if not stack:
                return None
            stack.pop()
            last_good, depth_at_good = i, len(stack)
    if not stack:
        return None
    if last_good < 0:
        return None
    head = text[: last_good + 1].rstrip().rstrip(",")
    return head + "".join(reversed(stack[:depth_at_good]))


def recover_json(reply: str) -> Recovered:
    """Recover the JSON value of a model reply (see the module docstring)."""
    body = outermost(reply)
    if body is None:
        return Recovered(None, "invalid")
    try:  # (a value nested more than ``untrusted.MAX_NESTING`` levels deep is a ValueError: a table nests three)
        return Recovered(untrusted.loads(body), "json")
    except ValueError:
        pass
    completed = complete_truncated(body)
    if completed is not None:
        try:
            return Recovered(untrusted.loads(completed), "truncated")
        except ValueError:
            pass
    try:
        repaired = untrusted.repaired(body)
    except ValueError:
        repaired = None
    if isinstance(repaired, dict | list) and (repaired or body.strip() in ("{}", "[]")):
        return Recovered(repaired, "repaired")
    return Recovered(None, "invalid")


def _rows_container(value: Any) -> list[Any] | None:
    if isinstance(value, list):
        return value
    if isinstance(value, dict):
        if not value:
            return []
        for v in value.values():
            if isinstance(v, list) and (not v or all(isinstance(x, dict) for x in v)):
                return v
        for v in value.values():
            if isinstance(v, dict) and (inner := _rows_container(v)) is not None and inner:
                return inner
        return [value]
    return None


def read_records(value: Any, columns: Sequence[str]) -> list[dict[str, Any]] | None:
    """The rows of a recovered JSON value as records keyed by attribute; None when it holds no table."""
    rows = _rows_container(value)
    if rows is None:
        return None
    records: list[dict[str, Any]] = []
    for row in rows:
        if isinstance(row, dict):
            if row:
                records.append(row)
        elif isinstance(row, list):
            records.append(dict(zip(columns, row, strict=False)))
        elif len(columns) == 1:
            records.append({columns[0]: row})
        else:
            return None
    return records


def parse_table(reply: str, columns: Sequence[str]) -> tuple[list[dict[str, Any]] | None, str]:
    """Recover and read a reply: (records, how); records is None when the reply is invalid."""
    recovered = recover_json(reply)
    if not recovered.valid:
        return None, "invalid"
    records = read_records(recovered.value, columns)
    return (records, recovered.how) if records is not None else (None, "invalid")


_PLAIN = frozenset({str, int, type(None)})
"""JSON scalars whose Python equality is their JSON text's (a float or a bool is not: ``1 == 1.0 == True``)."""


class RowMerger:
    """The rows of a conversation so far, with the keys of those already read: each round adds the rows not read in
    an earlier round (a reply repeating a row within itself keeps both), keying only the new rows, so a long
    conversation costs its rows once, not once per round."""

    def __init__(self, columns: Sequence[str], rows: list[dict[str, Any]] | None = None) -> None:
        self.keys = [attribute_key(c) for c in columns]
        self._plans: dict[tuple[str, ...], tuple[str | None, ...] | None] = {}
        self.rows: list[dict[str, Any]] = rows if rows is not None else []
        self.seen = {self.key(r) for r in self.rows}

    def _plan(self, names: tuple[str, ...]) -> tuple[str | None, ...] | None:
        """For each expected attribute, the record key read for it (of several keyed alike, the last); None when a
        record with these keys has none of the expected attributes."""
        plan = self._plans.get(names, ())
        if plan == ():
            last = {attribute_key(k): k for k in names}
            plan = self._plans[names] = tuple(last.get(k) for k in self.keys) if any(
                k in last for k in self.keys) else None
        return plan

    def key(self, rec: dict[str, Any]) -> Any:
        """Two records have equal keys exactly when the JSON texts of their values of the expected attributes (in
        the columns' order; the whole record where it has none of them) are equal: as a tuple of the values where
        they are JSON scalars (a float as its ``repr``, a bool as ``true``/``false``, each in a 1-tuple, equal to no
        other scalar), the JSON text otherwise. A record read from JSON holds nothing else (no text that ``str``
        of an object would give), so no tuple key equals a text one whose JSON would be the same.

        Keyed once per row of every round (a CoT base table of 100,000 rows): the plan of which key to read for
        each attribute is kept per record shape, and no JSON is written for a row of scalars."""
        plan = self._plan(tuple(rec))
        if plan is None:
            return json.dumps(rec, default=str)
        values = [rec[name] if name is not None else None for name in plan]
        for v in values:
            if type(v) not in _PLAIN:
                return self._mixed_key(values)
        return tuple(values)

    @staticmethod
    def _mixed_key(values: list[Any]) -> Any:
        out: list[Any] = []
        for v in values:
            kind = type(v)
            if kind in _PLAIN:
                out.append(v)
            elif kind is float:
                out.append((repr(v),))
            elif kind is bool:
                out.append(("true" if v else "false",))
            else:
                return json.dumps(values, default=str)
        return tuple(out)

    def add(self, new: Sequence[dict[str, Any]]) -> int:
        """Append the rows of ``new`` not already read in an earlier round; returns how many."""
        added = [(rec, key) for rec in new if (key := self.key(rec)) not in self.seen]
        self.rows.extend(rec for rec, _ in added)
        self.seen.update(key for _, key in added)
        return len(added)
