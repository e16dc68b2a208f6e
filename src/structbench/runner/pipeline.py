"""Slots and a finisher: how one event loop runs jobs, in a single process (``engine.run_jobs``) or in a
forked worker (``workers.Worker``).

Each of ``slots`` tasks takes a job and runs its attempt, the part that waits for the model; a single
finisher task then does the CPU work (parsing, scoring, the record) of one finished attempt per turn of the
event loop, so a slot's next request goes out before the last one's scoring, and the network's events are
served between two records.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable
from typing import TypeVar

from structbench.core.errors import StructbenchError
from structbench.runner.control import RunControl

J = TypeVar("J")
A = TypeVar("A")


async def run_pipeline(
    slots: int,
    next_job: Callable[[], Awaitable[J | None]],
    attempt: Callable[[J], Awaitable[A]],
    finish: Callable[[A], None],
    control: RunControl,
    halt_on: tuple[type[StructbenchError], ...] = (),
) -> None:
    """Run jobs in ``slots`` tasks until ``next_job`` gives None or ``control`` says stop; ``finish`` each attempt.

    An exception from ``attempt`` or ``finish`` of a type in ``halt_on`` stops the run (``control.halt``, the
    jobs in flight finishing) instead of failing it; any other one from a slot is raised at once, from
    ``finish`` once the slots are done. The control cancels the slots when it abandons the jobs in flight (the
    breaker); a slot cancelled while the control has not stopped (from outside it) raises ``CancelledError``.
    When this returns, every attempt that finished has been finished."""
    attempted: deque[A] = deque()
    wake = asyncio.Event()
    slots_done = False

    async def slot() -> None:
        while not control.stopped:
            job = await next_job()
            if job is None:
                return
            try:
                attempted.append(await attempt(job))
            except halt_on as err:
                control.halt(err, cancel=False)
            wake.set()

    async def finisher() -> None:
        while True:
            while attempted:
                try:
                    finish(attempted.popleft())
                except halt_on as err:
                    control.halt(err, cancel=False)
                await asyncio.sleep(0)
            if slots_done:
                return
            wake.clear()
            await wake.wait()

    tasks = [asyncio.create_task(slot()) for _ in range(slots)]
    control.watch(tasks)
    finishing = asyncio.create_task(finisher())
    try:
        done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
        for task in done:
            if not task.cancelled() and task.exception() is not None:
                raise task.exception()  # type: ignore[misc]
        if not control.stopped:  # a slot was cancelled from outside the control: pass it on
            await asyncio.gather(*tasks)
        slots_done = True
        wake.set()
        await finishing
    finally:
        finishing.cancel()
        for task in tasks:
            task.cancel()
