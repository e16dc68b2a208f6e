"""Statistics over per-sample outcomes: bootstrap confidence intervals and paired significance tests."""

from structbench.stats.bootstrap import (
    DEFAULT_CONFIDENCE,
    DEFAULT_RESAMPLES,
    FunctionStatistic,
    Interval,
    MeanStatistic,
    Statistic,
    bootstrap_distribution,
    mean_interval,
    percentile_interval,
    statistic_interval,
)
from structbench.stats.metric import AggregateStatistic, metric_interval, metric_statistic
from structbench.stats.paired import PairedTest, paired_test

__all__ = [
    "DEFAULT_CONFIDENCE",
    "DEFAULT_RESAMPLES",
    "AggregateStatistic",
    "FunctionStatistic",
    "Interval",
    "MeanStatistic",
    "PairedTest",
    "Statistic",
    "bootstrap_distribution",
    "mean_interval",
    "metric_interval",
    "metric_statistic",
    "paired_test",
    "percentile_interval",
    "statistic_interval",
]
