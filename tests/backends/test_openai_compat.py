"""The OpenAI-compatible backend against a loopback server: requests, retries, Retry-After, errors."""

from __future__ import annotations

import asyncio
import time

import pytest

from structbench.backends.base import CANNOT_CONNECT, BackendError, Request
from structbench.backends.openai_compat import (
    REPLICA_REST_MAX,
    OpenAIBackend,
    Replica,
    backoff_delay,
    reply_json,
    retry_after_seconds,
)
from structbench.testing.openai_server import MockOpenAIServer


async def _with_server(server: MockOpenAIServer, fn):  # type: ignore[no-untyped-def]
    srv = await server.serve()
    port = srv.sockets[0].getsockname()[1]
    try:
        return await fn(f"http://127.0.0.1:{port}/v1")
    finally:
        srv.close()
        await srv.wait_closed()


def test_chat_and_completion_roundtrip() -> None:
    server = MockOpenAIServer(reply="B")

    async def go(url: str) -> None:
        backend = OpenAIBackend("m", base_url=url, api_key="sk-test")
        chat = await backend.generate(Request.chat("hi", n=3))
        assert [c.text for c in chat.choices] == ["B", "B", "B"]
        comp = await backend.generate(Request(prompt="hi"))
        assert comp.text == "B" and comp.prompt_tokens is not None
        await backend.aclose()

    asyncio.run(_with_server(server, go))
    assert server.authorization == ["Bearer sk-test", "Bearer sk-test"]


def test_retries_429_honouring_retry_after() -> None:
    server = MockOpenAIServer(fail_every=2, fail_status=429, retry_after="0.4")

    async def go(url: str) -> float:
        backend = OpenAIBackend("m", base_url=url, max_retries=3, backoff_base=0.001)
        await backend.generate(Request.chat("one"))  # request 1 succeeds
        t0 = time.perf_counter()
        out = await backend.generate(Request.chat("two"))  # request 2 is a 429, request 3 succeeds
        assert out.text == "A"
        await backend.aclose()
        return time.perf_counter() - t0

    waited = asyncio.run(_with_server(server, go))
    assert waited >= 0.4
    assert server.requests == 3


def test_retries_500_then_gives_up() -> None:
    server = MockOpenAIServer(fail_every=1, fail_status=500)

    async def go(url: str) -> None:
        backend = OpenAIBackend("m", base_url=url, max_retries=2, backoff_base=0.001)
        with pytest.raises(BackendError, match="gave up after 3 tries"):
            await backend.generate(Request.chat("x"))
        await backend.aclose()

    asyncio.run(_with_server(server, go))
    assert server.requests == 3


def test_client_error_is_not_retried() -> None:
    server = MockOpenAIServer()

    async def go(url: str) -> None:
        backend = OpenAIBackend("m", base_url=url.replace("/v1", "/v2"), max_retries=5, backoff_base=0.001)
        with pytest.raises(BackendError, match="HTTP 404"):
            await backend.generate(Request.chat("x"))
        await backend.aclose()

    asyncio.run(_with_server(server, go))
    assert server.requests == 1


def test_a_refused_connection_is_retried_only_once_the_server_has_answered() -> None:
    """Before any reply, a refused connection means nothing is there (a wrong port): one try, cause CANNOT_CONNECT.
    After one, it is a server gone for a moment: retried like a 5xx."""
    from faults import closed_port

    async def fresh(url: str) -> None:
        backend = OpenAIBackend("m", base_url=url, max_retries=3, backoff_base=0.001)
        with pytest.raises(BackendError, match="gave up after 1 try: ClientConnectorError") as err:
            await backend.generate(Request.chat("x"))
        assert err.value.cause == CANNOT_CONNECT and not backend.reached
        await backend.aclose()

    with closed_port() as port:
        asyncio.run(fresh(f"http://127.0.0.1:{port}/v1"))

    async def answered_then_gone() -> None:
        server = MockOpenAIServer(reply="B")
        srv = await server.serve()
        port = srv.sockets[0].getsockname()[1]
        backend = OpenAIBackend("m", base_url=f"http://127.0.0.1:{port}/v1", max_retries=2, backoff_base=0.001)
        assert (await backend.generate(Request.chat("one"))).text == "B" and backend.reached
        await backend.aclose()  # no kept-alive connection: the next request connects anew
        srv.close()
        await srv.wait_closed()
        with pytest.raises(BackendError, match="gave up after 3 tries: ClientConnectorError") as err:
            await backend.generate(Request.chat("two"))
        assert err.value.cause == CANNOT_CONNECT
        await backend.aclose()

    asyncio.run(answered_then_gone())


def test_a_dead_server_with_hundreds_in_flight_fails_every_call_as_a_model_error() -> None:
    """Every failed request in flight adds to its replica's failures in a row; past ~1,000 the doubling rest used
    to overflow a float, and each call raised OverflowError (a harness error) instead of BackendError."""
    async def go() -> list[BaseException | object]:
        backend = OpenAIBackend("m", base_url="http://127.0.0.1:9/v1", concurrency=300, max_retries=4,
                                backoff_base=0.0001)
        try:
            return await asyncio.gather(*(backend.generate(Request.chat(f"q{i}")) for i in range(300)),
                                        return_exceptions=True)
        finally:
            await backend.aclose()

    outcomes = asyncio.run(go())
    assert all(isinstance(o, BackendError) and o.cause == "cannot connect" for o in outcomes), {
        type(o).__name__ for o in outcomes}
    replica = Replica("http://127.0.0.1:9/v1", None)
    for _ in range(5000):
        replica.failed(100.0)
    assert replica.resting_until == 100.0 + REPLICA_REST_MAX


