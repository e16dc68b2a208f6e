"""Function tools through the backends that have them: what goes out (OpenAI's tools and tool turns, Anthropic's tools,
tool_use and tool_result blocks), what comes back (tool calls), and how they key and fill the response cache."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from structbench.backends.anthropic import AnthropicBackend, api_messages
from structbench.backends.base import Choice, Message, Request, Response, ToolCall, ToolSpec, cache_key
from structbench.backends.openai_compat import OpenAIBackend
from structbench.testing.batch_server import BatchServer, serve_batches_in_thread
from structbench.testing.openai_server import MockOpenAIServer, serve_in_thread

SQL = ToolSpec("sql", "Run one SQL query.", {"type": "object", "properties": {"query": {"type": "string"}},
                                             "required": ["query"]})
ARGS = {"sql": {"query": "SELECT 1 AS one"}}


class Recording(MockOpenAIServer):
    """A tool model that remembers every chat body it was sent."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(tool_model=True, tool_arguments=ARGS, tool_answers={"claim 7": "A"}, reply="no tool", **kwargs)
        self.bodies: list[dict[str, Any]] = []

    def completion(self, path: str, request: dict[str, Any], size: int = 0) -> dict[str, object]:
        self.bodies.append(request)
        return super().completion(path, request, size)


async def _conversation(backend: Any) -> tuple[Response, Response]:
    """Ask, run the call the model makes (by hand), hand back its result, get the answer."""
    first = Request(messages=(Message("user", "Check claim 7."),), tools=(SQL,))
    called = await backend.generate(first)
    call = called.choices[0].tool_calls[0]
    second = Request(messages=(*first.messages, Message("assistant", called.text, tool_calls=(call,)),
                               Message("tool", "one\n1\n(1 row)", tool_call_id=call.id)), tools=(SQL,))
    return called, await backend.generate(second)


def test_openai_sends_function_tools_and_reads_tool_calls() -> None:
    server = Recording()
    with serve_in_thread(server) as url:
        called, answered = asyncio.run(_conversation(OpenAIBackend("m", base_url=url)))
    call = called.choices[0].tool_calls[0]
    assert (call.name, json.loads(call.arguments)) == ("sql", ARGS["sql"]) and called.text == ""
    assert called.choices[0].finish_reason == "tool_calls"
    assert server.bodies[0]["tools"] == [{"type": "function", "function": SQL.to_json()}]
    assert server.bodies[1]["messages"][1:] == [
        {"role": "assistant", "content": "", "tool_calls": [call.to_json()]},
        {"role": "tool", "content": "one\n1\n(1 row)", "tool_call_id": call.id}]
    assert answered.text == "A" and server.tool_results == ["one\n1\n(1 row)"]


def test_anthropic_sends_tools_and_tool_results_as_blocks() -> None:
    server = Recording()
    with serve_batches_in_thread(BatchServer(server)) as url:
        backend = AnthropicBackend("claude-x", base_url=url, api_key="sk-ant-test")
        called, answered = asyncio.run(_conversation(backend))
    call = called.choices[0].tool_calls[0]
    assert (call.name, json.loads(call.arguments)) == ("sql", ARGS["sql"])
    assert server.bodies[0]["tools"][0]["function"]["parameters"] == SQL.parameters  # input_schema went out
    assert answered.text == "A" and server.tool_results == ["one\n1\n(1 row)"]


def test_anthropic_turns_merge_consecutive_results_into_one_user_turn() -> None:
    calls = (ToolCall("a", "sql", '{"query": "SELECT 1"}'), ToolCall("b", "sql", "not json"))
    turns = api_messages((Message("system", "s"), Message("user", "q"), Message("assistant", "", tool_calls=calls),
                          Message("tool", "r1", tool_call_id="a"), Message("tool", "r2", tool_call_id="b")))
    assert turns == [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "a", "name": "sql", "input": {"query": "SELECT 1"}},
            {"type": "tool_use", "id": "b", "name": "sql", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": "r1"},
                                     {"type": "tool_result", "tool_use_id": "b", "content": "r2"}]},
    ]


def test_tools_key_the_cache_and_tool_calls_survive_it() -> None:
    backend = OpenAIBackend("m", base_url="http://127.0.0.1:9/v1")
    plain = Request(messages=(Message("user", "q"),))
    assert cache_key(backend, plain) != cache_key(backend, Request(messages=plain.messages, tools=(SQL,)))
    assert plain.prompt_payload() == [{"role": "user", "content": "q"}]  # a request without tools keys as before
    response = Response(choices=(Choice(text="", tool_calls=(ToolCall("c", "sql", '{"query": "x"}'),)),))
    assert Response.from_json(json.loads(json.dumps(response.to_json()))) == response
