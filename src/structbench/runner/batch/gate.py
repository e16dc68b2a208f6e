"""When every sample of a run waits for the model: the moment a batch of their calls goes out.

Under ``--batch`` every sample's strategy runs at once; each call it makes joins the pending batch instead of being
sent. The gate counts, per sample, the run model's calls in progress and those of them waiting for an answer
(joined to the pending batch, or to an identical call another sample made). A sample is *stalled* when it has a call
in progress and all of them wait; when every sample not yet finished is stalled (and every sample expected has
started), nothing more can join the batch until answers come back: the batch is complete, and goes out. A sample
that is reading the cache, parsing, or waiting for another model (a judge, which is called directly) is not
stalled, so the batch waits for it: one batch per step of a multi-step strategy.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar


class _Sample:
    """One sample's calls in progress and waiting."""

    __slots__ = ("calls", "waiting")

    def __init__(self) -> None:
        self.calls = 0
        self.waiting = 0

    @property
    def stalled(self) -> bool:
        return self.calls > 0 and self.calls == self.waiting


_current: ContextVar[_Sample | None] = ContextVar("batch_sample", default=None)


class StepGate:
    """Counts the samples of a run and those stalled on the model (kept up to date in O(1) per change)."""

    def __init__(self) -> None:
        self.expected = 0
        """Samples scheduled that have not started yet."""
        self.alive = 0
        self.stalled = 0
        self._event: asyncio.Event | None = None

    def expect(self, count: int) -> None:
        """``count`` more samples will start (the batch waits for them)."""
        self.expected += count
        self._check()

    def cancel_expected(self) -> None:
        """The samples that have not started never will (the run is stopping)."""
        self.expected = 0
        self._check()

    @property
    def ready(self) -> bool:
        """Whether every sample is stalled: the pending calls are all the calls this step will make."""
        return self.expected == 0 and self.alive > 0 and self.stalled == self.alive

    async def wait_ready(self) -> None:
        """Return once ``ready``."""
        while not self.ready:
            self._event = asyncio.Event()
            await self._event.wait()

    def _check(self) -> None:
        if self._event is not None and self.ready:
            self._event.set()

    @contextmanager
    def job(self) -> Iterator[None]:
        """Around one sample's strategy."""
        sample = _Sample()
        token = _current.set(sample)
        self.expected = max(0, self.expected - 1)
        self.alive += 1
        try:
            yield
        finally:
            _current.reset(token)
            self.alive -= 1
            if sample.stalled:
                self.stalled -= 1
            self._check()

    def _change(self, calls: int, waiting: int) -> Iterator[None]:
        sample = _current.get()
        if sample is None:  # a call outside a sample (nothing to count)
            yield
            return
        self._move(sample, calls, waiting)
        try:
            yield
        finally:
            self._move(sample, -calls, -waiting)

    def _move(self, sample: _Sample, calls: int, waiting: int) -> None:
        before = sample.stalled
        sample.calls += calls
        sample.waiting += waiting
        self.stalled += int(sample.stalled) - int(before)
        self._check()

    @contextmanager
    def call(self) -> Iterator[None]:
        """Around one call of the run's model (cache lookup included)."""
        yield from self._change(1, 0)

    @contextmanager
    def waiting(self) -> Iterator[None]:
        """Around a wait for an identical call another sample made."""
        yield from self._change(0, 1)

    def hold(self) -> Hold:
        """The current sample waits for a call in the pending batch until ``Hold.release`` (called when its answer
        is set, so a sample whose answer came back is not stalled even before it resumes)."""
        sample = _current.get()
        if sample is not None:
            self._move(sample, 0, 1)
        return Hold(self, sample)


class Hold:
    """One call's wait for the batch; released once."""

    __slots__ = ("gate", "sample")

    def __init__(self, gate: StepGate, sample: _Sample | None) -> None:
        self.gate = gate
        self.sample = sample

    def release(self) -> None:
        if self.sample is not None:
            self.gate._move(self.sample, 0, -1)
            self.sample = None
