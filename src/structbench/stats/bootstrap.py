"""Seeded, vectorized bootstrap: statistics evaluated on the weights of many resamples at once.

A resample is a vector of weights over a pool of outcomes (how many times each outcome was drawn). A
``Statistic`` maps a (resamples, outcomes) array of weights to one value per resample; a ``Linear`` one is a
function of weighted sums of per-outcome features (counts of label pairs, sums of scores), so the sums of a
whole cluster can be added once and a resample costs one matrix product over clusters. What is drawn
(clusters, each sample with its epochs) is ``stats.design``'s; this module holds the statistics and the interval.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import asdict, dataclass
from functools import cached_property
from typing import Any, Protocol

import numpy as np

DEFAULT_RESAMPLES = 1000
DEFAULT_CONFIDENCE = 0.95
CHUNK_ELEMENTS = 2_000_000
"""At most this many weights (or drawn indices) are held at once (16 MB of float64)."""


class Statistic(Protocol):
    """A metric over a pool of outcomes, evaluated on many weighted resamples at once."""

    def weighted(self, weights: np.ndarray) -> np.ndarray:
        """``weights`` of shape (R, N): how many times each of the N outcomes is in each of R resamples;
        returns the R values of the metric (NaN where it is undefined)."""
        ...


class Linear(ABC):
    """A statistic that is a function of weighted sums of per-outcome features: the sums of a cluster can be
    added up once, and a resample's sums are one matrix product."""

    @property
    @abstractmethod
    def features(self) -> np.ndarray:
        """(N, F) per-outcome features."""

    @abstractmethod
    def finish(self, totals: np.ndarray) -> np.ndarray:
        """(R, F) weighted feature sums -> the R values of the metric."""

    def weighted(self, weights: np.ndarray) -> np.ndarray:
        return self.finish(np.asarray(weights, dtype=float) @ self.features)

    def on_rows(self, idx: np.ndarray) -> np.ndarray:
        """(R, F) feature sums of resamples given as rows of drawn outcome indices (independent samples: no
        (R, N) weights are built), a feature at a time."""
        features = self.features
        return np.column_stack([features[:, f][idx].sum(axis=1) for f in range(features.shape[1])])


def ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """``numerator / denominator``, NaN where the denominator is 0 (the metric has no sample)."""
    out = np.full(np.shape(numerator), math.nan)
    np.divide(numerator, denominator, out=out, where=denominator != 0)
    return out


@dataclass(frozen=True)
class RatioStatistic(Linear):
    """``sum(w * numerator) / sum(w * denominator)``: a mean over a subset (``denominator`` 0 or 1) or a
    weighted mean; ``empty`` (NaN unless given) on a resample without any weight in the denominator."""

    numerator: np.ndarray
    denominator: np.ndarray
    empty: float = math.nan

    @cached_property
    def features(self) -> np.ndarray:
        return np.column_stack([np.asarray(self.numerator, dtype=float), np.asarray(self.denominator, dtype=float)])

    def finish(self, totals: np.ndarray) -> np.ndarray:
        out = ratio(totals[:, 0], totals[:, 1])
        out[totals[:, 1] == 0] = self.empty
        return out


@dataclass(frozen=True)
class MeanStatistic(Linear):
    """The mean of per-outcome values."""

    values: np.ndarray

    @cached_property
    def features(self) -> np.ndarray:
        values = np.asarray(self.values, dtype=float)
        return np.column_stack([values, np.ones(len(values))])

    def on_rows(self, idx: np.ndarray) -> np.ndarray:
        return np.column_stack([np.asarray(self.values, dtype=float)[idx].sum(axis=1), np.full(len(idx), idx.shape[1])])

    def finish(self, totals: np.ndarray) -> np.ndarray:
        return ratio(totals[:, 0], totals[:, 1])


def counts_of(idx: np.ndarray, n: int) -> np.ndarray:
    """(R, n) weights of resamples given as rows of drawn indices into a pool of ``n``."""
    rows = len(idx)
    flat = (np.asarray(idx) + n * np.arange(rows)[:, None]).ravel()
    return np.bincount(flat, minlength=rows * n).reshape(rows, n).astype(float)


def drawn(weights: np.ndarray) -> np.ndarray:
    """The outcome indices of one resample's weights, each repeated as often as it was drawn."""
    return np.repeat(np.arange(len(weights)), np.asarray(np.rint(weights), dtype=np.int64))


@dataclass(frozen=True)
class FunctionStatistic:
    """Any metric given as a function of one resample's outcome indices (each repeated as drawn): the
    general, slow path (one call per resample)."""

    fn: Callable[[np.ndarray], float]

    def weighted(self, weights: np.ndarray) -> np.ndarray:
        return np.array([self.fn(drawn(row)) for row in weights], dtype=float)


def chunk_rows(n: int) -> int:
    """Resamples per chunk when each holds ``n`` weights."""
    return max(1, CHUNK_ELEMENTS // max(n, 1))


def finite(dist: np.ndarray) -> np.ndarray:
    """Drop resamples on which the metric is undefined (NaN: e.g. no answerable question was drawn)."""
    return dist[np.isfinite(dist)]


def percentile_interval(dist: np.ndarray, confidence: float = DEFAULT_CONFIDENCE) -> tuple[float, float]:
    """The percentile interval (``numpy.percentile``, linear interpolation) holding ``confidence`` of the
    finite values of ``dist`` (NaN, NaN when there are none)."""
    values = finite(dist)
    if len(values) == 0:
        return math.nan, math.nan
    tail = 100.0 * (1.0 - confidence) / 2.0
    low, high = np.percentile(values, [tail, 100.0 - tail])
    return float(low), float(high)


@dataclass(frozen=True)
class Interval:
    """A metric's estimate with its standard error and bootstrap confidence interval."""

    estimate: float
    se: float | None
    """Standard error: analytic (sample std / sqrt n) for a mean over independent samples answered once, the
    bootstrap std otherwise; None with fewer than two resampled units."""
    low: float
    high: float
    n: int
    """Samples (an outcome per sample and epoch)."""
    confidence: float
    resamples: int
    seed: int
    method: str
    """``mean`` (the metric is the mean of per-sample scores) or ``aggregate`` (the metric re-computed on each
    resample, by the benchmark's vectorized statistic or its ``aggregate``)."""
    unit: str = "sample"
    """What was resampled: ``sample`` (independent questions) or the benchmark's cluster (``table`` ...)."""
    clusters: int = 0
    """How many units there were to resample (the samples themselves, or e.g. 208 tables)."""
    epochs: int = 1
    """Epochs per sample (above 1: clusters resampled, each drawn sample with its epochs as answered)."""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)
