"""The main results table (the paper's, and the 2024 leaderboard's with the same numbers) as stored, and an oracle
run of its preset on a generated set: every strategy scores 1.0 and fills every column at the maximum, scored the
paper's way, with structbench's corrected row beside it."""

from __future__ import annotations

from pathlib import Path

import pytest

from published_checks import check_shape, value
from structbench.backends.oracle import OracleBackend
from structbench.benchmarks.tablebench.paper import MAIN
from structbench.datasets import DataContext
from structbench.report.entries import StatsOptions, collect
from structbench.report.paper import Filled, fill_tables
from structbench.report.runs import BenchmarkCache, load_run
from structbench.runconfig import RunConfig
from structbench.runner.run import Run
from structbench.runner.selection import prepare

CATEGORIES = ("Fact Checking", "Numerical Reasoning", "Data Analysis", "Visualization", "Overall")


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
    filled = next(f for f in fill_tables(views, [run], stats) if f.table.name == MAIN.name)
    (_, row), = filled.rows
    assert len(row.cells) == 20 and all(isinstance(c, Filled) and c.value == pytest.approx(1.0)
                                        for c in row.cells.values())
    (twin,) = filled.corrected.values()
    assert all(isinstance(c, Filled) and c.value == pytest.approx(1.0) for c in twin.cells.values())
