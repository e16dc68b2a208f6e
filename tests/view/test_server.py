"""The view's server: loopback answers only by its own name, another address needs the printed token, every answer
carries its Content-Security-Policy, a run's text reaches the page as escaped JSON, and bad input is one line."""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import json
import os
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp.test_utils import TestClient, TestServer

from faults import child_pythonpath
from structbench.backends.mock import MockBackend
from structbench.testing.cli import invoke
from structbench.view.hub import Hub, find_runs
from structbench.view.server import COOKIE, PAGE_POLICY, REPORT_POLICY, Access, make_app
from structbench.view.server import serve as serve_view
from view.conftest import make_run

EVIL = "no </script><script>window.__pwned = 1</script>"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("served")
    make_run(root, "plain", limit=10)
    make_run(root / "suite", "evil", backend=MockBackend(default=EVIL), limit=10)
    return root


def serve(hub: Hub, access: Access, test: Callable[[TestClient[Any, Any]], Awaitable[None]]) -> None:
    async def main() -> None:
        async with TestClient(TestServer(make_app(hub, access))) as client:
            if access.hosts is not None:
                access.hosts.add(f"127.0.0.1:{client.port}")
            await test(client)

    asyncio.run(main())


def test_runs_are_found_below_the_folders_given(runs: Path) -> None:
    assert find_runs(runs) == [runs / "plain", runs / "suite" / "evil"]
    assert find_runs(runs / "plain") == [runs / "plain"]
    hub = Hub([runs])
    hub.scan()
    assert list(hub.runs) == ["plain", "suite/evil"]


def test_loopback_answers_by_its_own_name_and_escapes_every_value(runs: Path) -> None:
    async def test(client: TestClient[Any, Any]) -> None:
        page = await client.get("/")
        assert page.status == 200 and page.headers["Content-Security-Policy"] == PAGE_POLICY
        assert page.headers["X-Content-Type-Options"] == "nosniff"
        assert (await client.get("/", headers={"Host": f"rebound.example:{client.port}"})).status == 403
        state = await (await client.get("/api/state")).json()
        assert [r["id"] for r in state["runs"]] == ["plain", "suite/evil"]
        assert {r["status"] for r in state["runs"]} == {"done"}
        raw = await (await client.get("/api/samples", params={"run": "suite/evil", "q": "pwned"})).text()
        assert json.loads(raw)["matched"] == 10 and "<" not in raw
        ref = json.loads(raw)["rows"][0]["ref"]
        detail = await client.get("/api/record", params={"run": "suite/evil", "ref": str(ref)})
        raw = await detail.text()
        assert json.loads(raw)["output"] == EVIL and "<" not in raw and "\\u003c/script\\u003e" in raw
        assert (await client.get("/api/samples", params={"run": "../plain"})).status == 404
        assert (await client.get("/api/record", params={"run": "plain", "ref": "3"})).status == 404
        assert (await client.get("/api/record", params={"run": "plain", "ref": "x"})).status == 400
        report = await client.get("/report", params={"run": "plain"})
        assert report.status == 200 and report.headers["Content-Security-Policy"] == REPORT_POLICY
        assert "structbench report" in await report.text()
        assert (await client.get("/report", params={"run": "nope"})).status == 404

    serve(Hub([runs]), Access(), test)


def test_another_address_needs_the_token(runs: Path) -> None:
    async def test(client: TestClient[Any, Any]) -> None:
        assert (await client.get("/")).status == 401
        assert (await client.get("/api/state", params={"token": "wrong"})).status == 401
        link = await client.get("/", params={"token": "s3cret"}, allow_redirects=False)
        assert link.status == 303 and link.headers["Location"] == "/"  # the token leaves the address bar
        cookie = link.cookies[f"{COOKIE}_{client.port}"]
        assert cookie.value == "s3cret" and cookie["httponly"] and cookie["samesite"] == "Strict"
        assert (await client.get("/api/state")).status == 200  # the cookie jar now holds it
        client.session.cookie_jar.clear()
        assert (await client.get("/api/state")).status == 401
        assert (await client.get("/api/state", headers={"Authorization": "Bearer s3cret"})).status == 200

    serve(Hub([runs]), Access(token="s3cret", hosts=None), test)


