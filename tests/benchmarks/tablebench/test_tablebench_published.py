"""The main results table (the paper's, and the 2024 leaderboard's with the same numbers) and the two tables of the
leaderboard of April 2025 as stored, and oracle runs of their presets on a generated set: every strategy scores 1.0
and fills every column at the maximum, scored the paper's (or the released) way, with structbench's corrected row
beside it; a run scored otherwise does not fill the leaderboard's tables."""

from __future__ import annotations

from pathlib import Path

import pytest

from published_checks import check_shape, value, values
from structbench.backends.oracle import OracleBackend
from structbench.benchmarks.tablebench.paper import LEADERBOARD_METHODS, LEADERBOARD_MODELS, MAIN
from structbench.data.datasets import DataContext
from structbench.report.entries import StatsOptions, collect
from structbench.report.paper import Filled, fill_tables
from structbench.report.runs import BenchmarkCache, load_run
from structbench.runfiles.runconfig import RunConfig
from structbench.runner.run import Run
from structbench.runner.selection import prepare

CATEGORIES = ("Fact Checking", "Numerical Reasoning", "Data Analysis", "Visualization", "Overall")
LEADERBOARD_LIMIT = 14
"""The leaderboard preset's oracle run takes the generated set's first 14 questions (of 25): every category, three
charts. Each of its programs runs twice (the released way and isolated) in a sandbox that imports pandas and
matplotlib, seconds of CPU each; the main preset's run keeps all 25, every chart type."""


def test_the_table_as_published() -> None:
    columns = [f"{c} {t}" + ("@1" if c == "Visualization" or t == "PoT" else "")
               for c in CATEGORIES for t in ("DP", "TCoT", "SCoT", "PoT")]
    data = MAIN.published
    rows = [r.name for r in data.rows]
    assert rows[0] == "Human" and len(rows) == 41 and "CodeLlama-70b-Instruct" in rows
    check_shape(MAIN, rows, columns)
    assert value(data, "GPT-4o", "fc_dp") == 74.29 and value(data, "GPT-4o", "overall_tcot") == 50.39
    assert value(data, "Llama2-7B-Chat", "da_scot") == 12.49 and value(data, "Human", "overall_pot") == 85.91
    assert value(data, "TableLLM-Qwen2-7B", "viz_pot") == 26.0


@pytest.mark.slow
def test_an_oracle_run_of_the_preset_fills_the_table(generated: Path, tmp_path: Path) -> None:
    preset = MAIN.preset
    config = RunConfig(model="oracle", benches=list(preset.benches), strategies=list(preset.strategies),
                       options=dict(preset.options), data_dir=str(generated))
    Run(tmp_path, config).execute(OracleBackend(), prepare(config, DataContext(data_dir=generated, offline=True)),
                                  cache=None, concurrency=4, progress=False)
    run = load_run(tmp_path)
    stats = StatsOptions(resamples=20)
    views = collect([run], stats, BenchmarkCache())
    assert {v.strategy: v.result.metrics["overall"] for v in views} == {s: 1.0 for s in ("dp", "tcot", "scot", "pot")}
    assert all(v.result.metrics["execution_rate"] == 1.0 and v.result.n == 25 for v in views)
    tables = fill_tables(views, [run], stats)
    assert {f.table.name for f in tables} == {MAIN.name}  # the leaderboard's tables need scorer=released
    filled = next(f for f in tables if f.table.name == MAIN.name)
    (_, row), = filled.rows
    assert len(row.cells) == 20 and all(isinstance(c, Filled) and c.value == pytest.approx(1.0)
                                        for c in row.cells.values())
    (twin,) = filled.corrected.values()
    assert all(isinstance(c, Filled) and c.value == pytest.approx(1.0) for c in twin.cells.values())


