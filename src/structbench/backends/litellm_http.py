"""LiteLLM's HTTP clients under ``--max-reply-mb``: no reply body of a server of the user's is read past the cap.

LiteLLM reads a reply whole before it hands it back, so a check of its size afterwards comes after the memory is
spent. A call to an OpenAI-compatible server given by ``--base-url`` (``CAPPED_PROVIDERS``) therefore goes with a
client of structbench's (LiteLLM's ``client=``) whose httpx client LiteLLM builds itself (its transport, TLS and proxy
settings: ``AsyncHTTPHandler``) with two event hooks added: each request asks for an uncompressed reply
(``Accept-Encoding: identity``), and each response is refused where its declared length is over the cap, or else
read through a byte stream that raises ``ReplyOverCap`` as soon as more than the cap has arrived (the connection is
then dropped). A compressed reply is refused unread (``CompressedReply``): decompressed, a few MiB can be gigabytes.
Which client LiteLLM takes depends on its route: the OpenAI SDK's ``AsyncOpenAI`` for most, the ``AsyncHTTPHandler``
itself for those LiteLLM sends through its own HTTP handler (``HANDLER_ROUTES``).

Imported by ``backends.litellm`` only.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any

import httpx
import openai

if TYPE_CHECKING:  # imported where first used: by then ``backends.litellm`` has imported LiteLLM its way
    from litellm.llms.custom_httpx.http_handler import AsyncHTTPHandler

CAPPED_PROVIDERS = frozenset({"openai", "hosted_vllm", "text-completion-openai", "lm_studio", "llamafile",
                              "custom_openai"})
"""LiteLLM providers whose replies are capped while they are read, where a ``--base-url`` is given (LiteLLM 1.110)."""
HANDLER_ROUTES = frozenset({("hosted_vllm", "chat")})
"""(provider, ``chat`` or ``prompt``) that LiteLLM sends through its own HTTP handler, which takes an
``AsyncHTTPHandler`` as its client; every other capped route goes through the OpenAI SDK, which takes an
``AsyncOpenAI``."""


class ReplyOverCap(Exception):
    """A reply body over the cap; it was not read further."""


class CompressedReply(Exception):
    """A compressed reply, though an uncompressed one was asked for; it was not read."""


class _CappedStream(httpx.AsyncByteStream):
    """A response's bytes, raising ``ReplyOverCap`` as soon as more than ``cap`` have arrived."""

    def __init__(self, inner: httpx.AsyncByteStream, cap: int) -> None:
        self._inner = inner
        self._cap = cap

    async def __aiter__(self) -> AsyncIterator[bytes]:
        seen = 0
        async for chunk in self._inner:
            seen += len(chunk)
            if seen > self._cap:
                raise ReplyOverCap(f"more than {self._cap} bytes")
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


async def _uncompressed(request: httpx.Request) -> None:
    request.headers["Accept-Encoding"] = "identity"


def cap_replies(cap: int) -> Callable[[httpx.Response], Awaitable[None]]:
    """The response hook that holds every body to ``cap`` bytes."""

    async def hook(response: httpx.Response) -> None:
        encoding = response.headers.get("Content-Encoding", "").strip().lower() or "identity"
        if encoding != "identity":
            raise CompressedReply(f"the server compressed its reply ({encoding}) though asked not to; it was not read")
        declared = response.headers.get("Content-Length")
        if declared is not None and declared.isdigit() and int(declared) > cap:
            raise ReplyOverCap(f"{declared} bytes")
        if isinstance(response.stream, httpx.AsyncByteStream):
            response.stream = _CappedStream(response.stream, cap)

    return hook


class CappedClients:
    """One backend's capped clients, made inside the running event loop on first use and closed by ``aclose``."""

    def __init__(self, cap: int, timeout: float) -> None:
        self.cap = cap
        self.timeout = timeout
        self._handler: AsyncHTTPHandler | None = None
        self._sdk: dict[tuple[str, str], openai.AsyncOpenAI] = {}

    def handler(self) -> AsyncHTTPHandler:
        """LiteLLM's HTTP handler with the hooks, shared by every call of the backend."""
        if self._handler is None:
            from litellm.llms.custom_httpx.http_handler import AsyncHTTPHandler

            self._handler = AsyncHTTPHandler(timeout=self.timeout, event_hooks={
                "request": [_uncompressed], "response": [cap_replies(self.cap)]})
        return self._handler

    def client(self, provider: str, route: str, base_url: str, api_key: str) -> Any:
        """The client LiteLLM takes for ``provider``'s ``route`` (``chat`` or ``prompt``) to ``base_url``."""
        if (provider, route) in HANDLER_ROUTES:
            return self.handler()
        key = (base_url, api_key)
        if key not in self._sdk:
            http = self.handler().client  # httpx's: the SDK takes it as LiteLLM gives it one (typed httpx2 only)
            self._sdk[key] = openai.AsyncOpenAI(api_key=api_key, base_url=base_url, timeout=self.timeout,
                                                max_retries=0, http_client=http)  # type: ignore[arg-type]
        return self._sdk[key]

    async def aclose(self) -> None:
        """Close the clients (the SDK's share the handler's httpx client: it is closed once)."""
        self._sdk.clear()
        if self._handler is not None:
            await self._handler.close()
            self._handler = None
