"""A sweep's cells compared: each cell's headline, its paired difference from the reference cell, the spread.

One (benchmark, variant, strategy, model) run in the cells of a sweep (``runner.sweep``) answered the same samples
in every cell (a serialization or perturbation changes the prompt, not the sample), so each cell pairs sample by
sample with the reference cell: the one whose options have the values they have without the sweep (the paper's
format, no perturbation). Each cell is tested against it as ``compare`` tests two runs: a paired cluster bootstrap
and approximate randomization on the headline, resampling and swapping the benchmark's clusters; the cells'
p-values are corrected for their number (Holm, or Benjamini-Hochberg). The summary: the worst cell's headline
(the robustness score), the best, the spread between them and the mean absolute deviation of the cells from their
mean (the variability HELM's ToRR study reports across table formats), and the drop from the reference cell to the
worst. The worst of many noisy cells is biased low, so each figure gets its interval from the whole grid resampled
by cluster, the figure taken in every resample, and the drop a randomization test of the cells (``stats.grid``).
The figures and their intervals rest on the samples every cell answered (``shared``): where a cell lost some (harness
errors, prompts too long, a sweep not finished), a figure from the cells' full headlines would compare other samples
than its interval and could fall outside it. Each cell's own headline, on all of its samples, stays in its row.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from structbench.analysis.paired import StatsOptions, grid_pool, paired_records_test, pool_statistic
from structbench.contract.benchmark import Benchmark
from structbench.runfiles.cells import cell_options
from structbench.runfiles.records import RecordSummary, SampleRecord
from structbench.runfiles.results import CellComparison, ResultEntry, Robustness
from structbench.stats.grid import grid_figures
from structbench.stats.multiple import adjust

Record = SampleRecord | RecordSummary


@dataclass(frozen=True)
class CellRun:
    """One cell of a sweep: the benchmark as the cell configured it, its result and its records."""

    cell: str
    bench: Benchmark | None
    result: ResultEntry
    records: Sequence[Record]


def reference_cell(bench: Benchmark, cells: Sequence[str]) -> str:
    """The cell a sweep's cells are compared with: the one whose options have the values ``bench`` (any cell's
    benchmark) has without the sweep (the paper's: a serialization's ``paper``, no perturbation), else the first."""
    swept = {k for cell in cells for k in cell_options(cell)}
    model = type(bench.options)
    base = bench.options.model_dump(exclude_unset=True, exclude=swept)
    try:
        unswept: Any = model.model_validate(base)
    except ValidationError:
        return cells[0] if cells else ""
    for cell in cells:
        options = cell_options(cell)
        try:
            typed: Any = model.model_validate({**base, **options})
        except ValidationError:
            continue
        if all(getattr(typed, k, None) == getattr(unswept, k, None) for k in options):
            return cell
    return cells[0] if cells else ""


def _by_id(records: Sequence[Record]) -> dict[str, list[Record]]:
    """Counted records by sample id, each id's epochs in order (harness errors were never scored)."""
    out: dict[str, list[Record]] = {}
    for r in sorted((r for r in records if r.counted), key=lambda r: (r.id, r.epoch)):
        out.setdefault(r.id, []).append(r)
    return out


def axes_of(cells: Sequence[str], order: Sequence[str] = ()) -> dict[str, list[str]]:
    """The swept keys with their values in the order the cells give them; keys in ``order`` first (the sweep's)."""
    axes: dict[str, list[str]] = {}
    for cell in cells:
        for key, value in cell_options(cell).items():
            values = axes.setdefault(key, [])
            if value not in values:
                values.append(value)
    ordered = [k for k in order if k in axes] + [k for k in axes if k not in order]
    return {k: axes[k] for k in ordered}


