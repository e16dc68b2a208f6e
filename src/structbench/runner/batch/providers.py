"""What the collector needs of a provider's batch API: turn requests into lines, submit, poll, read, cancel.

Each line's id (``custom_id``) is the cache key of its request (``backends.base.cache_key``, 64 hex digits), so a
line's answer goes to the response cache under the key the same request sent directly would have, and a batch
adopted after a restart is matched to the requests waiting for it by ids alone.
"""

from __future__ import annotations

import json
import re
from abc import ABC, abstractmethod
from collections.abc import AsyncIterable, AsyncIterator
from dataclasses import dataclass
from typing import Any

from structbench.backends.base import Backend, Request, Response
from structbench.backends.factory import DEFAULT_MAX_REPLY_BYTES, REPLY_TOO_LARGE, reply_too_large
from structbench.core.errors import UsageError
from structbench.core.registry import Registry
from structbench.runner.batch.ledger import BatchEntry


@dataclass(frozen=True)
class LineError:
    """A request of a batch that got no usable answer."""

    message: str
    retryable: bool
    """Sent again in a later batch (rate limits, server errors, lines the batch expired before or left out);
    otherwise the sample's call fails with this message (a request the API refused, an unusable reply)."""
    cause: str = "batch line failed"
    """The ``BackendError`` cause (the circuit breaker counts causes)."""


Outcome = dict[str, Any] | LineError
"""A line's result: the provider's reply body, or why there is none."""

TOO_LARGE = "structbench_too_large"
"""The key of the line that stands for a result line larger than ``--max-reply-mb`` (its size), not read further."""
MALFORMED = "structbench_malformed"
"""The key of the line that stands for a result line that is not a JSON object (skipped, but counted)."""
HEAD = 4096
"""Bytes kept of a line too large to read: its ``custom_id`` is near its start."""
_CUSTOM_ID = re.compile(rb'"custom_id"\s*:\s*"((?:[^"\\]|\\.){1,200})"')


@dataclass(frozen=True)
class Status:
    """A batch as the provider reports it at one poll."""

    word: str
    """The provider's own status (``in_progress``, ``completed``, ``expired``, ``ended`` ...)."""
    done: bool
    """Whether it will change no more (its results, if any, can be read)."""
    total: int = 0
    completed: int = 0
    failed: int = 0
    problem: str | None = None
    """Why the batch as a whole failed (its input refused), or expired; None when it did not."""


class BatchProvider(ABC):
    """One provider's batch API for one backend (its model, server and key)."""

    name: str
    max_requests: int
    """Most lines one batch may hold (larger steps are split)."""
    max_bytes: int
    """Most bytes of lines one batch may hold (a little under the provider's limit)."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self.max_line_bytes: int = getattr(backend, "max_reply_bytes", DEFAULT_MAX_REPLY_BYTES)
        """The largest result line read (``--max-reply-mb``, as a direct reply's body is capped)."""

    def endpoint(self, request: Request) -> str:
        """The endpoint its lines go to (a batch holds lines of one endpoint)."""
        return "messages"

    def custom_ids(self, key: str, request: Request) -> list[str]:
        """The ids of the lines one request is sent as (one, unless the provider draws one reply per line)."""
        return [key]

    @abstractmethod
    def lines(self, key: str, request: Request) -> list[dict[str, Any]]:
        """The request as input lines, each with its ``custom_id``."""

    @abstractmethod
    async def submit(self, entry: BatchEntry, lines: list[dict[str, Any]], path: Any) -> str:
        """Create the batch (``path``: its input file, already written); returns the provider's id."""

    @abstractmethod
    async def find(self, entry: BatchEntry, known: set[str]) -> str | None:
        """The id of the batch ``entry`` created when the run stopped before writing it down, or None when the
        provider never created one; ``known``: ids the ledger already has (never ``entry``'s)."""

    @abstractmethod
    async def status(self, batch_id: str) -> Status: ...

    @abstractmethod
    async def results(self, batch_id: str) -> list[dict[str, Any]]:
        """The batch's result lines (answers and errors), as the provider wrote them."""

    @abstractmethod
    def outcome(self, line: dict[str, Any]) -> tuple[str, Outcome]:
        """A result line's id, and its reply body or error."""

    def line_outcome(self, line: dict[str, Any]) -> tuple[str, Outcome]:
        """``outcome``, or the error of a line too large to be read (``read_lines`` left its size in its stead)."""
        if TOO_LARGE in line:
            detail = f"its result line has more than {self.max_line_bytes} bytes"
            return str(line.get("custom_id")), LineError(reply_too_large(self.max_line_bytes, detail), retryable=False,
                                                         cause=REPLY_TOO_LARGE)
        return self.outcome(line)

    async def read_lines(self, chunks: AsyncIterable[bytes]) -> list[dict[str, Any]]:
        """The JSON lines of a results file as it streams in; a line larger than ``max_line_bytes`` is not kept
        (a ``TOO_LARGE`` line with its ``custom_id`` stands for it), one that is not a JSON object is a ``MALFORMED``
        line (skipped when read, counted in the batch's notes)."""
        return [line async for line in capped_lines(chunks, self.max_line_bytes)]

    @abstractmethod
    def response(self, request: Request, bodies: list[dict[str, Any]]) -> Response | LineError:
        """The request's response from the reply bodies of its lines."""

    @abstractmethod
    async def cancel(self, batch_id: str) -> str:
        """Ask the provider to cancel the batch; returns its status."""

    @abstractmethod
    async def listing(self) -> list[dict[str, Any]]:
        """The provider's recent batches, as ``{"id", "status", "created", "requests"}``."""

    async def aclose(self) -> None:  # noqa: B027  (optional hook)
        """Close the client."""


PROVIDERS: Registry[type[BatchProvider]] = Registry("batch provider")
PROVIDERS.register("openai", "structbench.runner.batch.openai:OpenAIBatches")
PROVIDERS.register("anthropic", "structbench.runner.batch.anthropic:AnthropicBatches")


def provider_for(backend: Backend) -> BatchProvider:
    """The batch API of ``backend``; a backend without one is a usage error (``--batch``)."""
    if backend.backend not in PROVIDERS:
        raise UsageError(f"--batch: the {backend.backend} backend has no batch API (openai and anthropic have one)")
    return PROVIDERS.get(backend.backend)(backend)


async def capped_lines(chunks: AsyncIterable[bytes], limit: int) -> AsyncIterator[dict[str, Any]]:
    """JSON objects, one a line, from a stream of bytes holding no more than ``limit`` bytes of one line at a time."""
    buffer = bytearray()
    head: bytes | None = None  # set while a line over the limit is skipped
    size = 0

    def finish() -> dict[str, Any] | None:
        if head is not None:
            found = _CUSTOM_ID.search(head)
            custom_id = json.loads(b'"' + found.group(1) + b'"') if found else None
            return {"custom_id": custom_id, TOO_LARGE: size}
        if not buffer.strip():
            return None
        try:
            line = json.loads(buffer)
        except ValueError:
            return {MALFORMED: True}
        return line if isinstance(line, dict) else {MALFORMED: True}

    async for chunk in chunks:
        start = 0
        while start <= len(chunk):
            end = chunk.find(b"\n", start)
            piece = chunk[start:] if end < 0 else chunk[start:end]
            size += len(piece)
            if head is None:
                buffer += piece
                if len(buffer) > limit:
                    head, buffer = bytes(buffer[:HEAD]), bytearray()
            if end < 0:
                break
            line = finish()
            if line is not None:
                yield line
            buffer, head, size = bytearray(), None, 0
            start = end + 1
    line = finish()
    if line is not None:
        yield line
