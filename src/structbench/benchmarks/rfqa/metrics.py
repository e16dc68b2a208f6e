"""RFQA's table metrics (paper section 4) and QATCH's, on one expected/returned table pair.

Both tables are first restricted to the expected attributes, aligned by name, and every cell is
normalized (``normalize.py``).

- Cell precision / recall / F1 (the paper's F1): the *sets* of normalized cells of all expected
  attributes, compared with the fuzzy matching rule. Precision is the share of returned cells that
  match some expected cell; recall the share of expected cells matched by some returned cell.
- Tuple similarity (TS): the share of distinct expected tuples for which the result holds a tuple
  whose cells all match, attribute by attribute, and which occurs as many times. TS = 1 means every
  expected tuple was returned, as often as expected; tuples returned beyond them are not penalized, so
  TS = 1 does not imply equal cardinality (the paper says it does: "the same schema, cardinality, and
  cell values"; the released code computes what we compute).
- Tuple precision (ours): the share of distinct returned tuples that match, under the same rule and
  multiplicity condition, some expected tuple: what TS leaves out. TS = tuple precision = 1 means the
  same tuples with the same multiplicities.
- QATCH (exact on normalized cells): cell precision and recall, tuple cardinality
  (``min/max`` of the row counts), tuple constraint (share of distinct expected tuples present with
  the same multiplicity) and tuple order (Spearman's rho over the common tuples, rescaled to [0, 1];
  only for queries with ORDER BY).

Edge cases follow the released code: two empty tables score 1 everywhere; an empty result for a
non-empty gold scores 0. An ``ABSENT`` value (galois reading: the tuple has no such attribute) is no cell:
it is not pooled, and its tuple matches no expected tuple.
"""

from __future__ import annotations

import functools
import operator
import re
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from structbench.benchmarks.rfqa.matching import IntendedRule, MatchRule, MatchSet, Pairs
from structbench.benchmarks.rfqa.normalize import ABSENT_CELL, Cell, normalize_cell

METRICS = (
    "cell_precision",
    "cell_recall",
    "cell_f1",
    "tuple_similarity",
    "tuple_precision",
    "qatch_cell_precision",
    "qatch_cell_recall",
    "tuple_cardinality",
    "tuple_constraint",
    "tuple_order",
)
"""Per-sample metric names; ``tuple_order`` is absent for queries without ORDER BY."""

_KEY = re.compile(r"[\W_]+")


@functools.lru_cache(maxsize=4096)
def attribute_key(name: str) -> str:
    """An attribute name compared loosely: case folded, runs of what is not a letter or digit (of any script) as
    ``_`` (cached: the same few names are keyed for every row of every round). Only ASCII letters and digits were
    kept before: every name in another script keyed as "", so a table's columns collided."""
    return _KEY.sub("_", str(name).strip().casefold()).strip("_")


