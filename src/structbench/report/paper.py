"""The paper view: each paper table a benchmark declares, with every run's model added as a row.

A run's cell is computed the way the paper computed the column (``structbench.papers.spec``): the
metric re-aggregated over the records the column selects, averaged over option orders where the paper
averages, Overall and Avg. columns as means of the row's other cells, relative differences where the
paper prints them. Intervals are percentile bootstrap intervals over the run's samples, resampling the
benchmark's clusters (the questions of one table together, then epochs); cells built
from several estimates resample them together when they rest on the same samples (the same questions
under four prompts) and independently otherwise (disjoint tasks or knowledge types). Columns the runs
do not cover show an em dash and the command that fills them.
"""

from __future__ import annotations

import math
import shlex
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property, partial
from typing import Any

import numpy as np

from structbench.contract.benchmark import Benchmark, Scored, corrected_scored
from structbench.core.redact import redact_url
from structbench.papers.published import PublishedTable
from structbench.papers.spec import Change, Mean, Measure, Orders, PaperTable, RunRow
from structbench.report.document import TableBlock
from structbench.report.entries import EntryView, StatsOptions
from structbench.runfiles.cells import cell_options
from structbench.runfiles.records import AnyRecord
from structbench.runfiles.results import epoch_metrics
from structbench.runfiles.rundir import RunFiles
from structbench.runfiles.runflags import config_flags, request_flags
from structbench.stats import MeanStatistic, Statistic, bootstrap_distribution, metric_statistic, percentile_interval
from structbench.stats.baselines import label_baselines
from structbench.stats.metric import design_of

BASELINE_LABELS = {"chance": "chance (runs' samples)", "majority": "majority class (runs' samples)"}
"""Baseline rows: the column's metric under uniform random answers and under the most frequent gold answer."""
EMPTY = "—"
"""A column the runs did not cover (the paper's own dashes print as ``–``)."""
DASH = "–"
"""The paper's dash, and a column the row does not have (a CoT row's zero-shot columns, as in the paper)."""
PARTIAL = "†"
"""A mean over fewer option orders than the paper's."""
CORRECTED_MARK = "‡"
"""Marks the row of structbench's corrected scoring, beside a row scored the paper's way."""
CORRECTED_LABEL = f"{CORRECTED_MARK} structbench's corrected scoring"


@dataclass
class Estimate:
    """A metric over one set of samples, with what is needed to resample it."""

    value: float
    ids: tuple[str, ...]
    stat: Statistic | None
    """None when no interval can be drawn (derived from estimates without one)."""
    n: int
    scored: tuple[Scored, ...] = ()
    """The samples it is computed on (for baselines on the same samples)."""
    bench: Benchmark | None = None
    baselines: dict[str, float] | None = None
    """The entry's own baselines, when the estimate is its headline over all its samples (so the paper view
    and the run's summary print the same chance and majority values)."""
    _dists: dict[int, np.ndarray] = field(default_factory=dict, repr=False)

    def dist(self, seed: int, resamples: int) -> np.ndarray | None:
        """The statistic on ``resamples`` bootstrap resamples drawn with ``seed`` (cached), resampling the samples'
        clusters (then epochs): estimates on the same samples draw the same clusters with the same seed."""
        if self.stat is None:
            return None
        if seed not in self._dists:
            design = design_of(self.scored, "cluster") if len(self.scored) == self.n else self.n
            self._dists[seed] = bootstrap_distribution(self.stat, design, resamples=resamples, seed=seed)
        return self._dists[seed]


@dataclass(frozen=True)
class Filled:
    """A run's cell: the value (a fraction or ratio) and its interval, on the metric's own scale."""

    value: float
    low: float
    high: float
    n: int
    """Samples behind the cell (the largest of its parts)."""
    partial: str = ""
    """Why it covers less than the paper's column (option orders missing), with the command that completes it."""


@dataclass(frozen=True)
class Gap:
    """A column a run did not fill, and why."""

    reason: str
    command: str | None = None


Cell = Filled | Gap


