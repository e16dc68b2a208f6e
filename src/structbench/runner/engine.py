"""Schedules (sample x strategy) jobs on one model with asyncio and turns attempts into records."""

from __future__ import annotations

import asyncio
import contextlib
import time
import traceback
from collections.abc import Callable, Iterable, Sized
from dataclasses import dataclass

from structbench.backends.base import BackendError
from structbench.backends.usage import split_usage
from structbench.contract.benchmark import Attempt, Benchmark, Scored, Strategy, bind_sample
from structbench.core.errors import BudgetError, MachineError, RunStoppedError, StorageError
from structbench.core.trusted import trusted
from structbench.data.sample import Sample
from structbench.runfiles.records import UNSCORED_KINDS, ErrorKind, SampleRecord
from structbench.runner.calls import CallLog, ModelCaller, call_usage_log, current_epoch
from structbench.runner.pipeline import run_pipeline
from structbench.runner.settings import RequestSettings
from structbench.runner.thoughts import thought_of


@dataclass(frozen=True)
class Job:
    """One sample under one strategy of one benchmark variant."""

    bench: Benchmark
    variant: str
    strategy: Strategy
    sample: Sample
    epoch: int = 0
    """Which repeat of the sample (``--epochs``): its own request seed, cache entry and record."""
    cell: str = ""
    """The sweep's cell (``runner.sweep``), recorded with the outcome."""


def harness_error(err: BaseException, what: str) -> str:
    """A harness error's message: what failed, the exception, and where (a short traceback)."""
    return f"{what} failed: {type(err).__name__}: {err}\n{traceback.format_exc(limit=-6)}"


@dataclass
class Outcome:
    """What a job's strategy produced, before scoring: the attempt, or why it failed, and its calls."""

    attempt: Attempt
    log: CallLog
    started: float
    error: str | None = None
    kind: ErrorKind | None = None


async def attempt_job(job: Job, caller: ModelCaller, settings: RequestSettings | None = None) -> Outcome:
    """Run the strategy: the part of a job that waits for the model.

    A model call that failed for good is a ``model`` error (``context`` when the prompt does not fit the model's
    context); any other exception in the strategy is a
    ``harness`` error (a bug), a ``CancelledError`` too unless this task is being cancelled. A ``StorageError``
    (the cache failed) or a ``MachineError`` (this machine cannot run the strategy: a sandbox that cannot start its
    programs) is raised: not this sample's fault."""
    log = CallLog(caller, settings, epoch=job.epoch)
    bind_sample(job.bench, job.sample)
    current_epoch.set(job.epoch)
    call_usage_log.set(log.usage)
    started = time.perf_counter()
    try:
        with caller.gate.job() if caller.gate is not None else contextlib.nullcontext():
            return Outcome(await job.strategy.run(job.sample, log), log, started)
    except BackendError as err:
        return Outcome(Attempt(output=""), log, started, str(err), "context" if err.prompt_too_long else "model")
    except (StorageError, BudgetError, RunStoppedError, MachineError):  # the cache failed, the budget is spent, a
        raise  # batch stopped, the machine cannot run the strategy: not this sample's fault; the run stops, and the
        # sample is tried again
    except asyncio.CancelledError as err:
        task = asyncio.current_task()
        if task is None or task.cancelling():
            raise  # the run is stopping: the sample is left for a resume
        # raised by the strategy or a library with nobody cancelling: a bug, which must not end the slot silently
        # (in a worker, the driver would wait for the job for ever)
        return Outcome(Attempt(output=""), log, started, harness_error(err, f"strategy {job.strategy.name!r}"),
                       "harness")
    except Exception as err:  # a bug must not lose the rest of the run; it is recorded and counted
        return Outcome(Attempt(output=""), log, started, harness_error(err, f"strategy {job.strategy.name!r}"),
                       "harness")


