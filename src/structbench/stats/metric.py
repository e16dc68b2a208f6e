"""A benchmark metric as a bootstrap ``Statistic`` over ``Scored`` outcomes.

The interval of a metric is always a bootstrap of that very metric. A benchmark's vectorized
equivalent (``Benchmark.statistic``: the classification benchmarks count labels on all resamples at
once) is used where it offers one; otherwise, when the metric is the mean of per-sample ``score``
(accuracy, mean ROUGE-L ...) it is computed with numpy on all resamples at once, and else (macro-F1,
weighted F1 ...) each resample is re-aggregated through the benchmark's own ``aggregate``. Whether the
metric is a mean of scores is found by probing ``aggregate`` on the data. Without the benchmark there
is no interval: the mean per-sample score never stands in for another metric.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from structbench.benchmark import Benchmark, Scored
from structbench.stats.bootstrap import (
    DEFAULT_CONFIDENCE,
    DEFAULT_RESAMPLES,
    Interval,
    MeanStatistic,
    Statistic,
    mean_interval,
    statistic_interval,
)

PROBE_SEED = 20240601
TOLERANCE = 1e-9


@dataclass(frozen=True)
class AggregateStatistic:
    """``bench.aggregate(...)[metric]`` over the rows of a pool of ``Scored``."""

    bench: Benchmark
    pool: Sequence[Scored]
    metric: str

    def value(self, row: np.ndarray) -> float:
        return float(self.bench.aggregate([self.pool[i] for i in row]).get(self.metric, math.nan))

    def batch(self, idx: np.ndarray) -> np.ndarray:
        return np.array([self.value(row) for row in idx], dtype=float)


def scores_of(pool: Sequence[Scored]) -> np.ndarray:
    return np.array([s.score for s in pool], dtype=float)


def is_mean_of_scores(bench: Benchmark, pool: Sequence[Scored], metric: str) -> bool:
    """True when ``metric`` equals the mean of per-sample scores on the pool and on a few resamples of it."""
    scores = scores_of(pool)
    n = len(pool)
    rng = np.random.default_rng(PROBE_SEED)
    rows = [np.arange(n)]
    if n > 1:
        rows += [rng.integers(0, n, size=n), rng.choice(n, size=max(1, n // 3), replace=False)]
    agg = AggregateStatistic(bench, pool, metric)
    return all(math.isclose(agg.value(r), float(scores[r].mean()), abs_tol=TOLERANCE) for r in rows)


def metric_statistic(pool: Sequence[Scored], bench: Benchmark, metric: str) -> tuple[Statistic, str]:
    """The statistic for ``metric`` over ``pool`` and how it is computed: ``aggregate`` (the benchmark's own
    vectorized statistic, or ``aggregate`` on every resample) or ``mean`` (the metric is the mean score)."""
    offered = bench.statistic(pool, metric)
    if offered is not None:
        return offered, "aggregate"
    if is_mean_of_scores(bench, pool, metric):
        return MeanStatistic(scores_of(pool)), "mean"
    return AggregateStatistic(bench, pool, metric), "aggregate"


def metric_interval(
    scored: Sequence[Scored],
    bench: Benchmark,
    metric: str,
    *,
    confidence: float = DEFAULT_CONFIDENCE,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> Interval:
    """Estimate, standard error and bootstrap CI of one benchmark metric over ``scored``."""
    stat, method = metric_statistic(scored, bench, metric)
    if isinstance(stat, MeanStatistic):
        return mean_interval(stat.values, confidence=confidence, resamples=resamples, seed=seed, method=method)
    return statistic_interval(stat, len(scored), confidence=confidence, resamples=resamples, seed=seed, method=method)
