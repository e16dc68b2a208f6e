"""Backend tests never reach the Hugging Face hub; the embedded model is converted once per session."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ["HF_HUB_OFFLINE"] = "1"  # before huggingface_hub is imported: any download attempt fails


@pytest.fixture(scope="session")
def embedded_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A structbench cache shared by the tests that load the embedded model, with the model converted for
    transformers once per test run: by the first worker process that needs it, while the others wait."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # the run's folder, which every worker's own folder is in
    cache = root / "embedded-cache"
    with open(root / "embedded-cache.lock", "w") as lock, pytest.MonkeyPatch.context() as mp:
        fcntl.flock(lock, fcntl.LOCK_EX)
        mp.setenv("STRUCTBENCH_CACHE", str(cache))
        from structbench.backends.checkpoints import embedded_checkpoint

        embedded_checkpoint()  # the GGUF assembled and converted, or found converted by another worker
    yield cache


@pytest.fixture
def with_embedded(embedded_cache: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point ``STRUCTBENCH_CACHE`` at the shared cache, so the embedded model is assembled and converted once."""
    monkeypatch.setenv("STRUCTBENCH_CACHE", str(embedded_cache))
    return embedded_cache
