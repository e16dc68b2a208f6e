"""The anthropic backend through the official SDK, against a loopback Messages API: the request it sends, the answer
apart from the thought, the usage with the prompt cache, and its failures."""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import re
import sqlite3
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from faults import child_pythonpath
from structbench.backends.anthropic import AnthropicBackend, from_spec
from structbench.backends.base import PROMPT_TOO_LONG, BackendError, Message, Request, Response, cache_fields, cache_key
from structbench.backends.factory import BackendSpec
from structbench.core.errors import UsageError
from structbench.testing.batch_server import BatchServer, serve_batches_in_thread
from structbench.testing.openai_server import MockOpenAIServer
from structbench.testing.reasoning_server import ReasoningServer

CACHE_USAGE = {"input_tokens": 20, "cache_read_input_tokens": 70, "cache_creation_input_tokens": 10,
               "output_tokens": 42, "output_tokens_details": {"thinking_tokens": 40}}


class Recording(MockOpenAIServer):
    """Remembers the chat bodies the Messages API turned into, to see what the backend sent."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.bodies: list[dict[str, Any]] = []

    def completion(self, path: str, request: dict[str, Any], size: int = 0) -> dict[str, object]:
        self.bodies.append(request)
        return super().completion(path, request, size)


@pytest.fixture
def messages_api() -> Iterator[tuple[BatchServer, str]]:
    server = BatchServer(Recording(reply="B"), anthropic_usage=CACHE_USAGE)
    with serve_batches_in_thread(server) as url:
        yield server, url


def generate(url: str, request: Request, **kwargs: Any) -> Any:
    async def main() -> Any:
        backend = AnthropicBackend("claude-x", base_url=url, api_key="sk-ant-test-0123456789abcdef", **kwargs)
        try:
            return await backend.generate(request)
        finally:
            await backend.aclose()

    return asyncio.run(main())


def test_system_turns_and_n_replies_and_usage_with_the_cache(messages_api: tuple[BatchServer, str]) -> None:
    server, url = messages_api
    request = Request.chat("Is 4 in the table?", system="Answer A or B.", n=3, max_tokens=7, stop=("\n",))
    response = generate(url, request)
    assert [c.text for c in response.choices] == ["B", "B", "B"] and server.stats.direct == 3  # n calls
    sent = server.answers.bodies[0]  # type: ignore[attr-defined]
    assert sent["messages"] == [{"role": "system", "content": "Answer A or B."},
                                {"role": "user", "content": "Is 4 in the table?"}]
    assert sent["max_tokens"] == 7
    # prompt tokens count the whole prompt: uncached, read from and written to the cache
    assert (response.prompt_tokens, response.cached_tokens) == (3 * 100, 3 * 70)
    assert (response.completion_tokens, response.reasoning_tokens) == (3 * 42, 3 * 40)


def test_the_thought_is_kept_apart_from_the_answer() -> None:
    server = BatchServer(ReasoningServer("reasoning_content", reply="A"))
    with serve_batches_in_thread(server) as url:
        response = generate(url, Request.chat("Which option?"))
    choice = response.choices[0]
    assert choice.text == "A" and choice.reasoning is not None and "The answer is B" in choice.reasoning


def test_a_prompt_too_long_is_not_a_model_error() -> None:
    server = BatchServer(MockOpenAIServer(context=10))
    with serve_batches_in_thread(server) as url, pytest.raises(BackendError) as err:
        generate(url, Request.chat("x" * 400, max_tokens=5), max_retries=0)
    assert err.value.cause == PROMPT_TOO_LONG and "prompt is too long" in str(err.value)


def test_a_server_error_after_retries_names_its_status(messages_api: tuple[BatchServer, str]) -> None:
    server, url = messages_api
    server.answers.fail_every, server.answers.fail_status = 1, 500
    with pytest.raises(BackendError) as err:
        generate(url, Request.chat("hello"), max_retries=1)
    assert err.value.cause == "HTTP 500" and server.stats.direct == 2  # tried again once


def test_the_key_comes_from_anthropic_api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    with pytest.raises(UsageError, match="set the environment variable ANTHROPIC_API_KEY"):
        from_spec(BackendSpec.parse("anthropic:claude-x"))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret-0123456789")
    backend = from_spec(BackendSpec.parse("anthropic:claude-x"))
    assert backend.describe() == {"backend": "anthropic", "model": "claude-x", "base_url": "https://api.anthropic.com"}
    assert "sk-ant-secret" not in json.dumps(backend.describe())
    with pytest.raises(UsageError, match="needs a model name"):
        from_spec(BackendSpec.parse("anthropic"))


def test_a_tool_calls_arguments_that_do_not_parse_go_as_an_empty_input() -> None:
    """The arguments are the model's text: one nested past Python's parser's limit, or no object, is sent back as
    ``{}`` (the tool said so already), never an error raised out of the conversation."""
    from structbench.backends.anthropic import api_messages
    from structbench.backends.base import ToolCall

    calls = (ToolCall("a", "sql", '{"query": ' + "[" * 100_000 + "]" * 100_000 + "}"), ToolCall("b", "sql", "[1]"),
             ToolCall("c", "sql", '{"query": "SELECT 1"}'),
             ToolCall("d", "sql", '{"query": "SELECT 1", "x": ' + "[" * 150 + "]" * 150 + "}"))  # past MAX_NESTING
    turn = api_messages((Message("assistant", "", tool_calls=calls),))[0]
    assert [block["input"] for block in turn["content"]] == [{}, {}, {"query": "SELECT 1"}, {}]


MESSAGE = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x", "stop_reason": "end_turn",
           "stop_sequence": None, "usage": {"input_tokens": 3, "output_tokens": 2}}


def _reply(size: int, how: str, seen: list[str | None]) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
    """A Messages API whose one reply's text is ``size`` bytes, sent as ``how``: with its length, in chunks without
    one, compressed, or as a 500 error."""
    text = "A" * size
    body = json.dumps({**MESSAGE, "content": [{"type": "text", "text": text}]}).encode()

    async def handler(request: web.Request) -> web.StreamResponse:
        seen.append(request.headers.get("Accept-Encoding"))
        if how == "chunked":
            response = web.StreamResponse(headers={"Content-Type": "application/json"})
            response.enable_chunked_encoding()
            await response.prepare(request)
            for start in range(0, len(body), 2**16):
                await response.write(body[start:start + 2**16])
            await response.write_eof()
            return response
        if how == "gzip":
            return web.Response(body=gzip.compress(body), headers={"Content-Type": "application/json",
                                                                   "Content-Encoding": "gzip"})
        error = json.dumps({"type": "error", "error": {"type": "api_error", "message": text}}).encode()
        return web.Response(body=error if how == "error" else body, status=500 if how == "error" else 200,
                            content_type="application/json")

    return handler


def _capped(size: int, how: str, cap: int) -> tuple[Any, list[str | None]]:
    """The reply (or the error) of one request to ``_reply(size, how)`` with ``max_reply_bytes=cap``, and the
    ``Accept-Encoding`` of each request the server got."""
    async def main() -> Any:
        app, seen = web.Application(), list[str | None]()
        app.router.add_post("/v1/messages", _reply(size, how, seen))
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        backend = AnthropicBackend("claude-x", base_url=f"http://127.0.0.1:{port}", api_key="sk-ant-test-0123456789",
                                   max_retries=2, max_reply_bytes=cap)
        try:
            return await backend.generate(Request.chat("hello")), seen
        except BackendError as err:
            return err, seen
        finally:
            await backend.aclose()
            await runner.cleanup()

    return asyncio.run(main())


@pytest.mark.parametrize("how", ["length", "chunked", "error"])
def test_no_reply_is_read_past_max_reply_mb(how: str) -> None:
    """With or without its length, a body over the cap is refused unread and not asked for again (the same body
    would come), a 500's too (the SDK reads an error's body before raising); a body under it is read."""
    err, seen = _capped(3 * 2**20, how, cap=2**20)
    assert isinstance(err, BackendError) and err.cause == "reply too large", err
    assert "the reply is larger than 1 MiB (--max-reply-mb" in str(err) and len(seen) == 1
    if how != "error":
        response, seen = _capped(2**19, how, cap=2**20)
        assert response.choices[0].text == "A" * 2**19 and seen == ["identity"]


def test_a_compressed_reply_is_refused_unread() -> None:
    """Replies are asked for uncompressed, so the bytes counted are the bytes kept; a server that compresses anyway
    is not read (a few compressed MiB can be gigabytes)."""
    err, seen = _capped(100, "gzip", cap=2**20)
    assert isinstance(err, BackendError) and err.cause == "unusable reply" and "compressed its reply (gzip)" in str(err)
    assert seen == ["identity"]


def test_a_forked_run_imports_the_sdk_once_before_its_workers_fork(tmp_path: Path) -> None:
    """The SDK takes seconds to import (anthropic 2.x loads every type of the API); imported on the first call, every
    worker imported it again, with its requests waiting. ``-X importtime`` prints a line for each process that
    imports it."""
    with serve_batches_in_thread(BatchServer(MockOpenAIServer(reply="A"))) as url:
        env = {**os.environ, "PYTHONPATH": child_pythonpath(), "ANTHROPIC_API_KEY": "sk-ant-test-0123456789",
               "STRUCTBENCH_PLUGINS": "toybench", "STRUCTBENCH_CACHE": str(tmp_path / "cache")}
        done = subprocess.run(
            [sys.executable, "-X", "importtime", "-m", "structbench", "run", "-m", "anthropic:claude-x", "--base-url",
             url, "-b", "toy:small", "--limit", "6", "-c", "4", "--workers", "2", "--out", str(tmp_path / "run"),
             "--no-progress"], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert len((tmp_path / "run" / "samples.jsonl").read_text().splitlines()) == 6
    imports = [line for line in done.stderr.splitlines() if re.search(r"\|\s+anthropic$", line)]
    assert len(imports) == 1, imports


def test_a_reasoning_budget_turns_extended_thinking_on_and_keys_the_cache(
        messages_api: tuple[BatchServer, str]) -> None:
    """``--reasoning-budget`` is Claude's thinking budget (within ``max_tokens``, which the run raised by it), and a
    request with it is another cache entry than one without (the same ``max_tokens`` without thinking)."""
    from structbench.backends.openai_compat import OpenAIBackend
    from structbench.runner.settings import RequestSettings

    server, url = messages_api
    request = RequestSettings(reasoning_budget=1024).apply(Request.chat("Is 4 in the table?", max_tokens=16))
    generate(url, request)
    assert server.messages_sent[0]["thinking"] == {"type": "enabled", "budget_tokens": 1024}
    assert server.messages_sent[0]["max_tokens"] == 1040
    backend = AnthropicBackend("claude-x", base_url=url)
    without = Request.chat("Is 4 in the table?", max_tokens=1040)
    assert json.loads(cache_fields(backend, request))["reasoning_budget"] == 1024
    assert "reasoning_budget" not in json.loads(cache_fields(backend, without))
    # a backend that only gets the larger max_tokens keeps the keys it had
    assert "reasoning_budget" not in json.loads(cache_fields(OpenAIBackend("m", base_url=url), request))


def test_a_reasoning_budget_the_api_refuses_is_refused_before_any_call() -> None:
    from structbench.runner.settings import RequestSettings

    backend = AnthropicBackend("claude-x", base_url="http://127.0.0.1:9")
    with pytest.raises(UsageError, match=r"--reasoning-budget 512: .* at least 1024 tokens"):
        RequestSettings(reasoning_budget=512).check(backend)
    RequestSettings(reasoning_budget=1024).check(backend)


def test_a_reasoning_effort_turns_adaptive_thinking_on_and_keys_the_cache(
        messages_api: tuple[BatchServer, str]) -> None:
    """``--reasoning-effort`` is adaptive thinking at Anthropic's effort (``output_config.effort``), the deprecated
    ``enabled`` thinking the newest models warn of never sent beside it: a ``--reasoning-budget`` with it is only the
    room it thinks in (``max_tokens``). Another effort is another cache entry."""
    from structbench.runner.settings import RequestSettings

    server, url = messages_api
    asked = Request.chat("Is 4 in the table?", max_tokens=16)
    high = RequestSettings(reasoning_budget=2048, reasoning_effort="high").apply(asked)
    generate(url, high)
    generate(url, RequestSettings(reasoning_effort="max").apply(asked))
    (sent, alone) = server.messages_sent
    assert (sent["thinking"], sent["output_config"], sent["max_tokens"]) == ({"type": "adaptive"}, {"effort": "high"},
                                                                            2064)
    assert (alone["thinking"], alone["output_config"], alone["max_tokens"]) == ({"type": "adaptive"},
                                                                               {"effort": "max"}, 16)
    backend = AnthropicBackend("claude-x", base_url=url)
    low = RequestSettings(reasoning_budget=2048, reasoning_effort="low").apply(asked)
    assert json.loads(cache_fields(backend, high))["reasoning_effort"] == "high"
    assert cache_fields(backend, high) != cache_fields(backend, low)
    # the Message Batches path sends the same body
    from structbench.runner.batch.anthropic import AnthropicBatches

    assert AnthropicBatches(backend).lines("k", high)[0]["params"] == backend.params(high)


def test_the_efforts_sent_are_the_sdks() -> None:
    """The levels the backend accepts are exactly those the installed SDK's ``output_config.effort`` declares."""
    from typing import get_args, get_type_hints

    from anthropic.types import OutputConfigParam

    from structbench.backends.anthropic import EFFORTS
    from structbench.runfiles.runconfig import REASONING_EFFORTS

    declared = get_args(next(a for a in get_args(get_type_hints(OutputConfigParam)["effort"]) if get_args(a)))
    assert AnthropicBackend.reasoning_efforts == EFFORTS == declared
    assert set(EFFORTS) <= set(REASONING_EFFORTS)


