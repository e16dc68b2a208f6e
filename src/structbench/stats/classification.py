"""Label statistics with scikit-learn's definitions (``zero_division=0``), in numpy.

Shared by the classification benchmarks (StructFact, SciTab), which differ only in what an unparsed
answer (``None``) is: each passes ``unparsed``, the label such an answer counts as (a class of its
own when that label is in ``labels``), or ``None`` to count it as a miss for its gold label that
belongs to no class.

As in scikit-learn with an explicit ``labels`` argument, the statistics of a label count every
sample: a gold label outside ``labels`` still costs a false positive to the label predicted for it,
and a prediction outside ``labels`` is still a miss (false negative) for the gold label.

- precision = TP / predicted, recall = TP / support, F1 = 2 TP / (support + predicted), 0 where
  a denominator is 0;
- macro: unweighted mean over ``labels``; weighted: mean with gold support as weights;
- balanced accuracy: mean recall over the labels that occur in gold (``balanced_accuracy_score``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from structbench.stats.bootstrap import Linear

Prediction = str | None


def _resolve(pred: Sequence[Prediction], unparsed: str | None) -> list[Prediction]:
    return [unparsed if p is None else p for p in pred]


def _divide(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    out = np.zeros(num.shape, dtype=float)
    np.divide(num, den, out=out, where=den != 0)
    return out


def observed_labels(gold: Sequence[str], pred: Sequence[Prediction], *, unparsed: str | None = None) -> list[str]:
    """Sorted labels that occur in gold or predictions (scikit-learn's default label set)."""
    return sorted({*gold, *(p for p in _resolve(pred, unparsed) if p is not None)})


def confusion_matrix(
    gold: Sequence[str], pred: Sequence[Prediction], labels: Sequence[str], *, unparsed: str | None = None
) -> np.ndarray:
    """Counts with gold labels as rows and predictions as columns, in ``labels`` order.

    Pairs whose gold or predicted label is not in ``labels`` are not counted (as in scikit-learn).
    """
    index = {label: i for i, label in enumerate(labels)}
    matrix = np.zeros((len(labels), len(labels)), dtype=np.int64)
    for g, p in zip(gold, _resolve(pred, unparsed), strict=True):
        if g in index and p is not None and p in index:
            matrix[index[g], index[p]] += 1
    return matrix


class _Rates:
    """Per-label precision, recall and F1 from ``tp``, ``support`` and ``predicted`` (0 where undefined)."""

    tp: np.ndarray
    support: np.ndarray
    predicted: np.ndarray

    @property
    def precision(self) -> np.ndarray:
        return _divide(self.tp, self.predicted)

    @property
    def recall(self) -> np.ndarray:
        return _divide(self.tp, self.support)

    @property
    def f1(self) -> np.ndarray:
        return _divide(2 * self.tp, self.support + self.predicted)


@dataclass(frozen=True)
class LabelCounts(_Rates):
    """True positives, gold support and predicted counts of each label, in ``labels`` order."""

    labels: tuple[str, ...]
    tp: np.ndarray
    support: np.ndarray
    predicted: np.ndarray

    def macro(self, values: np.ndarray) -> float:
        """Unweighted mean over the labels (0.0 for none)."""
        return float(values.mean()) if len(values) else 0.0

    def weighted(self, values: np.ndarray) -> float:
        """Mean weighted by gold support (0.0 when no gold label is among the labels)."""
        total = self.support.sum()
        return float((self.support / total) @ values) if total else 0.0

    @property
    def balanced_accuracy(self) -> float:
        """Mean recall over the labels with gold support (0.0 for none)."""
        present = self.support > 0
        return float(self.recall[present].mean()) if present.any() else 0.0


def label_counts(
    gold: Sequence[str], pred: Sequence[Prediction], labels: Sequence[str], *, unparsed: str | None = None
) -> LabelCounts:
    """Per-label counts over aligned gold and predicted labels."""
    resolved = _resolve(pred, unparsed)
    if len(gold) != len(resolved):
        raise ValueError(f"{len(gold)} gold labels but {len(resolved)} predictions")
    g = np.array(gold, dtype=object)
    p = np.array(resolved, dtype=object)
    tp, support, predicted = (np.zeros(len(labels), dtype=float) for _ in range(3))
    for i, label in enumerate(labels):
        is_gold, is_pred = g == label, p == label
        tp[i] = np.count_nonzero(is_gold & is_pred)
        support[i] = np.count_nonzero(is_gold)
        predicted[i] = np.count_nonzero(is_pred)
    return LabelCounts(tuple(labels), tp, support, predicted)


def per_label(
    gold: Sequence[str], pred: Sequence[Prediction], labels: Sequence[str], *, unparsed: str | None = None
) -> dict[str, dict[str, float]]:
    """Precision, recall, F1 and support of each label (``precision_recall_fscore_support``)."""
    counts = label_counts(gold, pred, labels, unparsed=unparsed)
    rows = zip(counts.precision, counts.recall, counts.f1, counts.support, strict=True)
    return {
        label: {"precision": float(pr), "recall": float(rc), "f1": float(f1), "support": float(n)}
        for label, (pr, rc, f1, n) in zip(labels, rows, strict=True)
    }


def accuracy(gold: Sequence[str], pred: Sequence[Prediction], *, unparsed: str | None = None) -> float:
    """Share of exact matches (0.0 when empty)."""
    resolved = _resolve(pred, unparsed)
    if len(gold) != len(resolved):
        raise ValueError(f"{len(gold)} gold labels but {len(resolved)} predictions")
    return sum(g == p for g, p in zip(gold, resolved, strict=True)) / len(gold) if gold else 0.0


def macro_f1(
    gold: Sequence[str], pred: Sequence[Prediction], labels: Sequence[str], *, unparsed: str | None = None
) -> float:
    """``f1_score(average="macro", labels=labels, zero_division=0)``."""
    counts = label_counts(gold, pred, labels, unparsed=unparsed)
    return counts.macro(counts.f1)


def weighted_f1(
    gold: Sequence[str], pred: Sequence[Prediction], labels: Sequence[str], *, unparsed: str | None = None
) -> float:
    """``f1_score(average="weighted", labels=labels, zero_division=0)``."""
    counts = label_counts(gold, pred, labels, unparsed=unparsed)
    return counts.weighted(counts.f1)


@dataclass(frozen=True)
class BatchCounts(_Rates):
    """``LabelCounts`` of many bootstrap resamples at once: arrays of shape (resamples, labels)."""

    tp: np.ndarray
    support: np.ndarray
    predicted: np.ndarray

    def macro(self, values: np.ndarray, *, present_only: bool = False) -> np.ndarray:
        """Unweighted mean over the labels, or over those that occur in the resample's gold or predictions
        (scikit-learn's default label set); 0.0 for none."""
        mask = (self.support + self.predicted > 0) if present_only else np.ones(values.shape, dtype=bool)
        return _divide(np.where(mask, values, 0.0).sum(axis=1), mask.sum(axis=1).astype(float))

    def weighted(self, values: np.ndarray) -> np.ndarray:
        """Mean weighted by gold support (0.0 when no gold label is among the labels)."""
        return _divide((self.support * values).sum(axis=1), self.support.sum(axis=1))

    @property
    def balanced_accuracy(self) -> np.ndarray:
        """Mean recall over the labels with gold support (0.0 for none)."""
        present = self.support > 0
        return _divide(np.where(present, self.recall, 0.0).sum(axis=1), present.sum(axis=1).astype(float))


@dataclass(frozen=True)
class LabelStatistic(Linear):
    """A label metric on many bootstrap resamples at once (a linear ``Statistic``), without re-aggregating.

    Each sample becomes one (gold, predicted) pair code, with one extra code for any label outside
    ``labels`` (and for None unless ``unparsed`` names a label), so that a resample's ``BatchCounts``
    are its weighted counts of pair codes and count exactly what ``label_counts`` counts. Samples with
    ``keep`` False take no part (a metric over a subset, e.g. SciTab's two-class F1).
    """

    codes: np.ndarray
    size: int
    """Labels plus one (the code of everything else)."""
    metric: Callable[[BatchCounts], np.ndarray]

    @classmethod
    def of(cls, gold: Sequence[str], pred: Sequence[Prediction], labels: Sequence[str],
           metric: Callable[[BatchCounts], np.ndarray], *, unparsed: str | None = None,
           keep: Sequence[bool] | None = None) -> LabelStatistic:
        index: dict[str | None, int] = {label: i for i, label in enumerate(labels)}
        size = len(labels) + 1
        left_out = size * size
        codes = [index.get(g, size - 1) * size + index.get(p, size - 1)
                 for g, p in zip(gold, _resolve(pred, unparsed), strict=True)]
        if keep is not None:
            codes = [code if kept else left_out for code, kept in zip(codes, keep, strict=True)]
        return cls(np.array(codes, dtype=np.int64), size, metric)

    @cached_property
    def features(self) -> np.ndarray:
        """One-hot pair codes; the last column counts samples left out."""
        out = np.zeros((len(self.codes), self.size * self.size + 1))
        out[np.arange(len(self.codes)), self.codes] = 1.0
        return out

    def on_rows(self, idx: np.ndarray) -> np.ndarray:
        """One ``bincount`` of the drawn pair codes per chunk (as many columns as ``features``)."""
        cells = self.size * self.size + 1
        flat = (self.codes[idx] + cells * np.arange(len(idx))[:, None]).ravel()
        return np.bincount(flat, minlength=len(idx) * cells).reshape(len(idx), cells).astype(float)

    def finish(self, totals: np.ndarray) -> np.ndarray:
        rows = len(totals)
        table = totals[:, :-1].reshape(rows, self.size, self.size)  # gold rows, predicted columns
        k = self.size - 1
        counts = BatchCounts(np.diagonal(table, axis1=1, axis2=2)[:, :k], table[:, :k, :].sum(axis=2),
                             table[:, :, :k].sum(axis=1))
        return np.asarray(self.metric(counts), dtype=float)
