"""Seeded, vectorized bootstrap: resample indices in chunks and evaluate a statistic on every resample.

Resample ``b`` is row ``b`` of ``numpy.random.default_rng(seed).integers(0, n, size=(resamples, n))``;
rows are drawn a chunk at a time to bound memory, which yields exactly the same rows as one big draw.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from typing import Any, Protocol

import numpy as np

DEFAULT_RESAMPLES = 1000
DEFAULT_CONFIDENCE = 0.95
CHUNK_ELEMENTS = 2_000_000
"""At most this many indices are held at once (16 MB of int64)."""


class Statistic(Protocol):
    """A metric over a pool of per-sample outcomes, evaluated on many index rows at once."""

    def batch(self, idx: np.ndarray) -> np.ndarray:
        """``idx`` of shape (R, m) indexes the pool; returns the R values of the metric."""
        ...


@dataclass(frozen=True)
class MeanStatistic:
    """The mean of per-sample values: one fancy-indexing and one ``mean`` per chunk."""

    values: np.ndarray

    def batch(self, idx: np.ndarray) -> np.ndarray:
        return np.asarray(self.values[idx].mean(axis=1), dtype=float)


@dataclass(frozen=True)
class FunctionStatistic:
    """Any metric given as a function of one index row (corpus-level metrics: macro-F1 ...)."""

    fn: Callable[[np.ndarray], float]

    def batch(self, idx: np.ndarray) -> np.ndarray:
        return np.array([self.fn(row) for row in idx], dtype=float)


def chunk_rows(n: int) -> int:
    """Rows of ``n`` indices per chunk."""
    return max(1, CHUNK_ELEMENTS // max(n, 1))


def resample_indices(rng: np.random.Generator, n: int, resamples: int) -> Iterator[np.ndarray]:
    """Index rows of ``resamples`` bootstrap resamples of ``range(n)``, a chunk of rows at a time."""
    rows = chunk_rows(n)
    for start in range(0, resamples, rows):
        yield rng.integers(0, n, size=(min(rows, resamples - start), n))


def bootstrap_distribution(stat: Statistic, n: int, *, resamples: int = DEFAULT_RESAMPLES, seed: int = 0) -> np.ndarray:
    """The statistic on each of ``resamples`` bootstrap resamples of ``n`` samples."""
    if n < 1:
        raise ValueError("bootstrap needs at least one sample")
    rng = np.random.default_rng(seed)
    return np.concatenate([stat.batch(idx) for idx in resample_indices(rng, n, resamples)])


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
    """Standard error: analytic (sample std / sqrt n) for means, the bootstrap std otherwise; None if n < 2."""
    low: float
    high: float
    n: int
    confidence: float
    resamples: int
    seed: int
    method: str
    """``mean`` (the metric is the mean of per-sample scores) or ``aggregate`` (the metric re-computed on each
    resample, by the benchmark's vectorized statistic or its ``aggregate``)."""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def mean_interval(
    values: np.ndarray | list[float],
    *,
    confidence: float = DEFAULT_CONFIDENCE,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    method: str = "mean",
) -> Interval:
    """Mean, analytic standard error and percentile bootstrap CI of per-sample values."""
    arr = np.asarray(values, dtype=float)
    n = len(arr)
    dist = bootstrap_distribution(MeanStatistic(arr), n, resamples=resamples, seed=seed)
    low, high = percentile_interval(dist, confidence)
    se = float(arr.std(ddof=1) / math.sqrt(n)) if n > 1 else None
    return Interval(float(arr.mean()), se, low, high, n, confidence, resamples, seed, method)


def statistic_interval(
    stat: Statistic,
    n: int,
    *,
    confidence: float = DEFAULT_CONFIDENCE,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    method: str = "aggregate",
) -> Interval:
    """Estimate on all ``n`` samples, bootstrap standard error and percentile CI of any statistic."""
    estimate = float(stat.batch(np.arange(n)[None, :])[0])
    dist = bootstrap_distribution(stat, n, resamples=resamples, seed=seed)
    low, high = percentile_interval(dist, confidence)
    values = finite(dist)
    se = float(values.std(ddof=1)) if n > 1 and len(values) > 1 else None
    return Interval(estimate, se, low, high, n, confidence, resamples, seed, method)
