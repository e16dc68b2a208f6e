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


def test_an_answer_is_cached_with_its_calls_line_which_is_written_first(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A crash must never keep an answer whose cost the spend log lost (a resumed run would reuse it as free). The
    answer's commit no longer waits for the line's sync (a sync once a call held the event loop, #44): each call's
    line is written before its answer is stored (a killed process keeps it), and the cache stores the answer with
    the session that paid and that line, which a later session adds back to a log a crash of the machine cut short
    (``runner.spending.restore``)."""
    from structbench.runfiles.runformat import SPENT
    from structbench.runner.budget import Budget
    from structbench.runner.calls import ModelCaller
    from structbench.runner.control import RunControl
    from structbench.runner.spending import SpendLog

    written_before: dict[str, bool] = {}
    real_put = ResponseCache._put

    def put(self: ResponseCache, conn: object, rows: list[tuple[object, ...]]) -> int:
        log = (tmp_path / "run" / SPENT).read_bytes()
        for row in rows:
            written_before[str(row[0])] = isinstance(row[6], bytes) and row[6] + b"\n" in log
        return real_put(self, conn, rows)  # type: ignore[arg-type]

    monkeypatch.setattr(ResponseCache, "_put", put)
    (tmp_path / "run").mkdir()
    log = SpendLog(tmp_path / "run", 0, payer="session-0")
    cache = ResponseCache(tmp_path / "cache.sqlite")
    caller = ModelCaller(MockBackend(default="A"), cache, RunControl(budget=Budget(log=log)))

    async def calls() -> None:
        await asyncio.gather(*(caller(Request.chat(f"question {i}?")) for i in range(12)))

    try:
        asyncio.run(calls())
    finally:
        log.close()
    paid = dict(cache.paid_lines(["session-0"]))
    cache.close()
    assert len(written_before) == 12 and all(written_before.values())
    lines = (tmp_path / "run" / SPENT).read_bytes().splitlines()
    assert sorted(paid.values()) == sorted(lines) and {json.loads(line)["key"] for line in lines} == set(paid)
