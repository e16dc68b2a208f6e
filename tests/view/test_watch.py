"""One run directory as the view follows it: its status, its progress, its entries computed live as the run will
compute them, and the sample browser's filters."""

from __future__ import annotations

import fcntl
import json
import os
import time
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from faults import fifo
from structbench.report.runs import BenchmarkCache
from structbench.runfiles.heartbeat import CallsNow, Heartbeat
from structbench.runfiles.manifest import INTERRUPTED
from structbench.runfiles.runformat import LOCK, MANIFEST, METRICS, PROGRESS, SAMPLES
from structbench.view import liveness
from structbench.view.samples import Query
from structbench.view.watch import RunWatch


def watch(path: Path) -> RunWatch:
    run = RunWatch(path, path.name, BenchmarkCache(), resamples=1000)
    run.refresh()
    return run


def set_manifest(run: Path, **fields: Any) -> None:
    data = json.loads((run / MANIFEST).read_text())
    data.update(fields)
    (run / MANIFEST).write_text(json.dumps(data))


def beat(run: Path, *, age: float, **fields: Any) -> None:
    manifest = json.loads((run / MANIFEST).read_text())
    updated = (datetime.now(UTC) - timedelta(seconds=age)).isoformat()
    heartbeat = Heartbeat(pid=1, session=len(manifest["sessions"]) - 1, started=manifest["sessions"][-1]["started"],
                          updated=updated, **fields)
    (run / PROGRESS).write_text(heartbeat.model_dump_json())


@pytest.fixture
def held() -> Iterator[Callable[[Path], None]]:
    """Hold a run's lock as the process filling it does."""
    fds: list[int] = []

    def hold(run: Path) -> None:
        fd = os.open(run / LOCK, os.O_RDWR | os.O_CREAT)
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        fds.append(fd)

    yield hold
    for fd in fds:
        os.close(fd)


def records(run: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run / SAMPLES).read_text().splitlines()]


def test_a_running_runs_entries_are_computed_as_the_run_computes_them(finished: Path, copy_run: Any,
                                                                      held: Any) -> None:
    """The records of a finished run, seen while it is still running (no metrics.json yet): the live entries are the
    ones metrics.json holds, headline, interval and n alike."""
    run = copy_run(finished, "running")
    (run / METRICS).unlink()
    set_manifest(run, status="running")
    held(run)
    w = watch(run)
    assert w.status() == ("running", None)
    assert w.wants_live()
    w.compute_live()
    assert not w.wants_live()  # nothing new since
    state = w.state()
    assert state["live"] and not state["report"]
    final = json.loads((finished / METRICS).read_text())["results"]
    assert len(state["entries"]) == len(final) == 4
    by_label = {(e["benchmark"], e["variant"], e["strategy"]): e for e in state["entries"]}
    for r in final:
        e = by_label[(r["benchmark"], r["variant"], r["strategy"])]
        assert e["value"] == pytest.approx(r["headline"]["value"])
        assert (e["ci_low"], e["ci_high"]) == pytest.approx((r["headline"]["ci_low"], r["headline"]["ci_high"]))
        assert e["n"] == r["n"] and e["baselines"] == pytest.approx(r["baselines"])


def test_records_are_read_incrementally_and_followed(finished: Path, copy_run: Any, held: Any) -> None:
    run = copy_run(finished, "growing")
    lines = (run / SAMPLES).read_bytes().splitlines(keepends=True)
    (run / SAMPLES).write_bytes(b"".join(lines[:10]))
    (run / METRICS).unlink()
    set_manifest(run, status="running")
    held(run)
    w = watch(run)
    assert w.state()["counts"]["samples"] == 10
    size = (run / SAMPLES).stat().st_size
    for k in range(10, len(lines), 25):
        chunk = b"".join(lines[k:k + 25])
        with (run / SAMPLES).open("ab") as fh:
            fh.write(chunk)
        w.refresh()
        size += len(chunk)
        assert w.tail.bytes_read == size  # each refresh read what was appended, never the file again
    assert w.state()["counts"]["samples"] == len(lines)
    replaced = run / "replaced.jsonl"
    replaced.write_bytes(b"".join(lines[:7]))
    os.replace(replaced, run / SAMPLES)  # a new file: read from its start, the old one's records forgotten
    w.refresh()
    w.refresh()
    assert w.state()["counts"]["samples"] == 7


