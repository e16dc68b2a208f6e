"""The report's robustness section: a sweep's cells side by side, tested against the reference cell, on a heat map.

One subsection per swept (benchmark, variant, strategy, model) of a run: a paragraph with the robustness score (the
worst cell's headline), the best cell, the spread and the mean absolute deviation; a table of every cell (headline
with its interval, difference from the reference with its interval and p-values, Holm- or BH-corrected); and a
heat map of the headline over the grid (the first swept key down, the others across).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from structbench.analysis.robustness import CellRun, grouped, robustness_of
from structbench.report.document import Block, FigureBlock, Section, TableBlock, TextBlock, slug
from structbench.report.entries import EntryView, StatsOptions
from structbench.report.plots import _figure, _rc, plain, to_svg
from structbench.report.tables import fmt
from structbench.runfiles.cells import cell_id, swept_keys
from structbench.runfiles.results import Robustness
from structbench.runfiles.rundir import RunFiles

CORRECTIONS = {"holm": "Holm", "bh": "Benjamini-Hochberg"}


def robustness_section(views: Sequence[EntryView], runs: Sequence[RunFiles], stats: StatsOptions, *,
                       figures: bool = True) -> Section | None:
    """The section over every run's swept entries; None when no run swept two cells or more."""
    by_path = {run.path: run for run in runs}
    children = []
    for path in dict.fromkeys(v.run for v in views):
        mine = [v for v in views if v.run == path]
        for group in grouped([CellRun(v.result.cell, v.bench, v.result, v.records) for v in mine]).values():
            if len({r.cell for r in group}) < 2:
                continue
            bench = next((r.bench for r in group if r.bench is not None), None)
            run = by_path.get(path)
            order = [k for k, _ in swept_keys(type(bench), run.sweeps)] if bench is not None and run else []
            summary = robustness_of(group, stats, order)
            if summary is not None:
                label = next(v.label for v in mine if v.result.model == summary.model)
                children.append(sweep_section(summary, label, figures=figures))
    if not children:
        return None
    intro = TextBlock(
        "Each swept entry's cells compared with its reference cell (the options' values without the sweep: the "
        "paper's table format, no perturbation). The robustness score is the worst cell's headline; spread is best "
        "minus worst, MAD the mean absolute deviation of the cells' headlines from their mean. Δ is a cell's headline "
        "minus the reference cell's on the samples both answered, tested as `compare` tests two runs (paired "
        "bootstrap and approximate randomization, resampling and swapping the benchmark's clusters); the "
        "randomization p-values are corrected for the cells' number.")
    return Section("Robustness", [intro], children)


def sweep_section(s: Robustness, label: str, *, figures: bool = True) -> Section:
    """One swept entry: the summary, the cells' table and the heat map."""
    title = f"{s.benchmark}:{s.variant} / {s.strategy} / {label}"
    blocks: list[Block] = [TextBlock(summary_text(s)), cells_table(s)]
    if figures:
        stem = slug(f"robustness-{title}")
        svg = heatmap(s, stem)
        if svg is not None:
            axes = list(s.axes)
            layout = f"{axes[0]} down, {', '.join(axes[1:])} across" if len(axes) > 1 else f"{axes[0]} across"
            caption = (f"{s.metric} in each cell ({layout}): * differs from the reference (R) after the "
                       f"{CORRECTIONS.get(s.correction, s.correction)} correction")
            blocks.append(FigureBlock(svg, caption, stem))
    return Section(f"Robustness: {title}", blocks)


def summary_text(s: Robustness) -> str:
    """The robustness score and the variability of one swept entry in a paragraph."""
    if s.score is None:
        return f"No cell of the sweep has a {s.metric}."
    ref = next((c for c in s.cells if c.reference), None)
    tested = sum(c.p_adjusted is not None for c in s.cells)
    unit = f", resampling {s.unit}s" if s.unit and s.unit != "sample" else ""
    return (
        f"{len(s.cells)} cells over {', '.join(f'{k} ({len(v)})' for k, v in s.axes.items())}. Robustness score "
        f"(worst cell's {s.metric}): {fmt(s.score)}{_ci(s, 'score')} ({s.shown(s.worst)}); best "
        f"{fmt(s.best_value)}{_ci(s, 'best_value')} ({s.shown(s.best)}); spread {fmt(s.spread)}{_ci(s, 'spread')}; "
        f"MAD {fmt(s.mad)}{_ci(s, 'mad')}; mean {fmt(s.mean)}{_ci(s, 'mean')}.{_shared(s)} Reference "
        f"cell: {s.shown(s.reference)} ({fmt(ref.value if ref else None)}). {_drop(s)}{s.significant} of {tested} "
        f"cells differ from it at α = {s.alpha:g} after the {CORRECTIONS.get(s.correction, s.correction)} correction "
        f"({s.resamples} resamples, seed {s.seed}{unit})."
    )


def _ci(s: Robustness, figure: str) -> str:
    """`` [low, high]``: a figure's interval from the grid resampled as a whole (none stored: nothing)."""
    bounds = s.intervals.get(figure)
    return f" [{fmt(bounds[0])}, {fmt(bounds[1])}]" if bounds else ""


def _shared(s: Robustness) -> str:
    """Where the figures rest on fewer samples than a cell holds, on how many (the table's headlines on all)."""
    if not s.fewer_shared:
        return ""
    return (f" These figures are on the {s.shared} samples every cell answered (a cell holds up to "
            f"{max(c.n for c in s.cells)}); the table gives each cell's {s.metric} on all of its samples.")


