"""Paired bootstrap and approximate randomization against loop references and known answers."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from structbench.stats import FunctionStatistic, MeanStatistic, paired_test, statistic_interval
from structbench.stats import bootstrap as bootstrap_module
from structbench.stats.paired import bootstrap_deltas, bootstrap_p_value, randomization_deltas, randomization_p_value


def pool(a: np.ndarray, b: np.ndarray) -> MeanStatistic:
    return MeanStatistic(np.concatenate([a, b]))


def loop_reference(
    a: list[Any], b: list[Any], metric: Callable[[list[Any]], float], resamples: int, seed: int
) -> tuple[float, float]:
    """Both p-values computed one resample (one shuffle) at a time."""
    n = len(a)
    delta = metric(b) - metric(a)
    rng = np.random.default_rng(seed)
    extreme = 0
    for _ in range(resamples):
        idx = rng.integers(0, n, size=n)
        d = metric([b[i] for i in idx]) - metric([a[i] for i in idx])
        extreme += abs(d - delta) >= abs(delta) - 1e-12
    p_boot = extreme / resamples
    rng = np.random.default_rng(seed)
    extreme = 0
    for _ in range(resamples):
        swap = rng.random(n) < 0.5
        a2 = [b[i] if swap[i] else a[i] for i in range(n)]
        b2 = [a[i] if swap[i] else b[i] for i in range(n)]
        extreme += abs(metric(b2) - metric(a2)) >= abs(delta) - 1e-12
    return p_boot, (extreme + 1) / (resamples + 1)


def mean(xs: list[float]) -> float:
    return sum(xs) / len(xs)


def test_mean_tests_equal_loop_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bootstrap_module, "CHUNK_ELEMENTS", 200)
    rng = np.random.default_rng(3)
    a = (rng.random(45) < 0.55).astype(float)
    b = (rng.random(45) < 0.70).astype(float)
    t = paired_test(pool(a, b), 45, resamples=400, seed=9)
    p_boot, p_rand = loop_reference(list(a), list(b), mean, 400, 9)
    assert t.delta == pytest.approx(b.mean() - a.mean())
    assert t.p_bootstrap == pytest.approx(p_boot, abs=1e-12)
    assert t.p_randomization == pytest.approx(p_rand, abs=1e-12)


def macro_f1(labels: list[int]) -> float:
    """A corpus-level metric that is not a mean of per-sample values (gold cycles 0, 1, 2)."""
    gold = [i % 3 for i in range(len(labels))]
    f1s = []
    for c in range(3):
        tp = sum(g == c and p == c for g, p in zip(gold, labels, strict=True))
        fp = sum(g != c and p == c for g, p in zip(gold, labels, strict=True))
        fn = sum(g == c and p != c for g, p in zip(gold, labels, strict=True))
        f1s.append(2 * tp / (2 * tp + fp + fn) if tp else 0.0)
    return sum(f1s) / 3


def test_corpus_metric_tests_equal_loop_reference() -> None:
    rng = np.random.default_rng(4)
    n = 30
    gold = [i % 3 for i in range(n)]
    a = [g if rng.random() < 0.5 else int(rng.integers(0, 3)) for g in gold]
    b = [g if rng.random() < 0.8 else int(rng.integers(0, 3)) for g in gold]
    both = a + b
    # The metric of a row is computed against the gold of each position's sample (position mod n).
    def on_row(row: np.ndarray) -> float:
        preds = [both[i] for i in row]
        golds = [i % n % 3 for i in row]
        f1s = []
        for c in range(3):
            tp = sum(g == c and p == c for g, p in zip(golds, preds, strict=True))
            fp = sum(g != c and p == c for g, p in zip(golds, preds, strict=True))
            fn = sum(g == c and p != c for g, p in zip(golds, preds, strict=True))
            f1s.append(2 * tp / (2 * tp + fp + fn) if tp else 0.0)
        return sum(f1s) / 3

    t = paired_test(FunctionStatistic(on_row), n, resamples=200, seed=5)
    assert t.a == pytest.approx(macro_f1(a)) and t.b == pytest.approx(macro_f1(b))

    # Reference on (gold, prediction) pairs so resampled golds travel with their predictions.
    def metric(pairs: list[tuple[int, int]]) -> float:
        f1s = []
        for c in range(3):
            tp = sum(g == c and p == c for g, p in pairs)
            fp = sum(g != c and p == c for g, p in pairs)
            fn = sum(g == c and p != c for g, p in pairs)
            f1s.append(2 * tp / (2 * tp + fp + fn) if tp else 0.0)
        return sum(f1s) / 3

    p_boot, p_rand = loop_reference(list(zip(gold, a, strict=True)), list(zip(gold, b, strict=True)), metric, 200, 5)
    assert t.p_bootstrap == pytest.approx(p_boot, abs=1e-12)
    assert t.p_randomization == pytest.approx(p_rand, abs=1e-12)


def test_identical_systems_give_p_one() -> None:
    a = (np.random.default_rng(0).random(80) < 0.6).astype(float)
    t = paired_test(pool(a, a.copy()), 80, resamples=500, seed=0)
    assert t.delta == 0.0 and t.p_bootstrap == 1.0 and t.p_randomization == 1.0
    assert t.ci_low == t.ci_high == 0.0


def test_clearly_different_systems_give_p_near_zero() -> None:
    rng = np.random.default_rng(1)
    a = (rng.random(200) < 0.3).astype(float)
    b = (rng.random(200) < 0.9).astype(float)
    t = paired_test(pool(a, b), 200, resamples=1000, seed=0)
    assert t.delta > 0.4 and t.ci_low > 0.3
    assert t.p_bootstrap < 0.002 and t.p_randomization <= 2 / 1001


def test_randomization_matches_exact_sign_flip_test() -> None:
    """For a mean, approximate randomization estimates the exact paired permutation test."""
    a = np.array([1, 0, 1, 1, 0, 0, 1, 0, 1, 0], dtype=float)
    b = np.array([1, 1, 1, 1, 0, 1, 1, 1, 1, 0], dtype=float)
    d = b - a
    observed = abs(d.mean())
    flips = [abs(np.mean(d * np.array(s))) >= observed - 1e-12 for s in itertools.product((1, -1), repeat=10)]
    exact = float(np.mean(flips))
    t = paired_test(pool(a, b), 10, resamples=20000, seed=2)
    assert t.p_randomization == pytest.approx(exact, abs=0.01)


def test_null_rejection_rate_is_near_nominal() -> None:
    """Two systems of equal quality: about 5% of tests reject at 0.05 (neither test is wildly off)."""
    rng = np.random.default_rng(7)
    boot, rand = [], []
    for trial in range(150):
        a = (rng.random(60) < 0.6).astype(float)
        b = (rng.random(60) < 0.6).astype(float)
        t = paired_test(pool(a, b), 60, resamples=400, seed=trial)
        boot.append(t.p_bootstrap < 0.05)
        rand.append(t.p_randomization < 0.05)
    assert 0.0 < np.mean(boot) < 0.13
    assert 0.0 < np.mean(rand) < 0.13


def test_delta_distributions_are_seeded() -> None:
    stat = pool(np.arange(20) % 2.0, np.arange(20) % 3.0 / 2)
    first = bootstrap_deltas(stat, 20, resamples=50, seed=1)
    assert np.array_equal(first, bootstrap_deltas(stat, 20, resamples=50, seed=1))
    one = randomization_deltas(stat, 20, rounds=50, seed=1)
    assert not np.array_equal(one, randomization_deltas(stat, 20, rounds=50, seed=2))
    with pytest.raises(ValueError):
        paired_test(stat, 0)


def test_resamples_where_the_metric_is_undefined_are_left_out() -> None:
    """A metric over the 'answerable' samples only is NaN on resamples that draw none of them."""
    answerable = np.array([1, 0, 0, 0, 0, 0], dtype=bool)
    a = np.array([0, 1, 1, 0, 1, 0], dtype=float)
    b = np.array([1, 0, 1, 1, 0, 1], dtype=float)
    both = np.concatenate([a, b])
    mask = np.concatenate([answerable, answerable])

    def on_row(row: np.ndarray) -> float:
        keep = row[mask[row]]
        return float(both[keep].mean()) if len(keep) else float("nan")

    t = paired_test(FunctionStatistic(on_row), 6, resamples=300, seed=0)
    assert t.delta == 1.0 and math.isfinite(t.ci_low) and math.isfinite(t.ci_high)
    assert 0.0 <= t.p_bootstrap <= 1.0 and 0.0 < t.p_randomization <= 1.0
    iv = statistic_interval(FunctionStatistic(on_row), 6, resamples=300, seed=0)
    assert iv.low == iv.high == 0.0 and iv.se == 0.0  # system A is wrong on the one answerable sample


def cluster_reference(a: np.ndarray, b: np.ndarray, keys: list[int], resamples: int, seed: int) -> tuple[float, float]:
    """Both p-values of a mean with whole clusters drawn and swapped, one resample (one shuffle) at a time."""
    codes: dict[int, int] = {}
    for k in keys:
        codes.setdefault(k, len(codes))
    c = len(codes)
    members = [[i for i, k in enumerate(keys) if codes[k] == j] for j in range(c)]
    delta = b.mean() - a.mean()
    rng = np.random.default_rng(seed)
    extreme = 0
    for _ in range(resamples):
        picked = [i for j in rng.integers(0, c, size=c) for i in members[int(j)]]
        extreme += abs(b[picked].mean() - a[picked].mean() - delta) >= abs(delta) - 1e-12
    p_boot = extreme / resamples
    rng = np.random.default_rng(seed)
    extreme = 0
    for _ in range(resamples):
        swap = rng.random(c) < 0.5
        flip = np.array([swap[codes[k]] for k in keys])
        a2, b2 = np.where(flip, b, a), np.where(flip, a, b)
        extreme += abs(b2.mean() - a2.mean()) >= abs(delta) - 1e-12
    return p_boot, (extreme + 1) / (resamples + 1)


def test_cluster_tests_equal_loop_reference() -> None:
    from structbench.stats import Design, PairedDesign

    rng = np.random.default_rng(11)
    keys = [int(k) for k in rng.integers(0, 15, size=70)]
    a = (rng.random(70) < 0.5).astype(float)
    b = np.where(np.array(keys) % 3 == 0, 1.0, a)  # B fixes every question of a third of the tables
    design = PairedDesign(Design.of("table", keys, range(70)), Design.of("table", keys, range(70)))
    t = paired_test(pool(a, b), design, resamples=300, seed=4)
    p_boot, p_rand = cluster_reference(a, b, keys, 300, 4)
    assert (t.unit, t.clusters, t.n) == ("table", 15, 70)
    assert t.p_bootstrap == pytest.approx(p_boot, abs=1e-12)
    assert t.p_randomization == pytest.approx(p_rand, abs=1e-12)
    alone = paired_test(pool(a, b), 70, resamples=300, seed=4)
    assert alone.ci_high - alone.ci_low < t.ci_high - t.ci_low  # independent pairs understate the spread


def test_few_clusters_give_no_bootstrap_p_and_a_floor() -> None:
    a = np.array([0.0, 1.0, 0.0])
    b = np.array([1.0, 1.0, 1.0])
    t = paired_test(pool(a, b), 3, resamples=1000, seed=0)
    assert t.small and t.min_p == pytest.approx(0.25)
    assert t.p_randomization >= 0.2  # an exact test could not go below 2 / 2^3
    big = paired_test(pool(np.zeros(40), np.ones(40)), 40, resamples=100, seed=0)
    assert not big.small


def test_a_randomization_with_no_defined_round_has_no_p_value() -> None:
    """Where the metric is undefined in every swapped round, add-one smoothing alone gives (1 + 0) / (0 + 1) = 1.0, a
    p-value that looks like 'no difference at all'; it is NaN, as the bootstrap's is with no defined resample."""
    undefined = np.full(200, np.nan)
    assert math.isnan(randomization_p_value(undefined, 0.3)) and math.isnan(bootstrap_p_value(undefined, 0.3))
    assert randomization_p_value(np.array([0.1, 0.5, np.nan]), 0.3) == 2 / 3  # the defined rounds only
