"""Statistics over per-sample outcomes: cluster bootstrap intervals, paired tests, multiple comparisons."""

from structbench.stats.bootstrap import (
    DEFAULT_CONFIDENCE,
    DEFAULT_RESAMPLES,
    FunctionStatistic,
    Interval,
    Linear,
    MeanStatistic,
    RatioStatistic,
    Statistic,
    percentile_interval,
)
from structbench.stats.design import Design, bootstrap_distribution
from structbench.stats.intervals import mean_interval, statistic_interval
from structbench.stats.metric import AggregateStatistic, metric_interval, metric_statistic
from structbench.stats.paired import PairedDesign, PairedTest, paired_test

__all__ = [
    "DEFAULT_CONFIDENCE",
    "DEFAULT_RESAMPLES",
    "AggregateStatistic",
    "Design",
    "FunctionStatistic",
    "Interval",
    "Linear",
    "MeanStatistic",
    "PairedDesign",
    "PairedTest",
    "RatioStatistic",
    "Statistic",
    "bootstrap_distribution",
    "mean_interval",
    "metric_interval",
    "metric_statistic",
    "paired_test",
    "percentile_interval",
    "statistic_interval",
]
