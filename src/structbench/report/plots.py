"""Figures as inline SVG: metric vs numeric breakdown keys, depth x width heatmaps, confusion matrices, labels.

Which breakdown keys get a line plot, with which axis label and metric, is data: ``BREAKDOWN_PLOTS``.
A benchmark that names a meta key ``budget`` or ``depth`` gets the matching figure without code here;
other keys whose groups are all numbers get a generic line plot. Matplotlib runs headless (no pyplot).
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

import numpy as np

from structbench.report.crosstab import crosstab
from structbench.report.entries import EntryView
from structbench.report.tables import confusions, group_order, label_counts, numeric_value

MAX_PANELS = 12
MAX_SERIES = 12
MAX_TICKS = 15
LINESTYLES = ("-", "--", ":", "-.")
MARKERS = ("o", "s", "^", "D", "v", "P")
"""Colour tells models apart, line style and marker tell strategies apart."""


@dataclass(frozen=True)
class BreakdownPlot:
    """A line plot of a metric over the groups of one breakdown key."""

    xlabel: str
    metrics: tuple[str, ...] = ()
    """Metrics to plot instead of the headline, first one present wins (e.g. tuple similarity)."""
    log_x: bool = False
    order: tuple[str, ...] = ()
    """Order of categorical group values (others follow in their natural order)."""


_BUDGET = BreakdownPlot("token budget", log_x=True)
_POSITIVE = BreakdownPlot("number of positive units")
_HOPS = BreakdownPlot("number of hops / reasoning steps")
_ATTRIBUTES = BreakdownPlot("number of attributes", metrics=("tuple_similarity", "ts"))
_CELLS = BreakdownPlot("number of cells", metrics=("tuple_similarity", "ts"))

BREAKDOWN_PLOTS: dict[str, BreakdownPlot] = {
    "budget": _BUDGET,
    "token_budget": _BUDGET,
    "tokens": _BUDGET,
    "position": BreakdownPlot(
        "position of positive units",
        order=("original", "start", "front", "prefix", "middle", "random", "suffix", "back", "end"),
    ),
    "positive_units": _POSITIVE,
    "num_positive": _POSITIVE,
    "n_positive": _POSITIVE,
    "units": BreakdownPlot("number of units"),
    "hops": _HOPS,
    "steps": _HOPS,
    "reasoning_steps": _HOPS,
    "depth": BreakdownPlot("depth"),
    "width": BreakdownPlot("width"),
    "attributes": _ATTRIBUTES,
    "attrs": _ATTRIBUTES,
    "num_attributes": _ATTRIBUTES,
    "n_attributes": _ATTRIBUTES,
    "cells": _CELLS,
    "num_cells": _CELLS,
    "n_cells": _CELLS,
}
"""Breakdown key -> its plot. Keys not listed get ``BreakdownPlot(key)`` when all groups are numbers."""

HEATMAPS: dict[tuple[str, str], str] = {("depth", "width"): "{metric} by depth (rows) and width (columns)"}
"""Pairs of meta keys crossed into a heatmap per (model, strategy), computed from the sample records."""

MIN_GENERIC_GROUPS = 3


def plot_for(key: str, groups: Sequence[str]) -> BreakdownPlot | None:
    """The plot for breakdown ``key`` with these group values, or None."""
    spec = BREAKDOWN_PLOTS.get(key)
    if spec is not None:
        return spec if len(groups) >= 2 else None
    if len(groups) >= MIN_GENERIC_GROUPS and all(numeric_value(g) is not None for g in groups):
        return BreakdownPlot(key)
    return None


def _ordered(groups: Sequence[str], spec: BreakdownPlot) -> list[str]:
    rank = {v: i for i, v in enumerate(spec.order)}
    return sorted(groups, key=lambda g: (rank.get(g.lower(), len(rank)), *group_order(g)))


def _rc(salt: str) -> AbstractContextManager[Any]:
    import matplotlib

    return matplotlib.rc_context({"svg.hashsalt": salt, "svg.fonttype": "none", "font.size": 9})


_IMAGE_ID = re.compile(r' id="image[0-9a-f]+"')
"""Matplotlib names embedded rasters by content hash, so equal images repeat an id; nothing refers to it."""
_ID_OR_REF = re.compile(r'( id="|url\(#|href="#)')


def to_svg(fig: Any, prefix: str) -> str:
    """The figure as SVG markup without the XML prolog, its ids prefixed so figures inlined into one
    HTML page never share an id (matplotlib numbers ``figure_1``, ``axes_1`` ... afresh in each)."""
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    text = buf.getvalue()
    text = _IMAGE_ID.sub("", text[text.index("<svg") :])
    return _ID_OR_REF.sub(lambda m: f"{m.group(1)}{prefix}-", text)


def plain(text: str) -> str:
    """Text shown as is: matplotlib would read ``$...$`` in a model or label name as mathtext."""
    return text.replace("$", r"\$")


def _figure(width: float, height: float) -> Any:
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


def breakdown_figure(views: Sequence[EntryView], key: str, spec: BreakdownPlot, name: str) -> tuple[str, str] | None:
    """A line per (model, strategy) of the metric over the groups of ``key``; returns (svg, y label)."""
    having = [v for v in views if key in v.result.breakdowns][:MAX_SERIES]
    if not having:
        return None
    groups = _ordered(list(dict.fromkeys(g for v in having for g in v.result.breakdowns[key])), spec)
    first = next(iter(having[0].result.breakdowns[key].values())).metrics
    metric = next((m for m in spec.metrics if m in first), having[0].result.headline.name)
    numeric = all(numeric_value(g) is not None for g in groups)
    xs = [numeric_value(g) or 0.0 for g in groups] if numeric else list(range(len(groups)))
    models = list(dict.fromkeys(v.label for v in having))
    strategies = list(dict.fromkeys(v.strategy for v in having))
    with _rc(name):
        fig = _figure(6.4, 3.4)
        ax = fig.subplots()
        for v in having:
            bd = v.result.breakdowns[key]
            ys = [bd[g].metrics.get(metric, math.nan) if g in bd else math.nan for g in groups]
            k = strategies.index(v.strategy)
            ax.plot(
                xs,
                ys,
                color=f"C{models.index(v.label) % 10}",
                linestyle=LINESTYLES[k % len(LINESTYLES)],
                marker=MARKERS[k % len(MARKERS)],
                label=plain(f"{v.label} / {v.strategy}"),
            )
        if spec.log_x and numeric and min(xs) > 0:
            ax.set_xscale("log")
        if not numeric or len(groups) <= MAX_TICKS:
            ax.set_xticks(xs, [plain(g) for g in groups])
            ax.minorticks_off()
        ax.set_xlabel(plain(spec.xlabel))
        ax.set_ylabel(plain(metric))
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
        return to_svg(fig, name), metric


def heatmap_figure(
    views: Sequence[EntryView], keys: tuple[str, str], title: str, name: str
) -> str | None:
    """Per (model, strategy), the headline over the cross of two meta keys, re-aggregated from records."""
    tables = [(v, t) for v in views if (t := crosstab(v, keys)) is not None][:MAX_PANELS]
    if not tables:
        return None
    cols = min(3, len(tables))
    rows = math.ceil(len(tables) / cols)
    with _rc(name):
        fig = _figure(3.2 * cols, 2.8 * rows)
        axes = np.atleast_1d(fig.subplots(rows, cols, squeeze=False)).ravel()
        for ax, (v, (row_vals, col_vals, grid)) in zip(axes, tables, strict=False):
            im = ax.imshow(grid, cmap="viridis", vmin=0.0, vmax=max(1.0, float(np.nanmax(grid))), aspect="auto")
            ax.set_xticks(range(len(col_vals)), [plain(c) for c in col_vals])
            ax.set_yticks(range(len(row_vals)), [plain(r) for r in row_vals])
            ax.set_xlabel(plain(keys[1]))
            ax.set_ylabel(plain(keys[0]))
            ax.set_title(plain(f"{v.label} / {v.strategy}"), fontsize=8)
            for (i, j), x in np.ndenumerate(grid):
                if not math.isnan(x):
                    ax.text(j, i, f"{x:.2f}", ha="center", va="center", fontsize=7, color="w" if x < 0.6 else "k")
            fig.colorbar(im, ax=ax, shrink=0.8)
        for ax in axes[len(tables) :]:
            ax.set_axis_off()
        fig.suptitle(plain(title.format(metric=views[0].result.headline.name)), fontsize=9)
        return to_svg(fig, name)


def confusion_figure(views: Sequence[EntryView], name: str) -> str | None:
    """Confusion matrices (rows = gold, columns = predicted, rectangular allowed; colour = share of the gold row)."""
    panels = [(v, title, cm) for v in views for title, cm in confusions(v)][:MAX_PANELS]
    if not panels:
        return None
    cols = min(3, len(panels))
    rows = math.ceil(len(panels) / cols)
    with _rc(name):
        fig = _figure(3.4 * cols, 3.0 * rows)
        axes = np.atleast_1d(fig.subplots(rows, cols, squeeze=False)).ravel()
        for ax, (v, title, cm) in zip(axes, panels, strict=False):
            m = np.asarray(cm.counts, dtype=float)
            share = m / np.maximum(m.sum(axis=1, keepdims=True), 1.0)
            ax.imshow(share, cmap="Blues", vmin=0.0, vmax=1.0)
            ax.set_xticks(range(len(cm.predicted)), [plain(x) for x in cm.predicted], rotation=30, ha="right")
            ax.set_yticks(range(len(cm.gold)), [plain(x) for x in cm.gold])
            ax.set_xlabel("predicted")
            ax.set_ylabel("gold")
            ax.set_title(plain(f"{v.label} / {v.strategy}: {cm.title or title}"), fontsize=8)
            for (i, j), x in np.ndenumerate(m):
                ax.text(j, i, f"{x:g}", ha="center", va="center", fontsize=7, color="w" if share[i, j] > 0.5 else "k")
        for ax in axes[len(panels) :]:
            ax.set_axis_off()
        return to_svg(fig, name)


def label_figure(views: Sequence[EntryView], name: str) -> str | None:
    """Grouped bars: how often each label was predicted, per (model, strategy), beside the gold counts."""
    shown = list(views)[:MAX_SERIES]
    counted = label_counts(shown)
    if counted is None:
        return None
    labels, gold, per_view = counted
    series = [("gold", gold), *((plain(f"{v.label} / {v.strategy}"), c) for v, c in zip(shown, per_view, strict=True))]
    width = 0.8 / len(series)
    x = np.arange(len(labels))
    with _rc(name):
        fig = _figure(max(5.0, 0.9 * len(labels) + 2.5), 3.2)
        ax = fig.subplots()
        for i, (label, counts) in enumerate(series):
            ax.bar(x + i * width - 0.4 + width / 2, [counts[lab] for lab in labels], width, label=label)
        ax.set_xticks(x, [plain(lab) for lab in labels], rotation=20, ha="right")
        ax.set_ylabel("count")
        fig.legend(fontsize=7, loc="outside lower center", ncols=min(3, len(series)), frameon=False)
        ax.grid(axis="y", alpha=0.3)
        return to_svg(fig, name)
