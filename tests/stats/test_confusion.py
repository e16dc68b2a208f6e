"""The one confusion-matrix schema: shape checks, rectangular matrices, counting that never drops a sample."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from structbench.stats.confusion import ConfusionMatrix


def test_rectangular_matrices_are_allowed_and_checked() -> None:
    cm = ConfusionMatrix(gold=["s", "r"], predicted=["s", "r", "nei", "invalid"], counts=[[3, 1, 0, 2], [0, 4, 1, 0]])
    assert cm.total == 11
    bad = [
        {"gold": ["s", "r"], "predicted": ["s"], "counts": [[1]]},  # a row short
        {"gold": ["s"], "predicted": ["s", "r"], "counts": [[1]]},  # a column short
        {"gold": ["s", "s"], "predicted": ["s"], "counts": [[1], [1]]},  # repeated label
        {"gold": ["s"], "predicted": ["s"], "counts": [[-1]]},  # negative count
        {"gold": [], "predicted": ["s"], "counts": []},  # no label
        {"gold": ["s"], "predicted": ["s"], "counts": [[1]], "labels": ["s"]},  # the old untyped form
    ]
    for fields in bad:
        with pytest.raises(ValidationError):
            ConfusionMatrix.model_validate(fields)


def test_tally_counts_every_pair_once_with_unlisted_labels_appended() -> None:
    gold = ["yes", "no", "yes", "maybe"]
    pred = ["yes", "yes", "none", "no"]
    cm = ConfusionMatrix.tally(gold, pred, gold_labels=["yes", "no"], predicted_labels=["yes", "no"], title="t")
    assert cm.gold == ["yes", "no", "maybe"] and cm.predicted == ["yes", "no", "none"]
    assert cm.counts == [[1, 0, 1], [1, 0, 0], [0, 1, 0]]
    assert cm.total == len(gold) and cm.title == "t"
    with pytest.raises(ValueError, match="2 gold labels but 1 predictions"):
        ConfusionMatrix.tally(["a", "b"], ["a"], gold_labels=["a"], predicted_labels=["a"])


def test_round_trips_through_json() -> None:
    cm = ConfusionMatrix(gold=["a"], predicted=["a", "b"], counts=[[2, 5]], title="x")
    assert ConfusionMatrix.model_validate_json(cm.model_dump_json()) == cm
