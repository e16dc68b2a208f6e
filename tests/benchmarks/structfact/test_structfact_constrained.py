"""``answer=constrained``: direct answers are requested as one option letter; CoT replies stay free."""

from __future__ import annotations

import asyncio

from structbench.backends.base import Request, Response
from structbench.backends.oracle import OracleBackend
from structbench.benchmarks.structfact import BENCHMARK as STRUCTFACT
from structbench.contract.benchmark import bind_sample
from structbench.data.datasets import DataContext


def _first_requests(options: dict[str, str]) -> dict[str, Request]:
    bench = STRUCTFACT({"tables": "synthetic", "per_task": "1", **options})
    sample = next(iter(bench.load("generated", DataContext(offline=True), seed=0, limit=1)))
    first: dict[str, Request] = {}

    for name, strategy in bench.strategies().items():
        async def generate(request: Request, name: str = name) -> Response:
            first.setdefault(name, request)
            return await OracleBackend().generate(request)

        async def run() -> None:
            bind_sample(bench, sample)
            await strategy.run(sample, generate)  # noqa: B023 (awaited before the loop moves on)

        asyncio.run(run())
    return first


def test_constrained_answers_offer_the_option_letters_to_direct_strategies_only() -> None:
    constrained = _first_requests({"answer": "constrained", "option_map": "1"})
    direct = {"zero_shot", "few_shot", "without_data", "shuffled", "format_instructions", "self_consistency",
              "enhanced_context"}
    assert {name for name, r in constrained.items() if r.params.choices} == direct
    assert all(r.params.choices == ("A", "B", "C") for name, r in constrained.items() if name in direct)
    free = _first_requests({})
    assert not any(r.params.choices for r in free.values())  # the paper's protocol: free replies
