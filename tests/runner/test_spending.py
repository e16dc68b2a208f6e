"""``spent.jsonl``: every call a run paid for, a line each, read back as written."""

from __future__ import annotations

import asyncio
import errno
import json
import os
import stat
from pathlib import Path

import pytest

from structbench.backends.usage import CallUsage, Usage
from structbench.core.errors import DataError, StorageError
from structbench.runfiles.runformat import SPENT
from structbench.runner import spending
from structbench.runner.spending import BEFORE_LOG, SpendLog, read_spent


def test_a_calls_line_is_the_line_of_its_usage(tmp_path: Path) -> None:
    """``add`` writes each call's line without building its ``Usage`` (every call of a run passes there): the same
    line as ``write`` of ``Usage() + call``, read back the same."""
    calls = [CallUsage(model="m", prompt_tokens=3, completion_tokens=None, reasoning_tokens=2, batch=True),
             CallUsage(model="m", prompt_tokens=5, completion_tokens=7, cached_tokens=1)]
    for name, how in (("a", "add"), ("b", "write")):
        log = SpendLog(tmp_path / name, 0)
        (tmp_path / name).mkdir()
        for call in calls:
            if how == "add":
                log.add(call)
            else:
                log.write([((call.model, call.batch, False), Usage() + call)])
        log.close()
    assert [json.loads(x) for x in (tmp_path / "a" / SPENT).read_text().splitlines()] == \
        [json.loads(x) for x in (tmp_path / "b" / SPENT).read_text().splitlines()]
    assert read_spent(tmp_path / "a") == read_spent(tmp_path / "b")


