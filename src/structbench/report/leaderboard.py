"""The leaderboard: models x benchmarks, each cell a headline with its interval, ranked, every model tested
against the column's best on the samples both answered.

A column is one (benchmark, variant, strategy) (in one cell of a sweep). Two runs hold the same sample when the
id, the prompt and the gold answer agree (a different ``--seed`` of a generated benchmark reuses ids for other
questions).
When the models of a column hold different samples (another ``--limit``, seed or options), the column is
ranked on the samples all of them share, and says so; with none shared it is not ranked at all.

The tests against the best are ``compare``'s (paired, by the benchmark's clusters); their p-values are corrected
for the column's number of tests (Holm by default, or Benjamini-Hochberg), and a model whose corrected p-value is
at least alpha is marked as statistically indistinguishable from the best. Each column also states the smallest
difference its tests could detect (80% power) at the run's size.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from structbench.analysis.paired import paired_records_test
from structbench.contract.benchmark import Benchmark
from structbench.report.compare import units_text
from structbench.report.document import Section, TableBlock, TextBlock
from structbench.report.entries import EntryView, StatsOptions
from structbench.report.tables import fmt, unique
from structbench.runfiles.cells import cell_text
from structbench.runfiles.records import AnyRecord
from structbench.runfiles.results import epoch_metrics, plural
from structbench.stats import Interval, PairedTest, metric_interval
from structbench.stats.multiple import adjust, detectable


@dataclass
class Cell:
    """One model in one column."""

    model: str
    view: EntryView
    records: list[AnyRecord]
    """The records the column is ranked on (all, or the shared ones)."""
    value: float
    interval: Interval | None
    rank: int | None = None
    test: PairedTest | None = None
    """Against the column's best (None for the best itself)."""
    adjusted_p: float | None = None
    """The randomization p-value of ``test``, corrected for the column's tests (``StatsOptions.correction``)."""
    detectable: float | None = None
    """The smallest difference to the best that ``test`` would detect with 80% power at alpha (2.8 SE of Δ)."""
    alpha: float = 0.05

    @property
    def tied(self) -> bool:
        """Statistically indistinguishable from the column's best (the best itself included)."""
        return self.rank == 1 or (self.adjusted_p is not None and not self.adjusted_p < self.alpha)


@dataclass
class Column:
    """One (benchmark, variant, strategy) across models."""

    key: tuple[str, str, str]
    metric: str
    cells: dict[str, Cell]
    ranked: bool
    note: str = ""
    baselines: dict[str, float] = field(default_factory=dict)
    """The headline under the chance and majority-class predictors on the samples the column is ranked on."""
    cell: str = ""
    """The sweep cell the column's entries were run in (``""`` without a sweep)."""

    @property
    def detectable(self) -> tuple[float, float] | None:
        """The smallest and largest detectable difference over the column's tests (None without tests)."""
        values = [c.detectable for c in self.cells.values() if c.detectable is not None]
        return (min(values), max(values)) if values else None

    @property
    def label(self) -> str:
        return entry_label(self.key, self.cell)


def _pick(views: list[EntryView]) -> EntryView:
    """A system's entry for a column: the one with the most records where one run holds it twice (two models' entries
    merged under one label)."""
    return max(views, key=lambda v: len(v.scored_records))


def _score(
    records: list[AnyRecord], bench: Benchmark | None, metric: str, stats: StatsOptions, variant: str
) -> tuple[float, Interval | None]:
    """``metric`` over ``records`` with its interval (NaN and none when the benchmark cannot be loaded:
    without it the metric cannot be recomputed on the shared samples)."""
    if bench is None:
        return math.nan, None
    scored = [r.scored() for r in records]
    value = float(epoch_metrics(bench, scored).get(metric, math.nan))
    if not math.isfinite(value):
        return value, None
    interval = metric_interval(scored, bench, metric, by=stats.by, variant=variant, confidence=stats.confidence,
                               resamples=stats.resamples, seed=stats.seed)
    return value, interval


def entry_label(key: tuple[str, str, str], cell: str = "") -> str:
    """``bench:variant / strategy``, with the sweep cell's options after it in a sweep."""
    return f"{key[0]}:{key[1]} / {key[2]}" + (f" [{cell_text(cell)}]" if cell else "")