def robustness_of(runs: Sequence[CellRun], stats: StatsOptions, order: Sequence[str] = ()) -> Robustness | None:
    """The cells of one (benchmark, variant, strategy, model) compared; None with fewer than two cells. A cell
    without the benchmark (it could not be loaded) or without records shared with the reference is not tested."""
    if len(runs) < 2:
        return None
    first = runs[0].result
    bench = next((r.bench for r in runs if r.bench is not None), None)
    cells = [r.cell for r in runs]
    ref = reference_cell(bench, cells) if bench is not None else cells[0]
    reference = next(r for r in runs if r.cell == ref)
    metric = reference.result.headline.name
    ref_records = _by_id(reference.records)
    rows: list[CellComparison] = []
    unit: str | None = None
    for run in runs:
        h = run.result.headline
        row = CellComparison(cell=run.cell, options=cell_options(run.cell), n=run.result.n, value=h.value,
                             ci_low=h.ci_low, ci_high=h.ci_high, reference=run.cell == ref)
        tester = reference.bench or run.bench
        if run.cell != ref and tester is not None:
            mine = _by_id(run.records)
            pairs = [(ref_records[i], mine[i]) for i in sorted(mine) if i in ref_records]
            if pairs:
                t = paired_records_test(pairs, tester, metric, stats, variant=first.variant)
                unit = t.unit
                row = row.model_copy(update={
                    "pairs": t.n, "delta": _finite(t.delta), "delta_ci_low": _finite(t.ci_low),
                    "delta_ci_high": _finite(t.ci_high), "p_bootstrap": None if t.small else _finite(t.p_bootstrap),
                    "p_randomization": _finite(t.p_randomization),
                })
        rows.append(row)
    grid = _grid(runs, ref, stats, metric, first.variant)
    summary = grid.pop("figures", None) or _summary([(r.cell, r.value) for r in rows])
    tested = [i for i, r in enumerate(rows) if r.p_randomization is not None]
    for i, p in zip(tested, adjust([rows[i].p_randomization or math.nan for i in tested], stats.correction),
                    strict=True):
        if math.isfinite(p):
            rows[i] = rows[i].model_copy(update={"p_adjusted": p, "significant": p < stats.alpha})
    return Robustness(
        benchmark=first.benchmark, variant=first.variant, strategy=first.strategy, model=first.model, metric=metric,
        axes=axes_of(cells, order), reference=ref, cells=rows, **summary,
        significant=sum(bool(r.significant) for r in rows), correction=stats.correction, alpha=stats.alpha,
        resamples=stats.resamples, seed=stats.seed, confidence=stats.confidence, unit=unit, **grid,
    )


def _grid(runs: Sequence[CellRun], ref: str, stats: StatsOptions, metric: str, variant: str) -> dict[str, Any]:
    """The figures (``figures``: the summary), their intervals and the drop's test over the samples every cell
    answered (``stats.grid``); {} where there are none, or the benchmark is not at hand."""
    bench = next((r.bench for r in runs if r.cell == ref and r.bench is not None), None) or next(
        (r.bench for r in runs if r.bench is not None), None)
    by_cell = [_by_id(r.records) for r in runs]
    shared = sorted(set.intersection(*(set(cell) for cell in by_cell))) if by_cell else []
    if bench is None or not shared:
        return {}
    pool, design = grid_pool([[cell[i] for i in shared] for cell in by_cell], bench, variant, stats.by)
    reference = [r.cell for r in runs].index(ref)
    found = grid_figures(pool_statistic(pool, bench, metric), design, reference, resamples=stats.resamples,
                         seed=stats.seed, confidence=stats.confidence)
    intervals = {k: [v[0], v[1]] for k, v in found.intervals.items() if all(map(math.isfinite, v))}
    p = _finite(found.p_drop)
    figures = _summary(list(zip([r.cell for r in runs], found.cells, strict=True)))
    if all(map(math.isfinite, found.cells)):  # the very numbers the intervals were built around
        figures.update({k: found.observed[k] for k in ("score", "best_value", "mean", "spread", "mad")})
    return {"figures": figures, "drop": _finite(found.observed["drop"]), "intervals": intervals, "p_drop": p,
            "drop_significant": None if p is None else p < stats.alpha, "shared": len(shared)}


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _summary(cells: Sequence[tuple[str, float | None]]) -> dict[str, Any]:
    """Worst and best cell, mean, spread and mean absolute deviation over the (cell, value) pairs with a value."""
    valued = [(c, v) for c, v in cells if v is not None and math.isfinite(v)]
    if not valued:
        return {"score": None}
    worst = min(valued, key=lambda cv: cv[1])
    best = max(valued, key=lambda cv: cv[1])
    values = [v for _, v in valued]
    mean = sum(values) / len(values)
    return {"score": worst[1], "worst": worst[0], "best": best[0], "best_value": best[1], "mean": mean,
            "spread": best[1] - worst[1], "mad": sum(abs(v - mean) for v in values) / len(values)}


GroupKey = tuple[str, str, str, str]
"""(benchmark, variant, strategy, model)."""


def grouped(runs: Sequence[CellRun]) -> dict[GroupKey, list[CellRun]]:
    """Cell runs per (benchmark, variant, strategy, model), cells in the order given."""
    out: dict[GroupKey, list[CellRun]] = {}
    for run in runs:
        r = run.result
        out.setdefault((r.benchmark, r.variant, r.strategy, r.model), []).append(run)
    return out


def sweep_robustness(runs: Sequence[CellRun], stats: StatsOptions | None = None,
                     order: Callable[[CellRun], Sequence[str]] = lambda run: ()) -> list[Robustness]:
    """Every group of two cells or more compared (a run's ``metrics.json``: ``robustness``); ``order`` gives a
    group's swept keys in the sweep's order."""
    stats = stats or StatsOptions()
    out = []
    for group in grouped(runs).values():
        if len({r.cell for r in group}) < 2:
            continue
        summary = robustness_of(group, stats, order(group[0]))
        if summary is not None:
            out.append(summary)
    return out