def finish_job(job: Job, outcome: Outcome, model: str) -> SampleRecord:
    """Parse and score an attempt into the job's record: CPU work only, no model call.

    A sample whose model call failed is scored as wrong; a scorer that raises is a ``harness`` error (a
    ``MachineError`` is raised, as from ``attempt_job``) and the sample is recorded unscored, left out of the
    metrics, as is one whose prompt does not fit the model. The record keeps the thought behind the output apart
    from it; a sample whose replies all ended inside their thoughts has an empty output (no parser ever reads a
    thought), is scored as the benchmark scores a reply without an answer, and is marked ``reasoning_cut_off``."""
    attempt, error, kind, log = outcome.attempt, outcome.error, outcome.kind, outcome.log
    if attempt.turn_limit and kind is None:
        turns = (attempt.artifacts.get("tools") or {}).get("turns", log.calls)
        error, kind = f"no final answer within {turns} turns: the model was still calling tools (--max-turns)", "turns"
    thought = thought_of(attempt, log.replies)
    made, reused = split_usage(log.usage)
    scored: Scored | None = None
    if kind not in UNSCORED_KINDS:
        try:
            scored = job.bench.outcome(job.sample, attempt, job.strategy, epoch=job.epoch)
        except MachineError:  # a scorer that needs what this machine cannot run: the run stops, as in the strategy
            raise
        except Exception as err:
            after = f" (after a model error: {error})" if error else ""
            error, kind = harness_error(err, f"scoring{after}"), "harness"
    return trusted(SampleRecord, dict(
        benchmark=job.bench.name,
        variant=job.variant,
        strategy=job.strategy.name,
        model=model,
        id=job.sample.id,
        task=job.sample.task,
        prompt=log.first.prompt_payload() if log.first is not None else None,
        output=attempt.output,
        outputs=attempt.outputs or None,
        parsed=scored.parsed if scored else None,
        gold=scored.gold if scored else None,
        score=scored.score if scored else 0.0,
        values=scored.values if scored else {},
        meta=scored.meta if scored else dict(job.sample.meta),
        cluster=scored.cluster if scored else None,  # an unscored record takes no part in intervals
        epoch=job.epoch,
        cell=job.cell,
        confidence=attempt.confidence,
        artifacts=attempt.artifacts,
        reasoning=thought.reasoning,
        reasoning_tokens=thought.tokens,
        reasoning_cut_off=thought.cut_off and kind is None,
        replies_cut_off=thought.replies_cut_off,
        replies_unclosed=log.unclosed,
        turn_limit=kind is None and _scored_at_turn_limit(attempt),
        error=error,
        error_kind=kind,
        calls=log.calls,
        cached_calls=log.cached,
        seconds=round(time.perf_counter() - outcome.started, 4),
        usage=made,
        reused_usage=reused,
        call_usage=list(log.usage),
    ))


def _scored_at_turn_limit(attempt: Attempt) -> bool:
    """A tool loop that stopped at its turn limit and is scored (an empty output: ``--turn-limit wrong``)."""
    if attempt.turn_limit:
        return False  # counted apart
    tools = attempt.artifacts.get("tools")
    return isinstance(tools, dict) and tools.get("turn_limit") is True


async def run_job(job: Job, caller: ModelCaller, model: str, settings: RequestSettings | None = None) -> SampleRecord:
    """Run the strategy, parse and score (``attempt_job`` then ``finish_job``).

    Either kind of failure is recorded and the rest of the run goes on; resuming retries failed samples."""
    return finish_job(job, await attempt_job(job, caller, settings), model)


async def run_jobs(
    jobs: Iterable[Job],
    caller: ModelCaller,
    model: str,
    concurrency: int,
    on_record: Callable[[SampleRecord], None],
    settings: RequestSettings | None = None,
) -> None:
    """Run ``jobs`` (read as slots free up: a stream of them is never held) with at most ``concurrency`` in flight,
    handing each record to ``on_record``.

    A job's strategy runs in one of ``concurrency`` slots (``runner.pipeline``); its scoring and record wait
    for a finisher task that takes one finished attempt per turn of the event loop, so a slot sends its next
    request before the CPU work of the last one. Slots take no new job once the caller's ``RunControl`` says
    stop; a record that cannot be stored (``StorageError`` from ``on_record``), or a machine that cannot run a
    strategy (``MachineError``), stops the run the same way. Raises why the run stopped."""
    control = caller.control
    source = iter(jobs)

    async def next_job() -> Job | None:
        return next(source, None)

    async def attempt(job: Job) -> tuple[Job, Outcome]:
        return job, await attempt_job(job, caller, settings)

    def finish(attempted: tuple[Job, Outcome]) -> None:
        on_record(finish_job(*attempted, model))

    slots = min(concurrency, len(jobs)) if isinstance(jobs, Sized) else concurrency
    await run_pipeline(max(1, slots), next_job, attempt, finish, control,
                       halt_on=(StorageError, BudgetError, MachineError))
    error = control.final_error()
    if error is not None:
        raise error
