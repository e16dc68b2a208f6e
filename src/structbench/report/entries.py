"""Result entries of one or more runs, joined with their records and headline statistics."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from structbench.benchmark import Benchmark
from structbench.report.runs import BenchmarkCache, RunDir, entry_records
from structbench.results import ResultEntry
from structbench.runner.records import SampleRecord
from structbench.stats import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, Interval, metric_interval


@dataclass(frozen=True)
class StatsOptions:
    """How headline intervals are computed."""

    resamples: int = DEFAULT_RESAMPLES
    seed: int = 0
    confidence: float = DEFAULT_CONFIDENCE


STAT_SUFFIXES = ("se", "ci_low", "ci_high")
"""``<headline>_se``, ``<headline>_ci_low`` and ``<headline>_ci_high`` are added to each entry's metrics."""


@dataclass
class EntryView:
    """One (benchmark, variant, strategy, model) as reported."""

    result: ResultEntry
    """The entry, its metrics extended with the headline's standard error and CI."""
    records: list[SampleRecord]
    label: str
    """The model's name, with the run directory added when several runs share a model name."""
    run: Path
    interval: Interval | None
    bench: Benchmark | None

    @property
    def section(self) -> str:
        return f"{self.result.benchmark}:{self.result.variant}"

    @property
    def strategy(self) -> str:
        return self.result.strategy


def with_interval(result: ResultEntry, interval: Interval | None) -> ResultEntry:
    """A copy of ``result`` whose metrics also hold the headline's ``_se``, ``_ci_low`` and ``_ci_high``."""
    if interval is None:
        return result
    h = result.headline.name
    extra = {f"{h}_se": interval.se, f"{h}_ci_low": interval.low, f"{h}_ci_high": interval.high}
    stats = {k: v for k, v in extra.items() if v is not None}
    return result.model_copy(update={"metrics": {**result.metrics, **stats}})


def headline_interval(
    result: ResultEntry,
    records: list[SampleRecord],
    bench: Benchmark | None,
    stats: StatsOptions,
    notes: dict[str, str],
) -> Interval:
    """The headline's interval; if the benchmark's ``aggregate`` fails on a resample, the mean-score fallback."""
    scored = [r.scored() for r in records]

    def interval(b: Benchmark | None) -> Interval:
        return metric_interval(
            scored, b, result.headline.name, confidence=stats.confidence, resamples=stats.resamples, seed=stats.seed
        )

    try:
        return interval(bench)
    except Exception as err:  # a benchmark bug must not lose the whole report
        notes[result.benchmark] = f"aggregate() failed on a bootstrap resample ({type(err).__name__}: {err})"
        return interval(None)


def collect(runs: list[RunDir], stats: StatsOptions, benches: BenchmarkCache) -> list[EntryView]:
    """Every result entry of ``runs`` in order, with records and a headline interval."""
    runs_of_model = Counter(model for _, model in {(run.path, r.model) for run in runs for r in run.metrics.results})
    views: list[EntryView] = []
    for run in runs:
        grouped = run.records_by_entry()
        for result in run.metrics.results:
            records = entry_records(result, grouped)
            bench = benches.get(result.benchmark, run.options)
            interval = headline_interval(result, records, bench, stats, benches.notes) if records else None
            label = result.model if runs_of_model[result.model] == 1 else f"{result.model} ({run.path.name})"
            views.append(EntryView(with_interval(result, interval), records, label, run.path, interval, bench))
    return views