@dataclass(frozen=True)
class Source:
    """One result entry of one run, with its run directory (options, model spec)."""

    view: EntryView
    run: RunFiles

    @property
    def bench(self) -> Benchmark | None:
        return self.view.bench


def _field(record: AnyRecord, key: str) -> Any:
    return record.task if key == "task" else record.meta.get(key)


def matches(record: AnyRecord, where: Mapping[str, str]) -> bool:
    """The record's task or meta values equal ``where``'s (a list-valued meta key must contain the value)."""
    for key, want in where.items():
        value = _field(record, key)
        if isinstance(value, list | tuple):
            if want not in (str(v) for v in value):
                return False
        elif value is None or str(value) != want:
            return False
    return True


def option_value(bench: Benchmark | None, run: RunFiles, key: str, default: str) -> Any:
    """A run option as the benchmark read it (typed), else as the manifest gives it, else ``default``."""
    if bench is not None and hasattr(bench.options, key):
        return getattr(bench.options, key)
    return run.options.get(key, default)


def _unpapered_cell(table: PaperTable, source: Source) -> list[str]:
    """The options of the source's sweep cell that the table does not name and that are not at their defaults (a
    serialization or perturbation the paper did not use); [] when there are none."""
    cell = source.view.result.cell
    if not cell or source.bench is None:
        return []
    named = set(table.requires) | set(table.preset.options) | set(table.selection)
    for row in table.rows:
        for c in row.cells.values():
            if isinstance(c, Measure):
                named |= set(c.options) | ({c.orders.option} if c.orders else set())
    defaults = type(source.bench.options).model_validate({})
    return [k for k in cell_options(cell)
            if k not in named and getattr(source.bench.options, k, None) != getattr(defaults, k, None)]


def _same_option(bench: Benchmark, key: str, want: str) -> bool:
    """The benchmark's option ``key`` has the value ``want`` would give it."""
    try:
        typed = type(bench.options).model_validate({**bench.options.model_dump(exclude_unset=True), key: want})
    except Exception:  # a value the options refuse is not the value the run has
        return False
    return bool(getattr(typed, key, None) == getattr(bench.options, key, None))


def order_of(record: AnyRecord, source: Source, orders: Orders) -> str | None:
    """The option order a record was answered under: its meta, else the run's option; None if ambiguous."""
    if orders.option in record.meta:
        return str(record.meta[orders.option])
    value = option_value(source.bench, source.run, orders.option, orders.default)
    if isinstance(value, list | tuple):
        return str(value[0]) if len(value) == 1 else None
    text = str(value)
    return None if "," in text else text


def _entry_baselines(source: Source, m: Measure, selected: int) -> dict[str, float] | None:
    """The entry's baselines when ``m`` selects all of its samples under its headline metric."""
    result = source.view.result
    whole = not m.where and selected == len(source.view.scored_records)
    return dict(result.baselines) if whole and m.metric == result.headline.name and result.baselines else None


@dataclass(frozen=True)
class MeanOfStatistics:
    """The mean of several statistics over the same pool (one metric under several option orders)."""

    parts: tuple[Statistic, ...]

    def weighted(self, weights: np.ndarray) -> np.ndarray:
        return np.asarray(np.mean([p.weighted(weights) for p in self.parts], axis=0), dtype=float)


