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
