"""Fixtures for SciTab tests: the release's records and both variants' samples (default options), and the same
from the synthetic release of ``tests/synthetic/``."""

from __future__ import annotations

import pytest

from structbench.benchmarks.scitab import SciTab
from structbench.benchmarks.scitab.source import DATA_FILE, SOURCE, ClaimRecord, read_claims
from structbench.data.datasets import DataContext
from structbench.data.sample import Sample
from synthetic_releases import synthetic_context


@pytest.fixture(scope="session")
def records(shared_data: DataContext) -> list[ClaimRecord]:
    return read_claims(shared_data.file(SOURCE, DATA_FILE))


@pytest.fixture(scope="session")
def loaded(shared_data: DataContext) -> tuple[SciTab, dict[str, list[Sample]]]:
    """One benchmark instance with both variants loaded (its demonstrations included)."""
    bench = SciTab()
    samples = {v: bench.load(v, shared_data, seed=0, limit=None) for v in SciTab.variants}
    return bench, samples


@pytest.fixture(scope="session")
def synthetic_loaded() -> tuple[SciTab, dict[str, list[Sample]]]:
    """Both variants of the synthetic release (``tests/synthetic/scitab``), for checking prompts to the character."""
    bench = SciTab()
    samples = {v: bench.load(v, synthetic_context(), seed=0, limit=None) for v in SciTab.variants}
    return bench, samples
