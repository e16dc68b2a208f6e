"""A sandbox that cannot start programs on this machine stops ``structbench run`` at its first sample: exit 2 and one
line saying why, no sample recorded as a harness error (and no tool error handed to the model), the samples finished
before it kept; the same command, once the machine can, finishes the run."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

import threads
from faults import serve
from structbench.sandbox import runner as sandbox_runner
from structbench.testing.cli import Invocation, invoke


def _records(run_dir: Path) -> list[dict[str, Any]]:
    path = run_dir / "samples.jsonl"
    return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []


def _broken(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, after: int = 0) -> str:
    """The sandbox's interpreter, after ``after`` programs of each process, made one that exists and cannot be
    executed (as the unprivileged uid of a root run without namespaces cannot execute one in /root); forked workers
    inherit it. The line the run should end with."""
    python = tmp_path / "python3"
    python.write_text("#!/bin/sh\n")
    python.chmod(0o644)
    real, started = sandbox_runner.interpreter, [0]

    def interpreter() -> str:
        started[0] += 1
        return real() if started[0] <= after else str(python)

    monkeypatch.setattr(sandbox_runner, "interpreter", interpreter)
    return f"error: sandbox: cannot start the interpreter {python}: Permission denied"


def _sb(tmp_path: Path, *args: str) -> Invocation:
    threads.single_threaded()  # (worker processes are forked only from a process running one thread)
    proc = invoke(*args, env=dict(os.environ, STRUCTBENCH_CACHE=str(tmp_path / "cache")), cwd=tmp_path)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


@pytest.mark.parametrize(("workers", "after", "asked"), [(1, 3, 4), (2, 0, 0)])
def test_program_of_thought_stops_at_the_first_failing_sample_and_the_same_command_finishes(
    tmp_path: Path, shared_datasets: Path, monkeypatch: pytest.MonkeyPatch, workers: int, after: int, asked: int
) -> None:
    """One process: the three samples before are kept, the fourth's call is the last; forked workers: the warm-up
    before the fork meets it, so the run stops before any call."""
    with serve(tmp_path, "--reply", "```python\nprint(1)\n```") as server:
        command = ["run", "-m", "openai:x", "--base-url", server.url, "-b", "scitab", "--data-dir",
                   str(shared_datasets), "-s", "pot", "--concurrency", str(workers), "--workers", str(workers),
                   "--limit", "10", "--no-progress", "--out", "r"]
        line = _broken(tmp_path, monkeypatch, after)
        stopped = _sb(tmp_path, *command)
        assert stopped.returncode == 2, stopped.stderr
        assert stopped.stderr.strip().splitlines() == [line]
        assert len(server.answered()) == asked
        kept = _records(tmp_path / "r")
        assert len(kept) == after and all(r["error"] is None for r in kept)  # none a harness error
        assert json.loads((tmp_path / "r" / "manifest.json").read_text())["status"] == "stopped"
        monkeypatch.undo()
        done = _sb(tmp_path, *command)
        answered = server.answered()
    assert done.returncode == 0, done.stderr
    records = _records(tmp_path / "r")
    assert len(records) == 10 and all(r["error"] is None for r in records)
    assert len(answered) == len(set(answered)) == 10  # the stopped run's last call was kept in the cache


def test_a_tool_loop_stops_and_the_model_never_reads_the_sandboxs_failure(
    tmp_path: Path, shared_datasets: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Forked workers (whose warm-up runs no tool: the oracle calls none): the worker that meets it stops them all."""
    with serve(tmp_path, "--tool-model", "--reply", "no tool, no answer",
               "--tool-arguments", json.dumps({"*": {"code": "print(len(t))", "query": "SELECT 1"}})) as server:
        base = ["run", "-m", "openai:x", "--base-url", server.url, "-b", "scitab", "--data-dir", str(shared_datasets),
                "-s", "tools", "--concurrency", "2", "--workers", "2", "--no-progress", "--out", "r", "--limit", "8"]
        line = _broken(tmp_path, monkeypatch)
        stopped = _sb(tmp_path, *base)
        assert stopped.returncode == 2, stopped.stderr
        assert stopped.stderr.strip().splitlines() == [line]
        paid = server.answered()
        assert 0 < len(paid) <= 2  # each worker's first turn: the error never went back to the model as a result
        assert _records(tmp_path / "r") == []
        monkeypatch.undo()
        done = _sb(tmp_path, *base)
        asked = server.answered()
    assert done.returncode == 0, done.stderr
    records = _records(tmp_path / "r")
    assert len(records) == 8 and all(r["error"] is None and r["artifacts"]["tools"]["errors"] == 0 for r in records)
    assert len(asked) == len(set(asked)) == 16  # two turns a sample, the stopped run's first turns not asked again
