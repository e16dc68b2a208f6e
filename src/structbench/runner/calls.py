"""The ``generate`` a strategy receives: backend + response cache + in-flight de-duplication.

``ModelPool`` does the same for models other than the run's own (an LLM judge), by spec.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from contextvars import ContextVar, Token
from dataclasses import dataclass, field, replace
from types import TracebackType
from typing import TYPE_CHECKING

from structbench.backends.base import (
    Backend,
    BackendError,
    Choice,
    Request,
    Response,
    cache_fields,
    cache_key,
    unusable_reason,
)
from structbench.backends.factory import BackendSpec, make_backend
from structbench.backends.usage import CallUsage
from structbench.contract.benchmark import Generate, ToolSupport, other_models
from structbench.runner.cache import CacheReadError, CacheWriteError, ResponseStore
from structbench.runner.control import RunControl
from structbench.runner.settings import RequestSettings
from structbench.runner.spending import Paid
from structbench.runner.thoughts import UnsplitThoughts, never_closed

if TYPE_CHECKING:
    from structbench.runner.batch.gate import StepGate

current_epoch: ContextVar[int] = ContextVar("current_epoch", default=0)
"""The epoch of the sample being answered (``--epochs``): part of the cache key of every call made for it, the
run's own and a judge's, so a repeat is a new call (as Inspect keys its cache by epoch)."""

call_usage_log: ContextVar[list[CallUsage] | None] = ContextVar("call_usage_log", default=None)
"""Where the calls made for the sample being answered report their usage (``CallLog.usage``): every caller's, the
run's own model and any other (a judge), answered by the model or from the response cache."""


class ModelCaller:
    """Sends requests to one backend, answering repeats from the cache and joining identical in-flight calls.

    Every reply is checked before it is cached or used (an unusable one is a ``BackendError``), and every
    call's outcome goes to the run's ``RunControl`` (the circuit breaker, cache failures)."""

    def __init__(self, backend: Backend, cache: ResponseStore | None, control: RunControl | None = None) -> None:
        self.backend = backend
        self.cache = cache if backend.cacheable else None
        self.control = control if control is not None else RunControl()
        self._inflight: dict[str, asyncio.Future[Response]] = {}
        self.model_calls = 0
        self.gate: StepGate | None = None
        """Set when the backend answers in batches (``--batch``): told when a sample's call waits for the model, so
        the batch goes out once every sample waits (``structbench.runner.batch``)."""
        self.batched = bool(getattr(backend, "batched", False))
        self.unsplit = UnsplitThoughts(self.control.notify)
        """Notes, once, a reply whose answer begins with a thinking tag the run does not split on."""

    async def __call__(self, request: Request) -> Response:
        with self.gate.call() if self.gate is not None else contextlib.nullcontext():
            response = await self._answer(request)
        self.unsplit.see(response.choices, request.params.think_tags)
        log = call_usage_log.get()
        if log is not None:
            log.append(CallUsage.of(self.backend, response, batch=self.batched))
        return response

    async def _answer(self, request: Request) -> Response:
        cache = self.cache if self.control.cache_usable else None
        if cache is None:
            return (await self._generate(request))[0]
        fields = cache_fields(self.backend, request, epoch=current_epoch.get())
        key = cache_key(self.backend, request, fields)
        try:
            hit = await cache.aget(key)
        except CacheReadError as err:
            self.control.cache_failed(err)  # raises unless the user chose to go on without the cache
            hit = None
        if hit is not None:
            return replace(hit, cached=True)
        pending = self._inflight.get(key)
        if pending is not None:
            with self.gate.waiting() if self.gate is not None else contextlib.nullcontext():
                return replace(await asyncio.shield(pending), cached=True)
        future: asyncio.Future[Response] = asyncio.get_running_loop().create_future()
        self._inflight[key] = future
        try:
            response, paid = await self._generate(request, key)
            await self._store(cache, key, fields, response, paid)
            future.set_result(response)
            return response
        except BaseException as err:
            future.set_exception(err)
            future.exception()  # mark retrieved: waiters re-raise it, nobody else must
            raise
        finally:
            del self._inflight[key]

    async def _generate(self, request: Request, key: str | None = None) -> tuple[Response, Paid | None]:
        """One model call, checked, counted by the circuit breaker and by the backend's live counters, and what the
        response cache stores with its answer under ``key`` (``RunControl.spend``). A prompt that does not fit the
        model's context is the sample's, not the server's fault: it resets the breaker's count like an answer."""
        self.control.before_call()  # the budget: no call goes out once it is reached
        self.model_calls += 1
        stats = self.backend.stats
        ticket = stats.begin()
        try:
            response = await self.backend.generate(request)
            problem = unusable_reason(response)
            if problem is not None:
                raise BackendError(f"{self.backend.backend}:{self.backend.model}: unusable reply: {problem}",
                                   cause="unusable reply")
        except BackendError as err:
            stats.end(ticket)
            if err.prompt_too_long:
                self.control.call_succeeded()
            else:
                self.control.call_failed(self.backend.model, err)
            raise
        except BaseException:
            stats.end(ticket)
            raise
        stats.end(ticket, response.completion_tokens, answered=True)
        if self.batched:  # cached with the answer: a later run reusing it prices it as it was paid
            response = replace(response, batch=True)
        self.control.call_succeeded()
        return response, self.control.spend(CallUsage.of(self.backend, response, batch=self.batched), key)

    async def _store(self, cache: ResponseStore, key: str, fields: bytes, response: Response,
                     paid: Paid | None = None) -> None:
        """Commit ``response`` (with who ``paid`` for it) before anyone uses it; if the cache fails, keep it as the
        run's policy says."""
        if self.control.cache_usable:
            try:
                await cache.aput(key, self.backend.model, fields, response, paid)
                return
            except CacheWriteError as err:
                self.control.cache_failed(err)
        self.control.keep_unstored(key, self.backend.model, fields, response)


