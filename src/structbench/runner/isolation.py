"""The isolation a session's sandboxed programs got (``structbench.sandbox.levels``), for its manifest.

Each process that runs jobs (this one, a forked worker, a Ray actor) keeps the levels of its programs; a worker sends
its weakest with its last counts, and the session records the weakest of all. The sandbox is asked only where it was
imported: a run whose benchmarks never imported it ran no program, and its start-up does not pay for the import (#44).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator

SANDBOX = "structbench.sandbox"


def taken() -> str | None:
    """The weakest level this process's programs got since it was last taken (None: none ran), forgotten."""
    if SANDBOX not in sys.modules:
        return None
    from structbench.sandbox.levels import take

    return take()


def weakest(*levels: str | None) -> str | None:
    """The weakest of ``levels`` (None: none given)."""
    if all(level is None for level in levels):
        return None
    from structbench.sandbox.levels import weakest as weakest_level

    return weakest_level(*levels)


@contextlib.contextmanager
def quietly() -> Iterator[None]:
    """The programs of the runner's warm-up are not the run's (``structbench.sandbox.quietly``)."""
    if SANDBOX in sys.modules:
        from structbench.sandbox import quietly as quiet

        with quiet():
            yield
        return
    try:
        yield
    finally:
        taken()  # a benchmark that imported the sandbox only now: the levels of its programs go
