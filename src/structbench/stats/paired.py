"""Paired significance tests of system B against system A on the same samples, respecting their clusters.

Both tests work on a *pool*: system A's outcomes, then system B's (``PairedDesign``); both systems' designs
code the same clusters, so a ``Statistic`` over the pool serves any metric, and the pairs are clusters:

- Paired cluster bootstrap (Efron & Tibshirani 1993; Berg-Kirkpatrick et al. 2012; Field & Welsh 2007 for
  clusters): draw clusters with replacement (``stats.design``; each system's drawn samples keep their epochs); the
  deltas centred on the observed delta approximate its null distribution: ``p = mean(|delta* - delta| >=
  |delta|)``.
- Approximate randomization (Noreen 1989), by cluster: swap the two systems' outputs on every sample of a
  cluster at once with probability 1/2 (row ``r`` swaps cluster ``c`` where ``default_rng(seed).random((R,
  C))[r, c] < 0.5``); ``p = (1 + #{|delta_r| >= |delta|}) / (R + 1)``. With several epochs, the swapped
  systems' epochs are matched by number and the metric averaged over them.

With independent samples (each its own cluster, answered once) these are the textbook per-pair tests. With
few clusters neither p-value can be small: the randomization p cannot go below ``2 / 2^C`` (``min_p``) and the
bootstrap p is unreliable, which ``PairedTest.small`` says and the reports show.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from structbench.stats.bootstrap import (
    DEFAULT_CONFIDENCE,
    DEFAULT_RESAMPLES,
    Linear,
    Statistic,
    chunk_rows,
    finite,
    percentile_interval,
)
from structbench.stats.design import (
    Design,
    Part,
    cluster_draws,
    evaluate,
    index_draws,
    mean_of_slots,
    observed,
    resampled,
    width,
)

TIE = 1e-12
"""Deltas within this of the observed one count as at least as extreme (ties in discrete metrics)."""
MIN_CLUSTERS = 10
"""Below this many clusters the paired bootstrap p-value is not reported (too few distinct resamples for a
tail probability), and a comparison warns that its p-values are coarse."""


@dataclass(frozen=True)
class PairedDesign:
    """The two systems' outcomes in one pool (A's first), their clusters coded alike."""

    a: Design
    b: Design

    def __post_init__(self) -> None:
        if self.a.clusters != self.b.clusters:
            raise ValueError("both systems of a paired design must code the same clusters")

    @classmethod
    def independent(cls, n: int) -> PairedDesign:
        """``n`` independent pairs answered once."""
        return cls(Design.independent(n), Design.independent(n))

    @property
    def aligned(self) -> bool:
        """Independent pairs in order: pair ``j`` is A's outcome ``j`` and B's outcome ``j``."""
        return (self.a.independent_samples and self.b.independent_samples and self.a.n == self.b.n
                and bool(np.array_equal(self.a.sample, self.b.sample)))

    @property
    def pool(self) -> int:
        return self.a.n + self.b.n

    @property
    def clusters(self) -> int:
        return self.a.clusters

    def parts(self) -> tuple[Part, Part]:
        return Part(self.a), Part(self.b, self.a.n)


def _design(design: PairedDesign | int) -> PairedDesign:
    return PairedDesign.independent(design) if isinstance(design, int) else design


def observed_pair(stat: Statistic, design: PairedDesign | int) -> tuple[float, float]:
    """The metric of system A and of system B on their own outcomes."""
    design = _design(design)
    a, b = design.parts()
    return observed(stat, design.pool, a), observed(stat, design.pool, b)


def bootstrap_deltas(
    stat: Statistic, design: PairedDesign | int, *, resamples: int = DEFAULT_RESAMPLES, seed: int = 0
) -> np.ndarray:
    """``metric(B) - metric(A)`` on each paired cluster bootstrap resample."""
    design = _design(design)
    a, b = design.parts()
    rng = np.random.default_rng(seed)
    out = []
    if isinstance(stat, Linear) and design.aligned:  # pairs j = (j, n + j): sums of drawn rows
        for idx in index_draws(rng, design.a.n, resamples):
            out.append(stat.finish(stat.on_rows(idx + design.a.n)) - stat.finish(stat.on_rows(idx)))
        return np.concatenate(out)
    for counts in cluster_draws(rng, design.clusters, resamples, width(stat, [design.a, design.b])):
        out.append(resampled(stat, design.pool, b, counts) - resampled(stat, design.pool, a, counts))
    return np.concatenate(out)


def _swapped(stat: Statistic, design: PairedDesign, keep: np.ndarray) -> np.ndarray:
    """The metric of the system made of A's outcomes where ``keep`` (rows, clusters) is 1 and B's where it is
    0, averaged over the epochs either has."""
    a, b = design.parts()
    swap = 1.0 - keep
    if not design.a.repeated and not design.b.repeated:
        return evaluate(stat, design.pool, clusters=[(a, keep), (b, swap)])
    slots = []
    for epoch in sorted(set(design.a.epochs) | set(design.b.epochs)):
        wa, wb = a.in_epoch(keep, epoch), b.in_epoch(swap, epoch)
        value = evaluate(stat, design.pool, outcomes=[(a, wa), (b, wb)])
        slots.append(np.where(wa.sum(axis=1) + wb.sum(axis=1) > 0, value, np.nan))
    return mean_of_slots(slots)


def randomization_deltas(
    stat: Statistic, design: PairedDesign | int, *, rounds: int = DEFAULT_RESAMPLES, seed: int = 0
) -> np.ndarray:
    """``metric(B') - metric(A')`` after randomly swapping the two systems' outputs, a whole cluster at once."""
    design = _design(design)
    rng = np.random.default_rng(seed)
    rows = chunk_rows(max(design.clusters, width(stat, [design.a, design.b])))
    out = []
    for start in range(0, rounds, rows):
        swap = (rng.random((min(rows, rounds - start), design.clusters)) < 0.5).astype(float)
        out.append(_swapped(stat, design, swap) - _swapped(stat, design, 1.0 - swap))
    return np.concatenate(out)


