"""A benchmark metric as a bootstrap ``Statistic`` over ``Scored`` outcomes, and its interval.

The interval of a metric is always a bootstrap of that very metric. A benchmark's vectorized
equivalent (``Benchmark.statistic``: the classification benchmarks count labels on all resamples at
once) is used where it offers one; otherwise, when the metric is the mean of per-sample ``score``
(accuracy, mean ROUGE-L ...) it is computed with numpy on all resamples at once, and else (macro-F1,
weighted F1 ...) each resample is re-aggregated through the benchmark's own ``aggregate``. Whether the
metric is a mean of scores is found by probing ``aggregate`` on the data. Without the benchmark there
is no interval: the mean per-sample score never stands in for another metric.

What is resampled is the benchmark's cluster (``Scored.cluster``: the questions of one table together), or,
by name, ``sample`` (every question on its own: the interval that assumes independent questions). The pool
is put in a canonical order first (cluster, id, epoch), so an interval does not depend on the order records
were written in: ``run``, ``report`` and ``compare`` compute the same one.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np

from structbench.stats.bootstrap import (
    DEFAULT_CONFIDENCE,
    DEFAULT_RESAMPLES,
    Interval,
    MeanStatistic,
    Statistic,
    drawn,
)
from structbench.stats.design import SAMPLE_UNIT, Design
from structbench.stats.intervals import mean_interval, statistic_interval

PROBE_SEED = 20240601
TOLERANCE = 1e-9

class Scored(Protocol):
    """An outcome as intervals need it (``benchmark.Scored``): which sample and epoch, its score and cluster."""

    @property
    def id(self) -> str: ...
    @property
    def score(self) -> float: ...
    @property
    def cluster(self) -> str | None: ...
    @property
    def epoch(self) -> int: ...


class Benchmark(Protocol):
    """What an interval needs of a benchmark (``benchmark.Benchmark``): its metrics over outcomes, a vectorized
    statistic where it offers one, and the name of its clusters; statistics know no benchmark."""

    @property
    def variants(self) -> tuple[str, ...]: ...
    def aggregate(self, scored: Sequence[Any]) -> Mapping[str, float]: ...
    def statistic(self, pool: Sequence[Any], metric: str) -> Statistic | None: ...
    def unit(self, variant: str) -> str: ...


@runtime_checkable
class Table(Protocol):
    """Outcomes held as columns (``structbench.runfiles.outcomes.Outcomes``): an interval reads their ids, clusters,
    epochs and
    scores as arrays and reorders them with ``take``, without building an object per outcome."""

    @property
    def id_array(self) -> np.ndarray:
        """The ids, in an array that sorts as the ids do."""
        ...
    @property
    def epoch_array(self) -> np.ndarray: ...
    @property
    def score_array(self) -> np.ndarray: ...
    def cluster_ranks(self) -> np.ndarray:
        """Each outcome's cluster as a rank that sorts as the clusters do; negative: no cluster."""
        ...
    def take(self, index: np.ndarray) -> Any: ...
    def __len__(self) -> int: ...


Resampling = Literal["cluster", "sample"]
"""``cluster``: resample the benchmark's clusters (its default); ``sample``: every question on its own."""


@dataclass(frozen=True)
class AggregateStatistic:
    """``bench.aggregate(...)[metric]`` over each resample of a pool of ``Scored`` (one call per resample)."""

    bench: Benchmark
    pool: Sequence[Scored]
    metric: str

    def value(self, row: np.ndarray) -> float:
        drawn = self.pool.take(row) if isinstance(self.pool, Table) else [self.pool[i] for i in row]
        return float(self.bench.aggregate(drawn).get(self.metric, math.nan))

    def weighted(self, weights: np.ndarray) -> np.ndarray:
        return np.array([self.value(drawn(row)) for row in weights], dtype=float)


def scores_of(pool: Sequence[Scored]) -> np.ndarray:
    if isinstance(pool, Table):
        return np.asarray(pool.score_array, dtype=float)
    return np.array([s.score for s in pool], dtype=float)