class ModelPool:
    """Callers for models other than the run's own, each built on first use and sharing one response cache.

    ``async with`` makes the pool what ``benchmark.other_model`` answers from, and closes its backends
    at the end, so a judge's calls are cached like the run's own and nothing is left open.
    """

    def __init__(self, cache: ResponseStore | None, control: RunControl | None = None) -> None:
        self.cache = cache
        self.control = control if control is not None else RunControl()
        self.callers: dict[tuple[str, str | None], ModelCaller] = {}
        self._token: Token[Callable[[str, str | None], Generate]] | None = None

    def __call__(self, spec: str, base_url: str | None = None) -> ModelCaller:
        key = (spec, base_url)
        if key not in self.callers:
            backend = make_backend(BackendSpec.parse(spec, base_url=base_url))
            self.callers[key] = ModelCaller(backend, self.cache, self.control)
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
    """Per-sample bookkeeping around a ``ModelCaller``: the first request, call counts, every reply's choices (their
    thoughts), the run's request settings (token cap, system prompt, chat-template arguments, sampling, reasoning)."""

    caller: ModelCaller
    settings: RequestSettings | None = None
    epoch: int = 0
    first: Request | None = None
    calls: int = 0
    cached: int = 0
    replies: list[Choice] = field(default_factory=list)
    """Every choice the strategy received, in order."""
    unclosed: int = 0
    """Of them, those that ended inside a thought the model never closed (``runner.thoughts.never_closed``)."""
    usage: list[CallUsage] = field(default_factory=list)
    """Every call made for the sample (``call_usage_log``), the strategy's and any other model's."""

    @property
    def tool_support(self) -> ToolSupport:
        """Whether the backend takes function tools, and the run's ``--max-turns`` and ``--turn-limit``
        (``benchmark.tool_support``)."""
        settings = self.settings
        return ToolSupport(native=self.caller.backend.supports_tools,
                           max_turns=settings.max_turns if settings is not None else None,
                           turn_limit=settings.turn_limit if settings is not None else None)

    async def __call__(self, request: Request) -> Response:
        if self.settings is not None:
            request = self.settings.apply(request, self.epoch)
        if self.first is None:
            self.first = request
        self.calls += 1
        response = await self.caller(request)
        self.cached += response.cached
        self.replies.extend(response.choices)
        self.unclosed += sum(never_closed(c, request.params.stop) for c in response.choices)
        return response