def estimate(
    records: Sequence[AnyRecord],
    bench: Benchmark,
    metric: str,
    key: Callable[[str], str] | None = None,
    *,
    corrected: bool = False,
) -> Estimate | Gap:
    """``metric`` over ``records`` through the benchmark's own ``aggregate``, ready to be resampled; the
    samples are ordered (and named, for pairing) by ``key`` of their id. ``corrected``: of structbench's
    corrected scoring recorded beside each score (``bench`` is then the corrected benchmark)."""
    key = key or (lambda i: i)
    ordered = sorted(records, key=lambda r: (key(r.id), r.epoch))
    scored: list[Scored] = [r.scored() for r in ordered]
    if corrected:
        twins = [corrected_scored(s) for s in scored]
        if any(t is None for t in twins):
            return Gap("the records hold no corrected scoring (scored before it was recorded)")
        scored = [t for t in twins if t is not None]
    value = float(epoch_metrics(bench, scored).get(metric, math.nan))
    if not math.isfinite(value):
        return Gap(f"{metric} is undefined on these {len(scored)} samples")
    per_sample = [s.values.get(metric) for s in scored]
    stat: Statistic
    if all(v is not None for v in per_sample) and math.isclose(
        float(np.mean(np.asarray(per_sample, dtype=float))), value, abs_tol=1e-9
    ):
        stat = MeanStatistic(np.asarray(per_sample, dtype=float))  # a mean of per-sample values: vectorized
    else:
        stat, _ = metric_statistic(scored, bench, metric)
    return Estimate(value, tuple(key(r.id) for r in ordered), stat, len(scored), tuple(scored), bench)


Combiner = Callable[[np.ndarray], float]


def combine(parts: Sequence[Estimate], fn: Combiner, stats: StatsOptions) -> tuple[float, float, float]:
    """``fn`` of the parts' values, with a bootstrap interval: parts on the same samples as the first are
    resampled with the same rows (paired), the others with their own seeds (independent)."""
    value = float(fn(np.array([p.value for p in parts])))
    dists = []
    for k, p in enumerate(parts):
        seed = stats.seed if p.ids == parts[0].ids else stats.seed + 1 + k
        d = p.dist(seed, stats.resamples)
        if d is None:
            return value, math.nan, math.nan
        dists.append(d)
    combined = np.apply_along_axis(fn, 0, np.vstack(dists))
    low, high = percentile_interval(combined, stats.confidence)
    return value, low, high


@dataclass
class ModelRuns:
    """Every result entry of one model, across the given runs."""

    model: str
    sources: list[Source]

    @property
    def spec(self) -> str:
        """The model as ``--model`` takes it (from the run manifests)."""
        for s in self.sources:
            if s.run.config is not None:
                return s.run.config.model
        return self.model

    @property
    def base_url(self) -> str | None:
        for s in self.sources:
            if s.run.config is not None and s.run.config.base_url:
                return s.run.config.base_url
        return None


def run_flags(sources: Sequence[Source]) -> list[str]:
    """The ``run`` flags of the first of ``sources`` that a command filling more of its table must repeat to ask for
    and read replies the same way (``runfiles.runflags``: data, samples, seeds, token caps, sampling, the reasoning
    settings, the model's load options)."""
    config = next((s.run.config for s in sources if s.run.config is not None), None)
    return [] if config is None else config_flags(config)


@dataclass
class RowResult:
    label: str
    cells: dict[str, Cell]
    runs: list[str]
    spec: RunRow
    estimates: dict[str, Estimate] = field(default_factory=dict)
    """The measured columns' estimates (their samples give the baselines)."""


