"""Coverage of the ``--epochs`` interval, simulated through the real stats API.

Usage: python benchmarks/epochs_coverage.py [RUNS] [RESAMPLES]   (default 1000 simulated runs, 1000 resamples).

Each simulated run draws its questions' chances of being right from a Beta distribution (true mean: the Beta's
mean, 0.5 here), answers every question in K epochs (right with its chance, independently), and computes the 95%
interval of accuracy that a run stores (``stats.statistic_interval`` over ``Design.of(..., epochs)``: the mean
over epochs of each epoch's accuracy). Beside it, the reference the docs compare it with: a bootstrap of the
questions' means over their epochs (``stats.mean_interval``, questions independent). Prints, per setting, how
often each interval held the true mean and its mean width. Seeded: the same numbers on every machine.

For a mean score the run's interval is, draw for draw, the questions'-means bootstrap (the same cluster draws),
so the two agree up to rounding (which can tip a bound that lands exactly on 0.5). To measure an older version's
interval (the two-level bootstrap that also redrew each sample's epochs), run this script with that version's
``src`` first on ``PYTHONPATH``.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

import numpy as np

from structbench.stats import Design, MeanStatistic, mean_interval, statistic_interval


@dataclass(frozen=True)
class Setting:
    """Questions with Beta(a, b) chances of being right, each answered ``epochs`` times."""

    questions: int
    epochs: int
    a: float
    b: float

    @property
    def truth(self) -> float:
        return self.a / (self.a + self.b)

    def label(self) -> str:
        return f"Beta({self.a:g},{self.b:g}), {self.questions} questions, {self.epochs} epochs"


SETTINGS = (Setting(60, 3, 2, 2), Setting(40, 2, 5, 5), Setting(60, 5, 0.5, 0.5))


def simulate(setting: Setting, runs: int, resamples: int, seed: int) -> tuple[float, float, float, float]:
    """(coverage, mean width) of the run's interval, then of the questions'-means bootstrap, over ``runs`` runs."""
    rng = np.random.default_rng(seed)
    q, k = setting.questions, setting.epochs
    ids = np.repeat(np.arange(q), k)
    epochs = np.tile(np.arange(k), q)
    design = Design.of("sample", ids, ids, epochs)
    held = np.zeros(2)
    width = np.zeros(2)
    for run in range(runs):
        chance = rng.beta(setting.a, setting.b, q)
        right = (rng.random((q, k)) < chance[:, None]).astype(float)
        ours = statistic_interval(MeanStatistic(right.ravel()), design, resamples=resamples, seed=run)
        means = mean_interval(right.mean(axis=1), resamples=resamples, seed=run)
        for j, iv in enumerate((ours, means)):
            held[j] += iv.low <= setting.truth <= iv.high
            width[j] += iv.high - iv.low
    return held[0] / runs, width[0] / runs, held[1] / runs, width[1] / runs


def main(argv: list[str]) -> None:
    runs = int(argv[0]) if argv else 1000
    resamples = int(argv[1]) if len(argv) > 1 else 1000
    print(f"{runs} runs, {resamples} resamples, 95% intervals")
    print(f"{'setting':<42} {'coverage':>8} {'width':>7} {'q-means cov':>11} {'q-means width':>13} {'wider':>6}")
    for i, setting in enumerate(SETTINGS):
        cov, wid, ref_cov, ref_wid = simulate(setting, runs, resamples, seed=1000 + i)
        print(f"{setting.label():<42} {cov:8.3f} {wid:7.4f} {ref_cov:11.3f} {ref_wid:13.4f} {wid / ref_wid - 1:+6.1%}")


if __name__ == "__main__":
    main(sys.argv[1:])
