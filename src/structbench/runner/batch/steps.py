"""Every sample of a run at once, so that each step's calls go out together in one batch (``--batch``)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

from structbench.core.errors import BudgetError, RunStoppedError, StorageError
from structbench.runfiles.records import SampleRecord
from structbench.runner.batch.gate import StepGate
from structbench.runner.calls import ModelCaller
from structbench.runner.engine import Job, attempt_job, finish_job
from structbench.runner.settings import RequestSettings


async def run_steps(
    jobs: Sequence[Job],
    caller: ModelCaller,
    model: str,
    on_record: Callable[[SampleRecord], None],
    settings: RequestSettings | None,
    gate: StepGate,
) -> None:
    """Run ``jobs`` all at once, each sample's calls waiting for its step's batch (``caller.gate`` is ``gate``), and
    hand each record to ``on_record``. A budget reached stops new calls, the samples that need none finish; a
    storage failure or a stopped batch ends the run at once (the batches go on at the provider and are taken up
    again by the next run). Raises why the run stopped."""
    control = caller.control
    caller.gate = gate
    gate.expect(len(jobs))

    async def one(job: Job) -> None:
        try:
            outcome = await attempt_job(job, caller, settings)
            record = finish_job(job, outcome, model)
        except BudgetError as err:
            control.halt(err, cancel=False)
            return
        except (StorageError, RunStoppedError) as err:
            control.halt(err, cancel=True)
            return
        try:
            on_record(record)
        except StorageError as err:
            control.halt(err, cancel=True)

    tasks = [asyncio.create_task(one(job)) for job in jobs]
    control.watch(tasks)
    try:
        results = await asyncio.gather(*tasks, return_exceptions=True)
    finally:
        gate.cancel_expected()
        for task in tasks:
            task.cancel()
    for result in results:
        if isinstance(result, BaseException) and not isinstance(result, asyncio.CancelledError):
            raise result
    error = control.final_error()
    if error is not None:
        raise error
