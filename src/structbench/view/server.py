"""The view's web server (aiohttp): one page, its script and style, a JSON API over the ``Hub``, and finished runs'
reports.

Private by default: it listens on 127.0.0.1 and answers only requests addressed to it by that name (a page of another
site that points a name of its own at 127.0.0.1, DNS rebinding, is refused). Listening on another address needs a
token, printed at start: the link it prints sets it in a cookie (HttpOnly, SameSite=Strict) named with the port the
browser reached it on, since a browser shares a host's cookies among all its ports; scripts may send it as
``Authorization: Bearer``. A connection is closed once it has waited ``READ_TIMEOUT`` seconds for a request, or for the
rest of one (a client sending its headers slowly holds nothing for longer). Every value from a run reaches the page as
JSON, which the script places as text, never as markup; the page's Content-Security-Policy allows no script but its
own and no connection but to this server.
"""

from __future__ import annotations

import asyncio
import hmac
import secrets
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from aiohttp import web

from structbench.core.errors import UsageError
from structbench.core.version import __version__
from structbench.report.html import script_json
from structbench.view.hub import Hub
from structbench.view.samples import OUTCOMES, PAGE, Query

COOKIE = "structbench_view"
"""The token cookie's name, before the port: ``structbench_view_8765``."""
READ_TIMEOUT = 15.0
"""Seconds a connection may wait for a request (its line and headers) before it is closed (aiohttp's keep-alive timer,
which runs from the connection's start and after each answer until the next request is whole)."""
LOOPBACK = "127.0.0.1"
PAGE_POLICY = ("default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; "
               "frame-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
REPORT_POLICY = ("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; "
                 "base-uri 'none'; form-action 'none'; frame-ancestors 'self'")
"""The report is one self-contained file with inline script and style (``report.html``); it may fetch nothing."""
MAX_LIMIT = 500

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@dataclass
class Access:
    """Who may ask: a token (None: none needed) and the Host headers answered (None: any)."""

    token: str | None = None
    hosts: set[str] | None = field(default_factory=set)


def new_token() -> str:
    return secrets.token_urlsafe(24)


def _json(data: Any, status: int = 200) -> web.Response:
    return web.Response(text=script_json(data), status=status, content_type="application/json")


def _given_token(request: web.Request) -> str | None:
    scheme, _, credentials = request.headers.get("Authorization", "").strip().partition(" ")
    if scheme.lower() == "bearer":  # an auth scheme's name is case-insensitive (RFC 7235)
        return credentials.strip()
    return request.query.get("token") or request.cookies.get(cookie_name(request))


def cookie_name(request: web.Request) -> str:
    """The token's cookie on the port the request was addressed to: a browser sends a host's cookies to every port of
    it (RFC 6265), so two views on one host (or another app there) would otherwise share or overwrite one cookie."""
    return f"{COOKIE}_{request.url.port}"


def _same_page(request: web.Request) -> str:
    """Where the printed link redirects to: the request's path on this server and its query without the token. Its
    leading slashes (and backslashes) collapse into one: ``//evil.example/x`` is another host to a browser."""
    path = "/" + request.rel_url.raw_path.lstrip("/\\")
    query = [(k, v) for k, v in request.query.items() if k != "token"]
    return path + (f"?{urlencode(query)}" if query else "")


def guard(access: Access) -> Any:
    """The middleware: the Host check, the token, and the headers every answer carries."""

    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        if access.hosts is not None and request.host not in access.hosts:
            return _refused(403, f"structbench view answers only as {sorted(access.hosts)[0]}")
        if access.token is not None:
            given = _given_token(request)
            if given is None or not hmac.compare_digest(given.encode(), access.token.encode()):
                return _refused(401, "structbench view: this page needs the token that `structbench view` printed "
                                     "when it started (open the link it printed)")
            if "token" in request.query:  # the printed link: keep the token in a cookie, not in the address bar
                found = web.HTTPSeeOther(_same_page(request))
                found.set_cookie(cookie_name(request), access.token, httponly=True, samesite="Strict", path="/")
                _secure(found, PAGE_POLICY)
                raise found
        response = await handler(request)
        if "Content-Security-Policy" not in response.headers:
            _secure(response, PAGE_POLICY)
        return response

    return middleware


def _refused(status: int, text: str) -> web.Response:
    response = web.Response(status=status, text=text + "\n")
    _secure(response, PAGE_POLICY)
    return response


def _secure(response: web.StreamResponse, policy: str) -> None:
    response.headers["Content-Security-Policy"] = policy
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "no-referrer"
    response.headers["Cache-Control"] = "no-store"


@dataclass(frozen=True)
class Assets:
    """The page, its script and its style, rendered once from the templates (``view/templates``, with the report's
    style)."""

    page: str
    script: str
    style: str


def render_assets(hub: Hub) -> Assets:
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.ChoiceLoader([jinja2.PackageLoader("structbench.view", "templates"),
                                    jinja2.PackageLoader("structbench.report", "templates")]),
        autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
    )
    outcomes = {name: text for name, (text, _) in OUTCOMES.items()}
    return Assets(
        page=env.get_template("view.html.j2").render(version=__version__, dirs=[str(r) for r in hub.roots],
                                                      outcomes=outcomes),
        script=env.get_template("view.js.j2").render(page=PAGE),
        style=env.get_template("view.css.j2").render(),
    )


