"""SKA-Bench's tables (Liu et al.): noise robustness (Table 3), order insensitivity (Table 4) and
negative rejection (Table 5), with their presets and how a run's records fill each column.

A column is the metric over the records of one testbed, knowledge type and budget (or position),
re-aggregated from the samples, so one run with ``testbed=all`` fills all three tables.
"""

from __future__ import annotations

from pathlib import Path

from structbench.benchmarks.skabench.testbeds import NEGATIVE, NOISE, ORDER, POSITIONS, budget_label, default_budgets
from structbench.benchmarks.skabench.units import KNOWLEDGE_TYPES
from structbench.papers.robustness import robustness_preset
from structbench.papers.spec import Cell, Mean, Measure, PaperTable, Preset, RunRow

PUBLISHED = Path(__file__).parent / "published"
STRATEGY = "direct"
"""The paper's prompt, one greedy reply."""
SELECTION = ("testbed", "knowledge", "budget", "position", "db", "path", "questions", "templates")
"""Options that only choose which instances and contexts are built."""
DIFFERENCES = (
    "The paper's instances (WebQSP/CWQ, WTQ/TableBench, STaRK, HybridQA with annotated positive units) are "
    "not available: the preset builds instances from an RFQA database (see the SKA-Bench divergences)."
)


def _where(testbed: str, kind: str, **more: str) -> dict[str, str]:
    return {"testbed": testbed, "knowledge_type": kind, **more}


def _noise_row() -> RunRow:
    return RunRow(
        {
            f"{kind}_{budget_label(b)}": Measure(STRATEGY, "f1", where=_where(NOISE, kind, budget=budget_label(b)))
            for kind in KNOWLEDGE_TYPES
            for b in default_budgets(NOISE, kind)
        }
    )


def _order_row() -> RunRow:
    cells: dict[str, Cell] = {}
    for kind in KNOWLEDGE_TYPES:
        budget = budget_label(default_budgets(ORDER, kind)[0])
        positions = POSITIONS if kind.startswith("table") else tuple(p for p in POSITIONS if p != "original")
        for p in positions:
            cells[f"{kind}_{p}"] = Measure(STRATEGY, "f1", where=_where(ORDER, kind, budget=budget, position=p))
    return RunRow(cells)


def _rejection_row() -> RunRow:
    cells: dict[str, Cell] = {
        kind: Measure(STRATEGY, "rejection_rate", where=_where(NEGATIVE, kind)) for kind in KNOWLEDGE_TYPES
    }
    cells["avg"] = Mean(tuple(KNOWLEDGE_TYPES))
    return RunRow(cells)


def _table(file: str, name: str, testbed: str, description: str, row: RunRow, plot: tuple[str, ...]) -> PaperTable:
    return PaperTable(
        benchmark="skabench",
        path=PUBLISHED / file,
        preset=Preset(
            name=name,
            description=description,
            benches=("skabench",),
            strategies=(STRATEGY,),
            options={"testbed": testbed, "knowledge": "all"},
            differences=DIFFERENCES,
        ),
        rows=(row,),
        plot=plot,
        selection=SELECTION,
    )


TABLE3 = _table(
    "table3.json", "skabench-table3", "noise",
    "SKA-Bench Table 3: noise robustness, F1 per knowledge type at 1k-24k tokens", _noise_row(),
    ("kg_4k", "table_4k", "kg+text_12k", "table+text_12k"),
)
TABLE4 = _table(
    "table4.json", "skabench-table4", "order",
    "SKA-Bench Table 4: order insensitivity, F1 per knowledge type and position of the positive units",
    _order_row(), ("kg_random", "table_original"),
)
TABLE5 = _table(
    "table5.json", "skabench-table5", "negative",
    "SKA-Bench Table 5: negative rejection, rejection rate per knowledge type", _rejection_row(), ("avg",),
)

TABLES = (TABLE3, TABLE4, TABLE5)


ROBUSTNESS = (
    robustness_preset("skabench", "skabench:rfqa", "direct",
                      options={"testbed": "noise", "knowledge": "table", "budget": "4k", "questions": "100"},
                      description="100 table contexts of the noise testbed at 4k tokens (the paper's prompt) in 28 "
                                  "cells: its |cell|cell| rows and 6 other table formats x no perturbation, shuffled "
                                  "rows (the table's units) and columns, transposed"),
)
"""The standard robustness grid (``structbench.papers.robustness``): ``--preset robust-skabench``."""
