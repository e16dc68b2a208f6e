"""Statistics of a grid of systems on the same samples (a sweep's cells): the worst cell, the best, the mean, the
spread and the mean absolute deviation, with intervals and a test that account for picking the worst cell.

The worst of K noisy cells sits below the cells' common level even when the model does not depend on the cell at
all (28 cells of one format-independent model: worst 0.565 against a mean of 0.592). So each figure is computed on
every resample of the whole grid, and its interval and test come from those:

- **Grid bootstrap**: the clusters are drawn with replacement once per resample, the same draw for every cell
  (the cells answered the same samples), each cell's metric computed on it, then the figures (the minimum over the
  cells in each resample, not the resampled value of the observed worst cell). The interval is the *basic*
  bootstrap interval ``(2 f - q_hi, 2 f - q_lo)`` of each figure's distribution: the resampled minimum falls below
  the observed one by about as much as the observed one falls below the truth, and the basic interval turns that
  bias around (a percentile interval of the resampled minima would move away from the truth: with five cells of
  one 0.6 model on 80 samples it covered the worst cell's true 0.6 in half the runs, the basic interval in 90 of
  100, and the spread's true 0 in none, the basic in 81). The reflection can leave the figure's range (a worst
  cell of 0.95 got [0.90, 1.025], a spread [-0.025, 0.10]) and, where the observed figure lies outside the middle
  of its resampled values (a spread of 0.02 whose every resample was larger), end short of it ([-0.14, 0.00]); so
  each interval is clipped to its figure's range (``ranges``: the metric's for the worst, best and mean, from 0
  for the spread, the mean absolute deviation and the drop) and, where it still misses its figure, extended to it.
- **Randomization of the cells** (the null hypothesis: the cell does not matter): within every cluster the K cells'
  outcomes are shuffled among the cells at once; the drop (reference cell minus the worst cell) of each shuffle is
  what picking the worst cell gives by chance. ``p = (1 + #{drop* >= drop}) / (R + 1)``, so a format-independent
  model's drop is significant in 5% of runs at alpha 0.05, not in every run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from structbench.stats.bootstrap import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, Statistic, chunk_rows, finite
from structbench.stats.design import Design, Part, cluster_draws, evaluate, mean_of_slots, observed, resampled, width
from structbench.stats.paired import TIE

FIGURES = ("score", "best_value", "mean", "spread", "mad", "drop")
"""The grid's figures: the worst cell's metric (the robustness score), the best's, their mean, best minus worst,
the mean absolute deviation from the mean, and the reference cell minus the worst."""


@dataclass(frozen=True)
class GridDesign:
    """K cells' outcomes in one pool (cell 0's first), their clusters coded alike."""

    cells: tuple[Design, ...]

    def __post_init__(self) -> None:
        if len({d.clusters for d in self.cells}) > 1:
            raise ValueError("every cell of a grid must code the same clusters")

    @property
    def pool(self) -> int:
        return sum(d.n for d in self.cells)

    @property
    def clusters(self) -> int:
        return self.cells[0].clusters

    def parts(self) -> list[Part]:
        offsets = np.cumsum([0, *(d.n for d in self.cells)])
        return [Part(d, int(o)) for d, o in zip(self.cells, offsets, strict=False)]


def figures(values: np.ndarray, reference: int) -> dict[str, np.ndarray]:
    """Each figure of grids whose cells have ``values`` (rows, K): one value a row."""
    mean = values.mean(axis=1)
    worst = values.min(axis=1)
    best = values.max(axis=1)
    return {"score": worst, "best_value": best, "mean": mean, "spread": best - worst,
            "mad": np.abs(values - mean[:, None]).mean(axis=1), "drop": values[:, reference] - worst}


@dataclass(frozen=True)
class GridFigures:
    """The grid's figures, their basic bootstrap intervals (within each figure's range, around the figure) and the
    randomization test of the drop."""

    observed: dict[str, float]
    cells: tuple[float, ...]
    """Each cell's metric on the shared samples (the figures' inputs), in the design's order."""
    intervals: dict[str, tuple[float, float]]
    p_drop: float
    resamples: int
    seed: int
    confidence: float


def ranges(bounds: tuple[float, float]) -> dict[str, tuple[float, float]]:
    """The values each figure can take when the metric lies within ``bounds``."""
    low, high = bounds
    span = high - low
    return {"score": bounds, "best_value": bounds, "mean": bounds, "spread": (0.0, span), "mad": (0.0, span / 2),
            "drop": (0.0, span)}


