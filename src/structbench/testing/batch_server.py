"""A loopback server with the batch APIs of OpenAI and Anthropic, for tests and by hand: never the network.

OpenAI: ``/v1/files`` (upload a JSONL, read a file's content), ``/v1/batches`` (create, retrieve, list, cancel) and
``/v1/chat/completions`` itself. Anthropic: ``/v1/messages`` and ``/v1/messages/batches`` (create, retrieve, list,
cancel, results). Every answer, direct or in a batch, comes from one ``MockOpenAIServer`` (or a subclass: a
``ReasoningServer``), so a batch answers exactly as direct calls do. A batch runs its lines ``complete_after``
seconds after it was created (at the first poll from then on); until then it is in progress.

It misbehaves on demand (``FAULTS``, on the first ``fault_times`` batches, or all): ``drop-lines`` leaves the last
line out of the output, ``foreign-ids`` adds two lines with ids never sent, ``conflicting-lines`` adds a second
line for the first id with another answer, ``malformed-lines`` (OpenAI) two lines that are not JSON, ``fail-lines``
fails the first line with a 500 (in the error file), ``refuse-lines`` fails every line for good (a 404: the model not
found), ``expire`` runs half the lines and expires the rest, ``reject`` fails the whole batch (its input refused).
``stats`` counts what it was asked: batches created, files uploaded, direct calls.

Its Messages API checks ``thinking`` as Anthropic's does: ``enabled`` with ``budget_tokens`` of at least 1024 and
below ``max_tokens``, ``adaptive`` without one, an ``output_config.effort`` of Anthropic's levels, no ``temperature``
but 1 beside thinking, and, while thinking is on, a tool loop's assistant turn sent back with its thinking blocks first
and their signatures unchanged (a 400 otherwise). Its thinking blocks (the model's
reasoning field) are signed with ``signature``; ``messages_sent`` keeps every Messages API body it was sent.

    python -m structbench.testing.batch_server --complete-after 8 --port-file p.txt
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import secrets
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from aiohttp import web

from structbench.testing.openai_server import MockOpenAIServer

FAULTS = ("drop-lines", "foreign-ids", "fail-lines", "refuse-lines", "expire", "reject", "conflicting-lines",
          "malformed-lines")
EFFORTS = ("low", "medium", "high", "xhigh", "max")
"""The ``output_config.effort`` levels Anthropic's Messages API takes."""


@dataclass
class Stats:
    """What the server was asked."""

    batches: int = 0
    """Batches created (OpenAI and Anthropic)."""
    files: int = 0
    direct: int = 0
    """Direct calls: chat or completion requests, Anthropic messages."""
    batch_lines: int = 0
    """Requests answered inside batches."""
    cancelled: int = 0
    compressed: int = 0
    """Anthropic results files sent compressed (the client accepted it, as a real server would)."""


@dataclass
class _Batch:
    id: str
    kind: str
    """``openai`` or ``anthropic``."""
    lines: list[dict[str, Any]]
    created: float
    endpoint: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)
    input_file_id: str = ""
    status: str = "in_progress"
    output: list[dict[str, Any]] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)
    output_file_id: str | None = None
    error_file_id: str | None = None
    fault: str | None = None
    cancelled: bool = False