def test_the_leaderboard_as_published() -> None:
    methods = check_shape(LEADERBOARD_METHODS, [r.name for r in LEADERBOARD_METHODS.published.rows],
                          ["FC", "NR", "DA", "VIZ", "Overall"]).rows
    models = check_shape(LEADERBOARD_MODELS, [r.name for r in LEADERBOARD_MODELS.published.rows],
                         ["DP", "TCoT", "SCoT", "PoT"])
    assert [r.name for r in methods[:3]] == ["Human Performance", "RankAgent", "o3-mini-2025-01-31 + DP"]
    assert len(methods) == 30 and len(models.rows) == 28
    assert values(LEADERBOARD_METHODS.published, "GPT-4o + TCoT") == {
        "fc": 81.25, "nr": 68.51, "da": 32.09, "viz": 56.0, "overall": 51.96}
    assert values(models, "GPT-4o") == {"dp": 40.91, "tcot": 51.96, "scot": 41.43, "pot": 45.71}
    assert values(models, "Grok4") == {"dp": 57.8, "tcot": None, "scot": None, "pot": None}
    aliases = {"Llama3-70B-Chat": "Llama3-70B-Instruct", "Llama3-8B-Chat": "Llama3-8B-Instruct",
               "Mixtral-8x7B-Instruct": "Mixtral-8x7B-Instruct-v0.1", "Mistral-7B-Instruct": "Mistral-7B-Instruct-v0.2"}
    for row in methods[2:]:
        fc, nr, da, viz, overall = row.values
        assert fc is not None and nr is not None and da is not None and viz is not None and overall is not None
        # the released Mix over the cleaned release's 96 / 397 / 343 / 50 questions, a chart counted at 1/100
        assert (96 * fc + 397 * nr + 343 * da + 50 * viz / 100) / 886 == pytest.approx(overall, abs=0.03), row.name
        # the methods table shows each model under its best instruction type of the models table
        by_type = values(models, aliases.get(row.model, row.model))
        assert by_type[row.setting["instruction"].lower()] == overall == max(v for v in by_type.values() if v)


@pytest.mark.slow
def test_an_oracle_run_of_the_leaderboard_preset_fills_both_tables(generated: Path, tmp_path: Path) -> None:
    """The oracle answers every question; the released Mix counts a chart at 1/100, so its Overall is the share of
    questions that are no chart plus 1/100 of the charts' (structbench's corrected row: 1.0)."""
    preset = LEADERBOARD_METHODS.preset
    assert preset.options == LEADERBOARD_MODELS.preset.options == {"scorer": "released"}
    config = RunConfig(model="oracle", benches=list(preset.benches), strategies=list(preset.strategies),
                       options=dict(preset.options), data_dir=str(generated), limit=LEADERBOARD_LIMIT)
    Run(tmp_path, config).execute(OracleBackend(), prepare(config, DataContext(data_dir=generated, offline=True)),
                                  cache=None, concurrency=4, progress=False)
    run = load_run(tmp_path)
    stats = StatsOptions(resamples=20)
    views = collect([run], stats, BenchmarkCache())
    charts = sum(r.task == "Visualization" for r in views[0].scored_records)
    n = views[0].result.n
    released_max = (n - charts + charts / 100) / n
    assert 0 < charts < n == LEADERBOARD_LIMIT
    assert len({r.task for r in views[0].scored_records}) == 4  # every category the tables have a column for
    filled = {f.table.name: f for f in fill_tables(views, [run], stats)}
    methods, models = filled[LEADERBOARD_METHODS.name], filled[LEADERBOARD_MODELS.name]
    assert [row.label for _, row in methods.rows] == [f"oracle + {t}" for t in ("DP", "TCoT", "SCoT", "PoT")]
    for _, row in methods.rows:
        got = {k: c.value for k, c in row.cells.items() if isinstance(c, Filled)}
        assert got == pytest.approx({"fc": 1.0, "nr": 1.0, "da": 1.0, "viz": 1.0, "overall": released_max})
    (_, row), = models.rows
    assert {k: c.value for k, c in row.cells.items() if isinstance(c, Filled)} == pytest.approx(
        dict.fromkeys(("dp", "tcot", "scot", "pot"), released_max))
    for table in (methods, models):
        assert len(table.corrected) == len(table.rows)
        assert all(isinstance(c, Filled) and c.value == pytest.approx(1.0)
                   for twin in table.corrected.values() for c in twin.cells.values())
    # the main results table is filled from this run too (its ROUGE-L and Pass@1 columns do not depend on the Mix)
    assert MAIN.name in filled