class TableFill:
    """One paper table filled with one model's runs; ``corrected``: with structbench's corrected scoring of
    runs scored the paper's way (entries scored structbench's way already fill the main row only)."""

    def __init__(self, table: PaperTable, model: ModelRuns, stats: StatsOptions, *, corrected: bool = False) -> None:
        self.table = table
        self.model = model
        self.stats = stats
        self.corrected = corrected
        self.sources = [s for s in model.sources if s.view.result.benchmark == table.benchmark]
        self.excluded: dict[str, str] = {}
        """Run directory -> why its entries do not fill this table (other required options)."""
        self.off_cells: dict[tuple[str, str], tuple[int, set[str]]] = {}
        """(run directory, strategy) -> how many of its sweep cells the paper did not run, and their options that
        are not at the paper's values."""
        self.eligible = [s for s in self.sources if self._eligible(s)]
        for (path, strategy), (cells, keys) in self.off_cells.items():
            self.excluded[f"{path} ({strategy}, {cells} sweep cell{'s' if cells > 1 else ''})"] = (
                f"the paper did not run them ({', '.join(sorted(keys))} not at the paper's values)")

    def _eligible(self, s: Source) -> bool:
        if s.bench is None:
            self.excluded[str(s.run.path)] = "its benchmark could not be loaded"
            return False
        variant = s.view.result.variant
        if self.table.variants and variant not in self.table.variants:
            paper = ", ".join(self.table.variants)
            self.excluded[f"{s.run.path} ({self.table.benchmark}:{variant})"] = f"the paper's data is {paper}"
            return False
        off = _unpapered_cell(self.table, s)
        if off:  # said once per run and strategy, however many cells
            key = (str(s.run.path), s.view.result.strategy)
            cells, keys = self.off_cells.get(key, (0, set()))
            self.off_cells[key] = (cells + 1, keys | set(off))
            return False
        wrong = [f"{k}={v}" for k, v in self.table.requires.items() if not _same_option(s.bench, k, v)]
        if wrong:
            self.excluded[str(s.run.path)] = f"the table needs {', '.join(wrong)}"
            return False
        if self.corrected and s.bench.corrected() is None:
            self.excluded[str(s.run.path)] = "it was scored structbench's way already"
            return False
        return True

    def _bench(self, s: Source) -> Benchmark:
        """The benchmark that aggregates ``s``'s records: the run's own, or its corrected twin."""
        assert s.bench is not None
        twin = s.bench.corrected() if self.corrected else None
        return twin or s.bench

    def _model_flags(self) -> list[str]:
        """``--model`` and ``--base-url`` of the model's runs."""
        parts = [f"--model {shlex.quote(self.model.spec)}"]
        if self.model.base_url:
            parts.append(f"--base-url {shlex.quote(redact_url(self.model.base_url))}")
        return parts

    def command(self, m: Measure, *, orders: Sequence[str] = ()) -> str:
        """The ``structbench run`` that fills a column: each value shell-quoted (a model named ``m; touch x`` runs no
        ``touch`` when the line is pasted), a base URL with its credentials redacted (an older run's manifest may
        hold ``?key=``)."""
        preset = self.table.preset
        bench = self.table.benchmark + (f":{m.variant}" if m.variant else "")
        options = {**preset.options, **m.options}
        if m.orders is not None and orders:
            options[m.orders.option] = ",".join(orders)
        parts = ["structbench run", *self._model_flags(), f"--bench {shlex.quote(bench)}",
                 f"--strategy {shlex.quote(m.strategy)}"]
        parts += [f"--option {shlex.quote(f'{k}={v}')}" for k, v in options.items()]
        parts += run_flags(self.sources or self.model.sources)
        return " ".join(parts)

    def whole_command(self) -> str:
        """The ``structbench run`` of the table's preset, run as the model's runs ran."""
        parts = ["structbench run", *self._model_flags(), f"--preset {shlex.quote(self.table.name)}"]
        return " ".join(parts + run_flags(self.sources or self.model.sources))

    def _measure(self, m: Measure) -> tuple[list[Estimate], str] | Gap:
        cands = [
            s for s in self.eligible
            if s.view.result.strategy == m.strategy and (m.variant is None or s.view.result.variant == m.variant)
            and all(s.bench is not None and _same_option(s.bench, k, v) for k, v in m.options.items())
        ]
        if not cands:
            return Gap("not run", self.command(m, orders=m.orders.values if m.orders else ()))
        if m.orders is None:
            best = max(cands, key=lambda s: sum(matches(r, m.where) for r in s.view.scored_records))
            records = [r for r in best.view.scored_records if matches(r, m.where)]
            if not records:
                return Gap(self._none_selected(best), self.command(m))
            est = estimate(records, self._bench(best), m.metric, corrected=self.corrected)
            if isinstance(est, Gap):
                return est
            est.baselines = _entry_baselines(best, m, len(records))
            return [est], ""
        return self._orders(m, m.orders, cands)

    @staticmethod
    def _none_selected(source: Source) -> str:
        limit = source.run.config.limit if source.run.config is not None else None
        if limit is not None:
            return f"none of the run's first {limit} samples (--limit {limit}) is of this column"
        return "the run has no sample of this column (its options select others)"

    def _orders(self, m: Measure, orders: Orders, cands: list[Source]) -> tuple[list[Estimate], str] | Gap:
        by_order: dict[str, tuple[Source, list[AnyRecord]]] = {}
        for s in cands:
            groups: dict[str, list[AnyRecord]] = defaultdict(list)
            for r in s.view.scored_records:
                order = order_of(r, s, orders)
                if order in orders.values and matches(r, m.where):
                    groups[order].append(r)
            for order, recs in groups.items():
                if order not in by_order or len(recs) > len(by_order[order][1]):
                    by_order[order] = (s, recs)
        present = [o for o in orders.values if o in by_order]
        if not present:
            wanted = ", ".join(orders.values)
            return Gap(f"no run with {orders.option} in {wanted}", self.command(m, orders=orders.values))
        parts: list[Estimate] = []
        for o in present:
            source, recs = by_order[o]
            est = estimate(recs, self._bench(source), m.metric, key=partial(orders.base_id, value=o),
                           corrected=self.corrected)
            if isinstance(est, Gap):
                return est
            est.baselines = _entry_baselines(source, m, len(source.view.scored_records))
            parts.append(est)
        missing = [o for o in orders.values if o not in by_order]
        note = ""
        if missing:
            note = (
                f"mean over {orders.option} {', '.join(present)} only (the paper: {', '.join(orders.values)}); "
                f"complete it with: {self.command(m, orders=missing)}"
            )
        return parts, note

    def row(self, run_row: RunRow) -> RowResult | None:
        """The model's row; None when the runs fill none of its measured columns."""
        raw: dict[str, tuple[list[Estimate], str] | Gap] = {}
        for key, cell in run_row.cells.items():
            if isinstance(cell, Measure):
                raw[key] = self._measure(cell)
        if all(isinstance(v, Gap) for v in raw.values()):
            return None
        estimates: dict[str, Estimate] = {}
        cells: dict[str, Cell] = {}
        partial_keys: set[str] = set()
        for key, got in raw.items():
            if isinstance(got, Gap):
                cells[key] = got
                continue
            parts, note = got
            value, low, high = combine(parts, np.mean, self.stats)
            cells[key] = Filled(value, low, high, max(p.n for p in parts), note)
            if note:
                partial_keys.add(key)
            estimates[key] = parts[0] if len(parts) == 1 else averaged(parts)
        for key, cell in run_row.cells.items():
            if isinstance(cell, Mean):
                cells[key] = self._derived([estimates.get(k) for k in cell.columns], np.mean, cell.columns)
                inputs: tuple[str, ...] = cell.columns
            elif isinstance(cell, Change):
                pair = [estimates.get(cell.base), estimates.get(cell.other)]
                cells[key] = self._derived(pair, relative_change, (cell.base, cell.other))
                inputs = (cell.base, cell.other)
            else:
                continue
            got_cell = cells[key]
            if isinstance(got_cell, Filled) and partial_keys & set(inputs):
                cells[key] = replace(got_cell, partial="computed from columns that cover fewer option orders "
                                                       "than the paper's")
        used = sorted({str(s.run.path) for s in self.eligible})
        return RowResult(run_row.label.format(model=self.model.model), cells, used, run_row, estimates)

    def _derived(self, parts: Sequence[Estimate | None], fn: Combiner, keys: Sequence[str]) -> Cell:
        missing = [k for k, p in zip(keys, parts, strict=True) if p is None]
        if missing:
            labels = ", ".join(self.table.published.column(k).label for k in missing)
            return Gap(f"needs {labels}")
        present = [p for p in parts if p is not None]
        value, low, high = combine(present, fn, self.stats)
        if not math.isfinite(value):
            return Gap("undefined (division by zero)")
        return Filled(value, low, high, max(p.n for p in present))


