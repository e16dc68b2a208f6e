"""Macro-F1 (three- and two-class), accuracy and confusion matrices, by hand and against an independent count."""

from __future__ import annotations

import random

import numpy as np
import pytest

from structbench.benchmarks.scitab import SciTab
from structbench.benchmarks.scitab.metrics import confusion, macro_f1, per_class, two_class
from structbench.contract.benchmark import Attempt, Scored
from structbench.data.evidence import Table
from structbench.data.sample import LabelGold, Sample
from structbench.stats.bootstrap import counts_of

S, R, N = "supports", "refutes", "not enough info"


def _sample(i: int, label: str, variant: str = "all") -> Sample:
    return Sample(
        id=f"c{i}",
        benchmark="scitab",
        variant=variant,
        task="fact_verification",
        question="claim",
        evidence=[Table(header=["a"], rows=[["1"]], caption="Table 1")],
        gold=LabelGold(label=label),
        meta={"table_id": "t", "paper_id": "p"},
    )


def _scored(gold: list[str], pred: list[str | None], variant: str = "all") -> list[Scored]:
    setting = "3-class" if variant == "all" else "2-class"
    return [
        Scored(id=f"c{i}", task="t", parsed=p, gold=g, score=float(p == g), meta={"setting": setting})
        for i, (g, p) in enumerate(zip(gold, pred, strict=True))
    ]


def test_hand_computed_example() -> None:
    gold = [S, S, R, R, N, N]
    pred: list[str | None] = [S, R, R, None, N, S]
    scores = per_class(gold, pred, [S, R, N])
    assert scores[N] == {"precision": 1.0, "recall": 0.5, "f1": pytest.approx(2 / 3), "support": 2.0}
    metrics = SciTab().aggregate(_scored(gold, pred))
    assert metrics["macro_f1"] == metrics["macro_f1_3class"] == pytest.approx((0.5 + 0.5 + 2 / 3) / 3)
    # over the non-NEI claims (3-class prompts): gold NEI excluded; the unparsed reply on a refutes claim is a miss
    assert metrics["macro_f1_no_nei"] == pytest.approx((2 / 3 + 0.5) / 2)
    assert "macro_f1_2class" not in metrics  # the paper's two-class protocol is the 2class variant's
    assert metrics["accuracy"] == 0.5
    assert metrics["invalid_rate"] == pytest.approx(1 / 6)
    table = confusion(gold, pred)
    assert table.counts == [[1, 1, 0, 0], [0, 1, 0, 1], [1, 0, 1, 0]]
    assert table.predicted == [S, R, N, "invalid"]
    two = SciTab().confusion_matrices(_scored(gold, pred))["2-class"]  # rectangular: two gold rows, four columns
    assert two.gold == [S, R] and two.counts == [[1, 1, 0, 0], [0, 1, 0, 1]]


def test_classes_absent_from_gold_and_predictions_are_not_averaged() -> None:
    gold = [S, S, R]
    pred: list[str | None] = [S, R, R]
    assert macro_f1(gold, pred, [S, R, N]) == pytest.approx((2 / 3 + 2 / 3) / 2)
    assert macro_f1(gold, [S, N, R], [S, R, N]) == pytest.approx((2 / 3 + 1 + 0) / 3)  # NEI predicted
    assert macro_f1(gold, [S, None, R], [S, R, N]) == pytest.approx((2 / 3 + 1) / 2)  # no label: no class


def test_nei_predictions_on_two_class_claims_are_misses() -> None:
    gold = [S, S, R, R]
    pred: list[str | None] = [S, N, R, N]
    g2, p2 = two_class(gold, pred)
    assert macro_f1(g2, p2, [S, R]) == pytest.approx(2 / 3)  # P=1, R=0.5 for both classes
    assert macro_f1(gold, pred, [S, R, N]) == pytest.approx((2 / 3 + 2 / 3 + 0) / 3)
    metrics = SciTab().aggregate(_scored(gold, pred, variant="2class"))
    assert metrics["macro_f1"] == metrics["macro_f1_2class"] == pytest.approx(2 / 3)
    assert "macro_f1_3class" not in metrics and "macro_f1_no_nei" not in metrics
    assert set(SciTab.metric_names) - {"macro_f1_3class", "macro_f1_no_nei"} == set(metrics)


