"""Benchmark metrics as bootstrap statistics: mean of scores when it is one, re-aggregation otherwise."""

from __future__ import annotations

import numpy as np
import pytest

from structbench.contract.benchmark import Scored
from structbench.stats import metric_interval, metric_statistic, percentile_interval
from toybench import ToyBench


def scored(n: int, seed: int) -> list[Scored]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        gold = "yes" if rng.random() < 0.4 else "no"
        parsed = gold if rng.random() < 0.7 else ("no" if gold == "yes" else "yes")
        out.append(Scored(id=f"s{i}", task="t", parsed=parsed, gold=gold, score=float(parsed == gold)))
    return out


def test_mean_metric_takes_the_vectorized_path() -> None:
    items = scored(60, 0)
    _, method = metric_statistic(items, ToyBench(), "accuracy")
    assert method == "mean"
    iv = metric_interval(items, ToyBench(), "accuracy", resamples=300, seed=4)
    assert iv.estimate == pytest.approx(ToyBench().aggregate(items)["accuracy"])


def test_corpus_metric_is_reaggregated_per_resample() -> None:
    items = scored(41, 1)
    bench = ToyBench()
    _, method = metric_statistic(items, bench, "yes_rate")
    assert method == "aggregate"
    iv = metric_interval(items, bench, "yes_rate", resamples=200, seed=3)
    pool = sorted(items, key=lambda s: s.id)  # the canonical order every interval resamples in
    rng = np.random.default_rng(3)
    ref = []
    for _ in range(200):
        idx = rng.integers(0, 41, size=41)
        ref.append(sum(pool[i].parsed == "yes" for i in idx) / 41)
    assert (iv.low, iv.high) == pytest.approx(percentile_interval(np.array(ref)), abs=1e-12)
    assert iv.se == pytest.approx(float(np.std(ref, ddof=1)))
    assert iv.estimate == pytest.approx(bench.aggregate(items)["yes_rate"])


def test_a_vectorized_statistic_the_benchmark_offers_comes_first() -> None:
    """Even where the metric happens to equal the mean score on the probes, the benchmark's own statistic of
    that metric is used: an interval is always a bootstrap of the metric it is labelled with."""
    from structbench.stats import MeanStatistic

    class Offering(ToyBench):
        def statistic(self, pool, metric):  # type: ignore[no-untyped-def]
            return MeanStatistic(np.array([float(s.parsed == "yes") for s in pool])) if metric == "accuracy" else None

    items = scored(30, 2)
    stat, method = metric_statistic(items, Offering(), "accuracy")
    assert method == "aggregate" and isinstance(stat, MeanStatistic)
    assert list(stat.values) == [float(s.parsed == "yes") for s in items]