def _basic(dist: np.ndarray, value: float, confidence: float, within: tuple[float, float]) -> tuple[float, float]:
    """The basic bootstrap interval of ``value``, clipped to ``within`` and extended to ``value`` where it ends
    short of it."""
    values = finite(dist)
    if len(values) == 0 or not np.isfinite(value):
        return float("nan"), float("nan")
    tail = (1 - confidence) / 2
    q_low, q_high = np.quantile(values, [tail, 1 - tail])
    low = min(max(2 * value - q_high, within[0]), value)
    high = max(min(2 * value - q_low, within[1]), value)
    return float(low), float(high)


def grid_bootstrap(stat: Statistic, design: GridDesign, *, resamples: int, seed: int) -> np.ndarray:
    """(resamples, K): every cell's metric on each grid resample (one cluster draw for all cells)."""
    rng = np.random.default_rng(seed)
    parts = design.parts()
    out = []
    for counts in cluster_draws(rng, design.clusters, resamples, width(stat, list(design.cells))):
        out.append(np.column_stack([resampled(stat, design.pool, part, counts) for part in parts]))
    return np.vstack(out)


def _shuffled(stat: Statistic, design: GridDesign, perm: np.ndarray) -> np.ndarray:
    """(rows, K): the metric of each cell rebuilt from the cells ``perm`` (rows, clusters, K) assigns it in every
    cluster, averaged over the epochs the cells have."""
    parts = design.parts()
    k = len(parts)
    out = np.empty((perm.shape[0], k))
    repeated = any(d.repeated for d in design.cells)
    epochs = sorted({e for d in design.cells for e in d.epochs})
    for j in range(k):
        weights = [(parts[i], (perm[:, :, j] == i).astype(float)) for i in range(k)]
        if not repeated:
            out[:, j] = evaluate(stat, design.pool, clusters=weights)
            continue
        slots = []
        for epoch in epochs:
            by_outcome = [(part, part.in_epoch(w, epoch)) for part, w in weights]
            value = evaluate(stat, design.pool, outcomes=by_outcome)
            present = sum(w.sum(axis=1) for _, w in by_outcome) > 0
            slots.append(np.where(present, value, np.nan))
        out[:, j] = mean_of_slots(slots)
    return out


def grid_randomization(stat: Statistic, design: GridDesign, *, rounds: int, seed: int) -> np.ndarray:
    """(rounds, K): every cell's metric after shuffling the cells' outcomes within each cluster."""
    rng = np.random.default_rng(seed)
    k = len(design.cells)
    rows = chunk_rows(max(design.clusters * k, width(stat, list(design.cells))))
    out = []
    for start in range(0, rounds, rows):
        r = min(rows, rounds - start)
        perm = rng.permuted(np.broadcast_to(np.arange(k), (r, design.clusters, k)), axis=2)
        out.append(_shuffled(stat, design, perm))
    return np.vstack(out)


def grid_figures(
    stat: Statistic,
    design: GridDesign,
    reference: int,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    confidence: float = DEFAULT_CONFIDENCE,
    bounds: tuple[float, float] = (0.0, 1.0),
) -> GridFigures:
    """The figures of ``design``'s cells on their shared samples, their intervals and the drop's p-value;
    ``bounds``: the range of the metric (every headline's is [0, 1])."""
    if len(design.cells) < 2 or design.cells[0].samples < 1:
        raise ValueError("a grid needs two cells and a shared sample")
    parts = design.parts()
    values = np.array([[observed(stat, design.pool, part) for part in parts]])
    seen = {name: float(v[0]) for name, v in figures(values, reference).items()}
    boot = figures(grid_bootstrap(stat, design, resamples=resamples, seed=seed), reference)
    shuffled = figures(grid_randomization(stat, design, rounds=resamples, seed=seed), reference)["drop"]
    drops = finite(shuffled)
    p = float((1 + np.sum(drops >= seen["drop"] - TIE)) / (len(drops) + 1)) if np.isfinite(seen["drop"]) else \
        float("nan")
    return GridFigures(
        observed=seen,
        cells=tuple(float(v) for v in values[0]),
        intervals={name: _basic(boot[name], seen[name], confidence, ranges(bounds)[name]) for name in FIGURES},
        p_drop=p,
        resamples=resamples,
        seed=seed,
        confidence=confidence,
    )


def designs_of(pool_design: Design, sizes: Sequence[int]) -> GridDesign:
    """A pool's design cut into K cells of ``sizes`` outcomes (in pool order), clusters coded alike."""
    cells = []
    start = 0
    for n in sizes:
        cut = slice(start, start + n)
        cells.append(Design(pool_design.unit, pool_design.cluster[cut], pool_design.sample[cut],
                            pool_design.epoch[cut], pool_design.clusters, pool_design.samples))
        start += n
    return GridDesign(tuple(cells))