def build_column(key: tuple[str, str, str], views: list[EntryView], stats: StatsOptions, cell: str = "") -> Column:
    """Rank one column's models (of one sweep cell), on the samples they share where they differ."""
    by_model: dict[str, EntryView] = {}  # by label: each run of a model that several runs hold is its own system
    for label in unique(v.label for v in views):
        by_model[label] = _pick([v for v in views if v.label == label])
    metric = next(iter(by_model.values())).result.headline.name
    signatures = {m: v.signatures() for m, v in by_model.items()}
    first = next(iter(signatures.values()))
    shared = {i for i, sig in first.items() if all(s.get(i) == sig for s in signatures.values())}
    same = all(s == first for s in signatures.values())
    cells: dict[str, Cell] = {}
    note = ""
    if same:
        for m, v in by_model.items():
            value = v.result.metrics.get(metric, math.nan)  # NaN: no sample scored (n = 0)
            cells[m] = Cell(m, v, list(v.scored_records), value, v.interval)
    elif shared:
        sizes = ", ".join(f"{m} {len(s)}" for m, s in signatures.items())
        note = (
            f"{entry_label(key, cell)}: the runs hold different samples ({sizes}); ranked and tested on the "
            f"{len(shared)} they share (same id, prompt and gold)."
        )
        for m, v in by_model.items():
            records: list[AnyRecord] = [r for r in v.scored_records if r.id in shared]
            value, interval = _score(records, v.bench, metric, stats, key[1])
            cells[m] = Cell(m, v, records, value, interval)
    else:
        note = (
            f"{entry_label(key, cell)}: the runs share no sample (other --limit, --seed or options); "
            "values are over each run's own samples and are not ranked."
        )
        for m, v in by_model.items():
            cells[m] = Cell(m, v, list(v.scored_records), v.result.metrics.get(metric, math.nan), v.interval)
    column = Column(key, metric, cells, ranked=bool(same or shared), note=note, cell=cell)
    first_cell = next(iter(cells.values()))
    if same:
        column.baselines = dict(first_cell.view.result.baselines)
    elif shared and first_cell.view.bench is not None:
        column.baselines = first_cell.view.bench.baselines([r.scored() for r in first_cell.records])
    if column.ranked and len(cells) > 1:
        _rank_and_test(column, stats)
    return column


def _rank_and_test(column: Column, stats: StatsOptions) -> None:
    values = {m: c.value for m, c in column.cells.items() if math.isfinite(c.value)}
    if not values:
        return
    for m, c in column.cells.items():
        if m in values:
            c.rank = 1 + sum(v > values[m] + 1e-12 for v in values.values())
    best = max(values, key=lambda m: values[m])
    top = column.cells[best]
    best_records = _by_id(top.records)
    for m, c in column.cells.items():
        if m == best:
            continue
        mine = _by_id(c.records)
        pairs = [(best_records[i], mine[i]) for i in sorted(mine) if i in best_records]
        bench = c.view.bench or top.view.bench
        if pairs and bench is not None:
            c.test = paired_records_test(pairs, bench, column.metric, stats, variant=column.key[1])
            c.detectable = detectable(c.test.se, stats.alpha)
    tested = [c for c in column.cells.values() if c.test is not None]
    for c, p in zip(tested, adjust([c.test.p_randomization for c in tested if c.test], stats.correction),
                    strict=True):
        c.adjusted_p = p if math.isfinite(p) else None
        c.alpha = stats.alpha


def _by_id(records: list[AnyRecord]) -> dict[str, list[AnyRecord]]:
    """A cell's records by sample id (one per epoch)."""
    out: dict[str, list[AnyRecord]] = {}
    for r in sorted(records, key=lambda r: (r.id, r.epoch)):
        out.setdefault(r.id, []).append(r)
    return out


def leaderboard(views: Sequence[EntryView], stats: StatsOptions) -> list[Column] | None:
    """Every column of the runs' entries; None unless they hold at least two systems (models, or runs of one)."""
    if len(unique(v.label for v in views)) < 2:
        return None
    groups: dict[tuple[str, str, str, str], list[EntryView]] = {}
    for v in views:
        groups.setdefault((v.result.benchmark, v.result.variant, v.result.strategy, v.result.cell), []).append(v)
    return [build_column(k[:3], group, stats, k[3]) for k, group in groups.items()]


def _cell_text(c: Cell) -> str:
    text = fmt(c.value)
    if c.interval is not None:
        text += f" [{fmt(c.interval.low)}, {fmt(c.interval.high)}]"
    if c.rank is not None:
        text += f" #{c.rank}"
    if c.test is not None:
        t = c.test
        p = f"{t.p_randomization:.3f}" if math.isfinite(t.p_randomization) else "n/a"
        adjusted = f", adj. {c.adjusted_p:.3f}" if c.adjusted_p is not None else ""
        text += f"; Δ {t.delta:+.4f} (p {p}{adjusted}, {units_text(t)})"
        if c.tied:
            text += f"; {TIED}" + _why_tied(c)
    return text


