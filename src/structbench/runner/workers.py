"""Worker processes forked from the run's process: the run's jobs spread over several event loops.

The run's process (the driver) prepares the selections (benchmarks, strategies, and each stream's first sample),
reads the small streams whole (``hold_streams``), then forks ``--workers`` processes before it starts any thread, so
each worker starts in milliseconds with every module imported and the held samples shared copy-on-write. Jobs then
travel as their reference (``runner.jobs.JobRef``) where the worker holds the sample, else with the sample
(``runner.jobs.Ticket``), which the driver reads from the benchmark's stream as the workers need it: no process
holds every sample of a large stream. A worker runs its share of the
concurrency on its own event loop: the strategies and their model calls, the response cache (opened by
each worker on the same SQLite file, which serializes the commits: a response is still committed before
the strategy sees it), parsing, scoring and the record line. It sends each finished job back over a
socket pair; the driver alone appends to ``samples.jsonl``, so the run directory keeps a single writer.

A worker dies with the driver (``PR_SET_PDEATHSIG`` on Linux, and the socket's end everywhere), ignores
Ctrl-C (the driver stops the run), and answers the driver's ``halt`` (the circuit breaker or a storage
failure seen by any worker stops them all) and ``end`` (every job is recorded).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import pickle
import signal
import socket
import struct
import sys
import traceback
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from structbench.backends.base import Backend
from structbench.backends.stats import CallSnapshot
from structbench.core.errors import ExitCode, MachineError, StorageError, StructbenchError
from structbench.core.words import spelt
from structbench.data.sample import Sample
from structbench.runfiles.records import SummaryRow, UsageCounts
from structbench.runner.budget import Budget
from structbench.runner.cache import ResponseCache, Spill
from structbench.runner.calls import ModelCaller, ModelPool
from structbench.runner.control import CacheErrorPolicy, RunControl
from structbench.runner.engine import Job, Outcome
from structbench.runner.isolation import quietly, taken
from structbench.runner.jobs import Finished, JobRef, JobRunner, Ticket
from structbench.runner.notes import notes_to
from structbench.runner.pipeline import run_pipeline
from structbench.runner.settings import RequestSettings
from structbench.runner.spending import SpendLog

if TYPE_CHECKING:
    from structbench.backends.prices import Prices
    from structbench.runner.dispatch import Events, WorkerStats
    from structbench.runner.selection import Selection

_FRAME = struct.Struct("!I")
CALLS_EVERY = 0.5
"""Seconds between a worker's reports of its calls' counters (when they changed), for the progress line."""


def encode(message: tuple[Any, ...]) -> bytes:
    """One length-prefixed, pickled message."""
    payload = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return _FRAME.pack(len(payload)) + payload


assert SummaryRow._fields[-3:] == ("usage_groups", "cell", "turn_limit")  # what ``done_message`` unpacks by position


def done_message(finished: Finished) -> tuple[Any, ...]:
    """``("done", finished)`` as a worker sends it: plain tuples, which pickle writes and reads in C, where the
    dataclass and its named tuples went through Python calls each (12 -> 3 µs a message alone, 40 µs in a busy
    worker); ``received`` makes it whole again."""
    row = finished.record
    usage = tuple((key, tuple(counts)) for key, counts in row.usage_groups)
    return ("done", finished.ref, row[:-3], usage, row.cell, row.turn_limit, finished.line)


def received(message: tuple[Any, ...]) -> tuple[Any, ...]:
    """A worker's message as the dispatcher reads it: ``done_message``'s as ``("done", Finished)``."""
    if message[0] != "done":
        return message
    _, ref, head, usage, cell, turn_limit, line = message
    groups = tuple((key, UsageCounts._make(counts)) for key, counts in usage)
    return ("done", Finished(ref, SummaryRow._make((*head, groups, cell, turn_limit)), line))


async def read_message(reader: asyncio.StreamReader) -> tuple[Any, ...] | None:
    """The next message, or None when the other end closed its socket."""
    try:
        head = await reader.readexactly(_FRAME.size)
        payload = await reader.readexactly(_FRAME.unpack(head)[0])
    except (asyncio.IncompleteReadError, ConnectionError):
        return None
    message: tuple[Any, ...] = pickle.loads(payload)
    return message


class Outbox:
    """Messages to one socket, written together: at most every ``delay`` seconds, so a stream of finished jobs
    (or of new jobs) costs one system call, and one wake-up of the other process, per batch instead of each.
    A batch is written at once when it reaches ``size`` bytes."""

    def __init__(self, writer: asyncio.StreamWriter, delay: float = 0.002, size: int = 2**16) -> None:
        self.writer = writer
        self.delay = delay
        self.size = size
        self._frames: list[bytes] = []
        self._bytes = 0
        self._timer: asyncio.TimerHandle | None = None

    def put(self, message: tuple[Any, ...]) -> None:
        frame = encode(message)
        self._frames.append(frame)
        self._bytes += len(frame)
        if self._bytes >= self.size:
            self.flush()
        elif self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(self.delay, self.flush)

    def flush(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._frames and not self.writer.is_closing():
            self.writer.write(b"".join(self._frames))
        self._frames.clear()
        self._bytes = 0


@dataclass(frozen=True)
class WorkerSettings:
    """What a worker needs besides the selections and the backend (all of it plain data)."""

    model: str
    request: RequestSettings
    """The run's request settings (token cap, system prompt, chat-template arguments, sampling)."""
    run_dir: Path
    cache_path: Path | None
    cache_lock_wait: float
    max_consecutive_failures: int
    on_cache_error: CacheErrorPolicy
    model_context: int | None = None
    """The model's context the run's samples were prepared for (a Ray worker prepares its own for it)."""
    prices: Prices | None = None
    """The run's prices (``--prices``): what a worker's calls cost, for the session's spending in the manifest."""
    session: int | None = None
    """The session's index in the manifest: a forked worker appends each call it paid for to the run's
    ``spent.jsonl`` under it (``runner.spending``); a Ray actor, which may not see the run directory, does not."""
    payer: str | None = None
    """The session's ``id``, which the response cache stores with each answer a worker paid for."""


