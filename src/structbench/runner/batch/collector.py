"""A backend that answers through its provider's batch API: calls are collected, sent as one batch per step, and
each waits for its line of the results.

``BatchedBackend`` stands in for the run's backend (same name, model, server: same cache keys and manifest), so the
response cache, the records and the metrics do not know the answers came in a batch. The run starts every sample
at once; when each one waits for the model (``gate.StepGate``), the calls pending are the step's: they go out as
one batch (split where a provider's limit or endpoint requires), and the step's answers are handed back when it
ends, each to the sample that asked, which caches it as any answer and goes on to its next step.

Before anything is sent, the run directory's ledger (``ledger.Ledger``) is searched for a batch holding the same
requests (their ids are their cache keys): a batch of an earlier session still running is polled again, and one
that ended has its answers read from its output file (kept in the run directory), so paid work is never sent
twice nor thrown away, whatever stopped the earlier session.

Failed lines: a retryable failure (rate limit, server error, expiry of the batch's window, a line missing from the
results) is sent again in a new batch of the failed lines only, up to ``BatchSettings.rounds`` times; any other
(the request refused, an unusable reply) fails the sample's call as a direct call would, and a resumed run tries it
again. A batch this session sent (or saw running) that is cancelled while it waits stops the run; the answers it
holds are kept.

A batch of an earlier session that ended without answering some of its requests (the provider refused it whole,
it was cancelled or expired, their lines failed) is taken up for the answers it holds only: its other requests go
into a new batch, as direct calls would be sent again, and the ledger keeps both. Only a prompt the provider found
too long for the model's context is final, as it is for a direct call.

A batch the provider answers it does not know (404 Not Found: another API key or organization than the one that sent
it, or the provider lost it) is a definite answer, not an outage: it is marked ``abandoned`` in the ledger with a
note, said in one line, and its requests are sent again in a new batch (paid again, so counted by the budget).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from structbench.backends.base import (
    PROMPT_TOO_LONG,
    Backend,
    BackendError,
    Request,
    Response,
    cache_fields,
    cache_key,
)
from structbench.backends.stats import CallStats
from structbench.backends.usage import model_label
from structbench.core.errors import RunStoppedError, StructbenchError
from structbench.core.redact import redact
from structbench.runner.batch.gate import Hold, StepGate
from structbench.runner.batch.ledger import BatchEntry, Ledger
from structbench.runner.batch.providers import MALFORMED, BatchProvider, LineError, Outcome, Status, provider_for

T = TypeVar("T")

API_TRIES = 6
"""Tries of one call to the batch API (status, results, creation) before the run stops, waiting 1, 2, 4 ... s."""


@dataclass(frozen=True)
class BatchSettings:
    """``--batch`` and how it polls."""

    poll: float = 30.0
    """Most seconds between two polls of a running batch (the first come after 1, 2, 4 ... seconds)."""
    rounds: int = 2
    """Times a failed line is sent again (in a batch of failed lines) within one session."""


@dataclass
class _Waiter:
    key: str
    request: Request
    future: asyncio.Future[Response]
    hold: Hold


Group = dict[str, list[_Waiter]]
"""Cache key -> the calls waiting for it (several only without a response cache, which joins identical calls)."""


@dataclass
class _Work:
    """A batch the step waits for, and the calls it answers."""

    entry: BatchEntry
    group: Group
    adopted: bool
    """Sent by an earlier session (its failed lines start again at round 0: rounds count per session)."""


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


class BatchedBackend(Backend):
    """``inner``'s requests, answered through its batch API."""

    batched = True
    forkable = False

    def __init__(self, inner: Backend, run_dir: Path, settings: BatchSettings | None = None,
                 notify: Callable[[str], None] = _stderr) -> None:
        self.inner = inner
        for name in ("backend", "model", "base_url", "cacheable", "supports_logprobs", "supports_min_tokens",
                     "supports_choices", "supports_chat_template_args", "reasoning_efforts",
                     "supports_reasoning_budget", "model_options", "remote"):
            setattr(self, name, getattr(inner, name))
        self.provider: BatchProvider = provider_for(inner)
        self.ledger = Ledger(run_dir)
        self.run_dir = run_dir
        self.settings = settings or BatchSettings()
        self.notify = notify
        self.gate = StepGate()
        self.label = model_label(inner)
        self._pending: Group = {}
        self._flusher: asyncio.Task[None] | None = None
        self.step = 0
        self.submitted: list[str] = []
        """Ids of the batches this session created."""
        self.adopted: list[str] = []
        """Ids of the batches of earlier sessions this one took up again."""
        self._errors: dict[str, str] = {}
        """The last failure of each call sent again (its message if it fails for good)."""
        self._seen_running: set[str] = set()
        """Tags of the batches a poll of this session found still running (cancelled after that: while it waited)."""

    @property
    def stats(self) -> CallStats:
        return self.inner.stats

    @property
    def title(self) -> str:
        return self.inner.title + f", through its batch API ({self.provider.name})"

    def describe(self) -> dict[str, Any]:
        return self.inner.describe()

    def reasoning_budget_problem(self, budget: int) -> str | None:
        return self.inner.reasoning_budget_problem(budget)

    async def context_window(self) -> int | None:
        return await self.inner.context_window()

    async def generate(self, request: Request) -> Response:
        from structbench.runner.calls import current_epoch

        key = cache_key(self.inner, request, cache_fields(self.inner, request, epoch=current_epoch.get()))
        waiter = _Waiter(key, request, asyncio.get_running_loop().create_future(), self.gate.hold())
        self._pending.setdefault(key, []).append(waiter)
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush_forever())
        try:
            return await waiter.future
        finally:
            waiter.hold.release()
            if not waiter.future.done():  # cancelled (the run stops): it is not sent if not sent yet
                waiter.future.cancel()
                waiting = self._pending.get(key)
                if waiting is not None and waiter in waiting:
                    waiting.remove(waiter)
                    if not waiting:
                        del self._pending[key]

    async def aclose(self) -> None:
        if self._flusher is not None:
            self._flusher.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._flusher
        await self.provider.aclose()
        await self.inner.aclose()

    # -- steps -------------------------------------------------------------------------------------------

    async def _flush_forever(self) -> None:
        while True:
            await self.gate.wait_ready()
            if not self._pending:  # answers were just handed out: let their samples move on
                await asyncio.sleep(0.01)
                continue
            group, self._pending = self._pending, {}
            self.step += 1
            try:
                await self._step(group)
            except asyncio.CancelledError:
                raise
            except Exception as err:
                error = err if isinstance(err, StructbenchError) else RunStoppedError(
                    redact(f"the batch API of {self.label} failed: {type(err).__name__}: {err}; the batches sent are "
                           f"kept in {self.ledger.path}: the same command takes them up again"))
                _fail_all(group, error)

    async def _step(self, group: Group) -> None:
        """Answer every call of ``group``: from batches of earlier sessions first, then from new ones."""
        todo = dict(group)
        work = await self._adopt(todo)
        fresh: dict[str, tuple[list[_Waiter], int]] = {key: (waiters, 0) for key, waiters in todo.items()}
        while True:
            for chunk_round, chunk in self._chunks(fresh):
                entry = await self._submit(chunk, chunk_round)
                work.append(_Work(entry, chunk, adopted=False))
            fresh = {}
            if not work:
                return
            await self._wait([w.entry for w in work])
            for w in work:
                entry = w.entry
                retry = w.group if entry.state == "abandoned" else self._settle(entry, w.group)  # lost: all again
                for key, waiters in retry.items():
                    again = 0 if w.adopted else entry.round + 1
                    if again <= self.settings.rounds:
                        fresh[key] = (waiters, again)
                    else:
                        _fail(waiters, BackendError(
                            f"{self.label}: batch {entry.id}: the request failed in {again} batches in a row: "
                            f"{self._errors.get(key, 'no answer')}", cause="batch line failed"))
            work = []

    def _mine(self) -> list[BatchEntry]:
        return [e for e in self.ledger.entries if e.provider == self.provider.name and e.model == self.label
                and e.base_url == self.inner.base_url and e.state != "abandoned"]

    async def _adopt(self, todo: Group) -> list[_Work]:
        """Take from ``todo`` the calls an earlier session's batch holds (the latest batch of each), with those
        batches; a batch created without its id written down is looked for at the provider first. Of a batch that
        ended, only the calls it answered are taken: the others stay in ``todo``, for a new batch."""
        for entry in self._mine():
            if not self.ledger.file(entry.input_name).exists():
                await self._recover(entry)
        ids = {cid: key for key, waiters in todo.items()
               for cid in self.provider.custom_ids(key, waiters[0].request)}
        latest: dict[str, BatchEntry] = {}
        for entry in self._mine():
            for cid in self.ledger.custom_ids(entry):
                if cid in ids:
                    latest[ids[cid]] = entry
        by_entry: dict[str, list[str]] = {}
        for key, entry in latest.items():
            by_entry.setdefault(entry.tag, []).append(key)
        work = []
        for tag, keys in by_entry.items():
            entry = next(e for e in self.ledger.entries if e.tag == tag)
            if entry.state == "submitting":
                known = {e.id for e in self.ledger.entries if e.id}
                found = await self._api(self.provider.find, entry, known)
                if found is None:
                    self.ledger.update(entry, state="abandoned", notes=[*entry.notes, "never created (the run "
                                       "stopped before the provider answered): its requests were sent again"])
                    continue
                self.ledger.update(entry, id=found, state="submitted")
            assert entry.id is not None
            if entry.state == "ended":
                keys = self._answered(entry, keys, todo)
                if not keys:
                    continue
            self.adopted.append(entry.id)
            was = "ended" if entry.state == "ended" else "still running"
            self.notify(f"batch {entry.id} ({self.provider.name}, sent by an earlier session, {was}): "
                        f"{len(keys)} of its requests are wanted; taken up again, nothing is sent twice")
            work.append(_Work(entry, {key: todo.pop(key) for key in keys}, adopted=True))
        return work

    async def _recover(self, entry: BatchEntry) -> None:
        """A batch whose input file is missing: which requests it holds is known from its results only, so the run
        waits for it to end (and reads them) before anything is sent; one never created is abandoned."""
        if entry.state == "submitting":
            found = await self._api(self.provider.find, entry, {e.id for e in self.ledger.entries if e.id})
            if found is None:
                self.ledger.update(entry, state="abandoned", notes=[*entry.notes, "never created (the run stopped "
                                   "before the provider answered)"])
                return
            self.ledger.update(entry, id=found, state="submitted")
        if entry.state == "ended" and self.ledger.file(entry.output_name).exists():
            return
        self.notify(f"batch {entry.id} ({self.provider.name}, sent by an earlier session): its input file "
                    f"{self.ledger.file(entry.input_name)} is missing, so which requests it holds is known only from "
                    "its results: waiting for it to end before anything is sent (structbench batches "
                    f"{self.run_dir} --cancel cancels it)")
        await self._wait([entry])
        note = "its input file was missing: the requests it holds were read from its results"
        if note not in entry.notes:
            self.ledger.update(entry, notes=[*entry.notes, note])

    def _answered(self, entry: BatchEntry, keys: list[str], todo: Group) -> list[str]:
        """Of ``keys``, those the ended batch ``entry`` answered (or found too long for the model's context, which is
        final); the others are said, noted in the ledger and left to be sent again. Without its output file (removed),
        all: its results are read from the provider again."""
        if not self.ledger.file(entry.output_name).exists():
            return keys
        outcomes = self._outcomes(entry)
        answered: list[str] = []
        unanswered: list[str] = []
        for key in keys:
            result = self._result(outcomes, key, todo[key][0].request)
            final = isinstance(result, Response) or (isinstance(result, LineError) and result.cause == PROMPT_TOO_LONG)
            (answered if final else unanswered).append(key)
        if unanswered:
            why = entry.status or "ended"
            self.notify(f"batch {entry.id} ({self.provider.name}, sent by an earlier session, {why}) holds no answer "
                        f"to {len(unanswered)} of the requests wanted: they go into a new batch (the ledger keeps "
                        "both)")
            note = "its requests without an answer were sent again in a later batch"
            if note not in entry.notes:
                self.ledger.update(entry, notes=[*entry.notes, note])
        return answered

    def _outcomes(self, entry: BatchEntry) -> dict[str, Outcome]:
        """Each id's outcome in the output of the ended batch ``entry`` (an answer wins over an error)."""
        outcomes: dict[str, Outcome] = {}
        for line in self.ledger.read_lines(entry.output_name):
            if MALFORMED in line:
                continue
            cid, outcome = self.provider.line_outcome(line)
            if cid not in outcomes or isinstance(outcomes[cid], LineError):
                outcomes[cid] = outcome
        return outcomes

    def _result(self, outcomes: dict[str, Outcome], key: str, request: Request) -> Response | LineError | None:
        """The request's response from a batch's outcomes, its failure, or None when a line of it has no outcome."""
        parts = [outcomes.get(cid) for cid in self.provider.custom_ids(key, request)]
        if any(p is None for p in parts):
            return None
        error = next((p for p in parts if isinstance(p, LineError)), None)
        if error is not None:
            return error
        return self.provider.response(request, [p for p in parts if isinstance(p, dict)])

    def _chunks(self, fresh: dict[str, tuple[list[_Waiter], int]]) -> list[tuple[int, Group]]:
        """New batches: one per endpoint and round, split where the provider's limits (lines, bytes) require."""
        groups: dict[tuple[str, int], Group] = {}
        for key, (waiters, round_) in fresh.items():
            groups.setdefault((self.provider.endpoint(waiters[0].request), round_), {})[key] = waiters
        out: list[tuple[int, Group]] = []
        for (_, round_), group in groups.items():
            chunk: Group = {}
            lines = size = 0
            for key, waiters in group.items():
                mine = self.provider.lines(key, waiters[0].request)
                weight = sum(len(json.dumps(line, ensure_ascii=False).encode()) + 1 for line in mine)
                full = lines + len(mine) > self.provider.max_requests or size + weight > self.provider.max_bytes
                if chunk and full:
                    out.append((round_, chunk))
                    chunk, lines, size = {}, 0, 0
                chunk[key] = waiters
                lines, size = lines + len(mine), size + weight
            if chunk:
                out.append((round_, chunk))
        return out

    async def _submit(self, group: Group, round_: int) -> BatchEntry:
        """Write the batch's input file and ledger entry, create it, write its id: all before the first poll."""
        lines = [line for key, waiters in group.items() for line in self.provider.lines(key, waiters[0].request)]
        endpoint = self.provider.endpoint(next(iter(group.values()))[0].request)
        entry = self.ledger.new(provider=self.provider.name, model=self.label, base_url=self.inner.base_url,
                                endpoint=endpoint, requests=len(lines), step=self.step, round=round_, lines=lines)
        path = self.ledger.file(entry.input_name)
        batch_id: str | None = None
        for attempt in range(API_TRIES):
            try:
                batch_id = await self.provider.submit(entry, lines, path)
                break
            except Exception as err:  # a creation that failed may still have happened: look before sending again
                known = {e.id for e in self.ledger.entries if e.id}
                try:
                    batch_id = await self.provider.find(entry, known)
                except Exception:
                    batch_id = None
                if batch_id is not None:
                    break
                if attempt == API_TRIES - 1 or _refused(err):
                    self.ledger.update(entry, state="abandoned", notes=[*entry.notes, redact(f"not created: {err}")])
                    raise RunStoppedError(redact(
                        f"the batch API of {self.label} did not take the batch: {type(err).__name__}: {err}")) from None
                await asyncio.sleep(2**attempt)
        assert batch_id is not None
        self.ledger.update(entry, id=batch_id, state="submitted")
        self.submitted.append(batch_id)
        again = f", sending again {len(group)} failed request(s)" if round_ else ""
        self.notify(f"batch {batch_id} submitted ({self.provider.name}, step {self.step}{again}): {len(lines)} "
                    f"requests; kept in {self.ledger.path}: if this run stops, the same command polls it again "
                    f"(structbench batches {self.run_dir} --cancel cancels it)")
        return entry

    async def _wait(self, entries: list[BatchEntry]) -> None:
        """Poll the running batches (after 1, 2, 4 ... up to ``poll`` seconds) until each ended, with a progress line
        when a count changes; read each one's results as it ends."""
        running = [e for e in entries if e.state != "ended" or not self.ledger.file(e.output_name).exists()]
        delay, started = min(1.0, self.settings.poll), time.monotonic()
        while running:
            await asyncio.sleep(delay)
            delay = min(delay * 2, self.settings.poll)
            for entry in list(running):
                assert entry.id is not None
                try:
                    status: Status = await self._api(self.provider.status, entry.id, lost_ok=True)
                except _Lost as lost:
                    running.remove(entry)
                    self._lose(entry, lost.error)
                    continue
                counts = {"total": status.total, "completed": status.completed, "failed": status.failed}
                if counts != entry.counts or status.word != entry.status:
                    waited = time.monotonic() - started
                    self.notify(f"batch {entry.id}: {status.word}, {status.completed}/{status.total} done"
                                + (f", {status.failed} failed" if status.failed else "") + f" ({waited:.0f} s)")
                    self.ledger.update(entry, counts=counts, status=status.word)
                if not status.done:
                    self._seen_running.add(entry.tag)
                    continue
                running.remove(entry)
                notes = entry.notes
                if status.problem and status.problem not in notes:
                    notes = [*notes, status.problem]
                    self.notify(f"warning: batch {entry.id}: {status.problem}; the answers it holds are kept"
                                + ("" if status.word == "failed" else ", the rest are sent again"))
                try:
                    lines = await self._api(self.provider.results, entry.id, lost_ok=True)
                except _Lost as lost:
                    self._lose(entry, lost.error)
                    continue
                self.ledger.write_lines(entry.output_name, lines)
                self.ledger.update(entry, state="ended", ended=time.time(), notes=notes)

    def _odd_lines(self, entry: BatchEntry) -> tuple[int, list[str]]:
        """Of an ended batch's results: the lines that were not JSON objects, and the ids of a second answer that
        differs from the first (the first is used)."""
        malformed = 0
        first: dict[str, Outcome] = {}
        conflicting: list[str] = []
        for line in self.ledger.read_lines(entry.output_name):
            if MALFORMED in line:
                malformed += 1
                continue
            cid, outcome = self.provider.line_outcome(line)
            if not isinstance(outcome, dict):
                continue
            if cid not in first:
                first[cid] = outcome
            elif outcome != first[cid] and cid not in conflicting:
                conflicting.append(cid)
        return malformed, conflicting

    def _settle(self, entry: BatchEntry, group: Group) -> Group:
        """Hand out the answers of an ended batch; returns the calls to send again (retryable failures)."""
        outcomes = self._outcomes(entry)
        sent = set(self.ledger.custom_ids(entry))
        foreign = [cid for cid in outcomes if cid not in sent]
        retry: Group = {}
        missing = 0
        stop: StructbenchError | None = None
        cancelled = entry.status == "cancelled"
        if cancelled and (entry.id in self.submitted or entry.tag in self._seen_running):  # while this run waited
            stop = RunStoppedError(f"batch {entry.id} was cancelled; the answers it holds are kept (the same command "
                                   "sends the rest again)")
        whole = entry.notes[-1] if entry.status == "failed" and entry.notes else None
        for key, waiters in group.items():
            found = self._result(outcomes, key, waiters[0].request)
            result: Response | LineError
            if found is None and whole is not None:
                result = LineError(f"the batch failed: {whole}", retryable=False, cause="batch failed")
            elif found is None and cancelled:  # cancelled before this session: the rest is sent again now
                result = LineError(f"batch {entry.id} was cancelled before it ran this request", retryable=True,
                                   cause="batch cancelled")
            elif found is None:
                missing += 1
                result = LineError(f"missing from the results of batch {entry.id}", retryable=True,
                                   cause="missing from the batch")
            else:
                result = found
            if isinstance(result, Response):
                _answer(waiters, result)
            elif stop is not None:
                _fail(waiters, stop)
            elif result.retryable:
                self._errors[key] = result.message
                retry[key] = waiters
            else:
                _fail(waiters, BackendError(f"{self.label}: batch {entry.id}: {result.message}", cause=result.cause))
        notes = list(entry.notes)
        if missing:
            notes.append(f"{missing} request(s) missing from its results (sent again)")
            self.notify(f"warning: batch {entry.id}: {missing} request(s) have no line in its output or error file; "
                        "they are sent again in a new batch")
        malformed, conflicting = self._odd_lines(entry)
        if malformed:
            notes.append(f"{malformed} result line(s) not JSON objects (skipped)")
            self.notify(f"warning: batch {entry.id}: {malformed} line(s) of its results are not JSON objects; "
                        "skipped (a request without an answer is sent again)")
        if conflicting:
            notes.append(f"{len(conflicting)} id(s) answered twice, differently (the first answer kept)")
            self.notify(f"warning: batch {entry.id}: {len(conflicting)} id(s) have a second result line that differs "
                        f"from the first (e.g. {conflicting[0][:70]!r}); the first answer is kept")
        if foreign:
            notes.append(f"{len(foreign)} result line(s) with ids it was never sent (ignored)")
            self.notify(f"warning: batch {entry.id}: {len(foreign)} line(s) of its results have ids this run never "
                        f"sent (e.g. {foreign[0][:70]!r}); ignored: the answers of the requests sent are kept")
        if notes != entry.notes:
            self.ledger.update(entry, notes=notes)
        return retry

    def _lose(self, entry: BatchEntry, error: BaseException) -> None:
        """The provider does not know ``entry`` (404): abandoned in the ledger, with a note and one line said."""
        self.ledger.update(entry, state="abandoned", notes=[*entry.notes, redact(
            f"{LOST}: {type(error).__name__}: {str(error)[:200]}; its requests were sent again")])
        self.notify(f"warning: batch {entry.id} ({self.provider.name}): {LOST}; marked abandoned in "
                    f"{self.ledger.path}, its requests are sent again in a new batch")

    async def _api(self, call: Callable[..., Awaitable[T]], *args: Any, lost_ok: bool = False) -> T:
        """A call to the batch API, tried again on failure (1, 2, 4 ... s); a failure that persists stops the run
        (the batches are kept in the ledger). With ``lost_ok`` (a call about one batch), a 404 raises ``_Lost``."""
        for attempt in range(API_TRIES):
            try:
                return await call(*args)
            except asyncio.CancelledError:
                raise
            except Exception as err:
                if lost_ok and not_found(err):
                    raise _Lost(err) from None
                if attempt == API_TRIES - 1 or _refused(err):
                    raise RunStoppedError(redact(
                        f"the batch API of {self.label} failed: {type(err).__name__}: {err}; the batches are kept in "
                        f"{self.ledger.path}: the same command takes them up again")) from None
                await asyncio.sleep(2**attempt)
        raise AssertionError("unreachable")


LOST = ("the provider does not know it (404 Not Found: another API key or organization than the one that sent it, or "
        "the provider lost it)")


class _Lost(Exception):
    """The batch API answered that it does not know the batch asked about."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(str(error))
        self.error = error


def not_found(err: BaseException) -> bool:
    """Whether the API answered 404 Not Found (for a call about one batch: it does not know that batch)."""
    return getattr(err, "status_code", None) == 404


def _refused(err: BaseException) -> bool:
    """Whether the API refused the call for good (a 4xx other than 408, 409 and 429): trying again is useless."""
    status = getattr(err, "status_code", None)
    return isinstance(status, int) and 400 <= status < 500 and status not in (408, 409, 429)


def _answer(waiters: list[_Waiter], response: Response) -> None:
    for w in waiters:
        w.hold.release()
        if not w.future.done():
            w.future.set_result(response)


def _fail(waiters: list[_Waiter], error: BaseException) -> None:
    for w in waiters:
        w.hold.release()
        if not w.future.done():
            w.future.set_exception(error)


def _fail_all(group: Group, error: BaseException) -> None:
    for waiters in group.values():
        _fail(waiters, error)
