"""Run directories for the view's tests, made by the real runner (the toy benchmark, a mock model)."""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from structbench.backends.base import Backend, Request
from structbench.backends.current import current_sample
from structbench.backends.mock import MockBackend
from structbench.data.datasets import DataContext
from structbench.runfiles.runconfig import RunConfig
from structbench.runner.run import Run
from structbench.runner.selection import prepare
from toybench import ToyBench  # noqa: F401  (importing it registers ``toy``)


def half_right(salt: str) -> MockBackend:
    """The oracle's reply for about half of the samples, an empty one for the rest."""

    def reply(request: Request) -> str:
        sample = current_sample.get()
        keep = hashlib.sha256(f"{salt}/{sample.id}".encode()).digest()[0] < 128
        return sample.oracle(request) if keep else ""

    return MockBackend(reply=reply, model=salt)


def make_run(root: Path, name: str, *, backend: Backend | None = None, strategies: tuple[str, ...] = ("direct",),
             limit: int | None = 40, benches: tuple[str, ...] = ("toy",)) -> Path:
    """A finished run directory ``root/name``."""
    config = RunConfig(model=name, benches=list(benches), strategies=list(strategies), limit=limit)
    run_dir = root / name
    Run(run_dir, config).execute(backend or half_right(name), prepare(config, DataContext(offline=True)), cache=None,
                                 concurrency=4, progress=False)
    return run_dir


@pytest.fixture(scope="session")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished run: the toy benchmark (small and big), two strategies, a model right about half the time."""
    return make_run(tmp_path_factory.mktemp("runs"), "half", strategies=("direct", "vote"), limit=None,
                    benches=("toy", "toy:big"))


@pytest.fixture
def copy_run(tmp_path: Path) -> Callable[[Path, str], Path]:
    """A copy of a run directory under this test's folder (to change it)."""

    def copy(run: Path, name: str) -> Path:
        return Path(shutil.copytree(run, tmp_path / "runs" / name))

    return copy
