"""Metrics: normalization, the two matching rules, and agreement with a plain reference implementation."""

from __future__ import annotations

import math
import random
from collections import Counter
from typing import Any

import pytest

from structbench.benchmarks.rfqa.matching import IntendedRule, PublishedRule
from structbench.benchmarks.rfqa.metrics import align_columns, align_records, table_metrics
from structbench.benchmarks.rfqa.normalize import Cell, normalize_cell
from structbench.data.sample import Sample, TableGold


@pytest.mark.parametrize(
    ("raw", "text"),
    [
        ("Jos\u00e9 P\u00e1ez", "jose paez"),
        ("  New   York ", "new york"),
        ("1K", "1000"),
        ("2.5M", "2500000"),
        ("3 billion", "3000000000"),
        ("1.000,5", "1000.5"),
        ("1,000.5", "1000.5"),
        ("1,000,000", "1000000"),
        ("3,5", "3.5"),
        ("1.008", "1.008"),
        (1.0, "1"),
        (True, "true"),
        (None, ""),
        ("null", ""),
        ("s-block", "s-block"),
        ("B. Clinton", "b. clinton"),
    ],
)
def test_normalization(raw: Any, text: str) -> None:
    assert normalize_cell(raw).text == text


def test_an_integer_beyond_any_float_is_as_1e400_not_finite() -> None:
    assert normalize_cell(10**400) == normalize_cell(-(10**400)) == normalize_cell(1e400) == Cell("")


def _lev(a: str, b: str) -> int:
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def ref_match(e: Cell, a: Cell) -> bool:
    """The paper's rule, written plainly."""
    if e.number is not None and a.number is not None:
        return abs(a.number - e.number) <= 0.1 * abs(e.number) + 1e-9
    k = math.floor(0.1 * len(e.text) + 1e-9)
    if abs(len(e.text) - len(a.text)) > k:
        return False
    return e.text == a.text if k == 0 else _lev(e.text, a.text) <= k


def ref_metrics(expected: list[list[Any]], actual: list[list[Any]]) -> tuple[float, float, float, float, float]:
    """Cell F1 over sets of normalized cells, tuple similarity and tuple precision with equal multiplicity,
    by brute force."""
    e_rows = [tuple(normalize_cell(v) for v in r) for r in expected]
    a_rows = [tuple(normalize_cell(v) for v in r) for r in actual]
    e_cells = list({c.text: c for r in e_rows for c in r}.values())
    a_cells = list({c.text: c for r in a_rows for c in r}.values())
    if not a_cells:
        return 0.0, 0.0, 0.0, 0.0, 0.0
    recall = sum(any(ref_match(e, a) for a in a_cells) for e in e_cells) / len(e_cells)
    precision = sum(any(ref_match(e, a) for e in e_cells) for a in a_cells) / len(a_cells)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    e_count = Counter(tuple(c.text for c in r) for r in e_rows)
    a_count = Counter(tuple(c.text for c in r) for r in a_rows)
    e_by = {tuple(c.text for c in r): r for r in e_rows}
    a_by = {tuple(c.text for c in r): r for r in a_rows}
    def same(ek: tuple[str, ...], ak: tuple[str, ...]) -> bool:
        return e_count[ek] == a_count[ak] and all(ref_match(x, y) for x, y in zip(e_by[ek], a_by[ak], strict=True))

    ts = sum(any(same(ek, ak) for ak in a_count) for ek in e_count) / len(e_count)
    tp = sum(any(same(ek, ak) for ek in e_count) for ak in a_count) / len(a_count)
    return precision, recall, f1, ts, tp


def _perturb(rows: list[list[Any]], kind: str, rng: random.Random) -> list[list[Any]]:
    out = []
    for row in rows:
        if kind == "drop" and rng.random() < 0.3:
            continue
        new = []
        for v in row:
            if isinstance(v, int | float) and not isinstance(v, bool):
                factor = {"num5": 1.05, "num20": 1.2}.get(kind, 1.0)
                v = v * factor if rng.random() < 0.7 else v
            elif isinstance(v, str) and kind == "typo" and rng.random() < 0.5 and v:
                i = rng.randrange(len(v))
                v = v[:i] + "x" + v[i + 1 :]
            new.append(v)
        out.append(new)
    return out


