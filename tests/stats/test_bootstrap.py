"""Bootstrap intervals against straightforward loop computations with the same seed."""

from __future__ import annotations

import math
import statistics

import numpy as np
import pytest

from structbench.stats import FunctionStatistic, mean_interval, statistic_interval
from structbench.stats import bootstrap as bootstrap_module


def loop_bootstrap_means(values: list[float], resamples: int, seed: int) -> list[float]:
    """The reference: one resample at a time, summed in plain Python."""
    rng = np.random.default_rng(seed)
    n = len(values)
    means = []
    for _ in range(resamples):
        idx = rng.integers(0, n, size=n)
        means.append(sum(values[i] for i in idx) / n)
    return means


def percentile(xs: list[float], q: float) -> float:
    """Linear-interpolation percentile, written out (numpy's default method)."""
    s = sorted(xs)
    pos = (len(s) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


@pytest.mark.parametrize(("n", "seed"), [(37, 0), (101, 7), (2, 3)])
def test_mean_interval_equals_slow_loop(n: int, seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # Tiny chunks force many separate draws: the vectorized result must not depend on chunking.
    monkeypatch.setattr(bootstrap_module, "CHUNK_ELEMENTS", 5 * n)
    values = [float(x) for x in np.random.default_rng(100 + seed).random(n) > 0.4]
    values[0] = 0.5  # a partial score, so this is not only accuracy
    iv = mean_interval(values, resamples=500, seed=seed)
    ref = loop_bootstrap_means(values, 500, seed)
    assert iv.low == pytest.approx(percentile(ref, 2.5), abs=1e-12)
    assert iv.high == pytest.approx(percentile(ref, 97.5), abs=1e-12)
    assert iv.estimate == pytest.approx(sum(values) / n)
    assert iv.se == pytest.approx(statistics.stdev(values) / math.sqrt(n))
    assert (iv.n, iv.resamples, iv.seed, iv.method) == (n, 500, seed, "mean")


def test_generic_statistic_path_matches_mean_path() -> None:
    values = np.random.default_rng(1).random(53)
    fast = mean_interval(values, resamples=300, seed=11)
    slow = statistic_interval(FunctionStatistic(lambda row: float(values[row].mean())), 53, resamples=300, seed=11)
    assert (slow.low, slow.high) == pytest.approx((fast.low, fast.high), abs=1e-12)
    assert slow.estimate == pytest.approx(fast.estimate)
    ref = loop_bootstrap_means(list(values), 300, 11)
    assert slow.se == pytest.approx(statistics.stdev(ref), rel=1e-9)  # bootstrap SE for non-mean statistics


def test_interval_is_seeded_and_sensible() -> None:
    values = (np.random.default_rng(5).random(400) < 0.3).astype(float)
    a = mean_interval(values, seed=1)
    assert a == mean_interval(values, seed=1)
    assert a != mean_interval(values, seed=2)
    assert a.low < a.estimate < a.high
    # For a mean of 400 Bernoulli outcomes the percentile CI is close to the normal one (±1.96 SE).
    assert (a.high - a.low) == pytest.approx(2 * 1.96 * (a.se or 0), rel=0.12)
    narrow = mean_interval(values, confidence=0.5, seed=1)
    assert a.low < narrow.low < narrow.high < a.high


def test_degenerate_inputs() -> None:
    one = mean_interval([0.7], resamples=50)
    assert (one.estimate, one.low, one.high, one.se) == (0.7, 0.7, 0.7, None)
    with pytest.raises(ValueError):
        mean_interval([], resamples=10)