class StopRequest(StructbenchError):
    """The driver stopped the run (another worker's breaker or storage failure); carries its message."""


def halt_kind(error: BaseException) -> str:
    """How a stop travels between processes: ``stopped`` (the breaker), ``cache``, ``storage`` or ``machine``."""
    from structbench.runner.cache import CacheReadError, CacheWriteError

    if isinstance(error, CacheWriteError | CacheReadError):
        return "cache"
    if isinstance(error, MachineError):
        return "machine"
    return "storage" if isinstance(error, StorageError) else "stopped"


class Worker:
    """One worker process's event loop: job references in, finished jobs out."""

    def __init__(
        self,
        selections: Sequence[Selection],
        backend: Backend,
        settings: WorkerSettings,
        concurrency: int,
    ) -> None:
        self.selections = selections
        self.backend = backend
        self.settings = settings
        self.concurrency = concurrency
        self.queue: deque[Ticket] = deque()
        self.ended = False
        self._idle: deque[asyncio.Future[None]] = deque()
        """The slots waiting for a job: one is woken per job that comes, every one at the end or a stop."""
        self._outbox: Outbox | None = None
        self.control = RunControl(settings.max_consecutive_failures, settings.on_cache_error,
                                  Spill(settings.run_dir), notify=self._note, on_halt=self._halted,
                                  budget=Budget(prices=settings.prices, log=None if settings.session is None
                                                else SpendLog(settings.run_dir, settings.session, settings.payer)))
        """Its budget has no limit (a run with one runs in one process): it counts what this worker's calls spent."""

    def _send(self, message: tuple[Any, ...]) -> None:
        assert self._outbox is not None
        self._outbox.put(message)
        if len(self.queue) <= self.concurrency // 8 and not self.ended:
            # running low on jobs (three quarters of the driver's prefetch of half the slots are gone): the driver
            # answers finished ones with new ones. Otherwise finished jobs wait for the outbox's next write (2 ms),
            # one write and one wake-up of the driver for the few that finish meanwhile instead of one for each.
            self._outbox.flush()

    def _note(self, text: str) -> None:
        self._send(("note", text))

    def _wake(self, count: int | None = None) -> None:
        """Wake ``count`` of the waiting slots (None: all of them): each new job wakes one, not every idle slot."""
        idle = self._idle
        while idle and (count is None or count > 0):
            waiter = idle.popleft()
            if not waiter.done():  # not cancelled with its slot
                waiter.set_result(None)
                if count is not None:
                    count -= 1

    def _halted(self, error: StructbenchError, cancel: bool) -> None:
        self._wake()
        if not isinstance(error, StopRequest):  # the driver's own stop needs no echo
            self._send(("halt", halt_kind(error), str(error), cancel))

    async def main(self, sock: socket.socket) -> None:
        reader, writer = await asyncio.open_unix_connection(sock=sock)
        self._outbox = Outbox(writer)
        loop = asyncio.get_running_loop()

        def note(text: str) -> None:  # a logged warning (the sandbox's weaker isolation), from a tool's thread too
            loop.call_soon_threadsafe(self._note, text)

        notes_to(note)  # to the driver, which says each once a run
        reading = asyncio.create_task(self._read(reader))
        try:
            await self._serve()
        except BaseException as err:
            code = getattr(err, "exit_code", ExitCode.INTERNAL)
            text = str(err) if isinstance(err, StructbenchError) else traceback.format_exc()
            self._send(("fatal", int(code), text))
        finally:
            reading.cancel()
            self._outbox.flush()
            with contextlib.suppress(ConnectionError):
                await writer.drain()
            writer.close()

    async def _serve(self) -> None:
        s = self.settings
        cache = ResponseCache(s.cache_path, lock_wait=s.cache_lock_wait) if s.cache_path is not None else None
        caller = ModelCaller(self.backend, cache, self.control)
        others = ModelPool(cache, self.control)
        runner = JobRunner(self.selections, caller, s.model, s.request)

        def finish(attempted: tuple[JobRef, Job, Outcome]) -> None:
            self._send(done_message(runner.finish(*attempted)))

        reporting = asyncio.create_task(self._report_calls(caller, others))
        try:
            async with others:
                await run_pipeline(self.concurrency, self._next, runner.attempt, finish, self.control,
                                   halt_on=(MachineError,))
        finally:
            reporting.cancel()
            self._send(("calls", calls_snapshot(caller, others)))  # the last counters: none left in flight
            await self.backend.aclose()
            if cache is not None:
                await cache.drain()
            self._close_log()
            spill = self.control.spill
            self._send(("stats", caller.model_calls + others.model_calls, cache.hits if cache else 0,
                        spill.kept if spill else 0, spill.lost if spill else 0, self.control.budget.spent(), taken()))
            if cache is not None:
                cache.close()

    def _close_log(self) -> None:
        """Sync and close this worker's lines of the spend log (synced every ``SYNC_EVERY`` seconds while it runs:
        the last ones would otherwise wait for the kernel); one that cannot be synced stops the run."""
        log = self.control.budget.log
        if log is None:
            return
        try:
            log.close()
        except StorageError as err:
            self.control.halt(err, cancel=False)

    async def _report_calls(self, caller: ModelCaller, others: ModelPool) -> None:
        """Send the calls' counters (``("calls", CallSnapshot)``) every ``CALLS_EVERY`` seconds they changed."""
        last = CallSnapshot()
        while True:
            await asyncio.sleep(CALLS_EVERY)
            now = calls_snapshot(caller, others)
            if now != last:
                self._send(("calls", now))
                last = now

    async def _next(self) -> Ticket | None:
        while not self.queue:
            if self.ended or self.control.stopped:
                return None
            waiter = asyncio.get_running_loop().create_future()
            self._idle.append(waiter)
            await waiter
        return None if self.control.stopped else self.queue.popleft()

    def _held_sample(self, ref: JobRef) -> Sample:
        """The sample of a job sent without it: this process holds its selection's samples (``hold_streams``)."""
        held = self.selections[ref[0]].samples.held
        assert held is not None
        return held[ref[2]]

    async def _read(self, reader: asyncio.StreamReader) -> None:
        while True:
            message = await read_message(reader)
            if message is None:  # the driver is gone: nothing this worker finishes can be recorded
                os._exit(1)
            kind = message[0]
            if kind == "jobs":
                self.queue.extend((ref, sample if sample is not None else self._held_sample(ref))
                                  for ref, sample in message[1])
                self._wake(len(message[1]))
                continue
            if kind == "halt":
                self.control.halt(StopRequest(message[2]), cancel=message[1])
            elif kind == "end":
                self.ended = True
            self._wake()


