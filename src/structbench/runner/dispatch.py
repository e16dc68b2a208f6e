"""The driver's side of a run spread over workers: hands out jobs, writes what comes back, stops them all.

Workers (forked processes, ``runner.workers``, or Ray actors, ``runner.cluster``) are links that take jobs
(``Ticket``: a reference and its sample; a forked worker that holds the sample is sent the reference alone) and
report events. The driver reads the jobs from a stream as it needs them (so it holds the samples in flight, never
all of them of a stream too large to hold before the fork), keeps each worker's share of the concurrency busy
plus a small prefetch, hands the next jobs to whichever worker finished one, and appends each finished job to the
run directory exactly once (a job re-run after its worker died, or re-tried by Ray, is written only if it was
not already). A stop seen by any worker (the circuit breaker, the response cache failing, a machine that cannot
run a strategy) or by the driver (``samples.jsonl`` failing) stops them all. The jobs of a worker that died go to
the others.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from structbench.core.errors import ExitCode, MachineError, RunStoppedError, StorageError, StructbenchError
from structbench.data.sample import Sample
from structbench.runner.budget import Spent, spent_sum
from structbench.runner.cache import CacheWriteError
from structbench.runner.control import RunControl
from structbench.runner.isolation import weakest
from structbench.runner.jobs import Finished, JobRef, Ticket

if TYPE_CHECKING:
    from structbench.backends.stats import CallSnapshot


class WorkerLink(Protocol):
    """A worker as the driver sees it; it reports through the events queue (``Events``)."""

    name: str
    capacity: int
    """Jobs it runs at once (its share of ``--concurrency``)."""
    prefetch: int
    """Jobs it may hold beyond those it runs, queued: enough that it never waits for the driver, few enough that
    the last jobs are not stuck behind another worker's (0 for a worker that would start them all at once)."""
    outstanding: dict[JobRef, Sample]
    """The jobs it holds (handed to it, not yet reported finished or lost), with their samples."""
    stats: WorkerStats | None
    """(model calls, cache hits, answers kept in the spill file, answers lost, what its calls spent, the weakest
    isolation its sandboxed programs got) once it has ended."""
    calls: CallSnapshot
    """Its calls' counters as last reported (for the progress line)."""

    async def open(self, events: Events) -> None: ...
    def submit(self, tickets: list[Ticket]) -> None: ...
    def halt(self, cancel: bool, message: str) -> None: ...
    def end(self) -> None: ...
    async def close(self) -> None: ...


WorkerStats = tuple[int, int, int, int, Spent, str | None]
"""A worker's counts once it has ended (``WorkerLink.stats``)."""

Events = asyncio.Queue[tuple[Any, tuple[Any, ...]]]
"""(link, message): ``("done", Finished)``, ``("halt", kind, message, cancel)``, ``("note", text)``,
``("fatal", exit code, text)``, ``("stats", calls, hits, kept, lost, spent, isolation)``, ``("calls",
CallSnapshot)`` (its calls' counters now), ``("lost", refs, why)`` (jobs a worker will not finish, to be handed to
others) and ``("exit", why)`` (the worker has ended)."""


WIND_DOWN = 5.0
"""Seconds an interrupted run waits for its workers to stop and report what they did."""
STARTED_AFTER = 0.001
"""Seconds after the first jobs are handed out that ``Dispatcher.started`` runs: after their writes (due at once)."""


class WorkersLostError(StructbenchError):
    """Every worker died before the run's jobs were done (exit 1; finished samples are kept)."""

    exit_code = ExitCode.INTERNAL


class WorkerFailed(StructbenchError):
    """A worker raised an unexpected exception; the message holds its traceback (exit 1)."""

    exit_code = ExitCode.INTERNAL


@dataclass
class Totals:
    """What the workers did, summed."""

    model_calls: int = 0
    cache_hits: int = 0
    spent: Spent = field(default_factory=dict)
    """What their calls spent (``Budget.spent``, summed)."""
    isolation: str | None = None
    """The weakest isolation their sandboxed programs got (``runner.isolation``; None: they ran none)."""