def is_mean_of_scores(bench: Benchmark, pool: Sequence[Scored], metric: str) -> bool:
    """True when ``metric`` equals the mean of per-sample scores on the pool and on a few resamples of it."""
    scores = scores_of(pool)
    n = len(pool)
    rng = np.random.default_rng(PROBE_SEED)
    rows = [np.arange(n)]
    if n > 1:
        rows += [rng.integers(0, n, size=n), rng.choice(n, size=max(1, n // 3), replace=False)]
    agg = AggregateStatistic(bench, pool, metric)
    return all(math.isclose(agg.value(r), float(scores[r].mean()), abs_tol=TOLERANCE) for r in rows)


def metric_statistic(pool: Sequence[Scored], bench: Benchmark, metric: str) -> tuple[Statistic, str]:
    """The statistic for ``metric`` over ``pool`` and how it is computed: ``aggregate`` (the benchmark's own
    vectorized statistic, or ``aggregate`` on every resample) or ``mean`` (the metric is the mean score)."""
    offered = bench.statistic(pool, metric)
    if offered is not None:
        return offered, "aggregate"
    if is_mean_of_scores(bench, pool, metric):
        return MeanStatistic(scores_of(pool)), "mean"
    return AggregateStatistic(bench, pool, metric), "aggregate"


def cluster_key(s: Scored, by: Resampling) -> tuple[int, str]:
    """The cluster an outcome is resampled with: its own (by id) when resampling samples or when it has none."""
    return (0, s.cluster) if by == "cluster" and s.cluster is not None else (1, s.id)


def unit_of(scored: Sequence[Scored], bench: Benchmark, variant: str | None, by: Resampling) -> str:
    """The name of the resampled unit: the benchmark's cluster where its outcomes carry clusters, else ``sample``."""
    if by == "cluster" and any(s.cluster is not None for s in scored):
        return bench.unit(variant or bench.variants[0])
    return SAMPLE_UNIT


def design_of(pool: Sequence[Scored], unit: str, by: Resampling = "cluster",
              keys: Sequence[tuple[int, str]] | None = None) -> Design:
    """The resampling design of ``pool``: its clusters (``by``; ``keys`` when already made), samples (by id) and
    epochs."""
    clusters = keys if keys is not None else [cluster_key(s, by) for s in pool]
    epochs = [s.epoch for s in pool]
    return Design.of(unit, clusters, [s.id for s in pool], epochs if any(epochs) else None)


def table_design(table: Table, bench: Benchmark, variant: str | None, by: Resampling) -> tuple[Any, Design]:
    """The canonical order and ``design_of`` on columns: the outcomes in canonical order (cluster, id, epoch) and their
    design, the same as the objects' (the same clusters, numbered alike)."""
    _, id_rank = np.unique(table.id_array, return_inverse=True)
    id_rank = id_rank.reshape(-1).astype(np.int64)
    ranks = np.asarray(table.cluster_ranks(), dtype=np.int64)
    alone = ranks < 0 if by == "cluster" else np.ones(len(ranks), dtype=bool)
    key = np.where(alone, len(ranks) + id_rank, ranks)  # (0, cluster) before (1, id), as ``cluster_key`` orders
    epochs = np.asarray(table.epoch_array, dtype=np.int64)
    order = np.lexsort((epochs, id_rank, key))
    pool = table.take(order)
    unit = bench.unit(variant or bench.variants[0]) if by == "cluster" and not alone.all() else SAMPLE_UNIT
    return pool, Design.of(unit, key[order], id_rank[order], epochs[order] if epochs.any() else None)


def metric_interval(
    scored: Sequence[Scored],
    bench: Benchmark,
    metric: str,
    *,
    by: Resampling = "cluster",
    variant: str | None = None,
    confidence: float = DEFAULT_CONFIDENCE,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> Interval:
    """Estimate, standard error and bootstrap CI of one benchmark metric over ``scored`` (with epochs: the mean of
    the epochs' metrics, each drawn sample keeping its epochs), resampling clusters (``by="cluster"``, where the
    outcomes carry them) or samples."""
    if isinstance(scored, Table):
        pool, design = table_design(scored, bench, variant, by)
    else:
        keys = [cluster_key(s, by) for s in scored]
        order = sorted(range(len(scored)), key=lambda i: (keys[i], scored[i].id, scored[i].epoch))  # canonical order
        pool = [scored[i] for i in order]
        design = design_of(pool, unit_of(pool, bench, variant, by), by, [keys[i] for i in order])
    stat, method = metric_statistic(pool, bench, metric)
    options = {"confidence": confidence, "resamples": resamples, "seed": seed, "method": method}
    if isinstance(stat, MeanStatistic):
        return mean_interval(stat.values, design=design, **options)  # type: ignore[arg-type]
    return statistic_interval(stat, design, **options)  # type: ignore[arg-type]