def calls_snapshot(caller: ModelCaller, others: ModelPool) -> CallSnapshot:
    """The counters of the run's model and of every other model it called (a judge)."""
    total = caller.backend.stats.snapshot()
    for other in others.callers.values():
        total += other.backend.stats.snapshot()
    return total


def _libc() -> Any:
    """The C library (None: not Linux, or not found), loaded by the driver before it forks: ``ctypes``' import and the
    lookup took each worker 3 ms."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


def _die_with_parent(libc: Any) -> None:
    """Ask Linux to kill this process when its parent dies (``kill -9`` of the driver included)."""
    if libc is not None:
        with contextlib.suppress(OSError, AttributeError):
            libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _child(worker: Worker, sock: socket.socket, parent: int, close_fds: Sequence[int], libc: Any) -> NoReturn:
    """The forked process: run the worker, then leave without running the driver's cleanup code."""
    code = 1
    try:
        _die_with_parent(libc)
        if os.getppid() != parent:  # the driver died before the request above took effect
            os._exit(1)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        for fd in close_fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        from structbench.runner.loop import run_async

        run_async(worker.main(sock))
        code = 0
    except BaseException:
        with contextlib.suppress(Exception):
            traceback.print_exc()
    finally:
        with contextlib.suppress(Exception):
            sys.stderr.flush()
        os._exit(code)


