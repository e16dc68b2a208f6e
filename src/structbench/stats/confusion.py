"""The one schema for confusion matrices: every benchmark emits it, ``metrics.json`` stores it, reports draw it.

Rows are gold labels, columns predicted labels, and the two label lists may differ (a matrix may be
rectangular): SciTab's columns add ``invalid`` for replies that gave no label, and its two-class matrix
has two gold rows but four predicted columns. Every sample is counted exactly once, so the counts sum
to the number of samples the matrix covers.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

from pydantic import BaseModel, ConfigDict, Field, model_validator


class ConfusionMatrix(BaseModel):
    """Counts of (gold label, predicted label) pairs: ``counts[i][j]`` samples had gold ``gold[i]`` and were
    predicted ``predicted[j]``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    title: str = ""
    """What the matrix counts, shown as its caption (``three-class``, ``two-class (NEI claims left out)`` ...)."""
    gold: list[str] = Field(min_length=1)
    """Row labels, in order."""
    predicted: list[str] = Field(min_length=1)
    """Column labels, in order; may differ from ``gold`` (a "no answer" column, say)."""
    counts: list[list[int]]
    """One row per gold label, one count per predicted label."""

    @model_validator(mode="after")
    def _shape(self) -> ConfusionMatrix:
        if len(set(self.gold)) != len(self.gold) or len(set(self.predicted)) != len(self.predicted):
            raise ValueError("confusion matrix labels must be distinct")
        if len(self.counts) != len(self.gold):
            raise ValueError(f"{len(self.counts)} rows of counts for {len(self.gold)} gold labels")
        for label, row in zip(self.gold, self.counts, strict=True):
            if len(row) != len(self.predicted):
                raise ValueError(
                    f"row {label!r} has {len(row)} counts for {len(self.predicted)} predicted labels"
                )
            if any(c < 0 for c in row):
                raise ValueError(f"row {label!r} has a negative count")
        return self

    @property
    def total(self) -> int:
        """The number of samples counted."""
        return sum(map(sum, self.counts))

    @classmethod
    def tally(
        cls,
        gold: Sequence[Hashable],
        predicted: Sequence[Hashable],
        *,
        gold_labels: Sequence[str],
        predicted_labels: Sequence[str],
        title: str = "",
    ) -> ConfusionMatrix:
        """Count aligned gold and predicted labels. A label outside the given lists gets a row or column of
        its own after them (as ``str``), so no sample is ever dropped from the counts."""
        if len(gold) != len(predicted):
            raise ValueError(f"{len(gold)} gold labels but {len(predicted)} predictions")
        rows = list(gold_labels) + sorted({str(g) for g in gold} - set(gold_labels))
        cols = list(predicted_labels) + sorted({str(p) for p in predicted} - set(predicted_labels))
        row_of = {label: i for i, label in enumerate(rows)}
        col_of = {label: j for j, label in enumerate(cols)}
        counts = [[0] * len(cols) for _ in rows]
        for g, p in zip(gold, predicted, strict=True):
            counts[row_of[str(g)]][col_of[str(p)]] += 1
        return cls(title=title, gold=rows, predicted=cols, counts=counts)
