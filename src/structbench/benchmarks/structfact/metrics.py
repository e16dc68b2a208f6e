"""Classification metrics with scikit-learn's definitions (``zero_division=0``), from
:mod:`structbench.stats.classification`.

As in the official ``cal_option.py``, which hands sklearn the gold labels and the mapped predictions,
the label set is every label that occurs in gold or predictions, ``NONE`` (no option found) included:

- accuracy: share of exact matches;
- precision / recall / F1 per label (0 where a denominator is 0);
- weighted: per-label values averaged with gold support as weights (the headline is weighted F1);
- macro: unweighted mean over the label set (a predicted-only label, e.g. ``NONE``, counts with F1 0);
- balanced accuracy: mean recall over the labels that occur in gold (``balanced_accuracy_score``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from structbench.stats.classification import BatchCounts, accuracy, confusion_matrix, label_counts, observed_labels

__all__ = ["METRIC_NAMES", "NO_ANSWER", "average_runs", "classification_metrics", "confusion_matrix"]

NO_ANSWER = "NONE"
"""The prediction recorded when no option letter was found."""

METRIC_NAMES = (
    "accuracy",
    "weighted_f1",
    "balanced_accuracy",
    "macro_f1",
    "weighted_precision",
    "weighted_recall",
)


def classification_metrics(gold: Sequence[str], pred: Sequence[str | None]) -> dict[str, float]:
    """``METRIC_NAMES`` over aligned gold and predicted labels (all 0.0 when empty); None is ``NONE``."""
    if len(gold) != len(pred):
        raise ValueError(f"{len(gold)} gold labels but {len(pred)} predictions")
    if not gold:
        return dict.fromkeys(METRIC_NAMES, 0.0)
    labels = observed_labels(gold, pred, unparsed=NO_ANSWER)
    counts = label_counts(gold, pred, labels, unparsed=NO_ANSWER)
    return {
        "accuracy": accuracy(gold, pred, unparsed=NO_ANSWER),
        "weighted_f1": counts.weighted(counts.f1),
        "balanced_accuracy": counts.balanced_accuracy,
        "macro_f1": counts.macro(counts.f1),
        "weighted_precision": counts.weighted(counts.precision),
        "weighted_recall": counts.weighted(counts.recall),
    }


BATCH_METRICS: dict[str, Callable[[BatchCounts], np.ndarray]] = {
    "weighted_f1": lambda c: c.weighted(c.f1),
    "balanced_accuracy": lambda c: c.balanced_accuracy,
    "macro_f1": lambda c: c.macro(c.f1, present_only=True),
    "weighted_precision": lambda c: c.weighted(c.precision),
    "weighted_recall": lambda c: c.weighted(c.recall),
}
"""The label metrics of ``classification_metrics`` on many resamples at once (``LabelStatistic`` over the
labels observed in the whole pool: a label absent from a resample counts for nothing, as there)."""


def average_runs(runs: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """The mean of each metric over runs (the paper's protocol: three runs with option maps 0, 1, 2)."""
    if not runs:
        return {}
    keys = [k for k in runs[0] if all(k in run for run in runs)]
    return {k: float(np.mean([run[k] for run in runs])) for k in keys}
