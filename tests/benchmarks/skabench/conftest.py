"""Fixtures: instances built from a real RelationalFactQA database (galois/world_1)."""

from __future__ import annotations

import pytest

from structbench.backends.tokens import CountTokens as TokenCounter
from structbench.backends.tokens import token_counter
from structbench.benchmarks.skabench.builder import build_instances
from structbench.benchmarks.skabench.database import Database
from structbench.benchmarks.skabench.sources import load_rfqa_database
from structbench.benchmarks.skabench.testbeds import ContextBuilder
from structbench.benchmarks.skabench.units import Instance
from structbench.data.datasets import DataContext


@pytest.fixture(scope="session")
def world(shared_data: DataContext) -> Database:
    """galois/world_1 (city 4,079 rows, country 239, country_language 984) from ../shared/datasets."""
    return load_rfqa_database("galois/world_1", shared_data)


@pytest.fixture(scope="session")
def world_instances(world: Database) -> list[Instance]:
    """One instance per (table, knowledge type) among 14 generated questions (11 instances)."""
    picked: dict[tuple[str, str], Instance] = {}
    for instance in build_instances(world, 14, seed=3):
        picked.setdefault((instance.meta["table"], instance.knowledge_type), instance)
    return list(picked.values())


@pytest.fixture(scope="session")
def cl100k() -> TokenCounter:
    return token_counter("cl100k")


@pytest.fixture(scope="session")
def builder(cl100k: TokenCounter) -> ContextBuilder:
    """One builder for the session, so unit token counts are cached across tests."""
    return ContextBuilder(cl100k)
