"""Classification metrics with scikit-learn's definitions (``zero_division=0``), in numpy.

As in the official ``cal_option.py``, which hands sklearn the gold labels and the mapped predictions,
the label set is every label that occurs in gold or predictions, ``NONE`` (no option found) included:

- accuracy: share of exact matches;
- precision / recall / F1 per label (0 where a denominator is 0);
- weighted: per-label values averaged with gold support as weights (the headline is weighted F1);
- macro: unweighted mean over the label set (a predicted-only label, e.g. ``NONE``, counts with F1 0);
- balanced accuracy: mean recall over the labels that occur in gold (``balanced_accuracy_score``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

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


def confusion_matrix(gold: Sequence[str], pred: Sequence[str], labels: Sequence[str]) -> np.ndarray:
    """Counts with gold labels as rows and predictions as columns, in ``labels`` order."""
    index = {label: i for i, label in enumerate(labels)}
    matrix = np.zeros((len(labels), len(labels)), dtype=np.int64)
    for g, p in zip(gold, pred, strict=True):
        matrix[index[g], index[p]] += 1
    return matrix


def _divide(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    out = np.zeros(num.shape, dtype=float)
    np.divide(num, den, out=out, where=den != 0)
    return out


def classification_metrics(gold: Sequence[str], pred: Sequence[str]) -> dict[str, float]:
    """``METRIC_NAMES`` over aligned gold and predicted labels (all 0.0 when empty)."""
    if len(gold) != len(pred):
        raise ValueError(f"{len(gold)} gold labels but {len(pred)} predictions")
    if not gold:
        return dict.fromkeys(METRIC_NAMES, 0.0)
    labels = sorted(set(gold) | set(pred))
    matrix = confusion_matrix(gold, pred, labels)
    tp = np.diag(matrix).astype(float)
    support = matrix.sum(axis=1).astype(float)
    predicted = matrix.sum(axis=0).astype(float)
    precision = _divide(tp, predicted)
    recall = _divide(tp, support)
    f1 = _divide(2 * tp, support + predicted)
    weights = support / support.sum()
    return {
        "accuracy": float(tp.sum() / len(gold)),
        "weighted_f1": float(weights @ f1),
        "balanced_accuracy": float(recall[support > 0].mean()),
        "macro_f1": float(f1.mean()),
        "weighted_precision": float(weights @ precision),
        "weighted_recall": float(weights @ recall),
    }


def average_runs(runs: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """The mean of each metric over runs (the paper's protocol: three runs with option maps 0, 1, 2)."""
    if not runs:
        return {}
    keys = [k for k in runs[0] if all(k in run for run in runs)]
    return {k: float(np.mean([run[k] for run in runs])) for k in keys}
