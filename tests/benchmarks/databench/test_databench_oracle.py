"""The oracle scores 1.0 on every variant and strategy of a generated set (``pot`` on the whole tables' variant and one
question of each answer type, see ``PROGRAM_VARIANTS``), run as a user runs it: the CLI, an empty cache,
``--no-cache``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from structbench.benchmarks.databench import DataBench
from structbench.benchmarks.databench.generator import write_set
from structbench.data.datasets import DataContext
from structbench.testing.cli import invoke


@pytest.fixture(scope="module")
def one_dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One dataset of every answer type (the programs of ``pot`` take a second or two each)."""
    root = tmp_path_factory.mktemp("databench-one")
    write_set(root, count=1, rows=40, seed=3)
    return root


PROGRAM_VARIANTS = {"pot": ("databench",)}
"""The variants a strategy whose every answer is a program runs on here, on the first question of each answer type
(``one_of_each_type``): each program starts a sandbox that imports pandas and pyarrow (most of a second of CPU), so
``pot`` runs 5 programs of the whole tables' variant. ``test_databench_program`` runs programs of every answer type
over each variant's table, lite's included, and the oracle's program (the gold as a literal) ignores the table:
lite's, or the other 15 questions', would repeat these programs' rendering with other golds of the same types."""


def one_of_each_type(data_dir: Path) -> list[str]:
    """The ids of the first question of each answer type (boolean, category, number and their lists)."""
    firsts: dict[str, str] = {}
    for sample in DataBench().load("databench", DataContext(data_dir=data_dir, offline=True), seed=0, limit=None):
        firsts.setdefault(sample.task, sample.id)
    assert len(firsts) == 5, firsts
    return list(firsts.values())


@pytest.mark.parametrize("strategy", list(DataBench().strategies()))
def test_the_oracle_scores_one_on_every_variant(strategy: str, one_dataset: Path, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STRUCTBENCH_CACHE", str(tmp_path / "empty-cache"))
    variants = PROGRAM_VARIANTS.get(strategy, DataBench.variants)
    chosen = ["--sample-id", ",".join(one_of_each_type(one_dataset))] if strategy in PROGRAM_VARIANTS else []
    done = invoke("run", "-m", "oracle", "-b", ",".join(f"databench:{v}" for v in variants), "--strategy", strategy,
                  "--data-dir", str(one_dataset), "--no-cache", "--concurrency", "4", "--out", str(tmp_path / "run"),
                  *chosen)
    assert done.returncode == 0, done.stderr
    results = json.loads((tmp_path / "run" / "metrics.json").read_text())["results"]
    assert sorted(r["variant"] for r in results) == sorted(variants)
    for result in results:
        n = 5 if chosen else 20
        assert result["n"] == n and result["errors"] == 0 and result["metrics"]["accuracy"] == 1.0, result
        assert result["metrics"].get("program_error_rate", 0.0) == 0.0
