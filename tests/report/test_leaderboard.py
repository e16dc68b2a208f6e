"""The leaderboard over several models: ranked headlines, paired tests against the best, shared samples."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from structbench.report.compare import compare_runs
from structbench.report.entries import StatsOptions, collect
from structbench.report.leaderboard import leaderboard, leaderboard_section
from structbench.report.runs import BenchmarkCache, load_run

STATS = StatsOptions(resamples=300, seed=0)


@pytest.fixture(scope="module")
def three(toy_runs: tuple[Path, Path], run_factory: Callable[..., Path], tmp_path_factory: pytest.TempPathFactory):
    """weak and strong over the full toy sets, and a third model over the first 20 samples only."""
    root = tmp_path_factory.mktemp("third")
    third = run_factory(root, "third", accuracy=0.65, benches=("toy", "toy:big", "toylabels"),
                        strategies=("direct", "vote"), limit=20)
    return [*toy_runs, third]


def test_ranked_on_the_shared_samples_with_a_paired_test(three: list[Path]) -> None:
    runs = [load_run(p) for p in three]
    views = collect(runs, STATS, BenchmarkCache())
    columns = leaderboard(views, STATS)
    assert columns is not None and len(columns) == 6  # 3 benchmark variants x 2 strategies
    col = next(c for c in columns if c.key == ("toy", "small", "direct"))
    assert col.ranked and "hold different samples" in col.note and "the 20 they share" in col.note
    assert {m: len(c.records) for m, c in col.cells.items()} == {"weak": 20, "strong": 20, "third": 20}
    assert col.cells["strong"].rank == 1 and col.cells["strong"].test is None
    # the test against the best is compare's test on the same pairs
    weak = col.cells["weak"]
    assert weak.test is not None and weak.test.n == 20
    assert weak.value == pytest.approx(sum(r.score for r in weak.records) / 20)
    assert weak.test.delta == pytest.approx(weak.value - col.cells["strong"].value)


def test_same_samples_use_the_entries_and_match_compare(toy_runs: tuple[Path, Path]) -> None:
    runs = [load_run(p) for p in toy_runs]
    views = collect(runs, STATS, BenchmarkCache())
    columns = leaderboard(views, STATS)
    assert columns is not None
    col = next(c for c in columns if c.key == ("toylabels", "small", "direct"))  # macro-F1: re-aggregated
    assert col.note == "" and col.ranked
    strong, weak = col.cells["strong"], col.cells["weak"]
    assert strong.rank == 1 and weak.rank == 2
    key = ("strong", "toylabels", "direct")
    entry = next(v for v in views if (v.result.model, v.result.benchmark, v.strategy) == key)
    assert strong.value == entry.result.metrics["macro_f1"] and strong.interval == entry.interval
    rows = compare_runs(runs[1], runs[0], stats=STATS, benches=BenchmarkCache())  # A = strong, B = weak
    overall = next(r for r in rows if (r.benchmark, r.strategy_a, r.breakdown) == ("toylabels", "direct", "overall"))
    assert weak.test is not None
    assert (weak.test.delta, weak.test.p_randomization, weak.test.p_bootstrap) == pytest.approx(
        (overall.test.delta, overall.test.p_randomization, overall.test.p_bootstrap)
    )


def test_runs_without_shared_samples_are_not_ranked(
    toy_runs: tuple[Path, Path], run_factory: Callable[..., Path], tmp_path: Path
) -> None:
    from report.conftest import noisy_oracle  # type: ignore[import-not-found]
    from structbench.data.datasets import DataContext
    from structbench.runfiles.runconfig import RunConfig
    from structbench.runner.run import Run
    from structbench.runner.selection import prepare

    config = RunConfig(model="reseeded", benches=["toy"], strategies=["direct"], seed=7)
    Run(tmp_path / "reseeded", config).execute(
        noisy_oracle(0.9, "reseeded"), prepare(config, DataContext(offline=True)), cache=None, concurrency=4,
        progress=False,
    )
    runs = [load_run(toy_runs[0]), load_run(tmp_path / "reseeded")]
    views = collect(runs, STATS, BenchmarkCache())
    columns = leaderboard(views, STATS)
    assert columns is not None
    col = next(c for c in columns if c.key == ("toy", "small", "direct"))
    assert not col.ranked and "share no sample" in col.note  # same ids, other questions (another --seed)
    assert all(c.rank is None and c.test is None for c in col.cells.values())


def test_section_lists_models_best_first(three: list[Path]) -> None:
    runs = [load_run(p) for p in three]
    views = collect(runs, STATS, BenchmarkCache())
    section = leaderboard_section(views, STATS)
    assert section is not None and section.title == "Leaderboard"
    table = section.blocks[0]
    assert [r[1] for r in table.rows if r[0]] == ["strong", "third", "weak"]
    baselines = [r for r in table.rows if not r[0]]  # toylabels declares its labels: chance and majority rows
    assert [r[1] for r in baselines] == ["chance", "majority class", "smallest detectable Δ"]
    assert table.rows[0][2] == "1.00 (6 of 6 columns)"
    assert all(("#1" in table.rows[i][j]) for i, j in table.bold)
    assert any("Δ" in cell and "p " in cell for cell in table.rows[1][3:])
    assert leaderboard_section([v for v in views if v.result.model == "weak"], STATS) is None


def test_label_benchmarks_get_baseline_rows(
    run_factory: Callable[..., Path], shared_datasets: Path, tmp_path: Path
) -> None:
    runs = [
        load_run(run_factory(tmp_path, name, accuracy=acc, benches=("scitab",), strategies=("zero_shot",), limit=12,
                             data_dir=shared_datasets))
        for name, acc in (("good", 0.9), ("poor", 0.3))
    ]
    views = collect(runs, STATS, BenchmarkCache())
    section = leaderboard_section(views, STATS)
    assert section is not None
    rows = {r[1]: r for r in section.blocks[0].rows}
    baselines = views[0].result.baselines
    assert set(baselines) == {"chance", "majority"}
    assert rows["chance"][3] == f"{baselines['chance']:.4f}"
    assert rows["majority class"][3] == f"{baselines['majority']:.4f}"


@pytest.mark.parametrize("correction", ["holm", "bh"])
def test_tests_against_the_best_are_corrected_and_ties_marked(
    toy_runs: tuple[Path, Path], run_factory: Callable[..., Path], tmp_path_factory: pytest.TempPathFactory,
    correction: str,
) -> None:
    from structbench.stats.multiple import adjust

    close = run_factory(tmp_path_factory.mktemp("close"), "close", accuracy=0.82, benches=("toy:big",),
                        strategies=("direct",))
    stats = StatsOptions(resamples=300, seed=0, correction=correction)  # type: ignore[arg-type]
    views = collect([load_run(p) for p in (*toy_runs, close)], stats, BenchmarkCache())
    columns = leaderboard(views, stats)
    assert columns is not None
    col = next(c for c in columns if c.key == ("toy", "big", "direct"))  # three models on the same 200 samples
    assert col.note == "" and {m: c.rank for m, c in col.cells.items()}["strong"] == 1
    tested = [c for c in col.cells.values() if c.test is not None]
    raw = [c.test.p_randomization for c in tested if c.test is not None]
    assert len(tested) == 2
    assert [c.adjusted_p for c in tested] == pytest.approx(adjust(raw, correction))  # type: ignore[arg-type]
    assert all(c.adjusted_p is not None and c.adjusted_p >= p for c, p in zip(tested, raw, strict=True))
    for c in tested:
        assert c.detectable == pytest.approx(2.8016 * c.test.se, rel=1e-3)  # type: ignore[union-attr]
    weak, near = col.cells["weak"], col.cells["close"]
    assert not weak.tied and near.tied  # 0.45 is told apart from 0.85; 0.82 is not
    table = leaderboard_section(views, stats).blocks[0]  # type: ignore[union-attr]
    j = 3 + columns.index(col)
    cells = {row[1]: row[j] for row in table.rows}
    assert "≈ best" in cells["close"] and "≈ best" not in cells["weak"] and "adj." in cells["weak"]
    low, high = col.detectable  # type: ignore[misc]
    assert cells["smallest detectable Δ"] in (f"{low:.4f}", f"{low:.4f}–{high:.4f}")


def test_a_tie_on_few_samples_says_why_and_a_model_sharing_no_column_is_not_ranked(
    run_factory: Callable[..., Path], tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """A Δ of -0.75 "≈ best" puzzled: on 4 samples no test tells such models apart, and the cell now says so (with
    the smallest Δ those samples would detect); a model alone in its columns reads "not ranked", not "– (0/1)"."""
    root = tmp_path_factory.mktemp("few")
    good = run_factory(root, "good", accuracy=1.0, benches=("toy",), strategies=("direct",), limit=4)
    poor = run_factory(root, "poor", accuracy=0.25, benches=("toy",), strategies=("direct",), limit=4)
    alone = run_factory(root, "alone", accuracy=0.5, benches=("toylabels",), strategies=("direct",), limit=4)
    views = collect([load_run(p) for p in (good, poor, alone)], STATS, BenchmarkCache())
    section = leaderboard_section(views, STATS)
    assert section is not None
    table = section.blocks[0]
    rows = {row[1]: row for row in table.rows}  # type: ignore[attr-defined]
    column = table.columns.index("toy:small / direct (accuracy)")  # type: ignore[attr-defined]
    cell = rows["poor"][column]
    assert "Δ -0.7500" in cell, cell
    assert cell.endswith("≈ best (too few samples to tell: with 4 samples no p-value can go below 0.125)"), cell
    assert rows["good"][2] == "1.00 (1 of 1 columns)" and rows["alone"][2] == "not ranked: no column shared with " \
        "another model" and rows["alone"][0] == ""


def test_each_run_of_a_model_is_ranked_whatever_the_order(run_factory: Callable[..., Path],
                                                         tmp_path_factory: pytest.TempPathFactory) -> None:
    """Two runs of one model name (other settings, other servers) are two systems: each is ranked under its run's
    name, and the order the runs are given in changes nothing (one of them was dropped, the first one given kept)."""
    low, high = tmp_path_factory.mktemp("low"), tmp_path_factory.mktemp("high")
    twins = [run_factory(low, "twin", accuracy=0.2), run_factory(high, "twin", accuracy=0.9)]
    other = run_factory(tmp_path_factory.mktemp("other"), "other", accuracy=0.6)
    verdicts = []
    for order in ([*twins, other], [twins[1], twins[0], other]):
        views = collect([load_run(p) for p in order], STATS, BenchmarkCache())
        columns = leaderboard(views, STATS)
        assert columns is not None
        cells = next(c for c in columns if c.key == ("toy", "small", "direct")).cells
        names = {f"twin ({low.name}/twin)", f"twin ({high.name}/twin)", "other"}
        assert set(cells) == names
        verdicts.append({m: (c.rank, c.value) for m, c in cells.items()})
    assert verdicts[0] == verdicts[1]
    assert verdicts[0][f"twin ({high.name}/twin)"][0] == 1 and verdicts[0][f"twin ({low.name}/twin)"][0] == 3