def test_the_link_redirects_only_to_this_server_and_bearer_is_any_case(runs: Path) -> None:
    """``//evil.example/x?token=...`` redirected to ``////evil.example/x``, another host to a browser; and
    ``authorization: bearer TOKEN`` was refused (an auth scheme's name is case-insensitive)."""
    def redirect(port: int, path: str) -> tuple[int, str | None]:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)  # as sent: no client normalises the path
        try:
            conn.request("GET", path)
            got = conn.getresponse()
            return got.status, got.getheader("Location")
        finally:
            conn.close()

    async def test(client: TestClient[Any, Any]) -> None:
        for path, where in (("//evil.example/x", "/evil.example/x"), ("/\\evil.example", "/evil.example"),
                            ("/api/state", "/api/state")):
            got = await asyncio.to_thread(redirect, client.port, f"{path}?token=s3cret&q=a+b")
            assert got == (303, f"{where}?q=a+b"), path
        for scheme in ("bearer", "BEARER", "Bearer"):
            client.session.cookie_jar.clear()
            got = await client.get("/api/state", headers={"authorization": f"{scheme} s3cret"})
            assert got.status == 200, scheme
        assert (await client.get("/api/state", headers={"authorization": "Basic s3cret"})).status == 401

    serve(Hub([runs]), Access(token="s3cret", hosts=None), test)


def test_each_port_keeps_its_own_token_cookie(runs: Path) -> None:
    """A browser sends a host's cookies to all its ports: two views on one host, each opened by its link, overwrote one
    cookie, and the first then refused the browser."""
    async def main() -> None:
        async with (TestServer(make_app(Hub([runs]), Access(token="first", hosts=None))) as one,
                    TestServer(make_app(Hub([runs]), Access(token="second", hosts=None))) as two,
                    aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as browser):
            for server, token in ((one, "first"), (two, "second")):
                link = await browser.get(server.make_url("/"), params={"token": token}, allow_redirects=False)
                assert link.status == 303
            assert {c.key for c in browser.cookie_jar} == {f"{COOKIE}_{one.port}", f"{COOKIE}_{two.port}"}
            for server in (one, two):  # the jar sends both cookies to each port; each takes its own
                assert (await browser.get(server.make_url("/api/state"))).status == 200
            browser.cookie_jar.clear()
            for server, other in ((one, two), (two, one)):  # the other view's cookie, under either name, is refused
                token = "second" if server is one else "first"
                for name in (f"{COOKIE}_{server.port}", f"{COOKIE}_{other.port}"):
                    got = await browser.get(server.make_url("/api/state"), headers={"Cookie": f"{name}={token}"})
                    assert got.status == 401, (server.port, name)

    asyncio.run(main())


def test_a_request_sent_slowly_is_cut_off_while_others_are_answered(runs: Path) -> None:
    """A client that sent half a request line held its connection for an hour (aiohttp's default keep-alive)."""
    async def main() -> None:
        listening: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        server = asyncio.create_task(serve_view(Hub([runs]), host=None, port=0, token=None,
                                                announce=listening.set_result, read_timeout=0.5))
        try:
            url = await asyncio.wait_for(listening, 60)
            port = int(url.rsplit(":", 1)[1].strip("/"))
            slow = socket.create_connection(("127.0.0.1", port), timeout=30)
            with slow:
                slow.sendall(b"GET /api/sta")  # and no more
                async with aiohttp.ClientSession() as other:
                    answer = await other.get(url + "api/state")
                    assert answer.status == 200 and (await answer.json())["runs"]
                assert await asyncio.to_thread(slow.recv, 1024) == b""  # closed by the server, not timed out here
        finally:
            server.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await server

    asyncio.run(main())


def test_bad_arguments_are_one_line(tmp_path: Path) -> None:
    got = invoke("view", str(tmp_path / "missing"))
    assert got.returncode == 2 and got.stderr.strip().splitlines() == [
        f"error: {tmp_path / 'missing'}: no such folder; give the folder your run directories are in (default: "
        "runs/, where structbench run writes them)"]
    got = invoke("view", str(tmp_path), "--port", "70000")
    assert got.returncode == 2 and "--port 70000" in got.stderr
    got = invoke("view", cwd=tmp_path)  # no runs/ here
    assert got.returncode == 2 and got.stderr.startswith("error: runs: no such folder")


def test_the_command_prints_the_link_with_its_token(runs: Path) -> None:
    env = dict(os.environ, PYTHONPATH=child_pythonpath())
    proc = subprocess.Popen([sys.executable, "-m", "structbench", "view", str(runs), "--host", "127.0.0.1"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout is not None
        first, second = proc.stdout.readline(), proc.stdout.readline()
        url = first.split()[2]
        token = second.split()[1]
        assert url.startswith("http://127.0.0.1:") and url.endswith(f"/?token={token}") and len(token) >= 32
        base = url.split("?")[0]
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(base + "api/state", timeout=10)
        assert refused.value.code == 401
        request = urllib.request.Request(base + "api/state", headers={"Authorization": f"Bearer {token}"})
        with urllib.request.urlopen(request, timeout=10) as answer:
            assert [r["id"] for r in json.load(answer)["runs"]] == ["plain", "suite/evil"]
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert "Traceback" not in err
