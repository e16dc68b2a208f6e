"""Paired significance tests of system B against system A on the same samples.

Both tests work on a *pool* of ``2n`` outcomes: positions ``0..n-1`` are system A, ``n..2n-1`` system B,
and pair ``j`` is ``(j, n + j)``. A ``Statistic`` over the pool thus serves any metric: a mean of
per-sample scores (vectorized) or a corpus-level metric re-aggregated per row.

- Paired bootstrap (Efron & Tibshirani 1993; Berg-Kirkpatrick et al. 2012): resample pairs with
  replacement (rows of ``default_rng(seed).integers(0, n, (R, n))``); the deltas centred on the observed
  delta approximate its null distribution: ``p = mean(|delta* - delta| >= |delta|)``.
- Approximate randomization (Noreen 1989): swap each pair's outputs with probability 1/2 (row ``r``
  swaps where ``default_rng(seed).random((R, n))[r] < 0.5``); ``p = (1 + #{|delta_r| >= |delta|}) / (R + 1)``.

Resamples on which a corpus metric is undefined (NaN) are left out of the intervals and p-values.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from structbench.stats.bootstrap import (
    DEFAULT_CONFIDENCE,
    DEFAULT_RESAMPLES,
    Statistic,
    chunk_rows,
    finite,
    percentile_interval,
    resample_indices,
)

TIE = 1e-12
"""Deltas within this of the observed one count as at least as extreme (ties in discrete metrics)."""


def observed(stat: Statistic, n: int) -> tuple[float, float]:
    """The metric of system A and of system B over all ``n`` pairs."""
    base = np.arange(n)[None, :]
    return float(stat.batch(base)[0]), float(stat.batch(base + n)[0])


def bootstrap_deltas(stat: Statistic, n: int, *, resamples: int = DEFAULT_RESAMPLES, seed: int = 0) -> np.ndarray:
    """``metric(B) - metric(A)`` on each paired bootstrap resample."""
    rng = np.random.default_rng(seed)
    return np.concatenate([stat.batch(idx + n) - stat.batch(idx) for idx in resample_indices(rng, n, resamples)])


def randomization_deltas(stat: Statistic, n: int, *, rounds: int = DEFAULT_RESAMPLES, seed: int = 0) -> np.ndarray:
    """``metric(B') - metric(A')`` after randomly swapping the two systems' outputs within pairs."""
    rng = np.random.default_rng(seed)
    base = np.arange(n)
    rows = chunk_rows(n)
    out = []
    for start in range(0, rounds, rows):
        swap = rng.random((min(rows, rounds - start), n)) < 0.5
        a_idx = base + n * swap
        b_idx = base + n * ~swap
        out.append(stat.batch(b_idx) - stat.batch(a_idx))
    return np.concatenate(out)


def bootstrap_p_value(deltas: np.ndarray, delta: float) -> float:
    """Two-sided p-value of the paired bootstrap (shift method), over resamples where the metric is defined."""
    values = finite(deltas)
    if not math.isfinite(delta) or len(values) == 0:
        return math.nan
    return float(np.mean(np.abs(values - delta) >= abs(delta) - TIE))


def randomization_p_value(deltas: np.ndarray, delta: float) -> float:
    """Two-sided p-value of approximate randomization, add-one smoothed so it is never 0."""
    values = finite(deltas)
    if not math.isfinite(delta):
        return math.nan
    return float((1 + np.sum(np.abs(values) >= abs(delta) - TIE)) / (len(values) + 1))


@dataclass(frozen=True)
class PairedTest:
    """System B against system A on ``n`` shared samples."""

    n: int
    a: float
    b: float
    delta: float
    """``b - a``."""
    ci_low: float
    ci_high: float
    """Percentile bootstrap interval of ``delta``."""
    p_bootstrap: float
    p_randomization: float
    resamples: int
    seed: int
    confidence: float

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def paired_test(
    stat: Statistic,
    n: int,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    confidence: float = DEFAULT_CONFIDENCE,
) -> PairedTest:
    """Paired bootstrap and approximate randomization of B against A over a pool of ``2n`` outcomes."""
    if n < 1:
        raise ValueError("a paired test needs at least one shared sample")
    a, b = observed(stat, n)
    delta = b - a
    boot = bootstrap_deltas(stat, n, resamples=resamples, seed=seed)
    perm = randomization_deltas(stat, n, rounds=resamples, seed=seed)
    low, high = percentile_interval(boot, confidence)
    return PairedTest(
        n=n,
        a=a,
        b=b,
        delta=delta,
        ci_low=low,
        ci_high=high,
        p_bootstrap=bootstrap_p_value(boot, delta),
        p_randomization=randomization_p_value(perm, delta),
        resamples=resamples,
        seed=seed,
        confidence=confidence,
    )
