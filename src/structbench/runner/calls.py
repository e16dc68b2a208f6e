"""The ``generate`` a strategy receives: backend + response cache + in-flight de-duplication.

``ModelPool`` does the same for models other than the run's own (an LLM judge), by spec.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextvars import Token
from dataclasses import dataclass, replace
from types import TracebackType

from structbench.backends.base import Backend, Request, Response, cache_fields, cache_key
from structbench.backends.factory import BackendSpec, make_backend
from structbench.benchmark import Generate, other_models
from structbench.runner.cache import ResponseCache


class ModelCaller:
    """Sends requests to one backend, answering repeats from the cache and joining identical in-flight calls."""

    def __init__(self, backend: Backend, cache: ResponseCache | None) -> None:
        self.backend = backend
        self.cache = cache if backend.cacheable else None
        self._inflight: dict[str, asyncio.Future[Response]] = {}
        self.model_calls = 0

    async def __call__(self, request: Request) -> Response:
        if self.cache is None:
            self.model_calls += 1
            return await self.backend.generate(request)
        fields = cache_fields(self.backend, request)
        key = cache_key(self.backend, request, fields)
        hit = self.cache.get(key)
        if hit is not None:
            return replace(hit, cached=True)
        pending = self._inflight.get(key)
        if pending is not None:
            return replace(await asyncio.shield(pending), cached=True)
        future: asyncio.Future[Response] = asyncio.get_running_loop().create_future()
        self._inflight[key] = future
        try:
            self.model_calls += 1
            response = await self.backend.generate(request)
            self.cache.put(key, self.backend.model, fields, response)
            future.set_result(response)
            return response
        except BaseException as err:
            future.set_exception(err)
            future.exception()  # mark retrieved: waiters re-raise it, nobody else must
            raise
        finally:
            del self._inflight[key]


class ModelPool:
    """Callers for models other than the run's own, each built on first use and sharing one response cache.

    ``async with`` makes the pool what ``benchmark.other_model`` answers from, and closes its backends
    at the end, so a judge's calls are cached like the run's own and nothing is left open.
    """

    def __init__(self, cache: ResponseCache | None) -> None:
        self.cache = cache
        self.callers: dict[tuple[str, str | None], ModelCaller] = {}
        self._token: Token[Callable[[str, str | None], Generate]] | None = None

    def __call__(self, spec: str, base_url: str | None = None) -> ModelCaller:
        key = (spec, base_url)
        if key not in self.callers:
            self.callers[key] = ModelCaller(make_backend(BackendSpec.parse(spec, base_url=base_url)), self.cache)
        return self.callers[key]

    @property
    def model_calls(self) -> int:
        return sum(caller.model_calls for caller in self.callers.values())

    async def __aenter__(self) -> ModelPool:
        self._token = other_models.set(self)
        return self

    async def __aexit__(self, kind: type[BaseException] | None, err: BaseException | None,
                        tb: TracebackType | None) -> None:
        if self._token is not None:
            other_models.reset(self._token)
        failures = []
        for caller in self.callers.values():  # every backend is closed even when one fails to
            try:
                await caller.backend.aclose()
            except Exception as failure:
                failures.append(failure)
        if failures:
            raise failures[0]


@dataclass
class CallLog:
    """Per-sample bookkeeping around a ``ModelCaller``: the first request, call counts, the token cap."""

    caller: ModelCaller
    max_tokens: int | None = None
    first: Request | None = None
    calls: int = 0
    cached: int = 0

    async def __call__(self, request: Request) -> Response:
        if self.max_tokens is not None and request.params.max_tokens > self.max_tokens:
            request = replace(request, params=replace(request.params, max_tokens=self.max_tokens))
        if self.first is None:
            self.first = request
        self.calls += 1
        response = await self.caller(request)
        self.cached += response.cached
        return response
