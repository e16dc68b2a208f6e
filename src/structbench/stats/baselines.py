"""Trivial predictors to read a score against: chance (uniform random answers) and the majority class.

For benchmarks whose answer is one of a closed set of labels, a baseline is the benchmark's own
``aggregate`` over the same samples with every answer replaced: ``majority`` always answers the most
frequent gold label, ``chance`` answers uniformly at random among the labels (the mean over ``draws``
seeded draws, so corpus metrics such as weighted F1 get their true expectation, not 1/k).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, Self, TypeVar

import numpy as np


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


def answered(scored: Sequence[OutcomeT], answers: Sequence[str]) -> list[OutcomeT]:
    """``scored`` as if each sample had been answered ``answers[i]`` (correct when it equals the gold)."""
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
    counts = Counter(str(s.gold) for s in scored)
    majority = max(labels, key=lambda label: (counts[label], -labels.index(label)))  # ties: the first label
    rng = np.random.default_rng(CHANCE_SEED)
    picks = rng.integers(0, len(labels), size=(draws, len(scored)))
    chance = [bench.aggregate(answered(scored, [labels[i] for i in row])).get(metric, np.nan) for row in picks]
    return {
        "chance": float(np.mean(chance)),
        "majority": float(bench.aggregate(answered(scored, [majority] * len(scored))).get(metric, np.nan)),
    }
