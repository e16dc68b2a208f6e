"""The papers' tables: published results as data, the presets that reproduce them, and the mapping from
a run's records to their columns (declared by each benchmark through ``Benchmark.paper.tables``). Every
benchmark's tables and presets together: ``papers.registry`` (above the benchmarks, which this package is below)."""

from structbench.papers.published import (
    PublishedColumn,
    PublishedNumber,
    PublishedRow,
    PublishedTable,
    load_published,
)
from structbench.papers.spec import Cell, Change, Mean, Measure, Orders, PaperTable, Preset, RunRow

__all__ = [
    "Cell",
    "Change",
    "Mean",
    "Measure",
    "Orders",
    "PaperTable",
    "Preset",
    "PublishedColumn",
    "PublishedNumber",
    "PublishedRow",
    "PublishedTable",
    "RunRow",
    "load_published",
]
