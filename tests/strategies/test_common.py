"""The generic strategies keep a reply as the model wrote it where a thought was taken out of it."""

from __future__ import annotations

import asyncio

from structbench.backends.base import GenerationParams, Message, Request, Response, reply_choice
from structbench.contract.benchmark import AS_WRITTEN
from structbench.data.sample import LabelGold, Sample
from structbench.strategies.common import SelfConsistency, SelfRefine, SingleTurn

SAMPLE = Sample(id="s", benchmark="b", variant="v", task="t", question="?", gold=LabelGold(label="A"))


def build(sample: Sample) -> Request:
    return Request(messages=(Message("user", sample.question),), params=GenerationParams(max_tokens=32))


def replying(*texts: str):
    async def generate(request: Request) -> Response:
        return Response(choices=tuple(reply_choice(t, request.params) for t in texts))
    return generate


def test_a_reply_with_an_inline_thought_is_kept_as_written_beside_its_answer() -> None:
    """The answer is what structbench's parsers read; the reply as written is what a paper's released reader read."""
    attempt = asyncio.run(SingleTurn("zero_shot", build).run(SAMPLE, replying("<think>B?</think>A")))
    assert (attempt.output, attempt.artifacts[AS_WRITTEN], attempt.as_written) == ("A", "<think>B?</think>A",
                                                                                   "<think>B?</think>A")
    plain = asyncio.run(SingleTurn("zero_shot", build).run(SAMPLE, replying("A")))
    assert AS_WRITTEN not in plain.artifacts and plain.as_written == "A"


def test_several_replies_are_kept_as_written_in_order_and_a_refined_one_is_its_last() -> None:
    drawn = asyncio.run(SelfConsistency("sc", build, k=2).run(SAMPLE, replying("<think>x</think>A", "B")))
    assert (drawn.outputs, drawn.artifacts[AS_WRITTEN]) == (["A", "B"], ["<think>x</think>A", "B"])
    refined = asyncio.run(SelfRefine("sr", build, lambda s, r: "check").run(SAMPLE, replying("<think>y</think>C")))
    assert (refined.output, refined.artifacts[AS_WRITTEN]) == ("C", "<think>y</think>C")