class BatchServer:
    """The routes, over ``answers`` (the model)."""

    def __init__(self, answers: MockOpenAIServer | None = None, complete_after: float = 0.0, fault: str | None = None,
                 fault_times: int = 0, anthropic_usage: dict[str, Any] | None = None) -> None:
        if fault is not None and fault not in FAULTS:
            raise ValueError(f"unknown fault {fault!r}; faults: {', '.join(FAULTS)}")
        self.answers = answers or MockOpenAIServer()
        self.complete_after = complete_after
        self.fault = fault
        self.fault_times = fault_times
        self.anthropic_usage = anthropic_usage
        self.stats = Stats()
        self.messages_sent: list[dict[str, Any]] = []
        """The Messages API bodies of direct calls, as sent."""
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, _Batch] = {}
        self.base = ""

    def app(self) -> web.Application:
        app = web.Application(client_max_size=256 * 2**20)
        app.add_routes([
            web.post("/v1/chat/completions", self.direct),
            web.post("/v1/completions", self.direct),
            web.get("/v1/models", self.models),
            web.post("/v1/files", self.upload),
            web.get("/v1/files/{id}", self.file_info),
            web.get("/v1/files/{id}/content", self.file_content),
            web.post("/v1/batches", self.create),
            web.get("/v1/batches", self.listing),
            web.get("/v1/batches/{id}", self.retrieve),
            web.post("/v1/batches/{id}/cancel", self.cancel),
            web.post("/v1/messages", self.message),
            web.post("/v1/messages/batches", self.a_create),
            web.get("/v1/messages/batches", self.a_listing),
            web.get("/v1/messages/batches/{id}", self.a_retrieve),
            web.post("/v1/messages/batches/{id}/cancel", self.a_cancel),
            web.get("/v1/messages/batches/{id}/results", self.a_results),
            web.get("/_stats", self.stats_route),
        ])
        return app

    # -- the model --------------------------------------------------------------------------------------

    async def _answer(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        raw = json.dumps(body).encode()
        status, data, _ = await self.answers.respond("POST", path, raw, {})
        return status, json.loads(data)

    async def direct(self, request: web.Request) -> web.Response:
        self.stats.direct += 1
        status, data, _ = await self.answers.respond("POST", request.path, await request.read(), dict(request.headers))
        return web.Response(status=status, body=data, content_type="application/json")

    async def models(self, request: web.Request) -> web.Response:
        status, data, _ = await self.answers.respond("GET", "/v1/models", b"", {})
        return web.Response(status=status, body=data, content_type="application/json")

    async def stats_route(self, request: web.Request) -> web.Response:
        return web.json_response(self.stats.__dict__)

    def _faulty(self) -> str | None:
        return self.fault if self.fault and (not self.fault_times or self.stats.batches <= self.fault_times) else None

    # -- OpenAI -----------------------------------------------------------------------------------------

    async def upload(self, request: web.Request) -> web.Response:
        reader = await request.multipart()
        content, name = b"", "input.jsonl"
        async for part in reader:
            if part.name == "file":  # type: ignore[union-attr]
                name = part.filename or name  # type: ignore[union-attr]
                content = bytes(await part.read())  # type: ignore[union-attr]
        file_id = f"file-{secrets.token_hex(8)}"
        self.files[file_id] = content
        self.stats.files += 1
        return web.json_response(self._file(file_id, name))

    def _file(self, file_id: str, name: str = "file.jsonl") -> dict[str, Any]:
        return {"id": file_id, "object": "file", "bytes": len(self.files.get(file_id, b"")),
                "created_at": int(time.time()), "filename": name, "purpose": "batch", "status": "processed"}

    async def file_info(self, request: web.Request) -> web.Response:
        file_id = request.match_info["id"]
        if file_id not in self.files:
            return _error(404, f"no file {file_id}")
        return web.json_response(self._file(file_id))

    async def file_content(self, request: web.Request) -> web.Response:
        file_id = request.match_info["id"]
        if file_id not in self.files:
            return _error(404, f"no file {file_id}")
        return web.Response(body=self.files[file_id], content_type="application/octet-stream")

    async def create(self, request: web.Request) -> web.Response:
        body = await request.json()
        content = self.files.get(body.get("input_file_id", ""))
        if content is None:
            return _error(400, "no such input file")
        lines = [json.loads(raw) for raw in content.decode().splitlines() if raw.strip()]
        self.stats.batches += 1
        batch = _Batch(id=f"batch_{secrets.token_hex(8)}", kind="openai", lines=lines, created=time.time(),
                       endpoint=body.get("endpoint", ""), metadata=body.get("metadata") or {},
                       input_file_id=body["input_file_id"], fault=self._faulty())
        if batch.fault == "reject":
            batch.status = "failed"
        self.batches[batch.id] = batch
        return web.json_response(self._openai(batch))

    async def _advance(self, batch: _Batch) -> None:
        """Run the batch's lines once its time has come."""
        if batch.status != "in_progress" or time.time() < batch.created + self.complete_after:
            return
        batch.status = "finalizing"
        lines = batch.lines
        expired: list[dict[str, Any]] = []
        if batch.fault == "expire":
            lines, expired = lines[: len(lines) // 2], lines[len(lines) // 2:]
        results = await asyncio.gather(*(self._run_line(batch, line) for line in lines))
        for answered, result in results:
            (batch.output if answered else batch.errors).append(result)
            self.stats.batch_lines += answered
        for line in expired:
            batch.errors.append(self._line_error(batch, line, "batch_expired",
                                                 "This request could not be executed before the window expired."))
        if batch.fault == "drop-lines" and batch.output:
            batch.output.pop()
        if batch.fault == "foreign-ids":
            for i in range(2):
                batch.output.append({**(batch.output[0] if batch.output else {}), "custom_id": f"foreign-{i}"})
        if batch.fault == "conflicting-lines" and batch.output and batch.kind == "openai":
            second = json.loads(json.dumps(batch.output[0]))
            second["response"]["body"]["choices"][0]["message"]["content"] = "The answer is maybe."
            batch.output.append(second)
        if batch.kind == "openai":
            batch.output_file_id = self._store(batch.output)
            if batch.fault == "malformed-lines":
                self.files[batch.output_file_id] += b"not json\n{\"custom_id\": \"torn\n"
            batch.error_file_id = self._store(batch.errors) if batch.errors else None
        batch.status = "expired" if batch.fault == "expire" else "completed" if batch.kind == "openai" else "ended"

    async def _run_line(self, batch: _Batch, line: dict[str, Any]) -> tuple[bool, dict[str, Any]]:
        """(answered, the result line) of one input line."""
        if batch.fault == "refuse-lines":
            if batch.kind == "anthropic":
                return False, {"custom_id": line["custom_id"], "result": {"type": "errored", "error": {
                    "type": "error", "error": {"type": "not_found_error", "message": "model: not found"}}}}
            return False, {"id": f"batch_req_{secrets.token_hex(6)}", "custom_id": line["custom_id"], "response": {
                "status_code": 404, "request_id": "req", "body": {"error": {"message": "The model does not exist",
                                                                            "code": "model_not_found"}}},
                "error": None}
        if batch.kind == "anthropic":
            if batch.fault == "fail-lines" and line is batch.lines[0]:
                return False, {"custom_id": line["custom_id"], "result": {"type": "errored", "error": {
                    "type": "error", "error": {"type": "api_error", "message": "injected failure"}}}}
            status, message = await self._message(line["params"])
            if status != 200:
                return False, {"custom_id": line["custom_id"], "result": {"type": "errored", "error": message}}
            return True, {"custom_id": line["custom_id"], "result": {"type": "succeeded", "message": message}}
        if batch.fault == "fail-lines" and line is batch.lines[0]:
            return False, {"id": f"req_{secrets.token_hex(6)}", "custom_id": line["custom_id"], "response": {
                "status_code": 500, "request_id": "req", "body": {"error": {"message": "injected failure"}}},
                "error": None}
        status, data = await self._answer(line["url"], line["body"])
        result = {"id": f"batch_req_{secrets.token_hex(6)}", "custom_id": line["custom_id"],
                  "response": {"status_code": status, "request_id": f"req_{secrets.token_hex(4)}", "body": data},
                  "error": None}
        return status == 200, result

    @staticmethod
    def _line_error(batch: _Batch, line: dict[str, Any], code: str, message: str) -> dict[str, Any]:
        if batch.kind == "anthropic":
            return {"custom_id": line["custom_id"], "result": {"type": "expired"}}
        return {"id": f"batch_req_{secrets.token_hex(6)}", "custom_id": line["custom_id"], "response": None,
                "error": {"code": code, "message": message}}

    def _store(self, lines: list[dict[str, Any]]) -> str:
        file_id = f"file-{secrets.token_hex(8)}"
        self.files[file_id] = "".join(json.dumps(line) + "\n" for line in lines).encode()
        return file_id

    def _openai(self, batch: _Batch) -> dict[str, Any]:
        done = len(batch.output) if batch.status in ("completed", "expired", "cancelled") else 0
        failed = len(batch.errors)
        errors = None
        if batch.status == "failed":
            errors = {"object": "list", "data": [{"code": "invalid_request", "message": "the input file was refused",
                                                  "line": 1, "param": None}]}
        return {"id": batch.id, "object": "batch", "endpoint": batch.endpoint, "errors": errors,
                "input_file_id": batch.input_file_id, "completion_window": "24h", "status": batch.status,
                "output_file_id": batch.output_file_id, "error_file_id": batch.error_file_id,
                "created_at": int(batch.created), "expires_at": int(batch.created) + 86400,
                "request_counts": {"total": len(batch.lines), "completed": done, "failed": failed},
                "metadata": batch.metadata}

    async def retrieve(self, request: web.Request) -> web.Response:
        batch = self.batches.get(request.match_info["id"])
        if batch is None or batch.kind != "openai":
            return _error(404, "no such batch")
        await self._advance(batch)
        return web.json_response(self._openai(batch))

    async def listing(self, request: web.Request) -> web.Response:
        data = [self._openai(b) for b in sorted(self.batches.values(), key=lambda b: -b.created) if b.kind == "openai"]
        return web.json_response({"object": "list", "data": data, "has_more": False,
                                  "first_id": data[0]["id"] if data else None,
                                  "last_id": data[-1]["id"] if data else None})

    async def cancel(self, request: web.Request) -> web.Response:
        batch = self.batches.get(request.match_info["id"])
        if batch is None or batch.kind != "openai":
            return _error(404, "no such batch")
        if batch.status == "in_progress":
            batch.status = "cancelled"
            batch.output_file_id = self._store(batch.output)
            self.stats.cancelled += 1
        return web.json_response(self._openai(batch))

    # -- Anthropic --------------------------------------------------------------------------------------

    async def _message(self, params: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """A Messages API reply (status, body): the model's answer, its thought as a thinking block; a refusal of
        the model's server as Anthropic's error (``prompt is too long`` for a context refusal); a request the API
        refuses for its thinking (``thinking_problem``) as a 400."""
        problem = thinking_problem(params)
        if problem is not None:
            return 400, {"type": "error", "error": {"type": "invalid_request_error", "message": problem}}
        messages = openai_messages(list(params.get("messages") or []))
        if params.get("system"):
            messages.insert(0, {"role": "system", "content": params["system"]})
        body: dict[str, Any] = {"model": params.get("model"), "messages": messages,
                                "max_tokens": params.get("max_tokens")}
        if params.get("tools"):
            body["tools"] = [{"type": "function", "function": {"name": t.get("name"), "parameters":
                                                                 t.get("input_schema")}} for t in params["tools"]]
        status, data = await self._answer("/v1/chat/completions", body)
        if status != 200:
            text = json.dumps(data)
            kind, said = "api_error", text
            if "context" in text:
                kind, said = "invalid_request_error", "prompt is too long: 250000 tokens > 200000 maximum"
            return status, {"type": "error", "error": {"type": kind, "message": said}}
        choice = (data.get("choices") or [{}])[0]
        message = choice.get("message") or {}
        content: list[dict[str, Any]] = []
        for name in ("reasoning_content", "reasoning"):
            if isinstance(message.get(name), str):
                content.append({"type": "thinking", "thinking": message[name], "signature": signature(message[name])})
        if message.get("content") or not message.get("tool_calls"):
            content.append({"type": "text", "text": message.get("content") or ""})
        for call in message.get("tool_calls") or []:
            content.append({"type": "tool_use", "id": call["id"], "name": call["function"]["name"],
                            "input": json.loads(call["function"]["arguments"] or "{}")})
        usage = self.anthropic_usage or {"input_tokens": (data.get("usage") or {}).get("prompt_tokens", 1),
                                         "output_tokens": (data.get("usage") or {}).get("completion_tokens", 1)}
        stop = {"length": "max_tokens", "tool_calls": "tool_use"}.get(choice.get("finish_reason"), "end_turn")
        return 200, {"id": f"msg_{secrets.token_hex(8)}", "type": "message", "role": "assistant",
                     "model": params.get("model"), "content": content, "stop_reason": stop, "stop_sequence": None,
                     "usage": usage}

    async def message(self, request: web.Request) -> web.Response:
        self.stats.direct += 1
        params = await request.json()
        self.messages_sent.append(params)
        status, body = await self._message(params)
        return web.json_response(body, status=status)

    def _anthropic(self, batch: _Batch) -> dict[str, Any]:
        ended = batch.status in ("ended", "expired")
        counts = {"processing": 0 if ended or batch.cancelled else len(batch.lines), "succeeded": 0, "errored": 0,
                  "canceled": 0, "expired": 0}
        if ended:
            counts["succeeded"] = sum(1 for r in batch.output if r.get("result", {}).get("type") == "succeeded")
            counts["errored"] = sum(1 for r in batch.errors if r.get("result", {}).get("type") == "errored")
            counts["expired"] = sum(1 for r in batch.errors if r.get("result", {}).get("type") == "expired")
        if batch.cancelled:
            counts["canceled"] = len(batch.lines)
        stamp = datetime.fromtimestamp(batch.created, UTC).isoformat()
        return {"id": batch.id, "type": "message_batch",
                "processing_status": "ended" if ended or batch.cancelled else "in_progress",
                "request_counts": counts, "created_at": stamp,
                "expires_at": datetime.fromtimestamp(batch.created + 86400, UTC).isoformat(),
                "ended_at": stamp if ended else None, "archived_at": None,
                "cancel_initiated_at": stamp if batch.cancelled else None,
                "results_url": f"{self.base}/v1/messages/batches/{batch.id}/results" if ended or batch.cancelled
                else None}

    async def a_create(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.stats.batches += 1
        batch = _Batch(id=f"msgbatch_{secrets.token_hex(8)}", kind="anthropic", lines=list(body.get("requests") or []),
                       created=time.time(), fault=self._faulty())
        self.batches[batch.id] = batch
        return web.json_response(self._anthropic(batch))

    async def a_retrieve(self, request: web.Request) -> web.Response:
        batch = self.batches.get(request.match_info["id"])
        if batch is None or batch.kind != "anthropic":
            return _error(404, "no such batch")
        await self._advance(batch)
        return web.json_response(self._anthropic(batch))

    async def a_listing(self, request: web.Request) -> web.Response:
        data = [self._anthropic(b) for b in sorted(self.batches.values(), key=lambda b: -b.created)
                if b.kind == "anthropic"]
        return web.json_response({"data": data, "has_more": False, "first_id": data[0]["id"] if data else None,
                                  "last_id": data[-1]["id"] if data else None})

    async def a_cancel(self, request: web.Request) -> web.Response:
        batch = self.batches.get(request.match_info["id"])
        if batch is None or batch.kind != "anthropic":
            return _error(404, "no such batch")
        if batch.status == "in_progress":
            batch.cancelled = True
            self.stats.cancelled += 1
        return web.json_response(self._anthropic(batch))

    async def a_results(self, request: web.Request) -> web.Response:
        batch = self.batches.get(request.match_info["id"])
        if batch is None or batch.kind != "anthropic":
            return _error(404, "no such batch")
        lines = batch.output + batch.errors
        if batch.cancelled:
            lines = [{"custom_id": line["custom_id"], "result": {"type": "canceled"}} for line in batch.lines]
        body = "".join(json.dumps(line) + "\n" for line in lines)
        response = web.Response(body=body.encode(), content_type="application/binary")
        if "gzip" in request.headers.get("Accept-Encoding", ""):
            response.enable_compression()
            self.stats.compressed += 1
        return response


def signature(thinking: str) -> str:
    """The loopback's signature of a thinking block's text (Anthropic's is opaque; a changed text fails it)."""
    return hashlib.sha256(f"loopback thinking:{thinking}".encode()).hexdigest()


def thinking_problem(params: dict[str, Any]) -> str | None:
    """What Anthropic's Messages API says of a request whose thinking it refuses, or None."""
    thinking = params.get("thinking")
    messages = [m for m in params.get("messages") or [] if isinstance(m, dict)]
    for i, m in enumerate(messages):
        blocks = m.get("content")
        for k, block in enumerate(blocks if isinstance(blocks, list) else []):
            signed = isinstance(block, dict) and block.get("type") == "thinking"
            if signed and block.get("signature") != signature(str(block.get("thinking"))):
                return f"messages.{i}.content.{k}: Invalid `signature` in `thinking` block"
    output = params.get("output_config")
    if isinstance(output, dict) and "effort" in output and output["effort"] not in EFFORTS:
        return f"output_config.effort: Input should be {', '.join(repr(e) for e in EFFORTS)}"
    if not isinstance(thinking, dict) or thinking.get("type") not in ("enabled", "adaptive"):
        return None
    budget, cap = thinking.get("budget_tokens"), params.get("max_tokens")
    if thinking["type"] == "adaptive" and budget is not None:
        return "thinking.adaptive.budget_tokens: Extra inputs are not permitted"
    if thinking["type"] == "enabled":
        if not isinstance(budget, int) or budget < 1024:
            return "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
        if not isinstance(cap, int) or budget >= cap:
            return "`max_tokens` must be greater than `thinking.budget_tokens`"
    if params.get("temperature", 1) != 1:
        return "`temperature` may only be set to 1 when thinking is enabled"
    last = messages[-1] if messages else {}
    results = isinstance(last.get("content"), list) and any(b.get("type") == "tool_result" for b in last["content"])
    if results and len(messages) >= 2 and messages[-2].get("role") == "assistant":
        content = messages[-2].get("content")
        first = content[0].get("type") if isinstance(content, list) and content else "text"
        if first not in ("thinking", "redacted_thinking"):
            return (f"messages.{len(messages) - 2}.content.0.type: Expected `thinking` or `redacted_thinking`, but "
                    f"found `{first}`. When `thinking` is enabled, a final `assistant` message must start with a "
                    "thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks).")
    return None


def openai_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages API turns as chat-completion messages, for the model behind both: ``tool_use`` blocks as an assistant's
    ``tool_calls``, ``tool_result`` blocks as ``tool`` messages, text blocks joined."""
    out: list[dict[str, Any]] = []
    for m in messages:
        content = m.get("content")
        if not isinstance(content, list):
            out.append({"role": m.get("role"), "content": content})
            continue
        text = "".join(b.get("text", "") for b in content if b.get("type") == "text")
        calls = [{"id": b.get("id"), "type": "function",
                  "function": {"name": b.get("name"), "arguments": json.dumps(b.get("input"))}}
                 for b in content if b.get("type") == "tool_use"]
        results = [b for b in content if b.get("type") == "tool_result"]
        if results:
            out += [{"role": "tool", "tool_call_id": b.get("tool_use_id"), "content": b.get("content")}
                    for b in results]
        elif calls:
            out.append({"role": "assistant", "content": text or None, "tool_calls": calls})
        else:
            out.append({"role": m.get("role"), "content": text})
    return out


def _error(status: int, message: str) -> web.Response:
    return web.json_response({"error": {"message": message, "type": "invalid_request_error"}}, status=status)


@contextmanager
def serve_batches_in_thread(server: BatchServer) -> Iterator[str]:
    """Run ``server`` on a loopback port in a thread of this process; yields ``http://127.0.0.1:PORT``."""
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    bound: list[int] = []
    runner = web.AppRunner(server.app())

    def serve() -> None:
        asyncio.set_event_loop(loop)
        loop.run_until_complete(runner.setup())
        site = web.TCPSite(runner, "127.0.0.1", 0)
        loop.run_until_complete(site.start())
        bound.append(site._server.sockets[0].getsockname()[1])  # type: ignore[union-attr]
        server.base = f"http://127.0.0.1:{bound[0]}"
        ready.set()
        try:
            loop.run_forever()
        finally:
            loop.run_until_complete(runner.cleanup())
            loop.close()

    thread = threading.Thread(target=serve, name="loopback-batch-server", daemon=True)
    thread.start()
    if not ready.wait(30) or not bound:
        raise RuntimeError("the loopback batch server did not start")
    try:
        yield server.base
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--complete-after", type=float, default=0.0, help="Seconds a batch takes.")
    parser.add_argument("--fault", choices=FAULTS, default=None)
    parser.add_argument("--fault-times", type=int, default=0, help="Only the first N batches (0: all).")
    parser.add_argument("--reply", default="A")
    parser.add_argument("--usage", type=json.loads, default=None, help="The usage object of every reply (JSON).")
    parser.add_argument("--port-file", type=Path, default=None)
    args = parser.parse_args()
    server = BatchServer(MockOpenAIServer(reply=args.reply, usage=args.usage), args.complete_after, args.fault,
                         args.fault_times)

    async def run() -> None:
        runner = web.AppRunner(server.app())
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", args.port)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        server.base = f"http://127.0.0.1:{port}"
        if args.port_file:
            tmp = args.port_file.with_suffix(".tmp")
            tmp.write_text(str(port))
            tmp.replace(args.port_file)
        print(f"listening on {server.base}/v1", flush=True)
        await asyncio.Event().wait()

    asyncio.run(run())


if __name__ == "__main__":
    main()