def worker_count(backend: Backend, asked: int | None, notify: Callable[[str], None]) -> int:
    """``--workers``: as asked, by default one per core for a server backend (the harness's own work then runs
    on every core), else 1. A backend that cannot be forked runs in one process, with a note: ``--workers`` is
    an execution setting, so a suite's local model still runs beside its served ones (said on ``notify``)."""
    from structbench.core.forkmap import cpu_count

    if asked is None:
        return cpu_count() if backend.remote else 1
    if asked > 1 and not backend.forkable:
        notify(f"note: {spelt('workers', str(asked))}: the {backend.backend} backend holds its model in this process "
               f"and cannot be copied into worker processes; running in one process ({spelt('executor', 'ray')} runs "
               "one copy per Ray actor)")
        return 1
    return asked


def split(total: int, parts: int) -> list[int]:
    """``total`` concurrency over ``parts`` workers, as evenly as whole numbers allow."""
    return [total // parts + (i < total % parts) for i in range(parts)]


class ProcessLink:
    """The driver's side of one forked worker."""

    def __init__(self, index: int, pid: int, sock: socket.socket, capacity: int, held: Sequence[bool] = ()) -> None:
        self.pid = pid
        self.capacity = capacity
        """Jobs it runs at once."""
        self.prefetch = max(1, round(capacity / 2))
        """Jobs queued in it beyond those it runs (``dispatch.WorkerLink``): half its slots, so that most finished jobs
        travel, and are answered, a few to a message (a quarter: about one write and one wake-up of each process a
        job, measured in a 2,000-request run; half: about 0.6)."""
        self.name = f"worker {index} (pid {pid})"
        self.outstanding: dict[JobRef, Sample] = {}
        self.stats: WorkerStats | None = None
        self.calls = CallSnapshot()
        self._sock = sock
        self._held = held
        """Per selection, whether the worker holds its samples (jobs then go without them)."""
        self._writer: asyncio.StreamWriter | None = None
        self._outbox: Outbox | None = None
        self._pump: asyncio.Task[None] | None = None

    async def open(self, events: Events) -> None:
        reader, self._writer = await asyncio.open_unix_connection(sock=self._sock)
        self._outbox = Outbox(self._writer, delay=0.0)  # jobs go out at the end of the loop's turn
        self._pump = asyncio.create_task(self._read(reader, events))

    async def _read(self, reader: asyncio.StreamReader, events: Events) -> None:
        while (message := await read_message(reader)) is not None:
            events.put_nowait((self, received(message)))
        status = await asyncio.get_running_loop().run_in_executor(None, self.wait)
        events.put_nowait((self, ("exit", status)))

    def _send(self, message: tuple[Any, ...]) -> None:
        if self._outbox is not None:
            self._outbox.put(message)

    def submit(self, tickets: list[Ticket]) -> None:
        self.outstanding.update(tickets)
        held = self._held
        # one message: a sample that several jobs share is pickled once; one the worker holds is not sent at all
        self._send(("jobs", [(ref, None) if ref[0] < len(held) and held[ref[0]] else (ref, sample)
                             for ref, sample in tickets]))

    def halt(self, cancel: bool, message: str) -> None:
        self._send(("halt", cancel, message))

    def end(self) -> None:
        self._send(("end",))

    def wait(self) -> str:
        """Reap the process; how it ended, in words."""
        try:
            _, status = os.waitpid(self.pid, 0)
        except ChildProcessError:
            return "ended"  # reaped already
        if os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
            try:
                return f"was killed by signal {sig} ({signal.Signals(sig).name})"
            except ValueError:
                return f"was killed by signal {sig}"
        return f"exited with status {os.WEXITSTATUS(status)}"

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)

    async def close(self) -> None:
        if self._outbox is not None:
            self._outbox.flush()
        if self._writer is not None:
            self._writer.close()
        if self._pump is not None:
            self._pump.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._pump


