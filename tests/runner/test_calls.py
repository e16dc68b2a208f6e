"""ModelPool: other models (an LLM judge) reached by spec during a run, cached like the run's own, closed after."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from structbench.backends.base import Request
from structbench.backends.mock import MockBackend
from structbench.contract.benchmark import other_model
from structbench.core.errors import UsageError
from structbench.runner.cache import ResponseCache
from structbench.runner.calls import ModelPool


def _script(tmp_path: Path, reply: str) -> str:
    path = tmp_path / f"{reply}.json"
    path.write_text(json.dumps({"default": reply}))
    return f"mock:{path}"


def test_other_models_are_cached_and_closed_with_the_pool(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    closed: list[str] = []

    async def aclose(self: MockBackend) -> None:
        closed.append(self.model)

    monkeypatch.setattr(MockBackend, "aclose", aclose)
    cache = ResponseCache(tmp_path / "cache.sqlite")
    judge, other = _script(tmp_path, "True"), _script(tmp_path, "False")

    async def session() -> tuple[list[str], int]:
        async with ModelPool(cache) as pool:
            texts = [(await other_model(spec)(Request.chat("is it?"))).choices[0].text
                     for spec in (judge, judge, other)]
            assert other_model(judge) is other_model(judge)  # one backend per spec
            return texts, pool.model_calls

    assert asyncio.run(session()) == (["True", "True", "False"], 2)  # the repeat came from the cache
    assert sorted(closed) == ["mock:False.json", "mock:True.json"]
    assert asyncio.run(session()) == (["True", "True", "False"], 0)  # a later run: all from the cache


def test_other_model_outside_a_run_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="only be called during a run"):
        other_model(_script(tmp_path, "True"))

    async def after_the_pool() -> None:
        async with ModelPool(None):
            pass
        other_model(_script(tmp_path, "True"))

    with pytest.raises(UsageError):
        asyncio.run(after_the_pool())


def test_every_backend_is_closed_when_one_fails_to(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    closed: list[str] = []

    async def aclose(self: MockBackend) -> None:
        closed.append(self.model)
        if self.model == "mock:True.json":
            raise OSError("connection reset while closing")

    monkeypatch.setattr(MockBackend, "aclose", aclose)
    specs = [_script(tmp_path, "True"), _script(tmp_path, "False")]

    async def session() -> None:
        async with ModelPool(None):
            for spec in specs:
                await other_model(spec)(Request.chat("is it?"))

    with pytest.raises(OSError, match="connection reset"):
        asyncio.run(session())
    assert sorted(closed) == ["mock:False.json", "mock:True.json"]


def test_an_answer_reaches_the_cache_only_once_its_calls_line_is_synced(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A power cut must never keep an answer whose cost the spend log lost (a resumed run would reuse it as free): the
    answers of a turn's calls are committed to the response cache after the sync of their lines."""
    import os
    import time

    from structbench.runfiles.runformat import SPENT
    from structbench.runner import spending
    from structbench.runner.budget import Budget
    from structbench.runner.calls import ModelCaller
    from structbench.runner.control import RunControl
    from structbench.runner.spending import SpendLog

    lines_synced = [0]

    def slow_fsync(fd: int) -> None:
        size = os.fstat(fd).st_size
        time.sleep(0.005)  # a slow disk
        lines_synced[0] = max(lines_synced[0], size)

    line_end: dict[str, int] = {}  # a call's key: where its line ends in the log (written before its answer is stored)
    real_store, real_put = ModelCaller._store, ResponseCache._put

    async def store(self: ModelCaller, cache: object, key: str, fields: bytes, response: object) -> None:
        line_end[key] = (tmp_path / "run" / SPENT).stat().st_size
        await real_store(self, cache, key, fields, response)  # type: ignore[arg-type]

    committed: list[int] = []  # how many answers each commit stores

    def put(self: ResponseCache, conn: object, rows: list[tuple[str, ...]]) -> int:
        late = [row[0] for row in rows if line_end[row[0]] > lines_synced[0]]
        assert not late, "an answer committed before its call's line was synced"
        committed.append(len(rows))
        return real_put(self, conn, rows)  # type: ignore[arg-type]

    monkeypatch.setattr(spending, "fsync_if_file", slow_fsync)
    monkeypatch.setattr(ModelCaller, "_store", store)
    monkeypatch.setattr(ResponseCache, "_put", put)
    (tmp_path / "run").mkdir()
    log = SpendLog(tmp_path / "run", 0)
    cache = ResponseCache(tmp_path / "cache.sqlite")
    caller = ModelCaller(MockBackend(default="A"), cache, RunControl(budget=Budget(log=log)))

    async def calls() -> None:
        await asyncio.gather(*(caller(Request.chat(f"question {i}?")) for i in range(12)))

    try:
        asyncio.run(calls())
    finally:
        log.close()
        cache.close()
    assert sum(committed) == 12 and lines_synced[0] == (tmp_path / "run" / SPENT).stat().st_size
