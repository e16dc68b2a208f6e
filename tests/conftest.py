"""Shared fixtures: where ``../shared/datasets`` is, and whether tests that need it may skip."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from structbench.datasets import DataContext

REPO = Path(__file__).resolve().parents[1]


def shared_datasets_dir() -> Path:
    """``STRUCTBENCH_SHARED_DATASETS`` or ``<repo>/../shared/datasets``."""
    env = os.environ.get("STRUCTBENCH_SHARED_DATASETS")
    return Path(env) if env else REPO.parent / "shared" / "datasets"


@pytest.fixture(scope="session")
def shared_datasets() -> Path:
    """The public-release data beside the repo; skips when absent unless ``STRUCTBENCH_REQUIRE_SHARED=1``."""
    path = shared_datasets_dir()
    if not path.is_dir():
        if os.environ.get("STRUCTBENCH_REQUIRE_SHARED") == "1":
            pytest.fail(f"{path} is required (STRUCTBENCH_REQUIRE_SHARED=1) but missing")
        pytest.skip(f"{path} not found")
    return path


@pytest.fixture(scope="session")
def shared_data(shared_datasets: Path) -> DataContext:
    """A ``DataContext`` reading ``../shared/datasets`` as ``--data-dir``."""
    return DataContext(data_dir=shared_datasets, offline=True)


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Give every test its own empty download and response cache, away from the user's home."""
    monkeypatch.setenv("STRUCTBENCH_CACHE", str(tmp_path / "structbench-cache"))


@pytest.fixture(autouse=True)
def _forget_secrets() -> Iterator[None]:
    """Secrets a test registers (``structbench.redact``) are forgotten after it, so no test's redaction depends on
    which tests ran before it."""
    from structbench import redact

    secrets, blocks = set(redact._secrets), {k: list(v) for k, v in redact._blocks.items()}
    yield
    redact._secrets.clear()
    redact._secrets.update(secrets)
    redact._blocks.clear()
    redact._blocks.update(blocks)
