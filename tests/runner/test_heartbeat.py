"""A running session's ``progress.json``: rewritten while it runs with its calls in flight and the jobs done of its
total, a last time when it ends; a resumed session counts the jobs settled before it."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from structbench.backends.mock import MockBackend
from structbench.data.datasets import DataContext
from structbench.runfiles.heartbeat import Heartbeat, read_heartbeat
from structbench.runfiles.runconfig import RunConfig
from structbench.runfiles.runformat import PROGRESS
from structbench.runner.run import Run
from structbench.runner.selection import prepare
from toybench import ToyBench  # noqa: F401  (registers ``toy``)


def execute(run_dir: Path, limit: int, latency: float) -> None:
    config = RunConfig(model="slow", benches=["toy"], strategies=["direct"], limit=limit)
    Run(run_dir, config).execute(MockBackend(default="yes", latency=latency), prepare(config, DataContext()),
                                 cache=None, concurrency=2, progress=False)


def test_a_session_beats_while_it_runs_and_once_more_at_its_end(tmp_path: Path) -> None:
    run_dir = tmp_path / "r"
    worker = threading.Thread(target=execute, args=(run_dir, 20, 0.25))
    worker.start()
    seen: list[Heartbeat] = []
    while worker.is_alive():
        beat = read_heartbeat(run_dir)
        if beat is not None and (not seen or beat != seen[-1]):
            seen.append(beat)
        time.sleep(0.1)
    worker.join()
    running = [b for b in seen if not b.ended]
    assert len(running) >= 2 and any(b.calls.in_flight == 2 for b in running)
    assert all(b.total == 20 and b.session == 0 and b.settled_before == 0 for b in seen)
    assert [b.done for b in running] == sorted(b.done for b in running) and 0 < running[-1].done <= 20
    last = read_heartbeat(run_dir)
    assert last is not None and last.ended and last.done == 20 and last.calls.in_flight == 0
    assert last.calls.answered == 20

    execute(run_dir, 20, 0.0)  # resumed: every job settled before it
    again = read_heartbeat(run_dir)
    assert again is not None and (again.session, again.settled_before, again.done, again.total) == (1, 20, 0, 0)


def test_a_damaged_progress_file_reads_as_none(tmp_path: Path) -> None:
    (tmp_path / PROGRESS).write_text("{not json")
    assert read_heartbeat(tmp_path) is None
    (tmp_path / PROGRESS).write_text('{"pid": "x"}')
    assert read_heartbeat(tmp_path) is None
    (tmp_path / PROGRESS).write_text(" " * 70_000)
    assert read_heartbeat(tmp_path) is None
