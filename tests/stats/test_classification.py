"""Label statistics against scikit-learn on random labels, absent and excluded labels included."""

from __future__ import annotations

import random

import numpy as np
import pytest
from sklearn import metrics

from structbench.stats.bootstrap import counts_of
from structbench.stats.classification import (
    LabelStatistic,
    accuracy,
    confusion_matrix,
    label_counts,
    macro_f1,
    observed_labels,
    per_label,
    weighted_f1,
)

ALPHABET = ["a", "b", "c", "d", "e"]
MISSING = "<none>"  # stands for an unparsed answer (None) where scikit-learn needs a string


def _draw(rng: random.Random, n: int) -> tuple[list[str], list[str | None]]:
    gold = [rng.choice(ALPHABET[:3]) for _ in range(n)]  # "d", "e" never gold
    pred: list[str | None] = [rng.choice([*ALPHABET[1:], None]) for _ in range(n)]  # "a" never predicted
    return gold, pred


@pytest.mark.parametrize("seed", range(20))
def test_matches_sklearn_with_unparsed_as_a_miss(seed: int) -> None:
    rng = random.Random(seed)
    gold, pred = _draw(rng, rng.randint(1, 40))
    sk_pred = [MISSING if p is None else p for p in pred]
    # labels absent from gold ("e"), from predictions ("a"), from both ("z"); "d" present but excluded
    labels = ["a", "b", "c", "e", "z"]
    p, r, f, s = metrics.precision_recall_fscore_support(gold, sk_pred, labels=labels, zero_division=0)
    scores = per_label(gold, pred, labels)
    assert list(scores) == labels
    assert [v["precision"] for v in scores.values()] == pytest.approx(p)
    assert [v["recall"] for v in scores.values()] == pytest.approx(r)
    assert [v["f1"] for v in scores.values()] == pytest.approx(f)
    assert [v["support"] for v in scores.values()] == pytest.approx(s)
    for average, ours in (("macro", macro_f1), ("weighted", weighted_f1)):
        expected = metrics.f1_score(gold, sk_pred, labels=labels, average=average, zero_division=0)
        assert ours(gold, pred, labels) == pytest.approx(expected)
    cm = metrics.confusion_matrix(gold, sk_pred, labels=labels)
    assert confusion_matrix(gold, pred, labels).tolist() == cm.tolist()
    assert accuracy(gold, pred) == pytest.approx(metrics.accuracy_score(gold, sk_pred))


@pytest.mark.filterwarnings("ignore:y_pred contains classes not in y_true")
@pytest.mark.parametrize("seed", range(20))
def test_matches_sklearn_with_unparsed_as_its_own_class(seed: int) -> None:
    rng = random.Random(100 + seed)
    gold, pred = _draw(rng, rng.randint(1, 40))
    sk_pred = [MISSING if p is None else p for p in pred]
    labels = observed_labels(gold, pred, unparsed=MISSING)
    assert labels == sorted(set(gold) | set(sk_pred))
    counts = label_counts(gold, pred, labels, unparsed=MISSING)
    for name, values in (("precision", counts.precision), ("recall", counts.recall), ("f1", counts.f1)):
        score = getattr(metrics, f"{name}_score")
        assert counts.macro(values) == pytest.approx(score(gold, sk_pred, average="macro", zero_division=0))
        assert counts.weighted(values) == pytest.approx(score(gold, sk_pred, average="weighted", zero_division=0))
    assert counts.balanced_accuracy == pytest.approx(metrics.balanced_accuracy_score(gold, sk_pred))
    assert accuracy(gold, pred, unparsed=MISSING) == pytest.approx(metrics.accuracy_score(gold, sk_pred))
    expected = metrics.confusion_matrix(gold, sk_pred, labels=labels)
    assert np.array_equal(confusion_matrix(gold, pred, labels, unparsed=MISSING), expected)


def test_hand_computed_and_edge_cases() -> None:
    gold = ["x", "x", "y"]
    pred: list[str | None] = ["x", None, "x"]
    assert per_label(gold, pred, ["x", "y"]) == {
        "x": {"precision": 0.5, "recall": 0.5, "f1": 0.5, "support": 2.0},
        "y": {"precision": 0.0, "recall": 0.0, "f1": 0.0, "support": 1.0},
    }
    assert confusion_matrix(gold, pred, ["x", "y"]).tolist() == [[1, 0], [1, 0]]
    assert confusion_matrix(gold, pred, ["x", "y", "?"], unparsed="?").tolist() == [[1, 0, 1], [1, 0, 0], [0] * 3]
    assert macro_f1(gold, pred, []) == weighted_f1(gold, pred, ["z"]) == 0.0
    assert label_counts([], [], ["x"]).balanced_accuracy == 0.0 and accuracy([], []) == 0.0
    with pytest.raises(ValueError, match="2 gold labels but 1 predictions"):
        label_counts(["x", "y"], ["x"], ["x"])


@pytest.mark.parametrize("unparsed", [None, "e"])
def test_label_statistic_counts_each_resample_as_label_counts_does(unparsed: str | None) -> None:
    rng = random.Random(5)
    gold, pred = _draw(rng, 300)
    keep = [rng.random() < 0.8 for _ in gold]
    labels = ["b", "e"]  # "a" and "c" are gold but no label: a prediction of "b" for them is a false positive
    stat = LabelStatistic.of(gold, pred, labels, lambda c: c.macro(c.f1, present_only=True), unparsed=unparsed,
                             keep=keep)
    idx = np.random.default_rng(0).integers(0, 300, size=(40, 300))
    for row, value in zip(idx, stat.weighted(counts_of(idx, idx.shape[1])), strict=True):
        g = [gold[i] for i in row if keep[i]]
        p = [pred[i] for i in row if keep[i]]
        counts = label_counts(g, p, labels, unparsed=unparsed)
        present = [lab for lab, n in zip(labels, counts.support + counts.predicted, strict=True) if n]
        assert value == pytest.approx(macro_f1(g, p, present, unparsed=unparsed), abs=1e-12)


def test_batch_counts_average_as_label_counts_do() -> None:
    rng = random.Random(6)
    gold, pred = _draw(rng, 200)
    labels = ALPHABET
    idx = np.random.default_rng(1).integers(0, 200, size=(25, 200))
    for name in ("weighted_f1", "balanced", "macro_precision", "weighted_recall"):
        metric = {
            "weighted_f1": lambda c: c.weighted(c.f1),
            "balanced": lambda c: c.balanced_accuracy,
            "macro_precision": lambda c: c.macro(c.precision),
            "weighted_recall": lambda c: c.weighted(c.recall),
        }[name]
        values = LabelStatistic.of(gold, pred, labels, metric).weighted(counts_of(idx, idx.shape[1]))
        for row, value in zip(idx, values, strict=True):
            counts = label_counts([gold[i] for i in row], [pred[i] for i in row], labels)
            expected = {
                "weighted_f1": counts.weighted(counts.f1),
                "balanced": counts.balanced_accuracy,
                "macro_precision": counts.macro(counts.precision),
                "weighted_recall": counts.weighted(counts.recall),
            }[name]
            assert value == pytest.approx(expected, abs=1e-12), name