def averaged(parts: Sequence[Estimate]) -> Estimate:
    """The mean over option orders as one estimate, so that an Overall column resamples it together with
    the row's other columns; it has no interval when the orders were asked of different samples."""
    stats = [p.stat for p in parts]
    aligned = all(p.ids == parts[0].ids for p in parts) and all(st is not None for st in stats)
    stat = MeanOfStatistics(tuple(st for st in stats if st is not None)) if aligned else None
    value = float(np.mean([p.value for p in parts]))
    return Estimate(value, parts[0].ids, stat, parts[0].n, parts[0].scored, parts[0].bench, parts[0].baselines)


def relative_change(values: np.ndarray) -> float:
    """``(other - base) / base`` of ``[base, other]`` (NaN when base is 0)."""
    base, other = float(values[0]), float(values[1])
    return (other - base) / base if base else math.nan


# --- rendering ------------------------------------------------------------------------------------------


def _fmt(value: float, decimals: int) -> str:
    return f"{value:.{decimals}f}"


def scaled(data: PublishedTable, key: str, value: float) -> float:
    return value * 100.0 if data.scale_of(data.column(key)) == "percent" else value


def cell_text(data: PublishedTable, key: str, cell: Cell) -> str:
    """A run's cell on the paper's scale: ``63.62 [60.10, 67.04]``."""
    if isinstance(cell, Gap):
        return EMPTY
    d = data.decimals_of(data.column(key))
    text = _fmt(scaled(data, key, cell.value), d)
    if math.isfinite(cell.low) and math.isfinite(cell.high):
        text += f" [{_fmt(scaled(data, key, cell.low), d)}, {_fmt(scaled(data, key, cell.high), d)}]"
    return text + (PARTIAL if cell.partial else "")