@pytest.mark.shared
@pytest.mark.parametrize("kind", ["drop", "num5", "num20", "typo"])
def test_score_agrees_with_reference_on_perturbed_tables(kind: str, rfqa_samples: list[Sample]) -> None:
    rng = random.Random(7)
    small = [s for s in rfqa_samples if isinstance(s.gold, TableGold) and 2 <= len(s.gold.rows) <= 40]
    picked = rng.sample(small, 25)
    differences = 0
    for sample in picked:
        assert isinstance(sample.gold, TableGold)
        actual = _perturb(sample.gold.rows, kind, rng)
        got = table_metrics(sample.gold.rows, actual)
        precision, recall, f1, ts, tp = ref_metrics(sample.gold.rows, actual)
        assert got["cell_precision"] == pytest.approx(precision), sample.id
        assert got["cell_recall"] == pytest.approx(recall), sample.id
        assert got["cell_f1"] == pytest.approx(f1), sample.id
        assert got["tuple_similarity"] == pytest.approx(ts), sample.id
        assert got["tuple_precision"] == pytest.approx(tp), sample.id
        differences += got["tuple_similarity"] < 1.0
    # the perturbations must bite: 5% numbers stay within tolerance, the others do not
    if kind == "num5":
        assert differences == 0
    else:
        assert differences > 0


def test_five_percent_within_and_twenty_percent_outside_tolerance() -> None:
    gold = [["Rome", 2873000], ["Milan", 1352000]]
    assert table_metrics(gold, [["Rome", 2873000 * 1.05], ["Milan", 1352000]])["tuple_similarity"] == 1.0
    off = table_metrics(gold, [["Rome", 2873000 * 1.2], ["Milan", 1352000]])
    assert off["tuple_similarity"] == 0.5
    assert off["cell_precision"] == pytest.approx(3 / 4)


def test_extra_tuples_leave_tuple_similarity_at_one_and_lower_tuple_precision() -> None:
    gold = [["Rome", 2873000], ["Milan", 1352000]]
    padded = table_metrics(gold, [*gold, ["Paris", 2161000], ["Berlin", 3645000]])
    assert padded["tuple_similarity"] == 1.0  # TS = 1 although the cardinality is twice the gold's
    assert padded["tuple_precision"] == 0.5 and padded["tuple_cardinality"] == 0.5
    exact = table_metrics(gold, [["Milan", 1352000 * 1.05], ["Rome", 2873000]])
    assert exact["tuple_similarity"] == exact["tuple_precision"] == 1.0
    twice = table_metrics(gold, [*gold, *gold])  # every tuple twice: the multiplicities differ
    assert twice["tuple_similarity"] == twice["tuple_precision"] == 0.0
    assert table_metrics([], [["x", 1]])["tuple_precision"] == 0.0
    assert table_metrics([], [])["tuple_precision"] == 1.0


def test_edit_distance_is_ten_percent_of_the_expected_length() -> None:
    rule = IntendedRule()
    assert rule.match(normalize_cell("Bill J. Clinton"), normalize_cell("Bill J Clinton"))  # 15 chars: 1 edit
    assert not rule.match(normalize_cell("Clinton"), normalize_cell("Clintn"))  # 7 chars: exact only
    assert rule.match(normalize_cell("Clinton"), normalize_cell("CLINTON"))
    assert rule.match(normalize_cell(0), normalize_cell("0"))


def test_published_rule_rejects_identical_strings() -> None:
    rule = PublishedRule()
    same = normalize_cell("primordial")
    assert not rule.match(same, same)  # floor(10 * 0.9) = 9 > distance 0
    assert rule.match(normalize_cell("ab"), normalize_cell("xy"))  # distance 2 within [1, 3]
    assert not rule.match(normalize_cell(0), normalize_cell(0))  # (0 - 0) / 0 is NaN
    gold = [["primordial", "gas"]]
    intended = table_metrics(gold, gold)
    published = table_metrics(gold, gold, rule=rule)
    assert intended["cell_f1"] == 1.0 and published["cell_f1"] < 1.0