STOPS: dict[str, type[StructbenchError]] = {"cache": CacheWriteError, "storage": StorageError, "machine": MachineError}
"""A worker's stop as the driver raises it, by its kind (``workers.halt_kind``); any other kind is the breaker's."""


def _stop_error(kind: str, message: str) -> StructbenchError:
    return STOPS.get(kind, RunStoppedError)(message)


class Dispatcher:
    """One run of the jobs over ``links``; ``on_finished`` stores a finished job (a ``StorageError`` from it
    stops the run, as in a single process)."""

    def __init__(
        self,
        links: Sequence[WorkerLink],
        tickets: Iterable[Ticket],
        on_finished: Callable[[Finished], None],
        control: RunControl,
        started: Callable[[], object] | None = None,
    ) -> None:
        self.links = list(links)
        self.tickets = iter(tickets)
        """The jobs not handed out yet, read as they are needed."""
        self.pending: deque[Ticket] = deque()
        """Jobs handed back (their worker died), handed out again before new ones."""
        self.exhausted = False
        """Whether ``tickets`` has no job left."""
        self.issued: set[JobRef] = set()
        """Jobs handed out and not recorded yet: a job reported twice is recorded once."""
        self.on_finished = on_finished
        self.control = control
        self.started = started
        """Called once every worker has its first jobs, while their first requests are out: what the driver prepares
        for their results."""
        self.halted = False
        self.fatal: StructbenchError | None = None
        self.totals = Totals()
        """What the workers did, summed when ``run`` ends (normally or not)."""
        self._notes: set[str] = set()

    def _take(self, count: int) -> list[Ticket]:
        """Up to ``count`` jobs: handed-back ones first, then the next of the stream."""
        batch = [self.pending.popleft() for _ in range(min(count, len(self.pending)))]
        while len(batch) < count and not self.exhausted:
            ticket = next(self.tickets, None)
            if ticket is None:
                self.exhausted = True
            else:
                batch.append(ticket)
        return batch

    def _top_up(self, link: WorkerLink) -> None:
        """Hand ``link`` jobs up to its slots and prefetch, once half its prefetch is free (at least one job): a
        worker still holds a quarter of its slots' worth of queued jobs, and takes its next jobs a few to a message
        (one write by the driver, one wake-up and read of the worker) instead of one message a finished job."""
        if self.halted:
            return
        want = link.capacity + link.prefetch - len(link.outstanding)
        if want >= max(1, link.prefetch // 2):
            batch = self._take(want)
            if batch:
                self.issued.update(ref for ref, _ in batch)
                link.submit(batch)

    def _end_if_done(self, live: Sequence[WorkerLink]) -> None:
        if self.halted or self.pending or not self.exhausted or any(link.outstanding for link in live):
            return
        for link in live:
            link.end()

    def _halt(self, error: StructbenchError, cancel: bool, live: Sequence[WorkerLink]) -> None:
        """Stop every worker; the first reason is the run's."""
        if isinstance(error, CacheWriteError) and self.control.cache_usable:
            self.control.cache_usable = False
            self.control.cache_error = error
        if not self.halted:
            self.control.halt(error, cancel=False)
        self.halted = True
        self.pending.clear()
        self.exhausted = True
        for link in live:
            link.halt(cancel, str(error))

    async def run(self) -> Totals:
        """Until every worker has ended; what they did (also in ``totals``, however the run ended). ``final_error``
        then says why the run stopped, if it did.

        Cancelled (Ctrl-C, SIGTERM), it first tells every worker to abandon its jobs and waits up to
        ``WIND_DOWN`` seconds for them to end, so that what they did (the model calls the manifest counts, and
        the jobs they finished meanwhile) is not lost with them."""
        events: Events = asyncio.Queue()
        live: list[WorkerLink] = []
        try:
            for link in self.links:
                await link.open(events)
                live.append(link)
            for link in live:
                self._top_up(link)
            self._end_if_done(live)
            if self.started is not None:
                asyncio.get_running_loop().call_later(STARTED_AFTER, self.started)
            while live:
                link, message = await events.get()
                self._handle(link, message, live)
        except asyncio.CancelledError:
            await self._wind_down(events, live)
            raise
        finally:
            for link in self.links:
                await link.close()
            self.totals = self._totals()
        return self.totals

    async def _wind_down(self, events: Events, live: list[WorkerLink]) -> None:
        """The run was interrupted: stop every worker at once and hear them out (their stats, their last jobs)."""
        self.halted = True
        self.pending.clear()
        self.exhausted = True
        for link in live:
            link.halt(True, "the run was interrupted")
        deadline = asyncio.get_running_loop().time() + WIND_DOWN
        while live:
            left = deadline - asyncio.get_running_loop().time()
            if left <= 0:
                return
            try:
                link, message = await asyncio.wait_for(events.get(), left)
            except TimeoutError:
                return
            try:
                self._handle(link, message, live)
            except WorkersLostError:  # nobody to hand jobs to: expected while every worker ends
                continue

    def _handle(self, link: WorkerLink, message: tuple[Any, ...], live: list[WorkerLink]) -> None:
        kind = message[0]
        if kind == "done":
            finished: Finished = message[1]
            link.outstanding.pop(finished.ref, None)
            if finished.ref in self.issued:
                self.issued.discard(finished.ref)
                try:
                    self.on_finished(finished)
                except StorageError as err:
                    self._halt(err, False, live)
            self._top_up(link)
            self._end_if_done(live)
        elif kind == "halt":
            _, stop, text, cancel = message
            self._halt(_stop_error(stop, text), cancel, live)
        elif kind == "note":
            if message[1] not in self._notes:
                self._notes.add(message[1])
                self.control.notify(message[1])
        elif kind == "fatal":
            _, code, text = message
            error: StructbenchError = StorageError(text) if code == ExitCode.STORAGE else \
                WorkerFailed(f"{link.name} failed:\n{text}")
            self.fatal = self.fatal or error
            self._halt(error, True, live)
        elif kind == "stats":
            link.stats = message[1:]
        elif kind == "calls":
            link.calls = message[1]
        elif kind == "lost":
            self._requeue(link, message[1], message[2], live)
        elif kind == "exit":
            live.remove(link)
            if link.outstanding:
                self._requeue(link, list(link.outstanding), message[1], live)
            self._end_if_done(live)

    def _requeue(self, link: WorkerLink, refs: list[JobRef], why: str, live: list[WorkerLink]) -> None:
        """Hand a worker's unfinished jobs to the others (their completed model calls are in the cache)."""
        held = [(r, link.outstanding.pop(r)) for r in refs if r in link.outstanding]
        tickets = [(r, sample) for r, sample in held if r in self.issued]
        if self.halted or not tickets:
            return
        if not live:
            left = "" if self.exhausted else " and more"
            raise WorkersLostError(
                f"every worker has stopped (the last, {link.name}, {why}) with {len(tickets) + len(self.pending)}"
                f"{left} samples left; finished samples are saved, the same command resumes")
        self.control.notify(f"warning: {link.name} {why}; its {len(tickets)} unfinished samples go to the other "
                            "workers")
        self.pending.extendleft(reversed(sorted(tickets, key=lambda t: t[0])))
        for other in live:
            self._top_up(other)

    def _totals(self) -> Totals:
        totals = Totals()
        spill = self.control.spill
        for link in self.links:
            if link.stats is None:
                continue
            calls, hits, kept, lost, spent, isolation = link.stats
            totals.model_calls += calls
            totals.cache_hits += hits
            totals.spent = spent_sum(totals.spent, spent)
            totals.isolation = weakest(totals.isolation, isolation)
            if spill is not None:
                spill.kept += kept
                spill.lost += lost
        return totals

    def final_error(self) -> StructbenchError | None:
        """Why the run stopped early (a worker's failure first), or None."""
        return self.fatal or self.control.final_error()
