"""Bare async HTTP clients against the loopback OpenAI-compatible server: which is fastest here.

Each installed client sends ``--requests`` chat requests with ``--concurrency`` in flight to
``structbench.testing.openai_server`` (fixed latency) from a process of its own, reads and parses
each JSON reply, and reports the request phase against the ideal N × latency / C and the client's
CPU time per request (user + system, which noise on a shared machine disturbs less than wall time).
No harness is involved: this bounds what any client can reach on this machine.

    python benchmarks/http_clients.py --requests 2000 --latency 0.05 --concurrency 64 --repeat 3
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import orjson

Send = Callable[[bytes], Awaitable[bytes]]


async def _aiohttp(url: str, concurrency: int) -> tuple[Send, Callable[[], Awaitable[None]]]:
    import aiohttp

    session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency),
                                    headers={"Content-Type": "application/json"})

    async def send(body: bytes) -> bytes:
        async with session.post(url, data=body) as resp:
            return await resp.read()

    return send, session.close


async def _httpx(url: str, concurrency: int) -> tuple[Send, Callable[[], Awaitable[None]]]:
    import httpx

    client = httpx.AsyncClient(limits=httpx.Limits(max_connections=concurrency),
                               headers={"Content-Type": "application/json"})

    async def send(body: bytes) -> bytes:
        return (await client.post(url, content=body)).content

    return send, client.aclose


async def _aiosonic(url: str, concurrency: int) -> tuple[Send, Callable[[], Awaitable[None]]]:
    import aiosonic
    from aiosonic.pools import PoolConfig

    pools = {":default": PoolConfig(size=concurrency)}
    client = aiosonic.HTTPClient(connector=aiosonic.TCPConnector(pool_configs=pools))
    headers = {"Content-Type": "application/json"}

    async def send(body: bytes) -> bytes:
        resp = await client.post(url, data=body, headers=headers)
        return bytes(await resp.content())

    async def close() -> None:
        await client.connector.cleanup()

    return send, close


async def _pyreqwest(url: str, concurrency: int) -> tuple[Send, Callable[[], Awaitable[None]]]:
    from pyreqwest.client import ClientBuilder

    client = ClientBuilder().max_connections(concurrency).default_headers(
        {"Content-Type": "application/json"}).build()

    async def send(body: bytes) -> bytes:
        resp = await client.post(url).body_bytes(body).build().send()
        return bytes(await resp.bytes())

    async def close() -> None:
        await client.close()

    return send, close


async def _rnet(url: str, concurrency: int) -> tuple[Send, Callable[[], Awaitable[None]]]:
    import rnet

    client = rnet.Client()
    headers = {"Content-Type": "application/json"}

    async def send(body: bytes) -> bytes:
        resp = await client.post(url, body=body, headers=headers)
        return bytes(await resp.bytes())

    async def close() -> None:
        return None

    return send, close


async def _curl_cffi(url: str, concurrency: int) -> tuple[Send, Callable[[], Awaitable[None]]]:
    from curl_cffi.requests import AsyncSession

    session = AsyncSession(max_clients=concurrency, headers={"Content-Type": "application/json"})

    async def send(body: bytes) -> bytes:
        return (await session.post(url, data=body)).content

    return send, session.close


async def _niquests(url: str, concurrency: int) -> tuple[Send, Callable[[], Awaitable[None]]]:
    import niquests

    session = niquests.AsyncSession(pool_maxsize=concurrency)
    headers = {"Content-Type": "application/json"}

    async def send(body: bytes) -> bytes:
        return (await session.post(url, data=body, headers=headers)).content or b""

    return send, session.close


CLIENTS: dict[str, Callable[[str, int], Awaitable[tuple[Send, Callable[[], Awaitable[None]]]]]] = {
    "aiohttp": _aiohttp,
    "httpx": _httpx,
    "aiosonic": _aiosonic,
    "pyreqwest": _pyreqwest,
    "rnet": _rnet,
    "curl_cffi": _curl_cffi,
    "niquests": _niquests,
}


def _body(i: int) -> bytes:
    messages = [{"role": "user", "content": f"Question {i}: what is the answer? " + "context " * 200}]
    return orjson.dumps({"model": "bench", "messages": messages, "max_tokens": 16, "temperature": 0.0})


async def _client_run(name: str, url: str, requests: int, concurrency: int) -> dict[str, Any]:
    send, close = await CLIENTS[name](url, concurrency)
    bodies = [_body(i) for i in range(requests)]
    queue = list(reversed(bodies))

    async def worker() -> None:
        while queue:
            reply = orjson.loads(await send(queue.pop()))
            assert reply["choices"][0]["message"]["content"]

    await send(_body(-1))  # connect once before timing
    cpu0 = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    wall = time.perf_counter() - t0
    cpu1 = resource.getrusage(resource.RUSAGE_SELF)
    await close()
    cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
    return {"wall": wall, "cpu": cpu}


def _child(name: str, url: str, requests: int, concurrency: int) -> None:
    import uvloop

    print(json.dumps(uvloop.run(_client_run(name, url, requests, concurrency))))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--clients", default=",".join(CLIENTS), help="Comma-separated; missing ones are skipped.")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--url", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child, args.url, args.requests, args.concurrency)
        return

    ideal = args.requests * args.latency / args.concurrency
    with tempfile.TemporaryDirectory() as tmp:
        port_file = Path(tmp) / "port"
        server = subprocess.Popen(
            [sys.executable, "-m", "structbench.testing.openai_server", "--latency", str(args.latency),
             "--port-file", str(port_file)], stdout=subprocess.DEVNULL)
        try:
            while not port_file.exists():
                time.sleep(0.01)
            url = f"http://127.0.0.1:{port_file.read_text()}/v1/chat/completions"
            print(f"{args.requests} requests, {args.latency * 1000:g} ms latency, C = {args.concurrency}, "
                  f"ideal {ideal:.3f} s; load average {os.getloadavg()[0]:.1f}")
            for name in args.clients.split(","):
                runs = []
                for _ in range(args.repeat):
                    proc = subprocess.run(
                        [sys.executable, __file__, "--child", name, "--url", url, "--requests", str(args.requests),
                         "--concurrency", str(args.concurrency)], capture_output=True, text=True)
                    if proc.returncode != 0:
                        last = (proc.stderr.strip().splitlines() or ["?"])[-1]
                        print(f"{name:10s} failed: {last}")
                        break
                    runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
                if not runs:
                    continue
                shares = sorted(100 * ideal / r["wall"] for r in runs)
                cpus = sorted(1e6 * r["cpu"] / args.requests for r in runs)
                print(f"{name:10s} request phase {shares[0]:.1f}-{shares[-1]:.1f} % of ideal   "
                      f"client CPU {cpus[0]:.0f}-{cpus[-1]:.0f} us/request")
        finally:
            server.kill()
            server.wait()


if __name__ == "__main__":
    main()
