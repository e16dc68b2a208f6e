"""Whether a run goes on: the circuit breaker, response-cache failures, and the stop workers check between jobs.

A run stops early in two ways. When ``max_consecutive_failures`` model calls in a row fail with the same
cause (server down, a bad key, an unknown model, every reply unusable), the breaker stops it at once
(``RunStoppedError``, exit 4): the calls in flight are cancelled, their samples are left for the next run.
Timeouts stop it sooner, after ``MAX_CONSECUTIVE_TIMEOUTS`` calls in a row (each tried twice): then the
server is slower than ``--timeout`` allows for these replies, and waiting longer only wastes its time; the
message says which settings help. A call that reached no server (``CANNOT_CONNECT``) before any call was answered
stops it at once: nothing is listening there (a wrong port, a server not started yet), and every sample would be
scored as wrong.
When the response cache cannot be written, the run by default stops taking new samples, lets the ones in
flight finish, keeps every answer the cache refused in a ``Spill`` file, and then fails with a
``StorageError`` (exit 5); with ``on_cache_error="continue"`` it goes on without the cache instead.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Iterable
from typing import Literal

from structbench.backends.base import CANNOT_CONNECT, TIMEOUT, BackendError, Response
from structbench.backends.usage import CallUsage
from structbench.core.errors import BudgetError, RunStoppedError, StorageError, StructbenchError
from structbench.runner.budget import Budget
from structbench.runner.cache import CacheReadError, Spill
from structbench.runner.spending import Paid

CacheErrorPolicy = Literal["stop", "continue"]
MAX_CONSECUTIVE_FAILURES = 10
"""Default breaker threshold: enough that a flaky server never trips it, few enough to stop within a wave."""
MAX_CONSECUTIVE_TIMEOUTS = 3
"""Calls in a row that timed out (each after a second try) that stop a run, when the threshold above is higher.
The backend's message says which settings help (``--max-tokens``, ``--timeout``, ``--concurrency``)."""


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def unreachable(err: BackendError) -> RunStoppedError:
    """The run's end when no server answers where the model should be (``CANNOT_CONNECT`` before any reply)."""
    return RunStoppedError(
        f"stopped at once: nothing answers there ({err}); no model call has been answered, so nothing was scored. "
        "Is the server running, and are --base-url's host and port right? The same command continues the run once "
        "it answers")


