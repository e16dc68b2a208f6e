"""``--max-reply-mb`` on the ``litellm`` backend: a huge reply from a server of the user's is refused while it is
read, on every route LiteLLM takes to an OpenAI-compatible server, not after LiteLLM has read and parsed it whole."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from extras import require_extra

require_extra("litellm", "litellm")

from structbench.backends.base import BackendError, Request  # noqa: E402
from structbench.backends.litellm import LiteLLMBackend  # noqa: E402
from structbench.backends.litellm_http import CAPPED_PROVIDERS  # noqa: E402
from structbench.testing.openai_server import MockOpenAIServer  # noqa: E402

CAP = 2**20
HUGE = 64 * 2**20
"""The reply's content: read whole, it would be sent whole (and take several times its size in memory)."""
READ_AT_MOST = 16 * 2**20
"""What the server may get out before the client drops the connection: the cap, plus what the kernel's socket
buffers on both sides take in (loopback's grow to tens of MiB only for a reader that keeps reading)."""


def _calls(server: MockOpenAIServer, model: str, requests: list[Request]) -> list[Any]:
    """Each of ``requests`` through one ``LiteLLMBackend`` capped at 1 MiB: its response, or the error it raised."""
    async def go() -> list[Any]:
        srv = await server.serve()
        url = f"http://127.0.0.1:{srv.sockets[0].getsockname()[1]}/v1"
        backend = LiteLLMBackend(model, base_url=url, max_retries=2, timeout=30.0, max_reply_bytes=CAP)
        backend.backoff_base = 0.001
        out: list[Any] = []
        try:
            for request in requests:
                try:
                    out.append(await backend.generate(request))
                except BackendError as err:
                    out.append(err)
        finally:
            await backend.aclose()
            srv.close()
        return out

    return asyncio.run(go())


@pytest.mark.parametrize("route", ["chat", "prompt"])
@pytest.mark.parametrize("provider", sorted(CAPPED_PROVIDERS))
def test_a_huge_reply_is_refused_while_read_and_not_retried(provider: str, route: str) -> None:
    """64 MiB of reply against a 1 MiB cap: "too large" once the cap is passed, the server stopped from sending
    the rest, no second try; a normal reply then comes through the same capped client."""
    server = MockOpenAIServer(reply="B", fault="huge-chunked", fault_times=1, huge_bytes=HUGE)
    request = Request.chat("q?") if route == "chat" else Request(prompt="q?")
    refused, answered = _calls(server, f"{provider}/toy", [request, request])
    assert server.sent_bytes < READ_AT_MOST, f"{server.sent_bytes} bytes sent: the reply was read on past the cap"
    assert isinstance(refused, BackendError) and refused.cause == "reply too large", refused
    assert "the reply is larger than 1 MiB (--max-reply-mb; more than 1048576 bytes); it was not read further" in \
        str(refused)
    assert answered.text == "B" and server.requests == 2


def test_a_declared_length_over_the_cap_is_refused_unread() -> None:
    """A ``Content-Length`` over the cap is refused before the body is read: the message gives the length."""
    server = MockOpenAIServer(fault="huge", huge_bytes=2 * CAP)
    (refused,) = _calls(server, "hosted_vllm/toy", [Request.chat("q?")])
    assert isinstance(refused, BackendError) and refused.cause == "reply too large"
    assert f"(--max-reply-mb; {len(_body(server))} bytes)" in str(refused)
    assert server.requests == 1


def _body(server: MockOpenAIServer) -> bytes:
    """The body the server sends for its fault."""
    from structbench.testing.openai_server import FAULTS

    assert server.fault is not None
    return FAULTS[server.fault](server, {})[1]
