"""Metrics: hand-computed values, scikit-learn agreement on random predictions, and ``aggregate``."""

from __future__ import annotations

import random
import warnings

import numpy as np
import pytest

from structbench.benchmarks.structfact import StructFact
from structbench.benchmarks.structfact.metrics import (
    METRIC_NAMES,
    average_runs,
    classification_metrics,
    confusion_matrix,
)
from structbench.contract.benchmark import Scored
from structbench.stats.bootstrap import counts_of

GOLD = ["YES", "YES", "YES", "NO", "NO", "NOT SURE ENOUGH"]
PRED = ["YES", "NO", "NONE", "NO", "YES", "NOT SURE ENOUGH"]


def test_hand_computed() -> None:
    # per label (P, R, F1, support): YES (1/2, 1/3, 0.4, 3), NO (1/2, 1/2, 0.5, 2),
    # NOT SURE ENOUGH (1, 1, 1, 1), NONE (0, 0, 0, 0: predicted once, never gold)
    m = classification_metrics(GOLD, PRED)
    assert m["accuracy"] == pytest.approx(3 / 6)
    assert m["weighted_f1"] == pytest.approx((3 * 0.4 + 2 * 0.5 + 1 * 1.0) / 6)
    assert m["weighted_precision"] == pytest.approx((3 * 0.5 + 2 * 0.5 + 1 * 1.0) / 6)
    assert m["weighted_recall"] == pytest.approx((3 * (1 / 3) + 2 * 0.5 + 1 * 1.0) / 6)
    assert m["macro_f1"] == pytest.approx((0.4 + 0.5 + 1.0 + 0.0) / 4)
    assert m["balanced_accuracy"] == pytest.approx((1 / 3 + 1 / 2 + 1) / 3)
    assert set(m) == set(METRIC_NAMES)


def test_edge_cases() -> None:
    perfect = classification_metrics(["YES", "NO"], ["YES", "NO"])
    assert all(v == 1.0 for v in perfect.values())
    nothing = classification_metrics(["YES", "NO"], ["NONE", "NONE"])
    assert all(v == 0.0 for v in nothing.values())
    single = classification_metrics(["YES"] * 4, ["YES", "YES", "NO", "NONE"])
    assert single["weighted_f1"] == pytest.approx(2 * 2 / (4 + 2))
    assert single["macro_f1"] == pytest.approx((2 * 2 / 6) / 3)
    assert classification_metrics([], []) == dict.fromkeys(METRIC_NAMES, 0.0)
    with pytest.raises(ValueError):
        classification_metrics(["YES"], [])


def test_confusion_matrix_rows_are_gold() -> None:
    labels = ["YES", "NO", "NOT SURE ENOUGH", "NONE"]
    assert confusion_matrix(GOLD, PRED, labels).tolist() == [
        [1, 1, 0, 1],
        [1, 1, 0, 0],
        [0, 0, 1, 0],
        [0, 0, 0, 0],
    ]


@pytest.mark.parametrize("seed", range(20))
def test_agrees_with_scikit_learn_on_random_predictions(seed: int) -> None:
    metrics = pytest.importorskip("sklearn.metrics")
    rng = random.Random(seed)
    labels = ["YES", "NO", "NOT SURE ENOUGH"]
    n = rng.randint(1, 60)
    gold = [rng.choice(labels[: rng.randint(1, 3)]) for _ in range(n)]
    pred = [rng.choice([*labels, "NONE"]) for _ in range(n)]
    ours = classification_metrics(gold, pred)
    theirs = {
        "accuracy": metrics.accuracy_score(gold, pred),
        "weighted_f1": metrics.f1_score(gold, pred, average="weighted", zero_division=0),
        "macro_f1": metrics.f1_score(gold, pred, average="macro", zero_division=0),
        "weighted_precision": metrics.precision_score(gold, pred, average="weighted", zero_division=0),
        "weighted_recall": metrics.recall_score(gold, pred, average="weighted", zero_division=0),
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "y_pred contains classes not in y_true"
        theirs["balanced_accuracy"] = metrics.balanced_accuracy_score(gold, pred)
    assert ours == pytest.approx(theirs, abs=1e-12)


def _scored(gold: str, parsed: str | None, task: str = "t") -> Scored:
    return Scored(id="x", task=task, parsed=parsed, gold=gold, score=float(parsed == gold))


def test_aggregate_counts_unparsed_as_its_own_wrong_class() -> None:
    bench = StructFact()
    scored = [_scored(g, None if p == "NONE" else p) for g, p in zip(GOLD, PRED, strict=True)]
    result = bench.aggregate(scored)
    assert {k: result[k] for k in METRIC_NAMES} == pytest.approx(classification_metrics(GOLD, PRED))
    assert result["no_answer"] == pytest.approx(1 / 6)
    assert result[bench.headline] == pytest.approx(3.2 / 6)
    matrix = bench.confusion_matrices(scored)["labels"]
    assert matrix.gold == ["YES", "NO", "NOT SURE ENOUGH"]
    assert matrix.predicted == ["YES", "NO", "NOT SURE ENOUGH", "NONE"]
    assert matrix.counts[0] == [1, 1, 0, 1] and matrix.total == 6
    extra = bench.extra_results(scored)
    assert extra["gold_counts"] == {"YES": 3, "NO": 2, "NOT SURE ENOUGH": 1}
    assert extra["predicted_counts"]["NONE"] == 1
    assert "confidence" not in extra


def test_extra_results_summarise_confidence_by_outcome() -> None:
    bench = StructFact()
    scored = [
        Scored(id="1", task="t", parsed="YES", gold="YES", score=1.0, values={"confidence": 0.9}),
        Scored(id="2", task="t", parsed="YES", gold="YES", score=1.0, values={"confidence": 0.7}),
        Scored(id="3", task="t", parsed="YES", gold="NO", score=0.0, values={"confidence": 0.4}),
        Scored(id="4", task="t", parsed=None, gold="NO", score=0.0),
    ]
    assert bench.extra_results(scored)["confidence"] == {
        "YES/correct": {"n": 2, "mean": pytest.approx(0.8)},
        "YES/wrong": {"n": 1, "mean": pytest.approx(0.4)},
    }


def test_average_runs() -> None:
    runs = [{"weighted_f1": 0.5, "accuracy": 0.4}, {"weighted_f1": 0.7, "accuracy": 0.6}, {"weighted_f1": 0.6}]
    assert average_runs(runs) == {"weighted_f1": pytest.approx(0.6)}
    assert average_runs([]) == {}


def test_vectorized_bootstrap_statistic_equals_aggregate() -> None:
    rng = random.Random(12)
    labels = ["YES", "NO", "NOT SURE ENOUGH"]
    pool = []
    for i in range(400):
        gold, parsed = rng.choice(labels), rng.choice([*labels, None])
        pool.append(Scored(id=str(i), task="t", parsed=parsed, gold=gold, score=float(parsed == gold)))
    bench = StructFact({})
    idx = np.random.default_rng(3).integers(0, 400, size=(30, 400))
    offered = [m for m in bench.aggregate(pool) if bench.statistic(pool, m) is not None]
    assert set(offered) == set(METRIC_NAMES) - {"accuracy"} | {"no_answer"}
    for metric in offered:
        fast = bench.statistic(pool, metric).weighted(counts_of(idx, idx.shape[1]))  # type: ignore[union-attr]
        slow = [bench.aggregate([pool[i] for i in row])[metric] for row in idx]
        assert fast == pytest.approx(slow, abs=1e-12), metric
