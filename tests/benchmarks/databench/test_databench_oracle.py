"""The oracle scores 1.0 on every variant and strategy of a generated set, run as a user runs it: the CLI, an empty
cache, ``--no-cache``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from structbench.benchmarks.databench import DataBench
from structbench.benchmarks.databench.generator import write_set
from structbench.testing.cli import invoke


@pytest.fixture(scope="module")
def one_dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One dataset of every answer type (the programs of ``pot`` take a second or two each)."""
    root = tmp_path_factory.mktemp("databench-one")
    write_set(root, count=1, rows=40, seed=3)
    return root


@pytest.mark.parametrize("strategy", list(DataBench().strategies()))
def test_the_oracle_scores_one_on_every_variant(strategy: str, one_dataset: Path, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STRUCTBENCH_CACHE", str(tmp_path / "empty-cache"))
    done = invoke("run", "-m", "oracle", "-b", "databench:databench,databench:lite", "--strategy", strategy,
                  "--data-dir", str(one_dataset), "--no-cache", "--concurrency", "4", "--out", str(tmp_path / "run"))
    assert done.returncode == 0, done.stderr
    results = json.loads((tmp_path / "run" / "metrics.json").read_text())["results"]
    assert sorted(r["variant"] for r in results) == ["databench", "lite"]
    for result in results:
        assert result["n"] == 20 and result["errors"] == 0 and result["metrics"]["accuracy"] == 1.0, result
        assert result["metrics"].get("program_error_rate", 0.0) == 0.0
