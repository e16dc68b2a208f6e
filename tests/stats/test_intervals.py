"""A statistic's estimate with its interval (``stats.intervals``): an undefined estimate has no interval."""

from __future__ import annotations

import math

from structbench.stats import mean_interval


def test_an_undefined_estimate_gets_no_interval_from_the_resamples_that_missed_its_cause() -> None:
    """A NaN outcome makes the mean NaN; the resamples that did not draw it are finite, and once gave the NaN
    estimate an interval of [0.25, 1.0]."""
    undefined = mean_interval([0.0, 1.0, math.nan, 1.0])
    assert math.isnan(undefined.estimate) and math.isnan(undefined.low) and math.isnan(undefined.high)
    assert undefined.se is None
    defined = mean_interval([0.0, 1.0, 1.0, 1.0])
    assert defined.estimate == 0.75 and defined.low <= 0.75 <= defined.high and defined.se is not None
