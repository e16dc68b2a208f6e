"""The papers' tables: published results as data, the presets that reproduce them, and the mapping from
a run's records to their columns (declared by each benchmark through ``Benchmark.paper_tables``)."""

from structbench.papers.published import (
    PublishedColumn,
    PublishedNumber,
    PublishedRow,
    PublishedTable,
    load_published,
)
from structbench.papers.registry import find_preset, paper_tables, preset_table, robustness_presets
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
    "find_preset",
    "load_published",
    "paper_tables",
    "preset_table",
    "robustness_presets",
]