def published_text(data: PublishedTable, key: str, value: float | None) -> str:
    return DASH if value is None else _fmt(value, data.decimals_of(data.column(key)))


@dataclass
class FilledTable:
    """A paper table with the runs' rows, ready to render."""

    table: PaperTable
    rows: list[tuple[ModelRuns, RowResult]]
    fills: list[TableFill]
    corrected: dict[int, RowResult] = field(default_factory=dict)
    """Index in ``rows`` -> the same row under structbench's corrected scoring (rows scored the paper's way)."""

    @property
    def complete(self) -> bool:
        """Whether some model's row fills every column structbench can reproduce (a table run with its preset);
        else the runs fill it in part (a run of other options, strategies or variants)."""
        return any(row.cells and all(isinstance(c, Filled) for c in row.cells.values()) for _, row in self.rows)

    @cached_property
    def baselines(self) -> tuple[dict[str, dict[str, float]], list[str]]:
        """Baseline name (``chance``, ``majority``) -> column key -> value, each measured column on the samples
        of the first run row that fills it (Overall-type columns derived the same way), and the models whose
        samples those are."""
        out: dict[str, dict[str, float]] = defaultdict(dict)
        sources: list[str] = []
        for model, row in self.rows:
            for key, est in row.estimates.items():
                measure = row.spec.cells[key]
                if est.bench is None or not isinstance(measure, Measure) or any(key in v for v in out.values()):
                    continue
                found = est.baselines
                if found is None:
                    labels = est.bench.answer_labels(est.scored)
                    found = label_baselines(est.bench, est.scored, labels, measure.metric)
                for name, value in found.items():
                    if math.isfinite(value):
                        out[name][key] = value
                        sources.append(model.model)
            for key, cell in row.spec.cells.items():
                for values in out.values():
                    if key in values:
                        continue
                    if isinstance(cell, Mean) and all(k in values for k in cell.columns):
                        values[key] = float(np.mean([values[k] for k in cell.columns]))
                    elif isinstance(cell, Change) and cell.base in values and cell.other in values:
                        values[key] = relative_change(np.array([values[cell.base], values[cell.other]]))
        return dict(out), list(dict.fromkeys(sources))

    @property
    def data(self) -> PublishedTable:
        return self.table.published


