"""The slots-and-finisher scheduler that single-process runs and forked workers share."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable
from itertools import pairwise

import pytest

from structbench.core.errors import RunStoppedError, StorageError
from structbench.runner.control import RunControl
from structbench.runner.pipeline import run_pipeline


def _control() -> RunControl:
    return RunControl(notify=lambda text: None)


def _jobs(*jobs: int) -> Callable[[], Awaitable[int | None]]:
    queue = deque(jobs)

    async def next_job() -> int | None:
        return queue.popleft() if queue else None

    return next_job


def test_a_slot_sends_its_next_request_before_the_last_ones_scoring() -> None:
    log: list[str] = []

    async def attempt(job: int) -> int:
        log.append(f"start {job}")
        await asyncio.sleep(0)
        log.append(f"end {job}")
        return job

    asyncio.run(run_pipeline(1, _jobs(1, 2, 3), attempt, lambda job: log.append(f"finish {job}"), _control()))
    assert log == ["start 1", "end 1", "start 2", "finish 1", "end 2", "start 3", "finish 2", "end 3", "finish 3"]


def test_the_finisher_takes_one_attempt_per_turn_of_the_event_loop() -> None:
    turns = 0
    at: list[int] = []

    async def main() -> None:
        go = asyncio.Event()

        async def ticker() -> None:
            nonlocal turns
            while True:
                turns += 1
                await asyncio.sleep(0)

        async def attempt(job: int) -> int:
            await go.wait()  # every slot's attempt finishes in the same turn
            return job

        def finish(job: int) -> None:
            at.append(turns)

        ticking = asyncio.create_task(ticker())
        asyncio.get_running_loop().call_later(0.01, go.set)
        await run_pipeline(5, _jobs(*range(5)), attempt, finish, _control())
        ticking.cancel()

    asyncio.run(main())
    assert len(at) == 5
    assert all(b > a for a, b in pairwise(at)), at  # the loop turned between two records


def test_a_storage_error_from_finish_halts_the_run_when_asked() -> None:
    control = _control()
    finished: list[int] = []
    broken = StorageError("samples.jsonl: disk full")

    async def attempt(job: int) -> int:
        await asyncio.sleep(0.001 * job)
        return job

    def finish(job: int) -> None:
        if job == 1:
            raise broken
        finished.append(job)

    asyncio.run(run_pipeline(2, _jobs(*range(10)), attempt, finish, control, halt_on=(StorageError,)))
    assert control.stop_error is broken  # halted, not raised
    assert finished and max(finished) < 9  # no new job after the halt; the ones in flight finished
    assert finished == sorted(finished)

    control = _control()
    with pytest.raises(StorageError, match="disk full"):  # without halt_on (a worker), the error is raised
        asyncio.run(run_pipeline(2, _jobs(*range(10)), attempt, finish, control))
    assert control.stop_error is None


def test_a_storage_error_from_an_attempt_halts_or_fails() -> None:
    broken = StorageError("cache: read-only")

    async def attempt(job: int) -> int:
        await asyncio.sleep(0)
        if job == 2:
            raise broken
        return job

    control, finished = _control(), list[int]()
    asyncio.run(run_pipeline(2, _jobs(*range(10)), attempt, finished.append, control, halt_on=(StorageError,)))
    assert control.stop_error is broken
    assert 2 not in finished and set(finished) <= {0, 1, 3} and {0, 1} <= set(finished)

    control, finished = _control(), []
    with pytest.raises(StorageError, match="read-only"):
        asyncio.run(run_pipeline(2, _jobs(*range(10)), attempt, finished.append, control))
    assert control.stop_error is None


def test_the_breaker_cancels_the_slots_and_the_run_ends_without_them() -> None:
    control = _control()
    finished: list[int] = []

    async def attempt(job: int) -> int:
        if job == 0:  # its call trips the breaker: the other slots' jobs are abandoned, this one is recorded
            await asyncio.sleep(0)
            control.halt(RunStoppedError("stopped early"), cancel=True)
            return job
        await asyncio.sleep(10)
        return job

    async def main() -> None:
        await asyncio.wait_for(run_pipeline(3, _jobs(*range(10)), attempt, finished.append, control), 5)

    asyncio.run(main())  # no error: why the run stopped is the control's to say
    assert finished == [0]
    assert isinstance(control.stop_error, RunStoppedError)


def test_a_slot_cancelled_from_outside_the_control_is_passed_on() -> None:
    async def main() -> None:
        started: list[asyncio.Task[object] | None] = []

        async def attempt(job: int) -> int:
            started.append(asyncio.current_task())
            if job == 0:
                await asyncio.sleep(1)
            return job

        def cancel_the_first() -> None:
            task = started[0]
            assert task is not None
            task.cancel()

        asyncio.get_running_loop().call_later(0.01, cancel_the_first)
        await run_pipeline(2, _jobs(*range(4)), attempt, lambda job: None, _control())

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(main())


def test_an_unexpected_error_in_a_slot_is_raised_at_once() -> None:
    finished: list[int] = []

    async def attempt(job: int) -> int:
        if job == 1:
            raise ValueError("a bug")
        await asyncio.sleep(10)  # another slot's long request: not waited for
        return job

    async def main() -> None:
        await asyncio.wait_for(run_pipeline(2, _jobs(0, 1), attempt, finished.append, _control()), 5)

    with pytest.raises(ValueError, match="a bug"):
        asyncio.run(main())
    assert finished == []