def bootstrap_p_value(deltas: np.ndarray, delta: float) -> float:
    """Two-sided p-value of the paired bootstrap (shift method), over resamples where the metric is defined."""
    values = finite(deltas)
    if not math.isfinite(delta) or len(values) == 0:
        return math.nan
    return float(np.mean(np.abs(values - delta) >= abs(delta) - TIE))


def randomization_p_value(deltas: np.ndarray, delta: float) -> float:
    """Two-sided p-value of approximate randomization, add-one smoothed so it is never 0, over rounds where the metric
    is defined; NaN where none is (as the bootstrap's), not the 1.0 that smoothing alone would give."""
    values = finite(deltas)
    if not math.isfinite(delta) or len(values) == 0:
        return math.nan
    return float((1 + np.sum(np.abs(values) >= abs(delta) - TIE)) / (len(values) + 1))


def min_p(clusters: int) -> float:
    """The smallest two-sided p-value an exact randomization test over ``clusters`` swaps can give."""
    return min(1.0, 2.0 / 2.0 ** clusters) if clusters < 1024 else 0.0


@dataclass(frozen=True)
class PairedTest:
    """System B against system A on ``n`` shared samples in ``clusters`` resampled units."""

    n: int
    a: float
    b: float
    delta: float
    """``b - a``."""
    ci_low: float
    ci_high: float
    """Percentile interval of ``delta`` over the paired cluster bootstrap."""
    p_bootstrap: float
    p_randomization: float
    resamples: int
    seed: int
    confidence: float
    unit: str = "sample"
    """What was resampled and swapped: ``sample`` or the benchmark's cluster (``table`` ...)."""
    clusters: int = 0
    se: float | None = None
    """Bootstrap standard error of ``delta``."""

    @property
    def small(self) -> bool:
        """Too few clusters for a bootstrap tail probability: the bootstrap p is not to be reported."""
        return self.clusters < MIN_CLUSTERS

    @property
    def min_p(self) -> float:
        """The smallest p-value the randomization test could give with this many clusters."""
        return min_p(self.clusters)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def paired_test(
    stat: Statistic,
    design: PairedDesign | int,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    confidence: float = DEFAULT_CONFIDENCE,
) -> PairedTest:
    """Paired cluster bootstrap and cluster randomization of B against A over ``design``'s pool (an ``int`` n:
    n independent pairs, the pool being A's n outcomes then B's)."""
    design = _design(design)
    if design.a.samples < 1 or design.b.samples < 1:
        raise ValueError("a paired test needs at least one shared sample")
    a, b = observed_pair(stat, design)
    delta = b - a
    boot = bootstrap_deltas(stat, design, resamples=resamples, seed=seed)
    perm = randomization_deltas(stat, design, rounds=resamples, seed=seed)
    low, high = percentile_interval(boot, confidence)
    values = finite(boot)
    return PairedTest(
        n=design.a.samples,
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
        unit=design.a.unit,
        clusters=design.clusters,
        se=float(values.std(ddof=1)) if len(values) > 1 else None,
    )