@pytest.mark.parametrize(("effort", "budget", "refusal"), [
    ("none", 0, "--reasoning-effort none: the anthropic backend sends only low, medium, high, xhigh, max"),
    ("minimal", 4096, "--reasoning-effort minimal: the anthropic backend sends only low, medium, high, xhigh, max"),
    ("high", 512, "--reasoning-budget 512: Anthropic's extended thinking takes a budget of at least 1024"),
    ("low", 0, None), ("xhigh", 1024, None), ("max", 0, None),
])
def test_an_effort_anthropic_does_not_take_is_refused_before_any_call(effort: str, budget: int,
                                                                       refusal: str | None) -> None:
    from structbench.runner.settings import RequestSettings

    settings = RequestSettings(reasoning_effort=effort, reasoning_budget=budget)
    backend = AnthropicBackend("claude-x", base_url="http://127.0.0.1:9")
    if refusal is None:
        settings.check(backend)
    else:
        with pytest.raises(UsageError) as err:
            settings.check(backend)
        assert str(err.value).startswith(refusal) and "\n" not in str(err.value)


WINNER_QUERY = {"sql": {"query": "SELECT team FROM t ORDER BY wins DESC LIMIT 1"}}
"""The tool call the loops' model makes first."""


def _league() -> tuple[Any, Any]:
    """A sample over a two-team table, and the tool task (SQL only) a loop asks of it."""
    from structbench.data.evidence import Table
    from structbench.data.sample import LabelGold, Sample
    from structbench.strategies.tools import ToolTask, table_workspace

    table = Table(header=["team", "wins"], rows=[["Ants", "3"], ["Bees", "5"]], caption="League")
    sample = Sample(id="s1", benchmark="toy", variant="v", task="t", question="Who won most?", evidence=[table],
                    gold=LabelGold(label="Bees"))

    def task(s: Sample) -> ToolTask:
        workspace = table_workspace(s.evidence, python=False)  # type: ignore[arg-type]
        return ToolTask((Message("user", f"{workspace.schema}\nQ: {s.question}"),), workspace, max_tokens=64)

    return sample, task


