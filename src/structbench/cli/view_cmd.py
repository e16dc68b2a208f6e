"""``structbench view [DIR ...]``: a local page following the runs under each DIR as they are written."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer

from structbench.cli.common import echo
from structbench.core.errors import UsageError


def view(
    dirs: Annotated[
        list[Path] | None,
        typer.Argument(help="Folders holding run directories (or run directories themselves); default: runs/.",
                       show_default=False, metavar="DIR"),
    ] = None,
    port: Annotated[int, typer.Option("--port", help="The port to listen on (default: a free one, printed).")] = 0,
    host: Annotated[
        str | None,
        typer.Option("--host", help="Listen on this address instead of 127.0.0.1 (0.0.0.0: every interface); the page "
                                    "then needs a token, printed at start with the link to open."),
    ] = None,
    resamples: Annotated[
        int, typer.Option("--resamples", help="Bootstrap resamples of a running run's intervals (a finished run's are "
                                              "its metrics.json's).")
    ] = 1000,
) -> None:
    """Serve a page that follows runs as they are written: each run's status, progress, errors, calls in flight,
    tokens and cost, its headline metrics with their intervals as the samples arrive, a finished run's report, and a
    sample browser. Read-only: nothing is written into a run directory. Ctrl-C stops it."""
    from structbench.report.api import ReportOptions
    from structbench.report.entries import StatsOptions
    from structbench.view.hub import Hub
    from structbench.view.server import new_token, serve

    if not 0 <= port <= 65535:
        raise UsageError(f"--port {port}: a port is a number from 1 to 65535 (0: a free one)")
    if resamples < 1:
        raise UsageError("--resamples must be at least 1")
    if host is not None and not host.strip():
        raise UsageError("--host '': give an address to listen on (0.0.0.0 for every interface)")
    roots = dirs or [Path("runs")]
    hub = Hub(roots, resamples=resamples, report=ReportOptions(stats=StatsOptions(resamples=resamples)))
    token = new_token() if host is not None else None
    where = ", ".join(str(r) for r in roots)

    def announce(url: str) -> None:
        echo(f"structbench view: {url}  (runs under {where}; read-only; Ctrl-C stops it)")
        if token is not None:
            echo(f"token: {token}  (every request needs it; the link above sets it in the browser)")

    try:
        asyncio.run(serve(hub, host=host, port=port, token=token, announce=announce))
    except KeyboardInterrupt:
        echo("structbench view: stopped", err=True)
