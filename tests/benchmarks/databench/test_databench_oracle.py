"""The oracle scores 1.0 on every variant and strategy of a generated set (``pot`` on the whole tables' variant, see
``PROGRAM_VARIANTS``), run as a user runs it: the CLI, an empty cache, ``--no-cache``."""

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


PROGRAM_VARIANTS = {"pot": ("databench",)}
"""The variants a strategy whose every answer is a program runs on here: each program starts a sandbox that imports
pandas (a second of CPU), so ``pot`` runs the whole tables' variant only. ``test_databench_program`` runs programs
of every answer type over each variant's table, lite's included, and the oracle's program (the gold as a literal)
ignores the table: lite's 20 would repeat these 20 programs' rendering with other golds of the same types."""


@pytest.mark.parametrize("strategy", list(DataBench().strategies()))
def test_the_oracle_scores_one_on_every_variant(strategy: str, one_dataset: Path, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STRUCTBENCH_CACHE", str(tmp_path / "empty-cache"))
    variants = PROGRAM_VARIANTS.get(strategy, DataBench.variants)
    done = invoke("run", "-m", "oracle", "-b", ",".join(f"databench:{v}" for v in variants), "--strategy", strategy,
                  "--data-dir", str(one_dataset), "--no-cache", "--concurrency", "4", "--out", str(tmp_path / "run"))
    assert done.returncode == 0, done.stderr
    results = json.loads((tmp_path / "run" / "metrics.json").read_text())["results"]
    assert sorted(r["variant"] for r in results) == sorted(variants)
    for result in results:
        assert result["n"] == 20 and result["errors"] == 0 and result["metrics"]["accuracy"] == 1.0, result
        assert result["metrics"].get("program_error_rate", 0.0) == 0.0
