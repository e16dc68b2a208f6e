"""The sample a model call is about, as much of it as a backend may know: which it is, and what a perfect reply says.

The runner (and Inspect's solver) binds it around each strategy run (``benchmark.bind_sample``); the oracle backend
answers from it, and local backends name the sample in their errors. Backends never see the benchmark contract.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass

from structbench.backends.base import Request


@dataclass(frozen=True)
class CurrentSample:
    """The benchmark sample a strategy is working on."""

    benchmark: str
    id: str
    oracle: Callable[[Request], str]
    """The reply a perfect model would give to a request about this sample (the benchmark's ``oracle``)."""

    @property
    def label(self) -> str:
        """``benchmark/id``, for messages."""
        return f"{self.benchmark}/{self.id}"


current_sample: ContextVar[CurrentSample] = ContextVar("current_sample")
"""The sample the running strategy works on; unset outside a benchmark run."""