class ThinkingToolModel(MockOpenAIServer):
    """A tool model that thinks before each reply (a thinking block, signed by the loopback)."""

    def completion(self, path: str, request: dict[str, Any], size: int = 0) -> dict[str, object]:
        body = super().completion(path, request, size)
        for choice in body["choices"]:  # type: ignore[attr-defined]
            choice["message"]["reasoning_content"] = "The answer is Ants, surely; let me check with a query."
        return body


@pytest.mark.parametrize(("effort", "thinking"), [(None, {"type": "enabled", "budget_tokens": 2048}),
                                                  ("medium", {"type": "adaptive"})])
def test_a_tool_loop_with_thinking_sends_the_signed_thinking_blocks_back(effort: str | None,
                                                                         thinking: dict[str, Any]) -> None:
    """While thinking is on (extended or adaptive), the API wants the assistant turn that called the tools back with
    its thinking blocks first and their signatures unchanged (a 400 otherwise); the loop sends it as it came, through
    the cache's form, and the answer it parses is still only the text."""
    from structbench.contract.benchmark import DIRECT, ToolSupport
    from structbench.runner.settings import RequestSettings
    from structbench.strategies.tools import ToolLoop
    from structbench.testing.batch_server import signature

    sample, task = _league()

    model = ThinkingToolModel(tool_model=True, reply="Bees", tool_arguments=WINNER_QUERY)
    server = BatchServer(model)
    settings = RequestSettings(reasoning_budget=2048, reasoning_effort=effort)

    async def main(url: str) -> Any:
        backend = AnthropicBackend("claude-x", base_url=url, api_key="sk-ant-test-0123456789abcdef", max_retries=0)

        class Generate:
            tool_support = ToolSupport(native=True)

            async def __call__(self, request: Request) -> Response:
                response = await backend.generate(settings.apply(request))
                return Response.from_json(response.to_json())  # as the response cache keeps it

        try:
            return await ToolLoop("tools", task, answer=DIRECT).run(sample, Generate())
        finally:
            await backend.aclose()

    with serve_batches_in_thread(server) as url:
        attempt = asyncio.run(main(url))
    assert attempt.output == "Bees" and attempt.artifacts["tools"]["calls"] == 1
    first, second = server.messages_sent
    assert first["thinking"] == second["thinking"] == thinking
    assert first.get("output_config") == second.get("output_config") == (effort and {"effort": effort})
    thought = "The answer is Ants, surely; let me check with a query."
    turn = second["messages"][1]
    assert turn["role"] == "assistant" and [b["type"] for b in turn["content"]] == ["thinking", "tool_use"]
    assert turn["content"][0] == {"type": "thinking", "thinking": thought, "signature": signature(thought)}
    assert model.tool_results == ["team\nBees\n(1 row)"]
    assert "Ants" not in attempt.output


