"""Cluster bootstraps (each drawn sample with its epochs) against loop references written out here."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pytest

from structbench.stats import Design, FunctionStatistic, MeanStatistic, statistic_interval
from structbench.stats import bootstrap as bootstrap_module
from structbench.stats.bootstrap import RatioStatistic, counts_of, percentile_interval, ratio
from structbench.stats.classification import LabelStatistic
from structbench.stats.design import bootstrap_distribution


def clustered(sizes: list[int], seed: int) -> tuple[list[int], np.ndarray]:
    """Cluster keys (cluster i has sizes[i] samples, shuffled in the pool) and 0/1 outcomes correlated within
    clusters."""
    rng = np.random.default_rng(seed)
    keys = [c for c, size in enumerate(sizes) for _ in range(size)]
    order = rng.permutation(len(keys))
    keys = [keys[i] for i in order]
    rate = rng.random(len(sizes))
    return keys, (rng.random(len(keys)) < rate[keys]).astype(float)


def loop_cluster_means(keys: list[int], values: np.ndarray, resamples: int, seed: int) -> list[float]:
    """The reference: draw the clusters (codes in order of first appearance) one resample at a time and average
    every sample of every drawn cluster."""
    codes: dict[int, int] = {}
    for k in keys:
        codes.setdefault(k, len(codes))
    members: dict[int, list[int]] = {}
    for i, k in enumerate(keys):
        members.setdefault(codes[k], []).append(i)
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(resamples):
        drawn = rng.integers(0, len(codes), size=len(codes))
        picked = [i for c in drawn for i in members[int(c)]]
        out.append(sum(values[i] for i in picked) / len(picked))
    return out


@pytest.mark.parametrize("chunk", [10**9, 37])
def test_cluster_bootstrap_equals_the_loop_reference(chunk: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bootstrap_module, "CHUNK_ELEMENTS", chunk)  # 37: one resample per chunk
    keys, values = clustered([1, 5, 2, 9, 3, 3, 7, 1, 4, 6], seed=1)
    design = Design.of("table", keys, range(len(keys)))
    assert (design.clusters, design.samples, design.n) == (10, len(keys), len(keys))
    dist = bootstrap_distribution(MeanStatistic(values), design, resamples=300, seed=5)
    assert dist == pytest.approx(loop_cluster_means(keys, values, 300, 5), abs=1e-12)
    # the general path (outcome weights for any statistic) draws the same resamples
    slow = bootstrap_distribution(FunctionStatistic(lambda row: float(values[row].mean())), design, resamples=300,
                                  seed=5)
    assert slow == pytest.approx(dist, abs=1e-12)


def test_each_sample_its_own_cluster_is_the_ordinary_bootstrap() -> None:
    values = np.random.default_rng(2).random(40)
    design = Design.of("sample", list(range(40)), list(range(40)))
    assert np.array_equal(bootstrap_distribution(MeanStatistic(values), design, resamples=200, seed=3),
                          bootstrap_distribution(MeanStatistic(values), 40, resamples=200, seed=3))


def test_a_samples_cluster_is_its_first_outcomes() -> None:
    design = Design.of("table", ["t1", "t2", "t9", "t1"], ["a", "b", "a", "c"], [0, 0, 1, 0])
    assert design.samples == 3 and design.clusters == 2
    assert design.cluster.tolist() == [0, 1, 0, 0]  # sample "a" stays in t1 in its second epoch
    assert design.repeated and design.epochs == (0, 1)


def test_label_statistic_on_clusters_equals_the_loop_reference() -> None:
    rng = np.random.default_rng(4)
    n = 120
    keys = [int(k) for k in rng.integers(0, 25, size=n)]
    gold = [str(x) for x in rng.choice(["s", "r", "n"], size=n)]
    pred = [g if rng.random() < 0.6 else str(rng.choice(["s", "r", "n"])) for g in gold]
    stat = LabelStatistic.of(gold, pred, ["s", "r", "n"], lambda c: c.macro(c.f1))
    design = Design.of("table", keys, range(n))
    dist = bootstrap_distribution(stat, design, resamples=150, seed=8)
    codes: dict[int, int] = {}
    for k in keys:
        codes.setdefault(k, len(codes))
    members = [[i for i, k in enumerate(keys) if codes[k] == c] for c in range(len(codes))]
    ref_rng = np.random.default_rng(8)
    for value in dist:
        drawn = [i for c in ref_rng.integers(0, len(codes), size=len(codes)) for i in members[int(c)]]
        expected = stat.weighted(counts_of(np.array([drawn]), n))[0]
        assert value == pytest.approx(expected, abs=1e-12)


def test_clusters_widen_the_interval_of_correlated_outcomes() -> None:
    """Whole tables right or wrong: resampling questions as independent understates the spread several times."""
    keys = [t for t in range(60) for _ in range(8)]
    values = np.array([float(t % 2) for t in keys])
    by_cluster = statistic_interval(MeanStatistic(values), Design.of("table", keys, range(len(keys))), seed=0)
    alone = statistic_interval(MeanStatistic(values), len(keys), seed=0)
    assert by_cluster.estimate == alone.estimate == 0.5
    assert (by_cluster.high - by_cluster.low) > 2.5 * (alone.high - alone.low)
    assert (by_cluster.unit, by_cluster.clusters, alone.unit, alone.clusters) == ("table", 60, "sample", 480)
    # the table-level standard error: sd of the table means / sqrt(tables) = 0.5 / sqrt(60)
    assert by_cluster.se == pytest.approx(0.5 / math.sqrt(60), rel=0.15)


def test_epochs_average_their_metrics_and_resample_within_samples() -> None:
    rng = np.random.default_rng(6)
    samples, epochs = 50, 3
    keys = [s // 5 for s in range(samples) for _ in range(epochs)]
    ids = [s for s in range(samples) for _ in range(epochs)]
    which = [e for _ in range(samples) for e in range(epochs)]
    values = (rng.random(samples * epochs) < 0.5).astype(float)
    design = Design.of("table", keys, ids, which)
    iv = statistic_interval(MeanStatistic(values), design, resamples=400, seed=1)
    per_epoch = [values[[i for i, e in enumerate(which) if e == k]].mean() for k in range(epochs)]
    assert iv.estimate == pytest.approx(np.mean(per_epoch))
    assert (iv.n, iv.clusters, iv.epochs) == (samples, 10, 3)
    # identical epochs: the epoch level adds nothing, and the cluster draws of one chunk are the same
    same = np.repeat(values[::epochs], epochs)
    once = statistic_interval(MeanStatistic(values[::epochs]), Design.of("table", keys[::epochs], range(samples)),
                              resamples=400, seed=1)
    repeated = statistic_interval(MeanStatistic(same), design, resamples=400, seed=1)
    assert (repeated.low, repeated.high) == pytest.approx((once.low, once.high), abs=1e-12)


def test_a_drawn_sample_keeps_its_epochs_so_epochs_count_once() -> None:
    """Questions whose epochs disagree: a resample is the mean of the drawn questions' means over their epochs, the
    bootstrap of the questions with their epochs (redrawing the epochs as well made the interval ~17% wider)."""
    rng = np.random.default_rng(7)
    questions, epochs = 60, 3
    right = (rng.random((questions, epochs)) < rng.beta(2, 2, questions)[:, None]).astype(float)
    ids = np.repeat(np.arange(questions), epochs)
    design = Design.of("sample", ids, ids, np.tile(np.arange(epochs), questions))
    dist = bootstrap_distribution(MeanStatistic(right.ravel()), design, resamples=500, seed=4)
    means = bootstrap_distribution(MeanStatistic(right.mean(axis=1)), questions, resamples=500, seed=4)
    assert dist == pytest.approx(means, abs=1e-12)
    # each question right in one epoch of two: every question's mean is 0.5, so no resample differs
    half = Design.of("sample", np.repeat(np.arange(30), 2), np.repeat(np.arange(30), 2), [0, 1] * 30)
    assert np.ptp(bootstrap_distribution(MeanStatistic(np.array([1.0, 0.0] * 30)), half, resamples=300)) < 1e-12


@dataclass
class Recorder:
    """A statistic that keeps the weights it was evaluated on (the general path: outcome weights)."""

    values: np.ndarray
    seen: list[np.ndarray] = field(default_factory=list)

    def weighted(self, weights: np.ndarray) -> np.ndarray:
        self.seen.append(weights.copy())
        return ratio(weights @ self.values, weights.sum(axis=1))


def test_slot_k_holds_epoch_k_of_every_drawn_sample_as_often_as_its_cluster() -> None:
    keys = [s // 2 for s in range(8) for _ in range(3)]
    ids = [s for s in range(8) for _ in range(3)]
    which = [e for _ in range(8) for e in range(3)]
    design = Design.of("table", keys, ids, which)
    stat = Recorder(np.random.default_rng(3).random(len(ids)))
    bootstrap_distribution(stat, design, resamples=50, seed=1)
    draws = np.random.default_rng(1).integers(0, design.clusters, size=(50, design.clusters))
    counts = np.stack([np.bincount(row, minlength=design.clusters) for row in draws])
    assert len(stat.seen) == 3
    for epoch, weights in enumerate(stat.seen):
        expected = counts[:, design.cluster] * (np.array(which) == epoch)[None, :]
        assert np.array_equal(weights, expected)


def test_a_ratio_over_a_subset_is_nan_where_the_subset_is_not_drawn() -> None:
    stat = RatioStatistic(np.array([1.0, 0.0, 0.0]), np.array([1.0, 0.0, 0.0]))
    weights = np.array([[0.0, 2.0, 1.0], [1.0, 1.0, 1.0]])
    assert math.isnan(stat.weighted(weights)[0]) and stat.weighted(weights)[1] == 1.0
    assert RatioStatistic(np.zeros(3), np.zeros(3), 0.0).weighted(weights).tolist() == [0.0, 0.0]
    low, high = percentile_interval(np.array([math.nan, 0.2, 0.4]))
    assert (low, high) == pytest.approx((0.205, 0.395))


def test_a_sample_missing_an_epoch_is_left_out_of_that_epochs_metric() -> None:
    """Sample 1 lost its epoch 1 (a killed run): like the headline, each resample's epoch 1 is the mean over the
    drawn samples that have it, and a resample that drew none of them is the mean of epoch 0 alone."""
    values = np.array([1.0, 0.0, 1.0, 1.0, 0.0])  # samples 0 (two epochs), 1 (one), 2 (two)
    design = Design.of("sample", [0, 0, 1, 2, 2], [0, 0, 1, 2, 2], [0, 1, 0, 0, 1])
    iv = statistic_interval(MeanStatistic(values), design, resamples=300, seed=2)
    assert iv.estimate == pytest.approx(np.mean([values[[0, 2, 3]].mean(), values[[1, 4]].mean()]))
    dist = bootstrap_distribution(MeanStatistic(values), design, resamples=300, seed=2)
    by_epoch = {0: {0: 1.0, 1: 1.0, 2: 1.0}, 1: {0: 0.0, 2: 0.0}}  # epoch -> sample -> its value in that epoch
    expected = []
    for row in np.random.default_rng(2).integers(0, 3, size=(300, 3)):
        means = [np.mean([v[int(s)] for s in row if int(s) in v]) for v in by_epoch.values() if set(v) & set(row)]
        expected.append(np.mean(means))
    assert dist == pytest.approx(expected, abs=1e-12)
    assert {1.0, 0.5} <= set(dist.tolist())  # some resamples drew only sample 1
