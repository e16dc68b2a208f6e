"""Test helpers: ``generate`` functions that stand in for the runner's model binding."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from structbench.backends.base import Choice, Request, Response
from structbench.benchmarks.structfact import StructFact
from structbench.contract.benchmark import Attempt, Strategy
from structbench.data.sample import Sample

Generate = Callable[[Request], Awaitable[Response]]


def oracle_generate(bench: StructFact, sample: Sample) -> Generate:
    """Answers every request as the oracle backend would."""

    async def generate(request: Request) -> Response:
        text = bench.oracle(sample, request)
        return Response(choices=tuple(Choice(text=text) for _ in range(request.params.n)))

    return generate


def scripted_generate(replies: list[str], seen: list[Request]) -> Generate:
    """Records requests and answers with ``replies`` in turn (``n`` copies of each)."""
    queue = list(replies)

    async def generate(request: Request) -> Response:
        seen.append(request)
        text = queue.pop(0) if queue else ""
        return Response(choices=tuple(Choice(text=text) for _ in range(request.params.n)))

    return generate


def run(strategy: Strategy, sample: Sample, generate: Generate) -> Attempt:
    return asyncio.run(strategy.run(sample, generate))


def user_text(request: Request) -> str:
    """The last user message of a chat request."""
    assert request.messages is not None
    return request.messages[-1].content
