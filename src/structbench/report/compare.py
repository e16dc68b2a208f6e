"""``compare``: system B against system A on the samples both runs share, overall and per breakdown group.

Samples pair up by (benchmark, variant, strategy, id); ``strategy_a``/``strategy_b`` pair two different
strategies instead (e.g. ``cot`` against ``direct`` of one run). Each pair of outcome lists gets a
paired bootstrap and an approximate randomization test on the benchmark's headline metric.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from structbench.benchmark import Benchmark, Scored
from structbench.errors import UsageError
from structbench.report.crosstab import group_value
from structbench.report.entries import StatsOptions
from structbench.report.runs import BenchmarkCache, RunDir
from structbench.report.tables import fmt, group_order
from structbench.runner.records import SampleRecord
from structbench.stats import MeanStatistic, PairedTest, Statistic, paired_test
from structbench.stats.metric import AggregateStatistic, metric_statistic, scores_of

OVERALL = "overall"


@dataclass(frozen=True)
class Comparison:
    """One paired test: a benchmark variant and strategy pair, overall or one breakdown group."""

    benchmark: str
    variant: str
    strategy_a: str
    strategy_b: str
    metric: str
    method: str
    breakdown: str
    """``overall`` or a breakdown key."""
    group: str
    test: PairedTest

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out.update(out.pop("test"))
        return out


def _by_entry(run: RunDir, strategy: str | None) -> dict[tuple[str, str, str], dict[str, SampleRecord]]:
    """(benchmark, variant, strategy) -> id -> record, ids in sorted order (pairs are resampled in that
    order); a run holding one id twice (two models) is refused. Harness errors were never scored and take
    no part."""
    out: dict[tuple[str, str, str], dict[str, SampleRecord]] = defaultdict(dict)
    for r in sorted(run.records, key=lambda r: r.id):
        if (strategy is not None and r.strategy != strategy) or not r.counted:
            continue
        bucket = out[(r.benchmark, r.variant, r.strategy)]
        if r.id in bucket:
            raise UsageError(f"{run.path}: sample {r.benchmark}:{r.variant}/{r.strategy}/{r.id} appears twice")
        bucket[r.id] = r
    return out


def _headline(run: RunDir, key: tuple[str, str, str], bench: Benchmark | None) -> tuple[str, list[str]]:
    """The headline metric and breakdown keys of an entry, from metrics.json (or the benchmark class)."""
    for e in run.metrics.results:
        if (e.benchmark, e.variant, e.strategy) == key:
            return e.headline.name, list(e.breakdowns)
    if bench is not None:
        return bench.headline, list(bench.breakdown_keys)
    raise UsageError(f"{run.path}: no metrics for {key[0]}:{key[1]}/{key[2]}")


def _statistic(pool: Sequence[Scored], bench: Benchmark, metric: str, method: str) -> Statistic:
    if method == "aggregate":
        return bench.statistic(pool, metric) or AggregateStatistic(bench, pool, metric)
    return MeanStatistic(scores_of(pool))


def paired_records_test(
    pairs: Sequence[tuple[SampleRecord, SampleRecord]],
    bench: Benchmark,
    metric: str,
    stats: StatsOptions,
    method: str | None = None,
) -> PairedTest:
    """Paired bootstrap and approximate randomization of B against A on ``metric`` over aligned pairs of
    records (A, B); ``method`` (``mean``/``aggregate``) is probed on the pooled records when not given."""
    pool = [x.scored() for x, _ in pairs] + [y.scored() for _, y in pairs]
    if method is None:
        _, method = metric_statistic(pool, bench, metric)
    return paired_test(
        _statistic(pool, bench, metric, method),
        len(pairs),
        resamples=stats.resamples,
        seed=stats.seed,
        confidence=stats.confidence,
    )


def _compare_entry(
    key: tuple[str, str, str],
    strategy_b: str,
    pairs: list[tuple[SampleRecord, SampleRecord]],
    bench: Benchmark,
    metric: str,
    breakdowns: list[str],
    stats: StatsOptions,
) -> list[Comparison]:
    """The overall test of one entry's pairs, then one test per breakdown group."""
    pool = [x.scored() for x, _ in pairs] + [y.scored() for _, y in pairs]
    _, method = metric_statistic(pool, bench, metric)

    def test(breakdown: str, group: str, subset: list[tuple[SampleRecord, SampleRecord]]) -> Comparison:
        t = paired_records_test(subset, bench, metric, stats, method)
        return Comparison(key[0], key[1], key[2], strategy_b, metric, method, breakdown, group, t)

    out = [test(OVERALL, "", pairs)]
    for bd in breakdowns:
        groups: dict[str, list[tuple[SampleRecord, SampleRecord]]] = defaultdict(list)
        for x, y in pairs:
            g = group_value(x, bd)
            if g is not None:
                groups[g].append((x, y))
        out += [test(bd, g, groups[g]) for g in sorted(groups, key=group_order)]
    return out


