"""The pinned prompts are built from the synthetic releases of ``tests/synthetic/`` (no released data)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from structbench.data.datasets import DataContext
from synthetic_releases import clear_release_caches, describe_synthetic, synthetic_context


@pytest.fixture
def synthetic_data(monkeypatch: pytest.MonkeyPatch) -> Iterator[DataContext]:
    """``tests/synthetic/`` as ``--data-dir``, with the release manifests describing it for this test."""
    describe_synthetic(monkeypatch)
    yield synthetic_context()
    monkeypatch.undo()
    clear_release_caches()
