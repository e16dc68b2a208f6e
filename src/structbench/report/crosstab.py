"""A metric over the cross of two breakdown keys, re-aggregated from one entry's sample records."""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np

from structbench.report.entries import EntryView
from structbench.report.tables import group_order
from structbench.runfiles.records import AnyRecord
from structbench.runfiles.results import epoch_metrics


def group_value(record: AnyRecord, key: str) -> str | None:
    """The record's group for a breakdown key (``task`` or a meta key), as ``compute_result`` reads it."""
    value = record.task if key == "task" else record.meta.get(key)
    return None if value is None else str(value)


def crosstab(view: EntryView, keys: tuple[str, str]) -> tuple[list[str], list[str], np.ndarray] | None:
    """(row values, column values, grid of the headline); None unless both keys have two or more values, or
    when the benchmark is not at hand to compute its headline."""
    if view.bench is None:
        return None
    bench = view.bench
    cells: dict[tuple[str, str], list[AnyRecord]] = defaultdict(list)
    for r in view.scored_records:
        a, b = group_value(r, keys[0]), group_value(r, keys[1])
        if a is not None and b is not None:
            cells[(a, b)].append(r)
    rows = sorted({a for a, _ in cells}, key=group_order)
    cols = sorted({b for _, b in cells}, key=group_order)
    if len(rows) < 2 or len(cols) < 2:
        return None
    metric = view.result.headline.name
    grid = np.full((len(rows), len(cols)), math.nan)
    for (a, b), recs in cells.items():
        grid[rows.index(a), cols.index(b)] = epoch_metrics(bench, [r.scored() for r in recs]).get(metric, math.nan)
    return rows, cols, grid
