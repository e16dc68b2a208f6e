"""Backend tests never reach the Hugging Face hub; the embedded model is converted once per session."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ["HF_HUB_OFFLINE"] = "1"  # before huggingface_hub is imported: any download attempt fails


@pytest.fixture(scope="session")
def embedded_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A structbench cache shared by the tests that load the embedded model (converted on first use)."""
    return tmp_path_factory.mktemp("embedded-cache")


@pytest.fixture
def with_embedded(embedded_cache: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point ``STRUCTBENCH_CACHE`` at the shared cache, so the embedded model is assembled and converted once."""
    monkeypatch.setenv("STRUCTBENCH_CACHE", str(embedded_cache))
    return embedded_cache
