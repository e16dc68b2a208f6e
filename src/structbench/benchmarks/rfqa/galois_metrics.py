"""Cell F1 and tuple similarity as galois computed them for the paper's published runs (``scorer=galois``).

The numbers of the paper's Table 2 are galois' own per-query scores, committed with its results files on
2025-05-09 (dbunibas/galois, branch ``reproducibility``, commit ``9d2aa7f``: ``llm-results/<model>_complete_results
.xlsx``); the metric code of that commit computed them (``CellSimilarityPrecision/Recall/F1ScoreFilteredAttributes``
and ``TupleCellSimilarityFilteredAttributes``, with ``CellNormalizer`` and ``EditDistance``). This module follows
that code, quirks included:

- **Cells are text.** A cell is its Java ``toString`` (cell F1) or, for tuple similarity, its value normalized:
  a number as ``%.2f``, a text as a text. A model's JSON number stays a number and its JSON string a text; in the
  gold, the value of a plain column of a nullable attribute is PostgreSQL's text of it, any other a number (read
  against the published scores: ``published_runs.text_columns``). ``CellNormalizer`` drops every ``,``, expands
  a number followed by ``million``/``m``, ``billion``/``b`` or ``thousand``/``k`` *anywhere* in a text
  (``"10 May"`` is 10,000,000), writes a number with a ``.`` with two decimals (``%.2f``, half up) and one
  without as an integer, and lower-cases and trims other texts (accents are kept). So ``424242`` and
  ``424242.00`` are two cells of a set.
- **Matching** (``EditDistance``): two texts that both read as Java doubles match when
  ``|e - a| / e <= 0.1``, which never holds for an expected 0 (``0 / 0`` is NaN); otherwise their Levenshtein
  distance must be at most 10% of the expected text's length.
- **Cell F1**: the sets of normalized cells of the expected attributes (names compared exactly), precision the
  share of returned cells matching some expected one, recall the reverse.
- **Tuple similarity**: the expected attribute with the most distinct values (ties: the first in Java ``HashMap``
  order) is a key; a returned tuple is compared only with the expected tuples whose key value is *exactly* its
  own after normalization (numbers of the gold as ``%.2f``, a model's as the text it wrote), then cell by cell
  with the rule above, in one pass over both lists; the score is the matches over the expected tuples.
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Context, Decimal
from typing import Any

from rapidfuzz.distance import Levenshtein
from rapidfuzz.process import extractOne

from structbench.benchmarks.rfqa import galois


@dataclass(frozen=True, slots=True)
class JavaNull:
    """A Speedy ``NullValue``: a NULL cell, whose ``toString`` is its text."""

    text: str = "NULL"


NULL = JavaNull()
"""The NULL a gold table or a JSON ``null`` holds."""

_DECIMALS = Context(prec=400)
_JAVA_WS = " \t\n\x0b\x0c\r"
_DIGITS = r"[0-9]+(?:\.[0-9]+)?"
_SHORTHAND = (
    (re.compile(rf"({_DIGITS})[{_JAVA_WS}]*(?:million|m)", re.IGNORECASE), 1_000_000),
    (re.compile(rf"({_DIGITS})[{_JAVA_WS}]*(?:billion|b)", re.IGNORECASE), 1_000_000_000),
    (re.compile(rf"({_DIGITS})[{_JAVA_WS}]*(?:thousand|k)", re.IGNORECASE), 1_000),
)
_PLAIN_NUMBER = re.compile(r"-?[0-9]+(?:\.[0-9]+)?")
_JAVA_DOUBLE = re.compile(r"[+-]?(?:NaN|Infinity|(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)[fFdD]?)")


def java_format(value: float, decimals: int) -> str:
    """``String.format("%.<decimals>f", value)``: the shortest decimal digits of the double, rounded half up."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    quantum = Decimal(1).scaleb(-decimals)
    return str(Decimal(repr(value)).quantize(quantum, rounding=ROUND_HALF_UP, context=_DECIMALS))


