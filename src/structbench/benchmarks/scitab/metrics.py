"""SciTab's metrics: macro-F1 (three-class and two-class), accuracy, confusion matrices.

Definitions (shared, in :mod:`structbench.stats.classification`) follow scikit-learn's ``f1_score(y_true,
y_pred, average="macro", zero_division=0)``:
per class, precision = TP / predicted, recall = TP / gold, F1 their harmonic mean (0 where
undefined), averaged over the classes that occur among the gold labels or the predictions
(scikit-learn's default label set; on the full test set that is every class). A reply that gave no
label is a miss for its gold class and a false positive for none (it is not a class of its own); so is,
in the two-class setting, a "not enough info" prediction.

Two-class (the paper: "examples labeled as NEI are excluded"): only claims whose gold label is
supports or refutes count, over labels (supports, refutes); a "not enough info" prediction on them is
a miss, as above.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from structbench.benchmarks.scitab.source import LABELS, REFUTES, SUPPORTS
from structbench.stats import classification
from structbench.stats.confusion import ConfusionMatrix

INVALID = "invalid"
"""Column of the confusion matrix for replies that gave no label."""
TWO_CLASS = (SUPPORTS, REFUTES)
UNPARSED: str | None = None
"""A reply that gave no label is a miss of no class (``unparsed`` of :mod:`structbench.stats.classification`)."""


def per_class(gold: Sequence[str], pred: Sequence[str | None], labels: Sequence[str]) -> dict[str, dict[str, float]]:
    """Precision, recall, F1 and support of each label."""
    return classification.per_label(gold, pred, labels, unparsed=UNPARSED)


def macro_f1(gold: Sequence[str], pred: Sequence[str | None], labels: Sequence[str]) -> float:
    """Unweighted mean of the per-label F1 over the ``labels`` that occur in ``gold`` or ``pred``."""
    present = [label for label in labels if label in gold or label in pred]
    if not present:
        return 0.0
    return classification.macro_f1(gold, pred, present, unparsed=UNPARSED)


def macro_f1_batch(counts: classification.BatchCounts) -> np.ndarray:
    """``macro_f1`` on many resamples at once (see ``classification.LabelStatistic``)."""
    return counts.macro(counts.f1, present_only=True)


def two_class(gold: Sequence[str], pred: Sequence[str | None]) -> tuple[list[str], list[str | None]]:
    """The pairs whose gold label is supports or refutes."""
    pairs = [(g, p) for g, p in zip(gold, pred, strict=True) if g in TWO_CLASS]
    return [g for g, _ in pairs], [p for _, p in pairs]


def confusion(
    gold: Sequence[str], pred: Sequence[str | None], gold_labels: Sequence[str] = LABELS, title: str = ""
) -> ConfusionMatrix:
    """Rows: ``gold_labels``; columns: the three labels plus ``invalid`` (a reply that gave no label)."""
    shown = [p if p in LABELS else INVALID for p in pred]
    return ConfusionMatrix.tally(gold, shown, gold_labels=gold_labels, predicted_labels=[*LABELS, INVALID],
                                 title=title)
