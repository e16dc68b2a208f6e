"""The anthropic SDK's HTTP client under ``--max-reply-mb``: no reply body is read past the cap.

The SDK reads a reply whole, however large, error bodies included (it reads them before raising). Its HTTP client
(``httpx2``, anthropic 2.x) runs response hooks before a body is read: ``cap_replies`` refuses a declared length over
the cap there, and hands the response a byte stream that counts what arrives and stops past the cap. The exception
is a ``RefusedReply``, an ``AnthropicError``: the SDK neither wraps nor retries those, and the same body would come
again. Replies are asked for uncompressed (``Accept-Encoding: identity``), so the bytes counted are the bytes kept;
a compressed one is refused unread (decompressed, a few MiB can be gigabytes). A batch's results file is exempt: it
holds every reply of the batch, and ``runner.batch`` reads it line by line under the same cap per line.

Imported by ``AnthropicBackend.client`` only, with the SDK.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import anthropic
import httpx2

from structbench.backends.factory import REPLY_TOO_LARGE

UNCOMPRESSED = {"Accept-Encoding": "identity"}
"""The header every request goes with."""


class RefusedReply(anthropic.AnthropicError):
    """A reply not read: larger than the cap (``cause`` ``reply too large``) or compressed (``unusable reply``)."""

    def __init__(self, message: str, cause: str) -> None:
        super().__init__(message)
        self.cause = cause


class _CappedStream(httpx2.AsyncByteStream):
    """A response's bytes, raising ``RefusedReply`` as soon as more than ``cap`` have arrived."""

    def __init__(self, inner: httpx2.AsyncByteStream, cap: int) -> None:
        self._inner = inner
        self._cap = cap

    async def __aiter__(self) -> AsyncIterator[bytes]:
        seen = 0
        async for chunk in self._inner:
            seen += len(chunk)
            if seen > self._cap:
                raise RefusedReply(f"more than {self._cap} bytes", cause=REPLY_TOO_LARGE)
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


def cap_replies(cap: int) -> Callable[[httpx2.Response], Awaitable[None]]:
    """The response hook that holds every body but a batch's results to ``cap`` bytes."""

    async def hook(response: httpx2.Response) -> None:
        if response.request.method == "GET" and response.request.url.path.endswith("/results"):
            return  # a batch's results: capped per line where they are read
        encoding = response.headers.get("Content-Encoding", "").strip().lower() or "identity"
        if encoding != "identity":
            raise RefusedReply(f"the server compressed its reply ({encoding}) though asked not to; it was not read",
                               cause="unusable reply")
        declared = response.headers.get("Content-Length")
        if declared is not None and declared.isdigit() and int(declared) > cap:
            raise RefusedReply(f"{declared} bytes", cause=REPLY_TOO_LARGE)
        if isinstance(response.stream, httpx2.AsyncByteStream):
            response.stream = _CappedStream(response.stream, cap)

    return hook


def capped_client(cap: int, **kwargs: Any) -> httpx2.AsyncClient:
    """The SDK's default client (its timeouts, connection limits, keep-alive) with ``cap_replies`` and
    ``UNCOMPRESSED``."""
    client: httpx2.AsyncClient = anthropic.DefaultAsyncHttpxClient(
        headers=UNCOMPRESSED, event_hooks={"response": [cap_replies(cap)]}, **kwargs)
    return client