def java_double(text: str) -> float | None:
    """``Double.parseDouble(text)``, or None where it raises (Java trims characters up to the space first)."""
    stripped = text.strip("".join(chr(c) for c in range(33)))
    if not _JAVA_DOUBLE.fullmatch(stripped):
        return None
    body = stripped.rstrip("fFdD") if not stripped.endswith(("NaN", "Infinity")) else stripped
    return float(body.replace("Infinity", "inf"))


def to_string(value: Any) -> str:
    """A cell value's Java ``toString`` (Speedy's ``ConstantValue`` and ``NullValue``)."""
    if isinstance(value, JavaNull):
        return value.text
    return galois.java_text(value)


def normalize(value: Any) -> str:
    """``CellNormalizer.normalize``: a Java object (None is Java's null) as the text the metrics compare."""
    if value is None:
        return "None"
    if isinstance(value, JavaNull):
        return normalize(value.text)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        try:
            number = float(value)
        except OverflowError:  # an integer beyond any double: Java's conversion gives the infinity of its sign
            number = math.inf if value > 0 else -math.inf
        return "None" if math.isnan(number) else java_format(number, 2)
    if not isinstance(value, str):
        return to_string(value)
    text = value.replace(",", "")
    for pattern, scale in _SHORTHAND:
        found = pattern.search(text)
        if found:
            return java_format(float(found.group(1)) * scale, 0)
    if _PLAIN_NUMBER.fullmatch(text):
        return java_format(float(text), 2 if "." in text else 0)
    return text.replace("\n", "").strip("".join(chr(c) for c in range(33))).lower()


@dataclass(frozen=True)
class GaloisRule:
    """``EditDistance.getScoreForCells`` with its tolerances (10% and 10% at the paper's time)."""

    numeric_tolerance: float = 0.1
    string_tolerance: float = 0.1

    def matches(self, expected: str, actual: str) -> bool:
        """Whether ``actual`` matches ``expected`` (both normalized texts)."""
        e, a = _number(expected), _number(actual)
        if e is not None and a is not None:
            return _numbers_match(e, a, self.numeric_tolerance)
        return Levenshtein.distance(expected, actual) <= len(expected) * self.string_tolerance


def _number(text: str) -> float | None:
    """What ``EditDistance`` reads a normalized cell as: ``Double.parseDouble`` after ``,`` -> ``.``."""
    return java_double(text.replace(",", "."))


def _numbers_match(expected: float, actual: float, tolerance: float) -> bool:
    """``Math.abs((e - a) / e) <= t`` in doubles: an expected 0 gives NaN or infinity, never a match."""
    if expected == 0:
        return False
    variation = abs((expected - actual) / expected)
    return not math.isnan(variation) and variation <= tolerance


class _Index:
    """A set of normalized cells indexed so that "does some cell match this one?" is answered without comparing
    with each: numbers sorted by value, texts by exact value and, for the edit distance, by length."""

    def __init__(self, texts: set[str], rule: GaloisRule) -> None:
        self.rule = rule
        self.texts = texts
        parsed = {t: _number(t) for t in texts}
        self.numbers = sorted((n, t) for t, n in parsed.items() if n is not None and not math.isnan(n))
        self.values = [n for n, _ in self.numbers]
        self.words = {t for t, n in parsed.items() if n is None}

    def _near_numbers(self, low: float, high: float) -> list[float]:
        return self.values[bisect.bisect_left(self.values, low) : bisect.bisect_right(self.values, high)]

    def matched_by(self, expected: str) -> bool:
        """Whether some cell of the index (returned cells) matches ``expected``."""
        e = _number(expected)
        t = self.rule.numeric_tolerance
        if e is not None:
            if e != 0 and math.isfinite(e):
                bounds = sorted((e * (1 - t), e * (1 + t)))
                if any(_numbers_match(e, a, t) for a in self._near_numbers(bounds[0], bounds[1])):
                    return True
            pool: set[str] | list[str] = self.words
        else:
            pool = self.texts
        limit = math.floor(len(expected) * self.rule.string_tolerance)
        if expected in pool:
            return True
        if limit < 1:
            return False
        near = [c for c in pool if abs(len(c) - len(expected)) <= limit]
        return extractOne(expected, near, scorer=Levenshtein.distance, score_cutoff=limit) is not None

    def matches_some(self, actual: str) -> bool:
        """Whether ``actual`` (a returned cell) matches some cell of the index (expected cells)."""
        a = _number(actual)
        t = self.rule.numeric_tolerance
        if a is not None:
            if math.isfinite(a) and t < 1:
                ends = sorted((a / (1 + t), a / (1 - t)))
                if any(_numbers_match(e, a, t) for e in self._near_numbers(ends[0], ends[1])):
                    return True
            elif any(_numbers_match(e, a, t) for e in self.values):
                return True
            pool: set[str] = self.words
        else:
            pool = self.texts
        if actual in pool:
            return True
        for e in pool:  # the edit distance allowed depends on the expected text's length
            limit = math.floor(len(e) * self.rule.string_tolerance)
            if limit >= 1 and abs(len(e) - len(actual)) <= limit and Levenshtein.distance(e, actual,
                                                                                          score_cutoff=limit) <= limit:
                return True
        return False