def fill_tables(views: Sequence[EntryView], runs: Sequence[RunFiles], stats: StatsOptions) -> list[FilledTable]:
    """Every declared paper table of the benchmarks in ``views`` that the runs fill at least in part."""
    by_path = {run.path: run for run in runs}
    models: dict[str, ModelRuns] = {}
    for v in views:
        run = by_path.get(v.run)
        if run is not None:
            models.setdefault(v.result.model, ModelRuns(v.result.model, [])).sources.append(Source(v, run))
    tables: list[PaperTable] = []
    for v in views:
        if v.bench is not None:
            tables += [t for t in type(v.bench).paper.tables if t not in tables]
    out = []
    for table in tables:
        rows: list[tuple[ModelRuns, RowResult]] = []
        fills: list[TableFill] = []
        corrected: dict[int, RowResult] = {}
        for model in models.values():
            fill = TableFill(table, model, stats)
            if not fill.sources:
                continue
            fills.append(fill)
            twin = TableFill(table, model, stats, corrected=True)
            for run_row in table.rows:
                row = fill.row(run_row)
                if row is not None:
                    rows.append((model, row))
                    other = twin.row(run_row) if twin.eligible else None
                    if other is not None:
                        corrected[len(rows) - 1] = replace(other, label=f"{row.label} {CORRECTED_LABEL}")
        if rows:  # a table no run fills (all at another temperature, say) is left out
            out.append(FilledTable(table, rows, fills, corrected))
    return out


def table_block(filled: FilledTable, stats: StatsOptions) -> TableBlock:
    """The paper's rows as printed (group headings as rows of their own), then the runs' rows in bold."""
    data = filled.data
    keys = [c.key for c in data.columns]
    rows: list[list[str]] = []
    group = None
    for r in data.rows:
        if r.group and r.group != group:
            rows.append([r.group, *([""] * len(keys))])
        group = r.group
        rows.append([r.name, *(published_text(data, k, v) for k, v in zip(keys, r.values, strict=True))])
    bold: set[tuple[int, int]] = set()
    for i, (_, row) in enumerate(filled.rows):
        bold |= {(len(rows), j) for j in range(len(keys) + 1)}
        rows.append([row.label, *(cell_text(data, k, row.cells[k]) if k in row.cells else DASH for k in keys)])
        twin = filled.corrected.get(i)
        if twin is not None:
            rows.append([twin.label, *(cell_text(data, k, twin.cells[k]) if k in twin.cells else DASH for k in keys)])
    baselines, _ = filled.baselines
    for name, values in baselines.items():
        rows.append([BASELINE_LABELS.get(name, name), *(_fmt(scaled(data, k, values[k]), data.decimals_of(
            data.column(k))) if k in values else EMPTY for k in keys)])
    scale = "percent" if data.scale == "percent" else "fractions"
    caption = (
        f"{data.source}, published numbers in {scale} as printed; in bold, the runs: value "
        f"[{stats.confidence:.0%} bootstrap interval, {stats.resamples} resamples, seed {stats.seed}]; "
        f"{EMPTY} not covered by the runs, {DASH} a dash in the paper or a column the row does not have"
    )
    if filled.corrected:
        caption += (f"; {CORRECTED_MARK} (not bold): structbench's corrected scoring of the same replies, not "
                    "comparable with the published rows")
    return TableBlock(["model", *(c.label for c in data.columns)], rows, caption=caption, bold=bold)