TIED = "≈ best"
"""A model the column's tests cannot tell apart from the best (after the correction)."""


def _why_tied(c: Cell) -> str:
    """Why a model ``TIED`` may still be far below the best: the same score, or a Δ smaller than these samples can
    detect (a Δ of -0.75 on 4 tables is no evidence either way)."""
    assert c.test is not None
    delta = abs(c.test.delta)
    if delta < 5e-5:
        return " (the same score)"
    if c.test.min_p >= c.alpha:
        units = f"{c.test.clusters} {plural(c.test.unit, c.test.clusters)}"
        return f" (too few samples to tell: with {units} no p-value can go below {c.test.min_p:.3g})"
    if c.detectable is not None and c.detectable > delta:
        return f" (too few samples to tell: only a Δ of {fmt(c.detectable)} or more would be detected)"
    return ""


def _detectable_text(column: Column) -> str:
    span = column.detectable
    if span is None:
        return "—"
    low, high = span
    return fmt(low) if math.isclose(low, high, abs_tol=5e-5) else f"{fmt(low)}–{fmt(high)}"


def leaderboard_section(views: Sequence[EntryView], stats: StatsOptions) -> Section | None:
    """The ranked table, models as rows; None for a single model."""
    columns = leaderboard(views, stats)
    if columns is None:
        return None
    models = unique(v.result.model for v in views)
    ranked = [c for c in columns if c.ranked and len(c.cells) > 1]
    mean_rank: dict[str, float] = {}
    covered: dict[str, int] = {}
    for m in models:
        ranks = [c.cells[m].rank for c in ranked if m in c.cells and c.cells[m].rank is not None]
        covered[m] = len(ranks)
        mean_rank[m] = sum(r for r in ranks if r is not None) / len(ranks) if ranks else math.inf
    order = sorted(models, key=lambda m: (-covered[m], mean_rank[m], m))
    rows, bold = [], set()
    for i, m in enumerate(order):
        cells = []
        for j, c in enumerate(columns):
            cell = c.cells.get(m)
            cells.append("—" if cell is None else _cell_text(cell))
            if cell is not None and cell.rank == 1:
                bold.add((i, j + 3))
        rank = (f"{mean_rank[m]:.2f} ({covered[m]} of {len(ranked)} columns)" if math.isfinite(mean_rank[m])
                else "not ranked: no column shared with another model")
        rows.append([str(i + 1) if math.isfinite(mean_rank[m]) else "", m, rank, *cells])
    for name, label in (("chance", "chance"), ("majority", "majority class")):
        if any(name in c.baselines for c in columns):
            rows.append(["", label, "", *(fmt(c.baselines.get(name)) if name in c.baselines else "—" for c in columns)])
    if any(c.detectable for c in columns):
        rows.append(["", "smallest detectable Δ", "", *(_detectable_text(c) for c in columns)])
    conf = next((v.interval.confidence for v in views if v.interval), stats.confidence)
    correction = {"holm": "Holm", "bh": "Benjamini-Hochberg"}[stats.correction]
    caption = (
        f"Models ranked by their mean rank over the columns they cover (most columns first). A cell: the headline "
        f"[{conf:.0%} bootstrap interval] #rank; for all but the column's best, Δ to the best, the approximate "
        f"randomization p-value ({stats.resamples} rounds) and its {correction}-corrected value over the column's "
        "tests, on the n samples both hold (paired and resampled by the benchmark's clusters, as `compare`); "
        f"{TIED}: not distinguishable from the best at α = {stats.alpha:g} after the correction (which with few "
        "samples a large Δ can be: the cell then says so). Smallest detectable "
        f"Δ: the difference to the best the column's tests would detect with 80% power at α = {stats.alpha:g} "
        "(2.8 standard errors of Δ) at this size. Chance and majority class: the headline of those predictors on the "
        "samples the column is ranked on."
    )
    table = TableBlock(
        ["#", "model", "mean rank (columns ranked in)", *(f"{c.label} ({c.metric})" for c in columns)],
        rows,
        caption=caption,
        bold=bold,
    )
    notes = [TextBlock(c.note) for c in columns if c.note]
    return Section("Leaderboard", [table, *notes])
