"""The OpenAI backend against servers that misbehave: what is accepted, retried, refused, and what an error says."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from patience import patience
from structbench.backends.base import BackendError, Request
from structbench.backends.openai_compat import OpenAIBackend
from structbench.testing.openai_server import MockOpenAIServer


def _call(server: MockOpenAIServer, request: Request | None = None, **backend: Any) -> Any:
    """Send one request; returns the response, or the ``BackendError`` it raised."""

    async def go() -> Any:
        srv = await server.serve()
        port = srv.sockets[0].getsockname()[1]
        options: dict[str, Any] = {"max_retries": 3, "backoff_base": 0.001, **backend}
        client = OpenAIBackend("m", base_url=backend.pop("base_url", f"http://127.0.0.1:{port}/v1"), **options)
        try:
            return await client.generate(request or Request.chat("q?"))
        except BackendError as err:
            return err
        finally:
            await client.aclose()
            srv.close()
            await srv.wait_closed()

    return asyncio.run(go())


def test_content_parts_are_joined() -> None:
    server = MockOpenAIServer(reply="yes", fault="content-parts")
    assert _call(server).text == "yes"
    assert server.requests == 1


def test_a_lone_surrogate_escape_is_read_as_a_replacement_character_once() -> None:
    """``"\\udcff"`` is JSON (orjson refuses it): one request, the answer kept with U+FFFD in its place."""
    server = MockOpenAIServer(reply="\udcff garbage \ud83d\ude00 {{{")
    response = _call(server)
    assert not isinstance(response, BackendError), response
    assert response.text == "\ufffd garbage \U0001f600 {{{" and server.requests == 1


@pytest.mark.parametrize(
    ("fault", "says"),
    [
        ("content-number", "the content is a JSON number (42), not text"),
        ("null-content", "no content (finish_reason 'stop')"),
        ("null-content-length", "finish_reason 'length': the model used all 7 tokens before writing an answer"),
    ],
)
def test_unusable_content_is_a_model_error_sent_once(fault: str, says: str) -> None:
    server = MockOpenAIServer(fault=fault)
    err = _call(server, Request.chat("q?", max_tokens=7))
    assert isinstance(err, BackendError) and err.cause == "unusable reply"
    assert says in str(err) and "unusable reply" in str(err)
    assert server.requests == 1  # the same request would get the same reply


@pytest.mark.parametrize("fault", ["not-json", "truncated", "no-choices"])
def test_server_faults_with_status_200_are_retried(fault: str) -> None:
    server = MockOpenAIServer(reply="B", fault=fault, fault_times=2)
    assert _call(server).text == "B"
    assert server.requests == 3


@pytest.mark.parametrize(("fault", "says"), [("not-json", "the body is not JSON"), ("no-choices", "no choices")])
def test_server_faults_give_up_like_5xx(fault: str, says: str) -> None:
    server = MockOpenAIServer(fault=fault)
    err = _call(server, max_retries=2)
    assert isinstance(err, BackendError) and "gave up after 3 tries" in str(err) and says in str(err)
    assert server.requests == 3


@pytest.mark.parametrize("fault", ["huge", "huge-chunked"])
def test_reply_size_is_capped(fault: str) -> None:
    server = MockOpenAIServer(fault=fault, huge_bytes=8 * 2**20)
    err = _call(server, max_reply_bytes=2**20)
    assert isinstance(err, BackendError) and err.cause == "reply too large"
    assert "larger than 1 MiB (--max-reply-mb" in str(err)
    assert server.requests == 1
    assert _call(MockOpenAIServer(fault=fault, huge_bytes=2**19), max_reply_bytes=2**20).text == "A" * 2**19


def test_timeout_says_what_and_how_long() -> None:
    server = MockOpenAIServer(latency=1.0)
    t0 = time.perf_counter()
    err = _call(server, timeout=0.2, max_retries=1)
    assert isinstance(err, BackendError) and err.cause == "timeout"
    assert "gave up after 2 tries: timed out: no complete reply within 0.2 s (--timeout)" in str(err)
    assert time.perf_counter() - t0 < patience(1.5)


def test_echoed_key_is_redacted_and_not_retried() -> None:
    server = MockOpenAIServer(fault="echo-key")
    err = _call(server, api_key="sk-live-abcdefghijklmnop1234")
    assert isinstance(err, BackendError) and err.cause == "HTTP 401"
    assert "Incorrect API key provided: [REDACTED]" in str(err)
    assert "abcdefghijklmnop1234" not in str(err)
    assert server.requests == 1


def test_unknown_model_is_a_404_naming_it() -> None:
    server = MockOpenAIServer(served_model="real-model")
    err = _call(server)
    assert isinstance(err, BackendError) and err.cause == "HTTP 404" and "The model `m` does not exist" in str(err)


def test_url_password_is_sent_as_basic_auth_and_never_shown() -> None:
    server = MockOpenAIServer()

    async def go() -> dict[str, Any]:
        srv = await server.serve()
        port = srv.sockets[0].getsockname()[1]
        client = OpenAIBackend("m", base_url=f"http://alice:pa55word-xyz@127.0.0.1:{port}/v1")
        try:
            await client.generate(Request.chat("q?"))
            return client.describe()
        finally:
            await client.aclose()
            srv.close()
            await srv.wait_closed()

    described = asyncio.run(go())
    assert described["base_url"].startswith("http://alice:[REDACTED]@127.0.0.1:")
    assert server.authorization == ["Basic YWxpY2U6cGE1NXdvcmQteHl6"]  # alice:pa55word-xyz
