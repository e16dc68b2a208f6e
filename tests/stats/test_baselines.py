"""Chance and majority baselines: the benchmark's own metric under trivial predictors."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import f1_score

from structbench.benchmarks.scitab import BENCHMARK as SCITAB
from structbench.benchmarks.structfact import BENCHMARK as STRUCTFACT
from structbench.contract.benchmark import Scored
from structbench.stats.baselines import label_baselines


def _scored(golds: list[str], setting: str | None = None) -> list[Scored]:
    meta = {"setting": setting} if setting else {}
    return [Scored(id=str(i), task="t", parsed=None, gold=g, score=0.0, meta=meta) for i, g in enumerate(golds)]


def test_majority_and_chance_of_structfact_weighted_f1() -> None:
    golds = ["YES"] * 14 + ["NO"] * 5 + ["NOT SURE ENOUGH"] * 1
    bench = STRUCTFACT()
    got = bench.baselines(_scored(golds))
    assert got["majority"] == pytest.approx(f1_score(golds, ["YES"] * 20, average="weighted", zero_division=0))
    rng = np.random.default_rng(123)  # an independent Monte-Carlo estimate of the same expectation
    labels = ["YES", "NO", "NOT SURE ENOUGH"]
    gold = np.array([labels.index(g) for g in golds])
    picks = rng.integers(0, len(labels), size=(3000, 20))
    draws = _weighted_f1_rows(gold, picks, len(labels))
    for row, value in zip(picks[:40], draws[:40], strict=True):  # the formula is scikit-learn's, draw by draw
        answers = [labels[i] for i in row]
        assert value == pytest.approx(f1_score(golds, answers, average="weighted", zero_division=0), abs=1e-12)
    assert got["chance"] == pytest.approx(float(np.mean(draws)), abs=0.01)


def _weighted_f1_rows(gold: np.ndarray, picks: np.ndarray, classes: int) -> np.ndarray:
    """Weighted F1 (``zero_division=0``) of each row of ``picks`` against ``gold``, all rows at once: per class
    ``2 tp / (predicted + support)``, weighted by its support (scikit-learn's, at a thousandth of its time per draw,
    which made 3,000 draws through ``f1_score`` the test's 37 seconds)."""
    f1 = np.zeros(len(picks))
    for c in range(classes):
        support = int((gold == c).sum())
        if support:
            tp = ((picks == c) & (gold == c)).sum(axis=1)
            f1 += support / len(gold) * 2 * tp / ((picks == c).sum(axis=1) + support)
    return f1


def test_chance_is_the_same_whatever_order_the_answers_came_back_in() -> None:
    from structbench.runfiles.outcomes import Outcomes

    golds = ["YES"] * 15 + ["NO"] * 15
    scored = _scored(golds)
    shuffled = [scored[i] for i in np.random.default_rng(5).permutation(len(scored))]
    bench = STRUCTFACT()
    chance = bench.baselines(scored)["chance"]
    assert bench.baselines(shuffled)["chance"] == chance  # a run records answers as they finish
    assert bench.baselines(Outcomes.of(shuffled))["chance"] == chance  # the columns a run keeps


def test_accuracy_at_chance_is_one_over_the_options() -> None:
    golds = ["supports"] * 30 + ["refutes"] * 10 + ["not enough info"] * 20
    bench = SCITAB()
    scored = _scored(golds, "3-class")
    out = label_baselines(bench, scored, bench.answer_labels(scored), "accuracy", draws=2000)
    assert out["chance"] == pytest.approx(1 / 3, abs=0.01)
    assert out["majority"] == pytest.approx(0.5)


def test_the_two_class_setting_offers_two_options() -> None:
    bench = SCITAB()
    two = _scored(["supports", "refutes"] * 10, "2-class")
    assert bench.answer_labels(two) == ("supports", "refutes")
    assert label_baselines(bench, two, bench.answer_labels(two), "accuracy", draws=2000)["chance"] == pytest.approx(
        0.5, abs=0.02)


def test_no_labels_no_baselines() -> None:
    assert label_baselines(SCITAB(), [], ("a",), "accuracy") == {}
