"""ClaimDB's metrics, as the paper's ``find_statistics`` computes them with scikit-learn: accuracy (the headline),
and per label precision, recall and F1 over the three labels given explicitly (``zero_division=0``), their mean the
macro-F1. A reply without a verdict is a miss of its gold label and a prediction of none (the paper's ``""``)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from structbench.benchmarks.claimdb.claims import LABELS
from structbench.stats import classification
from structbench.stats.confusion import ConfusionMatrix

INVALID = "no verdict"
SHORT = {"ENTAILED": "entailed", "CONTRADICTED": "contradicted", "NOT ENOUGH INFO": "nei"}
"""Metric-name suffix of each label (``f1_nei``)."""


def verdict_values(verdict: str | None) -> dict[str, float]:
    """A sample's verdict as its values (``verdict_entailed`` ... one-hot, all 0 for none): what ``aggregate`` reads,
    so the corrected scoring recorded beside the paper's (``corrected:`` values) carries its own verdict."""
    return {f"verdict_{short}": float(verdict == label) for label, short in SHORT.items()}


def verdict_of(values: dict[str, float]) -> str | None:
    return next((label for label, short in SHORT.items() if values.get(f"verdict_{short}")), None)


def label_metrics(gold: Sequence[str], pred: Sequence[str | None]) -> dict[str, float]:
    """Accuracy, macro-F1, each label's precision, recall and F1, and the share of replies without a verdict."""
    n = len(gold)
    rates = classification.per_label(gold, pred, LABELS, unparsed=None)
    out = {
        "accuracy": classification.accuracy(gold, pred) if n else 0.0,
        "macro_f1": float(np.mean([rates[label]["f1"] for label in LABELS])),
        "no_verdict_rate": sum(p is None for p in pred) / n if n else 0.0,
    }
    for label in LABELS:
        for name in ("precision", "recall", "f1"):
            out[f"{name}_{SHORT[label]}"] = rates[label][name]
    return out


def macro_f1_batch(counts: classification.BatchCounts) -> np.ndarray:
    """The macro-F1 on many resamples at once, over the three labels whether present or not (as the paper's)."""
    return counts.macro(counts.f1, present_only=False)


def confusion(gold: Sequence[str], pred: Sequence[str | None]) -> ConfusionMatrix:
    shown = [p if p in LABELS else INVALID for p in pred]
    return ConfusionMatrix.tally(gold, shown, gold_labels=[g for g in LABELS if g in gold],
                                 predicted_labels=[*LABELS, INVALID], title="verdicts")
