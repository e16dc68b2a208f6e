"""The bootstrap's matrix products on one BLAS thread.

Each product is a chunk of at most ``bootstrap.CHUNK_ELEMENTS`` weights by a few feature columns: memory-bound and
about a millisecond. OpenBLAS's other threads shorten it by a fraction of that, then spin, waiting for the next
product, on cores the run's workers or other processes need: in a 2,000-question run against a loopback server,
80-150 microseconds of the harness's 2 milliseconds of CPU a question (docs/develop/performance.md)."""

from __future__ import annotations

import sys
from contextlib import AbstractContextManager
from typing import Any

_found: tuple[int, Any] | None = None


def _controller() -> Any:
    """The BLAS libraries loaded in this process (numpy's OpenBLAS): found again whenever a module has been imported
    since they were last (0.6 ms), since an extension may bring its own (scipy's OpenBLAS, torch's)."""
    global _found
    if _found is None or _found[0] != len(sys.modules):
        from threadpoolctl import ThreadpoolController

        _found = (len(sys.modules), ThreadpoolController())  # counted after threadpoolctl's own imports
    return _found[1]


def one_thread() -> AbstractContextManager[Any]:
    """Run the block with every loaded BLAS library on one thread, as many as before afterwards."""
    return _controller().limit(limits=1, user_api="blas")
