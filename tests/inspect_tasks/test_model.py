"""Inspect's model API as structbench's ``Generate``: the usage Inspect reports becomes structbench's counts, the
prompt cache's reads and writes counted in the prompt."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from extras import require_extra

require_extra("inspect_ai", "inspect")

from inspect_ai.model import ChatMessage, GenerateConfig, ModelOutput, ModelUsage, get_model  # noqa: E402

from structbench.backends.base import GenerationParams, Request  # noqa: E402
from structbench.inspect_tasks.model import InspectGenerate, summed_counts, usage_counts  # noqa: E402

CACHED = ModelUsage(input_tokens=40, output_tokens=30, total_tokens=170, input_tokens_cache_read=60,
                    input_tokens_cache_write=40, reasoning_tokens=20)


@pytest.mark.parametrize(("usage", "counts"), [
    (CACHED, (140, 30, 20, 60)),
    (ModelUsage(input_tokens=100, output_tokens=5, total_tokens=105), (100, 5, None, None)),
    (ModelUsage(input_tokens=10, output_tokens=5, total_tokens=25, input_tokens_cache_write=10), (20, 5, None, None)),
    (ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15, input_tokens_cache_read=0), (10, 5, None, 0)),
    (ModelUsage(input_tokens=10, output_tokens=5, input_tokens_cache_read=-3), (None, 5, None, None)),
    (None, (None, None, None, None)),
])
def test_inspects_usage_counts_the_whole_prompt(usage: ModelUsage | None, counts: tuple[int | None, ...]) -> None:
    assert usage_counts(usage) == counts


def test_a_count_unknown_for_one_call_is_unknown_in_the_sum() -> None:
    assert summed_counts([(140, 30, 20, 60), (100, 5, None, None)]) == (240, 35, None, None)
    assert summed_counts([(140, 30, 20, 60), (140, 30, 20, 60)]) == (280, 60, 40, 120)


def _generate(usage: ModelUsage | None, n: int) -> Any:
    """``InspectGenerate`` over Inspect's mock model (one choice a call) replying with ``usage``."""

    def reply(messages: list[ChatMessage], tools: Any, tool_choice: Any, config: GenerateConfig) -> ModelOutput:
        output = ModelOutput.from_content(model="mockllm", content="A")
        output.usage = usage
        return output

    calls = InspectGenerate(get_model("mockllm/model", custom_outputs=reply))
    request = Request(prompt="q", params=GenerationParams(n=n))
    return calls, asyncio.run(calls(request))


def test_each_calls_cached_prompt_is_counted_in_the_response() -> None:
    calls, response = _generate(CACHED, n=2)
    assert calls.calls == 2
    assert (response.prompt_tokens, response.completion_tokens, response.reasoning_tokens,
            response.cached_tokens) == (280, 60, 40, 120)