def run_notes(filled: FilledTable) -> list[str]:
    """Per run row: samples and run directories, the commands that fill its empty columns, partial
    cells, runs that cannot fill the table, and options that differ from the paper's setting."""
    data = filled.data
    lines = []
    for _, row in filled.rows:
        ns = sorted({c.n for c in row.cells.values() if isinstance(c, Filled)})
        span = f"{ns[0]}" if len(ns) == 1 else f"{ns[0]}–{ns[-1]}"
        lines.append(f"{row.label}: n = {span} samples per cell; runs: {', '.join(row.runs)}.")
        commands: dict[tuple[str, str], list[str]] = defaultdict(list)
        partial: dict[str, list[str]] = defaultdict(list)
        for key, cell in row.cells.items():
            label = data.column(key).label
            if isinstance(cell, Gap):
                commands[(cell.reason, cell.command or "")].append(label)
            elif isinstance(cell, Filled) and cell.partial:
                partial[cell.partial].append(label)
        lines += [f"{PARTIAL} {row.label} / {', '.join(labels)}: {why}." for why, labels in partial.items()]
        for (reason, cmd), labels in commands.items():
            how = f"; fill with: {cmd}" if cmd else ""
            lines.append(f"{EMPTY} {row.label} / {', '.join(labels)}: {reason}{how}")
        uncovered = [c.label for c in data.columns if c.key not in row.cells]
        if uncovered and filled.table.unmapped:
            unmapped = "; ".join(f"{data.column(k).label}: {v}" for k, v in filled.table.unmapped.items())
            lines.append(f"{row.label}: not reproducible by structbench: {unmapped}.")
    if filled.corrected:
        how = filled.table.preset.scoring or "the preset's bug-compatible options"
        lines.append(
            f"{CORRECTED_MARK} The bold rows are scored as the paper's released code scored ({how}); they are the "
            f"ones comparable with the published rows. The rows marked {CORRECTED_MARK} score the same replies "
            "with structbench's default (corrected) parsing and scoring."
        )
    for fill in filled.fills:
        lines += [f"{fill.model.model}: {path} does not fill this table: {why}." for path, why in fill.excluded.items()]
        lines += _option_notes(fill)
    baselines, sources = filled.baselines
    if baselines:
        lines.append(
            f"Baselines: {', '.join(BASELINE_LABELS.get(n, n) for n in baselines)}: each column's metric when every "
            "answer is drawn uniformly from the options (mean of 200 seeded draws) or is the most frequent gold label, "
            f"on the samples of the runs of {' and '.join(sources)}."
        )
    lines += [f"The whole table for {m}: {command}" for m, command in whole_commands(filled).items()]
    return lines


def whole_commands(filled: FilledTable) -> dict[str, str]:
    """Per model of the runs, the command that runs the table's whole preset as its runs ran (``MODEL`` when none)."""
    commands: dict[str, str] = {}
    for fill in filled.fills:
        commands.setdefault(fill.model.spec, fill.whole_command())
    return commands or {"MODEL": f"structbench run --model MODEL --preset {shlex.quote(filled.table.name)}"}


def _option_notes(fill: TableFill) -> list[str]:
    """Run options that differ from the table's preset (beyond those that only select samples), and the run's
    settings that change how replies are asked for or read (``request_flags``: ``--reasoning-budget`` raises every
    request's ``max_tokens`` above the paper's), which no paper's setting has."""
    preset = fill.table.preset
    measures = [c for r in fill.table.rows for c in r.cells.values() if isinstance(c, Measure)]
    skip = set(fill.table.selection) | {c.orders.option for c in measures if c.orders} | {
        k for c in measures for k in c.options
    }
    out = []
    for s in {str(s.run.path): s for s in fill.eligible}.values():
        assert s.bench is not None
        differs = [f"{_run_value(s, k)} where the paper's setting has {k}={v}" for k, v in preset.options.items()
                   if k not in skip and not _same_option(s.bench, k, v)]
        extra = [f"{k}={v}" for k, v in s.run.options.items() if "." not in k and k not in preset.options
                 and k not in skip and hasattr(s.bench.options, k)]
        unset = [f"{', '.join(extra)}, which the paper's setting does not set"] if extra else []
        asked = request_flags(s.run.config) if s.run.config is not None else []
        if asked:
            unset.append(f"{' '.join(asked)}, which the paper did not run with (it changes how replies are asked for "
                         "or read)")
        what = "; ".join([*differs, *unset])
        if what:
            out.append(f"{fill.model.model}: {s.run.path} ran with {what}.")
    return out


def _run_value(source: Source, key: str) -> str:
    """``key=value`` as the run had it: the value given, or the benchmark's default, said so."""
    if key in source.run.options:
        return f"{key}={source.run.options[key]}"
    value = getattr(source.bench.options, key, None) if source.bench is not None else None
    return f"{key}={value} (the default)" if value not in (None, "") else f"{key} unset (the default)"