def test_retry_after_and_backoff() -> None:
    assert retry_after_seconds("3") == 3.0
    assert retry_after_seconds(None) is None
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0
    assert retry_after_seconds("soon") is None
    delays = [backoff_delay(a, base=1.0, cap=8.0) for a in range(10) for _ in range(20)]
    assert all(0 <= d <= 8.0 for d in delays) and len(set(delays)) > 100


def test_logprobs_are_parsed() -> None:
    data = {
        "choices": [
            {
                "index": 0,
                "message": {"content": "A"},
                "logprobs": {"content": [{"token": "A", "logprob": -0.5, "top_logprobs": [
                    {"token": "A", "logprob": -0.5}, {"token": "B", "logprob": -1.2}]}]},
            }
        ]
    }
    resp = OpenAIBackend._parse(data, chat=True)
    lp = resp.choices[0].logprobs
    assert lp is not None and lp[0].logprob == -0.5 and lp[0].top == {"A": -0.5, "B": -1.2}


def test_a_timed_out_request_is_tried_twice_at_most() -> None:
    server = MockOpenAIServer(latency=0.5)

    async def go(url: str) -> None:
        backend = OpenAIBackend("m", base_url=url, timeout=0.1, max_retries=6, backoff_base=0.001)
        with pytest.raises(BackendError) as info:
            await backend.generate(Request.chat("slow", max_tokens=4096))
        err = info.value
        assert err.cause == "timeout"
        assert "gave up after 2 tries" in str(err) and "up to 4096 new tokens" in str(err)
        assert "--max-tokens" in str(err) and "--timeout" in str(err)
        stats = backend.stats.snapshot()
        assert (stats.timeouts, stats.retries) == (2, 1)
        await backend.aclose()

    asyncio.run(_with_server(server, go))
    assert server.requests == 2  # not 1 + --max-retries 6


@pytest.mark.parametrize("refusal", ["openai", "vllm", "llamacpp", "sglang"])
def test_a_prompt_too_long_for_the_context_is_never_retried(refusal: str) -> None:
    server = MockOpenAIServer(context=40, refusal=refusal)

    async def go(url: str) -> None:
        backend = OpenAIBackend("m", base_url=url, max_retries=6, backoff_base=0.001)
        with pytest.raises(BackendError) as info:
            await backend.generate(Request.chat("a long prompt " * 20, max_tokens=16))
        assert info.value.prompt_too_long
        assert "does not fit the model's context of 40 tokens (with max_tokens 16)" in str(info.value)
        assert (await backend.generate(Request.chat("hi", max_tokens=1))).text == "A"  # a short one still fits
        await backend.aclose()

    asyncio.run(_with_server(server, go))
    assert server.refused == 1 and server.requests == 2


def test_the_context_window_comes_from_the_model_list_or_the_option() -> None:
    async def window(server: MockOpenAIServer, **kwargs: object) -> int | None:
        async def go(url: str) -> int | None:
            return await OpenAIBackend("m", base_url=url, **kwargs).context_window()  # type: ignore[arg-type]

        return await _with_server(server, go)

    assert asyncio.run(window(MockOpenAIServer(context=8192))) == 8192
    assert asyncio.run(window(MockOpenAIServer(context=8192, hide_context=True))) is None
    assert asyncio.run(window(MockOpenAIServer(context=8192, hide_context=True), n_ctx=4096)) == 4096
    with pytest.raises(BackendError, match=r"127.0.0.1:9/v1/models: ClientConnectorError") as err:  # no server
        asyncio.run(OpenAIBackend("m", base_url="http://127.0.0.1:9/v1").context_window())
    assert err.value.cause == CANNOT_CONNECT


@pytest.mark.parametrize("url", ["http://127.0.0.1:99999/v1", "http://127.0.0.1:/v1", "http://h:0/v1", "ftp://h/v1",
                                 "not a url", "http://h:80/v1,http://h:70000/v1"])
def test_a_base_url_no_request_could_reach_is_a_usage_error(url: str) -> None:
    """Refused before the run, not retried 7 times per sample and scored as wrong."""
    from structbench.backends.factory import BackendSpec, make_backend
    from structbench.core.errors import UsageError

    with pytest.raises(UsageError, match=r"expected http\(s\)://HOST\[:PORT\]/PATH.*a port from 1 to 65535"):
        make_backend(BackendSpec.parse("openai:m", base_url=url))


@pytest.mark.parametrize("url", ["http://127.0.0.1:8000/v1", "https://h/v1", "http://[::1]:8000/v1",
                                 "http://user:pw@h:8080/v1"])
def test_a_base_url_with_a_port_or_none_is_taken(url: str) -> None:
    from structbench.backends.factory import BackendSpec, make_backend

    assert make_backend(BackendSpec.parse("openai:m", base_url=url)).backend == "openai"


def test_a_body_with_a_lone_surrogate_is_read_and_cut_where_it_nests_too_deep() -> None:
    """orjson refuses ``"\\udcff"``; Python's parser reads the body, ``writable`` cuts what nests past a record's
    depth, and a body nested past the parser's limit fails with orjson's own error (the call is retried as any)."""
    import orjson

    body = '{"c": "\\udcff", "x": ' + "[" * 150 + "]" * 150 + "}"
    value = reply_json(body.encode())
    assert value["c"] == "\ufffd" and orjson.dumps(value)
    with pytest.raises(orjson.JSONDecodeError, match="surrogate"):
        reply_json(('{"c": "\\udcff", "x": ' + "[" * 100_000 + "]" * 100_000 + "}").encode())
