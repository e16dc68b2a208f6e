"""A statistic's estimate, standard error and percentile bootstrap interval over a resampling design."""

from __future__ import annotations

import math

import numpy as np

from structbench.stats.bootstrap import (
    DEFAULT_CONFIDENCE,
    DEFAULT_RESAMPLES,
    Interval,
    MeanStatistic,
    Statistic,
    finite,
    percentile_interval,
)
from structbench.stats.design import Design, Part, bootstrap_distribution, observed


def statistic_interval(
    stat: Statistic,
    design: Design | int,
    *,
    confidence: float = DEFAULT_CONFIDENCE,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    method: str = "aggregate",
) -> Interval:
    """The statistic on the whole pool (the mean over epochs of each epoch's value), the bootstrap standard
    error and the percentile interval, resampling ``design``'s clusters, each drawn sample with its epochs (an
    ``int`` n: n independent samples). An estimate that is undefined (NaN: a NaN outcome, a metric with nothing to
    measure) gets a NaN interval and no standard error, never one from the resamples that happened to miss the cause."""
    design = Design.independent(design) if isinstance(design, int) else design
    if design.n < 1:
        raise ValueError("bootstrap needs at least one sample")
    estimate = observed(stat, design.n, Part(design))
    if not math.isfinite(estimate):
        return Interval(estimate, None, math.nan, math.nan, design.samples, confidence, resamples, seed, method,
                        design.unit, design.clusters, len(design.epochs))
    dist = bootstrap_distribution(stat, design, resamples=resamples, seed=seed)
    low, high = percentile_interval(dist, confidence)
    values = finite(dist)
    se = float(values.std(ddof=1)) if design.clusters > 1 and len(values) > 1 else None
    return Interval(estimate, se, low, high, design.samples, confidence, resamples, seed, method, design.unit,
                    design.clusters, len(design.epochs))


def mean_interval(
    values: np.ndarray | list[float],
    *,
    design: Design | None = None,
    confidence: float = DEFAULT_CONFIDENCE,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    method: str = "mean",
) -> Interval:
    """Mean, standard error and percentile bootstrap CI of per-outcome values; over independent samples
    answered once the standard error is the analytic one (sample std / sqrt n)."""
    arr = np.asarray(values, dtype=float)
    design = design or Design.independent(len(arr))
    interval = statistic_interval(MeanStatistic(arr), design, confidence=confidence, resamples=resamples, seed=seed,
                                  method=method)
    if design.clusters == design.n and math.isfinite(interval.estimate):  # independent, once each: the textbook one
        n = len(arr)
        se = float(arr.std(ddof=1) / math.sqrt(n)) if n > 1 else None
        interval = Interval(**{**interval.as_dict(), "se": se})
    return interval
