"""The event loop every executor runs its jobs on (uvloop where installed), with SIGTERM winding it down."""

from __future__ import annotations

import asyncio
import signal
import threading
from collections.abc import Coroutine
from typing import Any

from structbench.core.errors import Terminated


def run_async(coro: Coroutine[Any, Any, None]) -> None:
    """Run the event loop on uvloop where it is installed (several times less loop overhead per request).

    Where this process handles SIGTERM itself (the CLI raises ``Terminated``), SIGTERM while the loop runs cancels
    ``coro`` as Ctrl-C does (``asyncio.Runner``), so it winds down as after Ctrl-C, and ``Terminated`` is raised
    once it has: raised by the handler inside whatever callback the loop was running, the exception could be
    swallowed by the loop (uvloop reports it as a transport's fatal error and goes on). A second SIGTERM raises at
    once."""
    main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.getsignal(signal.SIGTERM) if main_thread else None
    if not callable(previous):
        _run_loop(coro)
        return
    running: list[asyncio.Task[None]] = []
    asked: list[bool] = []

    def on_sigterm(signum: int, frame: Any) -> None:
        if asked or not running:
            raise Terminated()
        asked.append(True)
        running[0].get_loop().call_soon_threadsafe(running[0].cancel)

    async def main() -> None:
        task = asyncio.current_task()
        assert task is not None
        running.append(task)
        try:
            await coro
        except asyncio.CancelledError:
            if asked:
                raise Terminated() from None
            raise

    signal.signal(signal.SIGTERM, on_sigterm)
    try:
        _run_loop(main())
    finally:
        signal.signal(signal.SIGTERM, previous)


def _run_loop(coro: Coroutine[Any, Any, None]) -> None:
    try:
        import uvloop
    except ImportError:
        asyncio.run(coro)
    else:
        uvloop.run(coro)
