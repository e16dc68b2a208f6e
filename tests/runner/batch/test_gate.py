"""The step gate: a batch goes out only when every sample of the run waits for the model."""

from __future__ import annotations

import asyncio

from structbench.runner.batch.gate import StepGate


def test_ready_only_once_every_started_and_expected_sample_waits() -> None:
    async def main() -> None:
        gate = StepGate()
        gate.expect(2)
        first_waits, second_reads, release = asyncio.Event(), asyncio.Event(), asyncio.Event()

        async def first() -> None:
            with gate.job(), gate.call():
                hold = gate.hold()
                first_waits.set()
                await release.wait()
                hold.release()

        async def second() -> None:
            await first_waits.wait()
            with gate.job(), gate.call():
                second_reads.set()  # a cache lookup: in a call, not waiting
                await asyncio.sleep(0.05)
                hold = gate.hold()
                await release.wait()
                hold.release()

        tasks = [asyncio.create_task(first()), asyncio.create_task(second())]
        await first_waits.wait()
        assert not gate.ready  # the second sample has not started: it may still add to the batch
        await second_reads.wait()
        assert not gate.ready  # it is reading the cache
        await asyncio.wait_for(gate.wait_ready(), 5)
        assert (gate.alive, gate.stalled) == (2, 2)
        release.set()
        await asyncio.gather(*tasks)
        assert (gate.alive, gate.stalled) == (0, 0) and not gate.ready

    asyncio.run(main())


def test_an_answered_sample_is_not_stalled_before_it_resumes() -> None:
    gate = StepGate()

    async def main() -> None:
        gate.expect(1)
        with gate.job(), gate.call():
            hold = gate.hold()
            assert gate.ready
            hold.release()  # the collector handed out the answer: the sample is about to move on
            assert not gate.ready
            hold.release()  # released once only
            assert (gate.stalled, gate.alive) == (0, 1)

    asyncio.run(main())


def test_a_sample_with_two_calls_in_flight_is_stalled_only_when_both_wait() -> None:
    gate = StepGate()

    async def main() -> None:
        gate.expect(1)
        with gate.job(), gate.call():
            hold = gate.hold()
            with gate.call():
                assert not gate.ready  # its second call is still looking in the cache
                with gate.waiting():  # joined an identical call in flight
                    assert gate.ready
            hold.release()

    asyncio.run(main())
