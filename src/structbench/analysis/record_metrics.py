"""``metrics.json`` from a run's records: one result entry per (benchmark, variant, strategy, cell), their calls'
tokens and cost, and a sweep's cells compared.

What is computed reads only the records' columns (``EntryColumns``: the run files' ``runfiles.columns.RecordColumns``,
which the runner keeps as a run goes and ``runfiles.rundir`` reads from a finished run), never the runner, so that what
reads a run directory computes the same metrics the run wrote (``run_metrics``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from structbench.backends.usage import Usage, UsageKey, UsageTotals
from structbench.contract.benchmark import Benchmark
from structbench.runfiles.cells import cell_options, options_for
from structbench.runfiles.columns import EntryKey, RecordView
from structbench.runfiles.outcomes import Outcomes
from structbench.runfiles.records import RecordSummary
from structbench.runfiles.results import MetricsFile, ResultEntry, compute_result

if TYPE_CHECKING:
    import numpy as np

    from structbench.backends.prices import Prices
    from structbench.runfiles.rundir import RunFiles


class RecordCounts(Protocol):
    """What ``compute_result`` counts apart from the scored outcomes, among some rows of an entry."""

    @property
    def counted(self) -> np.ndarray:
        """The rows that take part in metrics."""

    @property
    def errors(self) -> int: ...
    @property
    def harness_errors(self) -> int: ...
    @property
    def too_long(self) -> int: ...
    @property
    def turn_limit(self) -> int: ...
    @property
    def turn_limit_scored(self) -> int: ...
    @property
    def reasoning_cut_off(self) -> int: ...
    @property
    def replies_cut_off(self) -> int: ...
    @property
    def replies_unclosed(self) -> int: ...


class EntryColumns(Protocol):
    """One result entry's records as columns, read by rows (indices of its records)."""

    def counts(self, rows: np.ndarray) -> RecordCounts:
        """Errors, cut-off replies and the rows that take part in metrics, among ``rows``."""

    def scored(self, rows: np.ndarray) -> Outcomes:
        """The outcomes of ``rows``."""

    def usage_groups(self, rows: np.ndarray) -> dict[UsageKey, Usage]:
        """The calls' usage of ``rows``, by (model, batch, reused)."""


@dataclass(frozen=True)
class CurrentEntry:
    """One result entry's current records: the benchmark as its cell configured it, where they come from (``None``:
    none yet) and which of them are current (``rows``)."""

    bench: Benchmark[Any]
    variant: str
    strategy: str
    records: EntryColumns | None
    rows: np.ndarray
    summaries: Sequence[RecordSummary] = ()
    """The current records themselves, built as they are read (a sweep's cells are paired on them)."""
    cell: str = ""
    axes: tuple[str, ...] = ()
    """The sweep's keys in the order it gave them (how its cells are ordered)."""


def usage_totals(entries: Sequence[CurrentEntry], prices: Prices | None) -> UsageTotals:
    """Tokens and cost of the entries' current records' calls (every record's, failed ones included)."""
    from structbench.backends.prices import totals

    groups: dict[UsageKey, Usage] = {}
    for entry in entries:
        if entry.records is not None:
            for key, usage in entry.records.usage_groups(entry.rows).items():
                groups[key] = groups.get(key, Usage()) + usage
    return totals(groups.items(), prices)


def entry_result(entry: CurrentEntry, model: str, prices: Prices | None = None) -> ResultEntry:
    """The result entry of ``entry``'s current records; harness errors and prompts that do not fit the model are
    counted apart and take no part in the metrics."""
    if entry.records is None:
        scored, counts = Outcomes.of([]), None
    else:
        counts = entry.records.counts(entry.rows)
        scored = entry.records.scored(counts.counted)
    result = compute_result(
        entry.bench, entry.variant, entry.strategy, model, scored,
        errors=counts.errors if counts else 0,
        harness_errors=counts.harness_errors if counts else 0,
        too_long=counts.too_long if counts else 0,
        turn_limit=counts.turn_limit if counts else 0,
        turn_limit_scored=counts.turn_limit_scored if counts else 0,
        reasoning_cut_off=counts.reasoning_cut_off if counts else 0,
        replies_cut_off=counts.replies_cut_off if counts else 0,
        replies_unclosed=counts.replies_unclosed if counts else 0,
        cell=entry.cell,
    )
    return result.model_copy(update={"usage": usage_totals([entry], prices)})


def metrics_of(entries: Sequence[CurrentEntry], model: str, prices: Prices | None = None) -> MetricsFile:
    """What ``metrics.json`` holds: one result per entry, each with its calls' tokens and their cost at ``prices``, the
    run's totals, and a sweep's cells compared with its reference cell (``robustness``)."""
    results = [entry_result(entry, model, prices) for entry in entries]
    return MetricsFile(results=results, usage=usage_totals(entries, prices),
                       prices=prices.source if prices is not None else None,
                       robustness=_robustness(entries, results))


def _robustness(entries: Sequence[CurrentEntry], results: list[ResultEntry]) -> list[Any]:
    """A sweep's cells compared (``structbench.analysis.robustness``, pairing the cells' records sample by sample); none
    without a sweep."""
    if not any(entry.cell for entry in entries):
        return []
    from structbench.analysis.robustness import CellRun, sweep_robustness

    runs = [CellRun(entry.cell, entry.bench, result, entry.summaries)
            for entry, result in zip(entries, results, strict=True)]
    axes = {id(run): entry.axes for run, entry in zip(runs, entries, strict=True)}
    return sweep_robustness(runs, order=lambda run: axes[id(run)])


def run_entries(run: RunFiles, bench: Callable[[EntryKey], Benchmark[Any]] | None = None) -> list[CurrentEntry]:
    """A finished run directory's entries (``rundir.read_run_files``), in the order of their first record, as the run
    computed its metrics from them: the last record of each sample, in the order they were written, of the epochs
    its configuration asked for. ``bench`` makes an entry's benchmark (by default the registry's, with the run's
    options and its cell's)."""
    epochs = run.config.epochs if run.config is not None else 1
    make = bench or (lambda key: registered(run, key))
    out = []
    for key, entry in run.entries.items():
        columns = entry.columns
        rows = columns.latest()
        rows = rows[columns.epochs(rows) < epochs]
        cell = key[4]
        swept = cell_options(cell)
        axes = tuple(bare for k in run.sweeps  # the sweep's keys, bare, in its order: ``BENCH.KEY`` or ``KEY``
                     for bare in [k.removeprefix(f"{key[0]}.")] if "." not in bare and bare in swept)
        out.append(CurrentEntry(make(key), key[1], key[2], columns, rows, RecordView([(columns, rows)]), cell, axes))
    return out


def registered(run: RunFiles, key: EntryKey) -> Benchmark[Any]:
    """The benchmark of ``key`` as the run built it: the registry's class, with the run's options and its cell's."""
    from structbench.benchmarks import BENCHMARKS

    cls = BENCHMARKS.get(key[0])
    return cls(options_for(cls, run.cell_options(key[0], key[4])))


def run_metrics(run: RunFiles, bench: Callable[[EntryKey], Benchmark[Any]] | None = None,
                prices: Prices | None = None) -> MetricsFile:
    """``metrics.json`` of a finished run computed again from its records (``run_entries``), its calls costed at
    ``prices``."""
    entries = run_entries(run, bench)
    model = run.config.model if run.config is not None else next(iter(run.entries), ("",) * 5)[3]
    return metrics_of(entries, model, prices)
