"""The ``structbench`` command as the interop tests run it, and a run's records as they read them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from faults import child_pythonpath
from patience import patience
from structbench.testing.cli import Invocation, invoke

LIMIT = 4
"""Samples per benchmark of the oracle run: every strategy of both benchmarks stays a few seconds."""
SECRET = "sk-interopsecret0123456789abcdef"
"""An OpenAI-style key in the environment of every command these tests run: no file they write may hold it."""


def _env(cwd: Path, env: dict[str, str] | None) -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=child_pythonpath(), STRUCTBENCH_CACHE=str(cwd / "cache"),
                HF_DATASETS_CACHE=str(cwd / "datasets-cache"), OPENAI_API_KEY=SECRET, **(env or {}))


def sb(cwd: Path, *args: str, check: int | None = 0, env: dict[str, str] | None = None
       ) -> subprocess.CompletedProcess[str]:
    """``structbench ARGS`` in a subprocess that imports this checkout (``env`` added to its environment); asserts
    the exit code when ``check``."""
    proc = subprocess.run([sys.executable, "-m", "structbench", *args], capture_output=True, text=True,
                          env=_env(cwd, env), cwd=cwd, timeout=patience(600))
    if check is not None:
        assert proc.returncode == check, proc.stderr + proc.stdout
    return proc


def sb_here(cwd: Path, *args: str, check: int | None = 0, env: dict[str, str] | None = None) -> Invocation:
    """``sb`` in this process (``structbench.testing.cli.invoke``, the same environment): for a command that needs
    no process of its own (``report``, ``convert``), without a new interpreter's seconds of imports."""
    done = invoke(*args, env=_env(cwd, env), cwd=cwd)
    if check is not None:
        assert done.returncode == check, done.stderr + done.stdout
    return done


def run_records(run: Path) -> dict[tuple[Any, ...], dict[str, Any]]:
    """The run's current records (read with the run's own reader) as JSON objects by (benchmark, variant, strategy,
    model, id): the runs of these tests have one epoch."""
    from structbench.runner.store import current_records, read_records

    records = current_records(read_records(run / "samples.jsonl")).values()
    return {(r.benchmark, r.variant, r.strategy, r.model, r.id): r.model_dump(mode="json") for r in records}
