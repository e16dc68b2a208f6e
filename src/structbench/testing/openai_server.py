"""A minimal OpenAI-compatible HTTP server on loopback, for tests and the overhead benchmark.

It answers ``/v1/chat/completions`` and ``/v1/completions`` after a fixed latency with a fixed reply, or a
scripted reply per last message (``--replies``), can fail every k-th request with 429 (``Retry-After: 0`` by default)
or 500, and appends one line per request it answers to a log (``request_digest``, then the times it was
received and answered), so tests can prove no request was repeated and benchmarks can time the request phase.

It can also misbehave the ways real servers do (``FAULTS``): a reply whose content is a list of parts or a
number, no choices, null content (with ``finish_reason`` ``length``, as reasoning servers send when they run
out of tokens), a body that is not JSON or is cut off, a huge reply, a 401 that echoes the API key (whole,
or where a cut of the body splits it); with ``served_model`` set, any other model name gets OpenAI's 404.
``fault_times`` limits a fault to the first N requests (then it answers normally), so tests can watch a retry
succeed. ``replies`` scripts the answers: a request whose last message (or prompt) is a key gets that key's reply
instead of the fixed one (a list: picked by the request's seed), so a test can play a model that answers each
question its own way. ``usage`` fixes the usage object of every reply (``--usage '{"prompt_tokens": 100, ...}'``),
``no_usage`` leaves it out.

It can play a model that uses tools (``tool_model``): offered function tools (``tools``) and no tool result yet in
the conversation, it answers with a ``tool_calls`` call of the first tool it has arguments for
(``tool_arguments``, by tool name, ``*`` for any; the first tool offered otherwise); once a tool's result is in the
conversation it answers in text, the ``tool_answers`` entry whose key is in the first user message (else ``reply``);
offered no tool, it answers ``reply``. So it answers right only after calling the tool it is offered;
``tool_results`` keeps every result it was sent.

It can be small and slow like a local server: ``slots`` requests at once (the rest wait in its queue, as in a
llama.cpp server), each taking ``latency`` seconds; and it can have a ``context`` (in tokens, a prompt counting
a quarter of its body's bytes): a request whose prompt plus ``max_tokens`` exceeds it is refused with a 400 in
the words of one server (``CONTEXT_REFUSALS``: vllm, openai, llamacpp, sglang), and ``GET /v1/models`` then
gives it as ``max_model_len`` unless ``hide_context``.

    python -m structbench.testing.openai_server --port 0 --latency 0.05 --reply A --port-file p.txt
    python -m structbench.testing.openai_server --fault no-choices --fault-times 1 --port-file p.txt
    python -m structbench.testing.openai_server --slots 1 --latency 30 --context 8192 --refusal llamacpp
    python -m structbench.testing.openai_server --replies replies.json --port-file p.txt
    python -m structbench.testing.openai_server --tool-model --tool-answers answers.json --port-file p.txt
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

Reply = tuple[int, bytes]
"""HTTP status and body."""


def _json(status: int, payload: object) -> Reply:
    return status, json.dumps(payload).encode()


def _with_choice(server: MockOpenAIServer, change: Callable[[dict[str, Any]], None]) -> Reply:
    """A normal chat reply with its first choice changed."""
    body = server.completion("/v1/chat/completions", {})
    change(body["choices"][0])  # type: ignore[index]
    return _json(200, body)


def _set_content(value: object, finish: str = "stop") -> Callable[[MockOpenAIServer, dict[str, str]], Reply]:
    def fault(server: MockOpenAIServer, headers: dict[str, str]) -> Reply:
        def change(choice: dict[str, Any]) -> None:
            choice["message"]["content"] = value(server) if callable(value) else value
            choice["finish_reason"] = finish

        return _with_choice(server, change)

    return fault


def _no_choices(server: MockOpenAIServer, headers: dict[str, str]) -> Reply:
    body = server.completion("/v1/chat/completions", {})
    body["choices"] = []
    return _json(200, body)


def _truncated(server: MockOpenAIServer, headers: dict[str, str]) -> Reply:
    status, data = _json(200, server.completion("/v1/chat/completions", {}))
    return status, data[: len(data) // 2]


def _echo_key(server: MockOpenAIServer, headers: dict[str, str]) -> Reply:
    key = headers.get("authorization", "").removeprefix("Bearer ")
    message = f"Incorrect API key provided: {key}. You can find your API key at https://platform.openai.com."
    return _json(401, {"error": {"message": message, "type": "invalid_request_error", "code": "invalid_api_key"}})


def _echo_key_cut(server: MockOpenAIServer, headers: dict[str, str]) -> Reply:
    """A 401 whose message echoes the key after padding, so that a 300-byte cut of the body leaves all of the key
    but its last two characters."""
    key = headers.get("authorization", "").removeprefix("Bearer ")
    prefix = '{"error": {"message": "'
    padding = "x" * max(0, 300 - len(prefix) - len(key) + 2)
    return _json(401, {"error": {"message": f"{padding}{key} is not a valid key", "code": "invalid_api_key"}})


FAULTS: dict[str, Callable[[MockOpenAIServer, dict[str, str]], Reply]] = {
    "content-parts": _set_content(lambda s: [{"type": "text", "text": s.reply}]),
    "content-number": _set_content(42),
    "null-content": _set_content(None),
    "null-content-length": _set_content(None, finish="length"),
    "no-choices": _no_choices,
    "not-json": lambda server, headers: (200, b"<html><body>502 Bad Gateway</body></html>"),
    "truncated": _truncated,
    "huge": _set_content(lambda s: "A" * s.huge_bytes),
    "huge-chunked": _set_content(lambda s: HUGE),
    "echo-key": _echo_key,
    "echo-key-cut": _echo_key_cut,
}
"""Misbehaviours by name: each builds the reply to send instead of the normal one (chat form)."""

CONTEXT_REFUSALS: dict[str, Callable[[int, int, int], tuple[int, dict[str, Any]]]] = {
    "openai": lambda ctx, prompt, total: (400, {"error": {
        "message": f"This model's maximum context length is {ctx} tokens. However, you requested {total} tokens "
                   f"({prompt} in the messages, {total - prompt} in the completion). Please reduce the length of the "
                   "messages or completion.", "type": "invalid_request_error", "code": "context_length_exceeded"}}),
    "vllm": lambda ctx, prompt, total: (400, {"object": "error", "message": f"'max_tokens' or 'max_completion_tokens' "
                                              f"is too large: {total - prompt}. This model's maximum context length is "
                                              f"{ctx} tokens and your request has {prompt} input tokens "
                                              f"({total - prompt} > {ctx} - {prompt}).", "type": "BadRequestError",
                                              "code": 400}),
    "llamacpp": lambda ctx, prompt, total: (400, {"error": {
        "code": 400, "message": f"request ({prompt} tokens) exceeds the available context size ({ctx} tokens), try "
                                "increasing it", "type": "exceed_context_size_error", "n_prompt_tokens": prompt,
        "n_ctx": ctx}}),
    "sglang": lambda ctx, prompt, total: (400, {"object": "error", "message": f"Requested token count exceeds the "
                                                f"model's maximum context length of {ctx} tokens. You requested a "
                                                f"total of {total} tokens: {prompt} tokens from the input messages "
                                                f"and {total - prompt} tokens for the completion.",
                                                "type": "BadRequestError", "code": 400}),
}
"""How servers refuse a prompt that does not fit their context: (context, prompt tokens, prompt plus max_tokens)
-> status and body, as each words it."""
CHUNKED = "transfer-encoding: chunked\r\n"
"""The extra header of a reply sent in chunks, without a length (``huge-chunked``)."""
HUGE = "<huge>"
"""Where ``huge-chunked`` puts its content: written out chunk by chunk as it is sent, never held whole, so the
server can send gigabytes and count how much the client took (``sent_bytes``)."""
CHUNK = 2**16


def request_digest(request: dict[str, object]) -> str:
    """SHA-256 of a request's messages (or prompt) as canonical JSON, with its ``seed`` where it has one (the
    repeats of ``--epochs`` differ only in it): what the request log records."""
    content = request.get("messages", request.get("prompt"))
    if request.get("seed") is not None:
        content = {"content": content, "seed": request["seed"]}
    return hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()


@dataclass(frozen=True)
class LoggedRequest:
    """One line of the request log (``--log``): the request's digest, when it arrived and when it was answered
    (seconds since the epoch)."""

    digest: str
    received: float
    answered: float


def read_log(path: Path) -> list[LoggedRequest]:
    """The requests answered normally, in order of their answers."""
    rows = (line.split() for line in path.read_text().splitlines())
    return [LoggedRequest(d, float(r), float(a)) for d, r, a in rows]


class MockOpenAIServer:
    """Asyncio HTTP/1.1 server with keep-alive; just enough of the protocol for OpenAI clients."""

    def __init__(
        self,
        latency: float = 0.0,
        reply: str = "A",
        fail_every: int = 0,
        fail_status: int = 429,
        retry_after: str = "0",
        log_path: Path | None = None,
        fault: str | None = None,
        fault_times: int = 0,
        served_model: str | None = None,
        huge_bytes: int = 20 * 2**20,
        slots: int = 0,
        context: int = 0,
        refusal: str = "vllm",
        hide_context: bool = False,
        replies: Mapping[str, str | list[str]] | None = None,
        usage: Mapping[str, Any] | None = None,
        no_usage: bool = False,
        tool_model: bool = False,
        tool_arguments: Mapping[str, dict[str, Any]] | None = None,
        tool_answers: Mapping[str, str] | None = None,
    ) -> None:
        if fault is not None and fault not in FAULTS:
            raise ValueError(f"unknown fault {fault!r}; faults: {', '.join(FAULTS)}")
        if refusal not in CONTEXT_REFUSALS:
            raise ValueError(f"unknown refusal {refusal!r}; refusals: {', '.join(CONTEXT_REFUSALS)}")
        self.slots = asyncio.Semaphore(slots) if slots else None
        """Requests served at once; the others wait (None: all at once)."""
        self.context = context
        self.refusal = refusal
        self.hide_context = hide_context
        self.refused = 0
        """Requests refused as too long for the context."""
        self.latency = latency
        self.reply = reply
        self.fail_every = fail_every
        self.fail_status = fail_status
        self.retry_after = retry_after
        self.fault = fault
        self.fault_times = fault_times
        """Send the fault to the first N requests only (0: to all)."""
        self.served_model = served_model
        self.huge_bytes = huge_bytes
        self.replies = dict(replies or {})
        """A scripted model: the reply to a request whose last message (or prompt) is a key (else ``reply``); a list
        of replies is picked from by the request's seed (``seed mod len``), as a sampling model's answer varies
        with it."""
        self.usage = dict(usage) if usage is not None else None
        """The ``usage`` object of every reply (None: a quarter of the body's bytes as prompt tokens, 1 completion
        token); ``no_usage`` leaves it out, as some servers do."""
        self.no_usage = no_usage
        self.tool_model = tool_model
        self.tool_arguments = dict(tool_arguments or {})
        self.tool_answers = dict(tool_answers or {})
        self.tool_results: list[str] = []
        """The content of every tool message received (a tool model's: what its calls returned)."""
        self.log_fd = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644) if log_path else None
        self.requests = 0
        self.sent_bytes = 0
        """Bytes of reply bodies written to clients (a chunked body's as far as the client went on reading)."""
        self.authorization: list[str] = []

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                method, path, _ = lines[0].split(" ", 2)
                headers = {k.lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:] if ln)}
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                if "authorization" in headers:
                    self.authorization.append(headers["authorization"])
                status, data, extra = await self.respond(method, path, body, headers)
                length = "" if extra == CHUNKED else f"content-length: {len(data)}\r\n"
                header = (
                    f"HTTP/1.1 {status} {'OK' if status == 200 else 'Error'}\r\n"
                    f"content-type: application/json\r\n{length}{extra}\r\n"
                )
                writer.write(header.encode())
                if extra == CHUNKED:
                    for chunk in self._pieces(data):
                        writer.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                        await writer.drain()
                        self.sent_bytes += len(chunk)
                    data = b"0\r\n\r\n"
                writer.write(data)
                await writer.drain()
                self.sent_bytes += len(data)
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError, asyncio.CancelledError):
            pass
        finally:
            writer.close()

    def _pieces(self, data: bytes) -> Iterator[bytes]:
        """A chunked body's chunks: ``data`` with ``huge_bytes`` of content made where ``HUGE`` stands."""
        head, huge, tail = data.partition(HUGE.encode())
        yield from (head[start : start + CHUNK] for start in range(0, len(head), CHUNK))
        if huge:
            whole, rest = divmod(self.huge_bytes, CHUNK)
            yield from (b"A" * CHUNK for _ in range(whole))
            if rest:
                yield b"A" * rest
        yield from (tail[start : start + CHUNK] for start in range(0, len(tail), CHUNK))

    async def respond(
        self, method: str, path: str, body: bytes, headers: dict[str, str] | None = None
    ) -> tuple[int, bytes, str]:
        if method == "GET" and path == "/v1/models":
            entry: dict[str, Any] = {"id": self.served_model or "mock", "object": "model", "owned_by": "structbench"}
            if self.context and not self.hide_context:
                entry["max_model_len"] = self.context
            return *_json(200, {"object": "list", "data": [entry]}), ""
        if self.slots is None:
            return await self._respond(method, path, body, headers)
        async with self.slots:
            return await self._respond(method, path, body, headers)

    async def _respond(
        self, method: str, path: str, body: bytes, headers: dict[str, str] | None = None
    ) -> tuple[int, bytes, str]:
        self.requests += 1
        received = time.time()
        if self.context:
            prompt = len(body) // 4
            try:
                total = prompt + int(json.loads(body or b"{}").get("max_tokens") or 0)
            except (ValueError, AttributeError):
                total = prompt
            if total > self.context:
                self.refused += 1
                return *_json(*CONTEXT_REFUSALS[self.refusal](self.context, prompt, total)), ""
        if self.latency:
            await asyncio.sleep(self.latency)
        if self.fail_every and self.requests % self.fail_every == 0:
            extra = f"retry-after: {self.retry_after}\r\n" if self.fail_status == 429 else ""
            return *_json(self.fail_status, {"error": {"message": "injected failure"}}), extra
        if self.fault is not None and (not self.fault_times or self.requests <= self.fault_times):
            return *FAULTS[self.fault](self, headers or {}), CHUNKED if self.fault == "huge-chunked" else ""
        try:
            request = json.loads(body or b"{}")
        except ValueError:
            return *_json(400, {"error": {"message": "invalid JSON"}}), ""
        if path not in ("/v1/chat/completions", "/v1/completions"):
            return *_json(404, {"error": {"message": f"no route {method} {path}"}}), ""
        model = request.get("model")
        if self.served_model is not None and model != self.served_model:
            message = f"The model `{model}` does not exist or you do not have access to it."
            return *_json(404, {"error": {"message": message, "code": "model_not_found"}}), ""
        if self.log_fd is not None:
            line = f"{request_digest(request)} {received:.6f} {time.time():.6f}\n"
            os.write(self.log_fd, line.encode())
        return *_json(200, self.completion(path, request, len(body))), ""

    def reply_to(self, request: dict[str, Any]) -> str:
        """The scripted reply to ``request`` where ``replies`` has one for its last message, else ``reply``."""
        messages = request.get("messages")
        last = messages[-1].get("content") if isinstance(messages, list) and messages else request.get("prompt")
        scripted = self.replies.get(last) if self.replies and isinstance(last, str) else None
        if scripted is None:
            return self.reply
        if isinstance(scripted, list):
            return scripted[int(request.get("seed") or 0) % len(scripted)]
        return scripted

    def tool_turn(self, request: dict[str, Any]) -> tuple[list[dict[str, Any]] | None, str | None]:
        """A tool model's turn: the calls it makes (None: it answers), or its final answer (None: not a tool model's
        turn to answer, the scripted reply goes)."""
        messages = request.get("messages")
        if not self.tool_model or not isinstance(messages, list):
            return None, None
        results = [m.get("content") for m in messages if isinstance(m, dict) and m.get("role") == "tool"]
        tools = [t.get("function", {}).get("name") for t in request.get("tools") or [] if isinstance(t, dict)]
        if not tools:
            return None, self.reply
        if not results:
            name = next((t for t in tools if t in self.tool_arguments), tools[0])
            arguments = json.dumps(self.tool_arguments.get(name, self.tool_arguments.get("*", {})))
            call = {"id": f"call_{hashlib.sha256(json.dumps(messages).encode()).hexdigest()[:12]}", "type": "function",
                    "function": {"name": name, "arguments": arguments}}
            return [call], None
        self.tool_results.extend(str(r) for r in results)
        first = next((str(m.get("content")) for m in messages if isinstance(m, dict) and m.get("role") == "user"), "")
        return None, next((reply for key, reply in self.tool_answers.items() if key in first), self.reply)

    def completion(self, path: str, request: dict[str, Any], size: int = 0) -> dict[str, object]:
        """The normal reply: ``n`` choices of ``reply`` (or the scripted one), in chat or completion form."""
        n = int(request.get("n", 1))
        calls, answer = self.tool_turn(request)
        text = answer if answer is not None else self.reply_to(request)
        if path == "/v1/chat/completions" and calls:
            choices: list[dict[str, object]] = [
                {"index": i, "message": {"role": "assistant", "content": None, "tool_calls": calls},
                 "finish_reason": "tool_calls"} for i in range(n)
            ]
        elif path == "/v1/chat/completions":
            choices = [
                {"index": i, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
                for i in range(n)
            ]
        else:
            choices = [{"index": i, "text": text, "finish_reason": "stop"} for i in range(n)]
        return self.with_usage({"id": "mock", "object": "chat.completion", "choices": choices},
                               {"prompt_tokens": size // 4, "completion_tokens": 1})

    def with_usage(self, body: dict[str, object], usage: dict[str, Any]) -> dict[str, object]:
        """``body`` with ``usage`` (or the server's fixed one, or none at all)."""
        if not self.no_usage:
            body["usage"] = self.usage if self.usage is not None else usage
        return body

    async def serve(self, host: str = "127.0.0.1", port: int = 0) -> asyncio.Server:
        return await asyncio.start_server(self.handle, host, port, backlog=1024)


@contextmanager
def serve_in_thread(server: MockOpenAIServer) -> Iterator[str]:
    """Run ``server`` on a loopback port in a thread of this process (its own event loop) and yield its base URL
    (``http://127.0.0.1:PORT/v1``); stopped on exit. For tests that hand the server Python objects."""
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    bound: list[int] = []

    def serve() -> None:
        asyncio.set_event_loop(loop)
        srv = loop.run_until_complete(server.serve())
        bound.append(srv.sockets[0].getsockname()[1])
        ready.set()
        try:
            loop.run_forever()
        finally:
            srv.close()
            loop.run_until_complete(srv.wait_closed())
            loop.close()

    thread = threading.Thread(target=serve, name="loopback-openai-server", daemon=True)
    thread.start()
    if not ready.wait(30) or not bound:
        raise RuntimeError("the loopback server did not start")
    try:
        yield f"http://127.0.0.1:{bound[0]}/v1"
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--reply", default="A")
    parser.add_argument("--fail-every", type=int, default=0)
    parser.add_argument("--fail-status", type=int, default=429)
    parser.add_argument("--log", type=Path, default=None, help="Append one line per answered request.")
    parser.add_argument("--fault", choices=sorted(FAULTS), default=None, help="Misbehave this way.")
    parser.add_argument("--fault-times", type=int, default=0, help="Only for the first N requests (0: all).")
    parser.add_argument("--served-model", default=None, help="Answer only this model name; 404 for others.")
    parser.add_argument("--huge-bytes", type=int, default=20 * 2**20, help="Reply size of --fault huge.")
    parser.add_argument("--slots", type=int, default=0, help="Requests served at once, the rest queued (0: all).")
    parser.add_argument("--context", type=int, default=0, help="Refuse prompt + max_tokens above this many tokens.")
    parser.add_argument("--refusal", choices=sorted(CONTEXT_REFUSALS), default="vllm",
                        help="Whose words the context refusal uses.")
    parser.add_argument("--hide-context", action="store_true", help="Leave max_model_len out of GET /v1/models.")
    parser.add_argument("--replies", type=Path, default=None,
                        help="JSON object: a request's last message (or prompt) -> its reply (or a list, by seed).")
    parser.add_argument("--usage", type=json.loads, default=None,
                        help='The usage object of every reply, as JSON (e.g. {"prompt_tokens": 100, ...}).')
    parser.add_argument("--no-usage", action="store_true", help="Send replies without a usage object.")
    parser.add_argument("--tool-model", action="store_true",
                        help="Call the tool offered before answering (--tool-arguments, --tool-answers).")
    parser.add_argument("--tool-arguments", type=json.loads, default=None,
                        help='Tool name -> the arguments to call it with (JSON, e.g. {"sql": {"query": "..."}}).')
    parser.add_argument("--tool-answers", type=Path, default=None,
                        help="JSON object: a text in the first user message -> the answer after a tool's result.")
    parser.add_argument("--port-file", type=Path, default=None, help="Write the bound port here.")
    args = parser.parse_args()

    async def run() -> None:
        server = MockOpenAIServer(args.latency, args.reply, args.fail_every, args.fail_status, log_path=args.log,
                                  fault=args.fault, fault_times=args.fault_times, served_model=args.served_model,
                                  huge_bytes=args.huge_bytes, slots=args.slots, context=args.context,
                                  refusal=args.refusal, hide_context=args.hide_context,
                                  replies=json.loads(args.replies.read_text("utf-8")) if args.replies else None,
                                  usage=args.usage, no_usage=args.no_usage, tool_model=args.tool_model,
                                  tool_arguments=args.tool_arguments,
                                  tool_answers=json.loads(args.tool_answers.read_text("utf-8"))
                                  if args.tool_answers else None)
        srv = await server.serve(port=args.port)
        port = srv.sockets[0].getsockname()[1]
        if args.port_file:
            tmp = args.port_file.with_suffix(".tmp")
            tmp.write_text(str(port))
            os.replace(tmp, args.port_file)
        print(f"listening on http://127.0.0.1:{port}/v1", flush=True)
        async with srv:
            await srv.serve_forever()

    try:
        import uvloop
    except ImportError:
        asyncio.run(run())
    else:
        uvloop.run(run())


if __name__ == "__main__":
    main()
