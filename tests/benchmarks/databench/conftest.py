"""A DataBench set written by ``structbench generate databench`` (the real release never enters the repository)."""

from __future__ import annotations

from pathlib import Path

import pytest

from structbench.benchmarks.databench.generator import write_set
from structbench.data.datasets import DataContext


@pytest.fixture(scope="session")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A ``--data-dir`` holding ``databench/``: two datasets of 60 rows, 20 questions each."""
    root = tmp_path_factory.mktemp("databench-set")
    write_set(root, count=2, rows=60, seed=0)
    return root


@pytest.fixture
def data(generated: Path) -> DataContext:
    return DataContext(data_dir=generated, offline=True)
