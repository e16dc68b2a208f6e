"""Reasoning models through Inspect: the thought Inspect's providers put in reasoning content parts, or leave inline
between think tags, is kept apart from the answer the parser reads; structbench's own backends as an Inspect
provider hand their thoughts to Inspect as reasoning parts."""

from __future__ import annotations

import asyncio

from extras import require_extra

require_extra("inspect_ai", "inspect")

from inspect_ai.model import (  # noqa: E402
    ChatCompletionChoice,
    ChatMessageAssistant,
    ChatMessageUser,
    ContentReasoning,
    ContentText,
    GenerateConfig,
    ModelOutput,
)

from structbench.backends.base import GenerationParams  # noqa: E402
from structbench.backends.mock import MockBackend  # noqa: E402
from structbench.inspect_tasks.model import _choices  # noqa: E402
from structbench.inspect_tasks.provider import StructbenchModel  # noqa: E402


def _output(*choices: tuple[object, str]) -> ModelOutput:
    return ModelOutput(model="m", choices=[
        ChatCompletionChoice(message=ChatMessageAssistant(content=content), stop_reason=stop)  # type: ignore[arg-type]
        for content, stop in choices])


def test_inspects_reasoning_parts_and_inline_thoughts_are_kept_apart() -> None:
    output = _output(
        ([ContentReasoning(reasoning="B? no."), ContentText(text="A")], "stop"),
        ("<think>B? no.</think>\nA", "stop"),
        ("<think>B? so", "max_tokens"),
        ("A", "stop"),
    )
    got = [(c.text, c.reasoning, c.reasoning_cut_off) for c in _choices(output, GenerationParams())]
    assert got == [("A", "B? no.", False), ("A", "B? no.", False), ("", "B? so", True), ("A", None, False)]


def test_the_structbench_provider_hands_thoughts_to_inspect_as_reasoning_parts() -> None:
    model = StructbenchModel("mock")
    model.backend = MockBackend(default="<think>B? no.</think>A")
    output = asyncio.run(model.generate([ChatMessageUser(content="q")], [], "none", GenerateConfig()))
    message = output.choices[0].message
    assert message.text == "A"
    assert [p.reasoning for p in message.content if isinstance(p, ContentReasoning)] == ["B? no."]