def cell_scores(
    expected: Sequence[Mapping[str, Any]], result: Sequence[Mapping[str, Any]], rule: GaloisRule
) -> tuple[float, float, float]:
    """(precision, recall, F1) of ``CellSimilarity*FilteredAttributes``: tuples are attribute -> Java value maps
    (expected: the gold's columns; result: a model's attributes as written)."""
    if not expected and not result:
        return 1.0, 1.0, 1.0
    attributes = {a for row in expected for a in row}
    e_cells = {normalize(to_string(v)) for row in expected for v in row.values()}
    r_cells = {normalize(to_string(v)) for row in result for a, v in row.items() if a in attributes}
    precision = sum(map(_Index(e_cells, rule).matches_some, r_cells)) / len(r_cells) if r_cells else 0.0
    recall = sum(map(_Index(r_cells, rule).matched_by, e_cells)) / len(e_cells) if e_cells else math.nan
    f1 = 0.0 if precision + recall == 0 or math.isnan(recall) else 2 * precision * recall / (precision + recall)
    return precision, recall, f1


def _primitive(value: Any) -> Any:
    """``IValue.getPrimitiveValue``: a NULL's text, else the value."""
    return value.text if isinstance(value, JavaNull) else value


def key_attribute(expected: Sequence[Mapping[str, Any]]) -> str | None:
    """The expected attribute with the most distinct normalized values; ties go to the first in Java ``HashMap``
    iteration order of the names (as ``getAttributeLikelyBeKey`` iterates them)."""
    values: dict[str, set[str]] = {}
    for row in expected:
        for attribute, value in row.items():
            values.setdefault(attribute, set()).add(normalize(_primitive(value)))
    best, size = None, 0
    for attribute in galois.hashmap_order(list(values)):
        if len(values[attribute]) > size:
            best, size = attribute, len(values[attribute])
    return best


def tuple_similarity(
    expected: Sequence[Mapping[str, Any]], result: Sequence[Mapping[str, Any]], rule: GaloisRule
) -> float:
    """``TupleCellSimilarityFilteredAttributes``: see the module docstring."""
    if not expected and not result:
        return 1.0
    if not expected or not result:
        return 0.0
    wanted = set(expected[0])
    filtered = [{a: v for a, v in row.items() if a in wanted} for row in result]
    key = key_attribute(expected)
    assert key is not None
    expected_parts = _partition(expected, key)
    result_parts = _partition(filtered, key)
    matched = 0
    for value, rows in expected_parts.items():
        if value in result_parts:
            matched += _one_pass_matches(rows, result_parts[value], rule)
    return matched / len(expected)


def _value_of(row: Mapping[str, Any], attribute: str) -> tuple[bool, Any]:
    """``getValueForAttr``: the first cell whose name equals ``attribute`` ignoring case."""
    for name, value in row.items():
        if name.lower() == attribute.lower():
            return True, value
    return False, None


