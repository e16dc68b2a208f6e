"""The OpenAI Batch API through the official ``openai`` SDK: a JSONL of ``/v1/chat/completions`` (or
``/v1/completions``) requests uploaded as a file, a batch created over it (with structbench's tag in its metadata),
polled, and its output and error files read. Each line's body is the one the ``openai`` backend sends directly, so
a reply is parsed by the same code as a direct one (``OpenAIBackend._parse``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from structbench.backends.base import PROMPT_TOO_LONG, Request, Response
from structbench.backends.openai_compat import RETRY_STATUS, OpenAIBackend, _ServerFault, _UnusableReply
from structbench.backends.server_context import context_refusal
from structbench.core.redact import redact
from structbench.runner.batch.ledger import BatchEntry
from structbench.runner.batch.providers import BatchProvider, LineError, Outcome, Status

ENDED = frozenset({"completed", "failed", "expired", "cancelled"})
RETRY_CODES = frozenset({"batch_expired", "server_error", "rate_limit_exceeded", "timeout"})
"""Error codes of a line worth sending again."""
COMPLETION_WINDOW = "24h"


class OpenAIBatches(BatchProvider):
    """Batches of the ``openai`` backend's requests, to its first ``--base-url``."""

    name = "openai"
    max_requests = 50_000
    max_bytes = 190 * 2**20  # the input file may have 200 MB
    backend: OpenAIBackend

    def __init__(self, backend: Any) -> None:
        super().__init__(backend)
        self._client: Any = None

    def client(self) -> Any:
        if self._client is None:
            import openai

            replica = self.backend.replicas[0]
            self._client = openai.AsyncOpenAI(
                api_key=self.backend._api_key or "no-key", base_url=replica.url, timeout=self.backend.timeout,
                max_retries=self.backend.max_retries, default_headers=replica.headers)
        return self._client

    def endpoint(self, request: Request) -> str:
        return "/v1" + self.backend._body(request)[0]

    def lines(self, key: str, request: Request) -> list[dict[str, Any]]:
        path, body = self.backend._body(request)
        return [{"custom_id": key, "method": "POST", "url": "/v1" + path, "body": body}]

    async def submit(self, entry: BatchEntry, lines: list[dict[str, Any]], path: Path) -> str:
        client = self.client()
        with open(path, "rb") as fh:
            uploaded = await client.files.create(file=(path.name, fh), purpose="batch")
        batch = await client.batches.create(input_file_id=uploaded.id, endpoint=entry.endpoint,
                                            completion_window=COMPLETION_WINDOW,
                                            metadata={"structbench": entry.tag})
        return str(batch.id)

    async def find(self, entry: BatchEntry, known: set[str]) -> str | None:
        async for batch in self.client().batches.list(limit=100):
            if (batch.metadata or {}).get("structbench") == entry.tag and batch.id not in known:
                return str(batch.id)
            if batch.created_at < entry.created - 3600:  # newest first: older ones cannot be it
                break
        return None

    async def status(self, batch_id: str) -> Status:
        batch = await self.client().batches.retrieve(batch_id)
        counts = batch.request_counts
        problem = None
        if batch.status == "failed":
            errors = batch.errors.data if batch.errors is not None and batch.errors.data else []
            problem = "; ".join(redact(f"{e.code}: {e.message}" + (f" (line {e.line})" if e.line else ""))
                                for e in errors) or "the provider gave no reason"
        elif batch.status == "expired":
            problem = "it expired (its 24-hour window ended) before every request was run"
        return Status(word=batch.status, done=batch.status in ENDED, total=counts.total if counts else 0,
                      completed=counts.completed if counts else 0, failed=counts.failed if counts else 0,
                      problem=problem)

    async def results(self, batch_id: str) -> list[dict[str, Any]]:
        client = self.client()
        batch = await client.batches.retrieve(batch_id)
        lines: list[dict[str, Any]] = []
        for file_id in (batch.output_file_id, batch.error_file_id):
            if not file_id:
                continue
            async with client.files.with_streaming_response.content(file_id) as content:  # streamed: lines capped
                lines += await self.read_lines(content.iter_bytes())
        return lines

    def outcome(self, line: dict[str, Any]) -> tuple[str, Outcome]:
        custom_id = str(line.get("custom_id"))
        response = line.get("response")
        error = line.get("error")
        if isinstance(response, dict):
            status = response.get("status_code")
            body = response.get("body")
            if status == 200 and isinstance(body, dict):
                return custom_id, body
            if isinstance(status, int):
                text = redact(str(body)[:300])
                if context_refusal(status, str(body)) is not False:
                    return custom_id, LineError(f"the prompt does not fit the model's context: HTTP {status}: {text}",
                                                retryable=False, cause=PROMPT_TOO_LONG)
                return custom_id, LineError(f"HTTP {status}: {text}", retryable=status in RETRY_STATUS,
                                            cause=f"HTTP {status}")
        if isinstance(error, dict):
            code = str(error.get("code"))
            return custom_id, LineError(redact(f"{code}: {error.get('message')}"), retryable=code in RETRY_CODES,
                                        cause=code)
        return custom_id, LineError("a result line with neither a response nor an error", retryable=True)

    def response(self, request: Request, bodies: list[dict[str, Any]]) -> Response | LineError:
        try:
            return OpenAIBackend._parse(bodies[0], request.messages is not None, request.params)
        except _ServerFault as err:
            return LineError(f"HTTP 200 but {err}", retryable=True, cause="reply without choices")
        except _UnusableReply as err:
            return LineError(redact(f"unusable reply: {err}"), retryable=False, cause="unusable reply")

    async def cancel(self, batch_id: str) -> str:
        batch = await self.client().batches.cancel(batch_id)
        return str(batch.status)

    async def listing(self) -> list[dict[str, Any]]:
        out = []
        page = await self.client().batches.list(limit=100)
        for batch in page.data:
            out.append({"id": batch.id, "status": batch.status, "created": batch.created_at,
                        "requests": batch.request_counts.total if batch.request_counts else None,
                        "tag": (batch.metadata or {}).get("structbench")})
        return out

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None
