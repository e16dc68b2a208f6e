"""Generic strategies: one call, k samples with a vote, and answer-then-refine."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from structbench.backends.base import Choice, Request
from structbench.contract.benchmark import AS_WRITTEN, DIRECT, REASONED, AnswerFormat, Attempt, Generate, Strategy
from structbench.data.sample import Sample

PromptBuilder = Callable[[Sample], Request]
"""Builds the first request for a sample."""

FollowUp = Callable[[Sample, str], str]
"""Builds the next user turn from the sample and the model's previous reply."""


def as_written(*choices: Choice) -> dict[str, Any]:
    """``Attempt.artifacts`` of the replies as the model wrote them, where a thought was taken out of any: what a
    paper's released reader reads (``Attempt.as_written``; one reply's text, or a list for several), never
    structbench's parsers. Empty when no reply had an inline thought."""
    if all(c.raw is None for c in choices):
        return {}
    written = [c.as_written for c in choices]
    return {AS_WRITTEN: written[0] if len(choices) == 1 else written}


def first_token_confidence(choice: Choice) -> float | None:
    """Probability of the first generated token, when the backend returned logprobs."""
    if not choice.logprobs:
        return None
    return math.exp(choice.logprobs[0].logprob)


class SingleTurn(Strategy):
    """One request built by ``build``; the reply is the attempt."""

    def __init__(
        self, name: str, build: PromptBuilder, description: str = "", *, answer: AnswerFormat = DIRECT
    ) -> None:
        self.name = name
        self.build = build
        self.description = description
        self.answer = answer

    async def run(self, sample: Sample, generate: Generate) -> Attempt:
        response = await generate(self.build(sample))
        choice = response.choices[0]
        return Attempt(output=choice.text, confidence=first_token_confidence(choice), artifacts=as_written(choice))


class SelfConsistency(Strategy):
    """Draw ``k`` samples at ``temperature`` in one request; the benchmark's scorer takes the majority."""

    several = True

    def __init__(
        self, name: str, build: PromptBuilder, k: int = 5, temperature: float = 0.7, description: str = "", *,
        answer: AnswerFormat = DIRECT,
    ) -> None:
        self.name = name
        self.build = build
        self.k = k
        self.temperature = temperature
        self.description = description
        self.answer = answer

    async def run(self, sample: Sample, generate: Generate) -> Attempt:
        base = self.build(sample)
        request = replace(base, params=replace(base.params, n=self.k, temperature=self.temperature))
        response = await generate(request)
        texts = [c.text for c in response.choices]
        return Attempt(output=texts[0] if texts else "", outputs=texts, artifacts=as_written(*response.choices))


class SelfRefine(Strategy):
    """Answer, then ``rounds`` follow-up turns (one by default) asking the model to check and refine."""

    def __init__(
        self, name: str, build: PromptBuilder, follow_up: FollowUp, rounds: int = 1, description: str = "", *,
        answer: AnswerFormat = REASONED,
    ) -> None:
        self.name = name
        self.build = build
        self.follow_up = follow_up
        self.rounds = rounds
        self.description = description
        self.answer = answer

    async def run(self, sample: Sample, generate: Generate) -> Attempt:
        request = self.build(sample)
        response = await generate(request)
        first = response.text
        for _ in range(self.rounds):
            request = request.with_reply(response.text, self.follow_up(sample, response.text))
            response = await generate(request)
        return Attempt(output=response.text,
                       artifacts={"initial_output": first, **as_written(*response.choices[:1])})
