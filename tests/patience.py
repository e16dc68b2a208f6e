"""How long a test may wait for something, on a machine that may be busy.

A bound that holds on an idle machine (a run stops within 30 s, a page renders within 5 s) fails on a busy one: the
same work takes several times longer at a load of 8 on 2 cores. Every such bound is ``patience(seconds)``: the
seconds an idle machine needs with room to spare, times how busy the machine is now (its load average per core, at
least 1), or times ``STRUCTBENCH_TEST_PATIENCE`` when set. A bound that checks that something is *fast* (a breaker
stops a run long before its 200 samples) keeps its meaning: it only grows with the load that slows everything.
"""

from __future__ import annotations

import os

MAX_FACTOR = 10.0
"""The most a bound is stretched (a load of 20 on 2 cores): beyond it a hung test should still fail, not wait."""


def load_factor() -> float:
    """``STRUCTBENCH_TEST_PATIENCE``, else the 1-minute load average per core (at least 1, at most ``MAX_FACTOR``)."""
    given = os.environ.get("STRUCTBENCH_TEST_PATIENCE")
    if given:
        return max(1.0, float(given))
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    try:
        load = os.getloadavg()[0]
    except OSError:  # no load average on this platform
        return 1.0
    return min(MAX_FACTOR, max(1.0, load / cores))


def patience(seconds: float) -> float:
    """``seconds`` (enough on an idle machine) stretched by how busy the machine is now (``load_factor``)."""
    return seconds * load_factor()