class ChangingMind(MockOpenAIServer):
    """A tool model that thinks something new on every call, and whose every reply says which call it was."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.calls = 0

    def completion(self, path: str, request: dict[str, Any], size: int = 0) -> dict[str, object]:
        self.calls += 1
        body = super().completion(path, request, size)
        for choice in body["choices"]:  # type: ignore[attr-defined]
            message = choice["message"]
            message["reasoning_content"] = f"Thought number {self.calls}."
            if message.get("content"):
                message["content"] = f"{message['content']} (call {self.calls})"
        return body


def test_a_tool_loop_whose_thought_differs_is_not_answered_from_the_other_thoughts_cache_entry(tmp_path: Path) -> None:
    """Two loops through one response cache whose first turns came back with the same call but another signed thought
    (here: the first turn's entry lost in between, so the model is asked again): the second turns differ only in the
    thinking blocks sent back, so the second loop's is the model's to answer, never the first loop's cached reply."""
    from structbench.contract.benchmark import DIRECT, ToolSupport
    from structbench.runner.cache import ResponseCache
    from structbench.runner.calls import ModelCaller
    from structbench.runner.settings import RequestSettings
    from structbench.strategies.tools import ToolLoop

    sample, task = _league()

    model = ChangingMind(tool_model=True, reply="Bees", tool_arguments=WINNER_QUERY)
    server = BatchServer(model)
    settings = RequestSettings(reasoning_budget=2048)
    cache = ResponseCache(tmp_path / "responses.sqlite")
    first_turns: list[Request] = []

    async def loop(url: str) -> Any:
        backend = AnthropicBackend("claude-x", base_url=url, api_key="sk-ant-test-0123456789abcdef", max_retries=0)
        caller = ModelCaller(backend, cache)

        class Generate:
            tool_support = ToolSupport(native=True)

            async def __call__(self, request: Request) -> Response:
                request = settings.apply(request)
                if len(request.messages or ()) == 1:
                    first_turns.append(request)
                return await caller(request)

        try:
            return await ToolLoop("tools", task, answer=DIRECT).run(sample, Generate()), backend
        finally:
            await cache.drain()
            await backend.aclose()

    with serve_batches_in_thread(server) as url:
        first, backend = asyncio.run(loop(url))
        lost = cache_key(backend, first_turns[0])
        with sqlite3.connect(tmp_path / "responses.sqlite") as db:
            assert db.execute("DELETE FROM responses WHERE key = ?", (lost,)).rowcount == 1
        second, _ = asyncio.run(loop(url))
    cache.close()
    assert (first.output, second.output) == ("Bees (call 2)", "Bees (call 4)")  # not call 2's reply again
    assert model.calls == 4 and len(server.messages_sent) == 4
    replayed = [body["messages"][1]["content"][0]["thinking"] for body in server.messages_sent[1::2]]
    assert replayed == ["Thought number 1.", "Thought number 3."]
