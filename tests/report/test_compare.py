"""``compare``'s rows as JSON (``report.compare``): an undefined figure is null, never a NaN JSON cannot hold."""

from __future__ import annotations

import json
import math
import re
from dataclasses import replace

from hostile import HOSTILE, checked_markdown
from structbench.report.compare import Comparison, comparison_markdown
from structbench.stats import PairedTest


def test_an_undefined_p_value_is_null_in_the_json() -> None:
    test = PairedTest(n=12, a=0.5, b=0.6, delta=0.1, ci_low=0.0, ci_high=0.2, p_bootstrap=math.nan,
                      p_randomization=math.nan, resamples=100, seed=0, confidence=0.95, clusters=12)
    row = Comparison("toy", "small", "direct", "direct", "accuracy", "mean", "overall", "", test).as_dict()
    assert row["p_randomization"] is None and row["p_bootstrap"] is None and row["delta"] == 0.1
    json.dumps(row, allow_nan=False)  # as the run's files are written


def test_the_markdown_shows_every_name_as_text() -> None:
    """A run's path, a benchmark option of a sweep cell or a group from the data holding ``|``, HTML, a backtick, a
    link or a line break split the table's cells or injected HTML where the Markdown is rendered."""
    test = PairedTest(n=3, a=0.5, b=0.6, delta=0.1, ci_low=0.0, ci_high=0.2, p_bootstrap=0.5, p_randomization=0.5,
                      resamples=100, seed=0, confidence=0.95, clusters=3)
    evil = "x|y `z` [l](javascript:alert(1)) " + HOSTILE
    row = Comparison(evil, evil, evil, "direct", evil, "mean", evil, evil, test, cell=evil)
    markdown = comparison_markdown([row, replace(row, strategy_b="cot")], evil, "\n# H " + evil)
    out = checked_markdown(markdown, headings=0)
    assert "<code>" not in out and "<script" not in out
    assert len(re.findall(r"<tr>", out)) == 3  # the header and the two rows, each whole
    assert out.count("x|y") == 2 + 2 * 7  # the labels; benchmark, variant, cell, strategy, metric, breakdown, group