class RunControl:
    """Shared by every model caller and worker of one run session."""

    def __init__(
        self,
        max_consecutive_failures: int = MAX_CONSECUTIVE_FAILURES,
        on_cache_error: CacheErrorPolicy = "stop",
        spill: Spill | None = None,
        notify: Callable[[str], None] = _stderr,
        on_halt: Callable[[StructbenchError, bool], None] | None = None,
        budget: Budget | None = None,
    ) -> None:
        self.budget = budget if budget is not None else Budget()
        """What the run may spend, and what it spent (``runner.budget``)."""
        self.max_consecutive_failures = max_consecutive_failures
        """0 turns the breaker off."""
        self.on_cache_error = on_cache_error
        self.spill = spill
        self.notify = notify
        self.on_halt = on_halt
        """Told the first reason the run stops and whether jobs in flight are abandoned (a worker process
        passes it on to the run's other workers)."""
        self.cache_usable = True
        """False once the cache failed: later calls neither read nor write it."""
        self.cache_error: StorageError | None = None
        self.stop_error: StructbenchError | None = None
        self._cause: str | None = None
        self._streak = 0
        self.answered = False
        """Whether any model call of this session has been answered (a prompt refused as too long counts)."""
        self._workers: list[asyncio.Task[None]] = []

    @property
    def stopped(self) -> bool:
        """True once the run must take no new job."""
        return self.stop_error is not None

    def watch(self, workers: Iterable[asyncio.Task[None]]) -> None:
        """The worker tasks a breaker trip cancels."""
        self._workers = list(workers)

    def halt(self, error: StructbenchError, *, cancel: bool) -> None:
        """Stop taking jobs (the first reason wins); with ``cancel``, also abandon the jobs in flight."""
        if self.stop_error is None:
            self.stop_error = error
            if self.on_halt is not None:
                self.on_halt(error, cancel)
        if cancel:
            current = asyncio.current_task()
            for task in self._workers:
                if task is not current:
                    task.cancel()

    # -- the circuit breaker -------------------------------------------------------------------------

    def call_succeeded(self) -> None:
        self._cause, self._streak = None, 0
        self.answered = True

    def call_failed(self, model: str, err: BackendError) -> None:
        """Count a model call that failed for good; trip the breaker on a long enough streak of one cause, or at
        once when no server is there (``CANNOT_CONNECT`` before any call was answered)."""
        if err.cause == CANNOT_CONNECT and not self.answered and self.max_consecutive_failures:
            if not self.stopped:
                self.halt(unreachable(err), cancel=True)
            return
        cause = f"{model}: {err.cause}"
        self._streak = self._streak + 1 if cause == self._cause else 1
        self._cause = cause
        limit = self.max_consecutive_failures
        if err.cause == TIMEOUT and limit:
            limit = min(limit, MAX_CONSECUTIVE_TIMEOUTS)
        if limit and self._streak >= limit and not self.stopped:
            if err.cause == TIMEOUT:
                message = (f"stopped early: the last {self._streak} model calls timed out (each tried up to twice): "
                           f"the server is slower than --timeout allows for these replies; the last one: {err}. "
                           "Finished samples are kept: the same command continues the run (--timeout and "
                           "--concurrency may change; another --max-tokens is another run)")
            else:
                message = (f"stopped early: the last {self._streak} model calls all failed ({err.cause}); the last "
                           f"one: {err}. Fix the cause and run the same command to continue (finished samples are "
                           "kept)")
            self.halt(RunStoppedError(message), cancel=True)

    # -- the budget -----------------------------------------------------------------------------------

    def before_call(self) -> None:
        """Raise ``BudgetError`` instead of sending a call once the budget is reached (the run stops)."""
        reason = self.budget.reached()
        if reason is not None:
            error = self.budget.error(reason)
            self.halt(error, cancel=False)
            raise error

    def spend(self, call: CallUsage, key: str | None = None) -> Paid | None:
        """Count a call the model answered (``key``: its answer's in the response cache); a budget that cannot be kept,
        or a spending that cannot be recorded, stops the run (the call's answer is still kept). Returns what the cache
        stores with the answer (``runner.spending.Paid``)."""
        try:
            problem, paid = self.budget.add(call, key)
        except StorageError as err:
            self.halt(err, cancel=False)
            return None
        if problem is not None:
            self.halt(BudgetError(f"stopped: {problem}; finished samples and every answer received are kept"),
                      cancel=False)
            return paid
        reason = self.budget.reached()
        if reason is not None:  # no new sample starts; those in flight finish if they need no further call
            self.halt(self.budget.error(reason), cancel=False)
        return paid

    # -- response-cache failures ---------------------------------------------------------------------

    def cache_failed(self, err: StorageError) -> None:
        """The cache failed: stop using it, and either stop the run (default) or go on without it."""
        if not self.cache_usable:
            return
        self.cache_usable = False
        if self.on_cache_error == "continue":
            self.notify(f"warning: {err}; going on without the response cache (--on-cache-error continue)")
            return
        self.cache_error = err
        self.halt(err, cancel=False)
        if isinstance(err, CacheReadError):
            raise err

    def keep_unstored(self, key: str, model: str, request_fields: bytes, response: Response) -> None:
        """An answer the cache did not take: kept in the spill file unless the user chose to go on without (after its
        call's line is synced: the next session adds a spilled answer to the cache as one no session paid for)."""
        if self.on_cache_error == "stop" and self.spill is not None:
            if self.budget.log is not None:
                try:
                    self.budget.log.sync()
                except StorageError as err:
                    self.halt(err, cancel=False)
            self.spill.keep(key, model, request_fields, response)

    def final_error(self) -> StructbenchError | None:
        """Why the run stopped, with what was kept where (None when it was not stopped)."""
        if self.cache_error is None or self.stop_error is not self.cache_error:
            return self.stop_error
        kept = ""
        if self.spill is not None and (self.spill.kept or self.spill.lost):
            kept = f"; {self.spill.kept} answer(s) it refused are kept in {self.spill.path} (the next run adds them to "
            kept += "the cache)"
            if self.spill.lost:
                kept += f", {self.spill.lost} could not be written anywhere"
        return StorageError(
            f"{self.cache_error}; the run stopped after finishing the samples in flight{kept}. Free space or fix "
            "the permissions and run the same command, or pass --on-cache-error continue to run without the cache"
        )