def align_records(records: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> list[list[Any]]:
    """Rows of ``records`` restricted to ``columns`` (matched by ``attribute_key``), missing as None.

    A record sharing no attribute with ``columns`` but holding exactly as many values is read by
    position (a model that renamed ``count`` to ``number_of_counties``).
    """
    wanted = [attribute_key(c) for c in columns]
    # a record keyed by exactly the columns (a base table's typed rows, most replies) is read by name directly
    exact = set(columns) if len(set(wanted)) == len(set(columns)) == len(columns) else None
    rows: list[list[Any]] = []
    for rec in records:
        if exact is not None and rec.keys() == exact:
            rows.append([rec[c] for c in columns])
            continue
        keyed = {attribute_key(k): v for k, v in rec.items()}
        if not any(w in keyed for w in wanted) and len(rec) == len(columns):
            rows.append(list(rec.values()))
        else:
            rows.append([keyed.get(w) for w in wanted])
    return rows


def align_columns(records: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> list[list[Any]]:
    """``align_records`` column by column: each column's values, one per record. When every record is keyed by
    exactly the columns (a base table's typed rows) each column is read straight from the records, no row built."""
    if len({attribute_key(c) for c in columns}) == len(set(columns)) == len(columns):
        exact = set(columns)
        if all(rec.keys() == exact for rec in records):
            return [list(map(operator.itemgetter(c), records)) for c in columns]
    rows = align_records(records, columns)
    return [[row[j] for row in rows] for j in range(len(columns))]


_SCALARS = frozenset({str, int, float, bool, type(None)})
"""Types whose equal values normalize alike (a datetime equal to another in another zone may print otherwise)."""
_CACHED_TEXT = 256
"""Longest text kept in ``_scalar_cell``'s cache (a whole reply in one cell is not worth keeping)."""


@functools.lru_cache(maxsize=1 << 16)
def _scalar_cell(kind: str, value: Any) -> Cell:
    """``normalize_cell`` of a JSON scalar, cached across calls: a gold table is scored against every reply (each
    strategy, the corrected twin, a report's rescoring) and most of its cells recur (years, names, counts). ``kind``,
    the value's type name, keeps 1, 1.0 and True apart."""
    return normalize_cell(value)


def _normalize_rows(rows: Sequence[Sequence[Any]]) -> list[tuple[Cell, ...]]:
    memo: dict[tuple[type, Any], Cell] = {}

    def norm(value: Any) -> Cell:
        kind = type(value)
        if kind in _SCALARS and (kind is not str or len(value) <= _CACHED_TEXT):
            return _scalar_cell(kind.__name__, value)
        try:
            key = (type(value), value)
            cell = memo.get(key)
        except TypeError:  # unhashable (a list or object in a model's cell)
            return normalize_cell(value)
        if cell is None:
            cell = memo[key] = normalize_cell(value)
        return cell

    return [tuple(map(norm, row)) for row in rows]


def _pooled_cells(rows: Sequence[tuple[Cell, ...]]) -> list[Cell]:
    seen: dict[str, Cell] = {}
    for row in rows:
        for cell in row:
            seen.setdefault(cell.text, cell)
    seen.pop(ABSENT_CELL.text, None)
    return list(seen.values())


def _cell_prf(expected: list[Cell], actual: list[Cell], rule: MatchRule) -> tuple[float, float, float]:
    if not expected and not actual:
        return 1.0, 1.0, 1.0
    if not expected or not actual:
        return 0.0, 0.0, 0.0
    pairs = rule.pairs(expected, actual)
    recall = sum(1 for p in pairs if p) / len(expected)
    precision = _covered(pairs, len(actual)) / len(actual)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def _covered(pairs: Pairs, n: int) -> int:
    """How many candidates match at least one expected cell (numeric runs merged in linear time)."""
    hit = [False] * n
    starts = [0] * (n + 1)
    by_value: Sequence[int] = ()
    for p in pairs:
        for i in p.ids:
            hit[i] = True
        if p.hi > p.lo:
            by_value = p.by_value
            starts[p.lo] += 1
            starts[p.hi] -= 1
    depth = 0
    for pos, i in enumerate(by_value):
        depth += starts[pos]
        if depth > 0:
            hit[i] = True
    return sum(hit)


def _tuple_scores(
    expected: list[tuple[Cell, ...]],
    actual: list[tuple[Cell, ...]],
    rule: MatchRule,
    width: int,
    e_texts: list[tuple[str, ...]],
    a_texts: list[tuple[str, ...]],
) -> tuple[float, float]:
    """(tuple similarity, tuple precision): the shares of distinct expected / returned tuples that have a
    matching counterpart occurring as many times (``e_texts``, ``a_texts``: the tuples' texts)."""
    if not expected and not actual:
        return 1.0, 1.0
    if not expected or not actual:
        return 0.0, 0.0
    e_count = Counter(e_texts)
    a_count = Counter(a_texts)
    if width == 0:
        return (1.0, 1.0) if e_count == a_count else (0.0, 0.0)
    # per attribute: each expected value's matching set over the distinct returned values
    matches: list[dict[str, MatchSet]] = []
    value_ids: list[dict[str, int]] = []
    numeric_share: list[int] = []
    absent = ABSENT_CELL.text
    for j in range(width):
        e_vals = {row[j].text: row[j] for row in expected}
        a_vals = {row[j].text: row[j] for row in actual if row[j].text != absent}
        pairs = rule.pairs(list(e_vals.values()), list(a_vals.values()), tuple_level=True)
        matches.append(dict(zip(e_vals, pairs, strict=True)))
        value_ids.append({text: i for i, text in enumerate(a_vals)})
        numeric_share.append(sum(c.number is not None for c in e_vals.values()))
    # returned tuples indexed by the most selective attribute: the one with the most distinct
    # expected values, texts before numbers (a number matches every value within 10%)
    pivot = max(range(width), key=lambda j: (len(matches[j]) - numeric_share[j] > 0, len(matches[j])))
    by_pivot: dict[int, list[tuple[str, ...]]] = defaultdict(list)
    for a_key in a_count:
        if absent not in a_key:  # a tuple without some expected attribute matches none
            by_pivot[value_ids[pivot][a_key[pivot]]].append(a_key)
    others = [j for j in range(width) if j != pivot]
    hits = 0
    matched: set[tuple[str, ...]] = set()
    for e_key, mult in e_count.items():
        found = {
            a_key
            for v in matches[pivot][e_key[pivot]]
            for a_key in by_pivot.get(v, ())
            if a_count[a_key] == mult and all(value_ids[j][a_key[j]] in matches[j][e_key[j]] for j in others)
        }
        hits += bool(found)
        matched |= found
    return hits / len(e_count), len(matched) / len(a_count)


def _tuple_order(expected: list[tuple[str, ...]], actual: list[tuple[str, ...]]) -> float:
    """QATCH's tuple order: Spearman's rho over the common tuples in first-seen order, in [0, 1]."""
    if not expected and not actual:
        return 1.0
    if not expected or not actual:
        return 0.0
    e_set, a_set = set(expected), set(actual)
    new_pred = list(dict.fromkeys(r for r in actual if r in e_set))
    new_target = list(dict.fromkeys(r for r in expected if r in a_set))
    if not new_target:
        rho = 0.0
    else:
        rank = {r: i for i, r in enumerate(new_target)}
        diff = sum((i - rank[r]) ** 2 for i, r in enumerate(new_pred))
        n = max(len(new_target), 2)
        rho = 1 - 6 * diff / (n * (n**2 - 1))
    return (round(rho, 3) + 1) / 2


def table_metrics(
    expected_rows: Sequence[Sequence[Any]],
    actual_rows: Sequence[Sequence[Any]],
    *,
    rule: MatchRule | None = None,
    ordered: bool = False,
) -> dict[str, float]:
    """All metrics for one query; rows are aligned lists of raw values (expected attributes only)."""
    rule = rule or IntendedRule()
    width = max((len(r) for r in expected_rows), default=0)
    expected = _normalize_rows(expected_rows)
    null = normalize_cell(None)
    actual = [row if len(row) == width else row[:width] + (null,) * (width - len(row))
              for row in _normalize_rows(actual_rows)]
    e_cells, a_cells = _pooled_cells(expected), _pooled_cells(actual)
    precision, recall, f1 = _cell_prf(e_cells, a_cells, rule)
    e_texts = [tuple(c.text for c in row) for row in expected]
    a_texts = [tuple(c.text for c in row) for row in actual]
    out = {
        "cell_precision": precision,
        "cell_recall": recall,
        "cell_f1": f1,
    }
    out["tuple_similarity"], out["tuple_precision"] = _tuple_scores(expected, actual, rule, width, e_texts, a_texts)
    out.update(_qatch(e_texts, a_texts))
    if ordered:
        out["tuple_order"] = _tuple_order(e_texts, a_texts)
    return out


def _qatch(expected: list[tuple[str, ...]], actual: list[tuple[str, ...]]) -> dict[str, float]:
    if not expected and not actual:
        return dict.fromkeys(
            ("qatch_cell_precision", "qatch_cell_recall", "tuple_cardinality", "tuple_constraint"), 1.0
        )
    if not expected or not actual:
        return dict.fromkeys(
            ("qatch_cell_precision", "qatch_cell_recall", "tuple_cardinality", "tuple_constraint"), 0.0
        )
    e_cells = {c for row in expected for c in row}
    a_cells = {c for row in actual for c in row} - {ABSENT_CELL.text}
    common = len(e_cells & a_cells)
    e_count, a_count = Counter(expected), Counter(actual)
    return {
        "qatch_cell_precision": common / len(a_cells) if a_cells else 0.0,
        "qatch_cell_recall": common / len(e_cells),
        "tuple_cardinality": min(len(expected), len(actual)) / max(len(expected), len(actual)),
        "tuple_constraint": sum(a_count[k] == v for k, v in e_count.items()) / len(e_count),
    }
