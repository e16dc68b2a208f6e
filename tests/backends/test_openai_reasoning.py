"""The OpenAI backend and reasoning models: every reply shape a server sends a thought in comes back as the answer
with the thought apart; the run's reasoning settings reach the request body."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from structbench.backends.base import GenerationParams, Message, Request, Response
from structbench.backends.openai_compat import OpenAIBackend
from structbench.testing.reasoning_server import SHAPES, ReasoningServer

THOUGHT = "The answer is B. Answer: B) the claim is false"


def _ask(shape: str, n: int = 1, **params: Any) -> Response:
    server = ReasoningServer(shape, reply="A", thought=lambda answer: THOUGHT)

    async def go() -> Response:
        srv = await server.serve()
        client = OpenAIBackend("m", base_url=f"http://127.0.0.1:{srv.sockets[0].getsockname()[1]}/v1", max_retries=0)
        try:
            return await client.generate(Request.chat("q?", n=n, **params))
        finally:
            await client.aclose()
            srv.close()
            await srv.wait_closed()

    return asyncio.run(go())


EXPECTED = {
    "plain": ("A", None, False),
    "inline": ("A", THOUGHT, False),
    "opened": ("A", THOUGHT, False),
    "reasoning_content": ("A", THOUGHT, False),
    "reasoning": ("A", THOUGHT, False),
    "both": ("A", f"{THOUGHT}\n\n{THOUGHT}", False),
    "nested": ("A", f"{THOUGHT}\n{THOUGHT}\nstill thinking", False),
    "unbalanced": ("A", f"{THOUGHT}\n{THOUGHT}", False),
    "cutoff": ("", THOUGHT, True),
    "cutoff-field": ("", THOUGHT, True),
    "unclosed": ("", f"{THOUGHT}{THOUGHT}\nA", True),
    "only-thought": ("", THOUGHT, False),
    "cutoff-opened": (THOUGHT, None, False),  # without --thought-opened nothing shows it is a thought
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_every_shape_gives_the_answer_and_the_thought_apart(shape: str) -> None:
    response = _ask(shape, n=2)
    assert [(c.text, c.reasoning, c.reasoning_cut_off) for c in response.choices] == [EXPECTED[shape]] * 2
    assert all(c.reasoning_tokens is None for c in response.choices)  # usage counts two choices' thoughts together


def test_the_usage_counts_a_single_replys_thought_and_opened_cuts_it_off() -> None:
    assert _ask("reasoning_content").choices[0].reasoning_tokens == len(THOUGHT.split())
    assert _ask("inline").choices[0].reasoning_tokens is None  # the server does not count an inline thought
    choice = _ask("cutoff-opened", thought_opened=True).choices[0]
    assert (choice.text, choice.reasoning, choice.reasoning_cut_off) == ("", THOUGHT, True)


def _parse(message: dict[str, Any], finish: str = "stop", usage: dict[str, Any] | None = None) -> Any:
    data = {"choices": [{"message": message, "finish_reason": finish}], "usage": usage or {}}
    return OpenAIBackend._parse(data, chat=True).choices[0]


def test_thinking_content_parts_and_hidden_reasoning() -> None:
    parts = [{"type": "thinking", "thinking": [{"type": "text", "text": "B?"}]}, {"type": "text", "text": "A"}]
    choice = _parse({"content": parts})
    assert (choice.text, choice.reasoning) == ("A", "B?")
    hidden = {"completion_tokens": 64, "completion_tokens_details": {"reasoning_tokens": 64}}
    for content in ("", None):  # OpenAI's o-series spent the whole budget on a thought it does not show
        choice = _parse({"content": content}, "length", hidden)
        assert (choice.text, choice.reasoning, choice.reasoning_tokens, choice.reasoning_cut_off) == ("", None, 64,
                                                                                                      True)
    answered = _parse({"content": "A"}, "stop", hidden)
    assert (answered.text, answered.reasoning, answered.reasoning_tokens, answered.reasoning_cut_off) == ("A", None, 64,
                                                                                                          False)
    unthinking = {"completion_tokens": 1, "completion_tokens_details": {"reasoning_tokens": 0}}
    assert _parse({"content": "A"}, "stop", unthinking).reasoning_tokens is None


@pytest.mark.parametrize("content", ["", None])
def test_hidden_reasoning_cuts_off_every_choice_that_ran_out(content: str | None) -> None:
    """Self-consistency's n draws: the usage counts their hidden thoughts together, and each draw that spent the
    budget with no answer is cut off, as one draw alone is (a null content is never an unusable reply)."""
    raw = [{"index": i, "message": {"content": content if i else "A"}, "finish_reason": "length" if i else "stop"}
           for i in range(5)]
    usage = {"completion_tokens": 320, "completion_tokens_details": {"reasoning_tokens": 300}}
    choices = OpenAIBackend._parse({"choices": raw, "usage": usage}, chat=True).choices
    assert [(c.text, c.reasoning_cut_off, c.reasoning_tokens) for c in choices] == [("A", False, None)] + [
        ("", True, None)] * 4


def test_reasoning_effort_and_template_arguments_are_sent() -> None:
    params = GenerationParams(reasoning_effort="high", chat_template_args={"enable_thinking": True})
    path, body = OpenAIBackend("m", base_url="http://127.0.0.1:1/v1")._body(
        Request(messages=(Message("user", "q"),), params=params))
    assert path == "/chat/completions"
    assert body["reasoning_effort"] == "high" and body["chat_template_kwargs"] == {"enable_thinking": True}
    _, plain = OpenAIBackend("m", base_url="http://127.0.0.1:1/v1")._body(Request.chat("q"))
    assert "reasoning_effort" not in plain
