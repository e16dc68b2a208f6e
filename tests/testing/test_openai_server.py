"""The loopback server's request log, as the benchmark scripts read it."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from structbench.backends.base import Request
from structbench.backends.openai_compat import OpenAIBackend
from structbench.testing.openai_server import MockOpenAIServer, read_log, request_digest


def test_the_log_holds_each_answered_request_with_its_times(tmp_path: Path) -> None:
    log = tmp_path / "requests.log"
    server = MockOpenAIServer(latency=0.05, log_path=log)
    start = time.time()

    async def go() -> None:
        srv = await server.serve()
        backend = OpenAIBackend("m", base_url=f"http://127.0.0.1:{srv.sockets[0].getsockname()[1]}/v1",
                                max_retries=0)
        try:
            for text in ("one", "two"):
                await backend.generate(Request.chat(text))
        finally:
            await backend.aclose()
            srv.close()
            await srv.wait_closed()

    asyncio.run(go())
    rows = read_log(log)
    assert [r.digest for r in rows] == [request_digest({"messages": [{"role": "user", "content": t}]})
                                        for t in ("one", "two")]
    assert all(start <= r.received and r.answered - r.received >= 0.045 for r in rows)