def _drop(s: Robustness) -> str:
    """The drop from the reference to the worst cell and whether picking the worst of these cells explains it."""
    if s.drop is None or s.p_drop is None:
        return ""
    verdict = ("beyond what picking the worst of these cells gives by chance" if s.drop_significant else
               "no more than picking the worst of these cells gives by chance")
    return (f"The worst cell is {fmt(s.drop)}{_ci(s, 'drop')} below the reference: {verdict} (randomization of the "
            f"cells, p = {_p(s.p_drop, s.resamples)}, on the {s.shared} samples every cell answered; the intervals "
            "resample the whole grid, each figure taken in every resample). ")


def _p(p: float | None, resamples: int) -> str:
    if p is None:
        return "n/a"
    return f"<{1 / resamples:.4f}" if p == 0 else fmt(p)


def cells_table(s: Robustness) -> TableBlock:
    """Every cell: its headline with the interval, Δ from the reference with its interval, and the tests."""
    conf = f"{s.confidence:.0%}"
    rows, bold = [], set()
    for i, c in enumerate(s.cells):
        interval = f" [{fmt(c.ci_low)}, {fmt(c.ci_high)}]" if c.ci_low is not None and c.ci_high is not None else ""
        if c.reference:
            tail = ["reference", "", "", "", "", ""]
        elif c.delta is None:
            tail = ["–", "", "", "", "", "not tested (no shared samples)"]
        else:
            tail = [f"{c.delta:+.4f}", f"[{fmt(c.delta_ci_low)}, {fmt(c.delta_ci_high)}]",
                    _p(c.p_bootstrap, s.resamples), _p(c.p_randomization, s.resamples),
                    _p(c.p_adjusted, s.resamples), "yes" if c.significant else "no"]
        rows.append([s.shown(c.cell), str(c.n), fmt(c.value) + interval, *tail])
        if c.cell == s.worst:
            bold.add((i, 2))
    caption = (f"{s.metric} per cell [{conf} bootstrap interval]; Δ = cell − reference on the shared samples, "
               f"[{conf} paired bootstrap interval]; p boot n/a with too few resampled units; p adj: "
               f"{CORRECTIONS.get(s.correction, s.correction)}-corrected randomization p; the worst cell in bold.")
    return TableBlock(["cell", "n", s.metric, "Δ", f"{conf} CI of Δ", "p boot", "p rand", "p adj",
                       f"differs (α = {s.alpha:g})"], rows, caption=caption, bold=bold)


def grid_of(s: Robustness) -> tuple[list[str], list[str], np.ndarray, np.ndarray] | None:
    """(row labels, column labels, headlines, marks) of the grid: the first swept key's values down, every combination
    of the others across (one row when a single key is swept); marks: 1 significant, 2 reference, 0 otherwise."""
    axes = list(s.axes.items())
    if not axes:
        return None
    values = {c.cell: c for c in s.cells}
    if len(axes) == 1:
        key, down = axes[0]
        row_labels, col_labels = [""], list(down)
        points = [[{key: v} for v in down]]
    else:
        key, down = axes[0]
        across: list[list[tuple[str, str]]] = [[]]
        for k, vals in axes[1:]:
            across = [[*a, (k, v)] for a in across for v in vals]
        row_labels = list(down)
        col_labels = [a[0][1] if len(axes) == 2 else ", ".join(f"{k}={v}" for k, v in a) for a in across]
        points = [[{key: r, **dict(a)} for a in across] for r in down]
    grid = np.full((len(points), len(points[0])), math.nan)
    marks = np.zeros_like(grid)
    for (i, j), _ in np.ndenumerate(grid):
        cell = values.get(cell_id(points[i][j]))
        if cell is not None and cell.value is not None:
            grid[i, j] = cell.value
            marks[i, j] = 2 if cell.reference else 1 if cell.significant else 0
    return row_labels, col_labels, grid, marks


def heatmap(s: Robustness, name: str) -> str | None:
    """The headline over the grid as a heat map, each cell annotated (R: the reference, *: differs from it)."""
    laid = grid_of(s)
    if laid is None or np.isnan(laid[2]).all():
        return None
    row_labels, col_labels, grid, marks = laid
    axes = list(s.axes)
    with _rc(name):
        fig = _figure(max(4.0, 1.0 * len(col_labels) + 2.2), max(1.8, 0.5 * len(row_labels) + 1.6))
        ax = fig.subplots()
        top = max(1.0, float(np.nanmax(grid)))
        im = ax.imshow(grid, cmap="viridis", vmin=0.0, vmax=top, aspect="auto")
        ax.set_xticks(range(len(col_labels)), [plain(c) for c in col_labels], rotation=30, ha="right")
        ax.set_yticks(range(len(row_labels)), [plain(r) for r in row_labels] if len(axes) > 1 else [""])
        ax.set_ylabel(plain(axes[0]) if len(axes) > 1 else "")
        if len(axes) <= 2:
            ax.set_xlabel(plain(axes[-1]))
        for (i, j), x in np.ndenumerate(grid):
            if not math.isnan(x):
                mark = {2: " R", 1: "*"}.get(int(marks[i, j]), "")
                ax.text(j, i, f"{x:.2f}{mark}", ha="center", va="center", fontsize=7,
                        color="w" if x < 0.6 * top else "k")
        fig.colorbar(im, ax=ax, shrink=0.8, label=plain(s.metric))
        ax.set_title(plain(f"{s.benchmark}:{s.variant} / {s.strategy} / {s.model}"), fontsize=8)
        return to_svg(fig, name)