def compare_runs(
    a: RunDir,
    b: RunDir,
    *,
    stats: StatsOptions,
    benches: BenchmarkCache,
    strategy_a: str | None = None,
    strategy_b: str | None = None,
) -> list[Comparison]:
    """Paired tests for every entry the two runs share, overall and per breakdown group. Entries of a benchmark
    that cannot be loaded are left out (``benches.notes`` says why): without it the headline cannot be
    recomputed on resamples, and the mean score must not stand in for it."""
    if (strategy_a is None) != (strategy_b is None):
        raise UsageError("give both --strategy-a and --strategy-b, or neither")
    left, right = _by_entry(a, strategy_a), _by_entry(b, strategy_b)
    out: list[Comparison] = []
    for key, recs_a in left.items():
        key_b = (key[0], key[1], strategy_b) if strategy_b is not None else key
        recs_b = right.get(key_b, {})
        pairs = [(recs_a[i], recs_b[i]) for i in recs_a if i in recs_b]
        if pairs:
            bench = benches.get(key[0], a.options)
            if bench is None:  # left out (``benches.notes`` says why): its headline cannot be recomputed
                continue
            metric, breakdowns = _headline(a, key, bench)
            out += _compare_entry(key, key_b[2], pairs, bench, metric, breakdowns, stats)
    if not out and benches.notes:
        raise UsageError("nothing to compare: " + "; ".join(f"{k} {why}" for k, why in benches.notes.items()))
    if not out:
        raise UsageError(
            f"{a.path} and {b.path} share no samples (pairs need the same benchmark, variant, strategy and id)"
        )
    return out


def _p(p: float, resamples: int) -> str:
    """A p-value; 0 (no resample as extreme) shows as below the test's resolution."""
    return f"<{1 / resamples:.4f}" if p == 0 else fmt(p)


def comparison_markdown(rows: Sequence[Comparison], label_a: str, label_b: str) -> str:
    """The comparison as a Markdown table."""
    conf = rows[0].test.confidence if rows else 0.95
    lines = [
        f"A = {label_a}, B = {label_b}; Δ = B − A; p-values: paired bootstrap and approximate randomization "
        f"({rows[0].test.resamples if rows else 0} resamples, seed {rows[0].test.seed if rows else 0}).",
        "",
        f"| benchmark | strategy | metric | breakdown | group | n | A | B | Δ | {conf:.0%} CI of Δ | p boot | p rand |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for c in rows:
        t = c.test
        strategy = c.strategy_a if c.strategy_a == c.strategy_b else f"{c.strategy_a} vs {c.strategy_b}"
        lines.append(
            f"| {c.benchmark}:{c.variant} | {strategy} | {c.metric} | {c.breakdown} | {c.group} | {t.n} | "
            f"{fmt(t.a)} | {fmt(t.b)} | {t.delta:+.4f} | [{fmt(t.ci_low)}, {fmt(t.ci_high)}] | "
            f"{_p(t.p_bootstrap, t.resamples)} | {_p(t.p_randomization, t.resamples)} |"
        )
    return "\n".join(lines)