def _partition(rows: Sequence[Mapping[str, Any]], key: str) -> dict[str, list[Mapping[str, Any]]]:
    parts: dict[str, list[Mapping[str, Any]]] = {}
    for row in rows:
        found, value = _value_of(row, key)
        if found:
            parts.setdefault(normalize(_primitive(value)), []).append(row)
    return parts


def _one_pass_matches(expected: Sequence[Mapping[str, Any]], actual: Sequence[Mapping[str, Any]],
                      rule: GaloisRule) -> int:
    """``computeMatches``: each expected tuple takes the next matching returned tuple, the returned list read once
    from left to right for all of them (a returned tuple skipped for one expected tuple is not seen again)."""
    count = 0
    position = 0
    for e in expected:
        while position < len(actual):
            a = actual[position]
            position += 1
            if _tuples_match(a, e, rule):
                count += 1
                break
    return count


def _tuples_match(actual: Mapping[str, Any], expected: Mapping[str, Any], rule: GaloisRule) -> bool:
    """``match``: every cell of the returned tuple matches the expected tuple's cell of that name."""
    for attribute, value in actual.items():
        _, wanted = _value_of(expected, attribute)
        if not rule.matches(normalize(_primitive(wanted)), normalize(_primitive(value))):
            return False
    return True


# --- the tuples the metrics compared ----------------------------------------------------------------------------


def expected_tuple(columns: Sequence[str], row: Sequence[Any], as_text: Sequence[bool]) -> dict[str, Any]:
    """A gold row as galois' metrics held it, read against the published scores: a NULL as a ``NullValue``; the
    value of a column ``as_text`` (a plain column of a nullable attribute, ``published_runs.text_columns``) as
    PostgreSQL writes it (``6194``, ``121590``), any other as its number or text."""
    return {c: _gold_value(v, text) for c, v, text in zip(columns, row, as_text, strict=True)}


def _gold_value(value: Any, as_text: bool) -> Any:
    if value is None:
        return NULL
    if not as_text or isinstance(value, bool | str):
        return value
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)
    return str(value)


def scanned_value(value: Any) -> Any:
    """A model's JSON value as galois' scan passed it on: a NULL for JSON ``null`` or the text ``null``, else the
    value as Jackson read it (a number stays a number: ``1976`` is written ``1976.00``, ``"1976"`` is not)."""
    if value is None or galois.java_text(value).lower() == "null":
        return NULL
    return value


NUMERIC_DECLARATIONS = frozenset({"INTEGER", "REAL", "LONG", "DOUBLE"})


def scanned_tuples(records: Sequence[Mapping[str, Any]],
                   declared: Sequence[tuple[str, str, bool]] | None) -> list[dict[str, Any]]:
    """The NL and SQL tuples galois' scan returned: each object with its own keys and ``scanned_value``s; a cell
    named like a numeric attribute ``declared`` for the scanned table (name, type, nullable) whose text Java cannot
    read as a number is a NULL where the attribute is nullable, else its tuple is dropped (``checkTupleTypes``;
    the last tuple is returned all the same, as the scan's iterator does)."""
    numeric = {name: nullable for name, kind, nullable in declared or () if kind.upper() in NUMERIC_DECLARATIONS}
    out: list[dict[str, Any]] = []
    for position, record in enumerate(records):
        row = {k: scanned_value(v) for k, v in record.items()}
        keep = True
        for name, value in row.items():
            if name in numeric and (not to_string(value).strip() or java_double(to_string(value)) is None):
                if numeric[name]:
                    row[name] = JavaNull("null")
                else:
                    keep = False
        if keep or position == len(records) - 1:
            out.append(row)
    return out


def galois_scores(expected: Sequence[Mapping[str, Any]], result: Sequence[Mapping[str, Any]],
                  rule: GaloisRule) -> dict[str, float]:
    """Cell precision, recall and F1 and tuple similarity, as the published scores were computed."""
    precision, recall, f1 = cell_scores(expected, result, rule)
    return {"cell_precision": precision, "cell_recall": recall, "cell_f1": f1,
            "tuple_similarity": tuple_similarity(expected, result, rule)}
