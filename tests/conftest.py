"""Shared fixtures: where ``../shared/datasets`` is, and whether tests that need it may skip; how the suite is run:
per-test timeouts (pytest-timeout) and worker processes (pytest-xdist)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from patience import load_factor
from structbench.data.datasets import DataContext

REPO = Path(__file__).resolve().parents[1]

os.environ.setdefault("VLLM_CPU_CI_ENV", "1")
"""vLLM's own switch for CPU test runs, inherited by its engine processes and by CLI subprocesses: the model is traced
and run eagerly instead of compiled by inductor, and the warm-up is skipped, which saved about a minute of every
engine start on two cores (the same tokens and log-probabilities on the tiny model). The compiled path is vLLM's."""

os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
"""vLLM's engine in the test process, as vLLM's own tests run it: by default it spawns an engine-core process and a
worker process, each importing vLLM and torch again, for every engine a test starts (the vLLM tests' wall time about
halves). ``tests/cli/test_local_models.py`` keeps the default for its CLI run, the one engine started the way a
user's is. The tests that fork clear what an engine may leave running first (``threads.single_threaded``)."""


def shared_datasets_dir() -> Path:
    """``STRUCTBENCH_SHARED_DATASETS`` or ``<repo>/../shared/datasets``."""
    env = os.environ.get("STRUCTBENCH_SHARED_DATASETS")
    return Path(env) if env else REPO.parent / "shared" / "datasets"


@pytest.fixture(scope="session")
def shared_datasets(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The public-release data beside the repo as one ``--data-dir`` every benchmark reads: links to its releases, and
    a set ``structbench generate`` writes in the release's layout for each benchmark whose release it lacks
    (``generated_releases``: ClaimDB's gigabytes of databases, DataBench ...), written once a session; skips when the
    data is absent unless ``STRUCTBENCH_REQUIRE_SHARED=1``."""
    from generated_releases import datasets_dir

    path = shared_datasets_dir()
    if not path.is_dir():
        if os.environ.get("STRUCTBENCH_REQUIRE_SHARED") == "1":
            pytest.fail(f"{path} is required (STRUCTBENCH_REQUIRE_SHARED=1) but missing")
        pytest.skip(f"{path} not found")
    return datasets_dir(path, tmp_path_factory.mktemp("datasets"))


@pytest.fixture(scope="session")
def shared_data(shared_datasets: Path) -> DataContext:
    """A ``DataContext`` reading ``shared_datasets`` as ``--data-dir``."""
    return DataContext(data_dir=shared_datasets, offline=True)


@pytest.fixture(scope="session")
def every_dataset(shared_datasets: Path) -> Path:
    """``shared_datasets``, by the name the tests that run every benchmark use."""
    return shared_datasets


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Give every test its own empty download and response cache, away from the user's home."""
    monkeypatch.setenv("STRUCTBENCH_CACHE", str(tmp_path / "structbench-cache"))


SLOW_TIMEOUT = 1200
"""Seconds a test marked ``slow`` (a real model, a Ray cluster, a copy of the repository) may take; any other test
gets pyproject.toml's ``timeout``. A test that hangs fails alone, with its stack, instead of stalling the suite."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Slow tests get ``SLOW_TIMEOUT``, the others pyproject.toml's ``timeout``, each stretched by how busy the machine
    is (``patience``: on a loaded machine every test takes longer, and none may fail for it); the files holding slow
    tests run first, so that in parallel the longest work starts at once and the workers finish together."""
    if config.pluginmanager.hasplugin("timeout"):
        factor = load_factor()
        for item in items:
            if not item.get_closest_marker("timeout"):
                base = SLOW_TIMEOUT if item.get_closest_marker("slow") else float(config.getini("timeout") or 300)
                item.add_marker(pytest.mark.timeout(base * factor))
    slow_files = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow_files)  # stable: the order within each group is kept


_REPORTER: list[object] = []
"""The terminal reporter of the process that prints the run (none in an xdist worker)."""


def pytest_sessionstart(session: pytest.Session) -> None:
    try:  # tqdm's monitor thread (a bar of mlflow's, say) would outlive its test, and a run in this process that
        # asks for workers would then find another thread alive and not fork (tests/cli/test_reliability.py)
        import tqdm
    except ImportError:
        pass
    else:
        tqdm.tqdm.monitor_interval = 0
    if not hasattr(session.config, "workerinput"):
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            _REPORTER.append(reporter)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """A failure's name is printed the moment it is known, not only in the summary: a run stopped before its end (a
    CI time limit, a machine too busy to finish) still names every test that failed so far."""
    if report.failed and _REPORTER:
        _REPORTER[0].write_line(f"\nFAILED {report.nodeid} ({report.when})", red=True)  # type: ignore[attr-defined]


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto`` (pyproject.toml's default): one worker per core and one more for the whole suite (``pytest -q``),
    none when the command names what to run (``pytest tests/cli -k name``), where starting workers costs more than it
    saves. Many tests wait rather than compute (a loopback server's latency, a subprocess's start, a killed run's
    resume): on 2 cores the suite's CPU time was about 60 % of two workers' wall time, and a third worker took it from
    20 min 27 s to 16 min 24 s on the same busy machine. ``-n N`` on the command line, or
    ``PYTEST_XDIST_AUTO_NUM_WORKERS``, decides instead."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return int(os.environ["PYTEST_XDIST_AUTO_NUM_WORKERS"])
    if config.args_source != pytest.Config.ArgsSource.TESTPATHS:
        return 0
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return cores + 1


@pytest.fixture(autouse=True)
def _forget_secrets() -> Iterator[None]:
    """Secrets a test registers (``structbench.core.redact``) are forgotten after it, so no test's redaction depends on
    which tests ran before it."""
    from structbench.core import redact

    secrets, blocks = set(redact._secrets), {k: list(v) for k, v in redact._blocks.items()}
    yield
    redact._secrets.clear()
    redact._secrets.update(secrets)
    redact._blocks.clear()
    redact._blocks.update(blocks)