def test_status_from_the_manifest_the_lock_and_the_heartbeat(finished: Path, copy_run: Any, held: Any) -> None:
    assert watch(finished).status() == ("done", None)
    run = copy_run(finished, "r")
    set_manifest(run, status="stopped", stop_reason="stopped early: the circuit breaker")
    assert watch(run).status() == ("stopped", "stopped early: the circuit breaker")
    set_manifest(run, status="interrupted", stop_reason=INTERRUPTED)
    assert watch(run).status() == ("stopped", INTERRUPTED)
    set_manifest(run, status="interrupted", stop_reason="samples.jsonl: cannot be written: No space left on device")
    assert watch(run).status()[0] == "failed"
    set_manifest(run, status="running")
    if liveness.lock_held(run / LOCK) is None:
        pytest.skip("no /proc/locks here")
    status, why = watch(run).status()  # nobody holds its lock: the process is gone
    assert status == "failed" and why is not None and "--resume" in why
    beat(run, age=1.0)
    assert watch(run).status()[0] == "running"  # a fresh heartbeat
    beat(run, age=60.0)
    assert watch(run).status()[0] == "failed"  # a stale one, and no lock
    held(run)
    assert watch(run).status()[0] == "running"  # the lock is held


def test_an_earlier_sessions_metrics_are_not_shown_as_the_last_ones(finished: Path, copy_run: Any) -> None:
    """A resumed run's manifest says ``complete`` a moment before its session rewrites metrics.json: meanwhile the
    file is the earlier session's, so the entries stay live and there is no report yet."""
    run = copy_run(finished, "resumed")
    manifest = json.loads((run / MANIFEST).read_text())
    manifest["sessions"].append({**manifest["sessions"][-1], "started": datetime.now(UTC).isoformat()})
    (run / MANIFEST).write_text(json.dumps(manifest))
    hour_ago = time.time() - 3600
    os.utime(run / METRICS, (hour_ago, hour_ago))
    state = watch(run).state()
    assert state["status"] == "done" and not state["report"] and state["live"]
    (run / METRICS).touch()
    state = watch(run).state()
    assert state["report"] and not state["live"]


def test_progress_and_calls_come_from_the_heartbeat(finished: Path, copy_run: Any, held: Any) -> None:
    run = copy_run(finished, "r")
    set_manifest(run, status="running")
    held(run)
    n = len(records(finished))
    beat(run, age=0.5, done=30, total=300, settled_before=n - 200,
         calls=CallsNow(in_flight=3, oldest_seconds=12.5, retries=2, timeouts=1))
    state = watch(run).state()  # the records written since the heartbeat count
    assert state["progress"]["done"] == n and state["progress"]["total"] == n + 100
    assert state["calls"]["in_flight"] == 3 and state["calls"]["oldest_seconds"] == 12.5
    beat(run, age=0.5, done=30, total=300, settled_before=n)
    state = watch(run).state()
    assert state["progress"]["done"] == n + 30 and state["progress"]["total"] == n + 300
    assert watch(finished).state()["progress"] == {"done": n, "total": n, "session_done": n, "session_total": n,
                                                   "earlier": 0}


def test_the_sample_browser_filters_newest_first(finished: Path) -> None:
    w = watch(finished)
    everything = records(finished)
    page = w.samples(Query(limit=500))
    assert page["matched"] == len(everything) == len(page["rows"])
    refs = [r["ref"] for r in page["rows"]]
    assert refs == sorted(refs, reverse=True)
    wrong = w.samples(Query(outcome="wrong", limit=500))
    assert wrong["matched"] == sum(r["score"] == 0 and r["error"] is None for r in everything) > 0
    assert {r["outcome"] for r in wrong["rows"]} == {"wrong"}
    entry = page["entries"].index("toy:big / vote / half")
    red = w.samples(Query(entry=entry, group="task=red", limit=500))
    assert red["matched"] == sum(r["variant"] == "big" and r["strategy"] == "vote" and r["task"] == "red"
                                 for r in everything)
    assert set(red["groups"]) == {"task", "rows"} and set(red["groups"]["task"]) == {"red", "blue"}
    found = w.samples(Query(text="TOY-13", limit=500))  # case-insensitive, in ids, prompts and replies
    assert found["matched"] == sum("toy-13" in r["id"] for r in everything) and found["complete"]
    detail = w.record(red["rows"][0]["ref"])
    assert detail is not None and detail["task"] == "red" and "Does the number" in detail["prompt"]
    assert w.record(red["rows"][0]["ref"] + 1) is None  # not the start of a record
    assert Counter(r["outcome"] for r in page["rows"]) == Counter(
        "correct" if r["score"] >= 1 else "wrong" for r in everything)


def test_a_fifo_among_the_run_files_is_a_problem_the_view_lists(finished: Path, copy_run: Any) -> None:
    """A FIFO made ``open()`` wait for a writer for good: the view hung, deaf to Ctrl-C."""
    run = copy_run(finished, "fifo")
    with fifo(run / SAMPLES) as released, fifo(run / METRICS):
        followed = watch(run)
        followed.refresh()
        problems = followed.state()["problems"]
        assert problems == [f"{run / METRICS}: a FIFO, not a regular file; not read",
                            f"{run / SAMPLES}: a FIFO, not a regular file; not read"]  # named once, not per refresh
        with fifo(run / MANIFEST), fifo(run / PROGRESS):
            assert watch(run).status() == ("unreadable", f"{run / MANIFEST}: a FIFO, not a regular file; not read")
    assert released == []
