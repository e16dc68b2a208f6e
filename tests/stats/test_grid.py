"""A grid of cells on the same samples (a sweep): the worst cell's interval and the drop's test account for picking
the worst of many noisy cells, so a model the cells do not affect shows no significant drop."""

from __future__ import annotations

import numpy as np

from structbench.stats import MeanStatistic
from structbench.stats.design import Design
from structbench.stats.grid import GridDesign, designs_of, figures, grid_figures


def grid(outcomes: np.ndarray, clusters: np.ndarray | None = None) -> tuple[MeanStatistic, GridDesign]:
    """(K, N) 0/1 outcomes of K cells on N samples (each its own cluster unless ``clusters``) as a pooled grid."""
    k, n = outcomes.shape
    keys = np.tile(np.arange(n) if clusters is None else clusters, k)
    design = Design.of("table" if clusters is not None else "sample", keys, np.tile(np.arange(n), k))
    return MeanStatistic(outcomes.reshape(-1).astype(float)), designs_of(design, [n] * k)


def test_a_model_the_cells_do_not_affect_has_no_significant_drop() -> None:
    """28 cells of one model, every answer right with probability 0.59 whatever the cell: the worst cell reads well
    below 0.59, its resampled minimum lower still; the basic interval of the worst cell covers 0.59 and the drop is
    not significant (it is what picking the worst of 28 gives)."""
    rng = np.random.default_rng(7)
    outcomes = rng.random((28, 600)) < 0.59
    stat, design = grid(outcomes)
    found = grid_figures(stat, design, reference=0, resamples=400, seed=0)
    assert found.observed["score"] < found.observed["mean"] - 0.02  # the worst of 28 noisy cells
    low, high = found.intervals["score"]
    assert low < 0.59 < high
    assert found.p_drop > 0.05
    assert found.intervals["mean"][0] < 0.59 < found.intervals["mean"][1]


def test_a_cell_that_does_hurt_is_found() -> None:
    """The same model but one cell right only 45% of the time: its drop is significant and the worst cell's
    interval sits below the others' level."""
    rng = np.random.default_rng(7)
    outcomes = rng.random((28, 600)) < 0.59
    outcomes[5] = rng.random(600) < 0.45
    stat, design = grid(outcomes)
    found = grid_figures(stat, design, reference=0, resamples=400, seed=0)
    assert found.p_drop < 0.05
    assert found.intervals["score"][1] < 0.55
    assert found.observed["drop"] == found.observed["mean"] * 0 + outcomes[0].mean() - outcomes[5].mean()


def test_clusters_are_resampled_and_shuffled_together() -> None:
    """Samples sharing a table move together: with 20 tables of 30 near-identical questions, the intervals are
    those of 20 units (wider than 600 independent samples would give)."""
    rng = np.random.default_rng(3)
    level = rng.random(20)  # each table's difficulty, shared by its questions in every cell
    per_sample = np.repeat(level, 30)
    outcomes = rng.random((6, 600)) < per_sample[None, :]
    clustered = grid(outcomes, np.repeat(np.arange(20), 30))
    flat = grid(outcomes)
    wide = grid_figures(*clustered, reference=0, resamples=300, seed=1).intervals["mean"]
    narrow = grid_figures(*flat, reference=0, resamples=300, seed=1).intervals["mean"]
    assert wide[1] - wide[0] > 2 * (narrow[1] - narrow[0])


def test_figures_of_a_row() -> None:
    out = figures(np.array([[0.5, 0.7, 0.6]]), reference=1)
    assert {k: round(float(v[0]), 6) for k, v in out.items()} == {
        "score": 0.5, "best_value": 0.7, "mean": 0.6, "spread": 0.2, "mad": round(0.2 / 3, 6), "drop": 0.2}


def test_every_interval_lies_in_its_figures_range_and_holds_the_figure() -> None:
    """The basic interval reflects the resampled figures about the observed one: near the ceiling it passed 1 (four
    cells right on 38 to 40 of 40 samples: the worst cell [0.90, 1.025]) and below 0 for the spread, and where every
    resampled spread exceeded a small observed one it ended below it ([-0.14, 0.00] for 0.02). Clipped to the range
    and extended to the figure, neither happens."""
    near = np.ones((4, 40))
    near[0, 0] = near[1, :2] = near[2, 5] = 0
    rng = np.random.default_rng(0)
    grids = [near] + [rng.random((5, 50)) < 0.9 for _ in range(120)]
    floor = {"spread": 0.0, "mad": 0.0, "drop": 0.0}
    for outcomes in grids:
        found = grid_figures(*grid(outcomes), reference=0, resamples=300, seed=0)
        for name, (low, high) in found.intervals.items():
            assert floor.get(name, 0.0) <= low <= found.observed[name] <= high <= 1.0, (name, low, high)
    ceiling = grid_figures(*grid(near), reference=0, resamples=300, seed=0)
    assert ceiling.intervals["score"][1] == 1.0 and ceiling.intervals["spread"][0] == 0.0