def test_lines_are_synced_every_interval_on_an_event_loop_and_at_once_outside_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A power loss could lose the last paid calls, so lines are synced: on an event loop ``SYNC_EVERY`` seconds after
    the first line since the last sync (the calls of that span together: a sync once a call cost the event loop
    100–150 µs a call, #44), outside one at once, and at the close."""
    synced: list[int] = []  # the file's size at each sync

    def fsync(fd: int) -> None:
        synced.append(os.fstat(fd).st_size)

    monkeypatch.setattr(spending, "fsync_if_file", fsync)
    monkeypatch.setattr(spending, "SYNC_EVERY", 0.3)
    call = CallUsage(model="m", prompt_tokens=3, completion_tokens=1)
    log = SpendLog(tmp_path, 0)
    log.add(call)
    line = (tmp_path / SPENT).stat().st_size
    assert synced == [line]  # no event loop: at once

    async def calls() -> None:
        for _ in range(3):
            log.add(call)
            await asyncio.sleep(0)
        assert synced == [line]  # not one a call, nor one a turn
        await asyncio.sleep(0.4)
        assert synced == [line, 4 * line]  # the three calls of the span, together
        log.add(call)
        await asyncio.sleep(0.4)
        assert synced == [line, 4 * line, 5 * line]

    asyncio.run(calls())
    log.write([(("m", False, False), Usage() + call)])
    assert synced[-1] == 6 * line
    log.close()
    assert len(synced) == 4  # nothing left to sync at the close

    async def closed_before_the_sync() -> None:
        log.add(call)

    log = SpendLog(tmp_path, 1)
    asyncio.run(closed_before_the_sync())
    log.close()  # the session ends before the interval: the close syncs its lines
    assert synced[-1] == 7 * line

    def fails(fd: int) -> None:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(spending, "fsync_if_file", fails)
    log = SpendLog(tmp_path, 1)

    async def failing() -> None:
        log.add(call)
        await asyncio.sleep(0.4)
        with pytest.raises(StorageError, match="cannot be synced"):  # the next call stops the run
            log.add(call)

    asyncio.run(failing())
    with pytest.raises(StorageError, match="cannot be synced"):
        log.close()


def test_the_run_directory_is_synced_once_when_the_log_is_created(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The lines were synced, the new file's entry in the run directory never: a power loss after the first paid
    calls could lose the whole file, every line synced in it. The directory is synced once, at the first sync of the
    log that created the file: not a line's cost, and not again by a later session that appends to it."""
    synced: list[str] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        synced.append("dir" if stat.S_ISDIR(os.fstat(fd).st_mode) and os.fstat(fd).st_ino == run.stat().st_ino
                      else "log" if os.fstat(fd).st_ino == (run / SPENT).stat().st_ino else "other")
        real(fd)

    run = tmp_path / "run"
    run.mkdir()
    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(spending, "SYNC_EVERY", 0.05)
    call = CallUsage(model="m", prompt_tokens=3, completion_tokens=1)
    log = SpendLog(run, 0)

    async def calls() -> None:
        for _ in range(3):
            log.add(call)
        await asyncio.sleep(0.1)
        assert synced == ["log", "dir"]  # the first lines, then the new file's entry
        log.add(call)
        await asyncio.sleep(0.1)
        assert synced == ["log", "dir", "log"]

    asyncio.run(calls())
    log.add(call)  # outside a loop: at once
    log.close()
    assert synced == ["log", "dir", "log", "log"]
    synced.clear()
    again = SpendLog(run, 1)  # the next session appends to the file it finds
    for _ in range(2):
        again.add(call)
    again.close()
    assert synced == ["log", "log"]
    assert len(read_spent(run)) == 2


def test_the_log_is_read_summed_per_session_and_price_skipping_what_is_not_its_line(tmp_path: Path) -> None:
    """Lines of a run seeded from its records (session -1), of two sessions and two models, a torn last line and
    lines of the wrong shape; each group is the sum ``Usage`` gives."""
    seeded = SpendLog(tmp_path, BEFORE_LOG)
    seeded.write([(("m", False, False), Usage(calls=2, prompt_tokens=10, completion_tokens=4))])
    seeded.close()
    calls = [(0, CallUsage(model="m", prompt_tokens=3, completion_tokens=1)),
             (0, CallUsage(model="m", prompt_tokens=None, completion_tokens=2)),
             (1, CallUsage(model="m", prompt_tokens=5, completion_tokens=5, batch=True)),
             (1, CallUsage(model="n", prompt_tokens=1, completion_tokens=1, reasoning_tokens=7))]
    for session, call in calls:
        log = SpendLog(tmp_path, session)
        log.add(call)
        log.close()
    with (tmp_path / SPENT).open("a") as out:
        whole = {"session": 0, "model": "m", "batch": False, "calls": 1, "unknown": 0, "prompt_tokens": 1,
                 "completion_tokens": 1, "reasoning_tokens": None, "cached_tokens": None}
        for wrong in ({"calls": -1}, {"calls": True}, {"unknown": None}, {"calls": None}, {"prompt_tokens": 1.5},
                      {"cached_tokens": -3}, {"session": -2}, {"session": 1.0}, {"batch": 1}, {"model": 7}):
            out.write(json.dumps({**whole, **wrong}) + "\n")
        out.write('{"session": 0, "model": "m", "batch": false, "calls": "1"}\n[1, 2]\n{"session": true}\n{"sess')
    got = {(session, key): usage for session, key, usage in read_spent(tmp_path)}
    want = {(-1, ("m", False, False)): Usage(calls=2, prompt_tokens=10, completion_tokens=4)}
    for session, call in calls:
        key = (session, (call.model, call.batch, False))
        want[key] = want.get(key, Usage()) + call
    assert got == want


def test_a_fifo_in_place_of_the_log_is_named_not_waited_on(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / SPENT)
    with pytest.raises(DataError, match="a FIFO, not a regular file; not read"):
        read_spent(tmp_path)


def test_a_call_with_a_cache_key_gives_the_cache_its_payer_and_line(tmp_path: Path) -> None:
    """The response cache stores with an answer the session that paid for it and the call's line, as the log holds
    it: a log without a payer (a Ray actor's count, a test) or a call without a key gives nothing to store."""
    call = CallUsage(model="m", prompt_tokens=3, completion_tokens=1)
    log = SpendLog(tmp_path, 2, payer="s2")
    paid = log.add(call, "k1")
    assert log.add(call) is None and SpendLog(tmp_path, 2).add(call, "k2") is None
    log.close()
    assert paid is not None and paid.payer == "s2"
    lines = (tmp_path / SPENT).read_bytes().splitlines()
    assert lines[0] == paid.line and json.loads(paid.line)["key"] == "k1" and json.loads(paid.line)["session"] == 2
    assert spending.logged_keys(tmp_path) == {"k1", "k2"}  # (a line names its key whoever pays)


def test_restore_appends_only_the_lines_the_log_lost(tmp_path: Path) -> None:
    """After a crash of the machine the cache may hold answers whose lines the log lost: ``restore`` appends those
    lines (each under the session that paid), synced, and none the log holds; they are then read back as any. A torn
    last line is ended first: it used to swallow the next session's first line."""
    call = CallUsage(model="m", prompt_tokens=3, completion_tokens=1)
    log = SpendLog(tmp_path, 0, payer="s0")
    kept = [log.add(call, f"k{i}") for i in range(3)]
    log.close()
    (tmp_path / SPENT).write_bytes(b"".join(p.line + b"\n" for p in kept[:1]) + kept[1].line[:9])  # torn, one lost
    paid = [(f"k{i}", p.line) for i, p in enumerate(kept) if p is not None]
    assert spending.restore(tmp_path, paid) == 2
    assert spending.logged_keys(tmp_path) == {"k0", "k1", "k2"}
    assert spending.restore(tmp_path, paid) == 0  # nothing twice
    damaged = [("k7", b'{"key":"k7"}\n{"session":0,"model":"m","calls":99}'), ("k8", b'{"key":"k9"}'), ("k9", b"\xff")]
    assert spending.restore(tmp_path, damaged) == 0  # a damaged cache's value is never written into the log
    ((session, _, usage),) = read_spent(tmp_path)
    assert (session, usage.calls, usage.prompt_tokens) == (0, 3, 9)
