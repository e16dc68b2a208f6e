"""Result entries of one or more runs, joined with their records and headline statistics."""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path

from structbench.analysis.paired import StatsOptions
from structbench.contract.benchmark import Benchmark, Scored
from structbench.report.runs import BenchmarkCache
from structbench.runfiles.cells import cell_text
from structbench.runfiles.records import RecordSummary
from structbench.runfiles.results import ResultEntry
from structbench.runfiles.rundir import EntryRecords, RunFiles
from structbench.stats import Interval, metric_interval

STAT_SUFFIXES = ("se", "ci_low", "ci_high")
"""``<headline>_se``, ``<headline>_ci_low`` and ``<headline>_ci_high`` are added to each entry's metrics."""


@dataclass
class EntryView:
    """One (benchmark, variant, strategy, model) as reported, in one cell of a sweep."""

    result: ResultEntry
    """The entry, its metrics extended with the headline's standard error and CI."""
    records: EntryRecords
    """Every record of the entry, failed ones included (the sample browser reads them in full, ``full``)."""
    label: str
    """The model's name, with the run directory added when several runs share a model name."""
    run: Path
    interval: Interval | None
    bench: Benchmark | None
    no_interval: str | None = None
    """Why the headline has no interval (None when it has one)."""

    @cached_property
    def scored_records(self) -> list[RecordSummary]:
        """The records that take part in the metrics: all but harness errors, which were never scored."""
        return self.records.counted()

    def signatures(self) -> dict[str, str]:
        """Each scored sample's id -> what it asked (its prompt's digest) and its gold: two runs asked the same
        question when they agree."""
        counted = self.records.counted_rows()
        digests = self.records.digests()
        return {r.id: signature(digests[i], r.gold) for i, r in zip(counted.tolist(), self.scored_records, strict=True)}

    @property
    def section(self) -> str:
        return f"{self.result.benchmark}:{self.result.variant}"

    @property
    def strategy(self) -> str:
        """The strategy as tables and figures label it, a sweep cell's options after it: ``zero_shot
        [serialization=csv]``."""
        r = self.result
        return f"{r.strategy} [{cell_text(r.cell)}]" if r.cell else r.strategy


def signature(digest: bytes, gold: object) -> str:
    """What a sample asked, from its prompt's digest and its gold: two runs hold the same sample only where id,
    prompt and gold agree (a generated benchmark run with another ``--seed`` asks other questions under the same
    ids); the leaderboard ranks, and ``compare`` pairs, only those."""
    return json.dumps([digest.hex(), gold], sort_keys=True, default=str)


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
    scored: Sequence[Scored],
    bench: Benchmark | None,
    stats: StatsOptions,
    why_not: str | None = None,
) -> tuple[Interval | None, str | None]:
    """The headline's bootstrap interval: the one ``metrics.json`` stores when it is the one ``stats`` asks for
    (the run computed it once; every view shows that one), else computed over the ``scored`` outcomes (those of
    the records that take part in metrics) the same way; or None and the reason there is none (the benchmark
    cannot be loaded, its ``aggregate`` fails on a resample, the metric is undefined on every resample).
    ``why_not`` is why ``bench`` is None."""
    if result.headline.value is None:
        return None, "no sample was scored"
    stored = result.headline.interval()
    if stored is not None and stats.matches(result.headline):
        return replace(stored, n=result.n, epochs=result.epochs.count if result.epochs else 1), None
    if not scored:
        return None, "the run directory holds no sample records to resample"
    if bench is None:
        return None, f"{result.benchmark} {why_not or 'could not be loaded'}, so the metric cannot be recomputed"
    try:
        interval = metric_interval(
            scored, bench, result.headline.name, by=stats.by, variant=result.variant, confidence=stats.confidence,
            resamples=stats.resamples, seed=stats.seed,
        )
    except Exception as err:  # a benchmark bug must not lose the whole report
        return None, f"aggregate() failed on a bootstrap resample ({type(err).__name__}: {err})"
    if math.isnan(interval.low) or math.isnan(interval.high):
        return None, "the metric is undefined on every bootstrap resample"
    return interval, None


def run_names(paths: Sequence[Path]) -> dict[Path, str]:
    """Each run directory by the fewest of its last path parts that tell it from the others (``ra``; ``a/twin`` beside
    ``b/twin``): what labels a model's runs apart."""
    distinct = list(dict.fromkeys(paths))
    for depth in range(1, max((len(p.parts) for p in distinct), default=1) + 1):
        names = {p: "/".join(p.parts[-depth:]) for p in distinct}
        if len(set(names.values())) == len(distinct):
            return names
    return {p: str(p) for p in distinct}


def collect(runs: list[RunFiles], stats: StatsOptions, benches: BenchmarkCache) -> list[EntryView]:
    """Every result entry of ``runs`` in order, with records and a headline interval."""
    runs_of_model = Counter(model for _, model in {(run.path, r.model) for run in runs for r in run.metrics.results})
    names = run_names([run.path for run in runs])
    views: list[EntryView] = []
    for run in runs:
        for result in run.metrics.results:
            records = run.records(result)
            bench = benches.get(result.benchmark, run.cell_options(result.benchmark, result.cell))
            why_not = benches.notes.get(result.benchmark)
            interval, why = headline_interval(result, records.outcomes(), bench, stats, why_not)
            label = result.model if runs_of_model[result.model] == 1 else f"{result.model} ({names[run.path]})"
            views.append(EntryView(with_interval(result, interval), records, label, run.path, interval, bench, why))
    return views
