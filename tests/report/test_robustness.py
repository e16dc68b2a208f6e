"""The robustness section's grid: the first swept key down, every combination of the others across, each cell's
headline and mark (reference, differs); its summary and table."""

from __future__ import annotations

import itertools
import math

from structbench.report.robustness import cells_table, grid_of, heatmap, summary_text
from structbench.runfiles.cells import cell_id
from structbench.runfiles.results import CellComparison, Robustness


def summary(axes: dict[str, list[str]]) -> Robustness:
    cells = []
    for i, combo in enumerate(itertools.product(*axes.values())):
        options = dict(zip(axes, combo, strict=True))
        cells.append(CellComparison(cell=cell_id(options), options=options, n=10, value=1.0 - 0.1 * i,
                                    reference=i == 0, delta=None if i == 0 else -0.1 * i,
                                    delta_ci_low=None if i == 0 else -0.1 * i - 0.05,
                                    delta_ci_high=None if i == 0 else -0.1 * i + 0.05,
                                    p_randomization=None if i == 0 else 0.01, p_adjusted=None if i == 0 else 0.04 * i,
                                    significant=None if i == 0 else 0.04 * i < 0.05))
    worst = cells[-1]
    return Robustness(benchmark="scitab", variant="all", strategy="zero_shot", model="m", metric="macro_f1",
                      axes=axes, reference=cells[0].cell, cells=cells, score=worst.value, worst=worst.cell,
                      best=cells[0].cell, best_value=1.0, mean=0.8, spread=1.0 - (worst.value or 0.0), mad=0.1,
                      significant=1, resamples=1000, unit="table")


def test_three_keys_lay_the_first_down_and_the_others_across() -> None:
    s = summary({"serialization": ["paper", "csv"], "perturbation": ["none", "transpose"], "seed": ["0", "1"]})
    rows, cols, grid, marks = grid_of(s) or ([], [], None, None)
    assert rows == ["paper", "csv"]
    assert cols == ["perturbation=none, seed=0", "perturbation=none, seed=1", "perturbation=transpose, seed=0",
                    "perturbation=transpose, seed=1"]
    assert grid is not None and marks is not None and grid.shape == (2, 4)
    assert math.isclose(grid[0, 0], 1.0) and math.isclose(grid[1, 3], 0.3)  # paper first, csv + transpose + 1 last
    assert marks[0, 0] == 2 and marks[0, 1] == 1 and marks[0, 2] == 0  # reference; p adj 0.04 < 0.05; 0.08 not


def test_one_or_two_keys_name_the_columns_by_value() -> None:
    one = grid_of(summary({"serialization": ["paper", "csv", "concat"]}))
    assert one is not None and one[0] == [""] and one[1] == ["paper", "csv", "concat"] and one[2].shape == (1, 3)
    two = grid_of(summary({"serialization": ["paper", "csv"], "perturbation": ["none", "transpose", "dates"]}))
    assert two is not None and two[0] == ["paper", "csv"] and two[1] == ["none", "transpose", "dates"]
    svg = heatmap(summary({"serialization": ["paper", "csv"], "perturbation": ["none", "transpose"]}), "t")
    assert svg is not None and svg.startswith("<svg") and "1.00 R" in svg and "0.90*" in svg


def test_the_summary_and_the_table_say_what_the_cells_show() -> None:
    s = summary({"serialization": ["paper", "csv"], "perturbation": ["none", "transpose"]})
    text = summary_text(s)
    assert text.startswith("4 cells over serialization (2), perturbation (2). Robustness score (worst cell's "
                           "macro_f1): 0.7000 (serialization=csv, perturbation=transpose); best 1.0000")
    assert "1 of 3 cells differ from it at α = 0.05 after the Holm correction (1000 resamples, seed 0, resampling " \
           "tables)." in text
    table = cells_table(s)
    assert table.rows[0][:4] == ["serialization=paper, perturbation=none", "10", "1.0000", "reference"]
    assert table.rows[1][3:] == ["-0.1000", "[-0.1500, -0.0500]", "n/a", "0.0100", "0.0400", "yes"]
    assert (3, 2) in table.bold  # the worst cell
