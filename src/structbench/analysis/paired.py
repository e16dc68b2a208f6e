"""Paired tests over records: system B against system A on the samples both answered (two runs, two strategies of
one run, or a sweep's cell against its reference cell), each pair of outcome lists resampled and swapped by the
benchmark's clusters (the questions of one table together; ``sample``: each question on its own), each system's
epochs averaged as its headline averages them.

Below the runner and the report, so that what writes ``metrics.json`` (a sweep's robustness,
``structbench.analysis.robustness``) and what reads it (``compare``, the leaderboard's tests) test the same way
with the same ``StatsOptions``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from structbench.contract.benchmark import Benchmark, Scored
from structbench.runfiles.records import RecordSummary, SampleRecord
from structbench.runfiles.results import Headline
from structbench.stats import (
    DEFAULT_CONFIDENCE,
    DEFAULT_RESAMPLES,
    Design,
    MeanStatistic,
    PairedDesign,
    PairedTest,
    Statistic,
    paired_test,
)
from structbench.stats.design import SAMPLE_UNIT
from structbench.stats.grid import GridDesign, designs_of
from structbench.stats.metric import AggregateStatistic, Resampling, design_of, metric_statistic, scores_of
from structbench.stats.multiple import Correction


@dataclass(frozen=True)
class StatsOptions:
    """How headline intervals and tests are computed."""

    resamples: int = DEFAULT_RESAMPLES
    seed: int = 0
    confidence: float = DEFAULT_CONFIDENCE
    by: Resampling = "cluster"
    """What is resampled: the benchmark's clusters, or (``sample``) every question on its own."""
    correction: Correction = "holm"
    """Multiple-comparison correction of a family of tests (a leaderboard's against the best, a sweep's cells against
    the reference cell): Holm (family-wise error) or Benjamini-Hochberg (false discovery rate)."""
    alpha: float = 0.05
    """Significance level of those tests (after the correction)."""

    def matches(self, headline: Headline) -> bool:
        """Whether the interval ``metrics.json`` stores for ``headline`` is the one these options ask for (then it
        is shown as stored, not computed again)."""
        same = (headline.resamples, headline.seed, headline.confidence) == (self.resamples, self.seed, self.confidence)
        return same and (self.by == "cluster" or headline.unit == "sample")


RecordPair = tuple[Sequence[SampleRecord | RecordSummary], Sequence[SampleRecord | RecordSummary]]
"""One sample's records in system A and in system B (one per epoch each)."""
Pair = tuple[Sequence[SampleRecord | RecordSummary | Scored], Sequence[SampleRecord | RecordSummary | Scored]]
"""A ``RecordPair``, or its outcomes (``scored_pairs``)."""


def _cluster_of(pair: Pair) -> str | None:
    """The pair's cluster: the one A's record names, else B's."""
    return next((r.cluster for r in (*pair[0], *pair[1]) if r.cluster is not None), None)


def _outcome(record: SampleRecord | RecordSummary | Scored, cluster: str | None) -> Scored:
    if type(record) is Scored and record.cluster == cluster:  # already one (``scored_pairs``)
        return record
    return record.scored().model_copy(update={"cluster": cluster})  # type: ignore[union-attr]


def scored_pairs(pairs: Sequence[Pair]) -> list[Pair]:
    """Each pair's records as the outcomes its tests pool (with the pair's cluster), made once: the overall test and
    every breakdown group's of the same pairs then pool them without building them again."""
    out: list[Pair] = []
    for pair in pairs:
        cluster = _cluster_of(pair)
        out.append(([_outcome(r, cluster) for r in pair[0]], [_outcome(r, cluster) for r in pair[1]]))
    return out


def _statistic(pool: Sequence[Scored], bench: Benchmark, metric: str, method: str) -> Statistic:
    if method == "aggregate":
        return bench.statistic(pool, metric) or AggregateStatistic(bench, pool, metric)
    return MeanStatistic(scores_of(pool))


