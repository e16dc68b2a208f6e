"""The response cache's key (``cache_fields``): what is sent keys it, and the keys of requests that sent the same as
before never change (an existing cache stays valid)."""

from __future__ import annotations

import orjson

from structbench.backends.anthropic import AnthropicBackend
from structbench.backends.base import GenerationParams, Message, Request, ToolCall, ToolSpec, cache_fields, cache_key
from structbench.backends.openai_compat import OpenAIBackend

SQL = ToolSpec("sql", "Run one SQL query.", {"type": "object", "properties": {"query": {"type": "string"}}})
CALL = ToolCall("toolu_1", "sql", '{"query": "SELECT 1"}')
PLAIN = Request.chat("Is 4 in the table?", system="Answer A or B.", max_tokens=7)
PROMPT = Request(prompt="Q: 2+2?\nA:")
LOOP = Request(messages=(Message("system", "Be brief."), Message("user", "Who won most?"),
                         Message("assistant", "Let me look.", tool_calls=(CALL,)),
                         Message("tool", "team\nBees", tool_call_id="toolu_1")),
               params=GenerationParams(max_tokens=2112, reasoning_budget=2048), tools=(SQL,))
"""A tool loop's second turn whose assistant turn carries no replay (no thinking)."""


def _thinking(thought: str, signature: str) -> tuple[dict[str, object], ...]:
    """An assistant turn's blocks as Anthropic returned them: a signed thought, the text, the call."""
    return ({"type": "thinking", "thinking": thought, "signature": signature},
            {"type": "text", "text": "Let me look."},
            {"type": "tool_use", "id": "toolu_1", "name": "sql", "input": {"query": "SELECT 1"}})


def _replayed(blocks: tuple[dict[str, object], ...]) -> Request:
    messages = tuple(Message(m.role, m.content, m.tool_calls, m.tool_call_id, replay=blocks if m.role == "assistant"
                             else None) for m in LOOP.messages or ())
    return Request(messages=messages, params=LOOP.params, tools=LOOP.tools)


def test_keys_of_requests_without_a_replay_are_the_ones_main_computed() -> None:
    """Pinned: the keys structbench computed for these requests before replays keyed the cache (commit d27ceb8)."""
    anthropic = AnthropicBackend("claude-x", base_url="http://127.0.0.1:9", api_key=None)
    openai = OpenAIBackend("m", base_url="http://127.0.0.1:9/v1")
    assert [cache_key(b, r) for b in (anthropic, openai) for r in (PLAIN, PROMPT, LOOP)] == [
        "c4f9fb7c3cad678500acbd4b40f446959fc8bdba1047a7d9950e4f4780cc70fa",
        "8ae79dd9742f3f9478b2ac9440c43e1cefd8f052506e567b1d265e29e95993c3",
        "ff69090ffc4990647e9b410d23d3c84a073077bbc11348c74c6586ba9203ce50",
        "91158333d81076859992c7a3b249646fe5ba1edaec66e37b5a2ab009351e4949",
        "4fab65c4c57a02ccbd74db0ebbf1bd22fb84ba8642bdd3c794efff85d4d157a4",
        "6d9aa7b0a1cafd73e0be8dff6e76877b6225e60b1d8d91d39876f2ecb9682a40",
    ]
    assert "replays" not in orjson.loads(cache_fields(anthropic, LOOP))


def test_requests_that_differ_only_in_a_replayed_turn_have_other_keys() -> None:
    """The same visible text and call, another thought or only another signature: another request sent, so another
    reply; each keys as the blocks sent, whichever order their fields came in."""
    backend = AnthropicBackend("claude-x", base_url="http://127.0.0.1:9", api_key=None)
    first = _replayed(_thinking("Ants, surely.", "sig-1"))
    keys = {cache_key(backend, r) for r in (LOOP, first, _replayed(_thinking("Bees, surely.", "sig-2")),
                                            _replayed(_thinking("Ants, surely.", "sig-3")))}
    assert len(keys) == 4
    assert first.prompt_payload() == LOOP.prompt_payload()  # exports show the turn's text and calls, as before
    reordered = tuple(dict(reversed(list(b.items()))) for b in _thinking("Ants, surely.", "sig-1"))
    assert cache_key(backend, _replayed(reordered)) == cache_key(backend, first)
    fields = orjson.loads(cache_fields(backend, first))
    assert fields["replays"] == [None, None, list(_thinking("Ants, surely.", "sig-1")), None]