def _reference_macro_f1(gold: list[int], pred: list[int], classes: list[int]) -> float:
    """sklearn's definition via a confusion matrix (pred == -1: no label)."""
    k = 4
    m = np.zeros((k, k))
    for g, p in zip(gold, pred, strict=True):
        m[g, p if p >= 0 else 3] += 1
    f1s = []
    for c in classes:
        tp = m[c, c]
        precision = tp / m[:, c].sum() if m[:, c].sum() else 0.0
        recall = tp / m[c, :].sum() if m[c, :].sum() else 0.0
        f1s.append(2 * precision * recall / (precision + recall) if precision + recall else 0.0)
    return float(np.mean(f1s))


@pytest.mark.parametrize("seed", range(5))
def test_score_agrees_with_an_independent_count_on_random_replies(seed: int) -> None:
    rng = random.Random(seed)
    bench = SciTab()
    labels = [S, R, N]
    letters = ["A", "B", "C", "no idea"]
    gold = [rng.choice(labels) for _ in range(300)]
    replies = [rng.choice(letters) for _ in gold]
    scored = [
        bench.score(_sample(i, g), Attempt(output=r), bench.strategy("zero_shot"))
        for i, (g, r) in enumerate(zip(gold, replies, strict=True))
    ]
    metrics = bench.aggregate(scored)
    gi = [labels.index(g) for g in gold]
    pi = [letters.index(r) if r != "no idea" else -1 for r in replies]
    assert [s.parsed for s in scored] == [labels[p] if p >= 0 else None for p in pi]
    assert metrics["macro_f1_3class"] == pytest.approx(_reference_macro_f1(gi, pi, [0, 1, 2]))
    pairs = [(g, p) for g, p in zip(gi, pi, strict=True) if g != 2]
    two = _reference_macro_f1([g for g, _ in pairs], [p for _, p in pairs], [0, 1])
    assert metrics["macro_f1_no_nei"] == pytest.approx(two)
    assert metrics["accuracy"] == pytest.approx(np.mean([g == p for g, p in zip(gi, pi, strict=True)]))
    extra = bench.extra_results(scored)
    matrix = np.array(bench.confusion_matrices(scored)["3-class"].counts)
    assert matrix.sum() == 300 and np.trace(matrix) == sum(s.score for s in scored)
    assert extra["gold_counts"] == {label: gold.count(label) for label in labels}


@pytest.mark.parametrize("setting", ["3-class", "2-class"])
def test_vectorized_bootstrap_statistic_equals_aggregate(setting: str) -> None:
    rng = random.Random(11)
    golds = [S, R] if setting == "2-class" else [S, R, N]
    pool = []
    for i in range(400):
        gold, parsed = rng.choice(golds), rng.choice([S, R, N, None])
        pool.append(Scored(id=f"c{i}", task="t", parsed=parsed, gold=gold, score=float(parsed == gold),
                           meta={"setting": setting}))
    bench = SciTab({})
    idx = np.random.default_rng(2).integers(0, 400, size=(30, 400))
    offered = [m for m in bench.aggregate(pool) if bench.statistic(pool, m) is not None]
    subset = "macro_f1_2class" if setting == "2-class" else "macro_f1_no_nei"
    assert {"macro_f1", subset, "invalid_rate"} <= set(offered)
    for metric in offered:
        fast = bench.statistic(pool, metric).weighted(counts_of(idx, idx.shape[1]))  # type: ignore[union-attr]
        slow = [bench.aggregate([pool[i] for i in row])[metric] for row in idx]
        assert fast == pytest.approx(slow, abs=1e-12), metric
