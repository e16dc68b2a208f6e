"""A run's manifest says how its model-written programs were isolated (scitab's programs of thought, written by the
oracle): the weakest level of every process that ran them, this one's and each forked worker's, in one process or
several; nothing for a run that ran none. The runner's warm-up, before the fork, neither counts nor uses up the
workers' warning."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import structbench
import threads
from faults import child_pythonpath
from patience import patience
from sandbox.modes import degraded_python, degraded_python_or_skip
from structbench.sandbox import probe
from structbench.sandbox import runner as sandbox_runner

pytestmark = pytest.mark.shared


def run_pot(out: Path, data: Path, workers: int, strategy: str = "pot", **options: str) -> dict[str, Any]:
    """Three samples of scitab under ``strategy`` against the oracle; the manifest."""
    threads.single_threaded()  # workers fork only from a process running one thread
    run = structbench.evaluate(model="oracle", bench="scitab", strategy=strategy, limit=3, out=out, progress=False,
                               options=options, workers=workers, data_dir=data, offline=True, no_cache=True,
                               notify=lambda line: None)
    assert not run.failures, run.failures[0].error
    manifest: dict[str, Any] = json.loads((out / "manifest.json").read_text())
    assert manifest["workers"] == workers
    return manifest


@pytest.fixture
def unprivileged_python(monkeypatch: pytest.MonkeyPatch) -> str | None:
    """An interpreter the sandbox can start without namespaces (as root, one an unprivileged uid can read), made the
    sandbox's own: forked workers inherit it. None: the default one can."""
    python = degraded_python_or_skip()
    if python is not None:
        monkeypatch.setattr(sandbox_runner, "interpreter", lambda: python)
    return python


@pytest.mark.filterwarnings("ignore::structbench.sandbox.SandboxWarning")
@pytest.mark.parametrize("workers", [1, 2])
def test_sandbox_off_is_recorded_as_off(tmp_path: Path, shared_datasets: Path, unprivileged_python: str | None,
                                        workers: int) -> None:
    manifest = run_pot(tmp_path / "run", shared_datasets, workers, sandbox="off")
    assert manifest["sandbox"] == {"isolation": "off"}
    assert [s["sandbox"] for s in manifest["sessions"]] == ["off"]


@pytest.mark.parametrize("workers", [1, 2])
def test_namespaces_are_recorded_where_the_kernel_gives_them(tmp_path: Path, shared_datasets: Path,
                                                             workers: int) -> None:
    if not probe().complete:
        pytest.skip(f"namespaces unavailable here: {probe().describe()}")
    manifest = run_pot(tmp_path / "run", shared_datasets, workers, sandbox="require")
    assert manifest["sandbox"] == {"isolation": "namespaces"}


def test_a_run_without_sandboxed_programs_records_nothing(tmp_path: Path, shared_datasets: Path) -> None:
    manifest = run_pot(tmp_path / "run", shared_datasets, 1, strategy="zero_shot")
    assert "sandbox" not in manifest and "sandbox" not in manifest["sessions"][0]


GUARDED_RUN = """
import sys
from pathlib import Path
import structbench
from structbench.sandbox import runner
python, out, data = sys.argv[1:]
if python != "-":
    runner.interpreter = lambda: python
structbench.evaluate(model="oracle", bench="scitab", strategy="pot", limit=3, out=Path(out), progress=False,
                     workers=2, data_dir=data, offline=True, no_cache=True)
"""


def test_namespaces_the_kernel_refuses_are_recorded_as_guard_and_the_workers_warn(
    tmp_path: Path, shared_datasets: Path
) -> None:
    """A machine without namespaces, simulated (as root) by a run without CAP_SYS_ADMIN, over two forked workers."""
    command = [sys.executable, "-c", GUARDED_RUN]
    if probe().complete:
        setpriv = shutil.which("setpriv")
        if os.geteuid() != 0 or setpriv is None:
            pytest.skip("needs root and setpriv to take namespaces away")
        command = [setpriv, "--bounding-set", "-sys_admin", *command]
    python = degraded_python()
    if python is None and os.geteuid() == 0:
        pytest.skip("no interpreter readable by an unprivileged uid for the degraded mode")
    env = dict(os.environ, PYTHONPATH=child_pythonpath(), STRUCTBENCH_CACHE=str(tmp_path / "cache"))
    proc = subprocess.run([*command, python or "-", str(tmp_path / "run"), str(shared_datasets)], env=env,
                          capture_output=True, text=True, timeout=patience(300))
    assert proc.returncode == 0, proc.stderr
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["workers"] == 2 and manifest["sandbox"] == {"isolation": "guard"}
    assert "structbench sandbox: Linux namespaces are unavailable" in proc.stderr  # the warm-up did not silence it
