"""Statistics over per-sample outcomes: cluster bootstrap intervals, paired tests, multiple comparisons.

The names below are loaded on first use: ``structbench.stats.confusion`` is imported on a run's start-up path, and
the bootstrap's modules import numpy, which a run leaves for after its first request.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

_HOMES = {
    "DEFAULT_CONFIDENCE": "bootstrap", "DEFAULT_RESAMPLES": "bootstrap", "FunctionStatistic": "bootstrap",
    "Interval": "bootstrap", "Linear": "bootstrap", "MeanStatistic": "bootstrap", "RatioStatistic": "bootstrap",
    "Statistic": "bootstrap", "percentile_interval": "bootstrap",
    "Design": "design", "bootstrap_distribution": "design",
    "mean_interval": "intervals", "statistic_interval": "intervals",
    "AggregateStatistic": "metric", "metric_interval": "metric", "metric_statistic": "metric",
    "PairedDesign": "paired", "PairedTest": "paired", "paired_test": "paired",
}
"""Each public name -> the module of this package that defines it."""


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value


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
