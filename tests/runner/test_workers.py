"""Worker processes through the runner's API: the same records and metrics as one process, each once."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import threading
import warnings
from pathlib import Path
from typing import Any

import pytest

import threads
from structbench.backends.mock import MockBackend
from structbench.backends.oracle import OracleBackend
from structbench.core.errors import LoggedWarning, MachineError, RunStoppedError
from structbench.data.datasets import DataContext
from structbench.runfiles.runconfig import RunConfig
from structbench.runner import selection
from structbench.runner import workers as processes
from structbench.runner.cache import ResponseCache
from structbench.runner.control import RunControl
from structbench.runner.notes import notes_from_logs
from structbench.runner.run import Run
from structbench.runner.selection import prepare
from structbench.runner.workers import split, worker_count
from toybench import ToyBench  # noqa: F401  (registers the toy benchmark)


@pytest.fixture(autouse=True)
def single_threaded() -> None:
    """Workers are only forked from a process running no other thread (``threads.single_threaded``)."""
    threads.single_threaded()


def _config(**kw: object) -> RunConfig:
    base: dict[str, object] = {"model": "mock", "benches": ["toy:big"], "strategies": ["all"], "limit": 60}
    base.update(kw)
    return RunConfig.model_validate(base)


def _lines(run_dir: Path) -> list[dict[str, Any]]:
    rows = [json.loads(x) for x in (run_dir / "samples.jsonl").read_text().splitlines()]
    for row in rows:
        row.pop("seconds")
    return sorted(rows, key=lambda r: (r["strategy"], r["id"]))


def _run(run_dir: Path, backend: Any, config: RunConfig, workers: int, **kw: Any) -> Any:
    selections = prepare(config, DataContext())
    return Run(run_dir, config).execute(backend, selections, cache=kw.pop("cache", None), concurrency=8,
                                        progress=False, workers=workers, **kw)


@pytest.mark.parametrize("workers", [2, 5])
def test_workers_write_what_one_process_writes(tmp_path: Path, workers: int) -> None:
    config = _config()
    one = _run(tmp_path / "one", MockBackend(default="The answer is yes."), config, 1)
    many = _run(tmp_path / "many", MockBackend(default="The answer is yes."), config, workers)
    assert many == one
    assert _lines(tmp_path / "many") == _lines(tmp_path / "one")
    assert len(_lines(tmp_path / "many")) == 60 * 3  # every sample under every strategy, each once
    manifest = json.loads((tmp_path / "many" / "manifest.json").read_text())
    assert manifest["workers"] == workers and manifest["status"] == "complete"
    assert manifest["sessions"][0]["model_calls"] == 60 * 4  # direct 1, vote 1 (n=3), refine 2 per sample


@pytest.mark.parametrize("held", [True, False])
def test_jobs_go_to_workers_without_the_samples_they_hold(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          held: bool) -> None:
    sent: list[tuple[Any, ...]] = []
    encode = processes.encode

    def spied(message: tuple[Any, ...]) -> bytes:
        if message[0] == "jobs":
            sent.extend(message[1])
        return encode(message)

    monkeypatch.setattr(processes, "encode", spied)
    if not held:  # a stream too large to hold: each sample travels with its jobs
        monkeypatch.setattr(selection, "HOLD_FOR_WORKERS_BYTES", 0)
    config = _config()
    one = _run(tmp_path / "one", MockBackend(default="The answer is yes."), config, 1)
    many = _run(tmp_path / "many", MockBackend(default="The answer is yes."), config, 2)
    assert many == one and _lines(tmp_path / "many") == _lines(tmp_path / "one")
    assert len(sent) == 60 * 3
    assert all((sample is None) == held for _, sample in sent)


def test_the_oracle_through_workers_reaches_the_maximum(tmp_path: Path) -> None:
    metrics = _run(tmp_path / "r", OracleBackend(), _config(model="oracle"), 3)
    assert [r.headline.value for r in metrics.results] == [1.0, 1.0, 1.0]


def test_workers_share_the_cache_and_resume_repeats_nothing(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "cache.sqlite")
    config = _config(strategies=["refine"])
    selections = prepare(config, DataContext())
    half = [s.__class__(s.bench, s.variant, list(s.samples)[:30], s.strategies) for s in selections]
    Run(tmp_path / "r", config).execute(MockBackend(default="no"), half, cache=cache, concurrency=8,
                                        progress=False, workers=3)
    check = ResponseCache(tmp_path / "cache.sqlite")
    assert check.count() == 60  # two turns per sample, committed by the workers
    check.close()
    second, cache = MockBackend(default="no"), ResponseCache(tmp_path / "cache.sqlite")
    metrics = Run(tmp_path / "r", config).execute(second, selections, cache=cache, concurrency=8, progress=False,
                                                  workers=1)
    cache.close()
    assert len(second.calls) == 60  # only the 30 new samples
    assert metrics.results[0].n == 60
    threads.single_threaded()
    again = Run(tmp_path / "again", config).execute(MockBackend(default="no"), selections,
                                                    cache=ResponseCache(tmp_path / "cache.sqlite"), concurrency=8,
                                                    progress=False, workers=2)
    manifest = json.loads((tmp_path / "again" / "manifest.json").read_text())
    assert manifest["workers"] == 2
    assert manifest["sessions"][0]["model_calls"] == 0 and manifest["sessions"][0]["cache_hits"] == 120
    assert [r.model_copy(update={"usage": None}) for r in again.results] == \
        [r.model_copy(update={"usage": None}) for r in metrics.results]
    # the same answers, every one of them from the cache: no call made, 120 reused
    assert metrics.usage is not None and again.usage is not None
    assert (again.usage.usage.calls, again.usage.reused.calls) == (0, 120)
    assert metrics.usage.usage.calls + metrics.usage.reused.calls == 120


def test_the_breaker_in_one_worker_stops_them_all(tmp_path: Path) -> None:
    from structbench.backends.base import BackendError, Request

    def down(request: Request) -> str:
        raise BackendError("service unavailable", cause="HTTP 503")

    with pytest.raises(RunStoppedError, match="the last 10 model calls all failed"):
        _run(tmp_path / "r", MockBackend(reply=down), _config(limit=200, strategies=["direct"]), 2,
             control=RunControl(max_consecutive_failures=10))
    manifest = json.loads((tmp_path / "r" / "manifest.json").read_text())
    assert manifest["status"] == "stopped" and not (tmp_path / "r" / "metrics.json").exists()
    assert len(_lines(tmp_path / "r")) < 60  # the other worker stopped too, long before the 200


_BROKEN_AFTER = 4


def _machine_breaks(request: Any, calls: list[int] = []) -> str:  # noqa: B006  (each worker process counts its own)
    calls.append(1)
    if len(calls) > _BROKEN_AFTER:
        raise MachineError("sandbox: cannot start the interpreter /x/python: Permission denied")
    return "The answer is yes."


def test_a_machine_error_in_one_worker_stops_them_all_with_no_harness_error(tmp_path: Path) -> None:
    """The worker that meets it passes the stop to the driver (``halt_kind`` ``machine``), which raises it as itself
    (exit 2); the samples it hit are not recorded, so the same run, on a machine that can, finishes them."""
    config = _config(strategies=["direct"], limit=200)
    with pytest.raises(MachineError, match="cannot start the interpreter /x/python"):
        _run(tmp_path / "r", MockBackend(reply=_machine_breaks), config, 2)
    manifest = json.loads((tmp_path / "r" / "manifest.json").read_text())
    assert manifest["status"] == "stopped" and not (tmp_path / "r" / "metrics.json").exists()
    stopped = _lines(tmp_path / "r")
    assert 0 < len(stopped) <= 2 * _BROKEN_AFTER and all(r["error"] is None for r in stopped)
    again = _run(tmp_path / "r", MockBackend(default="The answer is yes."), config, 2)
    assert again.results[0].n == 200 and again.results[0].harness_errors == 0


def _warns(request: Any, warned: set[int] = set()) -> str:  # noqa: B006  (each worker process has its own)
    """A reply that, as the sandbox does for weaker isolation, logs a warning once a process (here from a thread, as
    a tool's program runs) and raises it as a ``LoggedWarning``."""
    if os.getpid() in warned:
        return "The answer is yes."
    warned.add(os.getpid())
    note = "structbench sandbox: weaker isolation (a test)"
    thread = threading.Thread(target=logging.getLogger("structbench.sandbox.runner").warning, args=(note,))
    thread.start()
    thread.join()
    warnings.warn(note, LoggedWarning, stacklevel=1)
    return "The answer is yes."


@pytest.mark.parametrize("workers", [1, 2])
def test_a_warning_logged_in_every_worker_is_one_note_a_run(tmp_path: Path, workers: int,
                                                            capfd: pytest.CaptureFixture[str]) -> None:
    """Each worker logged it once: the user saw it once per worker, and again as a Python warning. A worker's logged
    warnings now go to the driver, which says each once; a ``LoggedWarning`` is not shown a second time."""
    notes: list[str] = []
    control = RunControl(notify=notes.append)
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")  # (the command's own: Python's default shows each warning once a place)
        with notes_from_logs(notes.append):
            _run(tmp_path / "r", MockBackend(reply=_warns), _config(strategies=["direct"]), workers, control=control)
    assert notes == ["structbench sandbox: weaker isolation (a test)"]
    assert not [w for w in shown if issubclass(w.category, LoggedWarning)]
    assert "weaker isolation" not in capfd.readouterr().err


def test_worker_count_defaults_and_limits(capsys: pytest.CaptureFixture[str]) -> None:
    from structbench.backends.llamacpp import LlamaCppBackend
    from structbench.backends.openai_compat import OpenAIBackend
    from structbench.core.forkmap import cpu_count

    notes: list[str] = []
    assert worker_count(OpenAIBackend("m", base_url="http://127.0.0.1:1/v1"), None, notes.append) == cpu_count()
    assert worker_count(MockBackend(), None, notes.append) == 1 and worker_count(MockBackend(), 4, notes.append) == 4
    local = LlamaCppBackend.__new__(LlamaCppBackend)
    assert worker_count(local, 2, notes.append) == 1 and worker_count(local, None, notes.append) == 1
    # the run's Notify hears it (evaluate's notes, a suite's log), never stderr behind its back
    assert notes == ["note: workers=2: the llamacpp backend holds its model in this process and cannot be copied "
                     "into worker processes; running in one process (executor=ray runs one copy per Ray actor)"]
    assert capsys.readouterr().err == ""
    assert split(64, 3) == [22, 21, 21] and split(2, 2) == [1, 1]


def _stray_cancel(request: Any) -> str:
    if "Does the number 1" in str(request.messages):
        raise asyncio.CancelledError()  # nobody cancelled the task: a bug below the strategy
    return "The answer is yes."


def test_a_stray_cancelled_error_in_a_worker_is_a_harness_error_and_the_run_ends(tmp_path: Path) -> None:
    config = _config(strategies=["direct"], limit=20)
    one = _run(tmp_path / "one", MockBackend(reply=_stray_cancel), config, 1)
    many = _run(tmp_path / "many", MockBackend(reply=_stray_cancel), config, 2)  # it used to wait for ever
    assert many == one and one.results[0].harness_errors > 0
    assert _lines(tmp_path / "many") == _lines(tmp_path / "one") and len(_lines(tmp_path / "many")) == 20


def test_a_finished_job_travels_as_plain_tuples_and_arrives_whole() -> None:
    import pickle
    import pickletools

    from structbench.runfiles.records import SampleRecord
    from structbench.runner.jobs import Finished

    record = SampleRecord(benchmark="toy", variant="big", strategy="direct", model="m", id="s-7", task="t",
                          prompt="p", output="o", parsed={"answer": ["y", 1]}, gold="y", score=0.5,
                          values={"f1": 0.5}, meta={"hops": 2}, cluster="c1", epoch=1, error="HTTP 500",
                          error_kind="model", call_usage=[{"model": "m", "prompt_tokens": 12, "completion_tokens": 3},
                                                          {"model": "judge", "reused": True, "prompt_tokens": 5}])
    finished = Finished((0, 1, 2, 1), record.row(), b'{"line": 1}\n')
    assert finished.record.usage_groups  # something to carry
    wire = pickle.dumps(processes.done_message(finished), protocol=pickle.HIGHEST_PROTOCOL)
    globals_named = [arg for op, arg, _ in pickletools.genops(wire) if op.name in ("GLOBAL", "STACK_GLOBAL")]
    assert globals_named == []  # nothing pickle calls back into Python for
    assert processes.received(pickle.loads(wire)) == ("done", finished)
    assert processes.received(("note", "text")) == ("note", "text")



IMPORTS_AFTER_FORK = """
import os, sys
into, forked = sys.argv[1], []
os.register_at_fork(after_in_child=lambda: forked.append(1))

def hook(event, args):
    if forked and event == "import":
        with open(into, "a") as out:
            out.write(f"{os.getpid()} {args[0]}\\n")

sys.addaudithook(hook)
sys.argv = ["structbench", *sys.argv[2:]]
import runpy
runpy.run_module("structbench", run_name="__main__")
"""


def test_a_forked_workers_first_calls_import_nothing(tmp_path: Path) -> None:
    """What a worker would load on its first call (the codec the event loop encodes a connection's host with, ctypes
    for ``PR_SET_PDEATHSIG``) is loaded before the fork: once a run, not again in each worker with requests waiting."""
    import subprocess
    import sys

    from faults import child_pythonpath
    from structbench.testing.batch_server import BatchServer, serve_batches_in_thread
    from structbench.testing.openai_server import MockOpenAIServer

    imported = tmp_path / "imported.txt"
    with serve_batches_in_thread(BatchServer(MockOpenAIServer(reply="A"))) as url:
        env = {**os.environ, "PYTHONPATH": child_pythonpath(), "OPENAI_API_KEY": "sk-test-0123456789",
               "STRUCTBENCH_PLUGINS": "toybench", "STRUCTBENCH_CACHE": str(tmp_path / "cache")}
        done = subprocess.run(
            [sys.executable, "-c", IMPORTS_AFTER_FORK, str(imported), "run", "-m", "openai:m", "--base-url",
             f"{url}/v1", "-b", "toy:small", "--limit", "6", "-c", "4", "--workers", "2", "--out",
             str(tmp_path / "run"), "--no-progress"], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert len((tmp_path / "run" / "samples.jsonl").read_text().splitlines()) == 6
    assert not imported.exists(), imported.read_text()


def test_every_worker_syncs_its_spend_log_lines_before_it_exits(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The spend log's lines are synced every ``SYNC_EVERY`` seconds while a process runs; a worker that left without
    closing its log left its last lines to the kernel's write-back (a power cut then could lose them). Every worker now
    syncs and closes its log at its end, after its last call."""
    import os

    from structbench.runner import spending
    from structbench.runner.spending import SpendLog

    closed = tmp_path / "closed"
    real_close = SpendLog.close

    def close(self: SpendLog) -> None:
        unsynced = self._unsynced
        real_close(self)
        with closed.open("a") as out:  # each process appends its own line: pid, and whether it had lines to sync
            out.write(f"{os.getpid()} {int(unsynced)}\n")

    monkeypatch.setattr(SpendLog, "close", close)
    monkeypatch.setattr(spending, "SYNC_EVERY", 3600.0)  # no sync while the run lasts: only the close syncs
    _run(tmp_path / "r", MockBackend(default="The answer is yes."), _config(strategies=["direct"]), 2)
    rows = [line.split() for line in closed.read_text().splitlines()]
    workers = {pid for pid, _ in rows if int(pid) != os.getpid()}
    assert len(workers) == 2 and all(unsynced == "1" for pid, unsynced in rows if pid in workers)
    assert sum(json.loads(line)["calls"] for line in (tmp_path / "r" / "spent.jsonl").read_text().splitlines()) == 60