def warm_up(selections: Sequence[Selection]) -> None:
    """Run each strategy once on its first sample against the oracle, quietly, before forking (no request,
    nothing recorded): code a strategy or scorer imports on first use (a metric library) is then loaded
    once here and shared, instead of stalling every worker's event loop, with requests in flight, when it
    finishes its first sample. Programs it runs in the sandbox count neither among the run's nor as its warnings.
    A ``MachineError`` (a sandbox that cannot start programs) is raised: the run stops before any model call."""
    import logging
    import warnings

    from structbench.backends.oracle import OracleBackend
    from structbench.runner.engine import run_job
    from structbench.runner.jobs import job_of

    oracle = ModelCaller(OracleBackend(), None, RunControl(max_consecutive_failures=0, notify=lambda text: None))
    logging.disable(logging.CRITICAL)
    try:
        with quietly(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for i, sel in enumerate(selections):
                first = sel.samples.first
                for j in range(len(sel.strategies)):
                    if first is not None:
                        try:
                            asyncio.run(run_job(job_of(selections, ((i, j, 0, 0), first)), oracle, "warm-up"))
                        except MachineError:  # every sample would meet it: the run stops before its first call
                            raise
                        except Exception:
                            continue
    finally:
        logging.disable(logging.NOTSET)


def hold_streams(selections: Sequence[Selection]) -> None:
    """Read whole, before the fork, each selection's stream that is small enough (``SampleStream.hold``; a stream
    several selections share is read once)."""
    done: set[int] = set()
    for sel in selections:
        if id(sel.samples) not in done:
            done.add(id(sel.samples))
            sel.samples.hold()


def fork_workers(
    selections: Sequence[Selection],
    backend: Backend,
    settings: WorkerSettings,
    concurrency: int,
    count: int,
    close_fds: Sequence[int],
) -> list[ProcessLink]:
    """Fork ``count`` workers sharing ``concurrency`` requests in flight; the driver's ``close_fds`` (its run
    directory lock and records) are closed in each. The jobs of a selection whose samples are held (read before,
    ``hold_streams``) go to them without their samples."""
    with contextlib.suppress(ImportError):
        import uvloop  # noqa: F401  (imported once here rather than in each worker)
    import encodings.idna  # noqa: F401  (the event loop encodes a connection's host with it: each worker's first call)

    libc = _libc()
    links: list[ProcessLink] = []
    held = [sel.samples.held is not None for sel in selections]
    parent = os.getpid()
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        for index, share in enumerate(split(concurrency, count)):
            ours, theirs = socket.socketpair()
            pid = os.fork()
            if pid == 0:
                ours.close()
                for link in links:
                    link._sock.close()
                _child(Worker(selections, backend, settings, share), theirs, parent, close_fds, libc)
            theirs.close()
            links.append(ProcessLink(index, pid, ours, share, held))
    except BaseException:
        stop_workers(links)
        raise
    return links


def stop_workers(links: Sequence[ProcessLink]) -> None:
    """Kill the workers still running and reap them all."""
    for link in links:
        link.kill()
    for link in links:
        link.wait()
        link._sock.close()
