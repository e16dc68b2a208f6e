"""``compare``'s rows as JSON (``report.compare``): an undefined figure is null, never a NaN JSON cannot hold."""

from __future__ import annotations

import json
import math

from structbench.report.compare import Comparison
from structbench.stats import PairedTest


def test_an_undefined_p_value_is_null_in_the_json() -> None:
    test = PairedTest(n=12, a=0.5, b=0.6, delta=0.1, ci_low=0.0, ci_high=0.2, p_bootstrap=math.nan,
                      p_randomization=math.nan, resamples=100, seed=0, confidence=0.95, clusters=12)
    row = Comparison("toy", "small", "direct", "direct", "accuracy", "mean", "overall", "", test).as_dict()
    assert row["p_randomization"] is None and row["p_bootstrap"] is None and row["delta"] == 0.1
    json.dumps(row, allow_nan=False)  # as the run's files are written