def make_app(hub: Hub, access: Access) -> web.Application:
    """The web application over ``hub``."""
    assets = render_assets(hub)
    app = web.Application(middlewares=[guard(access)])

    async def page(request: web.Request) -> web.Response:
        return web.Response(text=assets.page, content_type="text/html", charset="utf-8")

    async def script(request: web.Request) -> web.Response:
        return web.Response(text=assets.script, content_type="text/javascript", charset="utf-8")

    async def style(request: web.Request) -> web.Response:
        return web.Response(text=assets.style, content_type="text/css", charset="utf-8")

    async def state(request: web.Request) -> web.Response:
        return _json(await hub.state())

    def run_of(request: web.Request) -> Any:
        run = hub.run(request.query.get("run", ""))
        if run is None:
            raise web.HTTPNotFound(text=script_json({"error": "no such run"}), content_type="application/json")
        return run

    async def samples(request: web.Request) -> web.Response:
        run = run_of(request)
        q = request.query
        try:
            query = Query(entry=int(q["entry"]) if q.get("entry") else None, outcome=q.get("outcome", ""),
                          group=q.get("group", ""), text=q.get("q", "")[:500], start=max(0, int(q.get("start", 0))),
                          limit=min(MAX_LIMIT, max(1, int(q.get("limit", PAGE)))))
        except ValueError:
            return _json({"error": "entry, start and limit are numbers"}, 400)
        return _json(await hub.samples(run, query))

    async def record(request: web.Request) -> web.Response:
        run = run_of(request)
        try:
            ref = int(request.query.get("ref", ""))
        except ValueError:
            return _json({"error": "ref is a number"}, 400)
        found = await hub.record(run, ref)
        if found is None:
            return _json({"error": "no record there"}, 404)
        return _json(found)

    async def report(request: web.Request) -> web.Response:
        await hub.refresh()
        wanted = request.query.getall("run", [])
        runs = [hub.run(i) for i in wanted] if wanted else hub.finished()
        if not runs or any(r is None or not r.reportable() for r in runs):
            text = "no finished run to report on yet" if not wanted else "not a finished run of this view"
            return web.Response(status=404, text=f"structbench view: {text}\n")
        try:
            html = await hub.report([r for r in runs if r is not None])
        except Exception as err:  # one line, as the command line would say it
            return web.Response(status=500, text=f"structbench view: the report failed: {type(err).__name__}: {err}\n")
        response = web.Response(text=html, content_type="text/html", charset="utf-8")
        _secure(response, REPORT_POLICY)
        return response

    app.router.add_get("/", page)
    app.router.add_get("/static/view.js", script)
    app.router.add_get("/static/view.css", style)
    app.router.add_get("/api/state", state)
    app.router.add_get("/api/samples", samples)
    app.router.add_get("/api/record", record)
    app.router.add_get("/report", report)
    return app


def display_host(host: str) -> str:
    """A name a browser can reach ``host`` by (every interface: this machine's name)."""
    if host in ("0.0.0.0", "::", ""):
        return socket.gethostname()
    return f"[{host}]" if ":" in host else host


async def serve(hub: Hub, *, host: str | None, port: int, token: str | None,
                announce: Callable[[str], None], read_timeout: float = READ_TIMEOUT) -> None:
    """Serve until cancelled; ``announce`` gets the URL to open (with the token, where one is needed) once listening.
    ``host`` None: loopback, no token. A connection that has not sent a whole request ``read_timeout`` seconds after
    it opened or after its last answer is closed."""
    bind = host or LOOPBACK
    access = Access(token=token if host is not None else None, hosts=set() if host is None else None)
    runner = web.AppRunner(make_app(hub, access), access_log=None, handle_signals=False,
                           keepalive_timeout=read_timeout)
    await runner.setup()
    site = web.TCPSite(runner, bind, port)
    try:
        await site.start()
    except OSError as err:
        await runner.cleanup()
        flag = f"--port {port}" if port else f"--host {bind}"
        raise UsageError(f"{flag}: cannot listen on {bind}:{port} ({err.strerror or err})") from None
    bound = int(runner.addresses[0][1])
    if access.hosts is not None:
        access.hosts.update({f"{LOOPBACK}:{bound}", f"localhost:{bound}"})
    url = f"http://{display_host(bind)}:{bound}/"
    announce(url + (f"?token={access.token}" if access.token else ""))
    try:
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()
