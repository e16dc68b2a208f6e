"""The dispatcher against a scripted worker link: every job recorded once, and jobs handed out a few at a time."""

from __future__ import annotations

import asyncio
from typing import Any, cast

from structbench.backends.stats import CallSnapshot
from structbench.data.sample import Sample
from structbench.runner.control import RunControl
from structbench.runner.dispatch import Dispatcher, Events, WorkerStats
from structbench.runner.jobs import Finished, JobRef, Ticket


class ScriptedLink:
    """A worker that finishes its oldest job, one a turn of the event loop, once the driver took the last one in."""

    def __init__(self, capacity: int, prefetch: int) -> None:
        self.name = "scripted"
        self.capacity = capacity
        self.prefetch = prefetch
        self.outstanding: dict[JobRef, Sample] = {}
        self.stats: WorkerStats | None = None
        self.calls = CallSnapshot()
        self.batches: list[int] = []
        self.most_held = 0
        self._ended = False
        self._task: asyncio.Task[None] | None = None

    async def open(self, events: Events) -> None:
        self._task = asyncio.create_task(self._work(events))

    async def _work(self, events: Events) -> None:
        reported: JobRef | None = None
        while not self._ended:
            await asyncio.sleep(0)
            if reported is not None and reported in self.outstanding:
                continue  # the driver has not read the last one yet
            reported = next(iter(self.outstanding), None)
            if reported is not None:
                events.put_nowait((self, ("done", Finished(reported, cast(Any, None), b""))))
        events.put_nowait((self, ("stats", 0, 0, 0, 0, {}, None)))
        events.put_nowait((self, ("exit", "ended")))

    def submit(self, tickets: list[Ticket]) -> None:
        self.outstanding.update(tickets)
        self.batches.append(len(tickets))
        self.most_held = max(self.most_held, len(self.outstanding))

    def halt(self, cancel: bool, message: str) -> None:
        self._ended = True

    def end(self) -> None:
        self._ended = True

    async def close(self) -> None:
        if self._task is not None:
            await self._task


def test_jobs_go_out_a_few_to_a_message_and_each_is_recorded_once() -> None:
    sample = Sample.model_construct(id="s")  # the dispatcher hands samples on unread
    tickets: list[Ticket] = [((0, 0, i, 0), sample) for i in range(100)]
    link = ScriptedLink(capacity=8, prefetch=4)
    recorded: list[JobRef] = []
    dispatcher = Dispatcher([link], tickets, lambda finished: recorded.append(finished.ref),
                            RunControl(max_consecutive_failures=0, notify=lambda text: None))
    asyncio.run(dispatcher.run())
    assert sorted(recorded) == [ref for ref, _ in tickets]
    assert link.batches[0] == 12 and sum(link.batches) == 100
    assert link.most_held == 12  # never more than its slots and prefetch
    # after the first, every message but the stream's last carries half the prefetch at least (one a job before)
    assert min(link.batches[1:-1]) >= 2 and len(link.batches) <= 2 + (100 - 12) // 2
