"""Trivial predictors to read a score against: chance (uniform random answers) and the majority class.

For benchmarks whose answer is one of a closed set of labels, a baseline is the benchmark's own
``aggregate`` over the same samples with every answer replaced: ``majority`` always answers the most
frequent gold label, ``chance`` answers uniformly at random among the labels (the mean over ``draws``
seeded draws, so corpus metrics such as weighted F1 get their true expectation, not 1/k).

Where the benchmark offers a vectorized ``statistic`` of the metric, the draws are weights over a pool in
which every sample is answered with every label once (a draw picks one answer per sample), so all of them
cost one statistic instead of one ``aggregate`` each; outcomes held as columns (``structbench.runfiles.outcomes``)
are answered without copying an object per sample (their ``answered`` and ``repeated``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, Self, TypeVar

import numpy as np

from structbench.stats.bootstrap import Linear, Statistic, chunk_rows, counts_of


class Outcome(Protocol):
    """A scored sample as the baselines need it (``benchmark.Scored``): its gold, and a copy with other fields."""

    gold: Any

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self: ...


OutcomeT = TypeVar("OutcomeT", bound=Outcome)


OutcomeC = TypeVar("OutcomeC", bound=Outcome, contravariant=True)


class Aggregates(Protocol[OutcomeC]):
    """What computes a metric over outcomes (a ``Benchmark``)."""

    def aggregate(self, scored: Sequence[OutcomeC]) -> Mapping[str, float]: ...


CHANCE_DRAWS = 200
CHANCE_SEED = 0


def answered(scored: Sequence[OutcomeT], answers: Sequence[str]) -> Sequence[OutcomeT]:
    """``scored`` as if each sample had been answered ``answers[i]`` (correct when it equals the gold)."""
    columns = getattr(scored, "answered", None)
    if columns is not None:
        return columns(answers)
    return [
        s.model_copy(update={"parsed": a, "score": float(a == s.gold), "values": {}})
        for s, a in zip(scored, answers, strict=True)
    ]


def label_baselines(
    bench: Aggregates[OutcomeT], scored: Sequence[OutcomeT], labels: Sequence[str], metric: str, *,
    draws: int = CHANCE_DRAWS,
) -> dict[str, float]:
    """``metric`` under the majority-class and the uniform-chance predictor on the samples of ``scored``."""
    if not scored or not labels:
        return {}
    golds = scored.labels("gold") if hasattr(scored, "labels") else [s.gold for s in scored]
    counts = Counter(str(g) for g in golds)
    majority = max(labels, key=lambda label: (counts[label], -labels.index(label)))  # ties: the first label
    rng = np.random.default_rng(CHANCE_SEED)
    drawn = rng.integers(0, len(labels), size=(draws, len(scored)))
    picks = np.empty_like(drawn)
    picks[:, sample_order(scored)] = drawn  # draw j answers the j-th outcome in (id, epoch) order
    chance = _chance_by_statistic(bench, scored, labels, metric, picks)
    if chance is None:
        chance = np.array([bench.aggregate(answered(scored, [labels[i] for i in row])).get(metric, np.nan)
                           for row in picks])
    return {
        "chance": float(np.mean(chance)),
        "majority": float(bench.aggregate(answered(scored, [majority] * len(scored))).get(metric, np.nan)),
    }


def sample_order(scored: Sequence[Any]) -> np.ndarray:
    """The outcomes' positions sorted by (sample id, epoch): the seeded chance draws follow the samples, so the
    baseline is the same however the answers came back (a run records them as they finish)."""
    ids = getattr(scored, "id_array", None)
    epochs = getattr(scored, "epoch_array", None)
    if ids is None or epochs is None:
        ids = np.array([str(s.id) for s in scored])
        epochs = np.array([getattr(s, "epoch", 0) for s in scored], dtype=np.int64)
    return np.lexsort((np.asarray(epochs), np.asarray(ids)))


def _chance_by_statistic(
    bench: Any, scored: Sequence[OutcomeT], labels: Sequence[str], metric: str, picks: np.ndarray
) -> np.ndarray | None:
    """The metric under each row of ``picks`` (a label index per sample), through the benchmark's ``statistic`` over
    every sample answered with every label; None where the benchmark offers no statistic of ``metric``."""
    offer = getattr(bench, "statistic", None)
    if offer is None:
        return None
    n, k = len(scored), len(labels)
    repeat = getattr(scored, "repeated", None)
    pool = repeat(k) if repeat is not None else [s for s in scored for _ in range(k)]
    stat: Statistic | None = offer(answered(pool, list(labels) * n), metric)
    if stat is None:
        return None
    positions = np.arange(n, dtype=np.int64)[None, :] * k + picks  # a draw's answer of sample i is its copy picks[i]
    step = chunk_rows(n if isinstance(stat, Linear) else n * k)  # resamples a chunk at a time
    out = []
    for start in range(0, len(picks), step):
        rows = positions[start:start + step]
        if isinstance(stat, Linear):  # drawn positions summed a feature at a time: no (R, N * k) weights
            out.append(stat.finish(stat.on_rows(rows)))
        else:
            out.append(stat.weighted(counts_of(rows, n * k)))
    return np.concatenate(out)
