"""OpenBLAS's idle threads put to sleep at once in structbench's own processes.

numpy and scipy each load an OpenBLAS that starts a thread a core when it is loaded; each thread then spins, asking
for work, for 2**28 cycles (about 0.1 s) before it sleeps, and again after every product it shares. A run's BLAS
work is the bootstrap's products, on one thread (``stats.blas``), so that spinning is all waste: 60 ms of CPU for
numpy's import on a two-core machine (0.2 s for scipy's two libraries), some 50 µs a request in a 2,000-request run,
on the cores its workers and the model's server need (#44; docs/develop/performance.md). OpenBLAS reads
``OPENBLAS_THREAD_TIMEOUT`` (the spin as a power of two, 4 to 30) once, when it is loaded, so the command line sets
it before anything imports numpy. The threads stay: a product still runs on every core the library would use, its
threads woken from their sleep instead of caught spinning. A value the user set is kept.
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping

TIMEOUT = "OPENBLAS_THREAD_TIMEOUT"
SPIN = "4"
"""OpenBLAS's least: 2**4 cycles before an idle thread sleeps."""


def sleep_when_idle(environ: MutableMapping[str, str] = os.environ) -> None:
    """Set ``OPENBLAS_THREAD_TIMEOUT`` in ``environ`` unless it is set (processes started from here inherit it)."""
    environ.setdefault(TIMEOUT, SPIN)
