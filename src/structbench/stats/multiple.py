"""Many models at once: p-values corrected for multiple comparisons, and the smallest difference a test can detect.

A leaderboard tests every model against the best of a column; with m tests at level alpha, some "significant"
differences are chance. Holm's step-down procedure (Holm 1979) keeps the family-wise error at alpha;
Benjamini-Hochberg (1995; ``scipy.stats.false_discovery_control``) keeps the expected share of false
discoveries at alpha, and rejects more. A model whose corrected p-value is at least alpha is statistically
indistinguishable from the best.

scipy is imported only where Benjamini-Hochberg asks for it: every run imports this module (robustness sweeps
correct with Holm) and scipy.stats alone takes longer to import than the rest of a run's start-up.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist
from typing import Literal

import numpy as np

Correction = Literal["holm", "bh"]
POWER = 0.8
"""The power at which ``detectable`` states the smallest difference."""


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values: the i-th smallest times (m - i), made non-decreasing, capped at 1."""
    p = np.asarray(p_values, dtype=float)
    order = np.argsort(p)
    m = len(p)
    scaled = np.minimum(1.0, np.maximum.accumulate(p[order] * (m - np.arange(m))))
    out = np.empty(m)
    out[order] = scaled
    return [float(x) for x in out]


def adjust(p_values: Sequence[float], method: Correction = "holm") -> list[float]:
    """Adjusted p-values in the same order; NaN ones (no test) stay NaN and do not count among the tests."""
    kept = [i for i, p in enumerate(p_values) if math.isfinite(p)]
    out = [math.nan] * len(p_values)
    if not kept:
        return out
    tested = [p_values[i] for i in kept]
    fixed = holm(tested) if method == "holm" else _benjamini_hochberg(tested)
    for i, value in zip(kept, fixed, strict=True):
        out[i] = value
    return out


def _benjamini_hochberg(p_values: Sequence[float]) -> list[float]:
    """scipy's Benjamini-Hochberg adjustment (scipy imported here: see the module's docstring)."""
    from scipy import stats

    return [float(x) for x in stats.false_discovery_control(p_values)]


def detectable(se: float | None, alpha: float = 0.05, power: float = POWER) -> float | None:
    """The smallest true difference a two-sided test at ``alpha`` detects with probability ``power``, given the
    standard error of the difference: ``(z(1 - alpha/2) + z(power)) * se`` (2.8 se at 0.05 and 80%)."""
    if se is None or not math.isfinite(se):
        return None
    z = NormalDist().inv_cdf
    return float((z(1 - alpha / 2) + z(power)) * se)
