"""Shared fixtures: where ``../shared/datasets`` is, and whether tests that need it may skip; how the suite is run:
per-test timeouts (pytest-timeout) and worker processes (pytest-xdist)."""

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


@pytest.fixture(scope="session")
def every_dataset(shared_datasets: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A ``--data-dir`` every benchmark reads: ``../shared/datasets``, and a generated set in its release's layout for
    each benchmark whose release it lacks (``generated_releases``)."""
    from generated_releases import datasets_dir

    return datasets_dir(shared_datasets, tmp_path_factory.mktemp("datasets"))


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Give every test its own empty download and response cache, away from the user's home."""
    monkeypatch.setenv("STRUCTBENCH_CACHE", str(tmp_path / "structbench-cache"))


SLOW_TIMEOUT = 1200
"""Seconds a test marked ``slow`` (a real model, a Ray cluster, a copy of the repository) may take; any other test
gets pyproject.toml's ``timeout``. A test that hangs fails alone, with its stack, instead of stalling the suite."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Slow tests get ``SLOW_TIMEOUT``; the files holding them run first, so that in parallel the longest work
    starts at once and the workers finish together."""
    if config.pluginmanager.hasplugin("timeout"):
        for item in items:
            if item.get_closest_marker("slow") and not item.get_closest_marker("timeout"):
                item.add_marker(pytest.mark.timeout(SLOW_TIMEOUT))
    slow_files = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow_files)  # stable: the order within each group is kept


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto`` (pyproject.toml's default): one worker per core for the whole suite (``pytest -q``), none when
    the command names what to run (``pytest tests/cli -k name``), where starting workers costs more than it saves.
    ``-n N`` on the command line, or ``PYTEST_XDIST_AUTO_NUM_WORKERS``, decides instead."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return int(os.environ["PYTEST_XDIST_AUTO_NUM_WORKERS"])
    if config.args_source != pytest.Config.ArgsSource.TESTPATHS:
        return 0
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


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
