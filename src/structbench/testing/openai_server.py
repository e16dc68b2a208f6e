"""A minimal OpenAI-compatible HTTP server on loopback, for tests and the overhead benchmark.

It answers ``/v1/chat/completions`` and ``/v1/completions`` after a fixed latency with a fixed reply,
can fail every k-th request with 429 (``Retry-After: 0`` by default) or 500, and appends one line per request it
answers to a log (``request_digest``, then the times it was received and answered), so tests can
prove no request was repeated and benchmarks can time the request phase.

    python -m structbench.testing.openai_server --port 0 --latency 0.05 --reply A --port-file p.txt
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import time
from pathlib import Path


def request_digest(request: dict[str, object]) -> str:
    """SHA-256 of a request's messages (or prompt) as canonical JSON: what the request log records."""
    content = request.get("messages", request.get("prompt"))
    return hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()


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
    ) -> None:
        self.latency = latency
        self.reply = reply
        self.fail_every = fail_every
        self.fail_status = fail_status
        self.retry_after = retry_after
        self.log_fd = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644) if log_path else None
        self.requests = 0
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
                status, payload, extra = await self.respond(method, path, body)
                data = json.dumps(payload).encode()
                header = (
                    f"HTTP/1.1 {status} {'OK' if status == 200 else 'Error'}\r\n"
                    f"content-type: application/json\r\ncontent-length: {len(data)}\r\n{extra}\r\n"
                )
                writer.write(header.encode() + data)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionResetError, asyncio.LimitOverrunError, asyncio.CancelledError):
            pass
        finally:
            writer.close()

    async def respond(self, method: str, path: str, body: bytes) -> tuple[int, dict[str, object], str]:
        self.requests += 1
        received = time.time()
        if self.latency:
            await asyncio.sleep(self.latency)
        if self.fail_every and self.requests % self.fail_every == 0:
            extra = f"retry-after: {self.retry_after}\r\n" if self.fail_status == 429 else ""
            return self.fail_status, {"error": {"message": "injected failure"}}, extra
        try:
            request = json.loads(body or b"{}")
        except ValueError:
            return 400, {"error": {"message": "invalid JSON"}}, ""
        n = int(request.get("n", 1))
        if path == "/v1/chat/completions":
            choices = [
                {"index": i, "message": {"role": "assistant", "content": self.reply}, "finish_reason": "stop"}
                for i in range(n)
            ]
        elif path == "/v1/completions":
            choices = [{"index": i, "text": self.reply, "finish_reason": "stop"} for i in range(n)]
        else:
            return 404, {"error": {"message": f"no route {method} {path}"}}, ""
        if self.log_fd is not None:
            line = f"{request_digest(request)} {received:.6f} {time.time():.6f}\n"
            os.write(self.log_fd, line.encode())
        usage = {"prompt_tokens": len(body) // 4, "completion_tokens": 1}
        return 200, {"id": "mock", "object": "chat.completion", "choices": choices, "usage": usage}, ""

    async def serve(self, host: str = "127.0.0.1", port: int = 0) -> asyncio.Server:
        return await asyncio.start_server(self.handle, host, port, backlog=1024)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--reply", default="A")
    parser.add_argument("--fail-every", type=int, default=0)
    parser.add_argument("--fail-status", type=int, default=429)
    parser.add_argument("--log", type=Path, default=None, help="Append one line per answered request.")
    parser.add_argument("--port-file", type=Path, default=None, help="Write the bound port here.")
    args = parser.parse_args()

    async def run() -> None:
        server = MockOpenAIServer(args.latency, args.reply, args.fail_every, args.fail_status, log_path=args.log)
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