def paired_pool(pairs: Sequence[Pair], bench: Benchmark, variant: str, by: Resampling) -> tuple[list[Scored],
                                                                                                PairedDesign]:
    """System A's outcomes then system B's, pairs in canonical order (cluster, id), and their paired design: a
    pair's cluster is the one A's record names (else B's), so both systems resample and swap the same clusters."""

    clusters = [_cluster_of(p) for p in pairs]

    def order(i: int) -> tuple[tuple[int, str], str]:
        cluster, id_ = clusters[i], pairs[i][0][0].id
        return ((0, cluster) if by == "cluster" and cluster is not None else (1, id_)), id_

    keyed = sorted(range(len(pairs)), key=order)
    unit = SAMPLE_UNIT if by == "sample" or all(c is None for c in clusters) else bench.unit(variant)
    sides = [[_outcome(r, clusters[i]) for i in keyed for r in pairs[i][side]] for side in (0, 1)]
    every = sides[0] + sides[1]
    design = design_of(every, unit, by)  # one coding of clusters and samples for both systems
    n_a = len(sides[0])
    a = Design(unit, design.cluster[:n_a], design.sample[:n_a], design.epoch[:n_a], design.clusters, design.samples)
    b = Design(unit, design.cluster[n_a:], design.sample[n_a:], design.epoch[n_a:], design.clusters, design.samples)
    return every, PairedDesign(a, b)


def grid_pool(cells: Sequence[Sequence[Sequence[SampleRecord | RecordSummary]]], bench: Benchmark, variant: str,
              by: Resampling) -> tuple[list[Scored], GridDesign]:
    """K systems' outcomes on the same samples (``cells[k][j]``: system k's records of sample j, one per epoch),
    each in canonical order (cluster, id) and pooled, with their grid design: a sample's cluster is the one the
    first system's record names, so every system resamples and shuffles the same clusters."""

    def cluster_of(j: int) -> str | None:
        return next((r.cluster for cell in cells for r in cell[j] if r.cluster is not None), None)

    def order(j: int) -> tuple[tuple[int, str], str]:
        cluster, id_ = cluster_of(j), cells[0][j][0].id
        return ((0, cluster) if by == "cluster" and cluster is not None else (1, id_)), id_

    keyed = sorted(range(len(cells[0])), key=order)
    clustered = by == "cluster" and any(cluster_of(j) is not None for j in keyed)
    unit = bench.unit(variant) if clustered else SAMPLE_UNIT
    sides = [[r.scored().model_copy(update={"cluster": cluster_of(j)}) for j in keyed for r in cell[j]]
             for cell in cells]
    every = [s for side in sides for s in side]
    return every, designs_of(design_of(every, unit, by), [len(side) for side in sides])


def pool_statistic(pool: Sequence[Scored], bench: Benchmark, metric: str) -> Statistic:
    """The statistic of ``metric`` over a pool of several systems' outcomes (as the paired tests use it)."""
    _, method = metric_statistic(pool, bench, metric)
    return _statistic(pool, bench, metric, method)


def paired_records_test(
    pairs: Sequence[Pair],
    bench: Benchmark,
    metric: str,
    stats: StatsOptions,
    method: str | None = None,
    variant: str | None = None,
) -> PairedTest:
    """Paired cluster bootstrap and cluster randomization of B against A on ``metric`` over aligned pairs of
    records (A's, B's: one per epoch); ``method`` (``mean``/``aggregate``) is probed on the pooled records when not
    given."""
    pool, design = paired_pool(pairs, bench, variant or bench.variants[0], stats.by)
    if method is None:
        _, method = metric_statistic(pool, bench, metric)
    return paired_test(
        _statistic(pool, bench, metric, method),
        design,
        resamples=stats.resamples,
        seed=stats.seed,
        confidence=stats.confidence,
    )
