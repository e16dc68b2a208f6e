"""What the collector needs of a provider's batch API: turn requests into lines, submit, poll, read, cancel.

Each line's id (``custom_id``) is the cache key of its request (``backends.base.cache_key``, 64 hex digits), so a
line's answer goes to the response cache under the key the same request sent directly would have, and a batch
adopted after a restart is matched to the requests waiting for it by ids alone.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

from structbench.backends.base import Backend, Request, Response
from structbench.batch.ledger import BatchEntry
from structbench.errors import UsageError
from structbench.registry import Registry


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
PROVIDERS.register("openai", "structbench.batch.openai:OpenAIBatches")
PROVIDERS.register("anthropic", "structbench.batch.anthropic:AnthropicBatches")


def provider_for(backend: Backend) -> BatchProvider:
    """The batch API of ``backend``; a backend without one is a usage error (``--batch``)."""
    if backend.backend not in PROVIDERS:
        raise UsageError(f"--batch: the {backend.backend} backend has no batch API (openai and anthropic have one)")
    return PROVIDERS.get(backend.backend)(backend)
