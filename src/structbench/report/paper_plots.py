"""Where the runs' models stand among a paper's published models: one bar chart per chosen column."""

from __future__ import annotations

import math

from structbench.report.paper import Filled, FilledTable, scaled
from structbench.report.plots import plain, to_svg

MAX_PANELS = 4
PUBLISHED_COLOR = "#b0b0b0"
HUMAN_COLOR = "#6b6b6b"


def placement_figure(filled: FilledTable, name: str) -> str | None:
    """Horizontal bars of the table's plot columns, best at the top: published rows grey (humans darker),
    the runs' rows in colour with their intervals. None when no run fills any plotted column."""
    import matplotlib
    from matplotlib.figure import Figure

    data = filled.data
    keys = [k for k in filled.table.plot if any(isinstance(r.cells.get(k), Filled) for _, r in filled.rows)]
    keys = keys[:MAX_PANELS]
    if not keys:
        return None
    run_labels = list(dict.fromkeys(r.label for _, r in filled.rows))
    height = max(2.0, 0.2 * (len(data.rows) + len(run_labels)) + 0.9)
    with matplotlib.rc_context({"svg.hashsalt": name, "svg.fonttype": "none", "font.size": 8}):
        fig = Figure(figsize=(3.6 * len(keys), height), layout="constrained")
        axes = fig.subplots(1, len(keys), squeeze=False)[0]
        for ax, key in zip(axes, keys, strict=True):
            bars: list[tuple[str, float, str, tuple[float, float] | None]] = []
            for row in data.rows:
                value = row.values[[c.key for c in data.columns].index(key)]
                if value is not None and row.kind != "aggregate":
                    bars.append((row.name, value, HUMAN_COLOR if row.kind == "human" else PUBLISHED_COLOR, None))
            for _, r in filled.rows:
                cell = r.cells.get(key)
                if isinstance(cell, Filled):
                    v, lo, hi = (scaled(data, key, x) for x in (cell.value, cell.low, cell.high))
                    # a percentile interval need not contain the estimate (skewed resamples): clip the whiskers
                    err = (max(v - lo, 0.0), max(hi - v, 0.0)) if math.isfinite(lo) and math.isfinite(hi) else None
                    bars.append((r.label, v, f"C{run_labels.index(r.label) % 10}", err))
            bars.sort(key=lambda b: b[1])
            ys = range(len(bars))
            ax.barh(list(ys), [b[1] for b in bars], color=[b[2] for b in bars], height=0.7)
            for y, (_, v, _, err) in zip(ys, bars, strict=True):
                if err is not None:
                    ax.errorbar(v, y, xerr=[[err[0]], [err[1]]], fmt="none", ecolor="black", capsize=2, lw=0.8)
            ax.set_yticks(list(ys), [plain(b[0]) for b in bars], fontsize=7)
            for tick, bar in zip(ax.get_yticklabels(), bars, strict=True):
                if bar[3] is not None or bar[2].startswith("C"):
                    tick.set_fontweight("bold")
            ax.set_xlabel(plain(f"{data.column(key).label} ({data.scale_of(data.column(key))})"))
            ax.grid(axis="x", alpha=0.3)
        return to_svg(fig, name)
