"""Fixtures for TableBench tests: a set written by ``structbench generate tablebench`` (seed 0) and its samples."""

from __future__ import annotations

from pathlib import Path

import pytest

from structbench.benchmarks.tablebench import TableBench
from structbench.benchmarks.tablebench.generate import write_set
from structbench.data.datasets import DataContext
from structbench.data.sample import Sample


@pytest.fixture(scope="session")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A ``--data-dir`` holding ``tablebench/`` as the generator writes it (seed 0: 25 questions)."""
    root = tmp_path_factory.mktemp("tablebench-set")
    write_set(root, seed=0)
    return root


@pytest.fixture(scope="session")
def samples(generated: Path) -> list[Sample]:
    return list(TableBench().load("test", DataContext(data_dir=generated, offline=True), seed=0, limit=None))