def test_qatch_metrics_and_order() -> None:
    gold = [["a", 1], ["b", 2], ["c", 3]]
    m = table_metrics(gold, [["c", 3], ["b", 2], ["a", 1]], ordered=True)
    assert m["tuple_order"] == 0.0 and m["tuple_constraint"] == 1.0 and m["tuple_cardinality"] == 1.0
    m = table_metrics(gold, [["a", 1], ["b", 2], ["b", 2]], ordered=True)
    assert m["tuple_constraint"] == pytest.approx(1 / 3)  # b twice, c missing
    assert m["tuple_order"] == 1.0
    assert m["qatch_cell_recall"] == pytest.approx(4 / 6) and m["qatch_cell_precision"] == 1.0
    assert "tuple_order" not in table_metrics(gold, gold)


def test_empty_tables_and_alignment() -> None:
    assert table_metrics([], [])["cell_f1"] == 1.0
    assert table_metrics([["a"]], [])["tuple_similarity"] == 0.0
    rows = align_records([{"Name ": "Ann", "AGE": 3, "extra": 1}, {"n": "Bo", "a": 4}], ["name", "age"])
    assert rows == [["Ann", 3], ["Bo", 4]]
    # duplicates must occur as often as expected
    assert table_metrics([["a"], ["a"]], [["a"]])["tuple_similarity"] == 0.0


@pytest.mark.parametrize("columns", [["name", "age"], ["Name", "name"], ["a"], ["x", "y"]])
def test_align_columns_is_align_records_by_column(columns: list[str]) -> None:
    """Records keyed by exactly the columns (read straight by column), others (loose keys, by position, missing),
    and columns whose keys collide (``Name``, ``name``: the loose reading for all)."""
    exact = [dict(zip(columns, (i, f"v{i}"), strict=False)) for i in range(5)]
    loose = [{"Name ": "Ann", "AGE": 3, "extra": 1}, {"n": "Bo", "a": 4}, {}, {"name": None}]
    for records in (exact, loose, exact + loose, [], exact[:1]):
        rows = align_records(records, columns)
        assert align_columns(records, columns) == [[row[j] for row in rows] for j in range(len(columns))]


def test_a_gold_tables_cells_are_normalized_once_across_calls() -> None:
    """A gold table scored against several replies has its JSON scalars normalized once (``_scalar_cell``'s cache,
    kind and value as the key: 1, 1.0 and True stay apart); other values (a date) are normalized per call, and the
    metrics are those of uncached normalization."""
    from datetime import date

    from structbench.benchmarks.rfqa import metrics

    gold = [["Zaragoza x", 1987, 2.5, True, date(2020, 1, 2)], ["Ávila y", 1, 1.0, None, date(2021, 1, 2)]]
    reply = [["zaragoza x", "1987", 2.5, "true", "2020-01-02"], ["avila y", True, 1, None, None]]
    first = table_metrics(gold, reply)
    before = metrics._scalar_cell.cache_info()
    assert table_metrics(gold, reply) == first
    after = metrics._scalar_cell.cache_info()
    assert after.misses == before.misses and after.hits - before.hits == 18  # all but the two dates
    assert [metrics._scalar_cell(type(v).__name__, v) for v in (1, 1.0, True)] == [Cell("1", 1.0), Cell("1", 1.0),
                                                                            Cell("true")]
    metrics._scalar_cell.cache_clear()
    uncached = metrics._normalize_rows(gold)
    assert uncached == [tuple(normalize_cell(v) for v in row) for row in gold]


def test_attribute_names_in_any_script_are_matched_loosely_and_kept_apart() -> None:
    """Only ASCII letters and digits were kept: every name in another script keyed as "", a table's columns
    collided, and the oracle's own reply lost half its cells."""
    columns = ["Größe", "Höhe", "название", "名前"]
    row = {"größe": 1, "HÖHE": 2, "Название": 3, "名前": 4}
    assert align_records([row], columns) == [[1, 2, 3, 4]]
    assert align_records([dict(zip(columns, "abcd", strict=True))], columns) == [list("abcd")]
    assert align_records([{"Model Name": "x", "model-name!": "y"}], ["model_name"]) == [["y"]]  # ASCII as before
