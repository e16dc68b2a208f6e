"""Anthropic Message Batches through the official ``anthropic`` SDK: the requests sent inline (the input file in the
run directory is a copy of them), polled, and their results streamed. The API draws one reply per request, so a
request for ``n`` replies is ``n`` lines (ids ``KEY[:60]-i``). Message batches carry no metadata: one whose id was not
written down (a kill between its creation and the ledger's update) is found by its size and creation time."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from structbench.backends.anthropic import RETRY_TYPES, AnthropicBackend, combine, too_long
from structbench.backends.base import PROMPT_TOO_LONG, BackendError, Request, Response
from structbench.core.redact import redact
from structbench.runner.batch.ledger import BatchEntry
from structbench.runner.batch.providers import BatchProvider, LineError, Outcome, Status

FIND_WINDOW = 600.0
"""Seconds after its ledger entry was written within which a batch of the same size is taken for it."""
CLOCK_SKEW = 2.0
"""Seconds the provider's clock may be behind this machine's."""
COMPRESSED = {"Accept-Encoding": "gzip, deflate"}
"""The results file may come compressed: it is exempt from the cap on a reply, which asks for every other body
uncompressed (``backends.anthropic_http``), and is read a capped line at a time."""


class AnthropicBatches(BatchProvider):
    """Message batches of the ``anthropic`` backend's requests."""

    name = "anthropic"
    max_requests = 100_000
    max_bytes = 240 * 2**20  # a batch may have 256 MB
    backend: AnthropicBackend

    def custom_ids(self, key: str, request: Request) -> list[str]:
        n = request.params.n
        return [key] if n == 1 else [f"{key[:60]}-{i}" for i in range(n)]

    def lines(self, key: str, request: Request) -> list[dict[str, Any]]:
        params = self.backend.params(request)
        return [{"custom_id": custom_id, "params": params} for custom_id in self.custom_ids(key, request)]

    async def submit(self, entry: BatchEntry, lines: list[dict[str, Any]], path: Path) -> str:
        batch = await self.backend.client().messages.batches.create(requests=lines)
        return str(batch.id)

    async def find(self, entry: BatchEntry, known: set[str]) -> str | None:
        page = await self.backend.client().messages.batches.list(limit=100)
        found = [b for b in page.data if b.id not in known and _total(b) == entry.requests
                 and entry.created - CLOCK_SKEW <= _epoch(b.created_at) <= entry.created + FIND_WINDOW]
        # created after the entry was written; of a few candidates (another run's batch of the same size, say),
        # the first after it, then the nearest before it within the clocks' skew
        found.sort(key=lambda b: (_epoch(b.created_at) < entry.created, abs(_epoch(b.created_at) - entry.created)))
        return str(found[0].id) if found else None

    async def status(self, batch_id: str) -> Status:
        batch = await self.backend.client().messages.batches.retrieve(batch_id)
        counts = batch.request_counts
        word = batch.processing_status
        if word == "ended" and batch.cancel_initiated_at is not None:
            word = "cancelled"
        problem = f"{counts.expired} request(s) expired before they were run" if counts.expired else None
        return Status(word=word, done=batch.processing_status == "ended", total=_total(batch),
                      completed=counts.succeeded, failed=counts.errored + counts.canceled + counts.expired,
                      problem=problem)

    async def results(self, batch_id: str) -> list[dict[str, Any]]:
        decoder = await self.backend.client().messages.batches.results(batch_id, extra_headers=COMPRESSED)
        try:  # the response's bytes, so a line is capped before it is parsed (the SDK's decoder parses any size)
            return await self.read_lines(decoder.http_response.aiter_bytes())
        finally:
            await decoder.close()

    def outcome(self, line: dict[str, Any]) -> tuple[str, Outcome]:
        custom_id = str(line.get("custom_id"))
        result = line.get("result")
        if not isinstance(result, dict):
            return custom_id, LineError("a result line without a result", retryable=True)
        kind = result.get("type")
        if kind == "succeeded" and isinstance(result.get("message"), dict):
            return custom_id, result["message"]
        if kind == "errored":
            error = result.get("error")
            inner = error.get("error") if isinstance(error, dict) and isinstance(error.get("error"), dict) else error
            inner = inner if isinstance(inner, dict) else {}
            message = redact(f"{inner.get('type')}: {inner.get('message')}")
            if too_long(message):
                return custom_id, LineError(f"the prompt does not fit the model's context: {message}",
                                            retryable=False, cause=PROMPT_TOO_LONG)
            return custom_id, LineError(message, retryable=inner.get("type") in RETRY_TYPES,
                                        cause=str(inner.get("type")))
        if kind == "expired":
            return custom_id, LineError("the batch expired before this request was run", retryable=True,
                                        cause="expired")
        if kind == "canceled":
            return custom_id, LineError("the batch was cancelled before this request was run", retryable=True,
                                        cause="batch cancelled")
        return custom_id, LineError(f"the request was not run ({kind})", retryable=False, cause=str(kind))

    def response(self, request: Request, bodies: list[dict[str, Any]]) -> Response | LineError:
        try:
            return combine(bodies, request.params)
        except BackendError as err:
            return LineError(str(err), retryable=False, cause=err.cause)

    async def cancel(self, batch_id: str) -> str:
        batch = await self.backend.client().messages.batches.cancel(batch_id)
        return str(batch.processing_status)

    async def listing(self) -> list[dict[str, Any]]:
        page = await self.backend.client().messages.batches.list(limit=100)
        return [{"id": b.id, "status": b.processing_status, "created": _epoch(b.created_at), "requests": _total(b)}
                for b in page.data]

    async def aclose(self) -> None:
        await self.backend.aclose()


def _total(batch: Any) -> int:
    c = batch.request_counts
    return int(c.processing + c.succeeded + c.errored + c.canceled + c.expired)


def _epoch(value: datetime | float) -> float:
    return value.timestamp() if isinstance(value, datetime) else float(value)
