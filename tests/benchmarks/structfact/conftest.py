"""Fixtures for StructFact tests: the public demo samples."""

from __future__ import annotations

import pytest

from structbench.benchmarks.structfact import StructFact
from structbench.data.datasets import DataContext
from structbench.data.sample import Sample


@pytest.fixture(scope="session")
def demo(shared_data: DataContext) -> list[Sample]:
    """The 25 demo samples (default options, seed 0)."""
    return StructFact().load("demo", shared_data, seed=0, limit=None)
