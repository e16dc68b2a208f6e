"""Response cache: keys, persistence, what is never stored."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from patience import patience
from structbench.backends.base import CACHE_KEY_FIELDS, Choice, Request, Response, cache_fields, cache_key
from structbench.backends.openai_compat import OpenAIBackend
from structbench.runner.cache import ResponseCache

OLD_INSERT = "INSERT OR REPLACE INTO responses (key, model, request, response, created) VALUES (?, 'm', ?, ?, 0)"
"""A row as a structbench before the payer columns stored it."""


def test_key_depends_on_exactly_the_documented_fields() -> None:
    a = OpenAIBackend("m", base_url="http://127.0.0.1:1/v1", api_key="sk-secret-1", timeout=5, max_retries=1)
    b = OpenAIBackend("m", base_url="http://127.0.0.1:1/v1", api_key="sk-other-2", timeout=99, max_retries=9)
    req = Request.chat("hello", max_tokens=5)
    assert cache_key(a, req) == cache_key(b, req)  # key, timeout and retries are not in the key
    assert cache_key(a, req) != cache_key(a, Request.chat("hello", max_tokens=6))
    assert cache_key(a, req) != cache_key(a, Request.chat("hello", max_tokens=5, temperature=0.5))
    assert cache_key(a, req) != cache_key(a, Request(prompt="hello"))
    c = OpenAIBackend("m", base_url="http://127.0.0.1:2/v1")
    assert cache_key(a, req) != cache_key(c, req)
    assert "messages_or_prompt" in CACHE_KEY_FIELDS and "timeout" not in CACHE_KEY_FIELDS


def test_cache_survives_reopen_and_holds_no_secret(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    backend = OpenAIBackend("m", base_url="http://127.0.0.1:1/v1", api_key="sk-very-secret")
    req = Request.chat("question?")
    cache = ResponseCache(path)
    cache.put(cache_key(backend, req), backend.model, cache_fields(backend, req), Response(choices=(Choice(text="A"),)))
    cache.close()
    again = ResponseCache(path)
    got = again.get(cache_key(backend, req))
    assert got is not None and got.text == "A"
    assert again.count() == 1
    again.close()
    dump = "\n".join(sqlite3.connect(path).iterdump())
    assert "sk-very-secret" not in dump
    assert sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_entries_written_by_another_connection_are_seen(tmp_path: Path) -> None:
    backend = OpenAIBackend("m", base_url="http://127.0.0.1:1/v1")
    req = Request.chat("shared?")
    reader = ResponseCache(tmp_path / "c.sqlite")
    writer = ResponseCache(tmp_path / "c.sqlite")
    assert reader.get(cache_key(backend, req)) is None
    writer.put(cache_key(backend, req), "m", cache_fields(backend, req), Response(choices=(Choice(text="B"),)))
    got = reader.get(cache_key(backend, req))
    assert got is not None and got.text == "B"


def test_edited_mock_script_is_another_model(tmp_path: Path) -> None:
    import json

    from structbench.backends.factory import BackendSpec
    from structbench.backends.mock import from_spec

    script = tmp_path / "m.json"
    script.write_text(json.dumps({"default": "yes"}))
    first = from_spec(BackendSpec(backend="mock", name=str(script)))
    script.write_text(json.dumps({"default": "no"}))
    second = from_spec(BackendSpec(backend="mock", name=str(script)))
    req = Request.chat("q")
    assert cache_key(first, req) != cache_key(second, req)


def test_only_usable_replies_are_stored_and_unusable_entries_read_as_misses(tmp_path: Path) -> None:
    import orjson
    import pytest

    backend = OpenAIBackend("m", base_url="http://127.0.0.1:1/v1")
    req = Request.chat("poisoned?")
    key, fields = cache_key(backend, req), cache_fields(backend, req)
    cache = ResponseCache(tmp_path / "c.sqlite")
    with pytest.raises(ValueError, match="never cached: the reply has no choices"):
        cache.put(key, "m", fields, Response(choices=()))
    # What an older version stored for `choices: []` and for a list of content parts: misses now.
    for stored in ({"choices": []}, {"choices": [{"text": [{"type": "text", "text": "A"}]}]}, {"oops": 1}):
        cache._writer.execute(OLD_INSERT,
                              (key, fields, orjson.dumps(stored).decode()))
        assert cache.get(key) is None
    assert cache.hits == 0
    cache.put(key, "m", fields, Response(choices=(Choice(text="A"),)))  # a real answer replaces it
    got = cache.get(key)
    assert got is not None and got.text == "A" and cache.count() == 1


def test_writes_wait_for_a_foreign_lock_off_the_event_loop(tmp_path: Path) -> None:
    import asyncio
    import threading
    import time

    path = tmp_path / "c.sqlite"
    cache = ResponseCache(path, lock_wait=5.0)
    backend = OpenAIBackend("m", base_url="http://127.0.0.1:1/v1")
    req = Request.chat("locked?")
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")
    threading.Timer(1.0, lambda: other.execute("COMMIT")).start()

    async def go() -> tuple[float, float]:
        t0 = time.perf_counter()
        put = asyncio.create_task(cache.aput(cache_key(backend, req), "m", cache_fields(backend, req),
                                             Response(choices=(Choice(text="A"),))))
        lag = 0.0
        while not put.done():  # the loop keeps turning while the write waits for the lock
            tick = time.perf_counter()
            await asyncio.sleep(0.01)
            lag = max(lag, time.perf_counter() - tick)
        await put
        return time.perf_counter() - t0, lag

    waited, lag = asyncio.run(go())
    assert waited >= 0.9 and lag < patience(0.2)
    assert cache.get(cache_key(backend, req)) is not None
    cache.close()


def test_a_write_that_cannot_get_the_lock_is_a_storage_error(tmp_path: Path) -> None:
    import pytest

    from structbench.runner.cache import CacheWriteError

    path = tmp_path / "c.sqlite"
    cache = ResponseCache(path, lock_wait=0.2)
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    with pytest.raises(CacheWriteError, match="locked by another process for over 0.2 s"):
        cache.put("k", "m", b"{}", Response(choices=(Choice(text="A"),)))
    other.execute("ROLLBACK")
    assert CacheWriteError.exit_code == 5


def test_a_write_whose_caller_was_cancelled_still_lands_after_drain(tmp_path: Path) -> None:
    """A halt cancels the tasks that were storing answers while an earlier batch held the writer (here: another
    process's lock); the loop's end drains the cache instead of dropping the writes still queued."""
    import asyncio
    import threading

    path = tmp_path / "c.sqlite"
    cache = ResponseCache(path, lock_wait=5.0)
    backend = OpenAIBackend("m", base_url="http://127.0.0.1:1/v1")
    requests = [Request.chat(f"q{i}") for i in range(20)]
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")
    threading.Timer(0.5, lambda: other.execute("COMMIT")).start()

    def put(i: int) -> asyncio.Task[None]:
        r = requests[i]
        return asyncio.create_task(cache.aput(cache_key(backend, r), "m", cache_fields(backend, r),
                                              Response(choices=(Choice(text=str(i)),))))

    async def go() -> None:
        first = put(0)
        await asyncio.sleep(0.1)  # the first batch waits for the lock in the writer thread
        rest = [put(i) for i in range(1, 20)]
        await asyncio.sleep(0)  # handed over: queued behind the running batch
        for task in [first, *rest]:
            task.cancel()
        await asyncio.gather(first, *rest, return_exceptions=True)
        await cache.drain()

    asyncio.run(go())
    cache.close()
    other.close()
    again = ResponseCache(path)
    assert [again.get(cache_key(backend, r)) is not None for r in requests] == [True] * 20
    again.close()


def test_a_batch_after_close_fails_its_callers_instead_of_raising_in_the_loop(tmp_path: Path) -> None:
    import asyncio

    import pytest

    cache = ResponseCache(tmp_path / "c.sqlite")
    backend = OpenAIBackend("m", base_url="http://127.0.0.1:1/v1")
    req = Request.chat("late")
    cache.close()
    errors: list[object] = []

    async def go() -> None:
        asyncio.get_running_loop().set_exception_handler(lambda loop, context: errors.append(context))
        with pytest.raises(RuntimeError, match="after shutdown"):
            await cache.aget(cache_key(backend, req))
        await cache.drain()

    asyncio.run(go())
    assert errors == []


def test_one_cache_serves_one_event_loop_after_another(tmp_path: Path) -> None:
    import asyncio

    cache = ResponseCache(tmp_path / "c.sqlite")
    backend = OpenAIBackend("m", base_url="http://127.0.0.1:1/v1")

    async def go(i: int) -> Response | None:
        r = Request.chat(f"loop {i}")
        put = asyncio.create_task(cache.aput(cache_key(backend, r), "m", cache_fields(backend, r),
                                             Response(choices=(Choice(text=str(i)),))))
        await asyncio.sleep(0)
        await cache.drain()  # waits in this loop
        await put
        return await cache.aget(cache_key(backend, r))

    assert [asyncio.run(go(i)) is not None for i in range(3)] == [True, True, True]
    cache.close()


def test_a_thought_is_cached_apart_and_older_entries_are_split_when_read(tmp_path: Path) -> None:
    import orjson

    from structbench.core.redact import register_secret

    register_secret("sk-thought-secret-123")
    backend = OpenAIBackend("m", base_url="http://127.0.0.1:1/v1")
    req = Request.chat("thinking?")
    key, fields = cache_key(backend, req), cache_fields(backend, req)
    cache = ResponseCache(tmp_path / "c.sqlite")
    thought = "B? my key is sk-thought-secret-123, no: A."
    cache.put(key, "m", fields, Response(choices=(Choice(text="A", reasoning=thought, reasoning_tokens=9),)))
    got = cache.get(key)
    assert got is not None and (got.text, got.choices[0].reasoning_tokens) == ("A", 9)
    assert got.choices[0].reasoning == "B? my key is [REDACTED], no: A."
    # what a version that kept thoughts inline stored: it still reads, with the thought taken out
    old = {"choices": [{"text": "<think>B?</think>A", "logprobs": None, "finish_reason": "stop"}]}
    cache._writer.execute(OLD_INSERT,
                          (key, fields, orjson.dumps(old).decode()))
    got = cache.get(key)
    assert got is not None and (got.text, got.choices[0].reasoning) == ("A", "B?")


def test_lookups_and_commits_that_need_no_wait_stay_on_the_event_loop(tmp_path: Path) -> None:
    """The common case hands nothing to the cache's threads; each response is committed when ``aput`` returns."""
    import asyncio

    import pytest

    from structbench.runner import cache as cache_module

    path = tmp_path / "c.sqlite"
    cache = ResponseCache(path)
    backend = OpenAIBackend("m", base_url="http://127.0.0.1:1/v1")
    handed: list[object] = []
    mp = pytest.MonkeyPatch()
    original = cache_module.ThreadPoolExecutor.submit

    def submit(self: object, fn: object, *args: object) -> object:
        handed.append(fn)
        return original(self, fn, *args)  # type: ignore[arg-type]

    mp.setattr(cache_module.ThreadPoolExecutor, "submit", submit)
    other = sqlite3.connect(path)

    async def go() -> list[bool]:
        seen = []
        for i in range(20):
            r = Request.chat(f"q{i}")
            assert await cache.aget(cache_key(backend, r)) is None
            answer = Response(choices=(Choice(text="A"),))
            await cache.aput(cache_key(backend, r), "m", cache_fields(backend, r), answer)
            row = other.execute("SELECT COUNT(*) FROM responses WHERE key = ?", (cache_key(backend, r),)).fetchone()
            seen.append(row[0] == 1 and await cache.aget(cache_key(backend, r)) is not None)
        return seen

    try:
        assert asyncio.run(go()) == [True] * 20
    finally:
        mp.undo()
    assert handed == [] and cache.hits == 20
    cache.close()
    other.close()


def _traced(cache: ResponseCache) -> list[str]:
    """The statements the event loop's connection runs from now on."""
    statements: list[str] = []
    cache._now.set_trace_callback(statements.append)
    return statements


def test_the_responses_stored_in_one_turn_of_the_loop_are_one_commit(tmp_path: Path) -> None:
    """A wave of replies is one transaction on the event loop (group commit), each caller returning once it is
    committed; lookups made in one turn share one read transaction."""
    import asyncio

    path = tmp_path / "c.sqlite"
    cache = ResponseCache(path)
    backend = OpenAIBackend("m", base_url="http://127.0.0.1:1/v1")
    requests = [Request.chat(f"q{i}") for i in range(12)]
    keys = [cache_key(backend, r) for r in requests]
    statements = _traced(cache)

    async def store(i: int) -> int:
        await cache.aput(keys[i], "m", cache_fields(backend, requests[i]), Response(choices=(Choice(text=str(i)),)))
        other = sqlite3.connect(path)  # committed by the time aput returns: another connection sees it
        try:
            return int(other.execute("SELECT COUNT(*) FROM responses WHERE key = ?", (keys[i],)).fetchone()[0])
        finally:
            other.close()

    async def go() -> tuple[list[int], list[Response | None]]:
        stored = await asyncio.gather(*(store(i) for i in range(10)))
        found = await asyncio.gather(*(cache.aget(key) for key in keys))
        return list(stored), list(found)

    stored, found = asyncio.run(go())
    assert stored == [1] * 10
    assert [f.text if f is not None else None for f in found] == [str(i) for i in range(10)] + [None, None]
    assert cache.hits == 10
    assert sum(s.startswith("INSERT") for s in statements) == 10
    assert [s for s in statements if s in ("BEGIN IMMEDIATE", "COMMIT", "BEGIN")] == \
        ["BEGIN IMMEDIATE", "COMMIT", "BEGIN", "COMMIT"]  # one write transaction, then one read transaction
    assert sum(s.startswith("SELECT") for s in statements) == 12
    cache.close()


def test_a_reply_that_cannot_be_written_fails_alone_not_the_replies_it_came_with(tmp_path: Path) -> None:
    """A reply whose text JSON cannot hold (a lone surrogate) raises to its own caller; the others of its turn of the
    event loop are committed as usual."""
    import asyncio

    path = tmp_path / "c.sqlite"
    cache = ResponseCache(path)
    backend = OpenAIBackend("m", base_url="http://127.0.0.1:1/v1")
    requests = [Request.chat(f"q{i}") for i in range(3)]
    keys = [cache_key(backend, r) for r in requests]
    texts = ["A", "B\ud800", "C"]

    async def go() -> list[BaseException | None]:
        return list(await asyncio.gather(*(cache.aput(keys[i], "m", cache_fields(backend, requests[i]),
                                                      Response(choices=(Choice(text=texts[i]),))) for i in range(3)),
                                         return_exceptions=True))

    outcomes = asyncio.run(go())
    assert outcomes[0] is None and outcomes[2] is None and isinstance(outcomes[1], TypeError)
    assert [cache.get(key).text if cache.get(key) else None for key in keys] == ["A", None, "C"]  # type: ignore[union-attr]
    cache.close()


def test_a_batch_the_loop_cannot_commit_goes_whole_to_the_write_thread(tmp_path: Path) -> None:
    """Another process holds the write lock: the turn's responses are committed together on the write thread once it
    is free, and the lookups of a turn that would wait are looked up (and counted) once, on the read thread."""
    import asyncio
    import threading

    path = tmp_path / "c.sqlite"
    cache = ResponseCache(path, lock_wait=5.0)
    backend = OpenAIBackend("m", base_url="http://127.0.0.1:1/v1")
    requests = [Request.chat(f"q{i}") for i in range(8)]
    keys = [cache_key(backend, r) for r in requests]
    cache.put(keys[0], "m", cache_fields(backend, requests[0]), Response(choices=(Choice(text="old"),)))
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")
    threading.Timer(0.3, lambda: other.execute("COMMIT")).start()
    statements = _traced(cache)
    committed: list[tuple[str, int]] = []
    commit = cache._commit

    def recording(rows: list[tuple[str, str, bytes, str, float]]) -> None:
        committed.append((threading.current_thread().name, len(rows)))
        commit(rows)

    cache._write_batch.work = recording

    async def go() -> None:
        await asyncio.gather(*(cache.aput(keys[i], "m", cache_fields(backend, requests[i]),
                                          Response(choices=(Choice(text=str(i)),))) for i in range(1, 8)))

    asyncio.run(go())
    assert [name.startswith("cache-write") for name, _ in committed] == [True] and committed[0][1] == 7
    assert statements.count("BEGIN IMMEDIATE") == 1  # tried once on the loop, refused at once
    again = ResponseCache(path)
    assert [again.get(key).text for key in keys] == ["old", *map(str, range(1, 8))]  # type: ignore[union-attr]
    again.close()
    other.close()

    busy = sqlite3.OperationalError("database is locked")
    busy.sqlite_errorname = "SQLITE_BUSY"  # as SQLite sets it

    class Waiting:
        """The loop's connection, refusing the third lookup as if a lock were in the way."""

        def __init__(self, conn: sqlite3.Connection) -> None:
            self.conn, self.selects = conn, 0
            self.in_transaction = False

        def execute(self, sql: str, *args: object) -> object:
            self.selects += sql.startswith("SELECT")
            if self.selects == 3:
                raise busy
            result = self.conn.execute(sql, *args)
            self.in_transaction = self.conn.in_transaction
            return result

    cache._now = Waiting(cache._now)  # type: ignore[assignment]

    async def look() -> list[Response | None]:
        return list(await asyncio.gather(*(cache.aget(key) for key in keys)))

    found = asyncio.run(look())
    assert [f.text if f is not None else None for f in found] == ["old", *map(str, range(1, 8))]
    assert cache.hits == 8  # the two found on the loop before the refusal are not counted twice
    cache._now = cache._now.conn  # type: ignore[attr-defined]
    cache.close()


def test_an_interrupt_inside_a_batch_leaves_no_caller_waiting_and_the_cache_usable(tmp_path: Path) -> None:
    """Ctrl-C while the event loop's connection runs a batch: it leaves the loop as anywhere else, the batch's callers
    fail with it, and the cache is not left busy (a later ``drain`` returns; later lookups and commits work)."""
    import asyncio

    import pytest

    cache = ResponseCache(tmp_path / "c.sqlite")
    backend = OpenAIBackend("m", base_url="http://127.0.0.1:1/v1")
    keys = [cache_key(backend, Request.chat(f"q{i}")) for i in range(3)]
    lookups = cache._read_batch.now
    assert lookups is not None

    def interrupted(batch: list[str]) -> list[Response | None]:
        raise KeyboardInterrupt

    cache._read_batch.now = interrupted

    async def go() -> None:
        await asyncio.gather(*(cache.aget(key) for key in keys))

    with pytest.raises(KeyboardInterrupt):
        asyncio.run(go())
    assert not cache._read_batch.busy
    cache._read_batch.now = lookups

    async def again() -> Response | None:
        await asyncio.wait_for(cache.drain(), 5)
        await cache.aput(keys[0], "m", b"{}", Response(choices=(Choice(text="A"),)))
        return await cache.aget(keys[0])

    found = asyncio.run(again())
    assert found is not None and found.text == "A"
    cache.close()


def test_a_lookup_that_would_wait_goes_to_the_read_thread(tmp_path: Path) -> None:
    import asyncio
    import threading

    cache = ResponseCache(tmp_path / "c.sqlite")
    cache.put("k", "m", b"{}", Response(choices=(Choice(text="A"),)))
    busy = sqlite3.OperationalError("database is locked")
    busy.sqlite_errorname = "SQLITE_BUSY"  # as SQLite sets it
    threads: list[str] = []

    class Waiting:
        """A connection whose every statement would wait for a lock."""

        def execute(self, *args: object) -> None:
            threads.append(threading.current_thread().name)
            raise busy

    loops_connection, cache._now = cache._now, Waiting()  # type: ignore[assignment]
    reading = cache.get

    def get(key: str) -> Response | None:
        threads.append(threading.current_thread().name)
        return reading(key)

    cache.get = get  # type: ignore[method-assign]
    got = asyncio.run(cache.aget("k"))
    assert got is not None and got.text == "A"
    assert threads[0] == "MainThread" and len(threads) == 2 and threads[1].startswith("cache-read")  # then its thread
    cache._now = loops_connection
    cache.close()


def test_the_event_loops_connection_leaves_checkpoints_to_the_write_thread(tmp_path: Path) -> None:
    import asyncio
    import threading

    import pytest

    from structbench.runner import cache as cache_module

    cache = ResponseCache(tmp_path / "c.sqlite")
    assert cache._now.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 0
    threads: list[str] = []
    checkpoint = cache._checkpoint

    def recording() -> None:
        threads.append(threading.current_thread().name)
        checkpoint()

    cache._checkpoint = recording  # type: ignore[method-assign]
    backend = OpenAIBackend("m", base_url="http://127.0.0.1:1/v1")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(cache_module, "CHECKPOINT_BYTES", 2_000)

        async def go() -> None:
            for i in range(40):
                r = Request.chat(f"q{i}")
                await cache.aput(cache_key(backend, r), "m", cache_fields(backend, r),
                                 Response(choices=(Choice(text="x" * 200),)))

        asyncio.run(go())
    cache.close()  # waits for the checkpoints asked for
    assert len(threads) >= 3 and all(name.startswith("cache-write") for name in threads)


def test_a_cache_that_cannot_be_opened_is_called_full_only_on_a_full_disk(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """``/proc`` reports no size at all (0 free of 0): a cache there cannot be opened, but not for want of space."""
    import shutil
    from collections import namedtuple

    from structbench.core.errors import StorageError

    usage = namedtuple("usage", "total used free")
    target = tmp_path / "not-a-folder"
    target.write_text("")
    for total, free, said in ((0, 0, False), (2**30, 2**10, True), (2**30, 2**29, False)):
        monkeypatch.setattr(shutil, "disk_usage", lambda _path, t=total, f=free: usage(t, t - f, f))
        with pytest.raises(StorageError) as err:
            ResponseCache(target / "responses.sqlite")
        assert ("no space left on the device" in str(err.value)) is said, (total, free, str(err.value))


def test_an_answer_is_stored_with_who_paid_and_an_older_cache_gains_the_columns(tmp_path: Path) -> None:
    """A cache an older structbench made (five columns) gains the payer's columns and their index when opened, its rows
    still read; ``paid_lines`` gives the key and line of the answers the sessions asked for paid for, and no other."""
    import asyncio

    from structbench.runner.spending import Paid

    path = tmp_path / "c.sqlite"
    old = sqlite3.connect(path)
    old.execute("CREATE TABLE responses (key TEXT PRIMARY KEY, model TEXT NOT NULL, request BLOB NOT NULL, "
                "response TEXT NOT NULL, created REAL NOT NULL)")
    old.execute(OLD_INSERT.replace("?, 'm'", "'old', 'm'"), (b"{}", '{"choices": [{"text": "B"}]}'))
    old.commit()
    old.close()
    cache = ResponseCache(path)
    again = ResponseCache(path)  # a second process opening it after: nothing to add
    answer = Response(choices=(Choice(text="A"),))

    async def store() -> None:
        await cache.aput("k1", "m", b"{}", answer, Paid("s1", b'{"key":"k1"}'))
        await cache.aput("k2", "m", b"{}", answer, Paid("s2", b'{"key":"k2"}'))
        await cache.aput("k3", "m", b"{}", answer)

    asyncio.run(store())
    got = cache.get("old")
    assert got is not None and got.text == "B"
    assert again.paid_lines(["s1", "s9"]) == [("k1", b'{"key":"k1"}')]
    assert sorted(cache.paid_lines(["s1", "s2"])) == [("k1", b'{"key":"k1"}'), ("k2", b'{"key":"k2"}')]
    assert cache.paid_lines([]) == []
    assert cache.paid_lines([f"s{i}" for i in range(3, 2000)] + ["s2"]) == [("k2", b'{"key":"k2"}')]  # 4 queries
    cache._writer.execute("INSERT INTO responses VALUES ('k4', 'm', x'', '{}', 0, 's-edited', 'a text')")
    cache._writer.execute("INSERT INTO responses VALUES ('k5', 'm', x'', '{}', 0, 's-edited', 5)")
    assert cache.paid_lines(["s-edited"]) == [("k4", b"a text")]  # a hand-edited cache's values: read, or left out
    plan = " ".join(str(row) for row in cache._reader.execute(
        "EXPLAIN QUERY PLAN SELECT key FROM responses WHERE paid_by IN ('s1') AND paid_line IS NOT NULL"))
    assert "responses_paid_by" in plan  # found by the index, not a scan of a shared cache
    cache.close()
    again.close()
